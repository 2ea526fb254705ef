// FPGA cards: the calibrated defaults of each memory type and of the fabric, the presets, the
// FLOP/s a card sustains per precision, and the card field table (card_fields) that drives the
// validation, a card built from named fields or a card file, and a card as a table.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "fpgaprof/analysis/card_power.hpp"
#include "fpgaprof/analysis/fpga_model.hpp"
#include "fpgaprof/error.hpp"

namespace fpgaprof::analysis {
namespace {

constexpr double kBram36Bits = 36.0 * 1024.0;
constexpr double kUram288Bits = 288.0 * 1024.0;
constexpr double kM20kBits = 20.0 * 1024.0;  // Intel M20K block: 20 Kbit

// ---- calibration ------------------------------------------------------------------------------
// Every value below is recomputed from the measurements in python/fpgaprof/data/fpga_calibration.json
// by tests/python/test_fpga_calibration.py (nominal = median, low/high = the ends, unless the
// file states another rule); docs/fpga-model.md, "Constants", lists each source.

// The fabric (UltraScale+ and Versal PL): clock and DSP share of large designs, on-chip share,
// sort rate, and the host side (XDMA/QDMA over PCIe gen3 x16, XRT launches).
void fabric_calibration(FpgaTarget& t) {
  t.clock_hz = {222e6, 147e6, 297e6};  // AutoBridge/TAPA, 43 designs: 147 MHz avg before, 297 after floorplanning
  t.dsp_utilization = {0.6675, 0.5005, 0.8518};         // DSP share of 8 published compute-bound designs
  t.onchip_share = {0.5, 0.25, 0.75};                   // design assumption (not measured)
  t.onchip_lanes = {129.602, 63.4934, 224.362};         // on-chip accesses per cycle of 10 published HBM sparse designs
  t.sort_bytes_per_s = {464.062e6, 464.062e6, 15.6e9};  // Vitis compoundSort (U280); TopSort (U280 HBM)
  t.link_efficiency = {0.717752, 0.253906, 0.771532};   // xbutil DMA tests (U200/U250) / 15.754 GB/s; low: HPCC OpenCL
  t.transfer_latency_s = {13.0099e-6, 5.17106e-6, 19e-6};  // small-buffer DMA / migrate / bo sync
  t.call_latency_s = {40e-6, 16e-6, 100e-6};               // kernel dispatch: SDAccel guide, XRT issues
}

void hbm2_calibration(FpgaTarget& t) {
  t.random_granule_bytes = 32;  // BL4 x 64-bit pseudo-channel (PG276)
  t.stream_efficiency = {0.91216, 0.852522, 0.923913};
  t.channel_share = {0.71875, 0.5, 1.0};  // channels driven by 8 published HBM designs
  t.random_reads_per_s = {92.5786e6, 74.278e6, 147.338e6};
  t.rmw_updates_per_s = {4.00312e6, 4.00312e6, 46.2893e6};  // HPCC RandomAccess (U280); high: half the read rate
  t.cross_channel_factor = {1.0, 0.116351, 1.34624};        // Vitis HBM tutorial: 4 PCs without / with RAMA
}

// DDR4 behind Intel's memory controllers, measured by HPCC FPGA on the BittWare 520N (4 banks):
// STREAM against 4 x 21.328 GB/s (DDR4-2666, the rate the board's channel peak is taken at) and
// RandomAccess per bank. The Intel DDR4 presets take these instead of the AMD DDR4 figures;
// channel_share, random_reads_per_s and cross_channel_factor stay the DDR4 type's (not measured
// on Intel).
// The Intel cards' host runtime (Intel FPGA OpenCL / oneAPI): launch and small-copy latencies
// (fpga_calibration.json scope "intel-fabric").
void intel_fabric_calibration(FpgaTarget& t) {
  t.transfer_latency_s = {30.6113e-6, 29.9743e-6, 65.7068e-6};  // 520N blocking small copy; PAC 32 KB copies
  t.call_latency_s = {50e-6, 14.9359e-6, 100e-6};               // Intel's 20-100 us, ~50 us; back-to-back no-ops
}

void intel_ddr4_calibration(FpgaTarget& t) {
  t.stream_efficiency = {0.791331, 0.769294, 0.807624};   // 67.51 (65.63-68.90) GB/s / 85.312 GB/s
  t.rmw_updates_per_s = {53.8291e6, 46.4083e6, 61.25e6};  // 185.633 and 245.0 MUOP/s over 4 banks
}

}  // namespace

FpgaTarget calibration_for(const std::string& memory_type) {
  FpgaTarget t;
  t.memory_type = memory_type;
  fabric_calibration(t);
  if (memory_type == "hbm2") {
    hbm2_calibration(t);
  } else if (memory_type == "hbm2e") {
    hbm2_calibration(t);                                // access timing not measured on Versal HBM: UltraScale+ HBM's
    t.stream_efficiency = {0.561523, 0.561523, 0.675};  // AMD: V80 "approaching 460 GB/s"; NoC link 17.28 GB/s of 25.6
  } else if (memory_type == "ddr4") {
    t.random_granule_bytes = 64;  // BL8 x 64-bit channel
    t.stream_efficiency = {0.788675, 0.678013, 0.892364};
    t.channel_share = {1.0, 0.5, 1.0};
    t.random_reads_per_s = {92.5786e6, 74.278e6, 147.338e6};  // not measured on DDR4: the port-bound HBM rates
    t.rmw_updates_per_s = {20.0222e6, 19.8944e6, 46.2893e6};  // HPCC RandomAccess (U280 DDR)
    t.cross_channel_factor = {1.0, 1.0, 1.0};
  } else {
    throw Error(
        ErrorKind::kInvalidArgument,
        "memory_type '" + memory_type + "' is not modelled: use hbm2 (UltraScale+ HBM), hbm2e (Versal HBM) or ddr4");
  }
  return t;
}

namespace {

FpgaTarget card(const char* name, const char* description, const char* memory, uint32_t channels,
                double channel_bytes_per_s, double capacity_bytes, double bram36, double uram288, uint32_t dsps,
                double link) {
  FpgaTarget t = calibration_for(memory);
  t.name = name;
  t.description = description;
  t.memory_channels = channels;
  t.memory_channel_bytes_per_s = channel_bytes_per_s;
  t.memory_capacity_bytes = capacity_bytes;
  t.sram_bytes = (bram36 * kBram36Bits + uram288 * kUram288Bits) / 8.0;
  t.dsp_count = dsps;
  t.dsps_per_fma_fp64 = 14;  // PG060 full-DSP: double mul 11 + add 3
  t.dsps_per_fma_fp32 = 5;   // single mul 3 + add 2
  t.dsps_per_fma_fp16 = 2;   // half mul 1 + add 1
  t.link_bytes_per_s = link;
  return t;
}

std::vector<FpgaTarget> make_presets() {
  std::vector<FpgaTarget> out;
  constexpr double kGB = 1e9, kGiB = 1024.0 * 1024.0 * 1024.0;
  out.push_back(card(
      "alveo-u55c", "AMD Alveo U55C: 16 GB HBM2, 32 x 14.375 GB/s, 9,024 DSP48E2, 2,016 BRAM + 960 URAM, PCIe gen3 x16",
      "hbm2", 32, 14.375 * kGB, 16 * kGiB, 2016, 960, 9024, pcie_bytes_per_s(3, 16)));
  out.push_back(card(
      "alveo-u280",
      "AMD Alveo U280: 8 GB HBM2, 32 x 14.375 GB/s (its 32 GB DDR4 not modelled), 9,024 DSP48E2, 2,016 BRAM + 960 URAM, PCIe gen3 x16",
      "hbm2", 32, 14.375 * kGB, 8 * kGiB, 2016, 960, 9024, pcie_bytes_per_s(3, 16)));
  out.push_back(
      card("alveo-u250",
           "AMD Alveo U250: 64 GB DDR4, 4 x 19.25 GB/s, 12,288 DSP48E2, 2,688 BRAM + 1,280 URAM, PCIe gen3 x16", "ddr4",
           4, 19.25 * kGB, 64 * kGiB, 2688, 1280, 12288, pcie_bytes_per_s(3, 16)));
  out.push_back(card("alveo-u200",
                     "AMD Alveo U200: 64 GB DDR4, 4 x 19.25 GB/s, 6,840 DSP48E2, 2,160 BRAM + 960 URAM, PCIe gen3 x16",
                     "ddr4", 4, 19.25 * kGB, 64 * kGiB, 2160, 960, 6840, pcie_bytes_per_s(3, 16)));
  FpgaTarget v80 =
      card("versal-v80", "AMD Alveo V80: 32 GB HBM2e, 32 x 25.6 GB/s, 10,848 DSP58, ~541 Mb on-chip RAM, PCIe gen5 x8",
           "hbm2e", 32, 25.6 * kGB, 32 * kGiB, 0, 0, 10848, pcie_bytes_per_s(5, 8));
  v80.sram_bytes = 541.0 * 1024.0 * 1024.0 / 8.0;
  v80.dsps_per_fma_fp64 = 6;  // 53x53 mantissa product on 27x24 multipliers: 2 x 3 DSP58, add in fabric
  v80.dsps_per_fma_fp32 = 1;  // DSP58 native FP32 multiply-add (DSPFP32 mode)
  v80.dsps_per_fma_fp16 = 1;  // no packed fp16 mode: one fp16 FMA per DSPFP32
  v80.link_efficiency = {0.634766, 0.444336, 0.825195};  // QDMA dma-perf on a gen5 x8 card: ~14, ~26 GB/s of 31.5
  out.push_back(v80);
  // Intel cards (docs/fpga-model.md, "Intel presets"). On-chip RAM is the M20K blocks; the DSP block
  // is Intel's variable-precision block: its hard IEEE 754 single-precision mode does one fp32
  // multiply-add per block (fp16 runs in it too); it has no hard fp64 mode, and Intel gives a
  // double-precision multiply as one 54 x 54 product on 4 blocks with an external adder (the
  // adder in logic, not counted, as the V80's). Clock, DSP share, on-chip lanes and sort rate are
  // the fabric's, measured on AMD cards (borrowed); the host-side latencies are Intel's runtime's.
  constexpr double kDdr4_2666 = 2666e6 * 8;  // one 64-bit DDR4-2666 channel
  const auto intel = [](const char* name, const char* description, const char* memory, uint32_t channels,
                        double channel_bytes_per_s, double capacity_bytes, double sram_bytes, uint32_t dsps,
                        double link) {
    FpgaTarget t = card(name, description, memory, channels, channel_bytes_per_s, capacity_bytes, 0, 0, dsps, link);
    t.sram_bytes = sram_bytes;
    t.dsps_per_fma_fp64 = 4;
    t.dsps_per_fma_fp32 = 1;
    t.dsps_per_fma_fp16 = 1;
    intel_fabric_calibration(t);
    if (t.memory_type == "ddr4") intel_ddr4_calibration(t);
    return t;
  };
  out.push_back(intel(
      "intel-pac-a10",
      "Intel PAC with Arria 10 GX (a GX 1150 taken: the device line not read): 8 GB DDR4, 2 banks x 21.328 GB/s (DDR4-2666 taken: the "
      "board's DDR4 speed not read), 1,518 DSP blocks, 2,713 M20K, PCIe gen3 x8; DDR4 timing from "
      "the 520N; fabric constants borrowed from AMD cards, launch and copy latencies Intel's runtime's",
      "ddr4", 2, kDdr4_2666, 8 * kGiB, 2713 * kM20kBits / 8.0, 1518, pcie_bytes_per_s(3, 8)));
  FpgaTarget b520n =
      intel("bittware-520n-s10gx",
            "BittWare 520N, Stratix 10 GX 2800: 4 DDR4 banks x 21.328 GB/s (DDR4-2666 taken: the board's DDR4 speed "
            "not read), 12 GiB (HPCC's arrays; the board's capacity not read), 5,760 DSP blocks, 11,721 M20K, PCIe "
            "gen3 x16 (not read); DDR4 and PCIe timing measured on it (HPCC FPGA); fabric constants borrowed from AMD "
            "cards, launch and copy latencies Intel's runtime's",
            "ddr4", 4, kDdr4_2666, 12 * kGiB, 11721 * kM20kBits / 8.0, 5760, pcie_bytes_per_s(3, 16));
  b520n.link_efficiency = {0.399902, 0.372607, 0.406885};  // HPCC PCIe read/write 5.87-6.41 GB/s of 15.754
  out.push_back(b520n);
  constexpr double kDdr4_2400 = 2400e6 * 8;  // one 64-bit DDR4-2400 channel
  FpgaTarget d5005 =
      intel("intel-pac-d5005",
            "Intel FPGA PAC D5005, Stratix 10 SX 2800 (1SX280HN2F43E2VG): 32 GB DDR4, 4 banks x 19.2 GB/s "
            "(DDR4-2400), 5,760 DSP blocks, 11,721 M20K, PCIe gen3 x16; DDR4 and PCIe timing measured on it "
            "(Intel's board test), random updates the 520N's; fabric constants borrowed from AMD cards, launch "
            "and copy latencies Intel's runtime's",
            "ddr4", 4, kDdr4_2400, 32 * kGiB, 11721 * kM20kBits / 8.0, 5760, pcie_bytes_per_s(3, 16));
  d5005.stream_efficiency = {0.881372, 0.876577, 0.947066};  // board test per bank: write, read, read-write of 19.2
  d5005.link_efficiency = {0.361028, 0.293671, 0.496731};    // board test: 4412-7463 MiB/s (4.63-7.83 GB/s) of 15.754
  out.push_back(d5005);
  out.push_back(intel("intel-s10mx-2100",
                      "Intel Stratix 10 MX 2100 (development kit DK-DEV-1SMX-H-A): 8 GB HBM2, 32 pseudo-channels "
                      "x 16 GB/s (512 GB/s), 3,960 DSP blocks, 239.5 Mb on-chip RAM, PCIe gen3 x16; HBM2 "
                      "timing and fabric constants borrowed from AMD cards (not measured on Intel HBM2), launch "
                      "and copy latencies Intel's runtime's",
                      "hbm2", 32, 16 * kGB, 8 * kGiB, 239.5 * 1024.0 * 1024.0 / 8.0, 3960, pcie_bytes_per_s(3, 16)));
  // Board power: each preset's published measurements (card_power.cpp, docs/fpga-model.md "Card power").
  for (FpgaTarget& t : out) t.loaded_w = card_power(t.name).loaded_w;
  return out;
}

}  // namespace

double FpgaTarget::flops_per_s(Precision p, double clock, double utilization) const {
  double per_fma = 0;
  double given = 0;
  switch (p) {
    case Precision::kFp64:
    case Precision::kFp64Tensor:
      per_fma = dsps_per_fma_fp64;
      given = fp64_flops_per_s;
      break;
    case Precision::kFp32:
    case Precision::kTf32Tensor:
      per_fma = dsps_per_fma_fp32;
      given = fp32_flops_per_s;
      break;
    default:
      per_fma = dsps_per_fma_fp16;
      given = fp16_flops_per_s;
      break;
  }
  if (given > 0) return given;
  if (per_fma <= 0) return 0.0;
  return static_cast<double>(dsp_count) * utilization / per_fma * 2.0 * clock;
}

bool FpgaTarget::uses_dsp_model() const {
  return (fp64_flops_per_s <= 0 && dsps_per_fma_fp64 > 0) || (fp32_flops_per_s <= 0 && dsps_per_fma_fp32 > 0) ||
         (fp16_flops_per_s <= 0 && dsps_per_fma_fp16 > 0);
}

const std::vector<FpgaTarget>& fpga_presets() {
  static const std::vector<FpgaTarget> presets = make_presets();
  return presets;
}

std::string fpga_preset_names() {
  std::string names;
  for (const FpgaTarget& t : fpga_presets()) names += (names.empty() ? "" : ", ") + t.name;
  return names;
}

const FpgaTarget& fpga_preset(const std::string& name) {
  for (const FpgaTarget& t : fpga_presets())
    if (t.name == name) return t;
  throw Error(ErrorKind::kInvalidArgument,
              "unknown FPGA target '" + name + "': use one of " + fpga_preset_names() + " or pass your own FpgaTarget");
}

double FpgaTarget::stream_bytes_per_s() const {
  return static_cast<double>(memory_channels) * channel_share.nominal * memory_channel_bytes_per_s *
         stream_efficiency.nominal;
}

// ---- the card field table ---------------------------------------------------------------------
namespace {

// The check that some precision has a rate runs before the check of this order.
constexpr int kRateCheck = 14;

CardField text_field(const char* name, std::string FpgaTarget::*member, const char* default_value, const char* valid,
                     const char* description) {
  CardField f{name, CardFieldKind::kText, "", default_value, valid, description};
  f.text = member;
  return f;
}

CardField whole_field(const char* name, uint32_t FpgaTarget::*member, const char* unit, const char* default_value,
                      const char* description, const char* rule_text, bool dsp_model_only, int check_order) {
  CardField f{name,
              CardFieldKind::kWhole,
              unit,
              default_value,
              dsp_model_only ? "whole, 0 to 4294967295 (> 0 for the DSP model)" : "whole, 1 to 4294967295",
              description};
  f.whole = member;
  f.rule = CardRule::kPositive;
  f.rule_text = rule_text;
  f.dsp_model_only = dsp_model_only;
  f.check_order = check_order;
  return f;
}

CardField number_field(const char* name, double FpgaTarget::*member, const char* unit, const char* default_value,
                       const char* valid, const char* description, CardRule rule, const char* rule_text,
                       int check_order) {
  CardField f{name, CardFieldKind::kNumber, unit, default_value, valid, description};
  f.number = member;
  f.rule = rule;
  f.rule_text = rule_text;
  f.check_order = check_order;
  return f;
}

CardField calibrated_field(const char* name, Calibrated FpgaTarget::*member, const char* unit,
                           const char* default_value, const char* valid, const char* description, CardRule rule,
                           int check_order) {
  CardField f{name, CardFieldKind::kCalibrated, unit, default_value, valid, description};
  f.calibrated = member;
  f.rule = rule;
  f.check_order = check_order;
  return f;
}

CardField derived_field(const char* name, const char* unit, const char* description,
                        Calibrated (*derive)(const FpgaTarget&), bool range) {
  CardField f{name, CardFieldKind::kDerived, unit, "derived", "", description};
  f.derive = derive;
  f.derived_range = range;
  return f;
}

CardField& unit_check(CardField& f, CardEnd end, double min, double max, const char* hint, int order,
                      bool zero_ok = false) {
  f.unit_end = end;
  f.unit_min = min;
  f.unit_max = max;
  f.unit_hint = hint;
  f.unit_order = order;
  f.zero_ok = zero_ok;
  return f;
}

Calibrated card_flops(const FpgaTarget& t, Precision p) {
  return {t.flops_per_s(p), t.flops_per_s(p, t.clock_hz.low, t.dsp_utilization.low),
          t.flops_per_s(p, t.clock_hz.high, t.dsp_utilization.high)};
}

std::vector<CardField> make_card_fields() {
  using T = FpgaTarget;
  using R = CardRule;
  const char* const kFabric = "calibrated (fabric)";
  const char* const kMemory = "calibrated (memory type)";
  std::vector<CardField> f;
  f.push_back(text_field("name", &T::name, "\"user\"; with base: the preset's + \" (modified)\"", "not empty",
                         "the card's name in tables and reports"));
  f.push_back(text_field("description", &T::description,
                         "\"\"; with base: the preset's + \" (modified: the fields given)\"", "any text",
                         "what the card is"));
  f.push_back(text_field("memory_type", &T::memory_type, "required; with base: the preset's", "hbm2, hbm2e, ddr4",
                         "UltraScale+ HBM, Versal HBM or DDR4: the calibration the card takes"));
  f.push_back(whole_field("memory_channels", &T::memory_channels, "memory channels", "required",
                          "HBM pseudo-channels, or DDR channels (banks)",
                          "must be the number of memory channels (>= 1)", false, 0));
  f.push_back(whole_field("dsp_count", &T::dsp_count, "DSP slices", "required by the DSP model",
                          "DSP slices of the card", "must be the card's DSP slice count (> 0)", true, 11));
  f.push_back(number_field("memory_channel_bytes_per_s", &T::memory_channel_bytes_per_s, "bytes/s",
                           "required (or memory_bytes_per_s)", "> 0, 1e8 to 1e13", "peak of one memory channel",
                           R::kPositive, "must be one channel's peak in bytes/s (> 0)", 1));
  unit_check(f.back(), CardEnd::kNominal, 1e8, 1e13,
             "is outside 100 MB/s to 10 TB/s: give one channel's bytes per second (14.375 GB/s = 14.375e9), not GB/s "
             "or the whole memory's",
             0);
  f.push_back(number_field("memory_capacity_bytes", &T::memory_capacity_bytes, "bytes", "required", "> 0, >= 1e6",
                           "the whole card memory (a channel holds capacity / channels)", R::kPositive,
                           "must be the card memory in bytes (> 0)", 2));
  unit_check(f.back(), CardEnd::kNominal, 1e6, 0, "is below 1 MB: give bytes (16 GiB = 17179869184), not GB", 3);
  f.push_back(number_field("sram_bytes", &T::sram_bytes, "bytes", "required", "> 0, >= 1024",
                           "on-chip BRAM + URAM (Intel: M20K)", R::kPositive,
                           "must be the card's on-chip RAM in bytes (> 0)", 3));
  unit_check(f.back(), CardEnd::kNominal, 1024, 0, "is below 1 KiB: give bytes (44.7 MB = 44.7e6), not MB", 2);
  f.push_back(number_field("dsps_per_fma_fp64", &T::dsps_per_fma_fp64, "DSP slices", "0", ">= 0 (0: no fp64)",
                           "DSP slices one pipelined fp64 FMA needs", R::kNonNegative, "must be >= 0 (0: no fp64)", 5));
  f.push_back(number_field("dsps_per_fma_fp32", &T::dsps_per_fma_fp32, "DSP slices", "0", ">= 0 (0: no fp32)",
                           "DSP slices one pipelined fp32 FMA needs", R::kNonNegative, "must be >= 0 (0: no fp32)", 6));
  f.push_back(number_field("dsps_per_fma_fp16", &T::dsps_per_fma_fp16, "DSP slices", "0", ">= 0 (0: no fp16)",
                           "DSP slices one pipelined fp16 FMA needs", R::kNonNegative, "must be >= 0 (0: no fp16)", 7));
  const char* const kRateText = "must be a rate in FLOP/s, >= 0 (0: from the DSPs)";
  const char* const kRateHint = "is below 1 MFLOP/s: give FLOP per second (1 TFLOP/s = 1e12), not TFLOP/s";
  f.push_back(number_field("fp64_flops_per_s", &T::fp64_flops_per_s, "FLOP/s", "0 (from the DSPs)", "0, or >= 1e6",
                           "sustained fp64 rate when known (exact); replaces the DSP estimate", R::kNonNegative,
                           kRateText, 8));
  unit_check(f.back(), CardEnd::kNominal, 1e6, 0, kRateHint, 8, true);
  f.push_back(number_field("fp32_flops_per_s", &T::fp32_flops_per_s, "FLOP/s", "0 (from the DSPs)", "0, or >= 1e6",
                           "sustained fp32 rate when known (exact); replaces the DSP estimate", R::kNonNegative,
                           kRateText, 9));
  unit_check(f.back(), CardEnd::kNominal, 1e6, 0, kRateHint, 9, true);
  f.push_back(number_field("fp16_flops_per_s", &T::fp16_flops_per_s, "FLOP/s", "0 (from the DSPs)", "0, or >= 1e6",
                           "sustained fp16 rate when known (exact); replaces the DSP estimate", R::kNonNegative,
                           kRateText, 10));
  unit_check(f.back(), CardEnd::kNominal, 1e6, 0, kRateHint, 10, true);
  f.push_back(number_field("link_bytes_per_s", &T::link_bytes_per_s, "bytes/s", "required", "> 0, 1e7 to 1e12",
                           "host link line rate, one direction", R::kPositive,
                           "must be the host link's one-direction line rate in bytes/s (> 0)", 22));
  unit_check(f.back(), CardEnd::kNominal, 1e7, 1e12,
             "is outside 10 MB/s to 1 TB/s: give bytes per second (PCIe gen3 x16 = 15.75e9), not GB/s or bits", 1);
  f.push_back(number_field("random_granule_bytes", &T::random_granule_bytes, "bytes", "memory type: HBM 32, DDR4 64",
                           "> 0", "smallest memory access", R::kPositive,
                           "must be the smallest memory access in bytes (> 0)", 4));
  f.push_back(calibrated_field("clock_hz", &T::clock_hz, "Hz", kFabric, "> 0, low >= 1e6",
                               "kernel clock of a large design", R::kPositive, 12));
  f.back().dsp_model_only = true;
  unit_check(f.back(), CardEnd::kLow, 1e6, 0, "is below 1 MHz: give hertz (300 MHz = 300e6), not MHz", 4);
  f.push_back(calibrated_field("dsp_utilization", &T::dsp_utilization, "share", kFabric, "(0, 1]",
                               "share of the DSPs a compute-heavy design uses", R::kShare, 13));
  f.back().dsp_model_only = true;
  f.push_back(calibrated_field("stream_efficiency", &T::stream_efficiency, "share", kMemory, "(0, 1]",
                               "share of a used channel's peak a streaming kernel reaches", R::kShare, 14));
  f.push_back(calibrated_field("channel_share", &T::channel_share, "share", kMemory, "(0, 1]",
                               "share of the card's channels a design drives", R::kShare, 15));
  f.push_back(calibrated_field("random_reads_per_s", &T::random_reads_per_s, "accesses/s", kMemory, "> 0, low >= 1e3",
                               "data-dependent read accesses per second, per channel", R::kPositive, 16));
  unit_check(f.back(), CardEnd::kLow, 1e3, 0, "is below 1000 accesses/s: give accesses per second (92.6 M = 92.6e6)",
             5);
  f.push_back(calibrated_field("rmw_updates_per_s", &T::rmw_updates_per_s, "updates/s", kMemory, "> 0, low >= 1e3",
                               "data-dependent read-modify-write updates per second, per channel", R::kPositive, 17));
  unit_check(f.back(), CardEnd::kLow, 1e3, 0, "is below 1000 updates/s: give updates per second (4 M = 4e6)", 6);
  f.push_back(calibrated_field("cross_channel_factor", &T::cross_channel_factor, "factor", kMemory, "> 0",
                               "random reads into an array larger than one channel, against within one", R::kPositive,
                               18));
  f.push_back(calibrated_field("onchip_share", &T::onchip_share, "share", kFabric, "(0, 1]",
                               "share of the on-chip RAM one array may occupy", R::kShare, 19));
  f.push_back(calibrated_field("onchip_lanes", &T::onchip_lanes, "accesses/cycle", kFabric, "> 0",
                               "data-dependent on-chip accesses per cycle of a banked design", R::kPositive, 20));
  f.push_back(calibrated_field("sort_bytes_per_s", &T::sort_bytes_per_s, "bytes/s", kFabric, "> 0, low >= 1e3",
                               "sorted bytes per second of a sort kernel", R::kPositive, 21));
  unit_check(f.back(), CardEnd::kLow, 1e3, 0, "is below 1 kB/s: give bytes per second (464 MB/s = 464e6)", 7);
  f.push_back(calibrated_field("link_efficiency", &T::link_efficiency, "share", kFabric, "(0, 1]",
                               "achieved DMA bandwidth / link line rate", R::kShare, 23));
  f.push_back(calibrated_field("transfer_latency_s", &T::transfer_latency_s, "s", kFabric, ">= 0, high <= 1",
                               "per buffer moved over the host link", R::kNonNegative, 25));
  unit_check(f.back(), CardEnd::kHigh, 0, 1.0, "is over 1 s: give seconds (13 us = 13e-6), not microseconds", 12);
  f.push_back(calibrated_field("call_latency_s", &T::call_latency_s, "s", kFabric, ">= 0, high <= 1",
                               "per kernel launch", R::kNonNegative, 24));
  unit_check(f.back(), CardEnd::kHigh, 0, 1.0, "is over 1 s: give seconds (40 us = 40e-6), not microseconds", 11);
  f.push_back(calibrated_field(
      "loaded_w", &T::loaded_w, "W",
      "preset: its measured board power where one is published (\"Card power\"); otherwise unknown (0)",
      "all 0 (unknown), or > 0 with high <= 2000", "board power while a design runs: card energy = card time x this",
      R::kKnownPositive, 26));
  unit_check(f.back(), CardEnd::kHigh, 0, 2000, "is over 2000 W: give watts (60 W = 60), not mW", 13);
  f.push_back(derived_field(
      "memory_bytes_per_s", "bytes/s",
      "all channels' peak (memory_channels x memory_channel_bytes_per_s); given without "
      "memory_channel_bytes_per_s, it is split over the channels",
      [](const FpgaTarget& t) { return Calibrated::exact(t.memory_bytes_per_s()); }, false));
  f.push_back(derived_field(
      "card_fp64_flops_per_s", "FLOP/s", "fp64 rate the model uses (fp64_flops_per_s, or the DSP model)",
      [](const FpgaTarget& t) { return card_flops(t, Precision::kFp64); }, true));
  f.push_back(derived_field(
      "card_fp32_flops_per_s", "FLOP/s", "fp32 rate the model uses (fp32_flops_per_s, or the DSP model)",
      [](const FpgaTarget& t) { return card_flops(t, Precision::kFp32); }, true));
  f.push_back(derived_field(
      "card_fp16_flops_per_s", "FLOP/s", "fp16 rate the model uses (fp16_flops_per_s, or the DSP model)",
      [](const FpgaTarget& t) { return card_flops(t, Precision::kFp16); }, true));
  f.push_back(derived_field(
      "stream_bytes_per_s", "bytes/s", "streaming bandwidth of a design at the nominal constants",
      [](const FpgaTarget& t) { return Calibrated::exact(t.stream_bytes_per_s()); }, false));
  return f;
}

}  // namespace

const std::vector<CardField>& card_fields() {
  static const std::vector<CardField> fields = make_card_fields();
  return fields;
}

std::vector<std::string> card_input_names() {
  std::vector<std::string> out{"base"};
  for (const CardField& f : card_fields()) {
    if (f.kind == CardFieldKind::kDerived) continue;
    out.emplace_back(f.name);
    if (f.kind == CardFieldKind::kCalibrated) {
      out.push_back(std::string(f.name) + "_low");
      out.push_back(std::string(f.name) + "_high");
    }
    if (f.whole == &FpgaTarget::memory_channels) out.emplace_back("memory_bytes_per_s");
  }
  out.emplace_back("hbm_bytes_per_s");  // memory_bytes_per_s's earlier name
  out.emplace_back("hbm_efficiency");   // stream_efficiency's earlier name
  return out;
}

const char* card_field_kind_name(CardFieldKind k) {
  switch (k) {
    case CardFieldKind::kText: return "text";
    case CardFieldKind::kWhole: return "whole";
    case CardFieldKind::kNumber: return "number";
    case CardFieldKind::kCalibrated: return "calibrated";
    case CardFieldKind::kDerived: return "derived";
  }
  return "?";
}

namespace {

std::vector<const CardField*> ordered_by(int CardField::*order) {
  std::vector<const CardField*> out;
  for (const CardField& f : card_fields())
    if (f.*order >= 0) out.push_back(&f);
  std::sort(out.begin(), out.end(), [order](const CardField* a, const CardField* b) { return a->*order < b->*order; });
  return out;
}

double end_of(const Calibrated& c, CardEnd e) {
  return e == CardEnd::kLow ? c.low : e == CardEnd::kHigh ? c.high : c.nominal;
}

// A plain field's value (a whole number as a double).
double plain_value(const FpgaTarget& t, const CardField& f) {
  return f.whole != nullptr ? static_cast<double>(t.*f.whole) : t.*f.number;
}

}  // namespace

void validate_fpga_target(const FpgaTarget& t) {
  const std::string who = "FPGA target '" + t.name + "': ";
  const std::string fix = "; set it, or start from a preset (base=one of " + fpga_preset_names() + ")";
  const auto text = [](double v) {
    char value[32];
    std::snprintf(value, sizeof value, "%g", v);
    return std::string(value);
  };
  const auto fail = [&](const std::string& field, double v, const char* rule, bool zero_is_missing = false) {
    // A required field left out arrives as its default 0: say so rather than blame a value
    // nobody gave.
    const std::string what =
        zero_is_missing && v == 0 ? std::string(" is missing (or 0): it ") + rule : " = " + text(v) + " " + rule;
    throw Error(ErrorKind::kInvalidArgument, who + field + what + fix);
  };
  if (t.name.empty())
    throw Error(ErrorKind::kInvalidArgument, "FPGA target without a name: give it one (name=\"my-card\")");
  if (t.memory_type != "hbm2" && t.memory_type != "hbm2e" && t.memory_type != "ddr4")
    throw Error(ErrorKind::kInvalidArgument,
                who + "memory_type = '" + t.memory_type +
                    "' is not modelled: use hbm2 (UltraScale+ HBM), hbm2e (Versal HBM) or ddr4");
  const bool dsp_model = t.uses_dsp_model();
  // A plain field: its rule. A calibrated field: finite, its rule at each end, ordered.
  const auto check_plain = [&](const CardField& f) {
    const double v = plain_value(t, f);
    if (f.rule == CardRule::kPositive && !(std::isfinite(v) && v > 0)) fail(f.name, v, f.rule_text, true);
    if (f.rule == CardRule::kNonNegative && !(std::isfinite(v) && v >= 0)) fail(f.name, v, f.rule_text);
  };
  const auto check_calibrated = [&](const CardField& f) {
    const Calibrated& c = t.*f.calibrated;
    const std::pair<const char*, double> ends[] = {{"", c.nominal}, {"_low", c.low}, {"_high", c.high}};
    for (const auto& [suffix, v] : ends) {
      const std::string name = std::string(f.name) + suffix;
      if (!std::isfinite(v)) fail(name, v, "must be a finite number");
      if (f.rule == CardRule::kShare && !(v > 0 && v <= 1)) fail(name, v, "must be a share in (0, 1]");
      if (f.rule == CardRule::kPositive && !(v > 0)) fail(name, v, "must be > 0", true);
      if (f.rule == CardRule::kNonNegative && !(v >= 0)) fail(name, v, "must be >= 0");
      if (f.rule == CardRule::kKnownPositive && !(v >= 0)) fail(name, v, "must be > 0 (or all 0: unknown)");
    }
    if (!(c.low <= c.nominal && c.nominal <= c.high)) {
      const std::string field = f.name;
      throw Error(ErrorKind::kInvalidArgument, who + field + ": low " + text(c.low) + " <= " + text(c.nominal) +
                                                   " <= high " + text(c.high) + " does not hold; give " + field +
                                                   "_low and " + field + "_high around the value");
    }
    if (f.rule == CardRule::kKnownPositive && c.high > 0 && !(c.low > 0))
      fail(std::string(f.name) + "_low", c.low, "must be > 0 when the value is known (or all 0: unknown)");
  };
  static const std::vector<const CardField*> checks = ordered_by(&CardField::check_order);
  bool rates_checked = false;
  for (const CardField* f : checks) {
    if (!rates_checked && f->check_order >= kRateCheck) {
      rates_checked = true;
      if (t.dsps_per_fma_fp64 <= 0 && t.dsps_per_fma_fp32 <= 0 && t.dsps_per_fma_fp16 <= 0 && t.fp64_flops_per_s <= 0 &&
          t.fp32_flops_per_s <= 0 && t.fp16_flops_per_s <= 0)
        throw Error(ErrorKind::kInvalidArgument,
                    who +
                        "no precision has a rate (dsps_per_fma_fp64/fp32/fp16 and fp64/fp32/fp16_flops_per_s are "
                        "all 0), so the card computes nothing; give the FLOP/s of at least one precision, or "
                        "the DSP slices one FMA of it needs" +
                        fix);
    }
    if (f->dsp_model_only && !dsp_model) continue;
    if (f->kind == CardFieldKind::kCalibrated)
      check_calibrated(*f);
    else
      check_plain(*f);
  }
  // Values in the wrong unit (MHz for Hz, GB/s for bytes/s, us for s) are off by 1e3..1e9 and
  // would give silently absurd estimates: refuse magnitudes no real card has.
  static const std::vector<const CardField*> unit_checks = ordered_by(&CardField::unit_order);
  for (const CardField* f : unit_checks) {
    if (f->dsp_model_only && !dsp_model) continue;
    const double v = f->calibrated != nullptr ? end_of(t.*f->calibrated, f->unit_end) : plain_value(t, *f);
    const bool ok =
        (f->zero_ok && v == 0) || ((f->unit_min <= 0 || v >= f->unit_min) && (f->unit_max <= 0 || v <= f->unit_max));
    if (!ok) throw Error(ErrorKind::kInvalidArgument, who + f->name + " = " + text(v) + " " + f->unit_hint);
  }
}

namespace {

// "did you mean X? " for the name closest to `given` (fewest single-character edits, at most a
// third of its length and 1 at least), or "" when none is that close.
std::string did_you_mean(const std::string& given, const std::vector<std::string>& names) {
  const auto edits = [](const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diag = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        const std::size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diag = up;
      }
    }
    return row[b.size()];
  };
  if (given.size() > 256) return "";
  std::string best;
  std::size_t best_edits = std::max<std::size_t>(1, given.size() / 3) + 1;
  for (const std::string& n : names)
    if (const std::size_t e = edits(given, n); e < best_edits) {
      best = n;
      best_edits = e;
    }
  return best.empty() ? "" : "did you mean " + best + "? ";
}

}  // namespace

// ---- a card from named fields -----------------------------------------------------------------

FpgaTarget card_from_fields(const CardFields& fields) {
  const auto find = [&](const std::string& k) -> const CardValue* {
    for (const auto& [name, value] : fields)
      if (name == k) return &value;
    return nullptr;
  };
  const auto has = [&](const std::string& k) { return find(k) != nullptr; };
  const std::vector<CardField>& table = card_fields();
  // The names a card takes, as the message of an unknown one lists them: the text fields, the
  // channel count and the bandwidth of them all, then the other inputs.
  std::string valid = "base";
  std::vector<std::string> names{"base"};
  for (const CardField& f : table) {
    if (f.kind == CardFieldKind::kDerived) continue;
    valid += std::string(", ") + f.name + (f.kind == CardFieldKind::kCalibrated ? " (+ _low, _high)" : "");
    names.emplace_back(f.name);
    if (f.kind == CardFieldKind::kCalibrated) {
      names.push_back(std::string(f.name) + "_low");
      names.push_back(std::string(f.name) + "_high");
    }
    if (f.whole == &FpgaTarget::memory_channels) {
      valid += ", memory_bytes_per_s";
      names.emplace_back("memory_bytes_per_s");
    }
  }
  const auto text = [&](const std::string& k) {
    const CardValue* v = find(k);
    if (v->kind != CardValue::Kind::kText)
      throw Error(ErrorKind::kInvalidArgument, "FPGA target field '" + k + "' must be a string");
    return v->text;
  };
  // A value as a message quotes it: at most 40 characters (a 401-digit integer is not repeated
  // whole).
  const auto shown = [](const CardValue& v) {
    const std::string& r = v.shown;
    return r.size() <= 40 ? r : r.substr(0, 37) + "... (" + std::to_string(r.size()) + " characters)";
  };
  const auto number = [&](const std::string& k, const CardValue& v) {
    if (v.kind == CardValue::Kind::kTooLarge)
      throw Error(ErrorKind::kInvalidArgument,
                  "FPGA target field '" + k + "' = " + shown(v) + " is beyond the range of a number (1.8e308)");
    if (v.kind != CardValue::Kind::kNumber)
      throw Error(ErrorKind::kInvalidArgument, "FPGA target field '" + k + "' must be a number, not " + v.shown);
    return v.number;
  };
  // A whole number that fits uint32: >= 1, or >= 0 for a field only the DSP model needs (a card
  // given by its FLOP/s has no DSP count; the validation asks for it when the model needs it).
  const auto whole = [&](const std::string& k, const CardValue& cv, const CardField& f) {
    const double v = number(k, cv);
    const double least = f.dsp_model_only ? 0 : 1;
    if (!(v >= least && v <= 4294967295.0 && v == static_cast<double>(static_cast<uint32_t>(v))))
      throw Error(ErrorKind::kInvalidArgument, "FPGA target field '" + k + "' = " + shown(cv) + " must be a " +
                                                   (f.dsp_model_only ? "" : "positive ") + "whole number of " + f.unit);
    return static_cast<uint32_t>(v);
  };
  const auto is_derived = [&](const std::string& k) {
    for (const CardField& f : table) {
      if (f.kind != CardFieldKind::kDerived) continue;
      const std::string n = f.name;
      if (k == n || (f.derived_range && (k == n + "_low" || k == n + "_high"))) return true;
    }
    return false;
  };
  FpgaTarget t;
  std::string changed;
  const bool based = has("base");
  if (based) t = fpga_preset(text("base"));
  // The memory type first: a card without a base takes its calibration from it (clock and DSP
  // use are the fabric's: a base keeps its own).
  if (has("memory_type")) {
    const std::string type = text("memory_type");
    if (!based || type != t.memory_type) {
      const FpgaTarget cal = calibration_for(type);
      for (const CardField& f : table) {
        if (f.calibrated == nullptr) continue;
        if (based && (f.calibrated == &FpgaTarget::clock_hz || f.calibrated == &FpgaTarget::dsp_utilization)) continue;
        t.*f.calibrated = cal.*f.calibrated;
      }
      t.random_granule_bytes = cal.random_granule_bytes;
    }
    t.memory_type = type;
    changed += "memory_type";
  } else if (!based) {
    const FpgaTarget cal = calibration_for("hbm2");  // only while the fields are read: refused below
    for (const CardField& f : table)
      if (f.calibrated != nullptr) t.*f.calibrated = cal.*f.calibrated;
    t.random_granule_bytes = cal.random_granule_bytes;
  }
  double total_bandwidth = 0;
  std::string total_key;
  for (const auto& [k, v] : fields) {
    if (k == "base" || k == "name" || k == "description" || k == "memory_type") continue;
    // Outputs (the rates the model derives): a card as card_to_fields gives it goes back in
    // with them; they are worked out again.
    if (k == "memory_bytes_per_s" && has("memory_channel_bytes_per_s")) continue;
    if (k != "memory_bytes_per_s" && is_derived(k)) continue;
    if (k == "random_access_efficiency")
      throw Error(ErrorKind::kInvalidArgument,
                  "FPGA target field 'random_access_efficiency' is gone: the model now takes data-dependent "
                  "accesses from measured rates; give random_reads_per_s (accesses per second per memory "
                  "channel) instead (docs/fpga-model.md, \"Your own card\")");
    bool found = false;
    if (k == "memory_bytes_per_s" || k == "hbm_bytes_per_s") {
      // The whole memory's peak (hbm_bytes_per_s: its earlier name): split over the channels below.
      total_bandwidth = number(k, v);
      total_key = k;
      found = true;
    } else if (k == "hbm_efficiency") {
      t.stream_efficiency = Calibrated::exact(number(k, v));  // its earlier name
      found = true;
    }
    for (const CardField& f : table) {
      if (found) break;
      const std::string n = f.name;
      if (f.kind == CardFieldKind::kWhole && k == n) {
        t.*f.whole = whole(k, v, f);
        found = true;
      } else if (f.kind == CardFieldKind::kNumber && k == n) {
        t.*f.number = number(k, v);
        found = true;
      } else if (f.kind == CardFieldKind::kCalibrated) {
        Calibrated& c = t.*f.calibrated;
        if (k == n) {
          const double x = number(k, v);
          c.nominal = x;
          if (!has(n + "_low")) c.low = x;
          if (!has(n + "_high")) c.high = x;
          found = true;
        } else if (k == n + "_low") {
          c.low = number(k, v);
          found = true;
        } else if (k == n + "_high") {
          c.high = number(k, v);
          found = true;
        }
      }
    }
    if (!found)
      throw Error(ErrorKind::kInvalidArgument, "unknown FPGA target field '" + k + "' (" + did_you_mean(k, names) +
                                                   "valid fields are " + valid + ")");
    changed += (changed.empty() ? "" : ", ") + k;
  }
  if (!total_key.empty()) {
    if (t.memory_channels == 0)
      throw Error(ErrorKind::kInvalidArgument,
                  "FPGA target field '" + total_key +
                      "' needs memory_channels (HBM pseudo-channels or DDR "
                      "banks, e.g. 32 on an Alveo U55C, 4 on a U250): the bandwidth is split over them");
    t.memory_channel_bytes_per_s = total_bandwidth / static_cast<double>(t.memory_channels);
  }
  if (has("description"))
    t.description = text("description");
  else if (based && !changed.empty())
    t.description += " (modified: " + changed + ")";
  if (has("name"))
    t.name = text("name");
  else if (based)
    t.name += changed.empty() ? "" : " (modified)";
  else
    t.name = "user";
  // Its memory decides every measured rate the card takes: never guessed.
  if (!based && !has("memory_type"))
    throw Error(ErrorKind::kInvalidArgument,
                "FPGA target '" + t.name +
                    "': memory_type is missing: it decides which measured memory calibration the card takes "
                    "(hbm2: UltraScale+ HBM, hbm2e: Versal HBM, ddr4); set it, or start from a preset (base=one of " +
                    fpga_preset_names() + ")");
  validate_fpga_target(t);
  return t;
}

namespace {

// Reads a card file's JSON as events (nlohmann's SAX interface, no tree): the top-level
// object's members become CardFields (nested values by their type's name only), and a number
// beyond a double is kept with the member it belongs to (nlohmann reports it as an error
// without one).
class CardReader {
 public:
  using json = nlohmann::json;
  CardFields fields;
  std::string top_type;      // the top-level value's JSON type when it is not an object
  bool too_large = false;    // a number beyond a double: its member ...
  std::string too_large_in;  // ... (the top-level one it is in)
  std::string too_large_as;  // ... as written
  bool syntax_error = false;
  std::size_t error_byte = 0;

  bool null() { return scalar("null", nullptr); }
  bool boolean(bool) {
    CardValue v;
    v.shown = "bool";
    return scalar("boolean", &v);
  }
  bool number_integer(json::number_integer_t x) { return number(static_cast<double>(x), std::to_string(x)); }
  bool number_unsigned(json::number_unsigned_t x) { return number(static_cast<double>(x), std::to_string(x)); }
  bool number_float(json::number_float_t x, const std::string& as_written) { return number(x, as_written); }
  bool string(std::string& x) {
    CardValue v;
    v.kind = CardValue::Kind::kText;
    v.text = x;
    v.shown = "str";
    return scalar("string", &v);
  }
  bool binary(json::binary_t&) { return scalar("binary", nullptr); }
  bool start_object(std::size_t) { return open("dict"); }
  bool end_object() { return close(); }
  bool start_array(std::size_t) {
    if (depth_ == 0) {
      top_type = "array";
      return false;
    }
    return open("list");
  }
  bool end_array() { return close(); }
  bool key(std::string& k) {
    if (depth_ == 1) key_ = k;
    return true;
  }
  bool parse_error(std::size_t byte, const std::string& token, const nlohmann::detail::exception& e) {
    if (e.id == 406 && depth_ >= 1) {  // "number overflow"
      too_large = true;
      too_large_in = key_;
      too_large_as = token;
    } else {
      syntax_error = true;
      error_byte = byte;
    }
    return false;
  }

 private:
  bool number(double x, std::string as_written) {
    CardValue v;
    v.kind = std::isfinite(x) ? CardValue::Kind::kNumber : CardValue::Kind::kTooLarge;
    v.number = x;
    v.shown = std::move(as_written);
    return scalar("number", &v);
  }
  // A member's value (null: not given, as Python's card reader drops None); at the top level,
  // anything but an object stops the reading.
  bool scalar(const char* type, const CardValue* v) {
    if (depth_ == 0) {
      top_type = type;
      return false;
    }
    if (depth_ == 1 && v != nullptr) fields.emplace_back(key_, *v);
    return true;
  }
  bool open(const char* python_type) {
    if (depth_ == 1) {
      CardValue v;
      v.shown = python_type;
      fields.emplace_back(key_, std::move(v));
    }
    ++depth_;
    return true;
  }
  bool close() {
    --depth_;
    return true;
  }
  int depth_ = 0;
  std::string key_;
};

}  // namespace

FpgaTarget card_from_json(const std::string& json_text) {
  const std::string example =
      "write one JSON object with the card's fields, e.g. {\"base\": \"alveo-u55c\", \"clock_hz\": 250e6}";
  // A card file is a few hundred bytes; anything much larger is not one.
  if (json_text.size() > (std::size_t{1} << 20))
    throw Error(ErrorKind::kInvalidArgument, "FPGA card of " + std::to_string(json_text.size()) +
                                                 " bytes is too large to be a card (1 MiB at most): " + example);
  CardReader reader;
  const bool read = nlohmann::json::sax_parse(json_text, &reader);
  if (reader.too_large) {
    CardValue v;
    v.kind = CardValue::Kind::kTooLarge;
    v.shown = reader.too_large_as;
    return card_from_fields({{reader.too_large_in, v}});  // throws: the number is beyond a double
  }
  if (!reader.top_type.empty())
    throw Error(ErrorKind::kInvalidArgument,
                "FPGA card holds a JSON " + reader.top_type +
                    ", not an object: write {\"field\": value, ...} with the card's fields");
  if (!read || reader.syntax_error)
    throw Error(ErrorKind::kInvalidArgument, "FPGA card is not valid JSON (syntax error at byte " +
                                                 std::to_string(reader.error_byte) + "): " + example);
  return card_from_fields(reader.fields);
}

std::vector<CardOutput> card_to_fields(const FpgaTarget& t) {
  std::vector<CardOutput> out;
  const auto add = [&](std::string name, double v) {
    CardOutput o;
    o.name = std::move(name);
    o.number = v;
    out.push_back(std::move(o));
  };
  for (const CardField& f : card_fields()) {
    switch (f.kind) {
      case CardFieldKind::kText: {
        CardOutput o;
        o.name = f.name;
        o.kind = CardFieldKind::kText;
        o.text = t.*f.text;
        out.push_back(std::move(o));
        break;
      }
      case CardFieldKind::kWhole: {
        CardOutput o;
        o.name = f.name;
        o.kind = CardFieldKind::kWhole;
        o.whole = t.*f.whole;
        out.push_back(std::move(o));
        break;
      }
      case CardFieldKind::kNumber: add(f.name, t.*f.number); break;
      case CardFieldKind::kCalibrated:
      case CardFieldKind::kDerived: {
        const Calibrated c = f.calibrated != nullptr ? t.*f.calibrated : f.derive(t);
        add(f.name, c.nominal);
        if (f.calibrated != nullptr || f.derived_range) {
          add(std::string(f.name) + "_low", c.low);
          add(std::string(f.name) + "_high", c.high);
        }
        break;
      }
    }
  }
  return out;
}

std::string card_fields_markdown() {
  std::string md = "| field | unit | default | valid | what it is |\n|---|---|---|---|---|\n";
  for (const CardField& f : card_fields()) {
    std::string name = std::string("`") + f.name + "`";
    if (f.kind == CardFieldKind::kCalibrated || f.derived_range)
      name += std::string(" (`") + f.name + "_low`, `" + f.name + "_high`)";
    md += "| " + name + " | " + f.unit + " | " + f.default_value + " | " + f.valid + " | " + f.description + " |\n";
  }
  return md;
}

}  // namespace fpgaprof::analysis

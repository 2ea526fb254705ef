#include "fpgaprof/analysis/fpga_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "fpgaprof/analysis/attribution.hpp"
#include "fpgaprof/analysis/region_paths.hpp"
#include "fpgaprof/analysis/transfer_analysis.hpp"
#include "fpgaprof/error.hpp"

namespace fpgaprof::analysis {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kBram36Bytes = 36.0 * 1024.0 / 8.0;  // one 36 Kb block RAM: the smallest on-chip copy
constexpr double kPortBytes = 8.0;                    // a block RAM / UltraRAM port: 72 bits with 8 of ECC
constexpr double kBram36Bits = 36.0 * 1024.0;
constexpr double kUram288Bits = 288.0 * 1024.0;

// ---- calibration ------------------------------------------------------------------------------
// Every value below is recomputed from the measurements in python/fpgaprof/data/fpga_calibration.json
// by tests/python/test_fpga_calibration.py (nominal = median, low/high = the ends, unless the
// file states another rule); docs/fpga-model.md, "Constants", lists each source.

// The fabric (UltraScale+ and Versal PL): clock and DSP share of large designs, on-chip share,
// sort rate, and the host side (XDMA/QDMA over PCIe gen3 x16, XRT launches).
void fabric_calibration(FpgaTarget& t) {
  t.clock_hz = {222e6, 147e6, 297e6};  // AutoBridge/TAPA, 43 designs: 147 MHz avg before, 297 after floorplanning
  t.dsp_utilization = {0.6675, 0.5005, 0.8518};  // DSP share of 8 published compute-bound designs
  t.onchip_share = {0.5, 0.25, 0.75};            // design assumption (not measured)
  t.onchip_lanes = {172.330, 63.4934, 224.362};  // on-chip accesses per cycle 6 published HBM SpMV designs achieve
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

const char* scenario_name(Scenario s) { return s == Scenario::kAsCompiled ? "as compiled" : "restructured"; }

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
  // Values in the wrong unit (MHz for Hz, GB/s for bytes/s, us for s) are off by 1e3..1e9 and
  // would give silently absurd estimates: refuse magnitudes no real card has.
  const auto plausible = [&](const std::string& field, double v, bool ok, const char* hint) {
    if (!ok) throw Error(ErrorKind::kInvalidArgument, who + field + " = " + text(v) + " " + hint);
  };
  if (t.name.empty())
    throw Error(ErrorKind::kInvalidArgument, "FPGA target without a name: give it one (name=\"my-card\")");
  if (t.memory_type != "hbm2" && t.memory_type != "hbm2e" && t.memory_type != "ddr4")
    throw Error(ErrorKind::kInvalidArgument,
                who + "memory_type = '" + t.memory_type +
                    "' is not modelled: use hbm2 (UltraScale+ HBM), hbm2e (Versal HBM) or ddr4");
  const auto positive = [&](const char* field, double v, const char* what) {
    if (!(std::isfinite(v) && v > 0)) fail(field, v, what, true);
  };
  const auto non_negative = [&](const char* field, double v, const char* what) {
    if (!(std::isfinite(v) && v >= 0)) fail(field, v, what);
  };
  // A calibrated field: finite, ordered, positive (or a share in (0, 1], or >= 0).
  enum class Kind { kPositive, kShare, kNonNegative, kFactor };
  const auto calibrated = [&](const char* field, const Calibrated& c, Kind kind) {
    const std::pair<const char*, double> ends[] = {{"", c.nominal}, {"_low", c.low}, {"_high", c.high}};
    for (const auto& [suffix, v] : ends) {
      const std::string f = std::string(field) + suffix;
      if (!std::isfinite(v)) fail(f, v, "must be a finite number");
      if (kind == Kind::kShare && !(v > 0 && v <= 1)) fail(f, v, "must be a share in (0, 1]");
      if ((kind == Kind::kPositive || kind == Kind::kFactor) && !(v > 0)) fail(f, v, "must be > 0", true);
      if (kind == Kind::kNonNegative && !(v >= 0)) fail(f, v, "must be >= 0");
    }
    if (!(c.low <= c.nominal && c.nominal <= c.high))
      throw Error(ErrorKind::kInvalidArgument, who + field + ": low " + text(c.low) + " <= " + text(c.nominal) +
                                                   " <= high " + text(c.high) + " does not hold; give " + field +
                                                   "_low and " + field + "_high around the value");
  };
  if (t.memory_channels < 1) fail("memory_channels", 0, "must be the number of memory channels (>= 1)", true);
  positive("memory_channel_bytes_per_s", t.memory_channel_bytes_per_s, "must be one channel's peak in bytes/s (> 0)");
  positive("memory_capacity_bytes", t.memory_capacity_bytes, "must be the card memory in bytes (> 0)");
  positive("sram_bytes", t.sram_bytes, "must be the card's on-chip RAM in bytes (> 0)");
  positive("random_granule_bytes", t.random_granule_bytes, "must be the smallest memory access in bytes (> 0)");
  non_negative("dsps_per_fma_fp64", t.dsps_per_fma_fp64, "must be >= 0 (0: no fp64)");
  non_negative("dsps_per_fma_fp32", t.dsps_per_fma_fp32, "must be >= 0 (0: no fp32)");
  non_negative("dsps_per_fma_fp16", t.dsps_per_fma_fp16, "must be >= 0 (0: no fp16)");
  non_negative("fp64_flops_per_s", t.fp64_flops_per_s, "must be a rate in FLOP/s, >= 0 (0: from the DSPs)");
  non_negative("fp32_flops_per_s", t.fp32_flops_per_s, "must be a rate in FLOP/s, >= 0 (0: from the DSPs)");
  non_negative("fp16_flops_per_s", t.fp16_flops_per_s, "must be a rate in FLOP/s, >= 0 (0: from the DSPs)");
  if (t.uses_dsp_model()) {
    positive("dsp_count", static_cast<double>(t.dsp_count), "must be the card's DSP slice count (> 0)");
    calibrated("clock_hz", t.clock_hz, Kind::kPositive);
    calibrated("dsp_utilization", t.dsp_utilization, Kind::kShare);
  }
  if (t.dsps_per_fma_fp64 <= 0 && t.dsps_per_fma_fp32 <= 0 && t.dsps_per_fma_fp16 <= 0 && t.fp64_flops_per_s <= 0 &&
      t.fp32_flops_per_s <= 0 && t.fp16_flops_per_s <= 0)
    throw Error(ErrorKind::kInvalidArgument,
                who +
                    "no precision has a rate (dsps_per_fma_fp64/fp32/fp16 and fp64/fp32/fp16_flops_per_s are "
                    "all 0), so the card computes nothing; give the FLOP/s of at least one precision, or "
                    "the DSP slices one FMA of it needs" +
                    fix);
  calibrated("stream_efficiency", t.stream_efficiency, Kind::kShare);
  calibrated("channel_share", t.channel_share, Kind::kShare);
  calibrated("random_reads_per_s", t.random_reads_per_s, Kind::kPositive);
  calibrated("rmw_updates_per_s", t.rmw_updates_per_s, Kind::kPositive);
  calibrated("cross_channel_factor", t.cross_channel_factor, Kind::kFactor);
  calibrated("onchip_share", t.onchip_share, Kind::kShare);
  calibrated("onchip_lanes", t.onchip_lanes, Kind::kPositive);
  calibrated("sort_bytes_per_s", t.sort_bytes_per_s, Kind::kPositive);
  positive("link_bytes_per_s", t.link_bytes_per_s, "must be the host link's one-direction line rate in bytes/s (> 0)");
  calibrated("link_efficiency", t.link_efficiency, Kind::kShare);
  calibrated("call_latency_s", t.call_latency_s, Kind::kNonNegative);
  calibrated("transfer_latency_s", t.transfer_latency_s, Kind::kNonNegative);
  plausible("memory_channel_bytes_per_s", t.memory_channel_bytes_per_s, t.memory_channel_bytes_per_s >= 1e8,
            "is below 100 MB/s: give bytes per second (14.375 GB/s = 14.375e9), not GB/s");
  plausible("link_bytes_per_s", t.link_bytes_per_s, t.link_bytes_per_s >= 1e7,
            "is below 10 MB/s: give bytes per second (PCIe gen3 x16 = 15.75e9), not GB/s");
  plausible("sram_bytes", t.sram_bytes, t.sram_bytes >= 1024, "is below 1 KiB: give bytes (44.7 MB = 44.7e6), not MB");
  plausible("memory_capacity_bytes", t.memory_capacity_bytes, t.memory_capacity_bytes >= 1e6,
            "is below 1 MB: give bytes (16 GiB = 17179869184), not GB");
  if (t.uses_dsp_model())
    plausible("clock_hz", t.clock_hz.low, t.clock_hz.low >= 1e6,
              "is below 1 MHz: give hertz (300 MHz = 300e6), not MHz");
  plausible("random_reads_per_s", t.random_reads_per_s.low, t.random_reads_per_s.low >= 1e3,
            "is below 1000 accesses/s: give accesses per second (92.6 M = 92.6e6)");
  plausible("rmw_updates_per_s", t.rmw_updates_per_s.low, t.rmw_updates_per_s.low >= 1e3,
            "is below 1000 updates/s: give updates per second (4 M = 4e6)");
  plausible("sort_bytes_per_s", t.sort_bytes_per_s.low, t.sort_bytes_per_s.low >= 1e3,
            "is below 1 kB/s: give bytes per second (464 MB/s = 464e6)");
  const std::pair<const char*, double> rates[] = {{"fp64_flops_per_s", t.fp64_flops_per_s},
                                                  {"fp32_flops_per_s", t.fp32_flops_per_s},
                                                  {"fp16_flops_per_s", t.fp16_flops_per_s}};
  for (const auto& [field, v] : rates)
    plausible(field, v, v == 0 || v >= 1e6, "is below 1 MFLOP/s: give FLOP per second (1 TFLOP/s = 1e12), not TFLOP/s");
  plausible("call_latency_s", t.call_latency_s.high, t.call_latency_s.high <= 1.0,
            "is over 1 s: give seconds (40 us = 40e-6), not microseconds");
  plausible("transfer_latency_s", t.transfer_latency_s.high, t.transfer_latency_s.high <= 1.0,
            "is over 1 s: give seconds (13 us = 13e-6), not microseconds");
}

// ---- the card model ---------------------------------------------------------------------------
namespace {

// Every calibrated constant at one end of its spread (or at its nominal value).
struct Corner {
  double clock, dsp_util, stream_eff, channel_share, random_reads, rmw_updates, cross, onchip_share, onchip_lanes,
      sort_rate, link_eff, transfer_latency, call_latency;
};

enum class End { kFast, kNominal, kSlow };

double pick(const Calibrated& c, End e, bool larger_is_faster) {
  if (e == End::kNominal) return c.nominal;
  return (e == End::kFast) == larger_is_faster ? c.high : c.low;
}

Corner corner(const FpgaTarget& t, End e) {
  return {pick(t.clock_hz, e, true),
          pick(t.dsp_utilization, e, true),
          pick(t.stream_efficiency, e, true),
          pick(t.channel_share, e, true),
          pick(t.random_reads_per_s, e, true),
          pick(t.rmw_updates_per_s, e, true),
          pick(t.cross_channel_factor, e, true),
          pick(t.onchip_share, e, true),
          pick(t.onchip_lanes, e, true),
          pick(t.sort_bytes_per_s, e, true),
          pick(t.link_efficiency, e, true),
          pick(t.transfer_latency_s, e, false),
          pick(t.call_latency_s, e, false)};
}

constexpr End kEnds[] = {End::kFast, End::kNominal, End::kSlow};

void set_end(TimeRange& r, End e, double v) { (e == End::kFast ? r.low : e == End::kNominal ? r.nominal : r.high) = v; }

// Streaming bandwidth of a design: the channels it drives, each at the streaming efficiency.
double stream_bytes_per_s(const FpgaTarget& t, const Corner& c) {
  return static_cast<double>(t.memory_channels) * c.channel_share * t.memory_channel_bytes_per_s * c.stream_eff;
}

// Seconds for the data-dependent accesses of one RandomTraffic against card memory. Each
// access moves its run rounded up to the access granule; a channel serves at most
// random_reads_per_s accesses (rmw_updates_per_s updates, each a read and a write) and no more
// bytes than it streams. An array larger than one channel cannot be replicated per channel:
// cross_channel_factor applies.
double random_seconds(const RandomTraffic& r, const FpgaTarget& t, const Corner& c) {
  if (!(r.accesses > 0)) return 0.0;
  const double g = t.random_granule_bytes;
  const double txn = std::max(1.0, std::ceil(std::max(r.run_bytes, 1.0) / g)) * g;
  const double channel_bytes = t.memory_channel_bytes_per_s * c.stream_eff;
  const double per_channel = r.read_modify_write ? std::min(c.rmw_updates, channel_bytes / (2 * txn))
                                                 : std::min(c.random_reads, channel_bytes / txn);
  const double channel_capacity = t.memory_capacity_bytes / static_cast<double>(t.memory_channels);
  const double factor = r.source_bytes > channel_capacity ? c.cross : 1.0;
  const double rate = static_cast<double>(t.memory_channels) * c.channel_share * per_channel * factor;
  const double operations = r.read_modify_write ? r.accesses / 2 : r.accesses;
  return rate > 0 ? operations / rate : 0.0;
}

// On chip: the array spread over block RAMs serves up to onchip_lanes accesses per cycle, each
// block two reads (dual-ported) or one read-modify-write update. While room is left a read-only
// array is copied (any lane reads any element of its copy); an updated array is instead
// partitioned by index into as many banks (each update routed to the bank that holds its
// element, as the shuffle units of the published HBM SpMV designs do: HiSparse, Serpens), which
// takes the same blocks; updates spread evenly over the banks is the assumption (a histogram
// of one hot bin would serialize). A block RAM port is 72 bits wide (UG573): an access of r
// bytes takes ceil(r / 8) port cycles.
double onchip_seconds(const RandomTraffic& r, const FpgaTarget& t, const Corner& c) {
  const double room = c.onchip_share * t.sram_bytes;
  const double footprint = std::max(r.source_bytes, kBram36Bytes);
  const double copies = std::max(1.0, std::floor(room / footprint));  // copies or partitions
  const double blocks = copies * std::ceil(footprint / kBram36Bytes);
  const double per_cycle = std::min(c.onchip_lanes, r.read_modify_write ? blocks : 2 * blocks);
  const double operations = r.read_modify_write ? r.accesses / 2 : r.accesses;
  const double cycles_each = std::ceil(std::max(r.run_bytes, 1.0) / kPortBytes);
  return c.clock > 0 ? operations * cycles_each / (per_cycle * c.clock) : 0.0;
}

// Passes over card memory of a sort or FFT whose data does not fit on chip: a two-phase design
// (runs or sub-transforms on chip, then one merge or transpose pass).
double passes(const CardWork& w, const FpgaTarget& t, const Corner& c) {
  const double room = c.onchip_share * t.sram_bytes;
  if (w.sort_length > 0 && w.sort_length * w.sort_element_bytes > room) return 2.0;
  if (w.fft_length > 0 && w.fft_length * w.fft_point_bytes > room) return 2.0;
  return 1.0;
}

struct Parts {
  double compute = 0, memory = 0, random = 0, sort = 0, onchip = 0;
  double memory_bytes = 0;    // what the card moves in this design
  bool restructured = false;  // the restructured design was faster and is the one given
  double time() const { return std::max({compute, memory, sort, onchip}); }
};

// One stage's arithmetic: FLOPs at the card's rate of its precision, a sort at the sort rate
// (its work is comparisons, not FLOPs).
void stage_compute(const CardWork& w, Precision p, const FpgaTarget& t, const Corner& c, Parts& out) {
  const double sort_bytes = w.sort_length * w.sort_count * w.sort_element_bytes;
  if (sort_bytes > 0) {
    out.sort += sort_bytes / c.sort_rate;
  } else {
    const double rate = t.flops_per_s(p, c.clock, c.dsp_util);
    out.compute += w.flops > 0 && rate > 0 ? w.flops / rate : 0.0;
  }
}

Parts as_compiled_parts(const CardWork& w, Precision p, const FpgaTarget& t, const Corner& c) {
  Parts out;
  stage_compute(w, p, t, c, out);
  const double k = passes(w, t, c);
  for (const RandomTraffic& r : w.random) out.random += random_seconds(r, t, c);
  out.memory = k * w.stream_bytes / stream_bytes_per_s(t, c) + out.random;
  out.memory_bytes = k * w.stream_bytes + w.random_bytes();
  return out;
}

// Stages run as one dataflow pipeline: the `io_bytes` (inputs read once, outputs written once)
// streamed, intermediates streamed from stage to stage on chip (FIFOs: the design consumes them
// in the order they are produced), a sort's or FFT's extra passes over data that does not fit
// on chip through card memory, and the state a repeated stage (a loop body) hands to its next
// repetition through card memory when it does not fit on chip, the data-dependent accesses served from on-chip banks
// when every array they land in fits on chip together (else they stay random against card memory), the stages'
// arithmetic sharing the DSPs. The pipeline takes the longest of these.
Parts dataflow_parts(const std::vector<DataflowStage>& stages, double io_bytes, const FpgaTarget& t, const Corner& c) {
  Parts out;
  const double room = c.onchip_share * t.sram_bytes;
  double sources = 0, spill = 0;
  for (const DataflowStage& s : stages)
    for (const RandomTraffic& r : s.work->random) sources += r.source_bytes;
  const bool fits = sources <= room;
  for (const DataflowStage& s : stages) {
    const CardWork& w = *s.work;
    Parts one;
    stage_compute(w, s.precision, t, c, one);
    out.compute += s.executions * one.compute;
    out.sort += s.executions * one.sort;
    const double k = passes(w, t, c);
    if (k > 1) spill += (k - 1) * s.executions * (w.input_bytes + w.output_bytes);
    // A stage repeated inside one design invocation (a loop body) hands its result to its next
    // repetition: larger than the on-chip room, it goes out to card memory and back each time.
    if (s.repeats > 0 && w.output_bytes > room) spill += 2 * s.repeats * w.output_bytes;
    for (const RandomTraffic& r : w.random)
      (fits ? out.onchip : out.random) += s.executions * (fits ? onchip_seconds(r, t, c) : random_seconds(r, t, c));
  }
  out.memory_bytes = io_bytes + spill;
  out.memory = out.memory_bytes / stream_bytes_per_s(t, c) + out.random;
  out.restructured = true;
  return out;
}

Parts op_parts(const CardWork& w, Precision p, const FpgaTarget& t, const Corner& c, Scenario s) {
  const Parts out = as_compiled_parts(w, p, t, c);
  if (s == Scenario::kAsCompiled) return out;
  // Restructured: the op alone as a dataflow design, its compulsory traffic streamed once (an
  // op that reads only part of an operand, a slice, needs no more than it moves as compiled).
  const DataflowStage stage{&w, p, 1.0, 0.0};
  const double io = w.random.empty() ? std::min(w.compulsory_bytes, w.stream_bytes) : w.compulsory_bytes;
  const Parts r = dataflow_parts({stage}, io, t, c);  // a second pass over memory is added there
  return r.time() < out.time() ? r : out;
}

std::string limit_of(const Parts& p) {
  const double t = p.time();
  if (t <= 0) return "";
  if (p.sort == t) return "sort";
  if (p.onchip == t) return "on-chip access";
  if (p.compute == t) return "compute";
  return p.random > p.memory - p.random ? "random access" : "memory";
}

}  // namespace

OpCardEstimate estimate_op_on_card(const CardWork& work, Precision p, const FpgaTarget& t, Scenario scenario) {
  OpCardEstimate e;
  if (!work.known) {
    e.note = "not estimated: no FLOP/byte count";
    e.compute_s = e.memory_s = e.time_s = {kNaN, kNaN, kNaN};
    e.memory_bytes = e.memory_efficiency = kNaN;
    return e;
  }
  const bool sorts = work.sort_length > 0;
  if (!sorts && work.flops > 0 && t.flops_per_s(p) <= 0) {
    e.note = std::string("the card has no DSP mapping for ") + precision_name(p) +
             " (its dsps_per_fma and flops_per_s are 0): not offloadable";
    e.compute_s = e.memory_s = e.time_s = {kNaN, kNaN, kNaN};
    e.memory_bytes = e.memory_efficiency = kNaN;
    return e;
  }
  e.estimated = true;
  Parts nominal;
  for (End end : kEnds) {
    const Parts parts = op_parts(work, p, t, corner(t, end), scenario);
    set_end(e.compute_s, end, std::max(parts.compute, parts.sort));
    set_end(e.memory_s, end, std::max(parts.memory, parts.onchip));
    set_end(e.time_s, end, parts.time());
    if (end == End::kNominal) nominal = parts;
  }
  e.onchip = nominal.restructured && nominal.onchip > 0;
  e.memory_bytes = nominal.memory_bytes;
  e.memory_efficiency = nominal.memory > 0 ? e.memory_bytes / (nominal.memory * t.memory_bytes_per_s())
                                           : t.stream_efficiency.nominal * t.channel_share.nominal;
  e.limit = limit_of(nominal);
  if (sorts) e.note = "sort: at the measured sort rate of published designs";
  return e;
}

TimeRange dataflow_time(const std::vector<DataflowStage>& stages, double io_bytes, const FpgaTarget& t, bool* onchip) {
  TimeRange r;
  for (End end : kEnds) {
    const Parts parts = dataflow_parts(stages, io_bytes, t, corner(t, end));
    set_end(r, end, parts.time());
    if (end == End::kNominal && onchip != nullptr) *onchip = parts.onchip > 0;
  }
  return r;
}

TimeRange link_time(double bytes, double buffers, const FpgaTarget& t, double gpu_link_bytes_per_s) {
  TimeRange r;
  for (End end : kEnds) {
    const Corner c = corner(t, end);
    double link = t.link_bytes_per_s * c.link_eff;
    if (gpu_link_bytes_per_s > 0) link = std::min(link, gpu_link_bytes_per_s);
    set_end(r, end, (link > 0 ? bytes / link : 0.0) + buffers * c.transfer_latency);
  }
  return r;
}

std::string offload_scenario(double speedup, double restructured_speedup) {
  if (!std::isfinite(speedup)) return "";
  if (speedup > 1.0) return "as compiled";
  if (restructured_speedup > 1.0) return "restructured only";
  return "neither";
}

std::string offload_verdict(const std::string& scenario, bool bound) {
  if (scenario == "as compiled") return "gains";
  if (scenario == "restructured only") return "only restructured";
  if (scenario == "neither") return "no";
  return bound ? "unknown: bound only" : "unknown: not estimated";
}

double could_save_ns(double gpu_ns, double speedup_high, double restructured_speedup_high) {
  if (!(gpu_ns > 0)) return 0.0;
  const bool a = std::isfinite(speedup_high), b = std::isfinite(restructured_speedup_high);
  if (!a && !b) return gpu_ns;
  const double fastest = std::max(a ? speedup_high : 0.0, b ? restructured_speedup_high : 0.0);
  return fastest > 1.0 ? gpu_ns * (1.0 - 1.0 / fastest) : 0.0;
}

namespace {

// The ranking: what offloading could change first, then GPU time, then score (NaN: lowest).
bool ranks_before(double save_a, double gpu_a, double score_a, double save_b, double gpu_b, double score_b) {
  if (save_a != save_b) return save_a > save_b;
  if (gpu_a != gpu_b) return gpu_a > gpu_b;
  const double sa = std::isnan(score_a) ? -1.0 : score_a, sb = std::isnan(score_b) ? -1.0 : score_b;
  return sa > sb;
}

}  // namespace

double pattern_affinity(hlo::AccessPattern p) {
  using A = hlo::AccessPattern;
  switch (p) {
    case A::kElementwise: return 1.0;    // streams through a pipeline at one element per cycle
    case A::kStencil: return 1.0;        // line buffers in BRAM: each input read once
    case A::kReduction: return 0.8;      // adder trees; loop-carried dependence needs care
    case A::kFft: return 0.7;            // streaming FFT cores exist; GPU cuFFT is strong
    case A::kConvolution: return 0.5;    // systolic arrays fit, but GPU tensor cores are faster
    case A::kSort: return 0.5;           // sorting networks / merge trees
    case A::kGatherScatter: return 0.4;  // irregular HBM access hurts both, banks help a little
    case A::kDataMovement: return 0.4;   // copies/transposes: little to win beyond bandwidth
    case A::kDot: return 0.3;            // GPU tensor cores dominate dense matmul
    case A::kLibraryCall: return 0.3;
    case A::kControl: return 0.0;
    default: return 0.3;
  }
}

namespace {

// The host link the what-if uses: the card's, capped by the GPU's when that is known.
double memory_boundness(double intensity, double ridge) {
  return ridge > 0 ? std::clamp(1.0 - intensity / ridge, 0.0, 1.0) : 0.5;
}

// Amdahl: the workload's time T with the GPU time replaced by the card's. Kernels on several
// streams can sum to more than T; at most T of the workload can be saved.
double amdahl_speedup(double total_s, double gpu_s, double fpga_total_s) {
  const double new_total = total_s - std::min(gpu_s, total_s) + fpga_total_s;
  return new_total > 0 ? total_s / new_total : 0.0;
}

void require_same_ops(const std::vector<OpCost>& ops, const RooflineReport& roofline) {
  if (roofline.ops.size() != ops.size())
    throw Error(ErrorKind::kInvalidArgument, "roofline has " + std::to_string(roofline.ops.size()) + " ops but " +
                                                 std::to_string(ops.size()) +
                                                 " were given: pass the ops analyze_roofline used");
}

double onchip_factor(double working_set_bytes, double sram_bytes) {
  return working_set_bytes <= sram_bytes ? 1.0 : 0.5 + 0.5 * sram_bytes / working_set_bytes;
}

// The host link's cost against what the op (or region) costs on the GPU today. It must not use
// the card's time: card_time / (card_time + transfer) grew when the card got slower.
double link_factor(double gpu_s, double transfer_s) {
  if (!(transfer_s > 0)) return 1.0;  // nothing crosses the link
  return std::clamp(gpu_s / (gpu_s + transfer_s), 0.0, 1.0);
}

// What one execution of an op asks of the card: from its HLO when the trace has it, else from
// the cost totals (every byte streamed).
CardWork work_of(const OpCost& op) {
  if (op.work.known || !op.cost_known) return op.work;
  return card_work_from_totals(op.flops, op.bytes_read, op.bytes_written);
}

double safe_ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

// The fields of an op's row that have no value when it is not estimated.
std::vector<double*> not_estimated_fields(FpgaCandidate& c) {
  return {&c.flops,
          &c.bytes,
          &c.intensity,
          &c.memory_boundness,
          &c.working_set_bytes,
          &c.onchip_factor,
          &c.link_factor,
          &c.score,
          &c.stream_bytes,
          &c.random_bytes,
          &c.memory_efficiency,
          &c.card_compute_s,
          &c.card_memory_s,
          &c.card_latency_s,
          &c.card_time_s,
          &c.card_time_low_s,
          &c.card_time_high_s,
          &c.transfer_bytes,
          &c.transfer_s,
          &c.transfer_low_s,
          &c.transfer_high_s,
          &c.fpga_total_s,
          &c.fpga_total_low_s,
          &c.fpga_total_high_s,
          &c.op_speedup,
          &c.op_speedup_low,
          &c.op_speedup_high,
          &c.workload_speedup,
          &c.workload_speedup_low,
          &c.workload_speedup_high,
          &c.restructured_bytes,
          &c.restructured_card_time_s,
          &c.restructured_card_time_low_s,
          &c.restructured_card_time_high_s,
          &c.restructured_fpga_total_s,
          &c.restructured_op_speedup,
          &c.restructured_op_speedup_low,
          &c.restructured_op_speedup_high,
          &c.restructured_workload_speedup};
}

// The fields of a region's row that have no value when it is not estimated.
std::vector<double*> not_estimated_fields(FpgaRegionCandidate& c) {
  return {&c.intensity,
          &c.memory_boundness,
          &c.pattern_affinity,
          &c.working_set_bytes,
          &c.onchip_factor,
          &c.link_factor,
          &c.score,
          &c.flops,
          &c.bytes,
          &c.card_compute_s,
          &c.card_memory_s,
          &c.card_latency_s,
          &c.kept_gpu_s,
          &c.card_time_s,
          &c.card_time_low_s,
          &c.card_time_high_s,
          &c.random_access_bytes,
          &c.memory_efficiency,
          &c.transfer_bytes,
          &c.transfer_s,
          &c.transfer_low_s,
          &c.transfer_high_s,
          &c.fpga_total_s,
          &c.fpga_total_low_s,
          &c.fpga_total_high_s,
          &c.region_speedup,
          &c.region_speedup_low,
          &c.region_speedup_high,
          &c.workload_speedup,
          &c.workload_speedup_low,
          &c.workload_speedup_high,
          &c.restructured_card_time_s,
          &c.restructured_card_time_low_s,
          &c.restructured_card_time_high_s,
          &c.restructured_fpga_total_s,
          &c.restructured_region_speedup,
          &c.restructured_region_speedup_low,
          &c.restructured_region_speedup_high};
}

void set_nan(const std::vector<double*>& fields) {
  for (double* f : fields) *f = kNaN;
}

std::string no_gpu_time_note(uint64_t kernels) {
  return "not estimated: its " + std::to_string(kernels) +
         " kernel(s) have no GPU time (no timestamps: kernel replay for counters whose window could not be "
         "paired, or a full timestamp buffer; see the trace's warnings): trace again without counters to time them";
}

}  // namespace

FpgaReport rank_fpga_candidates(const std::vector<OpCost>& ops, const RooflineReport& roofline,
                                const FpgaTarget& target, const FpgaOptions& options,
                                const std::vector<double>& host_bytes_per_op) {
  require_same_ops(ops, roofline);
  if (!host_bytes_per_op.empty() && host_bytes_per_op.size() != ops.size())
    throw Error(ErrorKind::kInvalidArgument, "host_bytes_per_op needs one entry per op (or none)");
  validate_fpga_target(target);
  FpgaReport report;
  report.target = target;
  report.gpu_kernel_ns = static_cast<double>(roofline.trace.time_ns);
  report.workload_ns = options.workload_ns > 0 ? options.workload_ns : report.gpu_kernel_ns;
  const double total_s = report.workload_ns * 1e-9;

  for (uint32_t o = 0; o < ops.size(); ++o) {
    const OpCost& op = ops[o];
    const RooflinePoint& rp = roofline.ops[o];
    if (rp.kernel_count == 0) continue;
    FpgaCandidate c;
    c.op_index = o;
    c.name = op.name;
    c.module = op.module;
    c.pattern = op.pattern;
    c.precision = op.precision;
    c.executions = rp.executions;
    c.kernel_count = rp.kernel_count;
    c.gpu_time_ns = static_cast<double>(rp.time_ns);
    c.time_share = report.gpu_kernel_ns > 0 ? c.gpu_time_ns / report.gpu_kernel_ns : 0.0;
    if (c.time_share < options.min_time_share) continue;
    c.cost_known = op.cost_known;
    c.ridge = rp.ridge_flops_per_byte;
    // Kernels without GPU time (start = end = 0: kernel replay whose counter window could not be
    // paired, or a timestamp buffer that ran out): a speedup over 0 s would read as "0x".
    const bool untimed = rp.time_ns == 0 && rp.measured_time_ns == 0;
    c.pattern_affinity = pattern_affinity(op.pattern);
    c.sram_bytes = target.sram_bytes;
    const double exec = static_cast<double>(c.executions);
    c.host_bytes_per_call = host_bytes_per_op.empty() || exec <= 0 ? 0.0 : host_bytes_per_op[o] / exec;
    CardWork w;
    if (untimed) {
      c.cost_known = false;
      report.not_estimated_count += 1;
      set_nan(not_estimated_fields(c));
      c.estimate_note = no_gpu_time_note(rp.kernel_count);
      report.candidates.push_back(std::move(c));
      continue;
    }
    if (op.cost_known) {
      c.estimate_basis = op.cost_from_author ? "author" : "static";
      w = work_of(op);
      c.flops = op.flops * exec;
      c.bytes = op.bytes() * exec;
      c.intensity = op.bytes() > 0 ? op.flops / op.bytes() : 0.0;
      c.memory_boundness = memory_boundness(c.intensity, c.ridge);
      c.working_set_bytes = op.working_set_bytes;
      c.onchip_source = op.working_set_source;
      c.fits_on_chip = op.working_set_bytes <= target.sram_bytes;
      c.onchip_factor = onchip_factor(op.working_set_bytes, target.sram_bytes);
    } else {
      // Without FLOPs and bytes the card time, the transfers and every factor built on them
      // would be invented (a custom call's operand bytes alone made a 10 ms solver look 14x
      // faster on the card): not estimated, not scored, kept out of the combined speedup. What
      // the trace does know still bounds it: the card time from below, the speedup from above.
      const std::string why =
          op.cost_unknown_reason.empty() ? std::string("static cost unknown") : op.cost_unknown_reason;
      const bool measured = rp.has_measured && rp.measured_coverage > 0 && rp.measured_bytes > 0 && exec > 0;
      report.not_estimated_count += 1;
      report.not_estimated_gpu_ns += c.gpu_time_ns;
      set_nan(not_estimated_fields(c));
      if ((!measured && !(op.bytes() > 0)) || !(exec > 0)) {
        c.estimate_note = "not estimated: no FLOP/byte count (" + why + ")";
        report.candidates.push_back(std::move(c));
        continue;
      }
      if (measured) {
        // The counters' FLOPs and DRAM bytes over the covered kernels, scaled to all of the
        // op's time, per execution; the operands and results are what crosses the link and
        // what a restructured design must read and write at least once.
        const double scale = 1.0 / (rp.measured_coverage * exec);
        w = card_work_from_totals(rp.measured_flops * scale, op.bytes_read, op.bytes_written);
        w.stream_bytes = w.bytes = rp.measured_bytes * scale;
        w.compulsory_bytes = std::min(w.compulsory_bytes, w.stream_bytes);
        c.estimate_basis = "measured bound";
        c.measured_coverage = rp.measured_coverage;
        c.measured_traffic_ratio = op.bytes() > 0 ? w.stream_bytes / op.bytes() : 0.0;
        c.flops = rp.measured_flops / rp.measured_coverage;
        c.bytes = rp.measured_bytes / rp.measured_coverage;
        c.intensity = c.bytes > 0 ? c.flops / c.bytes : 0.0;
        c.memory_boundness = memory_boundness(c.intensity, c.ridge);
        char pct[16];
        std::snprintf(pct, sizeof pct, "%.0f%%", 100.0 * rp.measured_coverage);
        c.estimate_note = "bound only: no static cost (" + why + "); FLOPs and DRAM bytes measured by counters over " +
                          pct + " of its time, streamed at the card's best (access pattern unknown): the card " +
                          "times are lower bounds, the speedups upper bounds";
      } else {
        w = card_work_from_totals(0.0, op.bytes_read, op.bytes_written);
        c.estimate_basis = "operand bound";
        c.estimate_note = "bound only: no static cost (" + why + "); its operands and results alone, streamed " +
                          "once (FLOPs unknown): the card times are lower bounds, the speedups upper bounds";
      }
      // The arrays it reads and writes, from its HLO where the trace has it (the cost totals
      // give one of each).
      if (op.work.input_buffers + op.work.output_buffers > 0) {
        w.input_buffers = op.work.input_buffers;
        w.output_buffers = op.work.output_buffers;
      }
      report.bounded_count += 1;
    }
    c.stream_bytes = w.stream_bytes * exec;
    c.random_bytes = w.random_bytes() * exec;

    const OpCardEstimate as_compiled = estimate_op_on_card(w, op.precision, target, Scenario::kAsCompiled);
    const OpCardEstimate restructured = estimate_op_on_card(w, op.precision, target, Scenario::kRestructured);
    const TimeRange launches =
        TimeRange{target.call_latency_s.low, target.call_latency_s.nominal, target.call_latency_s.high}.scaled(exec);
    const double gpu_s = c.gpu_time_ns * 1e-9;
    TimeRange transfer;
    if (options.inputs_cross_link) {
      c.transfer_bytes = (w.input_bytes + w.output_bytes) * exec;
      transfer = link_time(c.transfer_bytes, (w.input_buffers + w.output_buffers) * exec, target,
                           options.gpu_link_bytes_per_s);
    }
    c.transfer_s = transfer.nominal;
    c.transfer_low_s = transfer.low;
    c.transfer_high_s = transfer.high;
    c.link_factor = link_factor(gpu_s, c.transfer_s);
    c.score = c.is_bound() ? kNaN
                           : c.time_share * (0.25 + 0.75 * c.memory_boundness) * c.pattern_affinity * c.onchip_factor *
                                 c.link_factor;
    if (!as_compiled.estimated) {
      // The card cannot run this precision: never a candidate.
      c.estimate_note = as_compiled.note;
      c.score = 0;
      c.memory_efficiency = kNaN;
      c.card_compute_s = c.card_memory_s = c.card_time_s = c.card_time_low_s = c.card_time_high_s = kNaN;
      c.restructured_card_time_s = c.restructured_card_time_low_s = c.restructured_card_time_high_s = kNaN;
      c.restructured_bytes = c.fpga_total_s = c.fpga_total_low_s = c.fpga_total_high_s = kNaN;
      c.restructured_fpga_total_s = kNaN;
      c.card_latency_s = launches.nominal;
      c.op_speedup = c.op_speedup_low = c.op_speedup_high = 0;
      c.restructured_op_speedup = c.restructured_op_speedup_low = c.restructured_op_speedup_high = 0;
      c.workload_speedup = c.workload_speedup_low = c.workload_speedup_high = 1.0;
      c.restructured_workload_speedup = 1.0;
      c.scenario = "neither";
      report.candidates.push_back(std::move(c));
      continue;
    }
    c.memory_efficiency = as_compiled.memory_efficiency;
    c.card_limit = as_compiled.limit;
    c.card_compute_s = as_compiled.compute_s.nominal * exec;
    c.card_memory_s = as_compiled.memory_s.nominal * exec;
    c.card_latency_s = launches.nominal;
    TimeRange card = as_compiled.time_s.scaled(exec);
    card += launches;
    c.card_time_s = card.nominal;
    c.card_time_low_s = card.low;
    c.card_time_high_s = card.high;
    c.fpga_total_s = card.nominal + transfer.nominal;
    c.fpga_total_low_s = card.low + transfer.low;
    c.fpga_total_high_s = card.high + transfer.high;
    c.op_speedup = safe_ratio(gpu_s, c.fpga_total_s);
    c.op_speedup_low = safe_ratio(gpu_s, c.fpga_total_high_s);
    c.op_speedup_high = safe_ratio(gpu_s, c.fpga_total_low_s);
    c.workload_speedup = amdahl_speedup(total_s, gpu_s, c.fpga_total_s);
    c.workload_speedup_low = amdahl_speedup(total_s, gpu_s, c.fpga_total_high_s);
    c.workload_speedup_high = amdahl_speedup(total_s, gpu_s, c.fpga_total_low_s);
    c.restructured_bytes = restructured.memory_bytes * exec;
    c.restructured_onchip = restructured.onchip;
    TimeRange rcard = restructured.time_s.scaled(exec);
    rcard += launches;
    c.restructured_card_time_s = rcard.nominal;
    c.restructured_card_time_low_s = rcard.low;
    c.restructured_card_time_high_s = rcard.high;
    c.restructured_fpga_total_s = rcard.nominal + transfer.nominal;
    c.restructured_op_speedup = safe_ratio(gpu_s, c.restructured_fpga_total_s);
    c.restructured_op_speedup_low = safe_ratio(gpu_s, rcard.high + transfer.high);
    c.restructured_op_speedup_high = safe_ratio(gpu_s, rcard.low + transfer.low);
    c.restructured_workload_speedup = amdahl_speedup(total_s, gpu_s, c.restructured_fpga_total_s);
    if (c.is_bound()) {
      // Each time a lower bound at its corner, each speedup an upper bound; no verdict unless
      // even the fast ends stay under 1.
      const bool ruled_out = c.op_speedup_high < 1.0 && c.restructured_op_speedup_high < 1.0;
      c.scenario = ruled_out ? "neither" : "";
      if (ruled_out) {
        report.ruled_out_count += 1;
        report.ruled_out_gpu_ns += c.gpu_time_ns;
      }
      report.candidates.push_back(std::move(c));
      continue;
    }
    c.scenario = offload_scenario(c.op_speedup, c.restructured_op_speedup);
    if (!as_compiled.note.empty()) c.estimate_note = as_compiled.note;
    report.candidates.push_back(std::move(c));
  }
  // By what offloading could change: an op the model rules out changes nothing, one it cannot
  // bound could change all of its GPU time (docs/fpga-model.md, "Ranking").
  for (FpgaCandidate& c : report.candidates) {
    c.verdict = offload_verdict(c.scenario, c.is_bound());
    c.could_save_ns = could_save_ns(c.gpu_time_ns, c.op_speedup_high, c.restructured_op_speedup_high);
  }
  std::stable_sort(
      report.candidates.begin(), report.candidates.end(), [](const FpgaCandidate& a, const FpgaCandidate& b) {
        return ranks_before(a.could_save_ns, a.gpu_time_ns, a.score, b.could_save_ns, b.gpu_time_ns, b.score);
      });
  double saved = 0, saved_low = 0, saved_high = 0, saved_restructured = 0;
  for (const FpgaCandidate& c : report.candidates) {
    if (!c.cost_known) continue;
    const double gpu_s = c.gpu_time_ns * 1e-9;
    if (c.op_speedup > 1.0) {
      saved += gpu_s - c.fpga_total_s;
      saved_low += gpu_s - c.fpga_total_high_s;  // may be negative: the slow end loses time
      saved_high += gpu_s - c.fpga_total_low_s;
      report.combined_count += 1;
    }
    if (c.restructured_op_speedup > 1.0) {
      saved_restructured += gpu_s - c.restructured_fpga_total_s;
      report.restructured_combined_count += 1;
    }
  }
  const auto combined = [&](double s) { return total_s - s > 0 ? total_s / (total_s - s) : 1.0; };
  report.combined_speedup = combined(saved);
  report.combined_speedup_low = combined(saved_low);
  report.combined_speedup_high = combined(saved_high);
  report.restructured_combined_speedup = combined(saved_restructured);
  return report;
}

namespace {

uint64_t pair_key(uint32_t group, uint32_t item) { return (static_cast<uint64_t>(group) << 32) | item; }

struct SpanAcc {
  uint64_t ns = 0;
  uint64_t kernels = 0;
};

}  // namespace

std::vector<FpgaRegionCandidate> rank_fpga_regions(const TraceStore& store, const std::vector<OpCost>& ops,
                                                   const std::vector<uint32_t>& op_of_kernel,
                                                   const RooflineReport& roofline, const FpgaTarget& target,
                                                   const FpgaOptions& options) {
  require_same_ops(ops, roofline);
  if (!op_of_kernel.empty() && op_of_kernel.size() != store.kernels.size())
    throw Error(ErrorKind::kInvalidArgument, "op_of_kernel needs one entry per kernel (or none)");
  validate_fpga_target(target);
  std::vector<FpgaRegionCandidate> out;
  if (store.regions.empty()) return out;
  RegionPaths own_paths;
  const RegionPaths& groups =
      RegionPaths::select(store, options.region_paths, true, own_paths, "FpgaOptions::region_paths");
  const std::size_t n_groups = groups.size();

  // Kernel time per (innermost region path, op) and the XlaModule ranges (one per module call)
  // seen per (path, module). Kernels run in a region path's order, so the last key is cached.
  std::unordered_map<uint64_t, SpanAcc> spans;
  std::unordered_map<uint64_t, double> counted_calls;
  std::unordered_set<uint32_t> module_ranges_seen;
  std::vector<int8_t> is_module_range(store.strings.size(), -1);
  const auto module_range_of = [&](uint32_t m) -> uint32_t {
    for (std::size_t steps = 0; m != kNone32 && m < store.markers.size() && steps < 64;
         m = store.markers[m].parent, ++steps) {
      const StringId name = store.markers[m].name;
      if (name >= is_module_range.size()) continue;
      if (is_module_range[name] < 0)
        is_module_range[name] = parse_xla_range_name(store.strings.get(name)).kind == XlaRangeName::Kind::kModule;
      if (is_module_range[name] == 1) return m;
    }
    return kNone32;
  };
  uint64_t last_key = ~uint64_t{0};
  SpanAcc* last = nullptr;
  for (std::size_t i = 0; i < store.kernels.size(); ++i) {
    const KernelRecord& k = store.kernels[i];
    const uint32_t g = groups.path_of(k.region_index);
    if (g == kNone32) continue;
    const uint32_t o = op_of_kernel.empty() ? kNone32 : op_of_kernel[i];
    const uint64_t key = pair_key(g, o < ops.size() ? o : kNone32);
    if (key != last_key) {
      last = &spans[key];
      last_key = key;
    }
    last->ns += k.end_ns > k.start_ns ? k.end_ns - k.start_ns : 0;
    last->kernels += 1;
    if (o < ops.size() && ops[o].module_index != kNone32) {
      const uint32_t mr = module_range_of(k.marker_index);
      if (mr != kNone32 && module_ranges_seen.insert(mr).second) counted_calls[pair_key(g, ops[o].module_index)] += 1;
    }
  }
  // Inclusive: every entry also counts for the enclosing paths.
  const auto ancestors_inclusive = [&](uint32_t g, auto&& f) { groups.for_self_and_ancestors(g, f); };
  // HtoD + DtoH bytes copied inside each path.
  std::vector<double> host_bytes(n_groups, 0.0);
  for (const MemcpyRecord& c : store.memcpys) {
    const Direction d = direction_of(c.copy_kind);
    if (d == Direction::kHtoD || d == Direction::kDtoH)
      ancestors_inclusive(groups.path_of(c.region_index),
                          [&](uint32_t g) { host_bytes[g] += static_cast<double>(c.bytes); });
  }
  std::vector<std::vector<std::pair<uint32_t, SpanAcc>>> ops_in(n_groups);
  for (const auto& entry : spans) {
    const uint32_t op = static_cast<uint32_t>(entry.first);
    ancestors_inclusive(static_cast<uint32_t>(entry.first >> 32), [&](uint32_t g) {
      ops_in[g].push_back({op, entry.second});
    });
  }
  std::unordered_map<uint64_t, double> calls_in;
  for (const auto& entry : counted_calls) {
    const uint32_t module = static_cast<uint32_t>(entry.first);
    ancestors_inclusive(static_cast<uint32_t>(entry.first >> 32),
                        [&](uint32_t g) { calls_in[pair_key(g, module)] += entry.second; });
  }

  const double total_kernel_ns = static_cast<double>(roofline.trace.time_ns);
  const double workload_ns = options.workload_ns > 0 ? options.workload_ns : total_kernel_ns;
  const double total_s = workload_ns * 1e-9;

  // One estimate per op, shared by every path it appears in.
  std::vector<OpCardEstimate> as_compiled(ops.size()), restructured(ops.size());
  std::vector<CardWork> works(ops.size());
  std::vector<int8_t> estimated_op(ops.size(), -1);
  const auto estimate = [&](uint32_t o) {
    if (estimated_op[o] < 0) {
      works[o] = work_of(ops[o]);
      as_compiled[o] = estimate_op_on_card(works[o], ops[o].precision, target, Scenario::kAsCompiled);
      restructured[o] = estimate_op_on_card(works[o], ops[o].precision, target, Scenario::kRestructured);
      estimated_op[o] = 1;
    }
  };

  for (uint32_t g = 0; g < n_groups; ++g) {
    std::vector<std::pair<uint32_t, SpanAcc>>& entries = ops_in[g];
    if (entries.empty()) continue;
    // The same op may arrive from several nested paths: merge.
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    FpgaRegionCandidate c;
    c.path = groups.path(g);
    c.name = groups.name(g);
    c.depth = groups.depth(g);
    c.instances = groups.instances(g);
    c.sram_bytes = target.sram_bytes;
    double est_ns = 0, kept_ns = 0, bound_w = 0, affinity_w = 0;
    double bound_n = 0, affinity_n = 0;  // unweighted sums (for zero-duration kernels)
    double card_bytes = 0;
    TimeRange ops_time, ops_restructured;
    std::vector<DataflowStage> stages;
    std::vector<uint32_t> stage_module;
    std::unordered_set<uint32_t> estimated_modules;
    uint32_t estimated_ops = 0;
    uint64_t top_ns = 0, unattributed_kernels = 0;
    std::vector<std::string> unknown_ops, unsupported_ops;
    std::unordered_map<uint32_t, double> fallback_calls, io_of_module, buffers_of_module;
    for (std::size_t a = 0; a < entries.size();) {
      const uint32_t o = entries[a].first;
      SpanAcc acc;
      for (; a < entries.size() && entries[a].first == o; ++a) {
        acc.ns += entries[a].second.ns;
        acc.kernels += entries[a].second.kernels;
      }
      c.gpu_time_ns += static_cast<double>(acc.ns);
      c.kernel_count += acc.kernels;
      if (o == kNone32) {
        kept_ns += static_cast<double>(acc.ns);
        unattributed_kernels += acc.kernels;
        continue;
      }
      const OpCost& op = ops[o];
      const RooflinePoint& rp = roofline.ops[o];
      c.op_count += 1;
      if (c.top_op.empty() || acc.ns > top_ns) {
        top_ns = acc.ns;
        c.top_op = op.name;
      }
      // Executions inside: the op's executions in the proportion of its kernels launched here.
      const double exec = rp.kernel_count > 0 ? static_cast<double>(rp.executions) * static_cast<double>(acc.kernels) /
                                                    static_cast<double>(rp.kernel_count)
                                              : 0.0;
      if (op.module_index != kNone32) {
        double& f = fallback_calls[op.module_index];
        f = std::max(f, exec);
        if (op.module_io_bytes > 0) io_of_module[op.module_index] = op.module_io_bytes;
        if (op.module_io_buffers > 0) buffers_of_module[op.module_index] = op.module_io_buffers;
      }
      if (!op.cost_known) {
        kept_ns += static_cast<double>(acc.ns);
        if (unknown_ops.size() < 3) unknown_ops.push_back(op.name);
        continue;
      }
      estimate(o);
      const OpCardEstimate& e = as_compiled[o];
      if (!e.estimated) {
        kept_ns += static_cast<double>(acc.ns);
        if (unsupported_ops.size() < 3) unsupported_ops.push_back(op.name + " (" + precision_name(op.precision) + ")");
        continue;
      }
      const CardWork& w = works[o];
      stages.push_back({&w, op.precision, exec, 0.0});
      stage_module.push_back(op.module_index);
      if (op.module_index != kNone32) estimated_modules.insert(op.module_index);
      c.flops += op.flops * exec;
      c.bytes += op.bytes() * exec;
      c.random_access_bytes += w.random_bytes() * exec;
      card_bytes += e.memory_bytes * exec;
      c.card_compute_s += e.compute_s.nominal * exec;
      c.card_memory_s += e.memory_s.nominal * exec;
      ops_time += e.time_s.scaled(exec);
      ops_restructured += restructured[o].time_s.scaled(exec);
      const double weight = static_cast<double>(acc.ns);
      const double intensity = op.bytes() > 0 ? op.flops / op.bytes() : 0.0;
      est_ns += weight;
      estimated_ops += 1;
      const double boundness = memory_boundness(intensity, rp.ridge_flops_per_byte);
      bound_w += weight * boundness;
      bound_n += boundness;
      affinity_w += weight * pattern_affinity(op.pattern);
      affinity_n += pattern_affinity(op.pattern);
      if (op.working_set_bytes > c.working_set_bytes || c.onchip_source.empty()) {
        c.working_set_bytes = std::max(c.working_set_bytes, op.working_set_bytes);
        c.onchip_source = op.working_set_source;
      }
    }
    c.time_share = total_kernel_ns > 0 ? c.gpu_time_ns / total_kernel_ns : 0.0;
    if (c.time_share < options.min_time_share) continue;
    c.host_bytes_per_instance = c.instances > 0 ? host_bytes[g] / static_cast<double>(c.instances) : 0.0;
    c.estimated_share = c.gpu_time_ns > 0 ? est_ns / c.gpu_time_ns : 0.0;
    // Module calls: counted from XlaModule ranges where the trace has them, else the most
    // executions of any of the module's ops inside (one call runs each op at least once).
    bool all_counted = !fallback_calls.empty();
    double transfer_buffers = 0, io_bytes = 0;
    std::unordered_map<uint32_t, double> calls_of_module;
    for (const auto& [m, fallback] : fallback_calls) {
      const auto it = calls_in.find(pair_key(g, m));
      const double calls = it != calls_in.end() ? it->second : fallback;
      if (it == calls_in.end()) all_counted = false;
      c.module_calls += calls;
      const auto io = io_of_module.find(m);
      if (io != io_of_module.end()) c.transfer_bytes += calls * io->second;
      // The dataflow design reads and writes only the calls it runs: a module whose ops are all
      // kept at GPU speed is not part of it (its GPU time already holds its own traffic).
      if (io != io_of_module.end() && estimated_modules.count(m) != 0) io_bytes += calls * io->second;
      calls_of_module[m] = calls;
      const auto buffers = buffers_of_module.find(m);
      transfer_buffers += calls * (buffers != buffers_of_module.end() ? buffers->second : 2.0);
    }
    c.module_calls_counted = all_counted;

    std::string kept_why;
    const auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (const std::string& x : v) s += (s.empty() ? "'" : ", '") + x + "'";
      return s;
    };
    if (!unknown_ops.empty()) kept_why += "no FLOP/byte count for " + list(unknown_ops);
    if (!unsupported_ops.empty())
      kept_why +=
          (kept_why.empty() ? "" : "; ") + std::string("the card has no DSP mapping for ") + list(unsupported_ops);
    if (unattributed_kernels > 0)
      kept_why +=
          (kept_why.empty() ? "" : "; ") + std::to_string(unattributed_kernels) + " kernel(s) without an HLO op";

    const bool untimed = c.kernel_count > 0 && c.gpu_time_ns == 0;
    c.estimated = estimated_ops > 0 && !untimed;
    if (!c.estimated) {
      c.estimate_note = untimed ? no_gpu_time_note(c.kernel_count)
                                : "not estimated: nothing inside can be modelled on the card (" + kept_why + ")";
      set_nan(not_estimated_fields(c));
      out.push_back(std::move(c));
      continue;
    }
    c.intensity = c.bytes > 0 ? c.flops / c.bytes : 0.0;
    // The efficiency its card traffic got overall: each op's own, weighted by its bytes.
    c.memory_efficiency = card_bytes > 0 && c.card_memory_s > 0
                              ? card_bytes / (c.card_memory_s * target.memory_bytes_per_s())
                              : target.stream_efficiency.nominal;
    // Weighted by GPU time; kernels of zero duration (all of them in a degenerate trace) weigh equally.
    c.memory_boundness = est_ns > 0 ? bound_w / est_ns : bound_n / estimated_ops;
    c.pattern_affinity = est_ns > 0 ? affinity_w / est_ns : affinity_n / estimated_ops;
    c.fits_on_chip = c.working_set_bytes <= target.sram_bytes;
    c.onchip_factor = onchip_factor(c.working_set_bytes, target.sram_bytes);
    const TimeRange launches =
        TimeRange{target.call_latency_s.low, target.call_latency_s.nominal, target.call_latency_s.high}.scaled(
            c.module_calls);
    c.card_latency_s = launches.nominal;
    c.kept_gpu_s = kept_ns * 1e-9;
    const TimeRange kept{c.kept_gpu_s, c.kept_gpu_s, c.kept_gpu_s};
    TimeRange card = ops_time;
    card += launches;
    card += kept;
    // Restructured: the better of each op restructured alone and the region's ops as one
    // dataflow design reading the jitted calls' arguments and writing their results once. An op
    // that runs more often than its module is called repeats inside a call (a loop body).
    for (std::size_t k = 0; k < stages.size(); ++k) {
      const auto it = calls_of_module.find(stage_module[k]);
      if (it != calls_of_module.end()) stages[k].repeats = std::max(stages[k].executions - it->second, 0.0);
    }
    const TimeRange dataflow = dataflow_time(stages, io_bytes, target);
    TimeRange rcard{std::min(ops_restructured.low, dataflow.low), std::min(ops_restructured.nominal, dataflow.nominal),
                    std::min(ops_restructured.high, dataflow.high)};
    rcard += launches;
    rcard += kept;
    TimeRange transfer;
    if (options.inputs_cross_link) {
      transfer = link_time(c.transfer_bytes, transfer_buffers, target, options.gpu_link_bytes_per_s);
    } else {
      c.transfer_bytes = 0;
    }
    c.card_time_s = card.nominal;
    c.card_time_low_s = card.low;
    c.card_time_high_s = card.high;
    c.transfer_s = transfer.nominal;
    c.transfer_low_s = transfer.low;
    c.transfer_high_s = transfer.high;
    c.fpga_total_s = card.nominal + transfer.nominal;
    c.fpga_total_low_s = card.low + transfer.low;
    c.fpga_total_high_s = card.high + transfer.high;
    const double gpu_s = c.gpu_time_ns * 1e-9;
    c.link_factor = link_factor(gpu_s, c.transfer_s);
    c.score = c.time_share * c.estimated_share * (0.25 + 0.75 * c.memory_boundness) * c.pattern_affinity *
              c.onchip_factor * c.link_factor;
    c.region_speedup = safe_ratio(gpu_s, c.fpga_total_s);
    c.region_speedup_low = safe_ratio(gpu_s, c.fpga_total_high_s);
    c.region_speedup_high = safe_ratio(gpu_s, c.fpga_total_low_s);
    c.workload_speedup = amdahl_speedup(total_s, gpu_s, c.fpga_total_s);
    c.workload_speedup_low = amdahl_speedup(total_s, gpu_s, c.fpga_total_high_s);
    c.workload_speedup_high = amdahl_speedup(total_s, gpu_s, c.fpga_total_low_s);
    c.restructured_card_time_s = rcard.nominal;
    c.restructured_card_time_low_s = rcard.low;
    c.restructured_card_time_high_s = rcard.high;
    c.restructured_fpga_total_s = rcard.nominal + transfer.nominal;
    c.restructured_region_speedup = safe_ratio(gpu_s, c.restructured_fpga_total_s);
    c.restructured_region_speedup_low = safe_ratio(gpu_s, rcard.high + transfer.high);
    c.restructured_region_speedup_high = safe_ratio(gpu_s, rcard.low + transfer.low);
    c.scenario = offload_scenario(c.region_speedup, c.restructured_region_speedup);
    if (kept_ns > 0) {
      char pct[32];
      std::snprintf(pct, sizeof pct, "%.1f %%", 100.0 * kept_ns / c.gpu_time_ns);
      c.estimate_note = std::string(pct) + " of its GPU time kept at GPU speed (" + kept_why + ")";
    }
    out.push_back(std::move(c));
  }
  for (FpgaRegionCandidate& c : out) {
    c.verdict = offload_verdict(c.scenario, false);
    c.could_save_ns = could_save_ns(c.gpu_time_ns, c.region_speedup_high, c.restructured_region_speedup_high);
  }
  std::stable_sort(out.begin(), out.end(), [](const FpgaRegionCandidate& a, const FpgaRegionCandidate& b) {
    return ranks_before(a.could_save_ns, a.gpu_time_ns, a.score, b.could_save_ns, b.gpu_time_ns, b.score);
  });
  return out;
}

// ---- static estimate of a module --------------------------------------------------------------
namespace {

hlo::PrimitiveType element_type(const hlo::Shape& s) {
  if (s.type != hlo::PrimitiveType::kTuple) return s.type;
  for (const hlo::Shape& e : s.tuple) {
    const hlo::PrimitiveType t = element_type(e);
    if (t != hlo::PrimitiveType::kInvalid && t != hlo::PrimitiveType::kToken) return t;
  }
  return hlo::PrimitiveType::kInvalid;
}

bool no_code(const std::string& op) {
  return op == "parameter" || op == "constant" || op == "get-tuple-element" || op == "bitcast" || op == "tuple" ||
         op == "after-all" || op == "add-dependency" || op == "domain" || op == "opt-barrier" || op == "async-update" ||
         op == "async-done" || op == "partition-id" || op == "replica-id";
}

double array_leaves(const hlo::Shape& s) {
  if (!s.is_tuple()) return s.is_array() ? 1.0 : 0.0;
  double n = 0;
  for (const hlo::Shape& e : s.tuple) n += array_leaves(e);
  return n;
}

class ModuleWalker {
 public:
  ModuleWalker(const hlo::Module& m, const FpgaTarget& t, ModuleEstimate& out)
      : m_(m), t_(t), out_(out), path_(m.computations.size()) {
    std::size_t instructions = 0;
    for (const hlo::Computation& c : m.computations) instructions += c.instructions.size();
    // A computation called from several places is expanded at each; more visits than this many
    // per instruction is a call graph built to explode (2 calls per level, 40 levels deep).
    max_visits_ = kVisitsPerInstruction * instructions + kVisitsAllowance;
  }

  // The estimated ops as one dataflow design (see dataflow_time).
  std::vector<DataflowStage> stages() const {
    std::vector<DataflowStage> out;
    // One invocation of the function: a stage inside a loop repeats (executions - 1) times.
    for (const Stage& s : stages_) out.push_back({&s.work, s.precision, s.executions, std::max(s.executions - 1, 0.0)});
    return out;
  }

  void walk(const hlo::Computation& comp, double executions, int depth) {
    if (depth > kMaxDepth) {
      note_once("calls nested more than " + std::to_string(kMaxDepth) + " deep below '" + comp.name +
                "': not expanded further (the card time is a lower bound)");
      return;
    }
    const auto index = static_cast<std::size_t>(&comp - m_.computations.data());
    if (!path_.enter(index)) {
      note_once("computation '" + comp.name +
                "' calls itself (a recursion XLA never writes): not expanded again (the card time is a "
                "lower bound)");
      return;
    }
    walk_instructions(comp, executions, depth);
    path_.leave(index);
  }

 private:
  static constexpr int kMaxDepth = 64;
  static constexpr std::size_t kVisitsPerInstruction = 16;
  static constexpr std::size_t kVisitsAllowance = 4096;

  void note_once(const std::string& note) {
    if (noted_.insert(note).second) out_.notes.push_back(note);
  }

  void walk_instructions(const hlo::Computation& comp, double executions, int depth) {
    for (const hlo::Instruction& ins : comp.instructions) {
      const std::string& op = ins.opcode;
      if (no_code(op)) continue;
      if (++visits_ > max_visits_) {
        note_once("the module's calls expand to more than " + std::to_string(max_visits_) +
                  " op executions to walk: the rest are not counted (the card time is a lower bound)");
        return;
      }
      if (op == "while") {
        const hlo::Computation* body = called(ins, "body", 1);
        const hlo::Computation* cond = called(ins, "condition", 0);
        double trips = static_cast<double>(ins.known_trip_count);
        if (ins.known_trip_count < 0) {
          trips = 1;
          note_once("while loop '" + ins.name + "': trip count unknown, its body counted once (a lower bound)");
        }
        // The condition runs once more than the body (the test that ends the loop).
        if (cond != nullptr) walk(*cond, executions * (ins.known_trip_count < 0 ? trips : trips + 1), depth + 1);
        if (body != nullptr) walk(*body, executions * trips, depth + 1);
        continue;
      }
      if (op == "conditional") {
        const hlo::Computation* heaviest = nullptr;
        double most = -1;
        for (const std::string& name : ins.called_computations) {
          const hlo::Computation* b = m_.find(name);
          if (b == nullptr) continue;
          double cost = 0;
          for (const hlo::Instruction& i : b->instructions) cost += i.cost.flops + i.cost.bytes_accessed();
          if (cost > most) {
            most = cost;
            heaviest = b;
          }
        }
        if (heaviest != nullptr) {
          if (ins.called_computations.size() > 1)
            out_.notes.push_back("conditional '" + ins.name + "': its costliest branch '" + heaviest->name +
                                 "' counted");
          walk(*heaviest, executions, depth + 1);
        }
        continue;
      }
      if (op == "call" || op == "async-start") {
        if (const hlo::Computation* callee = called(ins, "to_apply", 0)) walk(*callee, executions, depth + 1);
        continue;
      }
      add_row(comp, ins, executions);
    }
  }

  const hlo::Computation* called(const hlo::Instruction& ins, const char* key, std::size_t fallback) const {
    auto it = ins.attributes.find(key);
    if (it != ins.attributes.end()) {
      std::string n = it->second;
      if (!n.empty() && n.front() == '%') n.erase(0, 1);
      if (const hlo::Computation* c = m_.find(n)) return c;
    }
    if (fallback < ins.called_computations.size()) return m_.find(ins.called_computations[fallback]);
    if (!ins.called_computations.empty()) return m_.find(ins.called_computations.front());
    return nullptr;
  }

  void add_row(const hlo::Computation& comp, const hlo::Instruction& ins, double executions) {
    StaticOpEstimate r;
    r.op = ins.name;
    r.computation = comp.name;
    r.opcode = ins.opcode;
    r.pattern = ins.pattern;
    r.precision = precision_for(element_type(ins.shape), ins.pattern);
    r.executions = executions;
    if (!ins.metadata.source_file.empty())
      r.source = ins.metadata.source_file +
                 (ins.metadata.source_line >= 0 ? ":" + std::to_string(ins.metadata.source_line) : "");
    const CardWork w = card_work(m_, ins);
    r.flops = w.flops * executions;
    r.bytes = w.bytes * executions;
    r.stream_bytes = w.stream_bytes * executions;
    r.random_bytes = w.random_bytes() * executions;
    r.compulsory_bytes = w.compulsory_bytes * executions;
    const OpCardEstimate a = estimate_op_on_card(w, r.precision, t_, Scenario::kAsCompiled);
    const OpCardEstimate b = estimate_op_on_card(w, r.precision, t_, Scenario::kRestructured);
    r.estimated = a.estimated;
    if (!a.estimated) {
      r.estimate_note = !w.known && !ins.custom_call_target.empty()
                            ? "not estimated: custom call '" + ins.custom_call_target + "' has no cost rule"
                        : !w.known ? "not estimated: it calls a custom call without a cost rule"
                                   : a.note;
      r.memory_efficiency = kNaN;
      r.card_compute_s = r.card_memory_s = r.card_time_s = r.restructured_time_s = {kNaN, kNaN, kNaN};
      out_.not_estimated_count += 1;
      out_.ops.push_back(std::move(r));
      return;
    }
    r.memory_efficiency = a.memory_efficiency;
    r.card_limit = a.limit;
    r.card_compute_s = a.compute_s.scaled(executions);
    r.card_memory_s = a.memory_s.scaled(executions);
    r.card_time_s = a.time_s.scaled(executions);
    r.restructured_time_s = b.time_s.scaled(executions);
    r.restructured_onchip = b.onchip;
    r.estimate_note = a.note;
    stages_.push_back({w, r.precision, executions});
    out_.card_time_s += r.card_time_s;
    out_.restructured_card_time_s += r.restructured_time_s;
    out_.ops.push_back(std::move(r));
  }

  struct Stage {
    CardWork work;
    Precision precision;
    double executions;
  };
  const hlo::Module& m_;
  const FpgaTarget& t_;
  ModuleEstimate& out_;
  hlo::CallPath path_;
  std::size_t max_visits_ = 0;
  std::size_t visits_ = 0;
  std::set<std::string> noted_;
  std::deque<Stage> stages_;  // stable addresses for DataflowStage::work
};

}  // namespace

ModuleEstimate estimate_module(const hlo::Module& module, const FpgaTarget& target) {
  validate_fpga_target(target);
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr)
    throw Error(ErrorKind::kInvalidArgument, "HLO module '" + module.name +
                                                 "' has no entry computation: "
                                                 "pass a whole module (with ENTRY), as XLA prints it");
  ModuleEstimate out;
  out.module = module.name;
  out.target = target;
  ModuleWalker walker(module, target, out);
  walker.walk(*entry, 1.0, 0);
  for (const hlo::Instruction& ins : entry->instructions) {
    if (ins.opcode != "parameter") continue;
    out.transfer_bytes += static_cast<double>(ins.shape.byte_size());
    out.transfer_buffers += array_leaves(ins.shape);
  }
  if (const hlo::Instruction* root = entry->root()) {
    out.transfer_bytes += static_cast<double>(root->shape.byte_size());
    out.transfer_buffers += array_leaves(root->shape);
  }
  // Restructured: the better of each op restructured on its own (already summed) and the whole
  // function as one dataflow design reading its arguments and writing its results once.
  bool dataflow_onchip = false;
  const TimeRange dataflow = dataflow_time(walker.stages(), out.transfer_bytes, target, &dataflow_onchip);
  TimeRange& r = out.restructured_card_time_s;
  out.restructured_dataflow = dataflow.nominal < r.nominal;
  out.restructured_onchip = out.restructured_dataflow
                                ? dataflow_onchip
                                : std::any_of(out.ops.begin(), out.ops.end(),
                                              [](const StaticOpEstimate& o) { return o.restructured_onchip; });
  r = {std::min(r.low, dataflow.low), std::min(r.nominal, dataflow.nominal), std::min(r.high, dataflow.high)};
  // The whole function is one design: one launch, arguments in and results out once.
  out.call_latency_s = {target.call_latency_s.low, target.call_latency_s.nominal, target.call_latency_s.high};
  out.card_time_s += out.call_latency_s;
  out.restructured_card_time_s += out.call_latency_s;
  out.transfer_s = link_time(out.transfer_bytes, out.transfer_buffers, target);
  out.total_s = out.card_time_s;
  out.total_s += out.transfer_s;
  out.restructured_total_s = out.restructured_card_time_s;
  out.restructured_total_s += out.transfer_s;
  if (out.not_estimated_count > 0)
    out.notes.push_back(std::to_string(out.not_estimated_count) +
                        " op(s) without a cost are in no time above: the card time is a lower bound");
  return out;
}

}  // namespace fpgaprof::analysis

#include "fpgaprof/analysis/fpga_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_map>
#include <utility>
#include <unordered_set>

#include "fpgaprof/analysis/attribution.hpp"
#include "fpgaprof/analysis/region_paths.hpp"
#include "fpgaprof/analysis/transfer_analysis.hpp"
#include "fpgaprof/error.hpp"

namespace fpgaprof::analysis {
namespace {

constexpr double kBram36Bits = 36.0 * 1024.0;   // one 36 Kb block RAM
constexpr double kUram288Bits = 288.0 * 1024.0; // one 288 Kb UltraRAM
// Gather/scatter on HBM2/HBM2e (docs/fpga-model.md, "Random access"): per f32 element with an
// s32 index, 12 counted bytes, of which the 4 gathered ones are random: 4/32 of a 32-byte
// pseudo-channel burst (BL4 x 64 bit) at <= 50 % of the data rate for page-miss traffic (UG1556)
// = 0.0625; the 8 streamed ones at 0.85. 12 / (4 / 0.0625 + 8 / 0.85) = 0.163 -> 0.16.
constexpr double kHbmRandomAccessEfficiency = 0.16;

std::vector<FpgaTarget> make_presets() {
  std::vector<FpgaTarget> out;
  {
    FpgaTarget t;
    t.name = "alveo-u55c";
    t.description = "AMD Alveo U55C: 16 GB HBM2 460 GB/s, 9,024 DSP48E2, 2,016 BRAM + 960 URAM, PCIe gen3 x16";
    t.hbm_bytes_per_s = 460e9;
    t.random_access_efficiency = kHbmRandomAccessEfficiency;
    t.sram_bytes = (2016.0 * kBram36Bits + 960.0 * kUram288Bits) / 8.0;
    t.dsp_count = 9024;
    t.dsps_per_fma_fp64 = 14;  // PG060 full-DSP: double mul 11 + add 3
    t.dsps_per_fma_fp32 = 5;   // single mul 3 + add 2
    t.dsps_per_fma_fp16 = 2;   // half mul 1 + add 1
    t.link_bytes_per_s = pcie_bytes_per_s(3, 16);
    out.push_back(t);
  }
  {
    FpgaTarget t;
    t.name = "alveo-u280";
    t.description = "AMD Alveo U280: 8 GB HBM2 460 GB/s (+32 GB DDR4), 9,024 DSP48E2, 2,016 BRAM + 960 URAM, PCIe gen3 x16";
    t.hbm_bytes_per_s = 460e9;
    t.random_access_efficiency = kHbmRandomAccessEfficiency;
    t.sram_bytes = (2016.0 * kBram36Bits + 960.0 * kUram288Bits) / 8.0;
    t.dsp_count = 9024;
    t.dsps_per_fma_fp64 = 14;
    t.dsps_per_fma_fp32 = 5;
    t.dsps_per_fma_fp16 = 2;
    t.link_bytes_per_s = pcie_bytes_per_s(3, 16);
    out.push_back(t);
  }
  {
    FpgaTarget t;
    t.name = "versal-v80";
    t.description = "AMD Alveo V80: 32 GB HBM2e 820 GB/s, 10,848 DSP58, ~541 Mb on-chip RAM, PCIe gen5 x8";
    t.hbm_bytes_per_s = 819.2e9;
    t.random_access_efficiency = kHbmRandomAccessEfficiency;  // same 32 B pseudo-channel burst (PG313)
    t.sram_bytes = 541.0 * 1024.0 * 1024.0 / 8.0;
    t.dsp_count = 10848;
    t.dsps_per_fma_fp64 = 6;   // 53x53 mantissa product on 27x24 multipliers: 2 x 3 DSP58, add in fabric
    t.dsps_per_fma_fp32 = 1;   // DSP58 native FP32 multiply-add (DSPFP32 mode)
    t.dsps_per_fma_fp16 = 1;   // no packed fp16 mode: one fp16 FMA per DSPFP32
    t.link_bytes_per_s = pcie_bytes_per_s(5, 8);
    out.push_back(t);
  }
  return out;
}

}  // namespace

bool is_random_access(hlo::AccessPattern p) { return p == hlo::AccessPattern::kGatherScatter; }

double FpgaTarget::memory_efficiency(hlo::AccessPattern p) const {
  return is_random_access(p) ? random_access_efficiency : hbm_efficiency;
}

double FpgaTarget::flops_per_s(Precision p) const {
  double per_fma = 0;
  double given = 0;
  switch (p) {
    case Precision::kFp64: case Precision::kFp64Tensor: per_fma = dsps_per_fma_fp64; given = fp64_flops_per_s; break;
    case Precision::kFp32: case Precision::kTf32Tensor: per_fma = dsps_per_fma_fp32; given = fp32_flops_per_s; break;
    default: per_fma = dsps_per_fma_fp16; given = fp16_flops_per_s; break;
  }
  if (given > 0) return given;
  if (per_fma <= 0) return 0.0;
  return static_cast<double>(dsp_count) * dsp_utilization / per_fma * 2.0 * clock_hz;
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
  throw Error(ErrorKind::kInvalidArgument, "unknown FPGA target '" + name + "': use one of " +
                                               fpga_preset_names() + " or pass your own FpgaTarget");
}

void validate_fpga_target(const FpgaTarget& t) {
  const std::string who = "FPGA target '" + t.name + "': ";
  const std::string fix = "; set it, or start from a preset (base=one of " + fpga_preset_names() + ")";
  const auto fail = [&](const char* field, double v, const char* rule, bool zero_is_missing = false) {
    char value[32];
    std::snprintf(value, sizeof value, "%g", v);
    // A required field left out arrives as its default 0: say so rather than blame a value
    // nobody gave.
    const std::string what = zero_is_missing && v == 0 ? std::string(" is missing (or 0): it ") + rule
                                                       : std::string(" = ") + value + " " + rule;
    throw Error(ErrorKind::kInvalidArgument, who + field + what + fix);
  };
  // Values in the wrong unit (MHz for Hz, GB/s for bytes/s, us for s) are off by 1e3..1e9 and
  // would give silently absurd estimates: refuse magnitudes no real card has.
  const auto plausible = [&](const char* field, double v, bool ok, const char* hint) {
    if (ok) return;
    char value[32];
    std::snprintf(value, sizeof value, "%g", v);
    throw Error(ErrorKind::kInvalidArgument, who + field + " = " + value + " " + hint);
  };
  if (t.name.empty())
    throw Error(ErrorKind::kInvalidArgument, "FPGA target without a name: give it one (name=\"my-card\")");
  const auto positive = [&](const char* field, double v, const char* what) {
    if (!(std::isfinite(v) && v > 0)) fail(field, v, what, true);  // fields whose default is 0
  };
  const auto share = [&](const char* field, double v) {
    if (!(std::isfinite(v) && v > 0 && v <= 1)) fail(field, v, "must be a share in (0, 1]");
  };
  const auto non_negative = [&](const char* field, double v, const char* what) {
    if (!(std::isfinite(v) && v >= 0)) fail(field, v, what);
  };
  positive("hbm_bytes_per_s", t.hbm_bytes_per_s, "must be the card's off-chip memory peak in bytes/s (> 0)");
  share("hbm_efficiency", t.hbm_efficiency);
  share("random_access_efficiency", t.random_access_efficiency);
  positive("sram_bytes", t.sram_bytes, "must be the card's on-chip RAM in bytes (> 0)");
  non_negative("dsps_per_fma_fp64", t.dsps_per_fma_fp64, "must be >= 0 (0: no fp64)");
  non_negative("dsps_per_fma_fp32", t.dsps_per_fma_fp32, "must be >= 0 (0: no fp32)");
  non_negative("dsps_per_fma_fp16", t.dsps_per_fma_fp16, "must be >= 0 (0: no fp16)");
  non_negative("fp64_flops_per_s", t.fp64_flops_per_s, "must be a rate in FLOP/s, >= 0 (0: from the DSPs)");
  non_negative("fp32_flops_per_s", t.fp32_flops_per_s, "must be a rate in FLOP/s, >= 0 (0: from the DSPs)");
  non_negative("fp16_flops_per_s", t.fp16_flops_per_s, "must be a rate in FLOP/s, >= 0 (0: from the DSPs)");
  if (t.uses_dsp_model()) {
    positive("dsp_count", static_cast<double>(t.dsp_count), "must be the card's DSP slice count (> 0)");
    positive("clock_hz", t.clock_hz, "must be the kernel clock in Hz (> 0)");
    share("dsp_utilization", t.dsp_utilization);
  }
  if (t.dsps_per_fma_fp64 <= 0 && t.dsps_per_fma_fp32 <= 0 && t.dsps_per_fma_fp16 <= 0 &&
      t.fp64_flops_per_s <= 0 && t.fp32_flops_per_s <= 0 && t.fp16_flops_per_s <= 0)
    throw Error(ErrorKind::kInvalidArgument,
                who + "no precision has a rate (dsps_per_fma_fp64/fp32/fp16 and fp64/fp32/fp16_flops_per_s are "
                      "all 0), so the card computes nothing; give the FLOP/s of at least one precision, or "
                      "the DSP slices one FMA of it needs" + fix);
  positive("link_bytes_per_s", t.link_bytes_per_s, "must be the host link's one-direction peak in bytes/s (> 0)");
  share("link_efficiency", t.link_efficiency);
  non_negative("call_latency_s", t.call_latency_s, "must be a time in seconds (>= 0)");
  non_negative("transfer_latency_s", t.transfer_latency_s, "must be a time in seconds (>= 0)");
  plausible("hbm_bytes_per_s", t.hbm_bytes_per_s, t.hbm_bytes_per_s >= 1e8,
            "is below 100 MB/s: give bytes per second (460 GB/s = 460e9), not GB/s");
  plausible("link_bytes_per_s", t.link_bytes_per_s, t.link_bytes_per_s >= 1e7,
            "is below 10 MB/s: give bytes per second (PCIe gen3 x16 = 15.75e9), not GB/s");
  plausible("sram_bytes", t.sram_bytes, t.sram_bytes >= 1024,
            "is below 1 KiB: give bytes (44.7 MB = 44.7e6), not MB");
  if (t.uses_dsp_model())
    plausible("clock_hz", t.clock_hz, t.clock_hz >= 1e6, "is below 1 MHz: give hertz (300 MHz = 300e6), not MHz");
  const std::pair<const char*, double> rates[] = {
      {"fp64_flops_per_s", t.fp64_flops_per_s}, {"fp32_flops_per_s", t.fp32_flops_per_s},
      {"fp16_flops_per_s", t.fp16_flops_per_s}};
  for (const auto& [field, v] : rates)
    plausible(field, v, v == 0 || v >= 1e6, "is below 1 MFLOP/s: give FLOP per second (1 TFLOP/s = 1e12), not TFLOP/s");
  plausible("call_latency_s", t.call_latency_s, t.call_latency_s <= 1.0,
            "is over 1 s: give seconds (10 us = 10e-6), not microseconds");
  plausible("transfer_latency_s", t.transfer_latency_s, t.transfer_latency_s <= 1.0,
            "is over 1 s: give seconds (5 us = 5e-6), not microseconds");
}

double pattern_affinity(hlo::AccessPattern p) {
  using A = hlo::AccessPattern;
  switch (p) {
    case A::kElementwise: return 1.0;   // streams through a pipeline at one element per cycle
    case A::kStencil: return 1.0;       // line buffers in BRAM: each input read once
    case A::kReduction: return 0.8;     // adder trees; loop-carried dependence needs care
    case A::kFft: return 0.7;           // streaming FFT cores exist; GPU cuFFT is strong
    case A::kConvolution: return 0.5;   // systolic arrays fit, but GPU tensor cores are faster
    case A::kSort: return 0.5;          // sorting networks / merge trees
    case A::kGatherScatter: return 0.4; // irregular HBM access hurts both, banks help a little
    case A::kDataMovement: return 0.4;  // copies/transposes: little to win beyond bandwidth
    case A::kDot: return 0.3;           // GPU tensor cores dominate dense matmul
    case A::kLibraryCall: return 0.3;
    case A::kControl: return 0.0;
    default: return 0.3;
  }
}

namespace {

// The host link the what-if uses: the card's, capped by the GPU's when that is known.
double effective_link(const FpgaTarget& target, const FpgaOptions& options) {
  double link = target.host_link_bytes_per_s();
  if (options.gpu_link_bytes_per_s > 0)
    link = link > 0 ? std::min(link, options.gpu_link_bytes_per_s) : options.gpu_link_bytes_per_s;
  return link;
}

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
    throw Error(ErrorKind::kInvalidArgument, "roofline has " + std::to_string(roofline.ops.size()) +
                                                 " ops but " + std::to_string(ops.size()) +
                                                 " were given: pass the ops analyze_roofline used");
}

double onchip_factor(double working_set_bytes, double sram_bytes) {
  return working_set_bytes <= sram_bytes ? 1.0 : 0.5 + 0.5 * sram_bytes / working_set_bytes;
}

// The host link's cost against what the op (or region) costs on the GPU today. It must not use
// the card's time: card_time / (card_time + transfer) grew when the card got slower, so a
// gather at random_access_efficiency outranked the same gather at hbm_efficiency.
double link_factor(double gpu_s, double transfer_s) {
  if (!(transfer_s > 0)) return 1.0;  // nothing crosses the link
  return std::clamp(gpu_s / (gpu_s + transfer_s), 0.0, 1.0);
}

}  // namespace

FpgaReport rank_fpga_candidates(const std::vector<OpCost>& ops, const RooflineReport& roofline,
                                const FpgaTarget& target, const FpgaOptions& options,
                                const std::vector<double>& host_bytes_per_op) {
  require_same_ops(ops, roofline);
  if (!host_bytes_per_op.empty() && host_bytes_per_op.size() != ops.size())
    throw Error(ErrorKind::kInvalidArgument, "host_bytes_per_op needs one entry per op (or none)");
  validate_fpga_target(target);
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  FpgaReport report;
  report.target = target;
  report.gpu_kernel_ns = static_cast<double>(roofline.trace.time_ns);
  report.workload_ns = options.workload_ns > 0 ? options.workload_ns : report.gpu_kernel_ns;
  const double total_s = report.workload_ns * 1e-9;

  const double link = effective_link(target, options);

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
    c.pattern_affinity = pattern_affinity(op.pattern);
    c.sram_bytes = target.sram_bytes;
    c.memory_efficiency = target.memory_efficiency(op.pattern);
    const double exec = static_cast<double>(c.executions);
    c.host_bytes_per_call = host_bytes_per_op.empty() || exec <= 0 ? 0.0 : host_bytes_per_op[o] / exec;
    if (!op.cost_known) {
      // Without FLOPs and bytes the card time, the transfers and every factor built on them
      // would be invented (a custom call's operand bytes alone made a 10 ms solver look 14x
      // faster on the card): not estimated, and kept out of the combined speedup.
      c.estimate_note = "not estimated: no FLOP/byte count (" +
                        (op.cost_unknown_reason.empty() ? std::string("static cost unknown") : op.cost_unknown_reason) +
                        ")";
      c.flops = c.bytes = c.intensity = c.memory_boundness = kNaN;
      c.working_set_bytes = c.onchip_factor = c.link_factor = c.score = kNaN;
      c.card_compute_s = c.card_memory_s = c.card_latency_s = c.card_time_s = kNaN;
      c.transfer_bytes = c.transfer_s = c.fpga_total_s = c.op_speedup = c.workload_speedup = kNaN;
      report.not_estimated_count += 1;
      report.not_estimated_gpu_ns += c.gpu_time_ns;
      report.candidates.push_back(std::move(c));
      continue;
    }
    c.flops = op.flops * exec;
    c.bytes = op.bytes() * exec;
    c.intensity = op.bytes() > 0 ? op.flops / op.bytes() : 0.0;
    c.memory_boundness = memory_boundness(c.intensity, c.ridge);
    c.working_set_bytes = op.working_set_bytes;
    c.fits_on_chip = op.working_set_bytes <= target.sram_bytes;
    c.onchip_factor = onchip_factor(op.working_set_bytes, target.sram_bytes);

    // Card roofline: the slower of compute and HBM traffic (at the efficiency of the op's access
    // pattern), plus a launch per execution.
    const double card_flops = target.flops_per_s(op.precision);
    const double card_mem = target.memory_bytes_per_s(op.pattern);
    c.card_compute_s = c.flops > 0 ? (card_flops > 0 ? c.flops / card_flops : 0.0) : 0.0;
    c.card_memory_s = c.bytes > 0 && card_mem > 0 ? c.bytes / card_mem : 0.0;
    c.card_latency_s = exec * target.call_latency_s;
    c.card_time_s = std::max(c.card_compute_s, c.card_memory_s) + c.card_latency_s;
    if (options.inputs_cross_link && link > 0) {
      c.transfer_bytes = c.bytes;
      c.transfer_s = c.transfer_bytes / link + exec * 2.0 * target.transfer_latency_s;
    }
    c.fpga_total_s = c.card_time_s + c.transfer_s;
    const double gpu_s = c.gpu_time_ns * 1e-9;
    c.link_factor = link_factor(gpu_s, c.transfer_s);
    c.score = c.time_share * (0.25 + 0.75 * c.memory_boundness) * c.pattern_affinity * c.onchip_factor * c.link_factor;
    c.op_speedup = c.fpga_total_s > 0 ? gpu_s / c.fpga_total_s : 0.0;
    c.workload_speedup = amdahl_speedup(total_s, gpu_s, c.fpga_total_s);
    if (card_flops <= 0 && c.flops > 0) {
      // The card cannot run this precision: never a candidate.
      c.score = 0;
      c.op_speedup = 0;
      c.workload_speedup = 1.0;
      c.estimate_note = std::string("the card has no DSP mapping for ") + precision_name(op.precision) +
                        " (its dsps_per_fma and flops_per_s are 0): not offloadable";
    }
    report.candidates.push_back(std::move(c));
  }
  // Scored ops by score; the not estimated ones (NaN score: no strict order) after them by GPU time.
  std::stable_sort(report.candidates.begin(), report.candidates.end(),
                   [](const FpgaCandidate& a, const FpgaCandidate& b) {
                     if (a.cost_known != b.cost_known) return a.cost_known;
                     return a.cost_known ? a.score > b.score : a.gpu_time_ns > b.gpu_time_ns;
                   });
  double saved_s = 0;
  for (const FpgaCandidate& c : report.candidates) {
    if (c.cost_known && c.op_speedup > 1.0) {
      saved_s += c.gpu_time_ns * 1e-9 - c.fpga_total_s;
      report.combined_count += 1;
    }
  }
  report.combined_speedup = total_s - saved_s > 0 ? total_s / (total_s - saved_s) : 1.0;
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
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  RegionPaths own_paths;
  const RegionPaths& groups = RegionPaths::select(store, options.region_paths, true, own_paths, "FpgaOptions::region_paths");
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
    ancestors_inclusive(static_cast<uint32_t>(entry.first >> 32),
                        [&](uint32_t g) { ops_in[g].push_back({op, entry.second}); });
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
  const double link = effective_link(target, options);

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
    double est_ns = 0, kept_ns = 0, bound_w = 0, affinity_w = 0, op_time_s = 0;
    double bound_n = 0, affinity_n = 0;  // unweighted sums (for zero-duration kernels)
    uint32_t estimated_ops = 0;
    uint64_t top_ns = 0, unattributed_kernels = 0;
    std::vector<std::string> unknown_ops, unsupported_ops;
    std::unordered_map<uint32_t, double> fallback_calls, io_of_module;
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
      }
      const double card_flops = target.flops_per_s(op.precision);
      if (!op.cost_known) {
        kept_ns += static_cast<double>(acc.ns);
        if (unknown_ops.size() < 3) unknown_ops.push_back(op.name);
        continue;
      }
      if (card_flops <= 0 && op.flops > 0) {
        kept_ns += static_cast<double>(acc.ns);
        if (unsupported_ops.size() < 3) unsupported_ops.push_back(op.name + " (" + precision_name(op.precision) + ")");
        continue;
      }
      const double f = op.flops * exec, b = op.bytes() * exec;
      const double card_mem = target.memory_bytes_per_s(op.pattern);
      const double compute_s = f > 0 ? f / card_flops : 0.0;
      const double memory_s = b > 0 && card_mem > 0 ? b / card_mem : 0.0;
      c.flops += f;
      c.bytes += b;
      if (is_random_access(op.pattern)) c.random_access_bytes += b;
      c.card_compute_s += compute_s;
      c.card_memory_s += memory_s;
      op_time_s += std::max(compute_s, memory_s);
      const double w = static_cast<double>(acc.ns);
      const double intensity = op.bytes() > 0 ? op.flops / op.bytes() : 0.0;
      est_ns += w;
      estimated_ops += 1;
      const double boundness = memory_boundness(intensity, rp.ridge_flops_per_byte);
      bound_w += w * boundness;
      bound_n += boundness;
      affinity_w += w * pattern_affinity(op.pattern);
      affinity_n += pattern_affinity(op.pattern);
      c.working_set_bytes = std::max(c.working_set_bytes, op.working_set_bytes);
    }
    c.time_share = total_kernel_ns > 0 ? c.gpu_time_ns / total_kernel_ns : 0.0;
    if (c.time_share < options.min_time_share) continue;
    c.host_bytes_per_instance = c.instances > 0 ? host_bytes[g] / static_cast<double>(c.instances) : 0.0;
    c.estimated_share = c.gpu_time_ns > 0 ? est_ns / c.gpu_time_ns : 0.0;
    // Module calls: counted from XlaModule ranges where the trace has them, else the most
    // executions of any of the module's ops inside (one call runs each op at least once).
    bool all_counted = !fallback_calls.empty();
    for (const auto& [m, fallback] : fallback_calls) {
      const auto it = calls_in.find(pair_key(g, m));
      const double calls = it != calls_in.end() ? it->second : fallback;
      if (it == calls_in.end()) all_counted = false;
      c.module_calls += calls;
      const auto io = io_of_module.find(m);
      if (io != io_of_module.end()) c.transfer_bytes += calls * io->second;
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
      kept_why += (kept_why.empty() ? "" : "; ") + std::string("the card has no DSP mapping for ") + list(unsupported_ops);
    if (unattributed_kernels > 0)
      kept_why += (kept_why.empty() ? "" : "; ") + std::to_string(unattributed_kernels) + " kernel(s) without an HLO op";

    c.estimated = estimated_ops > 0;
    if (!c.estimated) {
      c.estimate_note = "not estimated: nothing inside can be modelled on the card (" + kept_why + ")";
      c.intensity = c.memory_boundness = c.pattern_affinity = c.working_set_bytes = c.onchip_factor = kNaN;
      c.link_factor = c.score = c.flops = c.bytes = kNaN;
      c.card_compute_s = c.card_memory_s = c.card_latency_s = c.kept_gpu_s = c.card_time_s = kNaN;
      c.random_access_bytes = c.memory_efficiency = kNaN;
      c.transfer_bytes = c.transfer_s = c.fpga_total_s = c.region_speedup = c.workload_speedup = kNaN;
      out.push_back(std::move(c));
      continue;
    }
    c.intensity = c.bytes > 0 ? c.flops / c.bytes : 0.0;
    // The efficiency its bytes got overall: each op's own, weighted by its bytes.
    c.memory_efficiency = c.bytes > 0 && c.card_memory_s > 0 ? c.bytes / (c.card_memory_s * target.hbm_bytes_per_s)
                                                               : target.hbm_efficiency;
    // Weighted by GPU time; kernels of zero duration (all of them in a degenerate trace) weigh equally.
    c.memory_boundness = est_ns > 0 ? bound_w / est_ns : bound_n / estimated_ops;
    c.pattern_affinity = est_ns > 0 ? affinity_w / est_ns : affinity_n / estimated_ops;
    c.fits_on_chip = c.working_set_bytes <= target.sram_bytes;
    c.onchip_factor = onchip_factor(c.working_set_bytes, target.sram_bytes);
    c.card_latency_s = c.module_calls * target.call_latency_s;
    c.kept_gpu_s = kept_ns * 1e-9;
    c.card_time_s = op_time_s + c.card_latency_s + c.kept_gpu_s;
    if (options.inputs_cross_link && link > 0) {
      c.transfer_s = c.transfer_bytes / link + c.module_calls * 2.0 * target.transfer_latency_s;
    } else {
      c.transfer_bytes = 0;
    }
    c.fpga_total_s = c.card_time_s + c.transfer_s;
    const double gpu_s = c.gpu_time_ns * 1e-9;
    c.link_factor = link_factor(gpu_s, c.transfer_s);
    c.score = c.time_share * c.estimated_share * (0.25 + 0.75 * c.memory_boundness) * c.pattern_affinity *
              c.onchip_factor * c.link_factor;
    c.region_speedup = c.fpga_total_s > 0 ? gpu_s / c.fpga_total_s : 0.0;
    c.workload_speedup = amdahl_speedup(total_s, gpu_s, c.fpga_total_s);
    if (kept_ns > 0) {
      char pct[32];
      std::snprintf(pct, sizeof pct, "%.1f %%", 100.0 * kept_ns / c.gpu_time_ns);
      c.estimate_note = std::string(pct) + " of its GPU time kept at GPU speed (" + kept_why + ")";
    }
    out.push_back(std::move(c));
  }
  std::stable_sort(out.begin(), out.end(), [](const FpgaRegionCandidate& a, const FpgaRegionCandidate& b) {
    if (a.estimated != b.estimated) return a.estimated;
    return a.estimated ? a.score > b.score : a.gpu_time_ns > b.gpu_time_ns;
  });
  return out;
}

}  // namespace fpgaprof::analysis

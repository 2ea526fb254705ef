#include "fpgaprof/analysis/fpga_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "fpgaprof/error.hpp"

namespace fpgaprof::analysis {
namespace {

constexpr double kBram36Bits = 36.0 * 1024.0;   // one 36 Kb block RAM
constexpr double kUram288Bits = 288.0 * 1024.0; // one 288 Kb UltraRAM

std::vector<FpgaTarget> make_presets() {
  std::vector<FpgaTarget> out;
  {
    FpgaTarget t;
    t.name = "alveo-u55c";
    t.description = "AMD Alveo U55C: 16 GB HBM2 460 GB/s, 9,024 DSP48E2, 2,016 BRAM + 960 URAM, PCIe gen3 x16";
    t.hbm_bytes_per_s = 460e9;
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

double FpgaTarget::flops_per_s(Precision p) const {
  double per_fma = 0;
  switch (p) {
    case Precision::kFp64: case Precision::kFp64Tensor: per_fma = dsps_per_fma_fp64; break;
    case Precision::kFp32: case Precision::kTf32Tensor: per_fma = dsps_per_fma_fp32; break;
    default: per_fma = dsps_per_fma_fp16; break;
  }
  if (per_fma <= 0) return 0.0;
  return static_cast<double>(dsp_count) * dsp_utilization / per_fma * 2.0 * clock_hz;
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
  const auto fail = [&](const char* field, double v, const char* rule) {
    char value[32];
    std::snprintf(value, sizeof value, "%g", v);
    throw Error(ErrorKind::kInvalidArgument, who + field + " = " + value + " " + rule + fix);
  };
  if (t.name.empty())
    throw Error(ErrorKind::kInvalidArgument, "FPGA target without a name: give it one (name=\"my-card\")");
  const auto positive = [&](const char* field, double v, const char* what) {
    if (!(std::isfinite(v) && v > 0)) fail(field, v, what);
  };
  const auto share = [&](const char* field, double v) {
    if (!(std::isfinite(v) && v > 0 && v <= 1)) fail(field, v, "must be a share in (0, 1]");
  };
  const auto non_negative = [&](const char* field, double v, const char* what) {
    if (!(std::isfinite(v) && v >= 0)) fail(field, v, what);
  };
  positive("hbm_bytes_per_s", t.hbm_bytes_per_s, "must be the card's off-chip memory peak in bytes/s (> 0)");
  share("hbm_efficiency", t.hbm_efficiency);
  positive("sram_bytes", t.sram_bytes, "must be the card's on-chip RAM in bytes (> 0)");
  positive("dsp_count", static_cast<double>(t.dsp_count), "must be the card's DSP slice count (> 0)");
  positive("clock_hz", t.clock_hz, "must be the kernel clock in Hz (> 0)");
  share("dsp_utilization", t.dsp_utilization);
  non_negative("dsps_per_fma_fp64", t.dsps_per_fma_fp64, "must be >= 0 (0: no fp64)");
  non_negative("dsps_per_fma_fp32", t.dsps_per_fma_fp32, "must be >= 0 (0: no fp32)");
  non_negative("dsps_per_fma_fp16", t.dsps_per_fma_fp16, "must be >= 0 (0: no fp16)");
  if (t.dsps_per_fma_fp64 <= 0 && t.dsps_per_fma_fp32 <= 0 && t.dsps_per_fma_fp16 <= 0)
    throw Error(ErrorKind::kInvalidArgument,
                who + "dsps_per_fma_fp64/fp32/fp16 are all 0, so the card computes nothing; give the DSP "
                      "slices one FMA of at least one precision needs" + fix);
  positive("link_bytes_per_s", t.link_bytes_per_s, "must be the host link's one-direction peak in bytes/s (> 0)");
  share("link_efficiency", t.link_efficiency);
  non_negative("call_latency_s", t.call_latency_s, "must be a time in seconds (>= 0)");
  non_negative("transfer_latency_s", t.transfer_latency_s, "must be a time in seconds (>= 0)");
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

FpgaReport rank_fpga_candidates(const std::vector<OpCost>& ops, const RooflineReport& roofline,
                                const FpgaTarget& target, const FpgaOptions& options,
                                const std::vector<double>& host_bytes_per_op) {
  if (roofline.ops.size() != ops.size())
    throw Error(ErrorKind::kInvalidArgument, "roofline has " + std::to_string(roofline.ops.size()) +
                                                 " ops but " + std::to_string(ops.size()) +
                                                 " were given: pass the ops analyze_roofline used");
  if (!host_bytes_per_op.empty() && host_bytes_per_op.size() != ops.size())
    throw Error(ErrorKind::kInvalidArgument, "host_bytes_per_op needs one entry per op (or none)");
  validate_fpga_target(target);
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  FpgaReport report;
  report.target = target;
  report.gpu_kernel_ns = static_cast<double>(roofline.trace.time_ns);
  report.workload_ns = options.workload_ns > 0 ? options.workload_ns : report.gpu_kernel_ns;
  const double total_s = report.workload_ns * 1e-9;

  double link = target.host_link_bytes_per_s();
  if (options.gpu_link_bytes_per_s > 0) link = link > 0 ? std::min(link, options.gpu_link_bytes_per_s) : options.gpu_link_bytes_per_s;

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
    c.memory_boundness = c.ridge > 0 ? std::clamp(1.0 - c.intensity / c.ridge, 0.0, 1.0) : 0.5;
    c.working_set_bytes = op.working_set_bytes;
    c.fits_on_chip = op.working_set_bytes <= target.sram_bytes;
    c.onchip_factor = c.fits_on_chip ? 1.0 : 0.5 + 0.5 * target.sram_bytes / op.working_set_bytes;

    // Card roofline: the slower of compute and HBM streaming, plus a launch per execution.
    const double card_flops = target.flops_per_s(op.precision);
    const double card_mem = target.memory_bytes_per_s();
    c.card_compute_s = c.flops > 0 ? (card_flops > 0 ? c.flops / card_flops : 0.0) : 0.0;
    c.card_memory_s = c.bytes > 0 && card_mem > 0 ? c.bytes / card_mem : 0.0;
    c.card_latency_s = exec * target.call_latency_s;
    c.card_time_s = std::max(c.card_compute_s, c.card_memory_s) + c.card_latency_s;
    if (options.inputs_cross_link && link > 0) {
      c.transfer_bytes = c.bytes;
      c.transfer_s = c.transfer_bytes / link + exec * 2.0 * target.transfer_latency_s;
    }
    c.fpga_total_s = c.card_time_s + c.transfer_s;
    c.link_factor = c.fpga_total_s > 0 ? c.card_time_s / c.fpga_total_s : 0.0;
    c.score = c.time_share * (0.25 + 0.75 * c.memory_boundness) * c.pattern_affinity * c.onchip_factor * c.link_factor;
    const double gpu_s = c.gpu_time_ns * 1e-9;
    c.op_speedup = c.fpga_total_s > 0 ? gpu_s / c.fpga_total_s : 0.0;
    const double new_total = total_s - gpu_s + c.fpga_total_s;
    c.workload_speedup = new_total > 0 ? total_s / new_total : 0.0;
    if (card_flops <= 0 && c.flops > 0) {
      // The card cannot run this precision: never a candidate.
      c.score = 0;
      c.op_speedup = 0;
      c.workload_speedup = 1.0;
      c.estimate_note = std::string("the card has no DSP mapping for ") + precision_name(op.precision) +
                        " (dsps_per_fma is 0): not offloadable";
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

}  // namespace fpgaprof::analysis

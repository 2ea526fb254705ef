// The ranking of ops as offload candidates (rank_fpga_candidates: op_row, card_work, what_if,
// settle, combine), and what the op and region rankings share: the verdict, the ranking key,
// the score's factors (fpga_rank_common.hpp).
#include "fpgaprof/analysis/fpga_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "fpgaprof/analysis/attribution.hpp"
#include "fpgaprof/analysis/card_power.hpp"
#include "fpgaprof/analysis/region_paths.hpp"
#include "fpgaprof/analysis/transfer_analysis.hpp"
#include "fpgaprof/error.hpp"

#include "fpga_rank_common.hpp"

namespace fpgaprof::analysis {

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

const char* const kRestructuredOnchipBasis =
    "a designer's target: the on-chip parallelism of published HBM sparse designs (onchip_lanes: the typical "
    "design's at nominal, the best published design's at the fast end), not validated for this op's access "
    "pattern";

const char* restructured_basis(bool onchip, double random_bytes) {
  return onchip && random_bytes > 0 ? kRestructuredOnchipBasis : "";
}

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

namespace fpga_detail {

// The ranking: what offloading could change first, then GPU time, then score (NaN: lowest).
bool ranks_before(double save_a, double gpu_a, double score_a, double save_b, double gpu_b, double score_b) {
  if (save_a != save_b) return save_a > save_b;
  if (gpu_a != gpu_b) return gpu_a > gpu_b;
  const double sa = std::isnan(score_a) ? -1.0 : score_a, sb = std::isnan(score_b) ? -1.0 : score_b;
  return sa > sb;
}

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
          &c.restructured_region_speedup_high,
          &c.card_energy_j.low,
          &c.card_energy_j.nominal,
          &c.card_energy_j.high,
          &c.restructured_card_energy_j.low,
          &c.restructured_card_energy_j.nominal,
          &c.restructured_card_energy_j.high};
}

void set_nan(const std::vector<double*>& fields) {
  for (double* f : fields) *f = kNaN;
}

std::string no_gpu_time_note(uint64_t kernels) {
  return "not estimated: its " + std::to_string(kernels) +
         " kernel(s) have no GPU time (no timestamps: kernel replay for counters whose window could not be "
         "paired, or a full timestamp buffer; see the trace's warnings): trace again without counters to time them";
}

double timed_share(const RooflinePoint& rp, uint64_t timed, uint64_t kernels) {
  if (rp.timed_kernel_count == 0 || kernels == 0 || timed >= kernels) return 1.0;
  return static_cast<double>(timed) / static_cast<double>(kernels);
}

std::string partly_timed_note(double share, bool inside) {
  char pct[16];
  std::snprintf(pct, sizeof pct, "%.0f%%", 100.0 * share);
  return std::string(inside ? "the GPU time of an op inside covers " : "its GPU time covers ") + pct +
         " of its kernel runs (the others have no timestamps: counter replay); the card figures are for the same "
         "share of its executions";
}

}  // namespace fpga_detail

using namespace fpga_detail;  // NOLINT(google-build-using-namespace): this file defines them

namespace {

// The row of op `o` before any estimate: what the trace and the op say (its share of the
// kernels' time, pattern, ridge, the host bytes of one call).
FpgaCandidate op_row(uint32_t o, const OpCost& op, const RooflinePoint& rp, const FpgaTarget& target,
                     double gpu_kernel_ns, const std::vector<double>& host_bytes_per_op) {
  FpgaCandidate c;
  c.op_index = o;
  c.name = op.name;
  c.module = op.module;
  c.pattern = op.pattern;
  c.precision = op.precision;
  c.executions = rp.executions;
  c.costed_executions = static_cast<double>(rp.executions) * timed_share(rp, rp.timed_kernel_count, rp.kernel_count);
  c.kernel_count = rp.kernel_count;
  c.gpu_time_ns = static_cast<double>(rp.time_ns);
  c.time_share = gpu_kernel_ns > 0 ? c.gpu_time_ns / gpu_kernel_ns : 0.0;
  c.cost_known = op.cost_known;
  c.ridge = rp.ridge_flops_per_byte;
  c.pattern_affinity = pattern_affinity(op.pattern);
  c.sram_bytes = target.sram_bytes;
  const double exec = static_cast<double>(c.executions);
  c.host_bytes_per_call = host_bytes_per_op.empty() || exec <= 0 ? 0.0 : host_bytes_per_op[o] / exec;
  return c;
}

// The work of one execution on the card, into `w`: from the static cost, else a bound from the
// counters' measurements or the op's operands and results (false, the row noted as not
// estimated, when there is neither).
bool card_work(FpgaCandidate& c, const OpCost& op, const RooflinePoint& rp, const FpgaTarget& target,
               FpgaReport& report, CardWork& w) {
  const double exec = static_cast<double>(c.executions);
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
    return true;
  }
  // Without FLOPs and bytes the card time, the transfers and every factor built on them would
  // be invented (a custom call's operand bytes alone made a 10 ms solver look 14x faster on the
  // card): not estimated, not scored, kept out of the combined speedup. What the trace does
  // know still bounds it: the card time from below, the speedup from above.
  const std::string why = op.cost_unknown_reason.empty() ? std::string("static cost unknown") : op.cost_unknown_reason;
  const bool measured = rp.has_measured && rp.measured_coverage > 0 && rp.measured_bytes > 0 && exec > 0;
  report.not_estimated_count += 1;
  report.not_estimated_gpu_ns += c.gpu_time_ns;
  set_nan(not_estimated_fields(c));
  if ((!measured && !(op.bytes() > 0)) || !(exec > 0)) {
    c.estimate_note = "not estimated: no FLOP/byte count (" + why + ")";
    return false;
  }
  if (measured) {
    // The counters' FLOPs and DRAM bytes over the covered kernels, scaled to all of the op's
    // time, per execution; the operands and results are what crosses the link and what a
    // restructured design must read and write at least once.
    // (the op's time covers its timed executions only: per costed execution)
    const double scale = 1.0 / (rp.measured_coverage * c.costed_executions);
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
  // The arrays it reads and writes, from its HLO where the trace has it (the cost totals give
  // one of each).
  if (op.work.input_buffers + op.work.output_buffers > 0) {
    w.input_buffers = op.work.input_buffers;
    w.output_buffers = op.work.output_buffers;
  }
  report.bounded_count += 1;
  return true;
}

// A card that cannot run the op's precision: never a candidate.
void not_on_card(FpgaCandidate& c, const OpCardEstimate& as_compiled, const TimeRange& launches) {
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
}

// The card times (as compiled and restructured, with the launches), the totals with the
// transfers and the speedups of the op and of the workload.
void card_times(FpgaCandidate& c, const OpCardEstimate& as_compiled, const OpCardEstimate& restructured,
                const TimeRange& launches, const TimeRange& transfer, double total_s) {
  const double exec = c.costed_executions;
  const double gpu_s = c.gpu_time_ns * 1e-9;
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
  c.restructured_structure_dependent = restructured.structure_dependent;
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
}

// The what-if of one op whose work `w` is known (or bounded): its transfers, score, card times
// and speedups, and its scenario (a bound has none unless even its fast ends stay under 1).
void what_if(FpgaCandidate& c, const CardWork& w, const OpCost& op, const FpgaTarget& target,
             const FpgaOptions& options, double total_s, FpgaReport& report) {
  const double exec = c.costed_executions;
  c.stream_bytes = w.stream_bytes * exec;
  c.random_bytes = w.random_bytes() * exec;
  const OpCardEstimate as_compiled = estimate_op_on_card(w, op.precision, target, Scenario::kAsCompiled);
  const OpCardEstimate restructured =
      estimate_op_on_card(w, op.precision, target, Scenario::kRestructured, options.row_imbalance);
  const TimeRange launches =
      TimeRange{target.call_latency_s.low, target.call_latency_s.nominal, target.call_latency_s.high}.scaled(exec);
  const double gpu_s = c.gpu_time_ns * 1e-9;
  TimeRange transfer;
  if (options.inputs_cross_link) {
    c.transfer_bytes = (w.input_bytes + w.output_bytes) * exec;
    transfer =
        link_time(c.transfer_bytes, (w.input_buffers + w.output_buffers) * exec, target, options.gpu_link_bytes_per_s);
  }
  c.transfer_s = transfer.nominal;
  c.transfer_low_s = transfer.low;
  c.transfer_high_s = transfer.high;
  c.link_factor = link_factor(gpu_s, c.transfer_s);
  c.score = c.is_bound() ? kNaN
                         : c.time_share * (0.25 + 0.75 * c.memory_boundness) * c.pattern_affinity * c.onchip_factor *
                               c.link_factor;
  if (!as_compiled.estimated) {
    not_on_card(c, as_compiled, launches);
    return;
  }
  card_times(c, as_compiled, restructured, launches, transfer, total_s);
  if (c.is_bound()) {
    // Each time a lower bound at its corner, each speedup an upper bound; no verdict unless
    // even the fast ends stay under 1.
    const bool ruled_out = c.op_speedup_high < 1.0 && c.restructured_op_speedup_high < 1.0;
    c.scenario = ruled_out ? "neither" : "";
    if (ruled_out) {
      report.ruled_out_count += 1;
      report.ruled_out_gpu_ns += c.gpu_time_ns;
    }
    return;
  }
  c.scenario = offload_scenario(c.op_speedup, c.restructured_op_speedup);
  if (!as_compiled.note.empty()) c.estimate_note = as_compiled.note;
}

// What every row says once estimated: the verdict, what offloading could save, the basis of
// the restructured design, the card's joules where the card time is an estimate (not a bound)
// and the card's power is known, and those joules beside the GPU's (the energy verdict).
void settle(FpgaCandidate& c, const FpgaTarget& target, const GpuEnergyIndex& gpu_energy) {
  c.verdict = offload_verdict(c.scenario, c.is_bound());
  c.could_save_ns = could_save_ns(c.gpu_time_ns, c.op_speedup_high, c.restructured_op_speedup_high);
  c.restructured_basis = restructured_basis(c.restructured_onchip, c.random_bytes);
  const bool estimated = c.cost_known && !c.is_bound();
  const TimeRange none{kNaN, kNaN, kNaN};
  c.card_energy_j =
      card_energy_on(estimated ? TimeRange{c.card_time_low_s, c.card_time_s, c.card_time_high_s} : none, target);
  c.restructured_card_energy_j = card_energy_on(
      estimated ? TimeRange{c.restructured_card_time_low_s, c.restructured_card_time_s, c.restructured_card_time_high_s}
                : none,
      target);
  compare_energy(c, gpu_energy.op(c.op_index, c.gpu_time_ns), estimated, c.op_speedup_low, c.op_speedup_high,
                 c.restructured_op_speedup_low, c.restructured_op_speedup_high);
  // A precision the card lacks (speedups 0, no card time): it runs nothing, in time or energy.
  if (estimated && c.scenario == "neither" && std::isnan(c.card_time_s))
    c.energy_verdict = c.restructured_energy_verdict = "loses";
}

// The workload's speedup with every op that gains moved to the card together (as compiled,
// with its range, and restructured); ops without a static cost stay out.
// The workload's time is the larger of the wall time and the ops' summed GPU time: kernels on
// several streams or GPUs overlap, and the savings of ops that add up past the wall time would
// leave no time to speed up.
void combine(FpgaReport& report, double total_s) {
  double saved = 0, saved_low = 0, saved_high = 0, saved_restructured = 0, busy_s = 0;
  for (const FpgaCandidate& c : report.candidates) busy_s += c.gpu_time_ns * 1e-9;
  total_s = std::max(total_s, busy_s);
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
}

}  // namespace

// In steps: each op with kernels is a row (op_row) whose work on the card is known or bounded
// (card_work) and estimated (what_if); every row is then settled (verdict, what it could save,
// card joules beside the GPU's), the rows ranked by what offloading could change (docs/fpga-model.md, "Ranking":
// an op the model rules out changes nothing, one it cannot bound all of its GPU time), and the
// ops that gain combined.
FpgaReport rank_fpga_candidates(const std::vector<OpCost>& ops, const RooflineReport& roofline,
                                const FpgaTarget& target, const FpgaOptions& options,
                                const std::vector<double>& host_bytes_per_op) {
  require_same_ops(ops, roofline);
  if (!host_bytes_per_op.empty() && host_bytes_per_op.size() != ops.size())
    throw Error(ErrorKind::kInvalidArgument, "host_bytes_per_op needs one entry per op (or none)");
  validate_fpga_target(target);
  validate_row_imbalance(options.row_imbalance);
  FpgaReport report;
  report.target = target;
  report.row_imbalance = options.row_imbalance;
  report.gpu_kernel_ns = static_cast<double>(roofline.trace.time_ns);
  report.workload_ns = options.workload_ns > 0 ? options.workload_ns : report.gpu_kernel_ns;
  const double total_s = report.workload_ns * 1e-9;

  for (uint32_t o = 0; o < ops.size(); ++o) {
    const OpCost& op = ops[o];
    const RooflinePoint& rp = roofline.ops[o];
    if (rp.kernel_count == 0) continue;
    FpgaCandidate c = op_row(o, op, rp, target, report.gpu_kernel_ns, host_bytes_per_op);
    if (c.time_share < options.min_time_share) continue;
    // Kernels without GPU time (start = end = 0: kernel replay whose counter window could not be
    // paired, or a timestamp buffer that ran out): a speedup over 0 s would read as "0x".
    if (rp.time_ns == 0 && rp.measured_time_ns == 0) {
      c.cost_known = false;
      report.not_estimated_count += 1;
      set_nan(not_estimated_fields(c));
      c.estimate_note = no_gpu_time_note(rp.kernel_count);
    } else if (CardWork w; card_work(c, op, rp, target, report, w)) {
      what_if(c, w, op, target, options, total_s, report);
      if (const double share = timed_share(rp, rp.timed_kernel_count, rp.kernel_count); share < 1.0)
        c.estimate_note += (c.estimate_note.empty() ? "" : "; ") + partly_timed_note(share, false);
    }
    report.candidates.push_back(std::move(c));
  }
  const GpuEnergyIndex gpu_energy(options.energy, ops.size(), nullptr);
  for (FpgaCandidate& c : report.candidates) settle(c, target, gpu_energy);
  std::stable_sort(
      report.candidates.begin(), report.candidates.end(), [](const FpgaCandidate& a, const FpgaCandidate& b) {
        return ranks_before(a.could_save_ns, a.gpu_time_ns, a.score, b.could_save_ns, b.gpu_time_ns, b.score);
      });
  combine(report, total_s);
  return report;
}

}  // namespace fpgaprof::analysis

// Internal to the FPGA model's source files (fpga_ranking.cpp, fpga_regions.cpp): the pieces the
// op and region rankings share. Not part of the public API (fpga_model.hpp).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "fpgaprof/analysis/fpga_model.hpp"
#include "fpgaprof/analysis/region_paths.hpp"

namespace fpgaprof::analysis::fpga_detail {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The ranking: what offloading could change first, then GPU time, then score (NaN: lowest).
bool ranks_before(double save_a, double gpu_a, double score_a, double save_b, double gpu_b, double score_b);
// clamp(1 - intensity / ridge, 0, 1); 0.5 when the ridge is unknown.
double memory_boundness(double intensity, double ridge);
// Amdahl: the workload's time T with the GPU time replaced by the card's. Kernels on several
// streams can sum to more than T; at most T of the workload can be saved.
double amdahl_speedup(double total_s, double gpu_s, double fpga_total_s);
// Throws Error(kInvalidArgument) unless `roofline` has one row per op.
void require_same_ops(const std::vector<OpCost>& ops, const RooflineReport& roofline);
// 1 when the working set fits on chip, else 0.5 + 0.5 x sram / working set.
double onchip_factor(double working_set_bytes, double sram_bytes);
// The host link's cost against what the op (or region) costs on the GPU today. It must not use
// the card's time: card_time / (card_time + transfer) grew when the card got slower.
double link_factor(double gpu_s, double transfer_s);
// What one execution of an op asks of the card: from its HLO when the trace has it, else from
// the cost totals (every byte streamed).
CardWork work_of(const OpCost& op);
double safe_ratio(double a, double b);
// The fields of a row that have no value when it is not estimated.
std::vector<double*> not_estimated_fields(FpgaCandidate& c);
std::vector<double*> not_estimated_fields(FpgaRegionCandidate& c);
void set_nan(const std::vector<double*>& fields);
// The note of a row whose kernels have no GPU time.
std::string no_gpu_time_note(uint64_t kernels);
// The share of `kernels` launches of op `rp` (all its launches, or those inside a region) of
// which `timed` have a duration: 1 unless a counter replay left some of them without
// timestamps, and 1 for an op the roofline did not count timed kernels of (none timed
// anywhere). The card figures cover this share of its executions.
double timed_share(const RooflinePoint& rp, uint64_t timed, uint64_t kernels);
// The note of an op (inside: of a region, for an op in it) whose GPU time covers only `share`
// (< 1) of its kernel runs.
std::string partly_timed_note(double share, bool inside);

// The GPU joules a candidate is compared with and the sampled share of its time; both NaN when
// unknown (fpga_energy.cpp).
struct GpuJoules {
  double joules = kNaN;
  double coverage = kNaN;
  bool known() const { return joules > 0 && coverage > 0; }
};
// FpgaOptions::energy looked up by op index and by region path index (built once per ranking).
class GpuEnergyIndex {
 public:
  // `energy` nullptr or not measured: every lookup unknown. `paths`: the grouping of the region
  // rows (nullptr: no path lookups), the one the energy analysis grouped by.
  GpuEnergyIndex(const EnergyReport* energy, std::size_t op_count, const RegionPaths* paths);
  // The op's attributed joules; coverage = its busy time in sampled intervals / gpu_time_ns.
  GpuJoules op(uint32_t op, double gpu_time_ns) const;
  // The attributed joules of the path's kernels (its sub-paths' included), the ops' attribution
  // (not the path's measured window); coverage = their busy time in sampled intervals /
  // gpu_time_ns.
  GpuJoules path(uint32_t path, double gpu_time_ns) const;
  // The attributed joules of op `op`'s kernels (kNone32: kernels without an op) in the path and
  // its sub-paths; 0 when none were sampled.
  double path_op_joules(uint32_t path, uint32_t op) const;
  // The sampled busy time of those kernels (0 when none were sampled), and of all the path's.
  uint64_t path_op_busy_ns(uint32_t path, uint32_t op) const;
  uint64_t path_busy_ns(uint32_t path) const;

 private:
  // A row's joules and the part of its GPU time they cover; unknown without sampled busy time.
  static GpuJoules busy_joules(double joules, uint64_t busy_ns, double gpu_time_ns);

  std::vector<double> op_joules_;  // NaN: no energy attributed
  std::vector<uint64_t> op_busy_ns_;
  std::vector<double> path_joules_;  // with path_busy_ns_ 0: no kernel energy in the path
  std::vector<uint64_t> path_busy_ns_;
  std::unordered_map<uint64_t, double> path_op_joules_;  // pair_key(path, op), sub-paths included
  std::unordered_map<uint64_t, uint64_t> path_op_busy_ns_;
};
// Card x coverage (plus the GPU joules of the work the row keeps on the GPU) / GPU joules at
// each end of the card's range; NaN when either is unknown. kept_joules: measured like the
// row's GPU joules (over its sampled part), so it is added as it is. card_coverage: the sampled
// share of the GPU time of the work the card would take (a region's kernels less the kept
// ones); NaN: gpu.coverage (no kept work); 0: NaN (none of the card's work was sampled).
EnergyRange energy_ratio(const EnergyRange& card, const GpuJoules& gpu, double kept_joules = 0,
                         double card_coverage = kNaN);
// A row's GPU energy, its ratios and its verdicts from its speedup ranges (either row type).
// kept_joules: the GPU joules of the work the row keeps on the GPU (a region's kept kernels;
// their time is in its card time, their energy stays the GPU's).
template <class Row>
void compare_energy(Row& c, const GpuJoules& gpu, bool estimated, double speedup_low, double speedup_high,
                    double restructured_speedup_low, double restructured_speedup_high, double kept_joules = 0,
                    double card_coverage = kNaN) {
  // Unknown GPU energy is null, never 0 (a sampled window that carried no joules says nothing).
  c.gpu_energy_j = gpu.known() ? gpu.joules : kNaN;
  c.gpu_energy_coverage = gpu.known() ? gpu.coverage : kNaN;
  c.energy_ratio = energy_ratio(c.card_energy_j, gpu, kept_joules, card_coverage);
  c.restructured_energy_ratio = energy_ratio(c.restructured_card_energy_j, gpu, kept_joules, card_coverage);
  // The work the card would take has no sampled GPU joules: nothing to compare it with.
  const bool compared = gpu.known() && !(card_coverage == 0);
  c.energy_verdict =
      time_energy_verdict(estimated, speedup_low, speedup_high, compared, c.energy_ratio.low, c.energy_ratio.high);
  c.restructured_energy_verdict =
      time_energy_verdict(estimated, restructured_speedup_low, restructured_speedup_high, compared,
                          c.restructured_energy_ratio.low, c.restructured_energy_ratio.high);
}

}  // namespace fpgaprof::analysis::fpga_detail

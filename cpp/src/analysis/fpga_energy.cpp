// The GPU's joules beside the card's for the FPGA rankings (docs/fpga-model.md, "Energy
// verdict"): per op candidate and per region path the energy analysis' attribution (a path's
// kernels); the card / GPU energy ratio of each scenario and the verdict of time and energy
// together.
#include <algorithm>
#include <cmath>

#include "fpga_rank_common.hpp"

namespace fpgaprof::analysis {

std::string time_energy_verdict(bool estimated, double speedup_low, double speedup_high, bool gpu_energy_known,
                                double ratio_low, double ratio_high) {
  if (!estimated || std::isnan(speedup_low) || std::isnan(speedup_high)) return "unknown: not estimated";
  if (!gpu_energy_known) return "unknown: no GPU energy";
  if (std::isnan(ratio_low) || std::isnan(ratio_high)) return "unknown: no card energy";
  if (speedup_low > 1.0) return "gains";
  if (ratio_high < 1.0) return "wins only on energy";
  if (speedup_high <= 1.0 && ratio_low >= 1.0) return "loses";
  return "uncertain";
}

namespace fpga_detail {

GpuEnergyIndex::GpuEnergyIndex(const EnergyReport* energy, std::size_t op_count, const RegionPaths* paths) {
  if (energy == nullptr || !energy->measured) return;
  op_joules_.assign(op_count, kNaN);
  op_busy_ns_.assign(op_count, 0);
  for (const OpEnergy& o : energy->ops) {
    if (o.op >= op_count) continue;
    op_joules_[o.op] = o.joules;
    op_busy_ns_[o.op] = o.busy_ns;
  }
  if (paths == nullptr) return;
  path_joules_.assign(paths->size(), 0.0);  // unknown where no busy time was sampled (busy_joules)
  path_busy_ns_.assign(paths->size(), 0);
  for (const PathOpEnergy& e : energy->path_op_kernels) {
    // Inclusive, as the region rows count kernels: each row also counts for the enclosing paths.
    paths->for_self_and_ancestors(e.path, [&](uint32_t q) {
      path_joules_[q] += e.joules;
      path_busy_ns_[q] += e.busy_ns;
      path_op_joules_[(static_cast<uint64_t>(q) << 32) | e.op] += e.joules;
      path_op_busy_ns_[(static_cast<uint64_t>(q) << 32) | e.op] += e.busy_ns;
    });
  }
}

GpuJoules GpuEnergyIndex::busy_joules(double joules, uint64_t busy_ns, double gpu_time_ns) {
  if (std::isnan(joules) || busy_ns == 0 || !(gpu_time_ns > 0)) return {};
  return {joules, std::min(1.0, static_cast<double>(busy_ns) / gpu_time_ns)};
}

GpuJoules GpuEnergyIndex::op(uint32_t op, double gpu_time_ns) const {
  if (op >= op_joules_.size()) return {};
  return busy_joules(op_joules_[op], op_busy_ns_[op], gpu_time_ns);
}

GpuJoules GpuEnergyIndex::path(uint32_t path, double gpu_time_ns) const {
  if (path >= path_joules_.size()) return {};
  return busy_joules(path_joules_[path], path_busy_ns_[path], gpu_time_ns);
}

double GpuEnergyIndex::path_op_joules(uint32_t path, uint32_t op) const {
  const auto it = path_op_joules_.find((static_cast<uint64_t>(path) << 32) | op);
  return it != path_op_joules_.end() ? it->second : 0.0;
}

uint64_t GpuEnergyIndex::path_op_busy_ns(uint32_t path, uint32_t op) const {
  const auto it = path_op_busy_ns_.find((static_cast<uint64_t>(path) << 32) | op);
  return it != path_op_busy_ns_.end() ? it->second : 0;
}

uint64_t GpuEnergyIndex::path_busy_ns(uint32_t path) const {
  return path < path_busy_ns_.size() ? path_busy_ns_[path] : 0;
}

EnergyRange energy_ratio(const EnergyRange& card, const GpuJoules& gpu, double kept_joules, double card_coverage) {
  const double cov = std::isnan(card_coverage) ? gpu.coverage : card_coverage;
  if (!gpu.known() || std::isnan(card.nominal) || !(cov > 0)) return {kNaN, kNaN, kNaN};
  const auto ratio = [&](double card_j) { return (card_j * cov + kept_joules) / gpu.joules; };
  return {ratio(card.low), ratio(card.nominal), ratio(card.high)};
}

}  // namespace fpga_detail

}  // namespace fpgaprof::analysis

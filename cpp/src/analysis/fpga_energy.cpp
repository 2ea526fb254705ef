// The GPU's joules beside the card's for the FPGA rankings (docs/fpga-model.md, "Energy
// verdict"): per op candidate the energy analysis' attribution, per region path its measured
// windows; the card / GPU energy ratio of each scenario and the verdict of time and energy
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

GpuEnergyIndex::GpuEnergyIndex(const EnergyReport* energy, std::size_t op_count, std::size_t path_count) {
  if (energy == nullptr || !energy->measured) return;
  op_joules_.assign(op_count, kNaN);
  op_busy_ns_.assign(op_count, 0);
  for (const OpEnergy& o : energy->ops) {
    if (o.op >= op_count) continue;
    op_joules_[o.op] = o.joules;
    op_busy_ns_[o.op] = o.busy_ns;
  }
  path_joules_.assign(path_count, 0.0);
  path_duration_ns_.assign(path_count, 0);
  path_coverage_ns_.assign(path_count, 0);
  for (const auto& [p, w] : energy->region_paths) {
    if (p >= path_count) continue;
    path_joules_[p] += w.joules;
    path_duration_ns_[p] += w.duration_ns;
    path_coverage_ns_[p] += w.coverage_ns;
  }
}

GpuJoules GpuEnergyIndex::op(uint32_t op, double gpu_time_ns) const {
  if (op >= op_joules_.size() || std::isnan(op_joules_[op]) || op_busy_ns_[op] == 0 || !(gpu_time_ns > 0)) return {};
  return {op_joules_[op], std::min(1.0, static_cast<double>(op_busy_ns_[op]) / gpu_time_ns)};
}

GpuJoules GpuEnergyIndex::path(uint32_t path) const {
  if (path >= path_joules_.size() || path_coverage_ns_[path] == 0 || path_duration_ns_[path] == 0) return {};
  return {path_joules_[path],
          std::min(1.0, static_cast<double>(path_coverage_ns_[path]) / static_cast<double>(path_duration_ns_[path]))};
}

EnergyRange energy_ratio(const EnergyRange& card, const GpuJoules& gpu) {
  if (!gpu.known() || std::isnan(card.nominal)) return {kNaN, kNaN, kNaN};
  const double k = gpu.coverage / gpu.joules;
  return {card.low * k, card.nominal * k, card.high * k};
}

}  // namespace fpga_detail

}  // namespace fpgaprof::analysis

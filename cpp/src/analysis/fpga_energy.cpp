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

GpuEnergyIndex::GpuEnergyIndex(const EnergyReport* energy, std::size_t op_count, std::size_t path_count) {
  if (energy == nullptr || !energy->measured) return;
  op_joules_.assign(op_count, kNaN);
  op_busy_ns_.assign(op_count, 0);
  for (const OpEnergy& o : energy->ops) {
    if (o.op >= op_count) continue;
    op_joules_[o.op] = o.joules;
    op_busy_ns_[o.op] = o.busy_ns;
  }
  path_joules_.assign(path_count, kNaN);
  path_busy_ns_.assign(path_count, 0);
  for (const PathKernelEnergy& p : energy->region_path_kernels) {
    if (p.path >= path_count) continue;
    path_joules_[p.path] = p.joules;
    path_busy_ns_[p.path] = p.busy_ns;
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

EnergyRange energy_ratio(const EnergyRange& card, const GpuJoules& gpu) {
  if (!gpu.known() || std::isnan(card.nominal)) return {kNaN, kNaN, kNaN};
  const double k = gpu.coverage / gpu.joules;
  return {card.low * k, card.nominal * k, card.high * k};
}

}  // namespace fpga_detail

}  // namespace fpgaprof::analysis

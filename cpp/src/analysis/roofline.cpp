#include "fpgaprof/analysis/roofline.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <string_view>

#include "fpgaprof/analysis/region_locator.hpp"
#include "fpgaprof/error.hpp"

namespace fpgaprof::analysis {
namespace {

struct Acc {
  uint64_t count = 0;
  uint64_t timed_count = 0;  // kernels with a duration: the mean kernel duration is over these
  uint64_t time_ns = 0;
  uint64_t known_ns = 0;
  double blocks = 0;
  double flops = 0;
  double bytes = 0;
  // The cost of the known-cost kernels that have a time: achieved rates divide it by known_ns
  // (a kernel without timestamps adds its cost to flops and bytes, not its time).
  double timed_flops = 0, timed_bytes = 0;
  uint64_t measured_count = 0;
  uint64_t measured_ns = 0;
  double measured_blocks = 0;
  double measured_flops = 0;
  double measured_bytes = 0;
  uint64_t lower_bound_ns = 0;  // kernels of ops without a cost: their operands + results only
  double lower_bound_bytes = 0;
  std::array<uint64_t, kPrecisionCount> precision_ns{};

  void add(uint64_t ns, double blocks_, double f, double b, bool known, Precision p, const MeasuredKernel* m) {
    count += 1;
    if (ns > 0) timed_count += 1;
    time_ns += ns;
    blocks += blocks_;
    if (known) {
      known_ns += ns;
      flops += f;
      bytes += b;
      if (ns > 0) {
        timed_flops += f;
        timed_bytes += b;
      }
      precision_ns[static_cast<std::size_t>(p)] += ns;
    } else if (b > 0) {
      lower_bound_ns += ns;
      lower_bound_bytes += b;
    }
    if (m != nullptr && m->has) {
      measured_count += 1;
      measured_ns += ns;
      measured_blocks += blocks_;
      measured_flops += m->flops;
      measured_bytes += m->dram_bytes;
    }
  }
  void merge(const Acc& o) {
    count += o.count;
    timed_count += o.timed_count;
    time_ns += o.time_ns;
    known_ns += o.known_ns;
    blocks += o.blocks;
    flops += o.flops;
    bytes += o.bytes;
    timed_flops += o.timed_flops;
    timed_bytes += o.timed_bytes;
    lower_bound_ns += o.lower_bound_ns;
    lower_bound_bytes += o.lower_bound_bytes;
    measured_count += o.measured_count;
    measured_ns += o.measured_ns;
    measured_blocks += o.measured_blocks;
    measured_flops += o.measured_flops;
    measured_bytes += o.measured_bytes;
    for (std::size_t i = 0; i < kPrecisionCount; ++i) precision_ns[i] += o.precision_ns[i];
  }
  Precision dominant() const {
    std::size_t best = static_cast<std::size_t>(Precision::kFp32);
    for (std::size_t i = 0; i < kPrecisionCount; ++i)
      if (precision_ns[i] > precision_ns[best]) best = i;
    return static_cast<Precision>(best);
  }
};

// Roof, percent and bound of one (flops, bytes, seconds) triple.
void fill_roof(double flops, double bytes, double seconds, Precision p, const Ceilings& c, double& intensity,
               double& roof, double& percent) {
  intensity = bytes > 0 ? flops / bytes : 0.0;
  const double peak = c.flops_for(p);
  roof = peak;
  if (bytes > 0 && c.dram_bytes_per_s > 0 && peak > 0) roof = std::min(peak, intensity * c.dram_bytes_per_s);
  percent = 0.0;
  if (seconds <= 0) return;
  if (flops > 0 && roof > 0) {
    percent = 100.0 * (flops / seconds) / roof;
  } else if (bytes > 0 && c.dram_bytes_per_s > 0) {
    percent = 100.0 * (bytes / seconds) / c.dram_bytes_per_s;
  }
}

Bound bound_of(double flops, double bytes, double intensity, double percent, double mean_ns, uint64_t mean_blocks,
               Precision p, const Ceilings& c, uint32_t sm_count, const RooflineOptions& o) {
  if (mean_ns <= 0) return Bound::kUnknown;
  if (mean_ns < static_cast<double>(o.latency_kernel_ns)) return Bound::kLatency;
  if (flops <= 0 && bytes <= 0) return Bound::kUnknown;
  if (sm_count > 0 && mean_blocks > 0 &&
      static_cast<double>(mean_blocks) < o.tiny_grid_fraction * static_cast<double>(sm_count) &&
      percent < o.tiny_grid_percent)
    return Bound::kLatency;
  const double ridge = c.ridge_flops_per_byte(p);
  if (flops <= 0) return Bound::kMemory;
  if (ridge <= 0) return Bound::kUnknown;
  return intensity < ridge ? Bound::kMemory : Bound::kCompute;
}

RooflinePoint finish(const Acc& a, uint64_t executions, Precision p, const Ceilings& c, uint32_t sm_count,
                     const RooflineOptions& o) {
  RooflinePoint r;
  r.kernel_count = a.count;
  r.timed_kernel_count = a.timed_count;
  r.executions = executions;
  r.time_ns = a.time_ns;
  r.mean_blocks = a.count ? static_cast<uint64_t>(a.blocks / static_cast<double>(a.count)) : 0;
  r.flops = a.flops;
  r.bytes = a.bytes;
  r.cost_coverage = a.time_ns ? static_cast<double>(a.known_ns) / static_cast<double>(a.time_ns) : 0.0;
  r.lower_bound_bytes = a.lower_bound_bytes;
  r.lower_bound_bytes_per_s =
      a.lower_bound_ns > 0 ? a.lower_bound_bytes / (static_cast<double>(a.lower_bound_ns) * 1e-9) : 0.0;
  r.precision = c.effective_precision(p);
  r.ridge_flops_per_byte = c.ridge_flops_per_byte(p);
  // Achieved rates over the time of the kernels whose cost is known, so unattributed kernels
  // in a region do not dilute the rate of the attributed ones; of those kernels, the cost of
  // the timed ones only (a kernel without timestamps would add work done in no time).
  const double seconds = static_cast<double>(a.known_ns) * 1e-9;
  if (seconds > 0) {
    r.achieved_flops_per_s = a.timed_flops / seconds;
    r.achieved_bytes_per_s = a.timed_bytes / seconds;
  }
  fill_roof(a.flops, a.bytes, 0.0, p, c, r.intensity, r.roof_flops_per_s, r.percent_of_roof);
  double timed_intensity = 0, timed_roof = 0;
  fill_roof(a.timed_flops, a.timed_bytes, seconds, p, c, timed_intensity, timed_roof, r.percent_of_roof);
  r.bound =
      bound_of(a.flops, a.bytes, r.intensity, r.percent_of_roof, r.mean_kernel_ns(), r.mean_blocks, p, c, sm_count, o);
  if (a.measured_count > 0) {
    r.has_measured = true;
    r.measured_kernel_count = a.measured_count;
    r.measured_time_ns = a.measured_ns;
    r.measured_coverage = a.time_ns ? static_cast<double>(a.measured_ns) / static_cast<double>(a.time_ns) : 0.0;
    r.measured_flops = a.measured_flops;
    r.measured_bytes = a.measured_bytes;
    // Rates, mean duration and grid of the kernels that have counters only: counters missing
    // for the others (past the counter image, paused) would otherwise dilute the rate.
    const double measured_count = static_cast<double>(a.measured_count);
    const double mean_ns = static_cast<double>(a.measured_ns) / measured_count;
    const auto mean_blocks = static_cast<uint64_t>(a.measured_blocks / measured_count);
    double roof = 0;
    fill_roof(a.measured_flops, a.measured_bytes, static_cast<double>(a.measured_ns) * 1e-9, p, c, r.measured_intensity,
              roof, r.measured_percent_of_roof);
    r.measured_bound = bound_of(a.measured_flops, a.measured_bytes, r.measured_intensity, r.measured_percent_of_roof,
                                mean_ns, mean_blocks, p, c, sm_count, o);
  }
  return r;
}

enum class Role : uint8_t { kNone, kDramRead, kDramWrite, kAdd, kMul, kFma, kDuration };

Role role_of(std::string_view m) {
  const auto has = [&](std::string_view s) { return m.find(s) != std::string_view::npos; };
  if (has("dram__bytes_read") || has("dram__bytes_op_read")) return Role::kDramRead;
  if (has("dram__bytes_write") || has("dram__bytes_op_write")) return Role::kDramWrite;
  if (has("gpu__time_duration")) return Role::kDuration;
  // Tensor-pipe instruction counts cannot be turned into FLOPs without the MMA shape: not FLOPs.
  if (has("pipe_tensor") || has("tensor_op")) return Role::kNone;
  if (has("_op_ffma") || has("_op_dfma") || has("_op_hfma")) return Role::kFma;
  if (has("_op_fadd") || has("_op_dadd") || has("_op_hadd")) return Role::kAdd;
  if (has("_op_fmul") || has("_op_dmul") || has("_op_hmul")) return Role::kMul;
  return Role::kNone;
}

}  // namespace

const char* bound_name(Bound b) {
  switch (b) {
    case Bound::kMemory: return "memory";
    case Bound::kCompute: return "compute";
    case Bound::kLatency: return "latency";
    default: return "unknown";
  }
}

const char* cost_basis_name(const OpCost& op, const RooflinePoint& point) {
  if (op.cost_from_author) return "author";
  if (op.cost_known) return "static";
  return point.has_measured ? "measured" : "lower bound";
}

std::vector<MeasuredKernel> measured_kernels(const TraceStore& store) {
  std::vector<MeasuredKernel> out;
  if (store.counters.empty()) return out;
  out.resize(store.kernels.size());
  std::vector<Role> roles(store.strings.size(), Role::kNone);
  std::vector<bool> seen(store.strings.size(), false);
  for (const CounterRecord& c : store.counters) {
    if (c.kernel_index >= out.size() || c.metric >= roles.size()) continue;
    if (!seen[c.metric]) {
      roles[c.metric] = role_of(store.strings.get(c.metric));
      seen[c.metric] = true;
    }
    MeasuredKernel& k = out[c.kernel_index];
    switch (roles[c.metric]) {
      case Role::kDramRead:
      case Role::kDramWrite:
        k.dram_bytes += c.value;
        k.has = true;
        break;
      case Role::kAdd:
      case Role::kMul:
        k.flops += c.value;
        k.has = true;
        break;
      case Role::kFma:
        k.flops += 2.0 * c.value;
        k.has = true;
        break;
      case Role::kDuration: k.duration_ns = c.value; break;
      default: break;
    }
  }
  return out;
}

Bound classify(const RooflinePoint& p, const Ceilings& ceilings, uint32_t sm_count, const RooflineOptions& options) {
  return bound_of(p.flops, p.bytes, p.intensity, p.percent_of_roof, p.mean_kernel_ns(), p.mean_blocks, p.precision,
                  ceilings, sm_count, options);
}

RooflineReport analyze_roofline(const TraceStore& store, const Ceilings& ceilings, const std::vector<OpCost>& ops,
                                const std::vector<uint32_t>& op_of_kernel, const RooflineOptions& options) {
  const auto& kernels = store.kernels;
  if (!op_of_kernel.empty() && op_of_kernel.size() != kernels.size())
    throw Error(ErrorKind::kInvalidArgument, "op_of_kernel has " + std::to_string(op_of_kernel.size()) +
                                                 " entries for " + std::to_string(kernels.size()) +
                                                 " kernels: pass one op index per kernel or none");
  const bool attributed = !op_of_kernel.empty();
  const uint32_t sm_count = store.devices.empty() ? 0 : store.devices.front().sm_count;

  // Pass 1: per op kernel count and executions (distinct consecutive NVTX thunk ranges).
  std::vector<uint64_t> op_kernels(ops.size(), 0), op_ranges(ops.size(), 0);
  std::vector<uint32_t> op_last_marker(ops.size(), kNone32);
  std::vector<bool> op_all_marked(ops.size(), true);
  if (attributed) {
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      const uint32_t op = op_of_kernel[i];
      if (op == kNone32) continue;
      if (op >= ops.size())
        throw Error(ErrorKind::kInvalidArgument, "op_of_kernel[" + std::to_string(i) + "] = " + std::to_string(op) +
                                                     " but only " + std::to_string(ops.size()) + " ops were given");
      op_kernels[op] += 1;
      const uint32_t mk = kernels[i].marker_index;
      if (mk == kNone32) {
        op_all_marked[op] = false;
      } else if (mk != op_last_marker[op]) {
        op_ranges[op] += 1;
        op_last_marker[op] = mk;
      }
    }
  }
  std::vector<uint64_t> executions(ops.size(), 0);
  std::vector<double> flops_per_kernel(ops.size(), 0), bytes_per_kernel(ops.size(), 0);
  for (std::size_t o = 0; o < ops.size(); ++o) {
    executions[o] = ops[o].executions                        ? ops[o].executions
                    : (op_all_marked[o] && op_ranges[o] > 0) ? op_ranges[o]
                                                             : op_kernels[o];
    if (op_kernels[o] > 0) {
      const double share = static_cast<double>(executions[o]) / static_cast<double>(op_kernels[o]);
      flops_per_kernel[o] = ops[o].flops * share;
      bytes_per_kernel[o] = ops[o].bytes() * share;
    }
  }

  const std::vector<MeasuredKernel> measured = measured_kernels(store);
  const bool by_path = options.region_rows == RegionRows::kPaths;
  RegionPaths own_paths;
  const RegionPaths& paths =
      RegionPaths::select(store, options.region_paths, by_path, own_paths, "RooflineOptions::region_paths");

  RooflineReport report;
  report.ceilings = ceilings;
  // Per kernel, only three accumulators are touched (its op, its name, its innermost region
  // or region path); the trace and the enclosing regions (paths) are summed afterwards.
  Acc unattributed_acc;
  std::vector<Acc> op_acc(ops.size()), region_acc(by_path ? paths.size() : store.regions.size()),
      name_acc(store.strings.size());
  if (options.per_kernel) report.kernels.resize(kernels.size());
  // Per-op constants of the per-kernel rows: the roof depends on the op's intensity only.
  std::vector<double> op_roof(ops.size(), 0), op_intensity(ops.size(), 0);
  std::vector<Bound> op_class(ops.size(), Bound::kUnknown);
  std::vector<Precision> op_precision(ops.size(), Precision::kFp32);
  for (std::size_t o = 0; o < ops.size(); ++o) {
    double percent = 0;
    fill_roof(flops_per_kernel[o], bytes_per_kernel[o], 0.0, ops[o].precision, ceilings, op_intensity[o], op_roof[o],
              percent);
    op_precision[o] = ceilings.effective_precision(ops[o].precision);
    const double ridge = ceilings.ridge_flops_per_byte(ops[o].precision);
    op_class[o] = !ops[o].cost_known || (flops_per_kernel[o] <= 0 && bytes_per_kernel[o] <= 0) ? Bound::kUnknown
                  : flops_per_kernel[o] <= 0                                                   ? Bound::kMemory
                  : ridge <= 0                                                                 ? Bound::kUnknown
                  : op_intensity[o] < ridge                                                    ? Bound::kMemory
                                                                                               : Bound::kCompute;
  }
  const double tiny_blocks = sm_count > 0 ? options.tiny_grid_fraction * static_cast<double>(sm_count) : 0.0;

  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const KernelRecord& k = kernels[i];
    const uint64_t ns = k.duration_ns();
    const double blocks = static_cast<double>(store.launch_config_of(k).blocks());
    const uint32_t op = attributed ? op_of_kernel[i] : kNone32;
    const bool known = op != kNone32 && ops[op].cost_known;
    const double f = known ? flops_per_kernel[op] : 0.0;
    // An op without a cost still moves at least its operands and results: kept apart as a bound.
    const double b = op != kNone32 ? bytes_per_kernel[op] : 0.0;
    const Precision p = op != kNone32 ? ops[op].precision : Precision::kFp32;
    const MeasuredKernel* m = measured.empty() ? nullptr : &measured[i];
    if (op != kNone32) {
      op_acc[op].add(ns, blocks, f, b, known, p, m);
    } else {
      unattributed_acc.add(ns, blocks, f, b, known, p, m);
      report.unattributed_kernels += 1;
      report.unattributed_ns += ns;
    }
    if (k.name < name_acc.size()) name_acc[k.name].add(ns, blocks, f, b, known, p, m);
    const uint32_t region = by_path ? paths.path_of(k.region_index) : k.region_index;
    if (region < region_acc.size()) region_acc[region].add(ns, blocks, f, b, known, p, m);
    if (options.per_kernel) {
      KernelRoofline& kr = report.kernels[i];
      kr.flops = static_cast<float>(f);
      kr.bytes = static_cast<float>(known ? b : 0.0);
      kr.precision = op != kNone32 ? op_precision[op] : ceilings.effective_precision(p);
      double percent = 0;
      if (known && ns > 0) {
        const double per_s = 1e9 / static_cast<double>(ns);
        kr.achieved_flops_per_s = static_cast<float>(f * per_s);
        kr.achieved_bytes_per_s = static_cast<float>(b * per_s);
        if (f > 0 && op_roof[op] > 0)
          percent = 100.0 * f * per_s / op_roof[op];
        else if (b > 0 && ceilings.dram_bytes_per_s > 0)
          percent = 100.0 * b * per_s / ceilings.dram_bytes_per_s;
        kr.percent_of_roof = static_cast<float>(percent);
      }
      if (ns == 0)
        kr.bound = Bound::kUnknown;
      else if (ns < options.latency_kernel_ns)
        kr.bound = Bound::kLatency;
      else if (!known)
        kr.bound = Bound::kUnknown;
      else if (blocks > 0 && blocks < tiny_blocks && percent < options.tiny_grid_percent &&
               op_class[op] != Bound::kUnknown)
        kr.bound = Bound::kLatency;
      else
        kr.bound = op_class[op];
    }
  }

  Acc trace_acc = unattributed_acc;
  for (const Acc& a : op_acc) trace_acc.merge(a);
  // Inclusive regions: children (deeper first) add their totals to their parent.
  if (by_path) {
    // A path's parent has a smaller id: from the last id down, children come first.
    for (std::size_t p = region_acc.size(); p-- > 0;) {
      const uint32_t parent = paths.parent(static_cast<uint32_t>(p));
      if (parent != kNone32 && parent < p) region_acc[parent].merge(region_acc[p]);
    }
  } else {
    const RegionLocator locator(store.regions);
    std::vector<uint32_t> depth(region_acc.size(), 0);
    for (uint32_t r = 0; r < region_acc.size(); ++r) {
      uint32_t d = 0;
      for (uint32_t q = locator.parent(r); q != kNone32 && d <= region_acc.size(); q = locator.parent(q)) ++d;
      depth[r] = d;
    }
    std::vector<uint32_t> order(region_acc.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return depth[a] > depth[b]; });
    for (const uint32_t r : order) {
      const uint32_t parent = locator.parent(r);
      if (parent != kNone32 && parent < region_acc.size() && depth[parent] < depth[r])
        region_acc[parent].merge(region_acc[r]);
    }
  }

  report.trace = finish(trace_acc, trace_acc.count, trace_acc.dominant(), ceilings, sm_count, options);
  report.ops.reserve(ops.size());
  for (std::size_t o = 0; o < ops.size(); ++o)
    report.ops.push_back(finish(op_acc[o], executions[o], ops[o].precision, ceilings, sm_count, options));
  std::vector<RooflinePoint>& region_points = by_path ? report.region_paths : report.regions;
  region_points.reserve(region_acc.size());
  for (const Acc& a : region_acc)
    region_points.push_back(finish(a, a.count, a.dominant(), ceilings, sm_count, options));
  std::vector<StringId> names;
  for (StringId s = 0; s < name_acc.size(); ++s)
    if (name_acc[s].count > 0) names.push_back(s);
  std::stable_sort(names.begin(), names.end(),
                   [&](StringId a, StringId b) { return name_acc[a].time_ns > name_acc[b].time_ns; });
  for (const StringId s : names) {
    report.kernel_names.push_back(s);
    report.by_kernel_name.push_back(
        finish(name_acc[s], name_acc[s].count, name_acc[s].dominant(), ceilings, sm_count, options));
  }
  return report;
}

}  // namespace fpgaprof::analysis

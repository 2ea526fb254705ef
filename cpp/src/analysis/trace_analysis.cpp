#include "fpgaprof/analysis/trace_analysis.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fpgaprof/analysis/interval_set.hpp"
#include "fpgaprof/error.hpp"
#include "fpgaprof/hlo/buffer_assignment.hpp"
#include "fpgaprof/hlo/cost_model.hpp"
#include "fpgaprof/hlo/hlo_parser.hpp"

namespace fpgaprof::analysis {

namespace {

uint64_t duration_ns(uint64_t start_ns, uint64_t end_ns) { return end_ns > start_ns ? end_ns - start_ns : 0; }

template <class R>
IntervalSet intervals_of(const std::vector<R>& records) {
  std::vector<std::pair<uint64_t, uint64_t>> iv;
  iv.reserve(records.size());
  for (const R& r : records) iv.emplace_back(r.start_ns, r.end_ns);
  return IntervalSet::from(std::move(iv));
}

// Length of the union of disjoint, sorted interval lists, by merging them in start order: no
// list is copied (the kernels' can hold one interval per kernel).
uint64_t union_ns(const std::vector<const std::vector<std::pair<uint64_t, uint64_t>>*>& lists) {
  std::vector<std::size_t> next(lists.size(), 0);
  uint64_t total = 0, block_start = 0, block_end = 0;
  bool open = false;
  for (;;) {
    std::size_t pick = lists.size();
    for (std::size_t l = 0; l < lists.size(); ++l)
      if (next[l] < lists[l]->size() &&
          (pick == lists.size() || (*lists[l])[next[l]].first < (*lists[pick])[next[pick]].first))
        pick = l;
    if (pick == lists.size()) break;
    const auto& [s, e] = (*lists[pick])[next[pick]++];
    if (open && s <= block_end) {
      block_end = std::max(block_end, e);
    } else {
      if (open) total += block_end - block_start;
      block_start = s;
      block_end = e;
      open = true;
    }
  }
  if (open) total += block_end - block_start;
  return total;
}

GpuBusyTime busy_with(const TraceStore& store, const IntervalSet& kernels) {
  GpuBusyTime b;
  const IntervalSet copies = intervals_of(store.memcpys);
  const IntervalSet memsets = intervals_of(store.memsets);
  b.kernel_busy_ns = kernels.total_ns();
  b.copy_busy_ns = copies.total_ns();
  b.memset_busy_ns = memsets.total_ns();
  b.busy_ns = union_ns({&kernels.intervals(), &copies.intervals(), &memsets.intervals()});
  b.kernel_count = store.kernels.size();
  for (const KernelRecord& k : store.kernels) b.kernel_time_ns += duration_ns(k.start_ns, k.end_ns);
  b.copy_count = store.memcpys.size();
  for (const MemcpyRecord& c : store.memcpys) b.copy_bytes += c.bytes;
  b.memset_count = store.memsets.size();
  return b;
}

// Each device row's ceilings: its table's, with a measured or user link peak on every row and
// every value of `c` on the row of the store's first device (which `c` describes).
std::vector<Ceilings> device_row_ceilings(const TraceStore& store, const DeviceReport& devices, const Ceilings& c) {
  std::vector<Ceilings> out;
  out.reserve(devices.devices.size());
  for (const DeviceRow& row : devices.devices) {
    const bool first = !store.devices.empty() && store.devices.front().id == row.device_id;
    Ceilings rc = row.ceilings;
    if (c.link_bytes_per_s > 0 && (c.link_source != CeilingSource::kTable || first)) {
      rc.link_bytes_per_s = c.link_bytes_per_s;
      rc.link_source = c.link_source;
      rc.link_description = c.link_description;
    }
    if (first) {
      for (std::size_t k = 0; k < kPrecisionCount; ++k) {
        if (c.peak_flops_per_s[k] > 0) {
          rc.peak_flops_per_s[k] = c.peak_flops_per_s[k];
          rc.flops_source[k] = c.flops_source[k];
        }
      }
      if (c.dram_bytes_per_s > 0) {
        rc.dram_bytes_per_s = c.dram_bytes_per_s;
        rc.dram_source = c.dram_source;
      }
    }
    out.push_back(std::move(rc));
  }
  return out;
}

}  // namespace

GpuBusyTime gpu_busy_time(const TraceStore& store) { return busy_with(store, kernel_busy_intervals(store)); }

std::vector<RegionPathGpuTime> region_path_gpu_time(const TraceStore& store, const RegionPaths& paths) {
  if (paths.region_count() != store.regions.size())
    throw Error(ErrorKind::kInvalidArgument,
                "region_path_gpu_time: the RegionPaths were built from another store: build them from this one");
  std::vector<RegionPathGpuTime> out(paths.size());
  // Each path's own records first, then every path added into its parent: a parent's id is
  // always smaller than its children's, so going down the ids finishes a path before its parent
  // takes it. One pass, whatever the nesting depth.
  const auto own = [&](uint32_t region_index) -> RegionPathGpuTime* {
    const uint32_t p = paths.path_of(region_index);
    return p != kNone32 ? &out[p] : nullptr;
  };
  for (const KernelRecord& k : store.kernels) {
    if (RegionPathGpuTime* t = own(k.region_index)) {
      t->kernel_count += 1;
      t->kernel_ns += duration_ns(k.start_ns, k.end_ns);
    }
  }
  for (const MemcpyRecord& c : store.memcpys) {
    if (RegionPathGpuTime* t = own(c.region_index)) {
      t->copy_count += 1;
      t->copy_ns += duration_ns(c.start_ns, c.end_ns);
    }
  }
  for (const MemsetRecord& m : store.memsets) {
    if (RegionPathGpuTime* t = own(m.region_index)) {
      t->memset_count += 1;
      t->memset_ns += duration_ns(m.start_ns, m.end_ns);
    }
  }
  for (std::size_t p = out.size(); p-- > 0;) {
    const uint32_t parent = paths.parent(static_cast<uint32_t>(p));
    if (parent == kNone32 || parent >= p) continue;
    RegionPathGpuTime& up = out[parent];
    const RegionPathGpuTime& t = out[p];
    up.kernel_count += t.kernel_count;
    up.kernel_ns += t.kernel_ns;
    up.copy_count += t.copy_count;
    up.copy_ns += t.copy_ns;
    up.memset_count += t.memset_count;
    up.memset_ns += t.memset_ns;
  }
  return out;
}

std::vector<KernelNameStats> kernels_by_name(const TraceStore& store, const AttributionList* kernels) {
  std::vector<KernelNameStats> out;
  std::vector<uint32_t> slot_of(store.strings.size(), kNone32);  // string id -> index into out
  for (const KernelRecord& k : store.kernels) {
    if (k.name >= slot_of.size()) slot_of.resize(static_cast<std::size_t>(k.name) + 1, kNone32);
    uint32_t& slot = slot_of[k.name];
    const uint64_t d = duration_ns(k.start_ns, k.end_ns);
    if (slot == kNone32) {
      slot = static_cast<uint32_t>(out.size());
      out.emplace_back().name = k.name;
    }
    KernelNameStats& s = out[slot];
    s.count += 1;
    if (d == 0) continue;  // no timestamps: launched, but no duration to count
    s.min_ns = s.timed_count ? std::min(s.min_ns, d) : d;
    s.max_ns = std::max(s.max_ns, d);
    s.timed_count += 1;
    s.total_ns += d;
  }
  // A name id outside the table has no text: it sorts as "" (the store is what it is).
  const auto text = [&](StringId id) -> std::string_view {
    return id < store.strings.size() ? std::string_view(store.strings.get(id)) : std::string_view();
  };
  if (kernels != nullptr && kernels->size() == store.kernels.size() && !out.empty()) {
    // Launches per (name, module): the sites' modules numbered (empty: no module), then one
    // count per pair, dense while names x modules is small, else in a hash map.
    const std::vector<ActivityAttribution>& sites = kernels->sites();
    std::vector<std::string_view> module_names;
    std::unordered_map<std::string_view, uint32_t> number;
    std::vector<uint32_t> module_of_site(sites.size());
    for (std::size_t i = 0; i < sites.size(); ++i) {
      const auto [it, fresh] = number.try_emplace(sites[i].module_name, static_cast<uint32_t>(module_names.size()));
      if (fresh) module_names.push_back(sites[i].module_name);
      module_of_site[i] = it->second;
    }
    // A kernel whose site is out of range (not from attribute()) counts under no module.
    const auto [none_it, none_fresh] =
        number.try_emplace(std::string_view(), static_cast<uint32_t>(module_names.size()));
    if (none_fresh) module_names.emplace_back();
    const uint32_t no_module = none_it->second;
    const std::size_t width = module_names.size();
    constexpr std::size_t kDense = std::size_t{1} << 22;
    const bool dense = out.size() <= kDense / width;
    std::vector<uint64_t> counts(dense ? out.size() * width : 0, 0);
    std::unordered_map<uint64_t, uint64_t> sparse;
    for (std::size_t i = 0; i < store.kernels.size(); ++i) {
      const uint32_t site = kernels->site(i);
      const uint32_t slot = slot_of[store.kernels[i].name];
      const uint64_t key = uint64_t{slot} * width + (site < sites.size() ? module_of_site[site] : no_module);
      if (dense)
        counts[key] += 1;
      else
        sparse[key] += 1;
    }
    const auto add = [&](uint64_t key, uint64_t n) {
      out[key / width].modules.push_back({std::string(module_names[key % width]), n});
    };
    if (dense) {
      for (std::size_t key = 0; key < counts.size(); ++key)
        if (counts[key] != 0) add(key, counts[key]);
    } else {
      for (const auto& [key, n] : sparse) add(key, n);
    }
    for (KernelNameStats& s : out)
      std::sort(s.modules.begin(), s.modules.end(), [](const KernelNameModule& a, const KernelNameModule& b) {
        if (a.count != b.count) return a.count > b.count;
        if (a.module.empty() != b.module.empty()) return b.module.empty();  // no module last
        return a.module < b.module;
      });
  }
  std::sort(out.begin(), out.end(), [&](const KernelNameStats& a, const KernelNameStats& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    return text(a.name) < text(b.name);
  });
  return out;
}

namespace {

// Per module with a buffer assignment: its memory over the schedule (TraceAnalysis::
// module_memory), and the on-chip need of its ops replacing the cost model's working set.
// A dump that does not parse is a warning; the module's ops keep the cost model's sizes.
void apply_buffer_assignments(const TraceStore& store, const std::vector<hlo::Module>& modules, TraceAnalysis& r) {
  std::vector<std::optional<hlo::BufferAssignment>> assignments(store.hlo_modules.size());
  for (std::size_t i = 0; i < store.hlo_modules.size(); ++i) {
    const HloModuleText& t = store.hlo_modules[i];
    if (t.buffer_assignment.empty()) continue;
    try {
      hlo::BufferAssignment a = hlo::parse_buffer_assignment(t.buffer_assignment);
      std::optional<hlo::LiveRanges> ranges;
      if (!t.live_ranges.empty()) ranges = hlo::parse_live_ranges(t.live_ranges);
      const hlo::Module* mod = i < modules.size() && !modules[i].name.empty() ? &modules[i] : nullptr;
      ModuleMemory mm = module_memory(t.name, a, ranges ? &*ranges : nullptr, mod);
      mm.module_index = static_cast<uint32_t>(i);
      mm.program_id = t.program_id;
      r.module_memory.push_back(std::move(mm));
      assignments[i] = std::move(a);
    } catch (const std::exception& e) {
      r.warnings.add("hlo.buffer_assignment_unread", "buffer assignment of HLO module '" + t.name + "': " + e.what() +
                                                         "; its ops keep the cost model's on-chip sizes");
    }
  }
  for (OpCost& op : r.op_inputs.ops) {
    if (op.module_index >= assignments.size() || !assignments[op.module_index]) continue;
    if (op.module_index >= modules.size() || modules[op.module_index].name.empty()) continue;
    const OnChipNeed need = onchip_need(modules[op.module_index], *assignments[op.module_index], op.name);
    if (!need.known) continue;
    op.working_set_bytes = static_cast<double>(need.total_bytes());
    op.working_set_source = "xla buffer assignment";
    op.onchip_input_bytes = static_cast<double>(need.input_bytes);
    op.onchip_output_bytes = static_cast<double>(need.output_bytes);
    op.onchip_temporary_bytes = static_cast<double>(need.temporary_bytes);
  }
}

}  // namespace

TraceAnalysis analyze_trace(const TraceStore& store, const AnalysisOptions& options) {
  const auto stage = [&](std::string_view name) {
    if (options.on_stage) options.on_stage(name);
  };
  validate_fpga_target(options.fpga_target);
  for (const FpgaTarget& t : options.other_fpga_targets) validate_fpga_target(t);
  validate_row_imbalance(options.row_imbalance);
  TraceAnalysis r;
  r.region_rows = options.region_rows;
  if (options.ceilings)
    r.ceilings = *options.ceilings;
  else if (!store.devices.empty())
    r.ceilings = table_ceilings(store.devices.front());
  const Ceilings& c = r.ceilings;

  stage("region paths");
  r.region_paths = RegionPaths(store);
  if (const std::size_t folded = r.region_paths.folded_count(); folded > 0)
    r.warnings.add("attribution.regions_too_deep",
                   std::to_string(folded) + " region record(s) are nested deeper than " +
                       std::to_string(kRegionMaxDepth) +
                       " levels: each is counted in its enclosing region path at that depth, not as a path of its "
                       "own (region paths keep " +
                       std::to_string(kRegionMaxDepth) + " levels)",
                   {static_cast<double>(folded), static_cast<double>(kRegionMaxDepth)});

  stage("hlo");
  std::vector<hlo::Module> modules;
  modules.reserve(store.hlo_modules.size());
  Diagnostics parse_warnings;  // as attribute(store) words them
  for (const HloModuleText& t : store.hlo_modules) {
    try {
      modules.push_back(hlo::analyze_hlo(t.text));
    } catch (const std::exception& e) {
      // Error(kHloParse) normally; anything else from the parser is reported the same way
      // rather than losing the whole analysis.
      modules.emplace_back();
      r.warnings.add("hlo.module_unparsed", "HLO module '" + t.name + "': " + e.what());
      parse_warnings.add("hlo.module_unparsed", module_parse_warning(t, e.what()));
    }
  }

  stage("attribution");
  r.attribution = attribute(store, modules);
  parse_warnings.append(r.attribution.warnings);  // the parse failures first
  r.attribution.warnings = std::move(parse_warnings);

  stage("op inputs");
  r.op_inputs = op_inputs(store, r.attribution, modules);
  stage("module memory");
  apply_buffer_assignments(store, modules, r);
  std::vector<hlo::Module>().swap(modules);  // the op inputs hold what the later stages need
  stage("kernels by name");
  r.kernels_by_name = kernels_by_name(store, &r.attribution.kernels);
  if (!options.keep_record_attribution) {
    r.attribution.kernels = {};
    r.attribution.memcpys = {};
    r.attribution.memsets = {};
  }

  stage("busy");
  const IntervalSet kernel_busy = kernel_busy_intervals(store);
  r.busy = busy_with(store, kernel_busy);

  stage("transfers");
  TransferOptions to;
  to.tiny_bytes = options.tiny_bytes;
  to.tiny_flood_count = options.tiny_flood_count;
  to.region_rows = options.region_rows;
  to.region_paths = &r.region_paths;
  // A table link peak is the first device's: the analysis takes each device's own from its
  // record (multi-GPU link %); a measured or user peak applies to every link.
  if (c.link_bytes_per_s > 0 && c.link_source != CeilingSource::kTable) {
    to.link_bytes_per_s = c.link_bytes_per_s;
    to.link_source = ceiling_source_name(c.link_source);
    to.link_description = c.link_description;
  }
  r.transfers = analyze_transfers(store, to, r.op_inputs.op_of_memcpy, &kernel_busy);

  stage("memory");
  r.memory = analyze_memory(store, options.top_buffers, {}, options.region_rows, &r.region_paths);

  stage("devices");
  DeviceOptions dvo;
  dvo.link_bytes_per_s = to.link_bytes_per_s;  // a measured or user peak: every link alike
  r.devices = analyze_devices(store, dvo, &r.memory);
  r.device_ceilings = device_row_ceilings(store, r.devices, c);
  r.device_dram_bytes_per_s.reserve(store.devices.size());
  for (const DeviceInfo& d : store.devices) r.device_dram_bytes_per_s.push_back(d.peak_dram_bandwidth_bytes_per_s());

  stage("roofline");
  RooflineOptions ro;
  ro.latency_kernel_ns = options.latency_kernel_ns;
  ro.per_kernel = options.per_kernel;
  ro.region_rows = options.region_rows;
  ro.region_paths = &r.region_paths;
  r.roofline = analyze_roofline(store, c, r.op_inputs.ops, r.op_inputs.op_of_kernel, ro);

  stage("energy");
  r.energy = analyze_energy(store, r.region_paths, r.op_inputs.op_of_kernel);
  for (const DeviceEnergy& d : r.energy.devices) {
    if (!d.flat_counter) continue;
    const double ms = static_cast<double>(d.last_ns - d.first_ns) / 1e6;
    char span[32];
    std::snprintf(span, sizeof span, "%.4g", ms);
    r.warnings.add("energy.counter_flat",
                   "GPU energy of device " + std::to_string(d.device_id) + ": its energy counter did not change in " +
                       span +
                       " ms of readings (shorter than its update period, or stuck): its joules integrate the power "
                       "readings instead (NVML's 1 s averages on Ampere and later); trace a longer run for measured "
                       "joules",
                   {static_cast<double>(d.device_id), ms});
  }

  stage("fpga ops");
  FpgaOptions fo;
  fo.energy = &r.energy;
  fo.inputs_cross_link = options.inputs_cross_link;
  fo.row_imbalance = options.row_imbalance;
  fo.gpu_link_bytes_per_s = c.link_bytes_per_s;
  fo.region_paths = &r.region_paths;
  fo.workload_ns = options.workload_ns > 0 ? options.workload_ns
                   : store.meta.end_ns > store.meta.start_ns
                       ? static_cast<double>(store.meta.end_ns - store.meta.start_ns)
                       : 0.0;
  r.fpga = rank_fpga_candidates(r.op_inputs.ops, r.roofline, options.fpga_target, fo, r.op_inputs.host_bytes);

  stage("fpga regions");
  r.fpga_regions =
      rank_fpga_regions(store, r.op_inputs.ops, r.op_inputs.op_of_kernel, r.roofline, options.fpga_target, fo);
  for (const FpgaTarget& t : options.other_fpga_targets) {
    r.other_fpga.push_back({rank_fpga_candidates(r.op_inputs.ops, r.roofline, t, fo, r.op_inputs.host_bytes),
                            rank_fpga_regions(store, r.op_inputs.ops, r.op_inputs.op_of_kernel, r.roofline, t, fo)});
  }

  stage("region gpu time");
  r.region_path_gpu = region_path_gpu_time(store, r.region_paths);

  stage("collectives");
  std::vector<std::string_view> op_names;
  op_names.reserve(r.op_inputs.ops.size());
  for (const OpCost& op : r.op_inputs.ops) op_names.emplace_back(op.name);
  r.collectives = analyze_collectives(store, r.op_inputs.op_of_kernel, op_names);
  return r;
}

}  // namespace fpgaprof::analysis

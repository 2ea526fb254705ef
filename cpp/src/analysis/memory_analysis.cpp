#include "fpgaprof/analysis/memory_analysis.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "fpgaprof/analysis/region_locator.hpp"
#include "fpgaprof/error.hpp"

namespace fpgaprof::analysis {
namespace {

// Range-maximum over the timeline levels (sparse table): region peaks in O(1) per region.
class RangeMax {
 public:
  explicit RangeMax(const std::vector<uint64_t>& v) {
    table_.push_back(v);
    for (std::size_t w = 1; 2 * w <= v.size(); w *= 2) {
      const auto& prev = table_.back();
      std::vector<uint64_t> next(prev.size() - w);
      for (std::size_t i = 0; i < next.size(); ++i) next[i] = std::max(prev[i], prev[i + w]);
      table_.push_back(std::move(next));
    }
  }
  // max of v[lo..hi], lo <= hi < size
  uint64_t query(std::size_t lo, std::size_t hi) const {
    std::size_t level = 0;
    while ((std::size_t{2} << level) <= hi - lo + 1) ++level;
    return std::max(table_[level][lo], table_[level][hi + 1 - (std::size_t{1} << level)]);
  }

 private:
  std::vector<std::vector<uint64_t>> table_;
};

}  // namespace

MemoryReport analyze_memory(const TraceStore& store, std::size_t top_n, const std::vector<uint32_t>& op_of_allocation,
                            RegionRows region_rows, const RegionPaths* region_paths) {
  const auto& allocs = store.allocations;
  if (!op_of_allocation.empty() && op_of_allocation.size() != allocs.size())
    throw Error(ErrorKind::kInvalidArgument, "op_of_allocation has " + std::to_string(op_of_allocation.size()) +
                                                 " entries for " + std::to_string(allocs.size()) +
                                                 " allocation records: pass one per record or none");
  MemoryReport report;
  std::vector<uint32_t> order(allocs.size());
  std::iota(order.begin(), order.end(), 0u);
  // At equal timestamps, releases first: a free and a reuse of the same address in one tick.
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (allocs[a].timestamp_ns != allocs[b].timestamp_ns) return allocs[a].timestamp_ns < allocs[b].timestamp_ns;
    return !allocs[a].is_alloc && allocs[b].is_alloc;
  });

  struct Key {
    uint32_t device;
    uint64_t address;
    bool operator==(const Key& o) const { return device == o.device && address == o.address; }
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.address * 31u + k.device); }
  };
  std::unordered_map<Key, uint32_t, KeyHash> live;  // -> buffer index
  std::vector<BufferInfo> buffers;
  std::unordered_map<uint32_t, std::size_t> device_slot;
  uint64_t in_use = 0;

  const auto device_entry = [&](uint32_t device) -> DeviceMemory& {
    auto [it, inserted] = device_slot.emplace(device, report.devices.size());
    if (inserted) report.devices.push_back({device, 0, 0, 0});
    return report.devices[it->second];
  };

  for (const uint32_t i : order) {
    const AllocationRecord& a = allocs[i];
    DeviceMemory& dev = device_entry(a.device_id);
    const Key key{a.device_id, a.address};
    if (a.is_alloc) {
      report.allocation_count += 1;
      auto found = live.find(key);
      if (found != live.end()) {
        // Address handed out again without a release in the trace: the old buffer is gone.
        BufferInfo& old = buffers[found->second];
        old.free_ns = a.timestamp_ns;
        in_use -= old.bytes;
        dev.final_in_use_bytes -= old.bytes;
        report.reallocated_live += 1;
        live.erase(found);
      }
      BufferInfo b;
      b.allocation_index = i;
      b.address = a.address;
      b.bytes = a.bytes;
      b.alloc_ns = a.timestamp_ns;
      b.device_id = a.device_id;
      b.thread_id = a.thread_id;
      b.region_index = a.region_index;
      b.api_index = a.api_index;
      b.op_index = op_of_allocation.empty() ? kNone32 : op_of_allocation[i];
      b.memory_kind = a.memory_kind;
      live.emplace(key, static_cast<uint32_t>(buffers.size()));
      buffers.push_back(b);
      in_use += a.bytes;
      dev.final_in_use_bytes += a.bytes;
      if (dev.final_in_use_bytes > dev.peak_in_use_bytes) {
        dev.peak_in_use_bytes = dev.final_in_use_bytes;
        dev.peak_ns = a.timestamp_ns;
      }
    } else {
      report.free_count += 1;
      auto found = live.find(key);
      if (found == live.end()) {
        report.unmatched_frees += 1;
        report.unmatched_free_bytes += a.bytes;
        continue;
      }
      BufferInfo& b = buffers[found->second];
      b.free_ns = a.timestamp_ns;
      in_use -= b.bytes;
      dev.final_in_use_bytes -= b.bytes;
      live.erase(found);
    }
    report.timeline.push_back({a.timestamp_ns, in_use, dev.final_in_use_bytes, i});
    if (in_use > report.peak_in_use_bytes) {
      report.peak_in_use_bytes = in_use;
      report.peak_ns = a.timestamp_ns;
    }
  }
  for (const auto& [key, index] : live) {
    report.never_freed_count += 1;
    report.never_freed_bytes += buffers[index].bytes;
  }

  // Largest buffers: partial sort of indices; ties broken by allocation time.
  std::vector<uint32_t> by_size(buffers.size());
  std::iota(by_size.begin(), by_size.end(), 0u);
  const std::size_t keep = std::min(top_n, by_size.size());
  std::partial_sort(by_size.begin(), by_size.begin() + static_cast<std::ptrdiff_t>(keep), by_size.end(),
                    [&](uint32_t a, uint32_t b) {
                      if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
                      return buffers[a].alloc_ns < buffers[b].alloc_ns;
                    });
  for (std::size_t k = 0; k < keep; ++k) report.largest.push_back(buffers[by_size[k]]);

  // Regions: level at start, peak while open, and bytes (de)allocated inside (inclusive).
  // Per instance first: a path's peak is the highest of its instances' peaks.
  const bool by_path = region_rows == RegionRows::kPaths;
  RegionPaths own_paths;
  const RegionPaths& paths =
      RegionPaths::select(store, region_paths, by_path, own_paths, "analyze_memory: region_paths");
  report.regions.resize(store.regions.size());
  if (!store.regions.empty()) {
    std::vector<uint64_t> times(report.timeline.size()), levels(report.timeline.size());
    for (std::size_t k = 0; k < report.timeline.size(); ++k) {
      times[k] = report.timeline[k].timestamp_ns;
      levels[k] = report.timeline[k].in_use_bytes;
    }
    const RangeMax range_max(levels);
    for (uint32_t r = 0; r < store.regions.size(); ++r) {
      const RegionRecord& reg = store.regions[r];
      RegionMemory& rm = report.regions[r];
      rm.region_index = r;
      // Events with timestamp < start set the level at start; events inside [start, end] count.
      const std::size_t lo =
          static_cast<std::size_t>(std::lower_bound(times.begin(), times.end(), reg.start_ns) - times.begin());
      const std::size_t hi =
          static_cast<std::size_t>(std::upper_bound(times.begin(), times.end(), reg.end_ns) - times.begin());
      rm.in_use_at_start_bytes = lo > 0 ? levels[lo - 1] : 0;
      rm.peak_in_use_bytes = rm.in_use_at_start_bytes;
      if (hi > lo) rm.peak_in_use_bytes = std::max(rm.peak_in_use_bytes, range_max.query(lo, hi - 1));
    }
    const RegionLocator locator(store.regions);
    for (const AllocationRecord& a : allocs) {
      for (uint32_t r = a.region_index, steps = 0;
           r != kNone32 && r < store.regions.size() && steps <= store.regions.size(); r = locator.parent(r), ++steps) {
        RegionMemory& rm = report.regions[r];
        if (a.is_alloc) {
          rm.allocated_bytes += a.bytes;
          rm.allocations += 1;
        } else {
          rm.freed_bytes += a.bytes;
          rm.frees += 1;
        }
      }
    }
  }
  if (by_path) {
    report.region_paths.resize(paths.size());
    for (uint32_t p = 0; p < paths.size(); ++p) {
      report.region_paths[p].path = p;
      report.region_paths[p].instances = paths.instances(p);
    }
    // Instances of one path never nest (a nested one has a longer path), so summing their
    // inclusive counts counts every event once. A record nested deeper than kRegionMaxDepth is
    // inside an instance of its path already, so it adds nothing.
    for (uint32_t r = 0; r < report.regions.size(); ++r) {
      if (!paths.is_instance(r)) continue;
      const RegionMemory& rm = report.regions[r];
      RegionPathMemory& pm = report.region_paths[paths.path_of(r)];
      const bool first = pm.peak_region_index == kNone32;
      if (first || rm.peak_in_use_bytes > pm.peak_in_use_bytes ||
          (rm.peak_in_use_bytes == pm.peak_in_use_bytes &&
           store.regions[r].start_ns < store.regions[pm.peak_region_index].start_ns)) {
        pm.peak_in_use_bytes = rm.peak_in_use_bytes;
        pm.peak_region_index = r;
        pm.in_use_at_start_bytes = rm.in_use_at_start_bytes;
      }
      pm.allocated_bytes += rm.allocated_bytes;
      pm.freed_bytes += rm.freed_bytes;
      pm.allocations += rm.allocations;
      pm.frees += rm.frees;
    }
    report.regions.clear();
    report.regions.shrink_to_fit();
  }
  return report;
}

}  // namespace fpgaprof::analysis

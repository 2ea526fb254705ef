#include "fpgaprof/analysis/transfer_analysis.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <utility>

#include "fpgaprof/analysis/ceilings.hpp"
#include "fpgaprof/analysis/region_locator.hpp"
#include "fpgaprof/error.hpp"

namespace fpgaprof::analysis {
namespace {

// Streaming union of intervals that arrive sorted by start.
struct RunningUnion {
  uint64_t start_ns = 0, end_ns = 0;
  bool open = false;
  // Adds [s, e); returns the interval it closed (if any) through closed_*.
  bool add(uint64_t s, uint64_t e, uint64_t& closed_s, uint64_t& closed_e) {
    if (open && s <= end_ns) {
      end_ns = std::max(end_ns, e);
      return false;
    }
    const bool closed = open;
    closed_s = start_ns;
    closed_e = end_ns;
    start_ns = s;
    end_ns = e;
    open = true;
    return closed;
  }
};

// Per device, the union of its HtoD and its DtoH copies in one group (link capacity).
struct DeviceLinkUnion {
  uint32_t device_id = 0;
  double link_bytes_per_s = 0;
  std::array<RunningUnion, 2> copy_union{};  // [0] HtoD, [1] DtoH
};

struct Slot {
  TransferGroup group;
  std::array<RunningUnion, kDirectionCount + 1> copy_union{};  // last = all directions
  std::vector<DeviceLinkUnion> device_links;                   // one per device with link copies (few)
  RunningUnion wait_union;
};

std::string human_bytes(uint64_t bytes) {
  char buf[64];
  const double b = static_cast<double>(bytes);
  if (b >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
  else if (b >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2f MB", b / 1e6);
  else if (b >= 1e3)
    std::snprintf(buf, sizeof buf, "%.1f kB", b / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  return buf;
}

// A byte threshold as every report states sizes (decimal kB/MB, docs/reports.md), with the
// exact byte count first when rounding hides it: 65536 -> "65,536 B (65.5 kB)".
std::string threshold_bytes(uint64_t bytes) {
  if (bytes < 1000) return human_bytes(bytes);
  const std::string digits = std::to_string(bytes);
  // Appended piece by piece: g++ 12 warns (-Wrestrict, a false positive) on the inlined
  // operator+ chain this used to be.
  std::string out;
  out.reserve(digits.size() * 2 + 16);
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  out.append(" B (");
  out.append(human_bytes(bytes));
  out.push_back(')');
  return out;
}

std::string copies(uint64_t n) { return std::to_string(n) + (n == 1 ? " copy" : " copies"); }

}  // namespace

const char* direction_name(Direction d) {
  static const char* const kNames[] = {"HtoD", "DtoH", "DtoD", "PtoP", "HtoH", "other"};
  const auto i = static_cast<std::size_t>(d);
  return i < kDirectionCount ? kNames[i] : "other";
}

const char* group_kind_name(GroupKind k) {
  switch (k) {
    case GroupKind::kTrace: return "trace";
    case GroupKind::kRegion: return "region";
    case GroupKind::kOp: return "op";
    case GroupKind::kRegionPath: return "region_path";
  }
  return "trace";
}

Direction direction_of(CopyKind kind) {
  switch (kind) {
    case CopyKind::kHtoD:
    case CopyKind::kHtoA: return Direction::kHtoD;
    case CopyKind::kDtoH:
    case CopyKind::kAtoH: return Direction::kDtoH;
    case CopyKind::kDtoD:
    case CopyKind::kAtoA:
    case CopyKind::kAtoD:
    case CopyKind::kDtoA: return Direction::kDtoD;
    case CopyKind::kPtoP: return Direction::kPtoP;
    case CopyKind::kHtoH: return Direction::kHtoH;
    default: return Direction::kOther;
  }
}

double TransferReport::link_percent(const TransferGroup& g, Direction d) const {
  const TransferStats& st = g.by_direction[static_cast<std::size_t>(d)];
  if (st.link_capacity_bytes <= 0) return 0.0;
  return 100.0 * static_cast<double>(st.link_bytes) / st.link_capacity_bytes;
}

bool kernels_in_start_order(const TraceStore& store) {
  return std::is_sorted(store.kernels.begin(), store.kernels.end(),
                        [](const KernelRecord& a, const KernelRecord& b) { return a.start_ns < b.start_ns; });
}

IntervalSet kernel_busy_intervals(const TraceStore& store) {
  const auto& ks = store.kernels;
  std::vector<std::pair<uint64_t, uint64_t>> iv;
  if (!kernels_in_start_order(store)) {
    iv.reserve(ks.size());
    for (const auto& k : ks) iv.emplace_back(k.start_ns, k.end_ns);
    return IntervalSet::from(std::move(iv));
  }
  // Kernels usually arrive in start order: merge while reading, never holding one pair per kernel.
  for (const auto& k : ks) {
    if (k.end_ns <= k.start_ns) continue;
    if (!iv.empty() && k.start_ns <= iv.back().second)
      iv.back().second = std::max(iv.back().second, k.end_ns);
    else
      iv.emplace_back(k.start_ns, k.end_ns);
  }
  return IntervalSet::from(std::move(iv));
}

TransferReport analyze_transfers(const TraceStore& store, const TransferOptions& options,
                                 const std::vector<uint32_t>& op_of_memcpy, const IntervalSet* kernel_busy) {
  if (!op_of_memcpy.empty() && op_of_memcpy.size() != store.memcpys.size())
    throw Error(ErrorKind::kInvalidArgument, "op_of_memcpy has " + std::to_string(op_of_memcpy.size()) +
                                                 " entries for " + std::to_string(store.memcpys.size()) +
                                                 " copies: pass one op index per copy or none");
  IntervalSet own_busy;
  if (kernel_busy == nullptr) {
    own_busy = kernel_busy_intervals(store);
    kernel_busy = &own_busy;
  }
  const RegionLocator locator(store.regions);
  const bool by_path = options.region_rows == RegionRows::kPaths;
  RegionPaths own_paths;
  const RegionPaths& paths =
      RegionPaths::select(store, options.region_paths, by_path, own_paths, "TransferOptions::region_paths");

  std::vector<Slot> slots(1);
  slots[0].group.kind = GroupKind::kTrace;
  // Region groups: one per path (id = path) or per region record (id = region index).
  std::vector<uint32_t> region_slot(by_path ? paths.size() : store.regions.size(), kNone32);
  std::vector<uint32_t> op_slot;
  const auto slot_for_region = [&](uint32_t id) {
    if (region_slot[id] == kNone32) {
      region_slot[id] = static_cast<uint32_t>(slots.size());
      slots.emplace_back();
      slots.back().group.kind = by_path ? GroupKind::kRegionPath : GroupKind::kRegion;
      slots.back().group.index = id;
    }
    return region_slot[id];
  };
  // Inclusive: the innermost region (path) and every enclosing one.
  const auto add_region_targets = [&](uint32_t inner, std::vector<uint32_t>& targets) {
    if (by_path) {
      paths.for_self_and_ancestors(paths.path_of(inner), [&](uint32_t p) { targets.push_back(slot_for_region(p)); });
      return;
    }
    for (uint32_t r = inner, steps = 0; r != kNone32 && r < store.regions.size() && steps <= store.regions.size();
         r = locator.parent(r), ++steps)
      targets.push_back(slot_for_region(r));
  };
  const auto slot_for_op = [&](uint32_t op) {
    if (op >= op_slot.size()) op_slot.resize(static_cast<std::size_t>(op) + 1, kNone32);
    if (op_slot[op] == kNone32) {
      op_slot[op] = static_cast<uint32_t>(slots.size());
      slots.emplace_back();
      slots.back().group.kind = GroupKind::kOp;
      slots.back().group.index = op;
    }
    return op_slot[op];
  };

  const auto close = [&](TransferStats& st, uint64_t s, uint64_t e) {
    st.busy_ns += e - s;
    st.kernel_overlap_ns += kernel_busy->overlap_ns(s, e);
  };

  // Host-link peak of each device (bytes/s, 0 unknown): the user's or measured value for every
  // link alike, else the device's PCIe generation and width.
  std::vector<std::pair<uint32_t, double>> device_link_peaks;
  for (const DeviceInfo& dev : store.devices)
    device_link_peaks.emplace_back(dev.id, pcie_bytes_per_s(dev.pcie_generation, dev.pcie_link_width));
  const auto link_peak_of = [&](uint32_t device_id) {
    if (options.link_bytes_per_s > 0) return options.link_bytes_per_s;
    for (const auto& [id, peak] : device_link_peaks)
      if (id == device_id) return peak;
    return 0.0;
  };
  const auto device_link = [](Slot& slot, uint32_t device_id, double peak) -> DeviceLinkUnion& {
    for (DeviceLinkUnion& u : slot.device_links)
      if (u.device_id == device_id) return u;
    slot.device_links.push_back({device_id, peak, {}});
    return slot.device_links.back();
  };
  const auto close_link = [](TransferStats& st, const DeviceLinkUnion& u, uint64_t s, uint64_t e) {
    st.link_capacity_bytes += static_cast<double>(e - s) * 1e-9 * u.link_bytes_per_s;
  };

  // Copies in start order, so each group's union can be built in one pass.
  std::vector<uint32_t> order(store.memcpys.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return store.memcpys[a].start_ns < store.memcpys[b].start_ns; });

  std::vector<uint32_t> targets;
  for (const uint32_t i : order) {
    const MemcpyRecord& c = store.memcpys[i];
    const Direction dir = direction_of(c.copy_kind);
    const auto d = static_cast<std::size_t>(dir);
    targets.assign(1, 0u);
    add_region_targets(c.region_index, targets);
    if (!op_of_memcpy.empty() && op_of_memcpy[i] != kNone32) targets.push_back(slot_for_op(op_of_memcpy[i]));

    // Pinned or pageable: the host side of a copy between host and device (a host-to-host copy
    // crosses no link and is not staged by the driver).
    const bool host_side = dir == Direction::kHtoD || dir == Direction::kDtoH;
    const bool pageable = host_side && (c.src_kind == MemoryKind::kPageable || c.dst_kind == MemoryKind::kPageable);
    const bool pinned =
        host_side && !pageable && (c.src_kind == MemoryKind::kPinned || c.dst_kind == MemoryKind::kPinned);
    const bool tiny = c.bytes < options.tiny_bytes;
    const int link_lane = dir == Direction::kHtoD ? 0 : dir == Direction::kDtoH ? 1 : -1;
    const double link_peak = link_lane >= 0 ? link_peak_of(c.device_id) : 0.0;
    for (const uint32_t t : targets) {
      Slot& slot = slots[t];
      for (TransferStats* st : {&slot.group.by_direction[d], &slot.group.all}) {
        st->count += 1;
        st->bytes += c.bytes;
        st->duration_sum_ns += c.duration_ns();
        st->pinned_count += pinned ? 1 : 0;
        st->pageable_count += pageable ? 1 : 0;
        st->pageable_bytes += pageable ? c.bytes : 0;
        st->sync_count += c.is_async ? 0 : 1;
        st->async_count += c.is_async ? 1 : 0;
        st->tiny_count += tiny ? 1 : 0;
      }
      // A copy without duration adds no link capacity, so its bytes stay out of link % too.
      if (c.end_ns <= c.start_ns) continue;
      slot.group.by_direction[d].timed_bytes += c.bytes;
      slot.group.all.timed_bytes += c.bytes;
      if (link_peak > 0) slot.group.by_direction[d].link_bytes += c.bytes;
      uint64_t s = 0, e = 0;
      if (slot.copy_union[d].add(c.start_ns, c.end_ns, s, e)) close(slot.group.by_direction[d], s, e);
      if (slot.copy_union[kDirectionCount].add(c.start_ns, c.end_ns, s, e)) close(slot.group.all, s, e);
      if (link_peak > 0) {
        DeviceLinkUnion& u = device_link(slot, c.device_id, link_peak);
        const auto lane = static_cast<std::size_t>(link_lane);
        if (u.copy_union[lane].add(c.start_ns, c.end_ns, s, e)) close_link(slot.group.by_direction[d], u, s, e);
      }
    }
  }

  // Host waits: sync records placed in the region open on their thread when the wait began.
  // cuStreamWaitEvent (STREAM_WAIT_EVENT) only orders work on the device: no host wait.
  std::vector<uint32_t> sync_order(store.syncs.size());
  std::iota(sync_order.begin(), sync_order.end(), 0u);
  std::stable_sort(sync_order.begin(), sync_order.end(),
                   [&](uint32_t a, uint32_t b) { return store.syncs[a].start_ns < store.syncs[b].start_ns; });
  for (const uint32_t i : sync_order) {
    const SyncRecord& w = store.syncs[i];
    if (w.kind == SyncKind::kStreamWaitEvent) continue;
    targets.assign(1, 0u);
    add_region_targets(locator.innermost(w.thread_id, w.start_ns), targets);
    for (const uint32_t t : targets) {
      Slot& slot = slots[t];
      slot.group.sync_calls += 1;
      if (w.end_ns <= w.start_ns) continue;
      uint64_t s = 0, e = 0;
      if (slot.wait_union.add(w.start_ns, w.end_ns, s, e)) slot.group.host_wait_ns += e - s;
    }
  }

  TransferReport report;
  if (options.link_bytes_per_s > 0) {
    report.link_bytes_per_s = options.link_bytes_per_s;
    report.link_source = options.link_source.empty() ? "user" : options.link_source;
    report.link_description = options.link_description.empty() ? report.link_source : options.link_description;
  } else {
    for (const DeviceInfo& dev : store.devices) {
      const double bw = pcie_bytes_per_s(dev.pcie_generation, dev.pcie_link_width);
      if (bw > 0) {
        report.link_bytes_per_s = bw;
        report.link_source = "table";
        report.link_description =
            "PCIe gen" + std::to_string(dev.pcie_generation) + " x" + std::to_string(dev.pcie_link_width);
        break;
      }
    }
    if (report.link_bytes_per_s <= 0) report.link_source = "unknown";
  }

  report.groups.reserve(slots.size());
  for (Slot& slot : slots) {
    for (std::size_t d = 0; d <= kDirectionCount; ++d) {
      RunningUnion& u = slot.copy_union[d];
      if (u.open) close(d < kDirectionCount ? slot.group.by_direction[d] : slot.group.all, u.start_ns, u.end_ns);
    }
    for (const DeviceLinkUnion& dl : slot.device_links)
      for (std::size_t lane = 0; lane < dl.copy_union.size(); ++lane) {
        const RunningUnion& u = dl.copy_union[lane];
        const Direction d = lane == 0 ? Direction::kHtoD : Direction::kDtoH;
        if (u.open) close_link(slot.group.by_direction[static_cast<std::size_t>(d)], dl, u.start_ns, u.end_ns);
      }
    if (slot.wait_union.open) slot.group.host_wait_ns += slot.wait_union.end_ns - slot.wait_union.start_ns;
    report.groups.push_back(std::move(slot.group));
  }

  // Flags: the trace, then at most options.max_region_flags regions per kind (the worst first),
  // so a loop of thousands of regions does not bury the report in identical lines.
  const auto flag_pageable = [&](const TransferGroup& g, const std::string& where) {
    const bool one = g.all.pageable_count == 1;
    report.flags.push_back(
        {"pageable", g.kind, g.index, g.all.pageable_count, g.all.pageable_bytes,
         copies(g.all.pageable_count) + " (" + human_bytes(g.all.pageable_bytes) + ") in " + where +
             (one ? " uses pageable host memory: it is" : " use pageable host memory: they are") +
             " staged by the driver and cannot overlap kernels; use pinned (page-locked) host buffers"});
  };
  const auto is_flood = [&](const TransferGroup& g) {
    return g.all.count > 0 && g.all.tiny_count >= options.tiny_flood_count &&
           static_cast<double>(g.all.tiny_count) >= options.tiny_flood_fraction * static_cast<double>(g.all.count);
  };
  const auto flag_tiny = [&](const TransferGroup& g, const std::string& where) {
    const bool one = g.all.tiny_count == 1;
    report.flags.push_back({"tiny_transfers", g.kind, g.index, g.all.tiny_count, 0,
                            std::to_string(g.all.tiny_count) + " of " + copies(g.all.count) + " in " + where +
                                (one ? " moves" : " move") + " less than " + threshold_bytes(options.tiny_bytes) +
                                (one ? "" : " each") +
                                ": per-copy latency dominates; batch them into fewer, larger transfers"});
  };
  const auto region_where = [&](const TransferGroup& g) {
    if (g.kind == GroupKind::kRegionPath) {
      const uint64_t n = paths.instances(g.index);
      return "region '" + paths.path(g.index) + "' (" + std::to_string(n) + (n == 1 ? " instance)" : " instances)");
    }
    return "region '" + store.strings.get(store.regions[g.index].name) + "' (#" + std::to_string(g.index) + ")";
  };
  const TransferGroup& trace_group = report.groups.front();
  if (trace_group.all.pageable_count > 0) flag_pageable(trace_group, "the trace");
  if (is_flood(trace_group)) flag_tiny(trace_group, "the trace");
  // Copies faster than the link peak by more than 10 %: the peak does not describe this
  // machine (NVLink-C2C on Grace Hopper, a hypervisor's made-up PCIe port), so every link %
  // built on it is wrong. Said once per direction, with the fix.
  for (const Direction d : {Direction::kHtoD, Direction::kDtoH}) {
    const TransferStats& st = trace_group.by_direction[static_cast<std::size_t>(d)];
    const double pct = report.link_percent(trace_group, d);
    if (!(pct > 110.0)) continue;
    char text[64];
    std::snprintf(text, sizeof text, "%.0f %%", pct);
    const std::string link = report.link_description.empty() ? report.link_source : report.link_description;
    report.flags.push_back({"link_exceeded", GroupKind::kTrace, trace_group.index, st.count, st.bytes,
                            std::string(direction_name(d)) + " copies in the trace ran at " + text +
                                " of the host link's peak (" + link +
                                "): that peak does not describe this "
                                "machine's link (NVLink-C2C, or a virtual machine's emulated PCIe port), so "
                                "the link percentages are wrong; measure the link with `fpgaprof calibrate`"});
  }
  std::vector<const TransferGroup*> pageable_regions, tiny_regions;
  for (const TransferGroup& g : report.groups) {
    if (g.kind != GroupKind::kRegion && g.kind != GroupKind::kRegionPath) continue;
    if (g.all.pageable_count > 0) pageable_regions.push_back(&g);
    if (is_flood(g)) tiny_regions.push_back(&g);
  }
  // Per path, an enclosing path whose flagged copies all come from one nested path is not
  // flagged again: the nested one says the same more precisely (a loop body
  // "iteration > forward > project" gives one flag, not three).
  const auto drop_enclosing = [&](std::vector<const TransferGroup*>& v, auto same) {
    if (!by_path) return;
    std::vector<char> covered(report.groups.size(), 0);  // by group (= slot) index
    for (const TransferGroup* g : v) {
      const uint32_t parent = paths.parent(g->index);
      if (parent == kNone32 || region_slot[parent] == kNone32) continue;
      if (same(report.groups[region_slot[parent]], *g)) covered[region_slot[parent]] = 1;
    }
    std::erase_if(
        v, [&](const TransferGroup* g) { return covered[static_cast<std::size_t>(g - report.groups.data())] != 0; });
  };
  drop_enclosing(pageable_regions, [](const TransferGroup& a, const TransferGroup& b) {
    return a.all.pageable_count == b.all.pageable_count && a.all.pageable_bytes == b.all.pageable_bytes;
  });
  drop_enclosing(tiny_regions, [](const TransferGroup& a, const TransferGroup& b) {
    return a.all.tiny_count == b.all.tiny_count && a.all.count == b.all.count;
  });
  const auto keep_worst = [&](std::vector<const TransferGroup*>& v, auto key) {
    std::stable_sort(v.begin(), v.end(),
                     [&](const TransferGroup* a, const TransferGroup* b) { return key(*a) > key(*b); });
    if (v.size() > options.max_region_flags) {
      report.flags_left_out += v.size() - options.max_region_flags;
      v.resize(options.max_region_flags);
    }
  };
  keep_worst(pageable_regions, [](const TransferGroup& g) { return g.all.pageable_bytes; });
  keep_worst(tiny_regions, [](const TransferGroup& g) { return g.all.tiny_count; });
  for (const TransferGroup* g : pageable_regions) flag_pageable(*g, region_where(*g));
  for (const TransferGroup* g : tiny_regions) flag_tiny(*g, region_where(*g));
  return report;
}

}  // namespace fpgaprof::analysis

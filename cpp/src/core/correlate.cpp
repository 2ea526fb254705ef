#include "fpgaprof/correlate.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

namespace fpgaprof {
namespace {

constexpr uint64_t kForever = kNone64;

// Sorted (correlation id, API index) pairs; the first entry of an id is its outermost call.
class ApiIndex {
 public:
  explicit ApiIndex(const std::vector<ApiRecord>& api) {
    entries_.reserve(api.size());
    for (std::size_t i = 0; i < api.size(); ++i) {
      if (api[i].correlation_id != 0) entries_.push_back(static_cast<uint32_t>(i));
    }
    std::sort(entries_.begin(), entries_.end(), [&](uint32_t a, uint32_t b) {
      const ApiRecord& x = api[a];
      const ApiRecord& y = api[b];
      // Outermost first: earlier start, then later end.
      return std::make_tuple(x.correlation_id, x.start_ns, ~x.end_ns, a) <
             std::make_tuple(y.correlation_id, y.start_ns, ~y.end_ns, b);
    });
    ids_.reserve(entries_.size());
    for (uint32_t i : entries_) ids_.push_back(api[i].correlation_id);
  }
  uint32_t find(uint32_t correlation_id) const {
    if (correlation_id == 0) return kNone32;
    auto it = std::lower_bound(ids_.begin(), ids_.end(), correlation_id);
    if (it == ids_.end() || *it != correlation_id) return kNone32;
    return entries_[static_cast<std::size_t>(it - ids_.begin())];
  }

 private:
  std::vector<uint32_t> entries_;
  std::vector<uint32_t> ids_;
};

// Joins one GPU activity table (kernels, memcpys, memsets) to its API calls.
template <class R>
uint64_t join_activities(std::vector<R>& records, const std::vector<ApiRecord>& api, const ApiIndex& index) {
  uint64_t unmatched = 0;
  for (R& r : records) {
    const uint32_t a = index.find(r.correlation_id);
    r.api_index = a;
    if (a == kNone32) {
      r.launch_ns = 0;
      ++unmatched;
      continue;
    }
    r.thread_id = api[a].thread_id;
    r.launch_ns = api[a].start_ns;
  }
  return unmatched;
}

// One nested interval, as the nesting and attribution sweeps see it.
struct Interval {
  uint32_t thread_id;
  uint64_t start_ns;
  uint64_t end_ns;  // effective end (kForever for unclosed ranges)
  bool can_parent;  // ranges can contain others; instantaneous markers cannot
};

// Indices of `iv` sorted by thread, start, longer first.
std::vector<uint32_t> sweep_order(const std::vector<Interval>& iv) {
  std::vector<uint32_t> order(iv.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Interval& x = iv[a];
    const Interval& y = iv[b];
    return std::make_tuple(x.thread_id, x.start_ns, ~x.end_ns, a) <
           std::make_tuple(y.thread_id, y.start_ns, ~y.end_ns, b);
  });
  return order;
}

// Sets parent and depth of every record from its interval.
template <class R>
void nest(std::vector<R>& records, const std::vector<Interval>& iv, const std::vector<uint32_t>& order) {
  std::vector<uint32_t> stack;
  uint32_t thread = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const uint32_t i = order[k];
    if (k == 0 || iv[i].thread_id != thread) {
      stack.clear();
      thread = iv[i].thread_id;
    }
    while (!stack.empty() && iv[stack.back()].end_ns <= iv[i].start_ns) stack.pop_back();
    records[i].parent = stack.empty() ? kNone32 : stack.back();
    records[i].depth = static_cast<uint16_t>(std::min<std::size_t>(stack.size(), 0xffff));
    if (iv[i].can_parent) stack.push_back(i);
  }
}

// A point in time on a thread that wants the innermost interval containing it.
struct Query {
  uint32_t thread_id;
  uint64_t time_ns;
  uint8_t table;   // which activity table
  uint32_t index;  // record index in that table
};

// For every query: the innermost interval (index) with start <= time < end on its thread, or
// kNone32. Both inputs sorted by (thread, time).
template <class Assign>
void attribute(const std::vector<Interval>& iv, const std::vector<uint32_t>& order, const std::vector<Query>& queries,
               Assign assign) {
  std::vector<uint32_t> stack;
  std::size_t p = 0;
  uint32_t thread = 0;
  for (std::size_t q = 0; q < queries.size(); ++q) {
    const Query& query = queries[q];
    if (q == 0 || query.thread_id != thread) {
      stack.clear();
      thread = query.thread_id;
      while (p < order.size() && iv[order[p]].thread_id < thread) ++p;
    }
    while (p < order.size() && iv[order[p]].thread_id == thread && iv[order[p]].start_ns <= query.time_ns) {
      const uint32_t i = order[p++];
      while (!stack.empty() && iv[stack.back()].end_ns <= iv[i].start_ns) stack.pop_back();
      if (iv[i].can_parent) stack.push_back(i);
    }
    while (!stack.empty() && iv[stack.back()].end_ns <= query.time_ns) stack.pop_back();
    assign(query, stack.empty() ? kNone32 : stack.back());
  }
}

// Fallback for activities whose launching thread had no region open: JAX/PJRT may launch
// kernels and copies from its own worker threads while the Python thread that opened the
// region waits. Such an activity goes to the innermost region (latest start) open at its
// launch time on any thread. Sweep by time with a max-heap on start; an interval that has
// ended is dead for every later query, so lazy removal from the top is exact.
template <class Assign>
void attribute_any_thread(const std::vector<Interval>& iv, std::vector<Query> queries, Assign assign) {
  if (iv.empty() || queries.empty()) return;
  std::vector<uint32_t> by_start(iv.size());
  std::iota(by_start.begin(), by_start.end(), 0u);
  std::sort(by_start.begin(), by_start.end(),
            [&](uint32_t a, uint32_t b) { return std::tie(iv[a].start_ns, a) < std::tie(iv[b].start_ns, b); });
  std::sort(queries.begin(), queries.end(), [](const Query& a, const Query& b) {
    return std::tie(a.time_ns, a.table, a.index) < std::tie(b.time_ns, b.table, b.index);
  });
  auto later_start = [&](uint32_t a, uint32_t b) { return std::tie(iv[a].start_ns, a) < std::tie(iv[b].start_ns, b); };
  std::vector<uint32_t> heap;
  std::size_t p = 0;
  for (const Query& q : queries) {
    while (p < by_start.size() && iv[by_start[p]].start_ns <= q.time_ns) {
      heap.push_back(by_start[p++]);
      std::push_heap(heap.begin(), heap.end(), later_start);
    }
    while (!heap.empty() && iv[heap.front()].end_ns <= q.time_ns) {
      std::pop_heap(heap.begin(), heap.end(), later_start);
      heap.pop_back();
    }
    if (!heap.empty()) assign(q, heap.front());
  }
}

// Replaces the warnings of an earlier correlate() (records of correlate.unmatched_records, or
// the "correlate: " prose of a trace of an older writer) with `fresh`.
void replace_warnings(TraceMeta& meta, const Diagnostics& fresh) {
  static const std::string kPrefix = "correlate: ";
  meta.warnings.remove_if([](const Diagnostic& d) {
    return d.source() == "correlate" || (d.code() == kOlderTraceCode && d.message.rfind(kPrefix, 0) == 0);
  });
  for (const Diagnostic& d : fresh) {
    Diagnostic w = d;
    w.message = kPrefix + d.message;
    meta.warnings.add(std::move(w));
  }
}

}  // namespace

CorrelationStats correlate(TraceStore& store) {
  CorrelationStats stats;
  const ApiIndex index(store.api_calls);
  const std::vector<ApiRecord>& api = store.api_calls;

  stats.unmatched_kernels = join_activities(store.kernels, api, index);
  stats.unmatched_memcpys = join_activities(store.memcpys, api, index);
  stats.unmatched_memsets = join_activities(store.memsets, api, index);
  for (AllocationRecord& r : store.allocations) {
    r.api_index = index.find(r.correlation_id);
    if (r.api_index == kNone32) {
      ++stats.unmatched_allocations;
    } else {
      r.thread_id = api[r.api_index].thread_id;
    }
  }
  for (SyncRecord& r : store.syncs) {
    const uint32_t a = index.find(r.correlation_id);
    if (a == kNone32) {
      ++stats.unmatched_syncs;
    } else {
      r.thread_id = api[a].thread_id;
    }
  }

  std::vector<Interval> region_iv;
  region_iv.reserve(store.regions.size());
  for (const RegionRecord& r : store.regions) {
    region_iv.push_back({r.thread_id, r.start_ns, std::max(r.end_ns, r.start_ns), true});
  }
  std::vector<Interval> marker_iv;
  marker_iv.reserve(store.markers.size());
  for (const MarkerRecord& m : store.markers) {
    const uint64_t end = m.is_range && !m.is_closed ? kForever : std::max(m.end_ns, m.start_ns);
    marker_iv.push_back({m.thread_id, m.start_ns, end, m.is_range});
  }
  const std::vector<uint32_t> region_order = sweep_order(region_iv);
  const std::vector<uint32_t> marker_order = sweep_order(marker_iv);
  nest(store.regions, region_iv, region_order);
  nest(store.markers, marker_iv, marker_order);

  enum : uint8_t { kKernels, kMemcpys, kMemsets, kAllocations };
  std::vector<Query> queries;
  queries.reserve(store.kernels.size() + store.memcpys.size() + store.memsets.size() + store.allocations.size());
  auto add = [&](const auto& records, uint8_t table) {
    for (std::size_t i = 0; i < records.size(); ++i) {
      const auto& r = records[i];
      if (r.api_index != kNone32) queries.push_back({r.thread_id, r.launch_ns, table, static_cast<uint32_t>(i)});
    }
  };
  add(store.kernels, kKernels);
  add(store.memcpys, kMemcpys);
  add(store.memsets, kMemsets);
  for (std::size_t i = 0; i < store.allocations.size(); ++i) {
    const AllocationRecord& r = store.allocations[i];
    if (r.api_index != kNone32)
      queries.push_back({r.thread_id, r.timestamp_ns, kAllocations, static_cast<uint32_t>(i)});
  }
  std::sort(queries.begin(), queries.end(), [](const Query& a, const Query& b) {
    return std::tie(a.thread_id, a.time_ns, a.table, a.index) < std::tie(b.thread_id, b.time_ns, b.table, b.index);
  });

  for (KernelRecord& r : store.kernels) r.region_index = r.marker_index = kNone32;
  for (MemcpyRecord& r : store.memcpys) r.region_index = r.marker_index = kNone32;
  for (MemsetRecord& r : store.memsets) r.region_index = r.marker_index = kNone32;
  for (AllocationRecord& r : store.allocations) r.region_index = kNone32;

  attribute(region_iv, region_order, queries, [&](const Query& q, uint32_t region) {
    switch (q.table) {
      case kKernels: store.kernels[q.index].region_index = region; break;
      case kMemcpys: store.memcpys[q.index].region_index = region; break;
      case kMemsets: store.memsets[q.index].region_index = region; break;
      default: store.allocations[q.index].region_index = region; break;
    }
  });
  {
    // Second chance for regions, by time on any thread (see attribute_any_thread).
    std::vector<Query> orphans;
    auto region_of = [&](const Query& q) -> uint32_t& {
      switch (q.table) {
        case kKernels: return store.kernels[q.index].region_index;
        case kMemcpys: return store.memcpys[q.index].region_index;
        case kMemsets: return store.memsets[q.index].region_index;
        default: return store.allocations[q.index].region_index;
      }
    };
    // Only threads that never opened a region of their own (worker threads) fall back:
    // on a thread with regions, "outside every region" is a real answer.
    std::vector<uint32_t> region_threads;
    for (const RegionRecord& r : store.regions) region_threads.push_back(r.thread_id);
    std::sort(region_threads.begin(), region_threads.end());
    region_threads.erase(std::unique(region_threads.begin(), region_threads.end()), region_threads.end());
    for (const Query& q : queries) {
      if (region_of(q) == kNone32 && !std::binary_search(region_threads.begin(), region_threads.end(), q.thread_id)) {
        orphans.push_back(q);
      }
    }
    // Activities with no API record: their GPU start time is the best time we have.
    auto add_unmatched = [&](const auto& records, uint8_t table) {
      for (std::size_t i = 0; i < records.size(); ++i) {
        if (records[i].api_index == kNone32) {
          orphans.push_back({0, records[i].start_ns, table, static_cast<uint32_t>(i)});
        }
      }
    };
    add_unmatched(store.kernels, kKernels);
    add_unmatched(store.memcpys, kMemcpys);
    add_unmatched(store.memsets, kMemsets);
    attribute_any_thread(region_iv, std::move(orphans), [&](const Query& q, uint32_t region) {
      region_of(q) = region;
      ++stats.regions_by_time;
    });
  }
  attribute(marker_iv, marker_order, queries, [&](const Query& q, uint32_t marker) {
    switch (q.table) {
      case kKernels: store.kernels[q.index].marker_index = marker; break;
      case kMemcpys: store.memcpys[q.index].marker_index = marker; break;
      case kMemsets: store.memsets[q.index].marker_index = marker; break;
      default: break;  // allocations have no marker link
    }
  });
  auto outside = [](const auto& records) {
    uint64_t n = 0;
    for (const auto& r : records) n += r.region_index == kNone32 ? 1 : 0;
    return n;
  };
  stats.unattributed_to_region = outside(store.kernels) + outside(store.memcpys) + outside(store.memsets);

  Diagnostics warnings;
  auto warn = [&](uint64_t n, const char* what) {
    if (n == 0) return;
    warnings.add("correlate.unmatched_records",
                 std::to_string(n) + " " + what +
                     " have no matching API record (their API records were dropped or not "
                     "captured): launching thread, launch time and region are unknown for them",
                 {static_cast<double>(n)});
  };
  warn(stats.unmatched_kernels, "kernels");
  warn(stats.unmatched_memcpys, "memcpys");
  warn(stats.unmatched_memsets, "memsets");
  warn(stats.unmatched_allocations, "allocations");
  warn(stats.unmatched_syncs, "syncs");
  replace_warnings(store.meta, warnings);
  return stats;
}

}  // namespace fpgaprof

#include "fpgaprof/analysis/device_analysis.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <unordered_map>
#include <utility>

namespace fpgaprof::analysis {
namespace {

// Union length of intervals that arrive in start order, kept as it grows (no interval stored).
struct Union {
  uint64_t start_ns = 0, end_ns = 0, total_ns = 0;
  bool open = false;
  void add(uint64_t s, uint64_t e) {
    if (e <= s) return;
    if (open && s <= end_ns) {
      end_ns = std::max(end_ns, e);
      return;
    }
    if (open) total_ns += end_ns - start_ns;
    start_ns = s;
    end_ns = e;
    open = true;
  }
  uint64_t total() const { return total_ns + (open ? end_ns - start_ns : 0); }
};

struct Acc {
  DeviceRow row;
  Union kernels, copies, all;  // all = kernels, copies and memsets
  std::array<Union, kDirectionCount> directions;
  std::unordered_map<uint32_t, DeviceThread> threads;
  DeviceThread* last_thread = nullptr;  // launches come in runs from one thread
  bool any = false;                     // some activity with a duration (for the span)
  void span(uint64_t s, uint64_t e) {
    if (e <= s) return;
    if (!any || s < row.first_start_ns) row.first_start_ns = s;
    if (!any || e > row.last_end_ns) row.last_end_ns = e;
    any = true;
  }
  DeviceThread& thread(uint32_t id) {
    if (last_thread == nullptr || last_thread->thread_id != id) {
      last_thread = &threads[id];  // references into an unordered_map survive rehashing
      last_thread->thread_id = id;
    }
    return *last_thread;
  }
};

// A table's records in order of start_ns: the table itself when it is sorted (as records
// usually come), else through an index sorted once (4 bytes per record).
template <class Record>
class InStartOrder {
 public:
  explicit InStartOrder(const std::vector<Record>& records) : records_(records) {
    const auto by_start = [](const Record& a, const Record& b) { return a.start_ns < b.start_ns; };
    if (std::is_sorted(records.begin(), records.end(), by_start)) return;
    order_.resize(records.size());
    std::iota(order_.begin(), order_.end(), 0u);
    std::stable_sort(order_.begin(), order_.end(),
                     [&](uint32_t a, uint32_t b) { return records[a].start_ns < records[b].start_ns; });
  }
  bool done() const { return pos_ >= records_.size(); }
  const Record& current() const { return order_.empty() ? records_[pos_] : records_[order_[pos_]]; }
  void next() { ++pos_; }

 private:
  const std::vector<Record>& records_;
  std::vector<uint32_t> order_;
  std::size_t pos_ = 0;
};

}  // namespace

DeviceReport analyze_devices(const TraceStore& store, const DeviceOptions& options, const MemoryReport* memory) {
  std::map<uint32_t, Acc> rows;  // by device id: few devices, ordered output
  uint32_t last_id = kNone32;
  Acc* last = nullptr;
  const auto acc = [&](uint32_t id) -> Acc& {
    if (last == nullptr || id != last_id) {
      last = &rows[id];
      last->row.device_id = id;
      last_id = id;
    }
    return *last;
  };

  for (const DeviceInfo& dev : store.devices) {
    Acc& a = acc(dev.id);
    if (a.row.has_record) continue;  // a repeated record: the first one describes the device
    a.row.has_record = true;
    a.row.ceilings = table_ceilings(dev);
  }

  // Kernels, copies and memsets in one walk by start time (a 3-way merge of the tables, each in
  // start order), so every device's unions grow as they come: nothing per interval is stored.
  InStartOrder<KernelRecord> ks(store.kernels);
  InStartOrder<MemcpyRecord> cs(store.memcpys);
  InStartOrder<MemsetRecord> ms(store.memsets);
  constexpr uint64_t kEnd = std::numeric_limits<uint64_t>::max();
  for (;;) {
    const uint64_t k = ks.done() ? kEnd : ks.current().start_ns;
    const uint64_t c = cs.done() ? kEnd : cs.current().start_ns;
    const uint64_t m = ms.done() ? kEnd : ms.current().start_ns;
    if (ks.done() && cs.done() && ms.done()) break;
    if (!ks.done() && k <= c && k <= m) {
      const KernelRecord& r = ks.current();
      Acc& a = acc(r.device_id);
      a.row.kernel_count += 1;
      a.row.kernel_time_ns += r.duration_ns();
      a.kernels.add(r.start_ns, r.end_ns);
      a.all.add(r.start_ns, r.end_ns);
      a.span(r.start_ns, r.end_ns);
      DeviceThread& t = a.thread(r.thread_id);
      t.kernel_count += 1;
      t.kernel_time_ns += r.duration_ns();
      ks.next();
    } else if (!cs.done() && c <= m) {
      const MemcpyRecord& r = cs.current();
      Acc& a = acc(r.device_id);
      const Direction dir = direction_of(r.copy_kind);
      DeviceCopyStats& st = a.row.by_direction[static_cast<std::size_t>(dir)];
      st.count += 1;
      st.bytes += r.bytes;
      // As the transfer analysis: a copy without duration adds no link capacity, so its bytes
      // stay out of the link % too.
      if ((dir == Direction::kHtoD || dir == Direction::kDtoH) && r.end_ns > r.start_ns) st.link_bytes += r.bytes;
      if (r.end_ns > r.start_ns) st.timed_bytes += r.bytes;
      a.row.copy_count += 1;
      a.row.copy_bytes += r.bytes;
      a.copies.add(r.start_ns, r.end_ns);
      a.directions[static_cast<std::size_t>(dir)].add(r.start_ns, r.end_ns);
      a.all.add(r.start_ns, r.end_ns);
      a.span(r.start_ns, r.end_ns);
      cs.next();
    } else {
      const MemsetRecord& r = ms.current();
      Acc& a = acc(r.device_id);
      a.row.memset_count += 1;
      a.row.memset_bytes += r.bytes;
      a.all.add(r.start_ns, r.end_ns);
      a.span(r.start_ns, r.end_ns);
      ms.next();
    }
  }
  for (const AllocationRecord& al : store.allocations) acc(al.device_id).row.has_memory = true;

  MemoryReport own_memory;
  if (memory == nullptr && !store.allocations.empty()) {
    own_memory = analyze_memory(store, 0, {}, RegionRows::kInstances);
    memory = &own_memory;
  }

  DeviceReport report;
  if (store.meta.end_ns > store.meta.start_ns) {
    report.wall_ns = store.meta.end_ns - store.meta.start_ns;
  } else {
    bool any = false;
    uint64_t lo = 0, hi = 0;
    for (const auto& [id, a] : rows) {
      if (!a.any) continue;
      lo = any ? std::min(lo, a.row.first_start_ns) : a.row.first_start_ns;
      hi = any ? std::max(hi, a.row.last_end_ns) : a.row.last_end_ns;
      any = true;
    }
    report.wall_ns = any ? hi - lo : 0;
  }

  report.devices.reserve(rows.size());
  for (auto& [id, a] : rows) {
    DeviceRow& r = a.row;
    r.kernel_busy_ns = a.kernels.total();
    r.copy_busy_ns = a.copies.total();
    r.busy_ns = a.all.total();
    r.idle_ns = report.wall_ns > r.busy_ns ? report.wall_ns - r.busy_ns : 0;
    if (report.wall_ns > 0) {
      r.busy_fraction = static_cast<double>(r.busy_ns) / static_cast<double>(report.wall_ns);
      r.idle_fraction = static_cast<double>(r.idle_ns) / static_cast<double>(report.wall_ns);
    }
    double link = options.link_bytes_per_s;
    if (link <= 0 && r.has_record) link = r.ceilings.link_bytes_per_s;
    for (std::size_t d = 0; d < kDirectionCount; ++d) {
      DeviceCopyStats& st = r.by_direction[d];
      st.busy_ns = a.directions[d].total();
      const auto dir = static_cast<Direction>(d);
      if (dir == Direction::kHtoD || dir == Direction::kDtoH) st.link_bytes_per_s = link;
    }
    if (memory != nullptr) {
      for (const DeviceMemory& dm : memory->devices) {
        if (dm.device_id != id) continue;
        r.has_memory = true;
        r.memory_peak_bytes = dm.peak_in_use_bytes;
        r.memory_peak_ns = dm.peak_ns;
        r.memory_final_bytes = dm.final_in_use_bytes;
      }
    }
    r.threads.reserve(a.threads.size());
    for (const auto& [tid, t] : a.threads) r.threads.push_back(t);
    std::sort(r.threads.begin(), r.threads.end(), [](const DeviceThread& x, const DeviceThread& y) {
      if (x.kernel_count != y.kernel_count) return x.kernel_count > y.kernel_count;
      return x.thread_id < y.thread_id;
    });
    report.devices.push_back(std::move(r));
  }

  LoadBalance& b = report.balance;
  b.device_count = static_cast<uint32_t>(report.devices.size());
  double sum = 0;
  for (const DeviceRow& r : report.devices) {
    sum += static_cast<double>(r.busy_ns);
    b.active_devices += r.busy_ns > 0 ? 1 : 0;
    if (b.slowest_device == kNone32 || r.busy_ns > b.max_busy_ns) {
      b.max_busy_ns = r.busy_ns;
      b.slowest_device = r.device_id;
    }
    if (b.least_busy_device == kNone32 || r.busy_ns < b.min_busy_ns) {
      b.min_busy_ns = r.busy_ns;
      b.least_busy_device = r.device_id;
    }
  }
  if (b.device_count > 0) {
    b.mean_busy_ns = sum / static_cast<double>(b.device_count);
    b.imbalance = b.mean_busy_ns > 0 ? static_cast<double>(b.max_busy_ns) / b.mean_busy_ns : 0.0;
    b.spread_ns = b.max_busy_ns - b.min_busy_ns;
    b.spread_fraction = b.max_busy_ns > 0 ? static_cast<double>(b.spread_ns) / static_cast<double>(b.max_busy_ns) : 0.0;
  }
  return report;
}

}  // namespace fpgaprof::analysis

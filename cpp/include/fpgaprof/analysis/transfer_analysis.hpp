// Transfer accounting: memcpy count, bytes, busy time, achieved bandwidth, pinned/pageable and
// sync/async split, overlap with kernels and host wait, per direction, for the whole trace, per
// user region path or region instance (TransferOptions::region_rows; inclusive: a copy in a
// nested region also counts for its ancestors) and per HLO op (when the caller supplies a
// copy -> op mapping). A region path's busy time, kernel overlap and host wait are unions over
// all its instances' copies (waits), like the trace's: instances that overlap in time (on
// several threads) count the shared time once; count, bytes and duration_sum_ns are sums. Flags pageable copies and
// floods of tiny copies (thresholds in TransferOptions, documented in docs/roofline.md). Pure function of the store;
// thread-safe for concurrent calls on a store nobody mutates.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "fpgaprof/analysis/interval_set.hpp"
#include "fpgaprof/analysis/region_paths.hpp"
#include "fpgaprof/records.hpp"
#include "fpgaprof/trace_store.hpp"

namespace fpgaprof::analysis {

enum class Direction : uint8_t { kHtoD = 0, kDtoH, kDtoD, kPtoP, kHtoH, kOther, kCount };
inline constexpr std::size_t kDirectionCount = static_cast<std::size_t>(Direction::kCount);
const char* direction_name(Direction d);  // "HtoD", ...
// HtoA counts as HtoD, AtoH as DtoH, AtoA/AtoD/DtoA as DtoD; kUnknown as kOther.
Direction direction_of(CopyKind kind);

struct TransferStats {
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t busy_ns = 0;                           // union of the copies' [start, end) intervals
  uint64_t duration_sum_ns = 0;                   // plain sum (>= busy_ns when copies overlap)
  uint64_t kernel_overlap_ns = 0;                 // part of busy_ns during which some kernel ran
  uint64_t pinned_count = 0, pageable_count = 0;  // host side of HtoD/DtoH copies (host <-> device)
  uint64_t pageable_bytes = 0;
  uint64_t sync_count = 0, async_count = 0;
  uint64_t tiny_count = 0;  // copies below TransferOptions::tiny_bytes
  // Host link (HtoD and DtoH stats only; 0 elsewhere). Each copy crosses the link of the device
  // that ran it (MemcpyRecord::device_id), so the link's use is judged per device:
  // link_bytes = bytes of the copies on devices whose link peak is known, link_capacity_bytes =
  // sum over those devices of (union of that device's copy intervals) x its link peak, i.e.
  // what the links in use could have moved while they were busy. Copies on two devices at the
  // same time thus count against two links, never one.
  uint64_t link_bytes = 0;
  double link_capacity_bytes = 0;
  uint64_t timed_bytes = 0;  // bytes of the copies with a duration
  // timed_bytes / busy time, bytes per second; 0 without busy time (a copy without timestamps
  // adds bytes moved in no time: left out of the rate, as out of link %).
  double achieved_bytes_per_s() const {
    return busy_ns > 0 ? static_cast<double>(timed_bytes) * 1e9 / static_cast<double>(busy_ns) : 0.0;
  }
};

// kRegion: one region record (instance); kRegionPath: every instance of one RegionPaths path.
enum class GroupKind : uint8_t { kTrace = 0, kRegion = 1, kOp = 2, kRegionPath = 3 };
const char* group_kind_name(GroupKind k);

struct TransferGroup {
  GroupKind kind = GroupKind::kTrace;
  uint32_t index = kNone32;  // region index / op index / path id; kNone32 for the trace
  std::array<TransferStats, kDirectionCount> by_direction{};
  TransferStats all;          // every direction together (busy = union over directions)
  uint64_t host_wait_ns = 0;  // union of SyncRecord intervals (trace, regions; 0 for ops),
                              // stream-wait-event records left out (device-side, no host wait)
  uint64_t sync_calls = 0;    // SyncRecords counted in host_wait_ns
};

struct TransferFlag {
  std::string kind;  // "pageable", "tiny_transfers" or "link_exceeded" (copies
                     // beat the link peak by > 10 %: the peak is wrong here)
  GroupKind group_kind = GroupKind::kTrace;
  uint32_t index = kNone32;
  uint64_t count = 0;
  uint64_t bytes = 0;
  std::string message;  // cause + fix, one line
};

struct TransferOptions {
  uint64_t tiny_bytes = 64 * 1024;    // a copy below this is latency-bound on PCIe
  uint64_t tiny_flood_count = 1000;   // flag when at least this many tiny copies ...
  double tiny_flood_fraction = 0.5;   // ... and they are at least this share of all copies
  std::size_t max_region_flags = 10;  // per flag kind, the worst regions only (rest counted)
  double link_bytes_per_s = 0;        // host-link peak (one direction); 0: from the devices
  std::string link_source;            // "measured", "user", ...; default "table" / "unknown"
  // What link_bytes_per_s is, for reports ("PCIe gen5 x16", "measured by fpgaprof calibrate on
  // 2026-11-22 (PCIe gen5 x16)"); "": the report shows link_source instead.
  std::string link_description;
  RegionRows region_rows = RegionRows::kPaths;  // region groups per path or per instance
  // The store's region paths when the caller has them (not owned; built from the same store);
  // nullptr: built here when region_rows is kPaths.
  const RegionPaths* region_paths = nullptr;
};

struct TransferReport {
  // [0] = trace; then region paths (kRegionPath) or region instances (kRegion) with copies or
  // syncs, in order of their first copy or sync; then ops.
  std::vector<TransferGroup> groups;
  std::vector<TransferFlag> flags;  // trace first, then the worst region paths (instances)
  uint64_t flags_left_out = 0;      // region flags beyond TransferOptions::max_region_flags
  double link_bytes_per_s = 0;      // peak used for link_percent, 0 unknown
  std::string link_source;          // "table", "measured", "user" or "unknown"
  std::string link_description;
  // Use of the host link(s) by a group's HtoD or DtoH copies, percent: 100 x link_bytes /
  // link_capacity_bytes (TransferStats). With one device it is the achieved bandwidth over
  // that device's link peak; with several, the links' own peaks weighted by how long each was
  // busy, so it stays <= 100 % for physically possible copies however devices overlap. Each
  // device's peak: TransferOptions::link_bytes_per_s when given (every link alike), else its
  // DeviceInfo's PCIe generation and width; copies on a device without a known peak are left
  // out. 0 when no copy of the group and direction has a known peak.
  double link_percent(const TransferGroup& g, Direction d) const;
};

// `op_of_memcpy`: empty, or one op index (or kNone32) per TraceStore::memcpys entry.
// `kernel_busy`: the union of kernel intervals when the caller already has it (else built here).
// Throws Error(kInvalidArgument) when op_of_memcpy is non-empty and of the wrong size, or
// options.region_paths was built from another store.
TransferReport analyze_transfers(const TraceStore& store, const TransferOptions& options = {},
                                 const std::vector<uint32_t>& op_of_memcpy = {},
                                 const IntervalSet* kernel_busy = nullptr);

// Union of every kernel's [start_ns, end_ns) in the store.
IntervalSet kernel_busy_intervals(const TraceStore& store);
// Whether the store's kernels are in start order (as they usually arrive): a union of their
// intervals can then be merged while reading them.
bool kernels_in_start_order(const TraceStore& store);

}  // namespace fpgaprof::analysis

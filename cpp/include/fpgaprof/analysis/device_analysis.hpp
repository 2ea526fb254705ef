// Several GPUs in one process: one row per device (kernels, busy and idle time, copies per
// direction against that device's own host link, device-memory peak, table ceilings, the
// host threads that launched its kernels) and the load balance between the devices.
//
// Which devices: every DeviceInfo in the store and every device id that a kernel, copy,
// memset or allocation names (MemcpyRecord::device_id, the device that ran the copy; a peer
// copy's source and destination ids are not rows of their own). A device with a record and no
// activity is a row with zero busy time: a GPU the program left idle counts in the balance.
// Rules and units: docs/roofline.md, "Several GPUs". Pure function of the store; thread-safe
// for concurrent calls on a store nobody mutates.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "fpgaprof/analysis/ceilings.hpp"
#include "fpgaprof/analysis/memory_analysis.hpp"
#include "fpgaprof/analysis/transfer_analysis.hpp"
#include "fpgaprof/records.hpp"
#include "fpgaprof/trace_store.hpp"

namespace fpgaprof::analysis {

// The copies of one direction that one device ran.
struct DeviceCopyStats {
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t busy_ns = 0;  // union of their [start, end) intervals
  // HtoD and DtoH only (0 elsewhere): bytes of the copies with a duration, and this device's
  // host-link peak in bytes/s (DeviceOptions::link_bytes_per_s, else its PCIe generation x
  // width; 0 unknown).
  uint64_t link_bytes = 0;
  double link_bytes_per_s = 0;
  uint64_t timed_bytes = 0;  // bytes of the copies with a duration (every direction)
  // timed_bytes / busy time, bytes per second; 0 without busy time (a copy without timestamps
  // adds bytes moved in no time: left out of the rate).
  double achieved_bytes_per_s() const {
    return busy_ns > 0 ? static_cast<double>(timed_bytes) * 1e9 / static_cast<double>(busy_ns) : 0.0;
  }
  // Use of this device's link while its copies of this direction ran, percent:
  // 100 x link_bytes / (busy time x link peak). The trace-level link % of the transfer analysis
  // (TransferReport::link_percent) restricted to one device. 0 when the peak is unknown.
  double link_percent() const {
    const double capacity = static_cast<double>(busy_ns) * 1e-9 * link_bytes_per_s;
    return capacity > 0 ? 100.0 * static_cast<double>(link_bytes) / capacity : 0.0;
  }
};

// One host thread that launched kernels on a device (KernelRecord::thread_id, joined by
// correlate(); 0 = unknown, the kernel had no API record).
struct DeviceThread {
  uint32_t thread_id = 0;
  uint64_t kernel_count = 0;
  uint64_t kernel_time_ns = 0;  // sum of those kernels' durations
};

struct DeviceRow {
  uint32_t device_id = 0;
  bool has_record = false;  // a DeviceInfo with this id is in the store
  Ceilings ceilings;        // table_ceilings(its DeviceInfo); all 0 without a record
  uint64_t kernel_count = 0;
  uint64_t kernel_time_ns = 0;  // sum of kernel durations
  uint64_t kernel_busy_ns = 0;  // union of kernel intervals
  uint64_t copy_count = 0;
  uint64_t copy_bytes = 0;
  uint64_t copy_busy_ns = 0;  // union of its copies' intervals, every direction
  uint64_t memset_count = 0;
  uint64_t memset_bytes = 0;
  uint64_t busy_ns = 0;         // union of its kernels, copies and memsets
  uint64_t idle_ns = 0;         // DeviceReport::wall_ns - busy_ns, never below 0
  double busy_fraction = 0;     // busy_ns / wall_ns (0 when wall_ns is 0)
  double idle_fraction = 0;     // idle_ns / wall_ns
  uint64_t first_start_ns = 0;  // first activity start, last activity end (0, 0: none)
  uint64_t last_end_ns = 0;
  std::array<DeviceCopyStats, kDirectionCount> by_direction{};
  bool has_memory = false;         // allocation records name this device
  uint64_t memory_peak_bytes = 0;  // MemoryReport's DeviceMemory of this device
  uint64_t memory_peak_ns = 0;
  uint64_t memory_final_bytes = 0;
  std::vector<DeviceThread> threads;  // launching threads, most kernels first (then by id)
};

// How evenly the devices were kept busy (every row counts, idle ones included).
struct LoadBalance {
  uint32_t device_count = 0;    // rows compared
  uint32_t active_devices = 0;  // rows with busy_ns > 0
  uint64_t max_busy_ns = 0;
  uint64_t min_busy_ns = 0;
  double mean_busy_ns = 0;
  // max / mean busy: 1 = even; N = one of N devices did everything. 0 when nothing was busy.
  double imbalance = 0;
  // The device with the most busy time (lowest id on ties): with the work split evenly in
  // time it would finish last, so the others wait for it. kNone32 without rows.
  uint32_t slowest_device = kNone32;
  uint32_t least_busy_device = kNone32;  // fewest busy time (lowest id on ties)
  uint64_t spread_ns = 0;                // max - min busy
  double spread_fraction = 0;            // spread / max busy (0 when max is 0)
};

struct DeviceOptions {
  // Host-link peak for every device alike (measured or the user's), bytes/s; 0: each device's
  // own from its PCIe generation and width (as TransferOptions::link_bytes_per_s).
  double link_bytes_per_s = 0;
};

struct DeviceReport {
  // Wall time the idle shares are taken of: TraceMeta end - start when positive, else the
  // span from the first activity start to the last activity end over every device.
  uint64_t wall_ns = 0;
  std::vector<DeviceRow> devices;  // by device id
  LoadBalance balance;
};

// `memory`: the store's memory analysis when the caller has it (its `devices` are used), else
// built here. Never throws for any store content.
DeviceReport analyze_devices(const TraceStore& store, const DeviceOptions& options = {},
                             const MemoryReport* memory = nullptr);

}  // namespace fpgaprof::analysis

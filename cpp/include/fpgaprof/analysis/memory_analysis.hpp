// Device memory: allocation/free timeline (AllocationRecord; a release is matched to the live
// allocation with the same device and address), bytes in use over time, peak per device, per
// trace and per user region path or region instance, and the largest buffers with who
// allocated them. Pure function of
// the store; thread-safe for concurrent calls on a store nobody mutates.
#pragma once

#include <cstdint>
#include <vector>

#include "fpgaprof/analysis/region_paths.hpp"
#include "fpgaprof/records.hpp"
#include "fpgaprof/trace_store.hpp"

namespace fpgaprof::analysis {

struct MemoryPoint {
  uint64_t timestamp_ns = 0;
  uint64_t in_use_bytes = 0;         // all devices together, after this event
  uint64_t device_in_use_bytes = 0;  // the event's device (allocations[allocation_index].device_id) after it
  uint32_t allocation_index = 0;     // the TraceStore::allocations entry of this event
};

struct BufferInfo {
  uint32_t allocation_index = 0;  // the allocation record
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint64_t alloc_ns = 0;
  uint64_t free_ns = kNone64;  // kNone64: still allocated when the trace stopped
  uint32_t device_id = 0;
  uint32_t thread_id = 0;
  uint32_t region_index = kNone32;
  uint32_t api_index = kNone32;  // the allocating API call (its name: api_function_of(api_calls[api_index]).name)
  uint32_t op_index = kNone32;   // HLO op when the caller's mapping gives one
  MemoryKind memory_kind = MemoryKind::kUnknown;
};

struct DeviceMemory {
  uint32_t device_id = 0;
  uint64_t peak_in_use_bytes = 0;
  uint64_t peak_ns = 0;
  uint64_t final_in_use_bytes = 0;
};

struct RegionMemory {
  uint32_t region_index = 0;
  uint64_t in_use_at_start_bytes = 0;  // all devices
  uint64_t peak_in_use_bytes = 0;      // max bytes in use (all devices) while the region was open
  uint64_t allocated_bytes = 0;        // allocated inside the region (inclusive of nested regions)
  uint64_t freed_bytes = 0;
  uint32_t allocations = 0;
  uint32_t frees = 0;
};

// Every instance of one region path (RegionPaths): the peak is the highest of the instances'
// peaks, counts and bytes are summed (inclusive of nested regions, as RegionMemory).
struct RegionPathMemory {
  uint32_t path = 0;  // RegionPaths id
  uint64_t instances = 0;
  uint64_t peak_in_use_bytes = 0;        // max over instances of RegionMemory::peak_in_use_bytes
  uint32_t peak_region_index = kNone32;  // the instance that reached it (earliest start on ties)
  uint64_t in_use_at_start_bytes = 0;    // that instance's level at its start
  uint64_t allocated_bytes = 0;          // sums over instances
  uint64_t freed_bytes = 0;
  uint64_t allocations = 0;
  uint64_t frees = 0;
};

struct MemoryReport {
  std::vector<MemoryPoint> timeline;  // matched events in time order
  std::vector<DeviceMemory> devices;
  uint64_t peak_in_use_bytes = 0;  // all devices together
  uint64_t peak_ns = 0;
  uint64_t allocation_count = 0, free_count = 0;
  uint64_t unmatched_frees = 0;  // release of an address not allocated in the trace
  uint64_t unmatched_free_bytes = 0;
  uint64_t reallocated_live = 0;  // allocation at a live address (previous one dropped)
  uint64_t never_freed_count = 0, never_freed_bytes = 0;
  std::vector<BufferInfo> largest;  // top `top_n` allocations by bytes, largest first
  // RegionRows::kInstances: one per TraceStore::regions entry; kPaths: empty.
  std::vector<RegionMemory> regions;
  // RegionRows::kPaths: one per region path in RegionPaths order; kInstances: empty.
  std::vector<RegionPathMemory> region_paths;
};

// `op_of_allocation`: empty or one op index (or kNone32) per allocation record. `top_n`: how
// many buffers `largest` keeps. `region_rows`: which region table to fill; `region_paths`: the
// store's paths when the caller has them (not owned), else built here. Throws
// Error(kInvalidArgument) for a mapping of the wrong size or paths built from another store.
MemoryReport analyze_memory(const TraceStore& store, std::size_t top_n = 20,
                            const std::vector<uint32_t>& op_of_allocation = {},
                            RegionRows region_rows = RegionRows::kPaths, const RegionPaths* region_paths = nullptr);

}  // namespace fpgaprof::analysis

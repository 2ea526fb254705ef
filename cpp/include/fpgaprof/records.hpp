// Owned trace records: the plain structs every layer above the CUPTI seam works with.
//
// Units are in the field names: *_ns are nanoseconds on the trace clock (CLOCK_REALTIME
// nanoseconds, the clock cuptiGetTimestamp() reports on Linux; host-side times are taken
// with the same clock), *_bytes are bytes. Strings are interned in the TraceStore's string
// table and referenced by StringId. No CUPTI type appears here.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace fpgaprof {

using StringId = uint32_t;                // index into TraceStore::strings
inline constexpr StringId kNoString = 0;  // string 0 is always ""
inline constexpr uint32_t kNone32 = std::numeric_limits<uint32_t>::max();
inline constexpr uint64_t kNone64 = std::numeric_limits<uint64_t>::max();

// Direction of a copy. Values are ours (stable in the trace file), not CUPTI's.
enum class CopyKind : uint8_t {
  kUnknown = 0,
  kHtoD = 1,
  kDtoH = 2,
  kDtoD = 3,
  kHtoH = 4,
  kPtoP = 5,  // peer-to-peer, device to another device
  kHtoA = 6,  // host to CUDA array (and the array variants below)
  kAtoH = 7,
  kAtoA = 8,
  kAtoD = 9,
  kDtoA = 10,
};

// Where the memory of one side of a copy/memset/allocation lives.
enum class MemoryKind : uint8_t {
  kUnknown = 0,
  kPageable = 1,
  kPinned = 2,
  kDevice = 3,
  kArray = 4,
  kManaged = 5,
  kDeviceStatic = 6,
  kManagedStatic = 7,
};

enum class ApiKind : uint8_t { kRuntime = 0, kDriver = 1 };

enum class SyncKind : uint8_t {
  kUnknown = 0,
  kEventSynchronize = 1,
  kStreamWaitEvent = 2,
  kStreamSynchronize = 3,
  kContextSynchronize = 4,
};

// How a kernel was launched: grid and block shape, per-thread and per-block resources, and
// the CUDA graph node it belongs to. XLA launches the same kernel with the same configuration
// many times, so each distinct configuration is stored once in TraceStore::launch_configs and
// kernels refer to it by index (TraceStore::intern_launch_config). A graph node always
// launches with one configuration, so its ids live here too.
struct LaunchConfig {
  uint32_t grid_x = 0, grid_y = 0, grid_z = 0;     // blocks per grid dimension
  uint32_t block_x = 0, block_y = 0, block_z = 0;  // threads per block dimension
  uint32_t registers_per_thread = 0;
  uint32_t static_shared_bytes = 0;   // per block
  uint32_t dynamic_shared_bytes = 0;  // per block
  uint32_t local_bytes_per_thread = 0;
  uint32_t graph_id = 0;  // non-zero when launched from a CUDA graph
  uint64_t graph_node_id = 0;

  bool operator==(const LaunchConfig&) const = default;
  // Thread blocks in the grid (0 when the configuration is unknown).
  uint64_t blocks() const {
    return static_cast<uint64_t>(grid_x) * static_cast<uint64_t>(grid_y) * static_cast<uint64_t>(grid_z);
  }
};

// One GPU kernel execution. 64 bytes: a 10-million-kernel trace must fit in memory with room
// for its analysis (docs/performance.md), so everything kernels share lives in LaunchConfig.
struct KernelRecord {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t launch_ns = 0;       // start of the launching API call; 0 when not joined
  uint32_t correlation_id = 0;  // CUPTI correlation id (joins the API call)
  uint32_t thread_id = 0;       // OS thread id (gettid) of the launching thread; 0 unknown
  StringId name = kNoString;    // mangled or plain kernel name as CUPTI reports it
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  uint32_t launch_config = kNone32;  // index into TraceStore::launch_configs; kNone32 unknown
  uint32_t api_index = kNone32;      // index into TraceStore::api_calls, set by correlate()
  uint32_t region_index = kNone32;   // innermost user region open on the launching thread
  uint32_t marker_index = kNone32;   // innermost NVTX range open on the launching thread

  uint64_t duration_ns() const { return end_ns > start_ns ? end_ns - start_ns : 0; }
};
static_assert(sizeof(KernelRecord) == 64, "KernelRecord grew: see the note above it");

// One memory copy (memcpy and peer memcpy activity records).
struct MemcpyRecord {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t launch_ns = 0;
  uint64_t bytes = 0;
  uint32_t correlation_id = 0;
  uint32_t thread_id = 0;
  uint32_t device_id = 0;            // device that executed the copy
  uint32_t src_device_id = kNone32;  // peer copies only
  uint32_t dst_device_id = kNone32;  // peer copies only
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  CopyKind copy_kind = CopyKind::kUnknown;
  MemoryKind src_kind = MemoryKind::kUnknown;
  MemoryKind dst_kind = MemoryKind::kUnknown;
  bool is_async = false;
  uint32_t graph_id = 0;
  uint32_t api_index = kNone32;
  uint32_t region_index = kNone32;
  uint32_t marker_index = kNone32;

  uint64_t duration_ns() const { return end_ns > start_ns ? end_ns - start_ns : 0; }
};

struct MemsetRecord {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t launch_ns = 0;
  uint64_t bytes = 0;
  uint32_t value = 0;
  uint32_t correlation_id = 0;
  uint32_t thread_id = 0;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  MemoryKind memory_kind = MemoryKind::kUnknown;
  bool is_async = false;
  uint32_t graph_id = 0;
  uint32_t api_index = kNone32;
  uint32_t region_index = kNone32;
  uint32_t marker_index = kNone32;

  uint64_t duration_ns() const { return end_ns > start_ns ? end_ns - start_ns : 0; }
};

// One device memory allocation or release (MEMORY2 activity).
struct AllocationRecord {
  uint64_t timestamp_ns = 0;
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint64_t pc = 0;  // host program counter of the allocating call (0 unknown)
  uint32_t correlation_id = 0;
  uint32_t thread_id = 0;  // joined through the API call; 0 unknown
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  MemoryKind memory_kind = MemoryKind::kUnknown;
  bool is_alloc = true;         // false: release
  bool is_async = false;        // stream-ordered (memory pool) allocation
  StringId source = kNoString;  // allocation source/name if CUPTI gives one
  uint32_t api_index = kNone32;
  uint32_t region_index = kNone32;
};

// A CUDA runtime or driver API function, stored once in TraceStore::api_functions (a trace
// calls a few dozen functions millions of times).
struct ApiFunction {
  StringId name = kNoString;  // e.g. "cuLaunchKernelEx"
  uint32_t callback_id = 0;   // CUPTI cbid within its domain
  ApiKind kind = ApiKind::kDriver;

  bool operator==(const ApiFunction&) const = default;
};

// One CUDA runtime or driver API call. 32 bytes (10 million launches: 305 MiB).
struct ApiRecord {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t correlation_id = 0;
  uint32_t thread_id = 0;       // OS thread id (gettid)
  uint32_t function = kNone32;  // index into TraceStore::api_functions; kNone32 unknown
  uint32_t return_value = 0;    // CUresult / cudaError_t
};
static_assert(sizeof(ApiRecord) == 32, "ApiRecord grew: see the note above it");

// Host-side synchronization (the host waited for the device).
struct SyncRecord {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t correlation_id = 0;
  uint32_t thread_id = 0;  // joined through the API call
  uint32_t context_id = 0;
  uint32_t stream_id = kNone32;
  SyncKind kind = SyncKind::kUnknown;
};

// An NVTX range or instantaneous marker captured through CUPTI (any domain: XLA's "TSL",
// fpgaprof's own, the user's). Built from CUPTI's START/END record pairs.
struct MarkerRecord {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;  // == start_ns for an instantaneous marker
  uint32_t thread_id = 0;
  uint32_t id = 0;  // CUPTI marker id
  StringId domain = kNoString;
  StringId name = kNoString;
  uint32_t parent = kNone32;  // enclosing range on the same thread (index), set by correlate()
  uint16_t depth = 0;
  bool is_range = true;
  bool is_closed = true;  // false: the range was still open when the trace stopped
};

// A user region from fpgaprof.region(); recorded host-side, with or without a GPU.
struct RegionRecord {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t thread_id = 0;
  StringId name = kNoString;
  uint32_t parent = kNone32;  // enclosing region on the same thread (index)
  uint16_t depth = 0;
};

// CUPTI's own overhead (buffer flushes, instrumentation, ...).
struct OverheadRecord {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t object_id = 0;     // thread or device id, per object_kind
  uint8_t object_kind = 0;    // 1 process, 2 thread, 3 device, 4 context, 5 stream
  StringId kind = kNoString;  // "CUPTI_BUFFER_FLUSH", ...
};

// One reading of a GPU's power and energy counters through NVML (docs/capture.md, "GPU power
// and energy"), taken by the capture layer's sampling thread. Only readings in which a value
// changed are kept, plus the first and the last of each device; an interval whose energy counter
// went backwards or wrapped takes its energy from the power readings instead, with one warning.
struct PowerSampleRecord {
  uint64_t time_ns = 0;    // trace clock at the reading (middle of the energy call; of the power call without one)
  uint64_t energy_mj = 0;  // nvmlDeviceGetTotalEnergyConsumption: mJ since the driver loaded;
                           //   kNoEnergy when the device has no energy counter
  uint32_t device_id = 0;  // CUDA device id (DeviceInfo::id), matched through the UUID
  uint32_t power_mw = 0;   // nvmlDeviceGetPowerUsage: mW; kNoPower when it could not be read
};
inline constexpr uint64_t kNoEnergy = UINT64_MAX;
inline constexpr uint32_t kNoPower = UINT32_MAX;

// External correlation (e.g. framework ids pushed with cuptiActivityPushExternalCorrelationId).
struct ExternalCorrelationRecord {
  uint32_t correlation_id = 0;
  uint32_t external_kind = 0;
  uint64_t external_id = 0;
};

// One GPU as CUPTI's device record and the driver describe it.
struct DeviceInfo {
  uint32_t id = 0;
  std::string name;
  std::string uuid;
  uint32_t compute_capability_major = 0;
  uint32_t compute_capability_minor = 0;
  uint32_t sm_count = 0;
  uint64_t core_clock_khz = 0;    // max SM clock
  uint64_t memory_clock_khz = 0;  // max memory clock
  uint32_t memory_bus_width_bits = 0;
  uint64_t global_memory_bytes = 0;
  uint64_t l2_cache_bytes = 0;
  uint64_t shared_memory_per_sm_bytes = 0;
  uint32_t max_threads_per_sm = 0;
  uint32_t max_registers_per_sm = 0;
  uint32_t pcie_generation = 0;  // 0 unknown
  uint32_t pcie_link_width = 0;  // lanes; 0 unknown

  // 2 (DDR) * memory clock * bus width / 8, in bytes per second. 0 when unknown.
  double peak_dram_bandwidth_bytes_per_s() const {
    return 2.0 * static_cast<double>(memory_clock_khz) * 1e3 * static_cast<double>(memory_bus_width_bits) / 8.0;
  }
};

}  // namespace fpgaprof

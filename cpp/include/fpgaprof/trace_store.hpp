// TraceStore: everything one trace holds, as owned records. Built by the collector (or read
// from a trace file), then only read. Not thread-safe for concurrent mutation.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fpgaprof/diagnostics.hpp"
#include "fpgaprof/records.hpp"

namespace fpgaprof {

// Interned strings. Id 0 is the empty string.
class StringTable {
 public:
  StringTable() {
    strings_.emplace_back();
    index_.emplace(std::string(), 0);
  }
  StringId intern(std::string_view s);
  const std::string& get(StringId id) const;  // throws Error(kInvalidArgument) if out of range
  std::size_t size() const { return strings_.size(); }
  const std::vector<std::string>& all() const { return strings_; }

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, StringId> index_;
};

// One optimized HLO module as XLA dumped it.
struct HloModuleText {
  std::string name;         // HloModule name, e.g. "jit_forward"
  int64_t program_id = -1;  // XLA program id (the dump file's module_NNNN), -1 unknown
  std::string text;         // HLO text after optimizations
  // XLA's buffer assignment of the module (the allocations of its
  // *after_optimizations-buffer-assignment.txt, hlo/buffer_assignment.hpp) and its live ranges
  // (*-live-range.txt); empty when not dumped (traces written before they were kept).
  std::string buffer_assignment;
  std::string live_ranges;
};

// One hardware-counter value for one profiled range (one kernel in auto-range mode).
// Counter data comes from kernel replay and is kept apart from timing data.
struct CounterRecord {
  uint32_t range_index = 0;         // order of the range in the counter session
  StringId range_name = kNoString;  // kernel name of the range
  uint32_t kernel_index = kNone32;  // index into TraceStore::kernels when matched
  uint32_t memcpy_index = kNone32;  // index into TraceStore::memcpys when the range was a
                                    // device-to-device copy (the Range Profiler counts those too)
  StringId metric = kNoString;      // e.g. "dram__bytes_read.sum"
  double value = 0.0;
};

// Trace-level facts that are not records.
struct TraceMeta {
  uint64_t start_ns = 0;                  // trace clock when tracing started
  uint64_t end_ns = 0;                    // trace clock when tracing stopped
  uint64_t dropped_records = 0;           // CUPTI records lost (never silently)
  uint64_t incomplete_records = 0;        // records with start=end=0 (kernel replay, or a full
                                          // device timestamp buffer: the warning says which)
  uint32_t driver_version = 0;            // e.g. 13000
  uint32_t cupti_version = 0;             // CUPTI API version
  std::string cupti_path;                 // library the collector used
  std::string clock = "CLOCK_REALTIME";   // the trace clock
  bool gpu_available = false;             // false: only host-side data (regions, wall time)
  std::string unavailable_reason;         // why, when !gpu_available
  bool command_buffers_disabled = false;  // XLA command buffers off while tracing
  std::string fpgaprof_version;
  Diagnostics warnings;  // every warning shown to the user, as records (diagnostics.hpp)
  // The process in a job of several (docs/reports.md, "Jobs of several processes"); absent
  // from traces of older writers, which read as a process of a one-process job.
  int64_t process_index = -1;              // rank in the job; -1: not known (one process)
  uint32_t process_count = 0;              // processes in the job; 0: not known
  std::string process_source;              // where they came from: "jax", "SLURM", "OMPI", ...
  std::string host_name;                   // the host the process ran on
  std::vector<int64_t> global_device_ids;  // [local device id] -> JAX's global id (-1 unknown)
  // GPU power sampling (docs/capture.md, "GPU power and energy"); 0 when not sampled (no NVML,
  // or a trace of an older writer).
  uint64_t power_sample_period_ns = 0;   // the sampling thread's period
  uint64_t energy_update_period_ns = 0;  // median interval between changes of the energy counter
                                         //   (all devices together); 0 unknown
  // The traced process's software, recorded at capture: name -> version or value ("jax_version",
  // "jaxlib_version", "mbirjax_version", "backend", "python_version"); absent from traces of
  // older writers (empty).
  std::map<std::string, std::string> environment;

  // Sets incomplete_records and keeps its one warning (capture.records_incomplete, worded by
  // incomplete_records_warning; in a trace of an older writer, that prose) in step: added,
  // reworded with the new count and cause, or removed at 0.
  void set_incomplete_records(uint64_t count, bool under_counters = false);
};

// The warning for `count` GPU activity records without timestamps: from a full device timestamp
// buffer, or (under_counters) launches traced under kernel replay that no counter range timed.
std::string incomplete_records_warning(uint64_t count, bool under_counters = false);
// The same warning as writers before the diagnostics worded it (what a trace of such a writer
// holds as prose: read back as capture.records_incomplete).
std::string older_incomplete_records_warning(uint64_t count);

class TraceStore {
 public:
  TraceMeta meta;
  StringTable strings;
  std::vector<DeviceInfo> devices;
  std::vector<KernelRecord> kernels;
  std::vector<LaunchConfig> launch_configs;  // distinct launch configurations of kernels
  std::vector<MemcpyRecord> memcpys;
  std::vector<MemsetRecord> memsets;
  std::vector<AllocationRecord> allocations;
  std::vector<ApiRecord> api_calls;
  std::vector<ApiFunction> api_functions;  // distinct functions the API calls name
  std::vector<SyncRecord> syncs;
  std::vector<MarkerRecord> markers;
  std::vector<RegionRecord> regions;
  std::vector<OverheadRecord> overheads;
  std::vector<ExternalCorrelationRecord> external_correlations;
  std::vector<CounterRecord> counters;
  std::vector<PowerSampleRecord> power_samples;  // NVML readings, by device then time
  // Optimized HLO modules seen while tracing, kept so that a saved trace can be attributed
  // elsewhere.
  std::vector<HloModuleText> hlo_modules;

  // Index of `config` in launch_configs, appending it when it is new. Amortised O(1): an
  // index over launch_configs is kept and extended with entries appended directly (e.g. by
  // the trace reader) on the next call; entries are only ever appended, never changed. Throws Error(kInternal) past
  // 2^32 - 2 entries.
  uint32_t intern_launch_config(const LaunchConfig& config);

  // Same for the function of an API call.
  uint32_t intern_api_function(const ApiFunction& function);

  // The configuration kernel `k` refers to; an all-zero one when it has none (kNone32) or
  // the index is out of range.
  const LaunchConfig& launch_config_of(const KernelRecord& k) const {
    static const LaunchConfig kUnknown{};
    return k.launch_config < launch_configs.size() ? launch_configs[k.launch_config] : kUnknown;
  }
  // The function API call `a` made; one with an empty name when it has none.
  const ApiFunction& api_function_of(const ApiRecord& a) const {
    static const ApiFunction kUnknown{};
    return a.function < api_functions.size() ? api_functions[a.function] : kUnknown;
  }

 private:
  struct LaunchConfigHash {
    std::size_t operator()(const LaunchConfig& c) const noexcept;
  };
  struct ApiFunctionHash {
    std::size_t operator()(const ApiFunction& f) const noexcept;
  };
  std::unordered_map<LaunchConfig, uint32_t, LaunchConfigHash> launch_config_index_;
  std::size_t launch_configs_indexed_ = 0;  // launch_configs[0, this) are in the index
  std::unordered_map<ApiFunction, uint32_t, ApiFunctionHash> api_function_index_;
  std::size_t api_functions_indexed_ = 0;
};

}  // namespace fpgaprof

// Hardware counters per kernel: CUPTI's Range Profiler (auto range, kernel replay) with the
// Profiler Host API. Implemented in cpp/src/cupti/ (the only code that sees CUPTI); nothing here
// exposes a CUPTI type. Counter values go to TraceStore::counters, kept apart from timing
// (kernel replay re-runs each kernel once per pass, so counter runs are not timed runs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fpgaprof/trace_store.hpp"

namespace fpgaprof {

// What a collected metric means to the roofline (analysis/roofline.cpp decodes values by name).
enum class CounterRole : uint8_t {
  kDramRead, kDramWrite, kFp32Add, kFp32Mul, kFp32Fma, kFp64Add, kFp64Mul, kFp64Fma,
  kFp16Add, kFp16Mul, kFp16Fma, kTensorInstructions, kDuration,
};

// The role's name as reports and errors show it: "dram_read", "fp32_fma", "duration", ...
const char* counter_role_name(CounterRole role);

struct CounterMetric {
  CounterRole role;
  std::vector<std::string> candidates;  // metric names, preferred first (chips name them differently)
  std::string unit;                     // the dimension CUPTI must report for it ("byte", ...):
                                        // the roofline decodes values in this unit
};

// The metrics fpgaprof asks for, per role: DRAM bytes read/written (dram__bytes_read.sum, or
// dram__bytes_op_read.sum on GB20x), FP32/FP64/FP16 add/mul/fma thread instructions
// (sm__sass_thread_inst_executed_op_{f,d,h}{add,mul,fma}_pred_on.sum), tensor-pipe instructions
// (sm__inst_executed_pipe_tensor.sum, informational: not converted to FLOPs) and
// gpu__time_duration.sum.
const std::vector<CounterMetric>& counter_metrics();

struct MetricSelection {
  std::vector<std::string> metrics;   // chosen names, one per available role
  std::vector<CounterRole> roles;     // parallel to metrics
  std::vector<std::string> missing;   // roles with no supported candidate: "fp16_fma (tried ...)"
};
// Picks, per role, the first candidate whose base name (the part before the last '.') is in
// `supported_base_metrics` (what cuptiProfilerHostGetBaseMetrics lists for the chip). Pure.
MetricSelection select_counter_metrics(const std::vector<std::string>& supported_base_metrics);

// One profiled range (one kernel launch in auto-range mode) with its metric values.
struct CounterRange {
  std::string name;                   // range name = kernel name as CUPTI reports it
  std::vector<double> values;         // parallel to the session's metric list
};

struct CounterMatch {
  uint64_t matched = 0;
  uint64_t unmatched_ranges = 0;      // no kernel of that name left in launch order
  uint64_t dropped_ranges = 0;        // ranges CUPTI could not store (reported by DecodeData)
};
// Appends one CounterRecord per (range, metric) to store.counters and sets kernel_index by
// walking the store's kernels in launch order (correlation id) and matching each range to the
// next kernel with the same name (kernel replay serializes launches in that order). Pure.
CounterMatch add_counter_ranges(TraceStore& store, const std::vector<std::string>& metrics,
                                const std::vector<CounterRange>& ranges, uint32_t first_range_index = 0);

// One metric of a counter plan, with what CUPTI says of it (cuptiProfilerHostGetMetricProperties).
struct CounterMetricInfo {
  std::string role;          // counter_role_name(); "" for a metric the caller named
  std::string name;          // with its rollup: "dram__bytes_read.sum"
  std::string description;   // CUPTI's one-line description
  std::string hw_unit;       // the hardware unit counted: "dram", "sm", "gpu"
  std::string unit;          // the dimension of its values: "byte", "instruction", "nanosecond"
};

// What trace(counters=True) collects on a chip: the metric per role, the roles the chip cannot
// give (with the reason), and the replay cost (every kernel runs `passes` times while counting).
struct CounterPlan {
  std::string chip;                         // CUPTI's chip name, e.g. "GH100"
  bool chip_from_device = false;            // read from the GPU (true) or named by the caller
  std::string cupti_path;                   // the libcupti that made the plan
  std::vector<CounterMetricInfo> metrics;
  std::vector<std::string> missing;         // "dram_read (tried ...)" or "... (unit 'x', expected 'y')"
  std::size_t passes = 0;                   // replay passes per kernel
  std::size_t config_image_bytes = 0;
};

// Builds the counter configuration for `chip` with the Profiler Host API, which needs neither a
// driver nor a GPU: the plan is exact for that chip (counter availability on a particular board,
// e.g. under MIG, is only known on the device). `chip` is CUPTI's name, any case ("gh100"); empty:
// the chip of GPU `device` (needs the driver). `metrics` empty: fpgaprof's metric per role,
// each checked for the unit the roofline expects; else exactly these names (with rollups).
// Throws Error(kInvalidArgument) for an unknown chip (the message lists the known ones) or
// metric, Error(kCuptiUnavailable) without CUPTI, or without a driver/GPU when `chip` is empty,
// Error(kCounters) when this libcupti lacks the Profiler Host API (CUDA < 12.6).
CounterPlan plan_counters(const std::string& chip, const std::vector<std::string>& metrics = {},
                          int device = 0);
// The chips this libcupti's Profiler Host API knows (cuptiProfilerHostGetSupportedChips).
std::vector<std::string> counter_chips();

struct CounterOptions {
  std::vector<std::string> metrics;   // empty: select_counter_metrics() for the chip
  std::size_t max_ranges = 2048;      // ranges per counter-data image before decode + re-init
  int device = 0;                     // CUDA device ordinal whose primary context is profiled
};

// One counter collection on the current (or device's primary) CUDA context. At most one per
// process. Not thread-safe: start/checkpoint/stop from one thread.
class CounterSession {
 public:
  // Throws Error(kCuptiUnavailable) without CUPTI/driver/GPU, Error(kCounters) when the driver
  // restricts counters (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: the message says to set
  // NVreg_RestrictProfilingToAdminUsers=0 or run as root) or the chip is unsupported.
  static std::unique_ptr<CounterSession> start(const CounterOptions& options);
  virtual ~CounterSession() = default;
  // Decodes what the counter image holds, keeps the values and re-initialises the image so that
  // collection continues (call between steps of long runs: an image holds max_ranges ranges).
  virtual void checkpoint() = 0;
  // Stops, decodes and appends every range's values to store.counters (matched to kernels).
  virtual CounterMatch stop_into(TraceStore& store) = 0;
  virtual const std::vector<std::string>& metrics() const = 0;
  virtual const std::vector<std::string>& warnings() const = 0;  // missing metrics, passes, ...
};

}  // namespace fpgaprof

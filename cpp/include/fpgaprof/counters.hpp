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

struct CounterMetric {
  CounterRole role;
  std::vector<std::string> candidates;  // metric names, preferred first (chips name them differently)
};

// The metrics fpgaprof asks for, per role: DRAM bytes read/written (dram__bytes_read.sum, or
// dram__bytes_op_read.sum on GB20x), FP32/FP64/FP16 add/mul/fma thread instructions
// (sm__sass_thread_inst_executed_op_{f,d,h}{add,mul,fma}_pred_on.sum), tensor-pipe instructions
// (sm__inst_executed_pipe_tensor.sum, informational: not converted to FLOPs) and
// gpu__time_duration.sum.
const std::vector<CounterMetric>& counter_metrics();

struct MetricSelection {
  std::vector<std::string> metrics;   // chosen names, one per available role
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

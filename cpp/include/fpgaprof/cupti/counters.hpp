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

#include "fpgaprof/records.hpp"
#include "fpgaprof/trace_store.hpp"

namespace fpgaprof {

// What a collected metric means to the roofline (analysis/roofline.cpp decodes values by name).
enum class CounterRole : uint8_t {
  kDramRead,
  kDramWrite,
  kFp32Add,
  kFp32Mul,
  kFp32Fma,
  kFp64Add,
  kFp64Mul,
  kFp64Fma,
  kFp16Add,
  kFp16Mul,
  kFp16Fma,
  kTensorInstructions,
  kDuration,
  kCtasLaunched,  // thread blocks launched: pairs ranges with launches by their grids
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
// (sm__inst_executed_pipe_tensor.sum, informational: not converted to FLOPs),
// gpu__time_duration.sum and sm__ctas_launched.sum (thread blocks launched: a kernel's range
// holds its grid size, a copy engine's none; add_counter_windows pairs by it).
const std::vector<CounterMetric>& counter_metrics();

struct MetricSelection {
  std::vector<std::string> metrics;  // chosen names, one per available role
  std::vector<CounterRole> roles;    // parallel to metrics
  std::vector<std::string> missing;  // roles with no supported candidate: "fp16_fma (tried ...)"
};
// Picks, per role, the first candidate whose base name (the part before the last '.') is in
// `supported_base_metrics` (what cuptiProfilerHostGetBaseMetrics lists for the chip). Pure.
MetricSelection select_counter_metrics(const std::vector<std::string>& supported_base_metrics);

// One profiled range (one kernel launch in auto-range mode) with its metric values.
struct CounterRange {
  std::string name;            // CUPTI's range name: in auto range a number by execution
                               // order ("0", "1", ...), not the kernel's name
  std::vector<double> values;  // parallel to the session's metric list
};

// The ranges decoded from one counter-data image: everything profiled between one
// cuptiRangeProfilerStart and the following Stop (a trace has one window per checkpoint + 1).
struct CounterWindow {
  uint64_t start_ns = 0;             // trace clock just after Start returned
  uint64_t end_ns = 0;               // trace clock just before Stop was called
  uint32_t device_id = kNone32;      // device of the profiled context; kNone32: any device
  std::size_t capacity = 0;          // maxRangesPerPass: CUPTI profiles at most this many kernels;
                                     // 0: counting was off in this window (its kernels unprofiled)
  std::vector<CounterRange> ranges;  // in execution order
};

struct CounterMatch {
  uint64_t matched = 0;              // ranges paired with a traced kernel
  uint64_t matched_copies = 0;       // ranges paired with a device-to-device copy
  uint64_t timed_from_counters = 0;  // launches without GPU timestamps (kernel replay gives
                                     // none) timed by their gpu__time_duration range
  uint64_t unmatched_ranges = 0;     // ranges left without a kernel (see ambiguous_windows)
  uint64_t unprofiled_kernels = 0;   // kernels on the device without a range: launched in a full
                                     // window past its capacity, or between two windows
  uint64_t ambiguous_windows = 0;    // windows with ranges or kernels left unpaired (counts or grids disagree)
  uint64_t unpaired_kernels = 0;     // kernels in those windows left without a range (no counters)
  uint64_t aligned_windows = 0;      // windows paired by sm__ctas_launched (see add_counter_windows)
  uint64_t dropped_ranges = 0;       // ranges CUPTI could not store (reported by DecodeData)
};
// Pairs each window's ranges with the launches inside it and appends one CounterRecord per
// (range, metric) to store.counters. Launches: kernels and device-to-device copies within one
// device (the Range Profiler makes a range of those too: seen on an H100, CUPTI 13, where XLA's
// DtoD copies interleave with its kernels). A window's launches: those on its device whose API
// call (same correlation id in store.api_calls; else the record's own start) began within
// [start_ns, end_ns] and that hold no counters yet, in execution order (start_ns, then
// correlation id). Auto range profiles launches one at a time in that order, so range i is
// launch i, as long as the two lists hold the same launches. They do not always: on an H200
// (CUPTI 13, 2026-11-26) a window held one range more than it had kernels and same-device copies.
// With sm__ctas_launched.sum in `metrics` (and every range named by number), ranges and launches
// are aligned by it: a kernel's range holds its grid size (grid_x * grid_y * grid_z thread
// blocks), a copy's is taken to match any count (a copy engine launches none, a driver-run copy
// may launch some); a range or launch left out costs 1, and among the alignments of least cost a
// range is paired only when every one of them pairs it with the same launch (extra or missing
// ranges between alike launches stay unpaired rather than guessed). Without that metric:
//  - equal counts: paired one to one (a range whose name is not a number must equal its
//    kernel's name, else the window counts as ambiguous);
//  - more kernels than ranges with the window full (ranges == capacity): the first `capacity`
//    kernels are paired, the rest counted in unprofiled_kernels (also with the metric);
//  - any other disagreement: nothing in the window is paired (records keep kernel_index =
//    kNone32, counted in unmatched_ranges and ambiguous_windows): a guess would put numbers
//    on the wrong kernel.
// Unpaired ranges and the kernels left without a range in a window count in unmatched_ranges,
// unpaired_kernels and ambiguous_windows either way.
// A paired launch without GPU timestamps (start = end = 0: kernel replay records none) gets
// start = its API call's start and end = start + its gpu__time_duration value (when that metric
// is in `metrics`); store.meta.incomplete_records and its warning are lowered by as many.
// range_index numbers ranges across windows from `first_range_index`.
CounterMatch add_counter_windows(TraceStore& store, const std::vector<std::string>& metrics,
                                 const std::vector<CounterWindow>& windows, uint32_t first_range_index = 0);

// One metric of a counter plan, with what CUPTI says of it (cuptiProfilerHostGetMetricProperties).
struct CounterMetricInfo {
  std::string role;         // counter_role_name(); "" for a metric the caller named
  std::string name;         // with its rollup: "dram__bytes_read.sum"
  std::string description;  // CUPTI's one-line description
  std::string hw_unit;      // the hardware unit counted: "dram", "sm", "gpu"
  std::string unit;         // the dimension of its values: "byte", "instruction", "nanosecond"
};

// What trace(counters=True) collects on a chip: the metric per role, the roles the chip cannot
// give (with the reason), and the replay cost (every kernel runs `passes` times while counting).
struct CounterPlan {
  std::string chip;               // CUPTI's chip name, e.g. "GH100"
  bool chip_from_device = false;  // read from the GPU (true) or named by the caller
  std::string cupti_path;         // the libcupti that made the plan
  std::vector<CounterMetricInfo> metrics;
  std::vector<std::string> missing;  // "dram_read (tried ...)" or "... (unit 'x', expected 'y')"
  std::size_t passes = 0;            // replay passes per kernel
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
CounterPlan plan_counters(const std::string& chip, const std::vector<std::string>& metrics = {}, int device = 0);
// The chips this libcupti's Profiler Host API knows (cuptiProfilerHostGetSupportedChips).
std::vector<std::string> counter_chips();

// Why a device refuses the Range Profiler, from cuptiProfilerDeviceSupported's per-feature levels
// (0 unknown, 1 unsupported, 2 disabled, 3 supported — CUpti_Profiler_Support_Level): one
// clause per blocking feature with its fix, "" when none blocks. Pure.
struct ProfilingSupport {
  int architecture = 3, sli = 3, vgpu = 3, confidential_compute = 3, cmp = 3, wsl = 3;
};
std::string profiling_refusal(const ProfilingSupport& support);

// WSL2 and counters. CUPTI's cuptiProfilerDeviceSupported says in its `wsl` field whether this
// WSL setup supports profiling; that answer decides when there is one. Without one (a libcupti
// without the call, a call that failed, or a `wsl` level of 0, unknown) the kernel's version
// string decides: text containing "microsoft" (WSL2's kernels are "...-microsoft-standard-WSL2",
// WSL1's "...-Microsoft") means WSL, where counters are refused before any replay starts rather
// than failing inside one. `wsl_level`: the field (0 unknown, 1 unsupported, 2 disabled,
// 3 supported) when the call answered, else kWslNotAsked or kWslQueryFailed. Returns the one-line
// reason with the fix, "" when counting may go on. Pure.
inline constexpr int kWslNotAsked = -1;     // this libcupti lacks cuptiProfilerDeviceSupported
inline constexpr int kWslQueryFailed = -2;  // the call returned an error
std::string wsl_counters_refusal(int wsl_level, const std::string& proc_version_path,
                                 const std::string& proc_version_text);
// Where the kernel's version string is read: $FPGAPROF_PROC_VERSION when set and not empty (tests
// name a file of their own), else /proc/version.
std::string proc_version_path();
// The first 4 KiB of `path` when it is a regular file (as /proc/version is), else "" (missing,
// unreadable, a folder, a FIFO or a device: never blocks, never reads more).
std::string read_proc_version(const std::string& path);

// The Error(kCounters) text when CUPTI call `call` answered CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
// the driver lets only admin users read performance counters (the driver's default). One
// line naming the error, the fixes (root or CAP_SYS_ADMIN; the admin's
// NVreg_RestrictProfilingToAdminUsers=0 module option, then a driver reload) and the way out
// (trace without counters=True). Under WSL (`proc_version_text`, /proc/version's text, names a
// Microsoft kernel) the Windows driver decides, so the fix named is the NVIDIA Control Panel's
// counter access setting instead. Pure.
std::string counter_privileges_message(const std::string& call, const std::string& proc_version_text = "");

struct CounterOptions {
  std::vector<std::string> metrics;  // empty: select_counter_metrics() for the chip
  std::size_t max_ranges = 2048;     // ranges per counter-data image before decode + re-init
  int device = 0;                    // CUDA device ordinal whose primary context is profiled
};

// One counter collection on the current (or device's primary) CUDA context. At most one per
// process. Not thread-safe: start/checkpoint/stop from one thread.
class CounterSession {
 public:
  // Throws Error(kCuptiUnavailable) without CUPTI/driver/GPU, Error(kCounters) when the driver
  // restricts counters (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: the message says to set
  // NVreg_RestrictProfilingToAdminUsers=0 or run as root), the chip is unsupported, or this is
  // WSL and CUPTI does not confirm that WSL supports profiling (wsl_counters_refusal).
  static std::unique_ptr<CounterSession> start(const CounterOptions& options);
  virtual ~CounterSession() = default;
  // Decodes what the counter image holds, keeps the values and re-initialises the image so that
  // collection continues (call between steps of long runs: an image holds max_ranges ranges).
  virtual void checkpoint() = 0;
  // Ends counting: stops and decodes the last window (no store needed). Call before the
  // activity session stops, so that kernels launched afterwards fall outside every window.
  // Errors become warnings (the windows decoded so far are kept). stop_into() calls it too.
  virtual void finish() = 0;
  // Stops, decodes and appends every range's values to store.counters (matched to kernels).
  virtual CounterMatch stop_into(TraceStore& store) = 0;
  virtual const std::vector<std::string>& metrics() const = 0;
  virtual const Diagnostics& warnings() const = 0;  // missing metrics, passes, ... (source counters)
};

}  // namespace fpgaprof

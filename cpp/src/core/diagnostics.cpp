#include "fpgaprof/diagnostics.hpp"

#include <algorithm>
#include <array>

#include "fpgaprof/error.hpp"

namespace fpgaprof {

namespace {

constexpr Severity kInfo = Severity::kInfo;
constexpr Severity kWarn = Severity::kWarning;
constexpr Severity kErr = Severity::kError;

// Every diagnostic fpgaprof emits, C++ and Python alike (Python reads this table through
// fpgaprof._core.diagnostic_codes()). docs/reports.md "Warnings" lists it; a test checks the two
// agree. A new code is one row here.
constexpr std::array kCodes = {
    // --- the trace file --------------------------------------------------------------------
    DiagnosticCode{kOlderTraceCode, kWarn, "trace",
                   "A warning an older fpgaprof wrote as prose, or with a code this version does not know; "
                   "the message is kept whole. Fix: what the message says."},
    // --- capture: CUPTI, the driver, NVTX ----------------------------------------------------
    DiagnosticCode{"capture.records_dropped", kWarn, "capture",
                   "CUPTI ran out of activity buffers and dropped records: totals are lower bounds. Fix: larger "
                   "buffers (`fpgaprof.trace(buffer_size=BYTES)`, `fpgaprof run --buffer-size BYTES`; 8 MiB by "
                   "default), or trace a shorter run."},
    DiagnosticCode{"capture.dropped_count_unknown", kWarn, "capture",
                   "CUPTI could not say how many activity records it dropped (cuptiActivityGetNumDroppedRecords "
                   "failed): `dropped_records` is a lower bound. Fix: trace again with larger buffers; report it "
                   "with the CUPTI version if it repeats."},
    DiagnosticCode{"capture.buffers_lost", kWarn, "capture",
                   "CUPTI activity buffers could not be converted (the host ran out of memory while "
                   "converting them): their remaining records are lost and totals are lower bounds. Fix: "
                   "trace a shorter run, or free host memory."},
    DiagnosticCode{"capture.records_incomplete", kWarn, "capture",
                   "GPU activity records without timestamps: left out of times. Under counters, launches kernel "
                   "replay did not time (fix: trace again without counters); else CUPTI's device timestamp buffer "
                   "ran out (fix: fpgaprof.trace(device_buffer_size=...), fpgaprof run --device-buffer-size)."},
    DiagnosticCode{"capture.buffer_invalid_record", kWarn, "capture",
                   "An activity buffer held an invalid record and was read only up to it. Fix: trace again; report "
                   "it with the CUPTI version if it repeats."},
    DiagnosticCode{"capture.unknown_records_skipped", kInfo, "capture",
                   "Activity records of kinds or operations fpgaprof does not read were skipped. No fix needed."},
    DiagnosticCode{"capture.sync_polls_skipped", kInfo, "capture",
                   "Synchronization records of event/stream queries (polls, not host waits) were skipped. No fix "
                   "needed."},
    DiagnosticCode{"capture.sync_waits_failed", kWarn, "capture",
                   "Host waits returned an error: the GPU work they waited for failed. Fix: check the program's "
                   "CUDA errors."},
    DiagnosticCode{"capture.ranges_open_at_stop", kWarn, "capture",
                   "NVTX ranges or fpgaprof regions were still open when the trace stopped: they end at the trace "
                   "end. Fix: close them inside the traced block."},
    DiagnosticCode{"capture.regions_out_of_order", kWarn, "capture",
                   "An fpgaprof region ended while a region opened after it on the same thread was still open "
                   "(asyncio tasks interleaving regions on one thread): regions on a thread nest, so those regions' "
                   "times, nesting and GPU work are wrong. Fix: put one region around the whole gather or loop, or "
                   "run each task on its own thread."},
    DiagnosticCode{"capture.ranges_begun_before", kWarn, "capture",
                   "NVTX ranges or fpgaprof regions ended in the trace but began before it: not recorded. Fix: "
                   "open them inside the traced block."},
    DiagnosticCode{"capture.late_buffers", kInfo, "capture",
                   "Activity buffers of the previous trace arrived after it had stopped and were discarded."},
    DiagnosticCode{"capture.cupti_setup", kWarn, "capture",
                   "A CUPTI setting or call failed or is missing in this libcupti; the message says which records "
                   "are affected. Fix: use the CUPTI of the installed CUDA toolkit."},
    DiagnosticCode{"capture.activity_kind_disabled", kWarn, "capture",
                   "A CUPTI activity kind could not be enabled: those records are missing. Fix: use the CUPTI of the "
                   "installed CUDA toolkit."},
    DiagnosticCode{"capture.cupti_mapped_twice", kWarn, "capture",
                   "Several libcupti files are mapped in this process: another profiler may hold the GPU. Fix: trace "
                   "with one CUPTI (unset other profilers' preloads)."},
    DiagnosticCode{"capture.device_sync", kWarn, "capture",
                   "Devices could not be synchronized at stop: the last GPU activity may be missing. Fix: "
                   "synchronize (jax.block_until_ready) before the trace ends."},
    DiagnosticCode{"capture.flush_failed", kWarn, "capture",
                   "CUPTI's final flush failed: the last records may be missing. Fix: trace again."},
    DiagnosticCode{"capture.release_failed", kWarn, "capture",
                   "CUPTI refused to disable an activity kind or to unsubscribe at stop: the trace is complete, "
                   "but a next trace in this process may find CUPTI still subscribed (read as a profiler conflict). "
                   "Fix: start the next trace in a new process."},
    DiagnosticCode{"capture.nvtx", kWarn, "capture",
                   "XLA's NVTX ranges were not seen: kernels are matched to HLO ops by name only. Fix: import "
                   "fpgaprof before JAX runs, or use `fpgaprof run`."},
    DiagnosticCode{"capture.pcie_link", kWarn, "capture",
                   "A device's PCIe link is unknown or below its maximum: transfer ceilings use what is known. Fix: "
                   "the message names the device and the cause."},
    DiagnosticCode{"capture.process_setup", kWarn, "capture",
                   "The traced process was set up too late or against fpgaprof's settings (JAX started first, "
                   "XLA_FLAGS of the user): HLO or NVTX data may be missing. Fix: import fpgaprof before JAX, or "
                   "use `fpgaprof run`."},
    DiagnosticCode{"capture.hlo_dump", kWarn, "capture",
                   "An HLO module XLA dumped could not be read into the trace: its kernels have no HLO costs. Fix: "
                   "the message names the file and the cause."},
    DiagnosticCode{"capture.interrupted", kWarn, "capture",
                   "The trace was cut short (a signal, a checkpoint that failed, an exception): it holds what ran "
                   "until then. Fix: the message says what happened."},
    DiagnosticCode{"capture.no_gpu", kWarn, "capture",
                   "No GPU activity was recorded (no driver, no CUPTI or no GPU): the profile holds wall time and "
                   "regions only. Fix: trace on a machine with an NVIDIA GPU (`fpgaprof devices` shows what was "
                   "found)."},
    DiagnosticCode{"capture.signal_handler", kInfo, "capture",
                   "The handler that saves the trace on SIGTERM/SIGHUP could not be installed (or the trace was "
                   "opened outside the main thread, where Python takes no signals): such a signal ends the run "
                   "without a trace. Fix: open `fpgaprof.trace(path)` on the main thread."},
    DiagnosticCode{"capture.environment", kInfo, "capture",
                   "The traced process's software versions could not be recorded in the trace."},
    DiagnosticCode{"capture.untraced_processes", kWarn, "capture",
                   "Further Python processes of the run were not traced. Fix: trace them with `fpgaprof run` (the "
                   "message names them)."},
    DiagnosticCode{"capture.nested_run", kWarn, "capture",
                   "`fpgaprof run` was started inside another `fpgaprof run`: this trace holds that fpgaprof "
                   "process, not the program, whose trace is in the folder the message names. Fix: run the "
                   "program under one `fpgaprof run` only."},
    DiagnosticCode{"capture.xspace_import", kInfo, "capture",
                   "The trace was imported from an XProf profile; the message says what the XSpace could not "
                   "hold."},
    // --- hardware counters -----------------------------------------------------------------
    DiagnosticCode{"counters.metric_unavailable", kWarn, "counters",
                   "A counter metric is not available on this GPU: its figures are missing."},
    DiagnosticCode{"counters.replay_passes", kInfo, "counters",
                   "Counters need several replay passes: kernels run that many times while counting."},
    DiagnosticCode{"counters.window_unread", kWarn, "counters",
                   "A counter window could not be read back: its counters are missing. Fix: trace again."},
    DiagnosticCode{"counters.ranges_dropped", kWarn, "counters",
                   "Counter ranges were dropped (the counter image was full). Fix: lower the number of kernels "
                   "between checkpoints."},
    DiagnosticCode{"counters.kernels_unprofiled", kWarn, "counters",
                   "Kernels launched past the counter image's ranges have no counters. Fix: add checkpoints or raise "
                   "max_ranges."},
    DiagnosticCode{"counters.unpaired", kWarn, "counters",
                   "Counter ranges and kernels disagree and were left unpaired rather than guessed."},
    DiagnosticCode{"counters.replay_timing", kWarn, "counters",
                   "Counters were collected by kernel replay: kernel times and overlaps are not those of a normal "
                   "run. Fix: trace again without counters for timing."},
    DiagnosticCode{"counters.unavailable", kWarn, "counters",
                   "Hardware counters were asked for but not collected (no GPU trace, or CUPTI refused): the "
                   "message says why."},
    DiagnosticCode{"counters.preallocation", kWarn, "counters",
                   "Counters with JAX's preallocated memory pool: kernel replay saves and restores the pool around "
                   "every kernel, so each kernel takes seconds. Fix: XLA_PYTHON_CLIENT_PREALLOCATE=false when "
                   "collecting counters."},
    DiagnosticCode{"counters.stop_failed", kWarn, "counters",
                   "Hardware counters could not be stopped or read back: their figures are missing."},
    // --- correlation -----------------------------------------------------------------------
    DiagnosticCode{"correlate.unmatched_records", kWarn, "correlate",
                   "GPU records without their API record (dropped or not captured): launching thread, launch time "
                   "and region are unknown for them. Fix: larger buffers (`fpgaprof.trace(buffer_size=BYTES)`, "
                   "`fpgaprof run --buffer-size BYTES`)."},
    // --- HLO and attribution ---------------------------------------------------------------
    DiagnosticCode{"hlo.module_unparsed", kWarn, "hlo",
                   "An HLO module could not be parsed or analysed: its kernels get op names from XLA's ranges "
                   "only, without costs. Fix: report the module text."},
    DiagnosticCode{"hlo.buffer_assignment_unread", kWarn, "hlo",
                   "XLA's buffer assignment of a module could not be read: its ops keep the cost model's on-chip "
                   "sizes."},
    DiagnosticCode{"attribution.regions_too_deep", kWarn, "attribution",
                   "Region records nested deeper than the path limit are counted in their enclosing path."},
    DiagnosticCode{"attribution.unattributed_kernels", kWarn, "attribution",
                   "Kernels matched to no HLO op (by range or by name): their time is in the kernel tables only. "
                   "Fix: trace with HLO dumps and XLA's NVTX ranges (import fpgaprof before JAX)."},
    DiagnosticCode{"attribution.command_buffers", kWarn, "attribution",
                   "XLA command buffers were on: kernels inside CUDA graphs have no per-op NVTX ranges, so "
                   "attribution falls back to kernel names. Fix: trace with fpgaprof's XLA flags (`fpgaprof run`)."},
    // --- the analyses and reports ----------------------------------------------------------
    DiagnosticCode{"report.records_dropped", kWarn, "report",
                   "Records were dropped: totals are lower bounds. Fix: raise trace(buffer_size=...)."},
    DiagnosticCode{"report.records_incomplete", kWarn, "report",
                   "Records without timestamps are left out of times (a trace without the capture's own warning of "
                   "them). Fix: as for capture.records_incomplete."},
    DiagnosticCode{"report.no_gpu", kWarn, "report",
                   "The trace holds no GPU data (host-side regions and times only); the message says why."},
    DiagnosticCode{"report.analysis_failed", kErr, "report",
                   "An analysis failed: its section is missing. Fix: report it with the trace (a bug to see, not a "
                   "section dropped quietly)."},
    DiagnosticCode{"report.transfer_flag", kWarn, "transfers",
                   "A transfer pattern worth fixing (the transfer flags of summary.json); the message says which and "
                   "how."},
    DiagnosticCode{"report.timeline_cut", kInfo, "report",
                   "timeline.json holds the first records only. Fix: raise --timeline-events."},
    DiagnosticCode{"report.warnings_left_out", kInfo, "report",
                   "More distinct warnings than a report lists: the rest are counted in this one; prof.warnings has "
                   "every one of the trace's own."},
    DiagnosticCode{"energy.power_sampling", kWarn, "energy",
                   "GPU power could not be sampled or matched to the trace's devices: energy figures are missing."},
    DiagnosticCode{"energy.counter_flat", kWarn, "energy",
                   "A GPU's total-energy counter never changed while it was read (a trace shorter than the "
                   "counter's update period, or a stuck counter): its energy comes from the power readings, which "
                   "NVML averages over 1 s on Ampere and later GPUs. Fix: trace a longer run for measured joules."},
};

}  // namespace

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
  }
  return "warning";
}

std::span<const DiagnosticCode> diagnostic_codes() { return kCodes; }

const DiagnosticCode* find_diagnostic_code(std::string_view code) {
  for (const DiagnosticCode& c : kCodes) {
    if (c.code == code) return &c;
  }
  return nullptr;
}

const DiagnosticCode& diagnostic_code(std::string_view code) {
  if (const DiagnosticCode* c = find_diagnostic_code(code)) return *c;
  throw Error(ErrorKind::kInvalidArgument,
              "unknown diagnostic code '" + std::string(code) + "': use one of fpgaprof's diagnostic codes");
}

std::string Diagnostics::key(std::string_view code, std::string_view message) {
  std::string k;
  k.reserve(code.size() + 1 + message.size());
  k.append(code).push_back('\0');
  k.append(message);
  return k;
}

void Diagnostics::reindex() {
  index_.clear();
  index_.reserve(items_.size());
  for (std::size_t i = 0; i < items_.size(); ++i) index_.emplace(key(items_[i].code(), items_[i].message), i);
}

void Diagnostics::add(std::string_view code, std::string message, std::vector<double> numbers, uint64_t count) {
  add(Diagnostic{&diagnostic_code(code), count, std::move(numbers), std::move(message)});
}

void Diagnostics::add(Diagnostic d) {
  if (d.kind == nullptr) throw Error(ErrorKind::kInternal, "a diagnostic without a code");
  auto [it, fresh] = index_.try_emplace(key(d.code(), d.message), items_.size());
  if (!fresh) {
    items_[it->second].count += d.count;
    return;
  }
  items_.push_back(std::move(d));
}

void Diagnostics::append(const Diagnostics& other) {
  if (&other == this) {
    const Diagnostics copy = other;
    append(copy);
    return;
  }
  for (const Diagnostic& d : other.items_) add(d);
}

void Diagnostics::replace(std::size_t i, Diagnostic d) {
  if (d.kind == nullptr) throw Error(ErrorKind::kInternal, "a diagnostic without a code");
  items_.at(i) = std::move(d);
  reindex();
}

Diagnostic* Diagnostics::find(std::string_view code, std::string_view message) {
  const auto it = index_.find(key(code, message));
  return it == index_.end() ? nullptr : &items_[it->second];
}

Diagnostic* Diagnostics::first_of(std::string_view code) {
  for (Diagnostic& d : items_) {
    if (d.code() == code) return &d;
  }
  return nullptr;
}

std::vector<std::string> Diagnostics::messages() const {
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const Diagnostic& d : items_) out.push_back(d.message);
  return out;
}

}  // namespace fpgaprof

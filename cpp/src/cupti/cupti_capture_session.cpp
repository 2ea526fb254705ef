// CuptiCaptureSession: the CaptureSession behind CaptureSession::start(). One per process at
// a time. CUPTI's buffer callbacks carry no user data, so the active session is reached
// through the process-wide Collector.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "cupti/buffer_pool.hpp"
#include "cupti/capture_messages.hpp"
#include "cupti/cuda_driver.hpp"
#include "cupti/cupti_api.hpp"
#include "cupti/power_sampler.hpp"
#include "cupti/record_converter.hpp"
#include "cupti/region_recorder.hpp"
#include "fpgaprof/cupti/capture.hpp"
#include "fpgaprof/error.hpp"
#include "fpgaprof/pcie_link.hpp"
#include "fpgaprof/version.hpp"

namespace fpgaprof {
namespace cupti {
namespace {

class CuptiCaptureSession;

struct Collector {
  std::mutex lifecycle_mutex;  // serializes start/stop
  std::mutex session_mutex;    // guards active and the active session's store/converter
  CuptiCaptureSession* active = nullptr;
  bool has_session = false;  // a session exists (host-only ones too); guarded by lifecycle_mutex
  BufferPool pool;
  uint64_t late_buffers = 0;  // buffers completed with no session; guarded by session_mutex
  uint64_t lost_buffers = 0;  // buffers whose conversion failed (out of memory); guarded by session_mutex
};

Collector& collector() {
  static Collector* c = new Collector();  // CUPTI's thread may call back until process exit
  return *c;
}

struct KindSpec {
  CUpti_ActivityKind kind;
  const char* name;
};
// MARKER_DATA is not enabled: it only carries payloads, colors and categories, which the
// store does not keep. DEVICE is enabled with cuptiActivityEnableAndDump where it exists (see
// begin()).
constexpr KindSpec kKinds[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
    {CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2"},
    {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
    {CUPTI_ACTIVITY_KIND_MEMORY2, "MEMORY2"},
    {CUPTI_ACTIVITY_KIND_DEVICE, "DEVICE"},
    {CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME"},
    {CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER"},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION"},
    {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "EXTERNAL_CORRELATION"},
    {CUPTI_ACTIVITY_KIND_OVERHEAD, "OVERHEAD"},
    {CUPTI_ACTIVITY_KIND_MARKER, "MARKER"},
    {CUPTI_ACTIVITY_KIND_NAME, "NAME"},
};

struct ApiSpec {
  CUpti_CallbackId cbid;
  const char* name;
  uint32_t min_runtime_api = 0;  // the libcupti API version that first knows cbid (0: every one)
};
// API calls not traced (the one list; docs/capture.md shows it): JAX's PJRT polls events and
// streams and switches contexts all the time, so these are most of the API records, yet they
// launch no GPU work (no activity record carries their correlation id) and no analysis reads
// them. Turned off per call after DRIVER/RUNTIME are enabled, since enabling the kind later
// would turn them on again.
constexpr ApiSpec kQuietDriverApis[] = {
    {CUPTI_DRIVER_TRACE_CBID_cuEventQuery, "cuEventQuery"},
    {CUPTI_DRIVER_TRACE_CBID_cuStreamQuery, "cuStreamQuery"},
    {CUPTI_DRIVER_TRACE_CBID_cuStreamQuery_ptsz, "cuStreamQuery_ptsz"},
    {CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, "cuCtxGetCurrent"},
    {CUPTI_DRIVER_TRACE_CBID_cuCtxSetCurrent, "cuCtxSetCurrent"},
    {CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice, "cuCtxGetDevice"},
#if CUPTI_API_VERSION >= 130000
    // CUDA 13's headers only; libcupti 12.x has no such id (its driver ids end at 784 in 12.9).
    {CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice_v2, "cuCtxGetDevice_v2", kCuda13CuptiApiVersion},
#endif
    {CUPTI_DRIVER_TRACE_CBID_cuCtxPushCurrent, "cuCtxPushCurrent"},
    {CUPTI_DRIVER_TRACE_CBID_cuCtxPushCurrent_v2, "cuCtxPushCurrent_v2"},
    {CUPTI_DRIVER_TRACE_CBID_cuCtxPopCurrent, "cuCtxPopCurrent"},
    {CUPTI_DRIVER_TRACE_CBID_cuCtxPopCurrent_v2, "cuCtxPopCurrent_v2"},
};
constexpr ApiSpec kQuietRuntimeApis[] = {
    {CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020, "cudaEventQuery"},
    {CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020, "cudaStreamQuery"},
    {CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_ptsz_v7000, "cudaStreamQuery_ptsz"},
    {CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, "cudaGetDevice"},
    {CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020, "cudaSetDevice"},
};

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}
void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records);
void CUPTIAPI on_buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t size, size_t valid_bytes);

// context: the session's `const CuptiApi*` member (set once CUPTI is loaded).
const char* callback_name(void* context, CUpti_CallbackDomain domain, uint32_t cbid) {
  const CuptiApi* api = *static_cast<const CuptiApi**>(context);
  const char* name = nullptr;
  if (api == nullptr || api->GetCallbackName == nullptr) return nullptr;
  if (api->GetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS) return nullptr;
  return name;
}

// Why capture could not start when `call` returned rc (see start_failure_reason).
std::string start_failure(const CuptiApi& api, const char* call, CUptiResult rc) {
  const CudaDriver* driver = CudaDriver::get();
  uint32_t cupti_version = 0;
  if (api.GetVersion(&cupti_version) != CUPTI_SUCCESS) cupti_version = 0;
  return start_failure_reason(call, static_cast<int>(rc), api.result_string(rc), driver != nullptr, cupti_version,
                              driver != nullptr ? driver->driver_version() : 0);
}

class CuptiCaptureSession final : public CaptureSession {
 public:
  explicit CuptiCaptureSession(const CaptureOptions& options)
      : options_(options), converter_(store_, callback_name, &api_) {}
  ~CuptiCaptureSession() override;

  // Called with the collector's lifecycle mutex held.
  void begin();
  TraceStore stop() override;
  // What must happen however a session ends other than by a whole stop() (begin() threw: a
  // conflict, require_gpu, out of memory; stop() threw part-way; destroyed without stop()):
  // CUPTI released, so that no callback reaches this session once it is gone and the next trace
  // does not find CUPTI still subscribed (which would read as another profiler); the power
  // sampler halted; region recording ended; the next trace free to start. No device
  // synchronize (a destructor may run with Python's GIL held, which a pending host callback
  // needs). Idempotent; called with the collector's lifecycle mutex held.
  void end_quietly() noexcept;
  bool gpu_active() const override { return gpu_active_; }
  std::string unavailable_reason() const override { return reason_; }

  // CUPTI's thread: converts one completed buffer (session_mutex held by the caller).
  void consume(uint8_t* buffer, std::size_t valid_bytes) {
    converter_.convert_buffer(buffer, valid_bytes, api_->ActivityGetNextRecord);
    read_dropped();
  }

 private:
  void read_dropped() {
    std::size_t dropped = 0;
    const CUptiResult rc = api_->ActivityGetNumDroppedRecords(nullptr, 0, &dropped);
    if (rc != CUPTI_SUCCESS) {
      // not 0 dropped: unknown, said at the end
      converter_.dropped_unknown(api_->result_string(rc));
    } else if (dropped > 0) {
      converter_.add_dropped(dropped);
    }
  }
  void go_host_only(std::string reason);
  // A CUPTI call in begin() failed: a conflict (39) throws kProfilerConflict; otherwise
  // CUPTI is released and the session becomes host-only.
  void start_failed(const char* call, CUptiResult rc);
  void enable_kinds();
  void start_power_sampling();
  void quiet_api_calls();
  // Removes the API records made on thread_id from begin_ns on (stop()'s own driver calls)
  // and the synchronization records of those calls. Then, with DRIVER API records
  // (driver_api_traced), every sync record without an API record comes from an untraced call
  // (a completed event/stream poll): dropped and counted by the converter. Without them, sync
  // records carry no thread id, so a CONTEXT_SYNCHRONIZE from begin_ns on that has no API
  // record is taken for stop()'s own: after the traced block, nothing else is expected to
  // synchronize a whole context.
  void drop_own_calls(uint32_t thread_id, uint64_t begin_ns, bool driver_api_traced);
  bool enabled(CUpti_ActivityKind kind) const {
    return std::find(enabled_.begin(), enabled_.end(), kind) != enabled_.end();
  }
  // Adds the two-libcupti warning once (begin() and stop() both look: JAX's plugin may map
  // its copy only after the trace started).
  void check_mapped_cupti();
  // Disables the enabled kinds, last first; returns what CUPTI refused ("" when nothing).
  std::string disable_kinds();
  // disable_kinds(), then unsubscribes; returns what CUPTI refused ("" when nothing).
  std::string release_cupti();

  CaptureOptions options_;
  TraceStore store_;
  RecordConverter converter_;
  const CuptiApi* api_ = nullptr;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::vector<CUpti_ActivityKind> enabled_;
  std::unique_ptr<PowerSampler> power_;  // NVML sampling thread while the trace runs (GPU traces only)
  Diagnostics warnings_;                 // moved into the store's meta at stop
  bool gpu_active_ = false;
  bool stopped_ = false;
  pid_t pid_ = ::getpid();  // the process that started the trace (a forked child is another)
  bool warned_mapped_cupti_ = false;
  std::string reason_;
};

// CUPTI calls these from C on its own and the program's threads: no exception may leave them.
void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;
  try {
    *buffer = collector().pool.acquire(size);
  } catch (...) {
    // out of memory: no buffer, so CUPTI drops the records it had for it and counts them
    // (cuptiActivityGetNumDroppedRecords: the trace's dropped_records and its warning)
    *buffer = nullptr;
    *size = 0;
  }
}

void CUPTIAPI on_buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t size, size_t valid_bytes) {
  Collector& c = collector();
  {
    std::lock_guard<std::mutex> lock(c.session_mutex);
    if (c.active != nullptr) {
      try {
        c.active->consume(buffer, valid_bytes);
      } catch (...) {
        ++c.lost_buffers;  // the records converted so far stay; stop() says how many buffers
      }
    } else if (valid_bytes > 0) {
      ++c.late_buffers;  // only possible if CUPTI delivers after disable + forced flush
    }
  }
  c.pool.release(buffer, size);
}

void CuptiCaptureSession::go_host_only(std::string reason) {
  gpu_active_ = false;
  reason_ = std::move(reason);
  if (options_.require_gpu) throw Error(ErrorKind::kCuptiUnavailable, reason_);
}

void CuptiCaptureSession::start_failed(const char* call, CUptiResult rc) {
  {
    std::lock_guard<std::mutex> lock(collector().session_mutex);
    if (collector().active == this) collector().active = nullptr;
  }
  release_cupti();
  if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    throw Error(ErrorKind::kProfilerConflict, conflict_message(call));
  }
  go_host_only(start_failure(*api_, call, rc));
}

void CuptiCaptureSession::check_mapped_cupti() {
  if (warned_mapped_cupti_ || api_ == nullptr) return;
  if (std::string w = multiple_cupti_warning(CuptiApi::mapped_libraries(), api_->path); !w.empty()) {
    warnings_.add("capture.cupti_mapped_twice", std::move(w));
    warned_mapped_cupti_ = true;
  }
}

void CuptiCaptureSession::begin() {
  store_.meta.fpgaprof_version = version();
  store_.meta.start_ns = trace_clock_ns();
  std::string error;
  api_ = CuptiApi::get(&error);
  if (api_ == nullptr) {
    go_host_only(error);
    return;
  }
  store_.meta.cupti_path = api_->path;
  uint32_t cupti_version = 0;
  if (api_->GetVersion(&cupti_version) == CUPTI_SUCCESS) store_.meta.cupti_version = cupti_version;
  converter_.set_cupti_api_version(store_.meta.cupti_version);
  if (std::string old = old_cupti_reason(cupti_version, kMinRuntimeCuptiApiVersion, api_->path); !old.empty()) {
    go_host_only(std::move(old));
    return;
  }
  check_mapped_cupti();

  // Unversioned (V1) calls only, as XLA's and Kineto's tracers: CUPTI refuses a process that
  // mixes them with cuptiSubscribe_v2 and the other _v2 calls.
  if (const CUptiResult rc = api_->Subscribe(&subscriber_, on_callback, nullptr); rc != CUPTI_SUCCESS) {
    subscriber_ = nullptr;
    start_failed("cuptiSubscribe", rc);
    return;
  }

  if (api_->SetThreadIdType != nullptr) {
    if (const CUptiResult t = api_->SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM); t != CUPTI_SUCCESS) {
      if (t == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) return start_failed("cuptiSetThreadIdType", t);
      warnings_.add("capture.cupti_setup", "cuptiSetThreadIdType(SYSTEM) failed (" + api_->result_string(t) +
                                               "): API thread ids are CUPTI's, not gettid()");
    }
  }
  if (options_.device_buffer_bytes != 0 && api_->ActivitySetAttribute != nullptr) {
    std::size_t value = options_.device_buffer_bytes;
    std::size_t value_size = sizeof value;
    if (const CUptiResult a = api_->ActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &value_size, &value);
        a != CUPTI_SUCCESS) {
      if (a == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) return start_failed("cuptiActivitySetAttribute", a);
      warnings_.add("capture.cupti_setup", "device_buffer_bytes could not be set (" + api_->result_string(a) + ")");
    }
  }
  collector().pool.configure(options_.buffer_bytes, options_.max_buffers);
  if (const CUptiResult r = api_->ActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed);
      r != CUPTI_SUCCESS) {
    start_failed("cuptiActivityRegisterCallbacks", r);
    return;
  }
  {
    // Buffers may complete as soon as a kind is enabled.
    std::lock_guard<std::mutex> lock(collector().session_mutex);
    collector().active = this;
    if (collector().late_buffers > 0) {
      warnings_.add("capture.late_buffers",
                    std::to_string(collector().late_buffers) +
                        " CUPTI activity buffers arrived after the previous trace had stopped and "
                        "were discarded",
                    {static_cast<double>(collector().late_buffers)});
      collector().late_buffers = 0;
    }
  }
  enable_kinds();
}

void CuptiCaptureSession::enable_kinds() {
  // Only finished waits: by default CUPTI also records every event/stream query whose work
  // was not done yet (PJRT polls thousands), which would count as host waits.
  if (api_->ActivityEnableAllSyncRecords != nullptr) {
    if (const CUptiResult y = api_->ActivityEnableAllSyncRecords(0); y != CUPTI_SUCCESS) {
      if (y == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        return start_failed("cuptiActivityEnableAllSyncRecords", y);
      warnings_.add("capture.cupti_setup",
                    "cuptiActivityEnableAllSyncRecords(0) failed (" + api_->result_string(y) +
                        "): event/stream queries that found work unfinished are recorded; "
                        "fpgaprof skips those (returnValue != 0), but finished queries may count as "
                        "host waits");
    }
  } else {
    warnings_.add("capture.cupti_setup",
                  "this libcupti lacks cuptiActivityEnableAllSyncRecords: event/stream query "
                  "records may count as host waits (unfinished ones are skipped by their "
                  "return value)");
  }
  for (const KindSpec& spec : kKinds) {
    const char* call = "cuptiActivityEnable";
    CUptiResult e;
    // A trace that starts after CUDA init gets DEVICE records only from EnableAndDump (CUPTI
    // emits them at driver init); without it the devices come from the driver at stop().
    if (spec.kind == CUPTI_ACTIVITY_KIND_DEVICE && api_->ActivityEnableAndDump != nullptr) {
      call = "cuptiActivityEnableAndDump";
      e = api_->ActivityEnableAndDump(spec.kind);
    } else {
      e = api_->ActivityEnable(spec.kind);
    }
    if (e == CUPTI_SUCCESS) {
      enabled_.push_back(spec.kind);
      continue;
    }
    if (e == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED || spec.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      return start_failed(call, e);
    }
    warnings_.add("capture.activity_kind_disabled", std::string("CUPTI activity kind ") + spec.name +
                                                        " could not be enabled (" + api_->result_string(e) +
                                                        "): those records are missing from this trace");
  }
  quiet_api_calls();  // throws on a conflict
  gpu_active_ = true;
  start_power_sampling();
}

void CuptiCaptureSession::start_power_sampling() {
  if (options_.power_sample_period_ns == 0) return;
  // With a driver, only the GPUs this process sees through CUDA are read; without one (the
  // CUPTI test double), every NVML GPU is, and finish() keeps the ones the trace names.
  std::vector<std::string> uuids;
  const CudaDriver* driver = CudaDriver::get();
  if (driver != nullptr) {
    std::string ignored;
    const int count = driver->device_count(&ignored);
    for (int i = 0; i < count; ++i) {
      if (std::string u = driver->device_info(i).uuid; !u.empty()) uuids.push_back(std::move(u));
    }
  }
  std::string warning;
  // NVML comes with the driver: without a driver, its absence is no news.
  power_ = PowerSampler::start(options_.power_sample_period_ns, uuids, driver == nullptr, &warning);
  if (!warning.empty()) warnings_.add("energy.power_sampling", std::move(warning));
}

void CuptiCaptureSession::quiet_api_calls() {
  auto quiet = [this](const ApiSpec* begin, const ApiSpec* end, CUpti_ActivityKind kind,
                      CUptiResult (*off)(CUpti_CallbackId, uint8_t), const char* call) {
    if (!enabled(kind)) return;
    if (off == nullptr) {
      warnings_.add("capture.cupti_setup", std::string("this libcupti lacks ") + call +
                                               ": polling and context calls (cuEventQuery, cuCtxGetCurrent, ...) are "
                                               "traced too, which makes the trace larger and slower");
      return;
    }
    for (const ApiSpec* a = begin; a != end; ++a) {
      // A CUDA 13 build running with libcupti 12.x: that library does not know the id.
      if (store_.meta.cupti_version < a->min_runtime_api) continue;
      if (const CUptiResult r = off(a->cbid, 0); r != CUPTI_SUCCESS) {
        if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) return start_failed(call, r);
        warnings_.add("capture.cupti_setup", std::string(call) + "(" + a->name + ", 0) failed (" +
                                                 api_->result_string(r) + "): those calls are traced");
      }
    }
  };
  quiet(std::begin(kQuietDriverApis), std::end(kQuietDriverApis), CUPTI_ACTIVITY_KIND_DRIVER,
        api_->ActivityEnableDriverApi, "cuptiActivityEnableDriverApi");
  quiet(std::begin(kQuietRuntimeApis), std::end(kQuietRuntimeApis), CUPTI_ACTIVITY_KIND_RUNTIME,
        api_->ActivityEnableRuntimeApi, "cuptiActivityEnableRuntimeApi");
}

void CuptiCaptureSession::drop_own_calls(uint32_t thread_id, uint64_t begin_ns, bool driver_api_traced) {
  std::unordered_set<uint32_t> own;
  std::erase_if(store_.api_calls, [&](const ApiRecord& a) {
    if (a.thread_id != thread_id || a.start_ns < begin_ns) return false;
    own.insert(a.correlation_id);
    return true;
  });
  // Own syncs first, so that the converter does not count them as polls below.
  std::erase_if(store_.syncs, [&](const SyncRecord& y) { return own.count(y.correlation_id) != 0; });
  if (driver_api_traced) {
    converter_.drop_syncs_without_api_call();
    return;
  }
  std::unordered_set<uint32_t> traced;
  traced.reserve(store_.api_calls.size());
  for (const ApiRecord& a : store_.api_calls) traced.insert(a.correlation_id);
  std::erase_if(store_.syncs, [&](const SyncRecord& y) {
    return y.kind == SyncKind::kContextSynchronize && y.start_ns >= begin_ns && traced.count(y.correlation_id) == 0;
  });
}

std::string CuptiCaptureSession::disable_kinds() {
  std::string refused;
  for (auto it = enabled_.rbegin(); it != enabled_.rend(); ++it) {
    if (const CUptiResult rc = api_->ActivityDisable(*it); rc != CUPTI_SUCCESS) {
      refused += (refused.empty() ? "" : "; ") + std::string("cuptiActivityDisable(") +
                 std::to_string(static_cast<int>(*it)) + ") failed (" + api_->result_string(rc) + ")";
    }
  }
  enabled_.clear();
  return refused;
}

std::string CuptiCaptureSession::release_cupti() {
  std::string refused = disable_kinds();
  if (subscriber_ != nullptr) {
    if (const CUptiResult rc = api_->Unsubscribe(subscriber_); rc != CUPTI_SUCCESS) {
      refused +=
          (refused.empty() ? "" : "; ") + std::string("cuptiUnsubscribe failed (") + api_->result_string(rc) + ")";
    }
    subscriber_ = nullptr;
  }
  return refused;
}

void CuptiCaptureSession::end_quietly() noexcept {
  Collector& c = collector();
  try {
    if (api_ != nullptr) (void)release_cupti();
  } catch (...) {}
  try {
    std::lock_guard<std::mutex> lock(c.session_mutex);
    if (c.active == this) c.active = nullptr;
    c.lost_buffers = 0;  // this session's: not the next trace's to report
  } catch (...) {}
  try {
    if (power_) power_->halt();
  } catch (...) {}
  c.has_session = false;
  try {
    TraceStore discard;
    RegionRecorder::instance().end(trace_clock_ns(), discard);
  } catch (...) {}
  stopped_ = true;
}

TraceStore CuptiCaptureSession::stop() {
  if (::getpid() != pid_) {
    // A forked child holds a copy of the parent's session: CUPTI, the driver and the
    // collector's locks (copied in whatever state the fork found them) are the parent's.
    throw Error(ErrorKind::kState, "this trace was started by process " + std::to_string(pid_) +
                                       " and this is a forked child (" + std::to_string(::getpid()) +
                                       "): only the process that started a trace stops and saves it");
  }
  Collector& c = collector();
  std::lock_guard<std::mutex> lifecycle(c.lifecycle_mutex);
  if (stopped_) throw Error(ErrorKind::kState, "this trace was already stopped: start a new one");
  stopped_ = true;
  // Should anything below throw (an allocation on a large trace), the session still ends, with
  // the lifecycle mutex held: no CUPTI buffer reaches it once it is freed, the next trace starts.
  struct EndOnThrow {
    CuptiCaptureSession* session;
    bool armed = true;
    ~EndOnThrow() {
      if (armed) session->end_quietly();
    }
  } end_on_throw{this};
  // fpgaprof's own driver calls from here on (the synchronize) are removed from the trace
  // after the flush. The kinds stay enabled: JAX may still be launching on its own threads
  // after the traced block returned, and those launches' API records must stay.
  const uint32_t stop_thread = current_thread_id();
  const uint64_t stop_begin_ns = trace_clock_ns();
  const bool driver_api_traced = enabled(CUPTI_ACTIVITY_KIND_DRIVER);
  check_mapped_cupti();
  if (gpu_active_) {
    // FlushAll does not wait for the GPU: without a synchronize, kernels still running would
    // be missing.
    if (const CudaDriver* driver = CudaDriver::get()) {
      warnings_.append(driver->synchronize_all());
    } else {
      warnings_.add("capture.device_sync",
                    "device synchronization skipped: libcuda.so.1 not found (GPU work still running at "
                    "stop may be missing)");
    }
    if (const CUptiResult rc = api_->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); rc != CUPTI_SUCCESS) {
      warnings_.add("capture.flush_failed",
                    "cuptiActivityFlushAll failed (" + api_->result_string(rc) + "): the last records may be missing");
    }
    std::string refused = disable_kinds();
    // Records made between the first flush and the disable.
    if (const CUptiResult rc = api_->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); rc != CUPTI_SUCCESS) {
      warnings_.add("capture.flush_failed", "the second cuptiActivityFlushAll failed (" + api_->result_string(rc) +
                                                "): records made just before the stop may be missing");
    }
    if (std::string unsubscribe = release_cupti(); !unsubscribe.empty()) {
      refused += (refused.empty() ? "" : "; ") + unsubscribe;
    }
    if (!refused.empty()) {
      warnings_.add("capture.release_failed",
                    "CUPTI did not release the trace (" + refused +
                        "): a next trace in this process may find CUPTI still subscribed (a profiler conflict)");
    }
  }
  if (power_) power_->halt();  // its last reading is then at or before end_ns
  const uint64_t end_ns = trace_clock_ns();
  {
    std::lock_guard<std::mutex> lock(c.session_mutex);
    if (gpu_active_) read_dropped();
    c.active = nullptr;
    if (c.lost_buffers > 0) {
      warnings_.add("capture.buffers_lost",
                    std::to_string(c.lost_buffers) +
                        " CUPTI activity buffers could not be converted (out of memory): the "
                        "records after the failure in each are lost; trace a shorter run or free "
                        "host memory",
                    {static_cast<double>(c.lost_buffers)});
      c.lost_buffers = 0;
    }
    drop_own_calls(stop_thread, stop_begin_ns, driver_api_traced);
    converter_.finish(end_ns);
  }
  if (gpu_active_) {
    const std::string w = nvtx_warning(nvtx_injection_status(), store_.kernels.size(), store_.markers.size());
    if (!w.empty()) warnings_.add("capture.nvtx", w);
  }
  c.has_session = false;
  RegionRecorder::instance().end(end_ns, store_);

  TraceMeta& meta = store_.meta;
  meta.end_ns = end_ns;
  meta.gpu_available = gpu_active_;
  meta.unavailable_reason = reason_;
  if (const CudaDriver* driver = CudaDriver::get(); driver != nullptr && gpu_active_) {
    meta.driver_version = driver->driver_version();
    // The DEVICE record lacks memory clock and bus width; the driver has them.
    for (DeviceInfo& d : store_.devices) {
      const DeviceInfo facts = driver->device_info(static_cast<int>(d.id));
      if (d.memory_clock_khz == 0) d.memory_clock_khz = facts.memory_clock_khz;
      if (d.memory_bus_width_bits == 0) d.memory_bus_width_bits = facts.memory_bus_width_bits;
      if (d.core_clock_khz == 0) d.core_clock_khz = facts.core_clock_khz;
    }
    if (store_.devices.empty()) {
      std::string ignored;
      const int count = driver->device_count(&ignored);
      for (int i = 0; i < count; ++i) store_.devices.push_back(driver->device_info(i));
    }
    // The driver has no attribute for the PCIe link: sysfs at the device's PCI bus id.
    std::vector<std::pair<uint32_t, PcieLink>> links;
    for (DeviceInfo& d : store_.devices) {
      if (d.pcie_generation != 0 && d.pcie_link_width != 0) continue;
      PcieLink link = driver->pcie_link(static_cast<int>(d.id));
      d.pcie_generation = link.generation;
      d.pcie_link_width = link.width;
      links.emplace_back(d.id, std::move(link));
    }
    for (auto& w : pcie_link_warnings(links)) warnings_.add("capture.pcie_link", std::move(w));
  }
  if (power_) {
    // After the devices are complete: samples are matched to them by UUID.
    if (std::string w = power_->finish(store_); !w.empty()) warnings_.add("energy.power_sampling", std::move(w));
    power_.reset();
  }
  meta.warnings.append(warnings_);
  warnings_.clear();
  end_on_throw.armed = false;
  return std::move(store_);
}

CuptiCaptureSession::~CuptiCaptureSession() {
  // Stopped, or a forked child's copy (the parent's CUPTI and locks: nothing to touch).
  if (stopped_ || ::getpid() != pid_) return;
  // Destroyed without stop(): its data is discarded, so the session only ends (no flush or
  // synchronize; CUPTI's later buffers are counted late and returned to the pool).
  try {
    std::lock_guard<std::mutex> lifecycle(collector().lifecycle_mutex);
    end_quietly();
  } catch (...) {
    // A destructor must not throw (a lock that cannot be taken: system_error).
  }
}

}  // namespace
}  // namespace cupti

std::unique_ptr<CaptureSession> CaptureSession::start(const CaptureOptions& options) {
  cupti::Collector& c = cupti::collector();
  std::lock_guard<std::mutex> lifecycle(c.lifecycle_mutex);
  if (c.has_session) {
    throw Error(ErrorKind::kState,
                "a trace is already active: nested fpgaprof.trace() is not supported; stop the "
                "outer trace first");
  }
  if (options.buffer_bytes < kMinBufferBytes || options.buffer_bytes > kMaxBufferBytes) {
    throw Error(ErrorKind::kInvalidArgument, "buffer_bytes " + std::to_string(options.buffer_bytes) + " is outside " +
                                                 std::to_string(kMinBufferBytes) + " to " +
                                                 std::to_string(kMaxBufferBytes) +
                                                 " bytes (1 GiB): give a size in that range (8 MiB by default)");
  }
  auto session = std::make_unique<cupti::CuptiCaptureSession>(options);
  cupti::RegionRecorder::instance().begin();
  try {
    session->begin();
  } catch (...) {
    session->end_quietly();
    throw;
  }
  c.has_session = true;
  return session;
}

}  // namespace fpgaprof

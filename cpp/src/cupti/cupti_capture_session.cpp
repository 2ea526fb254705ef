// CuptiCaptureSession: the CaptureSession behind CaptureSession::start(). One per process at
// a time. CUPTI's buffer callbacks carry no user data, so the active session is reached
// through the process-wide Collector.
#include <dlfcn.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cupti/buffer_pool.hpp"
#include "cupti/cuda_driver.hpp"
#include "cupti/cupti_api.hpp"
#include "cupti/record_converter.hpp"
#include "cupti/region_recorder.hpp"
#include "fpgaprof/capture.hpp"
#include "fpgaprof/error.hpp"
#include "fpgaprof/version.hpp"

namespace fpgaprof {
namespace cupti {
namespace {

class CuptiCaptureSession;

struct Collector {
  std::mutex lifecycle_mutex;  // serializes start/stop
  std::mutex session_mutex;    // guards active and the active session's store/converter
  CuptiCaptureSession* active = nullptr;
  bool has_session = false;    // a session exists (host-only ones too); guarded by lifecycle_mutex
  BufferPool pool;
  uint64_t late_buffers = 0;   // buffers completed with no session; guarded by session_mutex
};

Collector& collector() {
  static Collector* c = new Collector();  // CUPTI's thread may call back until process exit
  return *c;
}

struct KindSpec {
  CUpti_ActivityKind kind;
  const char* name;
};
// MARKER before MARKER_DATA: CUPTI attaches marker data to enabled markers.
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
    {CUPTI_ACTIVITY_KIND_MARKER_DATA, "MARKER_DATA"},
    {CUPTI_ACTIVITY_KIND_NAME, "NAME"},
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

std::string no_driver_reason(const CuptiApi& api, CUptiResult rc) {
  if (CudaDriver::get() == nullptr) {
    return "no CUDA driver found (libcuda.so.1 cannot be loaded): install the NVIDIA driver and "
           "run on a machine with an NVIDIA GPU; only host-side regions are recorded";
  }
  return "CUPTI could not start (" + api.result_string(rc) +
         "): check that a GPU is visible (nvidia-smi, CUDA_VISIBLE_DEVICES); only host-side "
         "regions are recorded";
}

class CuptiCaptureSession final : public CaptureSession {
 public:
  explicit CuptiCaptureSession(const CaptureOptions& options)
      : options_(options), converter_(store_, callback_name, &api_) {}
  ~CuptiCaptureSession() override;

  // Called with the collector's lifecycle mutex held.
  void begin();
  TraceStore stop() override;
  // start() failed: nothing to release.
  void abandon() { stopped_ = true; }
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
    if (api_->ActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped > 0) {
      converter_.add_dropped(dropped);
    }
  }
  void go_host_only(std::string reason);
  void release_cupti();  // disable kinds, unsubscribe

  CaptureOptions options_;
  TraceStore store_;
  RecordConverter converter_;
  const CuptiApi* api_ = nullptr;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::vector<CUpti_ActivityKind> enabled_;
  std::vector<std::string> warnings_;
  bool gpu_active_ = false;
  bool stopped_ = false;
  std::string reason_;
};

void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;
  *buffer = collector().pool.acquire(size);
}

void CUPTIAPI on_buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t size, size_t valid_bytes) {
  Collector& c = collector();
  {
    std::lock_guard<std::mutex> lock(c.session_mutex);
    if (c.active != nullptr) {
      c.active->consume(buffer, valid_bytes);
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

  CUptiResult rc;
  if (api_->Subscribe_v2 != nullptr) {
    char old_name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "fpgaprof";
    params.oldSubscriberName = old_name;
    params.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN;
    rc = api_->Subscribe_v2(&subscriber_, on_callback, nullptr, &params);
    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
      const std::string holder = old_name[0] != '\0' ? old_name : "another CUPTI client";
      throw Error(ErrorKind::kProfilerConflict,
                  "CUPTI is held by " + holder +
                      ": stop Nsight/jax.profiler.trace first (only one CUPTI subscriber per "
                      "process before CUPTI 13.2)");
    }
  } else {
    rc = api_->Subscribe(&subscriber_, on_callback, nullptr);
    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
      throw Error(ErrorKind::kProfilerConflict,
                  "CUPTI is held by another CUPTI client (Nsight, cuda-gdb or jax.profiler.trace): "
                  "stop Nsight/jax.profiler.trace first");
    }
  }
  if (rc != CUPTI_SUCCESS) {
    subscriber_ = nullptr;
    go_host_only(no_driver_reason(*api_, rc));
    return;
  }

  if (api_->SetThreadIdType != nullptr) {
    if (const CUptiResult t = api_->SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM); t != CUPTI_SUCCESS) {
      warnings_.push_back("cuptiSetThreadIdType(SYSTEM) failed (" + api_->result_string(t) +
                          "): API thread ids are CUPTI's, not gettid()");
    }
  }
  if (options_.device_buffer_bytes != 0 && api_->ActivitySetAttribute != nullptr) {
    std::size_t value = options_.device_buffer_bytes;
    std::size_t value_size = sizeof value;
    if (const CUptiResult a = api_->ActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &value_size, &value);
        a != CUPTI_SUCCESS) {
      warnings_.push_back("device_buffer_bytes could not be set (" + api_->result_string(a) + ")");
    }
  }
  collector().pool.configure(options_.buffer_bytes, options_.max_buffers);
  if (const CUptiResult r = api_->ActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed);
      r != CUPTI_SUCCESS) {
    api_->Unsubscribe(subscriber_);
    subscriber_ = nullptr;
    go_host_only(no_driver_reason(*api_, r));
    return;
  }
  {
    // Buffers may complete as soon as a kind is enabled.
    std::lock_guard<std::mutex> lock(collector().session_mutex);
    collector().active = this;
    if (collector().late_buffers > 0) {
      warnings_.push_back(std::to_string(collector().late_buffers) +
                          " CUPTI activity buffers arrived after the previous trace had stopped and "
                          "were discarded");
      collector().late_buffers = 0;
    }
  }
  for (const KindSpec& spec : kKinds) {
    const CUptiResult e = api_->ActivityEnable(spec.kind);
    if (e == CUPTI_SUCCESS) {
      enabled_.push_back(spec.kind);
      continue;
    }
    if (spec.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      {
        std::lock_guard<std::mutex> lock(collector().session_mutex);
        collector().active = nullptr;
      }
      api_->Unsubscribe(subscriber_);
      subscriber_ = nullptr;
      go_host_only(no_driver_reason(*api_, e));
      return;
    }
    warnings_.push_back(std::string("CUPTI activity kind ") + spec.name + " could not be enabled (" +
                        api_->result_string(e) + "): those records are missing from this trace");
  }
  gpu_active_ = true;
}

void CuptiCaptureSession::release_cupti() {
  for (auto it = enabled_.rbegin(); it != enabled_.rend(); ++it) api_->ActivityDisable(*it);
  enabled_.clear();
  if (subscriber_ != nullptr) {
    api_->Unsubscribe(subscriber_);
    subscriber_ = nullptr;
  }
}

TraceStore CuptiCaptureSession::stop() {
  Collector& c = collector();
  std::lock_guard<std::mutex> lifecycle(c.lifecycle_mutex);
  if (stopped_) throw Error(ErrorKind::kState, "this trace was already stopped: start a new one");
  stopped_ = true;
  if (gpu_active_) {
    // FlushAll does not wait for the GPU: without a synchronize, kernels still running would
    // be missing.
    if (const CudaDriver* driver = CudaDriver::get()) {
      for (auto& w : driver->synchronize_all()) warnings_.push_back(std::move(w));
    } else {
      warnings_.emplace_back(
          "device synchronization skipped: libcuda.so.1 not found (GPU work still running at "
          "stop may be missing)");
    }
    if (const CUptiResult rc = api_->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); rc != CUPTI_SUCCESS) {
      warnings_.push_back("cuptiActivityFlushAll failed (" + api_->result_string(rc) +
                          "): the last records may be missing");
    }
    for (auto it = enabled_.rbegin(); it != enabled_.rend(); ++it) api_->ActivityDisable(*it);
    enabled_.clear();
    // Records made between the first flush and the disable.
    api_->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    release_cupti();
  }
  const uint64_t end_ns = trace_clock_ns();
  {
    std::lock_guard<std::mutex> lock(c.session_mutex);
    if (gpu_active_) read_dropped();
    c.active = nullptr;
    converter_.finish(end_ns);
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
  }
  for (auto& w : warnings_) meta.warnings.push_back(std::move(w));
  warnings_.clear();
  return std::move(store_);
}

CuptiCaptureSession::~CuptiCaptureSession() {
  if (stopped_) return;
  try {
    (void)stop();
  } catch (...) {
    // A destructor must not throw; the session's data is discarded anyway.
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
  auto session = std::make_unique<cupti::CuptiCaptureSession>(options);
  cupti::RegionRecorder::instance().begin();
  try {
    session->begin();
  } catch (...) {
    session->abandon();
    TraceStore discard;
    cupti::RegionRecorder::instance().end(0, discard);
    throw;
  }
  c.has_session = true;
  return session;
}

}  // namespace fpgaprof

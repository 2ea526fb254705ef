// CounterSession on CUPTI's Range Profiler + Profiler Host API (auto range, kernel replay).
// Sequence (REFERENCE.md): preload libnvperf_host.so by absolute path (RTLD_GLOBAL), then
// cuptiProfilerInitialize -> chip name + counter availability -> host object with the metrics ->
// config image -> cuptiRangeProfilerEnable on the context -> counter-data image -> SetConfig
// (AutoRange, KernelReplay) -> Start ... Stop -> DecodeData -> per-range values through
// cuptiProfilerHostEvaluateToGpuValues. Every CUPTI entry point is resolved with dlsym from the
// libcupti that CuptiApi loaded (never linked).
#include <dlfcn.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include "cupti/cupti_api.hpp"
#include "fpgaprof/counters.hpp"
#include "fpgaprof/error.hpp"

namespace fpgaprof {
namespace {

struct ProfilerApi {
  decltype(&cuptiProfilerInitialize) Initialize = nullptr;
  decltype(&cuptiProfilerDeInitialize) DeInitialize = nullptr;
  decltype(&cuptiDeviceGetChipName) GetChipName = nullptr;
  decltype(&cuptiProfilerGetCounterAvailability) GetCounterAvailability = nullptr;
  decltype(&cuptiProfilerHostInitialize) HostInitialize = nullptr;
  decltype(&cuptiProfilerHostDeinitialize) HostDeinitialize = nullptr;
  decltype(&cuptiProfilerHostGetBaseMetrics) HostGetBaseMetrics = nullptr;
  decltype(&cuptiProfilerHostConfigAddMetrics) HostConfigAddMetrics = nullptr;
  decltype(&cuptiProfilerHostGetConfigImageSize) HostGetConfigImageSize = nullptr;
  decltype(&cuptiProfilerHostGetConfigImage) HostGetConfigImage = nullptr;
  decltype(&cuptiProfilerHostGetNumOfPasses) HostGetNumOfPasses = nullptr;
  decltype(&cuptiProfilerHostEvaluateToGpuValues) HostEvaluateToGpuValues = nullptr;
  decltype(&cuptiRangeProfilerEnable) Enable = nullptr;
  decltype(&cuptiRangeProfilerDisable) Disable = nullptr;
  decltype(&cuptiRangeProfilerSetConfig) SetConfig = nullptr;
  decltype(&cuptiRangeProfilerStart) Start = nullptr;
  decltype(&cuptiRangeProfilerStop) Stop = nullptr;
  decltype(&cuptiRangeProfilerDecodeData) DecodeData = nullptr;
  decltype(&cuptiRangeProfilerGetCounterDataSize) GetCounterDataSize = nullptr;
  decltype(&cuptiRangeProfilerCounterDataImageInitialize) CounterDataImageInitialize = nullptr;
  decltype(&cuptiRangeProfilerGetCounterDataInfo) GetCounterDataInfo = nullptr;
  decltype(&cuptiRangeProfilerCounterDataGetRangeInfo) GetRangeInfo = nullptr;
};

template <typename F>
void resolve(void* handle, const char* name, F& out, std::string& missing) {
  out = reinterpret_cast<F>(dlsym(handle, name));
  if (out == nullptr) missing += (missing.empty() ? "" : ", ") + std::string(name);
}

std::string dir_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

using CUcontextOpaque = void*;

// A zeroed CUPTI parameter struct with its size set (pPriv and every [in] field start at 0).
template <typename T>
T params(std::size_t struct_size) {
  T p;
  std::memset(static_cast<void*>(&p), 0, sizeof p);
  p.structSize = struct_size;
  return p;
}

// The profiled context: the calling thread's current one, else the device's primary context
// (the one JAX uses), retained for the session.
CUcontextOpaque profiled_context(int device, std::string* error) {
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (cuda == nullptr) cuda = dlopen("libcuda.so.1", RTLD_NOW);
  if (cuda == nullptr) {
    *error = "libcuda.so.1 cannot be loaded (no NVIDIA driver): hardware counters need a GPU";
    return nullptr;
  }
  auto init = reinterpret_cast<int (*)(unsigned)>(dlsym(cuda, "cuInit"));
  auto get_current = reinterpret_cast<int (*)(CUcontextOpaque*)>(dlsym(cuda, "cuCtxGetCurrent"));
  auto retain = reinterpret_cast<int (*)(CUcontextOpaque*, int)>(dlsym(cuda, "cuDevicePrimaryCtxRetain"));
  auto set_current = reinterpret_cast<int (*)(CUcontextOpaque)>(dlsym(cuda, "cuCtxSetCurrent"));
  if (init == nullptr || get_current == nullptr || retain == nullptr || set_current == nullptr) {
    *error = "libcuda.so.1 lacks cuCtxGetCurrent/cuDevicePrimaryCtxRetain: update the NVIDIA driver";
    return nullptr;
  }
  if (init(0) != 0) {
    *error = "cuInit failed: no usable GPU for hardware counters";
    return nullptr;
  }
  CUcontextOpaque ctx = nullptr;
  if (get_current(&ctx) == 0 && ctx != nullptr) return ctx;
  if (retain(&ctx, device) != 0 || ctx == nullptr) {
    *error = "cannot retain the primary context of device " + std::to_string(device) + ": check CUDA_VISIBLE_DEVICES";
    return nullptr;
  }
  set_current(ctx);
  return ctx;
}

class CuptiCounterSession final : public CounterSession {
 public:
  CuptiCounterSession(const cupti::CuptiApi* cupti, ProfilerApi api, CounterOptions options)
      : cupti_(cupti), api_(api), options_(std::move(options)) {}

  ~CuptiCounterSession() override { teardown(); }

  void begin() {
    // A context first: without a driver and a GPU, CUPTI's profiler calls may crash (chip name).
    std::string error;
    ctx_ = profiled_context(options_.device, &error);
    if (ctx_ == nullptr) throw Error(ErrorKind::kCuptiUnavailable, error);

    auto init = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    check(api_.Initialize(&init), "cuptiProfilerInitialize");
    initialized_ = true;

    auto chip = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = static_cast<size_t>(options_.device);
    check(api_.GetChipName(&chip), "cuptiDeviceGetChipName");
    chip_ = chip.pChipName != nullptr ? chip.pChipName : "";

    auto avail = params<CUpti_Profiler_GetCounterAvailability_Params>(CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
    avail.ctx = static_cast<CUcontext>(ctx_);
    check(api_.GetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability (size)");
    availability_.resize(avail.counterAvailabilityImageSize);
    avail.pCounterAvailabilityImage = availability_.data();
    check(api_.GetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");

    auto host = params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    host.pChipName = chip_.c_str();
    host.pCounterAvailabilityImage = availability_.data();
    check(api_.HostInitialize(&host), "cuptiProfilerHostInitialize");
    host_ = host.pHostObject;

    metrics_ = options_.metrics;
    if (metrics_.empty()) {
      auto base = params<CUpti_Profiler_Host_GetBaseMetrics_Params>(CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE);
      base.pHostObject = host_;
      base.metricType = CUPTI_METRIC_TYPE_COUNTER;
      check(api_.HostGetBaseMetrics(&base), "cuptiProfilerHostGetBaseMetrics");
      std::vector<std::string> supported;
      for (size_t i = 0; i < base.numMetrics; ++i) supported.emplace_back(base.ppMetricNames[i]);
      const MetricSelection sel = select_counter_metrics(supported);
      metrics_ = sel.metrics;
      for (const std::string& m : sel.missing)
        warnings_.push_back("counter metric not available on " + chip_ + ": " + m + "; continuing without it");
    }
    if (metrics_.empty())
      throw Error(ErrorKind::kCounters, "no fpgaprof counter metric is available on chip " + chip_ +
                                            ": trace without counters=True");
    for (const std::string& m : metrics_) metric_ptrs_.push_back(m.c_str());

    auto add = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    add.pHostObject = host_;
    add.ppMetricNames = metric_ptrs_.data();
    add.numMetrics = metric_ptrs_.size();
    check(api_.HostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics");
    auto csize = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    csize.pHostObject = host_;
    check(api_.HostGetConfigImageSize(&csize), "cuptiProfilerHostGetConfigImageSize");
    config_.resize(csize.configImageSize);
    auto cimg = params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    cimg.pHostObject = host_;
    cimg.configImageSize = config_.size();
    cimg.pConfigImage = config_.data();
    check(api_.HostGetConfigImage(&cimg), "cuptiProfilerHostGetConfigImage");
    auto passes = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
    passes.configImageSize = config_.size();
    passes.pConfigImage = config_.data();
    if (api_.HostGetNumOfPasses(&passes) == CUPTI_SUCCESS && passes.numOfPasses > 1)
      warnings_.push_back("counters need " + std::to_string(passes.numOfPasses) +
                          " replay passes per kernel: kernels run that many times while counting");

    auto en = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    en.ctx = static_cast<CUcontext>(ctx_);
    check(api_.Enable(&en), "cuptiRangeProfilerEnable");
    object_ = en.pRangeProfilerObject;

    auto dsize = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    dsize.pRangeProfilerObject = object_;
    dsize.pMetricNames = metric_ptrs_.data();
    dsize.numMetrics = metric_ptrs_.size();
    dsize.maxNumOfRanges = options_.max_ranges;
    dsize.maxNumRangeTreeNodes = static_cast<uint32_t>(options_.max_ranges);
    check(api_.GetCounterDataSize(&dsize), "cuptiRangeProfilerGetCounterDataSize");
    counter_data_.resize(dsize.counterDataSize);
    configure_and_start();
  }

  void checkpoint() override {
    collect();
    configure_and_start();
  }

  CounterMatch stop_into(TraceStore& store) override {
    collect();
    CounterMatch m = add_counter_ranges(store, metrics_, ranges_, 0);
    m.dropped_ranges = dropped_;
    if (dropped_ > 0)
      warnings_.push_back(std::to_string(dropped_) + " counter ranges were dropped (the counter image was full): "
                          "lower the number of kernels between checkpoints");
    if (m.unmatched_ranges > 0)
      warnings_.push_back(std::to_string(m.unmatched_ranges) + " counter ranges matched no traced kernel");
    for (const std::string& w : warnings_) store.meta.warnings.push_back(w);
    teardown();
    return m;
  }

  const std::vector<std::string>& metrics() const override { return metrics_; }
  const std::vector<std::string>& warnings() const override { return warnings_; }

 private:
  void check(CUptiResult r, const char* what) {
    if (r == CUPTI_SUCCESS) return;
    if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
      throw Error(ErrorKind::kCounters,
                  std::string(what) + ": the driver restricts GPU performance counters to admin users: set "
                  "NVreg_RestrictProfilingToAdminUsers=0 (driver option) or run as root");
    throw Error(ErrorKind::kCounters, std::string(what) + " failed: " + cupti_->result_string(r) +
                                          " (chip '" + chip_ + "'): trace without counters=True");
  }

  void configure_and_start() {
    auto ini = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    ini.pRangeProfilerObject = object_;
    ini.counterDataSize = counter_data_.size();
    ini.pCounterData = counter_data_.data();
    check(api_.CounterDataImageInitialize(&ini), "cuptiRangeProfilerCounterDataImageInitialize");
    auto cfg = params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    cfg.pRangeProfilerObject = object_;
    cfg.configSize = config_.size();
    cfg.pConfig = config_.data();
    cfg.counterDataImageSize = counter_data_.size();
    cfg.pCounterDataImage = counter_data_.data();
    cfg.range = CUPTI_AutoRange;
    cfg.replayMode = CUPTI_KernelReplay;
    cfg.maxRangesPerPass = options_.max_ranges;
    cfg.numNestingLevels = 1;
    cfg.minNestingLevel = 1;
    cfg.passIndex = 0;
    cfg.targetNestingLevel = 1;
    check(api_.SetConfig(&cfg), "cuptiRangeProfilerSetConfig");
    auto st = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    st.pRangeProfilerObject = object_;
    check(api_.Start(&st), "cuptiRangeProfilerStart");
    running_ = true;
  }

  // Stop, decode and evaluate every range now in the image.
  void collect() {
    if (!running_) return;
    auto sp = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    sp.pRangeProfilerObject = object_;
    check(api_.Stop(&sp), "cuptiRangeProfilerStop");
    running_ = false;
    auto dec = params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    dec.pRangeProfilerObject = object_;
    check(api_.DecodeData(&dec), "cuptiRangeProfilerDecodeData");
    dropped_ += dec.numOfRangeDropped;
    auto info = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
    info.pCounterDataImage = counter_data_.data();
    info.counterDataImageSize = counter_data_.size();
    check(api_.GetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
    for (size_t i = 0; i < info.numTotalRanges; ++i) {
      auto ri = params<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
      ri.pCounterDataImage = counter_data_.data();
      ri.counterDataImageSize = counter_data_.size();
      ri.rangeIndex = i;
      ri.rangeDelimiter = "/";
      check(api_.GetRangeInfo(&ri), "cuptiRangeProfilerCounterDataGetRangeInfo");
      CounterRange range;
      range.name = ri.rangeName != nullptr ? ri.rangeName : "";
      range.values.assign(metric_ptrs_.size(), 0.0);
      auto ev = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
      ev.pHostObject = host_;
      ev.pCounterDataImage = counter_data_.data();
      ev.counterDataImageSize = counter_data_.size();
      ev.rangeIndex = i;
      ev.ppMetricNames = metric_ptrs_.data();
      ev.numMetrics = metric_ptrs_.size();
      ev.pMetricValues = range.values.data();
      check(api_.HostEvaluateToGpuValues(&ev), "cuptiProfilerHostEvaluateToGpuValues");
      ranges_.push_back(std::move(range));
    }
  }

  // Best effort: errors while tearing down are not reported (the values are already kept).
  void teardown() {
    if (running_) {
      auto sp = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
      sp.pRangeProfilerObject = object_;
      api_.Stop(&sp);
      running_ = false;
    }
    if (object_ != nullptr) {
      auto d = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
      d.pRangeProfilerObject = object_;
      api_.Disable(&d);
      object_ = nullptr;
    }
    if (host_ != nullptr) {
      auto d = params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
      d.pHostObject = host_;
      api_.HostDeinitialize(&d);
      host_ = nullptr;
    }
    if (initialized_) {
      auto d = params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
      api_.DeInitialize(&d);
      initialized_ = false;
    }
  }

  const cupti::CuptiApi* cupti_;
  ProfilerApi api_;
  CounterOptions options_;
  bool initialized_ = false;
  bool running_ = false;
  CUcontextOpaque ctx_ = nullptr;
  std::string chip_;
  std::vector<uint8_t> availability_, config_, counter_data_;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  CUpti_RangeProfiler_Object* object_ = nullptr;
  std::vector<std::string> metrics_;
  std::vector<const char*> metric_ptrs_;
  std::vector<CounterRange> ranges_;
  std::vector<std::string> warnings_;
  uint64_t dropped_ = 0;
};

std::mutex g_active_mutex;
bool g_active = false;

}  // namespace

std::unique_ptr<CounterSession> CounterSession::start(const CounterOptions& options) {
  std::string error;
  const cupti::CuptiApi* cupti = cupti::CuptiApi::get(&error);
  if (cupti == nullptr) throw Error(ErrorKind::kCuptiUnavailable, error);
  // The Host API dlopens libnvperf_host.so by bare name: load it first by absolute path, next to
  // the libcupti in use (pip wheel or toolkit), so that lookup finds the matching copy.
  const std::string nvperf = dir_of(cupti->path) + "/libnvperf_host.so";
  if (dlopen(nvperf.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr &&
      dlopen("libnvperf_host.so", RTLD_NOW | RTLD_GLOBAL) == nullptr)
    throw Error(ErrorKind::kCounters, "libnvperf_host.so not found next to " + cupti->path +
                                          ": install the nvidia-cuda-cupti wheel or the CUDA toolkit's CUPTI");
  ProfilerApi api;
  std::string missing;
  void* h = cupti->handle;
  resolve(h, "cuptiProfilerInitialize", api.Initialize, missing);
  resolve(h, "cuptiProfilerDeInitialize", api.DeInitialize, missing);
  resolve(h, "cuptiDeviceGetChipName", api.GetChipName, missing);
  resolve(h, "cuptiProfilerGetCounterAvailability", api.GetCounterAvailability, missing);
  resolve(h, "cuptiProfilerHostInitialize", api.HostInitialize, missing);
  resolve(h, "cuptiProfilerHostDeinitialize", api.HostDeinitialize, missing);
  resolve(h, "cuptiProfilerHostGetBaseMetrics", api.HostGetBaseMetrics, missing);
  resolve(h, "cuptiProfilerHostConfigAddMetrics", api.HostConfigAddMetrics, missing);
  resolve(h, "cuptiProfilerHostGetConfigImageSize", api.HostGetConfigImageSize, missing);
  resolve(h, "cuptiProfilerHostGetConfigImage", api.HostGetConfigImage, missing);
  resolve(h, "cuptiProfilerHostGetNumOfPasses", api.HostGetNumOfPasses, missing);
  resolve(h, "cuptiProfilerHostEvaluateToGpuValues", api.HostEvaluateToGpuValues, missing);
  resolve(h, "cuptiRangeProfilerEnable", api.Enable, missing);
  resolve(h, "cuptiRangeProfilerDisable", api.Disable, missing);
  resolve(h, "cuptiRangeProfilerSetConfig", api.SetConfig, missing);
  resolve(h, "cuptiRangeProfilerStart", api.Start, missing);
  resolve(h, "cuptiRangeProfilerStop", api.Stop, missing);
  resolve(h, "cuptiRangeProfilerDecodeData", api.DecodeData, missing);
  resolve(h, "cuptiRangeProfilerGetCounterDataSize", api.GetCounterDataSize, missing);
  resolve(h, "cuptiRangeProfilerCounterDataImageInitialize", api.CounterDataImageInitialize, missing);
  resolve(h, "cuptiRangeProfilerGetCounterDataInfo", api.GetCounterDataInfo, missing);
  resolve(h, "cuptiRangeProfilerCounterDataGetRangeInfo", api.GetRangeInfo, missing);
  if (!missing.empty())
    throw Error(ErrorKind::kCounters, cupti->path + " lacks the Range Profiler (" + missing +
                                          "): use CUPTI from CUDA 12.6 or newer");
  {
    std::lock_guard<std::mutex> lock(g_active_mutex);
    if (g_active) throw Error(ErrorKind::kState, "a counter session is already active: stop it first");
    g_active = true;
  }
  try {
    auto s = std::make_unique<CuptiCounterSession>(cupti, api, options);
    s->begin();
    return s;
  } catch (...) {
    std::lock_guard<std::mutex> lock(g_active_mutex);
    g_active = false;
    throw;
  }
}

}  // namespace fpgaprof

// CounterSession on CUPTI's Range Profiler + Profiler Host API (auto range, kernel replay), and
// plan_counters, the host-only part of it (no driver or GPU needed).
// Sequence (REFERENCE.md): preload libnvperf_host.so by absolute path (RTLD_GLOBAL), then
// cuptiProfilerInitialize -> chip name + counter availability -> host object with the metrics ->
// config image -> cuptiRangeProfilerEnable on the context -> counter-data image -> SetConfig
// (AutoRange, KernelReplay) -> Start ... Stop -> DecodeData -> per-range values through
// cuptiProfilerHostEvaluateToGpuValues. Every CUPTI entry point is resolved with dlsym from the
// libcupti that CuptiApi loaded (never linked).
#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cupti/cuda_driver.hpp"
#include "cupti/cupti_api.hpp"
#include "cupti/profiler_headers.hpp"
#include "fpgaprof/cupti/capture.hpp"
#include "fpgaprof/cupti/counters.hpp"
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
  decltype(&cuptiProfilerHostGetSupportedChips) HostGetSupportedChips = nullptr;
  decltype(&cuptiProfilerHostGetBaseMetrics) HostGetBaseMetrics = nullptr;
  decltype(&cuptiProfilerHostGetMetricProperties) HostGetMetricProperties = nullptr;
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
  decltype(&cuptiProfilerDeviceSupported) DeviceSupported = nullptr;  // optional
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

struct Profiler {
  const cupti::CuptiApi* cupti = nullptr;
  ProfilerApi api;
};

// libcupti (CuptiApi's search), libnvperf_host.so beside it, and every profiler entry point.
Profiler load_profiler() {
  std::string error;
  Profiler p;
  p.cupti = cupti::CuptiApi::get(&error);
  if (p.cupti == nullptr) throw Error(ErrorKind::kCuptiUnavailable, error);
  // The Host API dlopens libnvperf_host.so by bare name: load it first by absolute path, next to
  // the libcupti in use (pip wheel or toolkit), so that lookup finds the matching copy.
  const std::string nvperf = dir_of(p.cupti->path) + "/libnvperf_host.so";
  if (dlopen(nvperf.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr &&
      dlopen("libnvperf_host.so", RTLD_NOW | RTLD_GLOBAL) == nullptr)
    throw Error(ErrorKind::kCounters, "libnvperf_host.so not found next to " + p.cupti->path +
                                          ": install the nvidia-cuda-cupti wheel or the CUDA toolkit's CUPTI");
  ProfilerApi& api = p.api;
  std::string missing;
  void* h = p.cupti->handle;
  resolve(h, "cuptiProfilerInitialize", api.Initialize, missing);
  resolve(h, "cuptiProfilerDeInitialize", api.DeInitialize, missing);
  resolve(h, "cuptiDeviceGetChipName", api.GetChipName, missing);
  resolve(h, "cuptiProfilerGetCounterAvailability", api.GetCounterAvailability, missing);
  resolve(h, "cuptiProfilerHostInitialize", api.HostInitialize, missing);
  resolve(h, "cuptiProfilerHostDeinitialize", api.HostDeinitialize, missing);
  resolve(h, "cuptiProfilerHostGetSupportedChips", api.HostGetSupportedChips, missing);
  resolve(h, "cuptiProfilerHostGetBaseMetrics", api.HostGetBaseMetrics, missing);
  resolve(h, "cuptiProfilerHostGetMetricProperties", api.HostGetMetricProperties, missing);
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
  api.DeviceSupported = reinterpret_cast<decltype(api.DeviceSupported)>(dlsym(h, "cuptiProfilerDeviceSupported"));
  if (!missing.empty())
    throw Error(ErrorKind::kCounters,
                p.cupti->path + " lacks the Range Profiler (" + missing + "): use CUPTI from CUDA 12.6 or newer");
  return p;
}

// Throws Error(kCounters) for a failed CUPTI call, naming the driver setting for the privilege error.
void check(const cupti::CuptiApi& cupti, CUptiResult r, const char* what, const std::string& chip) {
  if (r == CUPTI_SUCCESS) return;
  // Seen with the nvidia-cuda-cupti 13.5 wheel: without libcuda every call answers
  // CUPTI_ERROR_UNKNOWN, also the Profiler Host API, which the 13.0 toolkit's libcupti serves
  // without a driver.
  if (r == CUPTI_ERROR_UNKNOWN && cupti::CudaDriver::get() == nullptr)
    throw Error(ErrorKind::kCuptiUnavailable,
                std::string(what) + " failed: " + cupti.result_string(r) + ": " + cupti.path +
                    " answers CUPTI_ERROR_UNKNOWN on a machine without an NVIDIA driver; point "
                    "FPGAPROF_CUPTI_LIBRARY at a CUDA toolkit's libcupti (e.g. "
                    "/usr/local/cuda/lib64/libcupti.so.13), which plans counters without a driver, "
                    "or run on the GPU machine");
  if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    throw Error(ErrorKind::kCounters, counter_privileges_message(what, read_proc_version(proc_version_path())));
  throw Error(ErrorKind::kCounters, std::string(what) + " failed: " + cupti.result_string(r) + " (chip '" + chip +
                                        "'): trace without counters=True");
}

// Throws Error(kCounters) when this is WSL and CUPTI has not confirmed that WSL supports
// counters (wsl_counters_refusal: CUPTI's `wsl` level first, /proc/version as the fallback).
void refuse_counters_on_wsl(int wsl_level) {
  const std::string path = proc_version_path();
  const std::string why = wsl_counters_refusal(wsl_level, path, read_proc_version(path));
  if (!why.empty()) throw Error(ErrorKind::kCounters, "hardware counters are not available: " + why);
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

std::vector<std::string> supported_chips(const Profiler& p) {
  auto c =
      params<CUpti_Profiler_Host_GetSupportedChips_Params>(CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE);
  check(*p.cupti, p.api.HostGetSupportedChips(&c), "cuptiProfilerHostGetSupportedChips", "");
  std::vector<std::string> out;
  for (size_t i = 0; i < c.numChips; ++i)
    if (c.ppChipNames[i] != nullptr) out.emplace_back(c.ppChipNames[i]);
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// The profiler host object of one chip (RAII): metric lookup, properties, config image.
class HostObject {
 public:
  HostObject(const Profiler& p, std::string chip, const uint8_t* availability_image) : p_(p), chip_(std::move(chip)) {
    auto host = params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    host.pChipName = chip_.c_str();
    host.pCounterAvailabilityImage = availability_image;
    const CUptiResult r = p_.api.HostInitialize(&host);
    if (r == CUPTI_ERROR_NOT_SUPPORTED)  // listed as a chip, but not for the Range Profiler (GV11B)
      throw Error(ErrorKind::kCounters, "CUPTI's Range Profiler does not support chip " + chip_ + " (" +
                                            p_.cupti->path +
                                            "): hardware counters cannot be collected on "
                                            "it; trace without counters=True");
    check(*p_.cupti, r, "cuptiProfilerHostInitialize", chip_);
    host_ = host.pHostObject;
  }
  ~HostObject() {
    auto d = params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    d.pHostObject = host_;
    p_.api.HostDeinitialize(&d);  // best effort: nothing to report at teardown
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;

  CUpti_Profiler_Host_Object* get() const { return host_; }

  std::vector<std::string> base_counters() const {
    auto base =
        params<CUpti_Profiler_Host_GetBaseMetrics_Params>(CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE);
    base.pHostObject = host_;
    base.metricType = CUPTI_METRIC_TYPE_COUNTER;
    check(*p_.cupti, p_.api.HostGetBaseMetrics(&base), "cuptiProfilerHostGetBaseMetrics", chip_);
    std::vector<std::string> names;
    for (size_t i = 0; i < base.numMetrics; ++i) names.emplace_back(base.ppMetricNames[i]);
    return names;
  }

  // False when the chip has no such metric.
  bool properties(const std::string& metric, CounterMetricInfo* info) const {
    auto prop = params<CUpti_Profiler_Host_GetMetricProperties_Params>(
        CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
    prop.pHostObject = host_;
    prop.pMetricName = metric.c_str();
    const CUptiResult r = p_.api.HostGetMetricProperties(&prop);
    if (r == CUPTI_ERROR_INVALID_METRIC_NAME) return false;
    check(*p_.cupti, r, "cuptiProfilerHostGetMetricProperties", chip_);
    info->name = metric;
    info->description = prop.pDescription != nullptr ? prop.pDescription : "";
    info->hw_unit = prop.pHwUnit != nullptr ? prop.pHwUnit : "";
    info->unit = prop.pDimUnit != nullptr ? prop.pDimUnit : "";
    return true;
  }

  // The config image for `names`; *passes = replay passes per kernel (0 when CUPTI cannot say).
  std::vector<uint8_t> config_image(const std::vector<const char*>& names, std::size_t* passes) const {
    auto add =
        params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    add.pHostObject = host_;
    add.ppMetricNames = const_cast<const char**>(names.data());
    add.numMetrics = names.size();
    check(*p_.cupti, p_.api.HostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics", chip_);
    auto csize = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    csize.pHostObject = host_;
    check(*p_.cupti, p_.api.HostGetConfigImageSize(&csize), "cuptiProfilerHostGetConfigImageSize", chip_);
    std::vector<uint8_t> image(csize.configImageSize);
    auto cimg =
        params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    cimg.pHostObject = host_;
    cimg.configImageSize = image.size();
    cimg.pConfigImage = image.data();
    check(*p_.cupti, p_.api.HostGetConfigImage(&cimg), "cuptiProfilerHostGetConfigImage", chip_);
    auto np = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
    np.configImageSize = image.size();
    np.pConfigImage = image.data();
    *passes = p_.api.HostGetNumOfPasses(&np) == CUPTI_SUCCESS ? np.numOfPasses : 0;
    return image;
  }

 private:
  const Profiler p_;
  std::string chip_;
  CUpti_Profiler_Host_Object* host_ = nullptr;
};

// The metrics to collect on the host object's chip. `requested` empty: fpgaprof's metric per role
// (select_counter_metrics), each kept only when CUPTI reports the unit the roofline decodes;
// roles left out go to *missing. Else exactly `requested`; names the chip lacks are an error.
std::vector<CounterMetricInfo> choose_metrics(const HostObject& host, const std::string& chip,
                                              const std::vector<std::string>& requested,
                                              std::vector<std::string>* missing) {
  std::vector<CounterMetricInfo> out;
  if (!requested.empty()) {
    std::vector<std::string> unknown;
    for (const std::string& m : requested) {
      // CUPTI describes a bare base name but cannot configure it: a rollup is required.
      if (m.find('.') == std::string::npos)
        throw Error(ErrorKind::kInvalidArgument, "counter metric '" + m + "' has no rollup: name it with one, e.g. '" +
                                                     m + ".sum' (or .avg, .min, .max)");
      CounterMetricInfo info;
      if (host.properties(m, &info))
        out.push_back(std::move(info));
      else
        unknown.push_back(m);
    }
    if (!unknown.empty()) {
      std::string lower = chip;
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      throw Error(ErrorKind::kInvalidArgument, "counter metric(s) not available on chip " + chip + ": " +
                                                   joined(unknown) +
                                                   " (list the chip's metrics with `ncu "
                                                   "--query-metrics --chip " +
                                                   lower + "`)");
    }
    return out;
  }
  const MetricSelection sel = select_counter_metrics(host.base_counters());
  *missing = sel.missing;
  const std::vector<CounterMetric>& table = counter_metrics();
  for (std::size_t i = 0; i < sel.metrics.size(); ++i) {
    const auto spec =
        std::find_if(table.begin(), table.end(), [&](const CounterMetric& m) { return m.role == sel.roles[i]; });
    CounterMetricInfo info;
    if (!host.properties(sel.metrics[i], &info)) {
      missing->push_back(std::string(counter_role_name(sel.roles[i])) + " (" + sel.metrics[i] +
                         ": listed as a base counter but unknown with its rollup)");
      continue;
    }
    if (spec != table.end() && info.unit != spec->unit) {
      missing->push_back(std::string(counter_role_name(sel.roles[i])) + " (" + sel.metrics[i] + ": unit '" + info.unit +
                         "', expected '" + spec->unit + "')");
      continue;
    }
    info.role = counter_role_name(sel.roles[i]);
    out.push_back(std::move(info));
  }
  return out;
}

std::mutex g_active_mutex;
bool g_active = false;  // a CounterSession holds cuptiProfilerInitialize

class CuptiCounterSession final : public CounterSession {
 public:
  CuptiCounterSession(Profiler p, CounterOptions options) : p_(p), options_(std::move(options)) {}

  ~CuptiCounterSession() override { teardown(); }

  void begin() {
    // A context first: without a driver and a GPU, CUPTI's profiler calls may crash (chip name).
    const cupti::CudaDriver* driver = cupti::CudaDriver::get();
    if (driver == nullptr)
      throw Error(ErrorKind::kCuptiUnavailable,
                  "libcuda.so.1 cannot be loaded (no NVIDIA driver): hardware counters need a GPU");
    std::string error;
    int ctx_device = options_.device;
    ctx_ = driver->counting_context(options_.device, &ctx_device, &error);
    if (ctx_ == nullptr) throw Error(ErrorKind::kCuptiUnavailable, error);
    const ProfilerApi& api = p_.api;

    auto init = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    ok(api.Initialize(&init), "cuptiProfilerInitialize");
    initialized_ = true;

    int wsl_level = kWslNotAsked;          // cuptiProfilerDeviceSupported's wsl field, when it answers
    if (api.DeviceSupported != nullptr) {  // says why a device refuses (vGPU, WSL, ...) before it fails
      auto sup = params<CUpti_Profiler_DeviceSupported_Params>(CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
      sup.cuDevice = static_cast<CUdevice>(ctx_device);
      sup.api = CUPTI_PROFILER_RANGE_PROFILING;
      const bool answered = api.DeviceSupported(&sup) == CUPTI_SUCCESS;
      wsl_level = answered ? static_cast<int>(sup.wsl) : kWslQueryFailed;
      if (answered && sup.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
        ProfilingSupport s;
        s.architecture = sup.architecture;
        s.sli = sup.sli;
        s.vgpu = sup.vGpu;
        s.confidential_compute = sup.confidentialCompute;
        s.cmp = sup.cmp;
        s.wsl = sup.wsl;
        const std::string why = profiling_refusal(s);
        if (!why.empty())
          throw Error(ErrorKind::kCounters,
                      "device " + std::to_string(ctx_device) + " cannot collect hardware counters: " + why);
      }
    }
    refuse_counters_on_wsl(wsl_level);  // before any replay: the Range Profiler is not enabled yet

    auto chip = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = static_cast<size_t>(ctx_device);
    device_id_ = static_cast<uint32_t>(ctx_device);
    ok(api.GetChipName(&chip), "cuptiDeviceGetChipName");
    chip_ = chip.pChipName != nullptr ? chip.pChipName : "";

    auto avail =
        params<CUpti_Profiler_GetCounterAvailability_Params>(CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
    avail.ctx = static_cast<CUcontext>(ctx_);
    ok(api.GetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability (size)");
    availability_.resize(avail.counterAvailabilityImageSize);
    avail.pCounterAvailabilityImage = availability_.data();
    ok(api.GetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");

    host_ = std::make_unique<HostObject>(p_, chip_, availability_.data());
    std::vector<std::string> missing;
    for (CounterMetricInfo& m : choose_metrics(*host_, chip_, options_.metrics, &missing))
      metrics_.push_back(std::move(m.name));
    for (const std::string& m : missing)
      warnings_.add("counters.metric_unavailable",
                    "counter metric not available on " + chip_ + ": " + m + "; continuing without it");
    if (metrics_.empty())
      throw Error(ErrorKind::kCounters,
                  "no fpgaprof counter metric is available on chip " + chip_ + ": trace without counters=True");
    for (const std::string& m : metrics_) metric_ptrs_.push_back(m.c_str());
    std::size_t passes = 0;
    config_ = host_->config_image(metric_ptrs_, &passes);
    if (passes > 1)
      warnings_.add("counters.replay_passes",
                    "counters need " + std::to_string(passes) +
                        " replay passes per kernel: kernels run that many times while counting",
                    {static_cast<double>(passes)});

    auto en = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    en.ctx = static_cast<CUcontext>(ctx_);
    ok(api.Enable(&en), "cuptiRangeProfilerEnable");
    object_ = en.pRangeProfilerObject;

    auto dsize = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
        CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    dsize.pRangeProfilerObject = object_;
    dsize.pMetricNames = metric_ptrs_.data();
    dsize.numMetrics = metric_ptrs_.size();
    dsize.maxNumOfRanges = options_.max_ranges;
    dsize.maxNumRangeTreeNodes = static_cast<uint32_t>(options_.max_ranges);
    ok(api.GetCounterDataSize(&dsize), "cuptiRangeProfilerGetCounterDataSize");
    counter_data_.resize(dsize.counterDataSize);
    configure_and_start();
  }

  void checkpoint() override {
    try {
      collect();
      configure_and_start();
    } catch (...) {
      // Counting stopped: kernels from here on (from the lost window's start when its ranges
      // could not be read) get no counters; counted in stop_into.
      mark_pause();
      throw;
    }
    close_pause(window_start_ns_);  // the pause ended where the new window began
  }

  void finish() override {
    try {
      collect();
    } catch (const Error& e) {  // the windows collected at earlier checkpoints are still good
      warnings_.add("counters.window_unread",
                    std::string("the last counter window could not be read back: ") + e.what());
      mark_pause();
    }
    close_pause(trace_clock_ns());
  }

  CounterMatch stop_into(TraceStore& store) override {
    finish();
    CounterMatch m = add_counter_windows(store, metrics_, windows_, 0);
    m.dropped_ranges = dropped_;
    if (dropped_ > 0)
      warnings_.add("counters.ranges_dropped",
                    std::to_string(dropped_) +
                        " counter ranges were dropped (the counter image was full): "
                        "lower the number of kernels between checkpoints",
                    {static_cast<double>(dropped_)});
    if (m.unprofiled_kernels > 0)
      warnings_.add("counters.kernels_unprofiled",
                    std::to_string(m.unprofiled_kernels) +
                        " kernels have no counters: launched past the "
                        "image's " +
                        std::to_string(options_.max_ranges) +
                        " ranges between two region ends, "
                        "or while counting paused at a checkpoint",
                    {static_cast<double>(m.unprofiled_kernels), static_cast<double>(options_.max_ranges)});
    if (m.ambiguous_windows > 0)
      warnings_.add("counters.unpaired",
                    std::to_string(m.unmatched_ranges) + " counter ranges and " + std::to_string(m.unpaired_kernels) +
                        " kernels in " + std::to_string(m.ambiguous_windows) +
                        " window(s) were not paired: their counts, or their thread-block counts, disagree with "
                        "the launches (kept unpaired rather than guessed)",
                    {static_cast<double>(m.unmatched_ranges), static_cast<double>(m.unpaired_kernels),
                     static_cast<double>(m.ambiguous_windows)});
    store.meta.warnings.append(warnings_);
    teardown();
    return m;
  }

  const std::vector<std::string>& metrics() const override { return metrics_; }
  const Diagnostics& warnings() const override { return warnings_; }

 private:
  void ok(CUptiResult r, const char* what) const { check(*p_.cupti, r, what, chip_); }

  // Counting was off from paused_since_ns_ until end_ns (a failed checkpoint, then a restart or
  // the end): one window of capacity 0, so its kernels are counted as without counters.
  void mark_pause() {
    if (running_ || paused_since_ns_ != 0) return;
    paused_since_ns_ = window_lost_ ? window_start_ns_ : trace_clock_ns();
    window_lost_ = false;
  }

  void close_pause(uint64_t end_ns) {
    if (paused_since_ns_ == 0) return;
    CounterWindow off;
    off.start_ns = paused_since_ns_;
    off.end_ns = end_ns;
    off.device_id = device_id_;
    windows_.push_back(off);
    paused_since_ns_ = 0;
  }

  void configure_and_start() {
    auto ini = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    ini.pRangeProfilerObject = object_;
    ini.counterDataSize = counter_data_.size();
    ini.pCounterData = counter_data_.data();
    ok(p_.api.CounterDataImageInitialize(&ini), "cuptiRangeProfilerCounterDataImageInitialize");
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
    ok(p_.api.SetConfig(&cfg), "cuptiRangeProfilerSetConfig");
    auto st = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    st.pRangeProfilerObject = object_;
    ok(p_.api.Start(&st), "cuptiRangeProfilerStart");
    running_ = true;
    window_start_ns_ = trace_clock_ns();
  }

  // Stop, decode and evaluate every range now in the image: one more window.
  void collect() {
    if (!running_) return;
    CounterWindow window;
    window.start_ns = window_start_ns_;
    window.end_ns = trace_clock_ns();
    window.device_id = device_id_;
    window.capacity = options_.max_ranges;
    auto sp = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    sp.pRangeProfilerObject = object_;
    ok(p_.api.Stop(&sp), "cuptiRangeProfilerStop");
    running_ = false;
    window_lost_ = true;  // until its ranges are read
    auto dec = params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    dec.pRangeProfilerObject = object_;
    ok(p_.api.DecodeData(&dec), "cuptiRangeProfilerDecodeData");
    dropped_ += dec.numOfRangeDropped;
    auto info = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
        CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
    info.pCounterDataImage = counter_data_.data();
    info.counterDataImageSize = counter_data_.size();
    ok(p_.api.GetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
    for (size_t i = 0; i < info.numTotalRanges; ++i) {
      auto ri = params<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(
          CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
      ri.pCounterDataImage = counter_data_.data();
      ri.counterDataImageSize = counter_data_.size();
      ri.rangeIndex = i;
      ri.rangeDelimiter = "/";
      ok(p_.api.GetRangeInfo(&ri), "cuptiRangeProfilerCounterDataGetRangeInfo");
      CounterRange range;
      range.name = ri.rangeName != nullptr ? ri.rangeName : "";
      range.values.assign(metric_ptrs_.size(), 0.0);
      auto ev = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
          CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
      ev.pHostObject = host_->get();
      ev.pCounterDataImage = counter_data_.data();
      ev.counterDataImageSize = counter_data_.size();
      ev.rangeIndex = i;
      ev.ppMetricNames = metric_ptrs_.data();
      ev.numMetrics = metric_ptrs_.size();
      ev.pMetricValues = range.values.data();
      ok(p_.api.HostEvaluateToGpuValues(&ev), "cuptiProfilerHostEvaluateToGpuValues");
      window.ranges.push_back(std::move(range));
    }
    windows_.push_back(std::move(window));
    window_lost_ = false;
  }

  // Best effort: errors while tearing down are not reported (the values are already kept).
  void teardown() {
    if (running_) {
      auto sp = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
      sp.pRangeProfilerObject = object_;
      p_.api.Stop(&sp);
      running_ = false;
    }
    if (object_ != nullptr) {
      auto d = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
      d.pRangeProfilerObject = object_;
      p_.api.Disable(&d);
      object_ = nullptr;
    }
    host_.reset();
    if (initialized_) {
      auto d = params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
      p_.api.DeInitialize(&d);
      initialized_ = false;
    }
    if (holds_active_) {  // the next trace(counters=True) may start its own session
      std::lock_guard<std::mutex> lock(g_active_mutex);
      g_active = false;
      holds_active_ = false;
    }
  }

  Profiler p_;
  CounterOptions options_;
  bool holds_active_ = true;  // start() set g_active for this session
  bool initialized_ = false;
  bool running_ = false;
  CUcontextOpaque ctx_ = nullptr;
  std::string chip_;
  std::vector<uint8_t> availability_, config_, counter_data_;
  std::unique_ptr<HostObject> host_;
  CUpti_RangeProfiler_Object* object_ = nullptr;
  std::vector<std::string> metrics_;
  std::vector<const char*> metric_ptrs_;
  std::vector<CounterWindow> windows_;
  uint64_t window_start_ns_ = 0;
  uint64_t paused_since_ns_ = 0;  // a checkpoint could not restart counting at this time
  bool window_lost_ = false;      // the last window was stopped but its ranges not read
  uint32_t device_id_ = kNone32;  // device of the profiled context
  Diagnostics warnings_;
  uint64_t dropped_ = 0;
};

// CUPTI's chip name for a user-typed one ("gh100" -> "GH100"), checked against the known list.
std::string known_chip(const Profiler& p, const std::string& chip) {
  std::string upper = chip;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  const std::vector<std::string> chips = supported_chips(p);
  if (std::find(chips.begin(), chips.end(), upper) == chips.end())
    throw Error(ErrorKind::kInvalidArgument, "chip '" + chip + "' is not known to " + p.cupti->path + ": use one of " +
                                                 joined(chips) +
                                                 " (CUPTI's chip names; a newer CUPTI knows newer chips)");
  return upper;
}

// The chip of GPU `device`, read through CUPTI (needs the driver and the GPU).
std::string device_chip(const Profiler& p, int device) {
  const cupti::CudaDriver* driver = cupti::CudaDriver::get();
  std::string why = "libcuda.so.1 cannot be loaded (no NVIDIA driver)";
  const int count = driver != nullptr ? driver->device_count(&why) : 0;
  if (count <= 0) {
    std::string known;
    try {
      known = "; known chips: " + joined(supported_chips(p));
    } catch (const Error&) {  // this libcupti cannot list them without a driver: leave the list out
    }
    throw Error(ErrorKind::kCuptiUnavailable, "no GPU to read the chip from (" + why +
                                                  "): name the chip, e.g. "
                                                  "`fpgaprof counters --chip GH100`" +
                                                  known);
  }
  if (device < 0 || device >= count)
    throw Error(ErrorKind::kInvalidArgument, "device " + std::to_string(device) + " does not exist: this machine has " +
                                                 std::to_string(count) +
                                                 " GPU(s) (ordinals from 0; CUDA_VISIBLE_DEVICES applies)");
  std::lock_guard<std::mutex> lock(g_active_mutex);
  // A running CounterSession already holds the profiler initialized; initializing again is not allowed.
  const bool own = !g_active;
  if (own) {
    auto init = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    check(*p.cupti, p.api.Initialize(&init), "cuptiProfilerInitialize", "");
  }
  auto chip = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = static_cast<size_t>(device);
  const CUptiResult r = p.api.GetChipName(&chip);
  const std::string name = r == CUPTI_SUCCESS && chip.pChipName != nullptr ? chip.pChipName : "";
  if (own) {
    auto d = params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
    p.api.DeInitialize(&d);
  }
  check(*p.cupti, r, "cuptiDeviceGetChipName", "");
  return name;
}

}  // namespace

std::vector<std::string> counter_chips() { return supported_chips(load_profiler()); }

CounterPlan plan_counters(const std::string& chip, const std::vector<std::string>& metrics, int device) {
  const Profiler p = load_profiler();
  CounterPlan plan;
  plan.cupti_path = p.cupti->path;
  plan.chip_from_device = chip.empty();
  plan.chip = chip.empty() ? device_chip(p, device) : known_chip(p, chip);
  const HostObject host(p, plan.chip, nullptr);
  plan.metrics = choose_metrics(host, plan.chip, metrics, &plan.missing);
  if (plan.metrics.empty()) return plan;  // nothing to configure; missing says why
  std::vector<const char*> names;
  for (const CounterMetricInfo& m : plan.metrics) names.push_back(m.name.c_str());
  plan.config_image_bytes = host.config_image(names, &plan.passes).size();
  return plan;
}

std::unique_ptr<CounterSession> CounterSession::start(const CounterOptions& options) {
  {
    // A libcupti without cuptiProfilerDeviceSupported can never say whether WSL supports
    // counters: on WSL, refuse now, before the profiler is even loaded (/proc/version decides).
    // Off WSL nothing is loaded here: load_profiler() decides what to load, and when.
    const std::string path = proc_version_path();
    if (!wsl_counters_refusal(kWslNotAsked, path, read_proc_version(path)).empty()) {
      std::string error;
      const cupti::CuptiApi* cupti = cupti::CuptiApi::get(&error);
      if (cupti != nullptr && dlsym(cupti->handle, "cuptiProfilerDeviceSupported") == nullptr)
        refuse_counters_on_wsl(kWslNotAsked);
    }
  }
  Profiler p = load_profiler();
  {
    std::lock_guard<std::mutex> lock(g_active_mutex);
    if (g_active) throw Error(ErrorKind::kState, "a counter session is already active: stop it first");
    g_active = true;
  }
  std::unique_ptr<CuptiCounterSession> s;
  try {
    s = std::make_unique<CuptiCounterSession>(p, options);
  } catch (...) {
    std::lock_guard<std::mutex> lock(g_active_mutex);
    g_active = false;
    throw;
  }
  s->begin();  // when it throws, ~CuptiCounterSession tears down and releases g_active
  return s;
}

}  // namespace fpgaprof

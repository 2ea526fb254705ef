// CUPTI's Profiler Host and Range Profiler headers, with every parameter struct's size set to
// CUDA 12.8's: the oldest libcupti fpgaprof runs with (cupti_headers.hpp). CUPTI's structs only
// grow at the end and a library accepts the sizes of its own and older releases; newer headers
// (13.5's) made five of them longer, which an older libcupti (12.8, 13.0) need not accept. Every
// field fpgaprof sets or reads lies inside the 12.8 size: the named last fields exist in 12.8's
// headers and every later one. The other structs are the same size from 12.8 to 13.5 (checked
// against the nvidia-cuda-cupti-cu12 12.8.90, CUDA 13.0 toolkit and nvidia-cuda-cupti 13.5 headers).
#pragma once

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#undef CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE
#define CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE \
  CUPTI_PROFILER_STRUCT_SIZE(CUpti_Profiler_DeviceSupported_Params, api)
#undef CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE
#define CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE \
  CUPTI_PROFILER_STRUCT_SIZE(CUpti_Profiler_GetCounterAvailability_Params, pCounterAvailabilityImage)
#undef CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE
#define CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE \
  CUPTI_PROFILER_STRUCT_SIZE(CUpti_Profiler_Host_GetMetricProperties_Params, metricType)
#undef CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE
#define CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE \
  CUPTI_PROFILER_STRUCT_SIZE(CUpti_Profiler_Host_Initialize_Params, pHostObject)
#undef CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE
#define CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE \
  CUPTI_PROFILER_STRUCT_SIZE(CUpti_RangeProfiler_Enable_Params, pRangeProfilerObject)

namespace fpgaprof::cupti {
// CUDA 12.8's sizes, by hand from its headers (nvidia-cuda-cupti-cu12 12.8.90): a change of
// the macros above shows here.
static_assert(CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE == 52);
static_assert(CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE == 40);
static_assert(CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE == 60);
static_assert(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE == 48);
static_assert(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE == 32);
}  // namespace fpgaprof::cupti

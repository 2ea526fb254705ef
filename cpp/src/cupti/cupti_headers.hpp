// The one place the cupti layer includes CUPTI's headers (never cupti.h, which pulls in the
// CUDA runtime's generated headers the nvidia-cuda-cupti wheel does not ship).
//
// One source tree builds against the CUPTI headers of CUDA 12 (12.8 and newer: what jax[cuda12]
// brings) and CUDA 13, and runs with whichever libcupti the process loads. Everything that
// differs between those header sets is chosen here or guarded by kCuptiHeaderApiVersion;
// cmake/FpgaprofDeps.cmake refuses older headers at configure time (docs/capture.md, "CUDA 12
// and 13").
#pragma once

#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_result.h>
#include <cupti_runtime_cbid.h>
#include <cupti_version.h>

#include <cstdint>

#if !defined(CUPTI_API_VERSION) || CUPTI_API_VERSION < 26
#error "fpgaprof needs the CUPTI headers of CUDA 12.8 or newer (CUPTI_API_VERSION >= 26)"
#endif

namespace fpgaprof::cupti {

// CUPTI_API_VERSION of the headers this build compiled against: 26 = CUDA 12.8, 28 = 12.9,
// 130000 and up = 13.x (13.0 is 130001).
inline constexpr uint32_t kCuptiHeaderApiVersion = CUPTI_API_VERSION;
// The oldest libcupti this build runs with: CUDA 12.8's. Kernel records are read through
// CUDA 12's newest layout (below), which older runtimes do not all emit.
inline constexpr uint32_t kMinRuntimeCuptiApiVersion = 26;
// The first CUPTI API version of CUDA 13: callback ids such as cuCtxGetDevice_v2 exist from here.
inline constexpr uint32_t kCuda13CuptiApiVersion = 130000;

// The struct kernel records are read through: CUDA 12's newest (CUpti_ActivityKernel9). Every
// header set fpgaprof builds with has it (CUDA 13 keeps it in cupti_activity_deprecated.h), and
// every field the converter reads sits at the same offset in CUDA 13's Kernel10..13
// (record_converter.cpp checks that at compile time against whichever headers are present).
// libcupti 12.8 emits Kernel9 records and libcupti 13 longer ones; buffers are walked with the
// library's cuptiActivityGetNextRecord, never by sizeof, so the tail is never read.
using KernelActivity = CUpti_ActivityKernel9;

}  // namespace fpgaprof::cupti

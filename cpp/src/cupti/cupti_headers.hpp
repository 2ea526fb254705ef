// The one place the cupti layer includes CUPTI's headers (never cupti.h, which pulls in the
// CUDA runtime's generated headers the nvidia-cuda-cupti wheel does not ship).
#pragma once

#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_result.h>
#include <cupti_runtime_cbid.h>
#include <cupti_version.h>

// The capture session's messages that depend on what CUPTI, the driver and NVTX reported:
// kept apart from the session so that tests can check them for states a machine without a
// GPU cannot reach (a driver older than libcupti, two libcupti copies, ...). Pure functions;
// each returns one line: cause + fix.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fpgaprof/cupti/capture.hpp"

namespace fpgaprof::cupti {

// Error text for a CUPTI call that returned CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
// (39): another CUPTI client holds CUPTI in this process. `call`: the CUPTI function.
std::string conflict_message(const std::string& call);

// Why capture could not start when `call` returned `result_text` (code `result`): no driver,
// libcupti newer than the driver (CUPTI_ERROR_NOT_INITIALIZED, 15), or the general case.
// cupti_version: cuptiGetVersion (0 unknown); driver_version: cuDriverGetVersion (0 unknown).
std::string start_failure_reason(const std::string& call, int result, const std::string& result_text, bool driver_found,
                                 uint32_t cupti_version, uint32_t driver_version);

// The warning for a GPU trace without NVTX ranges when the injection hook never succeeded;
// "" when none is due (no kernels, ranges present, or the hook succeeded).
std::string nvtx_warning(const NvtxInjectionStatus& status, std::size_t kernels, std::size_t markers);

// The warning when more than one libcupti file is mapped (`mapped`, from
// CuptiApi::mapped_libraries); "" for one or none. used: the file fpgaprof uses.
std::string multiple_cupti_warning(const std::vector<std::string>& mapped, const std::string& used);

// The CUDA release of a CUPTI API version (cuptiGetVersion, CUPTI_API_VERSION): "12.8" for 26,
// "12.9" for 28, "13.0" for 130001, "13.5" for 130500; "" for a 12.x version not listed.
std::string cupti_api_cuda_text(uint32_t api_version);

// Why a libcupti of API version `runtime` (at `path`) cannot be used by a build whose oldest
// supported runtime is `minimum`; "" when runtime >= minimum or runtime is 0 (unknown).
std::string old_cupti_reason(uint32_t runtime, uint32_t minimum, const std::string& path);

// "13.0" from a CUDA version number such as 13000 (cuDriverGetVersion's encoding).
std::string cuda_version_text(uint32_t version);

}  // namespace fpgaprof::cupti

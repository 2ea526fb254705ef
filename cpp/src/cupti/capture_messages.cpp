#include "cupti/capture_messages.hpp"

namespace fpgaprof::cupti {

std::string conflict_message(const std::string& call) {
  return call +
         " returned CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (39): another CUPTI client holds "
         "CUPTI in this process (Nsight Systems or Nsight Compute, jax.profiler.trace, or another "
         "fpgaprof trace): end that profiler (or run without it) and trace again; CUPTI accepts "
         "several clients only from CUDA 13.3 with driver r610+, when the first client opted in "
         "and every client uses CUPTI's _v2 calls";
}

std::string cuda_version_text(uint32_t version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string cupti_api_cuda_text(uint32_t api_version) {
  if (api_version >= 130000) {
    return std::to_string(api_version / 10000) + "." + std::to_string((api_version % 10000) / 100);
  }
  // CUDA 12's libcupti numbers its API versions on from CUDA 11's; only the releases fpgaprof
  // meets are named (cupti_version.h of the nvidia-cuda-cupti-cu12 12.8.90 and 12.9.79 wheels).
  switch (api_version) {
    case 26: return "12.8";
    case 28: return "12.9";
    default: return {};
  }
}

std::string old_cupti_reason(uint32_t runtime, uint32_t minimum, const std::string& path) {
  if (runtime == 0 || runtime >= minimum) return {};
  const std::string have = cupti_api_cuda_text(runtime);
  const std::string need = cupti_api_cuda_text(minimum);
  return "libcupti at " + path + " is API version " + std::to_string(runtime) +
         (have.empty() ? "" : " (CUDA " + have + ")") + ", older than the CUDA " + need + " (API version " +
         std::to_string(minimum) + ") this fpgaprof needs: pip install 'nvidia-cuda-cupti-cu12>=" + need +
         "' (jax[cuda12] brings it) or 'nvidia-cuda-cupti>=13' for a CUDA 13 driver, or set "
         "FPGAPROF_CUPTI_LIBRARY to a newer libcupti; only host-side regions are recorded";
}

std::string start_failure_reason(const std::string& call, int result, const std::string& result_text, bool driver_found,
                                 uint32_t cupti_version, uint32_t driver_version) {
  if (!driver_found) {
    return "no CUDA driver found (libcuda.so.1 cannot be loaded): install the NVIDIA driver and "
           "run on a machine with an NVIDIA GPU; only host-side regions are recorded";
  }
  // CUPTI_ERROR_NOT_INITIALIZED: with a driver present, almost always a libcupti built for a
  // newer CUDA than the driver supports.
  if (result == 15) {
    const std::string cupti =
        cupti_version != 0 ? "libcupti (API version " + std::to_string(cupti_version) + ")" : "libcupti";
    const std::string driver = driver_version != 0
                                   ? "the driver, which supports CUDA " + cuda_version_text(driver_version) +
                                         " (cuDriverGetVersion " + std::to_string(driver_version) + ")"
                                   : "the driver";
    const std::string pin = driver_version != 0
                                ? " (pip install 'nvidia-cuda-cupti-cu" + std::to_string(driver_version / 1000) +
                                      "==" + cuda_version_text(driver_version) + ".*')"
                                : "";
    return call + " returned " + result_text + ": " + cupti + " is likely newer than " + driver +
           ": install the nvidia-cuda-cupti matching the driver" + pin +
           " or set FPGAPROF_CUPTI_LIBRARY to a libcupti of that CUDA version, or update the driver; "
           "only host-side regions are recorded";
  }
  return "CUPTI could not start (" + call + ": " + result_text +
         "): check that a GPU is visible (nvidia-smi, CUDA_VISIBLE_DEVICES); only host-side "
         "regions are recorded";
}

std::string nvtx_warning(const NvtxInjectionStatus& status, std::size_t kernels, std::size_t markers) {
  if (kernels == 0 || markers > 0 || status.succeeded) return {};
  const std::string what =
      status.calls == 0 ? "NVTX injection was not active (InitializeInjectionNvtx2 of libfpgaprof.so was never "
                          "called: NVTX_INJECTION64_PATH did not name it at the process's first NVTX call; import "
                          "fpgaprof before jax)"
                        : "NVTX injection returned 0 (" + status.detail + ")";
  return what + ": no XLA ranges, HLO attribution by kernel name only";
}

std::string multiple_cupti_warning(const std::vector<std::string>& mapped, const std::string& used) {
  if (mapped.size() < 2) return {};
  std::string list;
  for (const auto& p : mapped) list += (list.empty() ? "" : ", ") + p;
  return std::to_string(mapped.size()) + " libcupti files are mapped in this process (" + list +
         "): each is a separate CUPTI and fpgaprof records only what " + used +
         " sees; set FPGAPROF_CUPTI_LIBRARY to the libcupti JAX loads (its CUDA plugin's "
         "site-packages/nvidia/cu13/lib/libcupti.so.13, or nvidia/cuda_cupti/lib/libcupti.so.12 with "
         "jax[cuda12]) before importing fpgaprof";
}

}  // namespace fpgaprof::cupti

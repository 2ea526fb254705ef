// cupti_search_order(): the files CuptiApi::get tries, in order, after "already loaded in the
// process" found nothing. A pure function of CuptiSearchInputs (no dlopen, no file system),
// so the ordering is unit-tested without a driver or a libcupti.
//
// Order:
//   - $FPGAPROF_CUPTI_LIBRARY set: that exact path alone (failing to load it is the error);
//   - with an NVIDIA driver (or with no wheel folder to compete with):
//       1. libcupti.so.13 / .so.12 in each folder of $FPGAPROF_WHEEL_LIB_DIRS ("pip wheel");
//       2. $CUDA_HOME/{lib64,extras/CUPTI/lib64}, /usr/local/cuda/{lib64,extras/CUPTI/lib64}:
//          libcupti.so.13 / .so.12 / .so ("CUDA toolkit");
//       3. libcupti.so.13, libcupti.so.12, then libcupti.so, by name on the system search path;
//   - without a driver and with wheel folders: 2 before 1, its "how" naming the reason
//     (kNoDriverToolkitHow). The nvidia-cuda-cupti 13.5 wheel's libcupti answers
//     CUPTI_ERROR_UNKNOWN to every Profiler Host API call without libcuda, while the 13.0
//     toolkit copy plans counters there; with no driver nothing can be traced, so the toolkit
//     copy competes with no JAX-loaded one.
#pragma once

#include <string>
#include <vector>

namespace fpgaprof::cupti {

// The "how" of a toolkit candidate put before the wheel because there is no driver.
inline constexpr const char* kNoDriverToolkitHow =
    "CUDA toolkit (no driver: the wheel's libcupti needs one for the Profiler Host API)";

// What the search depends on. Empty strings mean "unset".
struct CuptiSearchInputs {
  bool driver_present = true;  // libcuda.so.1 loads (CudaDriver::get() != nullptr)
  std::string exact_library;   // $FPGAPROF_CUPTI_LIBRARY
  std::string wheel_lib_dirs;  // $FPGAPROF_WHEEL_LIB_DIRS, colon-separated folders
  std::string cuda_home;       // $CUDA_HOME

  // Reads the three variables of this process; asks CudaDriver whether libcuda loads only
  // when FPGAPROF_CUPTI_LIBRARY is unset (the answer cannot change the order otherwise).
  // Not thread-safe against concurrent setenv (like getenv).
  static CuptiSearchInputs from_process();
};

struct CuptiCandidate {
  enum class Kind {
    kExactPath,  // $FPGAPROF_CUPTI_LIBRARY: dlopen it; failure is the error, no further search
    kFile,       // an absolute path: skipped when no such file, else dlopen'ed
    kSoname,     // a bare name: dlopen'ed on the system search path
  };
  Kind kind = Kind::kFile;
  std::string name;  // path or soname given to dlopen
  std::string how;   // CuptiApi::how_found when this one loads
};

std::vector<CuptiCandidate> cupti_search_order(const CuptiSearchInputs& inputs);

// The names CuptiApi::get probes with dlopen(RTLD_NOLOAD) first, i.e. which libcupti already
// in the process it adopts when there are several (JAX's CUDA 12 plugin maps libcupti.so.13
// too when the nvidia-cuda-cupti 13 wheel is installed beside it): $FPGAPROF_CUPTI_LIBRARY
// (exact_library) when that very file is loaded, then the soname of the major of JAX's
// installed CUDA plugin (jax_cuda_major: $FPGAPROF_JAX_CUDA_MAJOR, "12" or "13", set at
// `import fpgaprof`), then libcupti.so.13, .so.12, .so. Each name once.
std::vector<std::string> loaded_cupti_probe_order(const std::string& exact_library, const std::string& jax_cuda_major);

}  // namespace fpgaprof::cupti

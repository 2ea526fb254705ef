// Capture: the public face of the CUPTI layer (implemented in cpp/src/cupti/, the only code
// that includes CUPTI/NVTX headers). Nothing here exposes a CUPTI type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fpgaprof/records.hpp"
#include "fpgaprof/trace_store.hpp"

namespace fpgaprof {

inline constexpr std::size_t kMinBufferBytes = 4096;
inline constexpr std::size_t kMaxBufferBytes = std::size_t{1} << 30;  // several are alive at once

struct CaptureOptions {
  // size of each activity buffer handed to CUPTI: kMinBufferBytes to kMaxBufferBytes, else
  // CaptureSession::start throws Error(kInvalidArgument)
  std::size_t buffer_bytes = 8u << 20;
  std::size_t max_buffers = 0;          // 0: grow without bound (drops are then impossible on our side);
                                        // else requests beyond it are refused and CUPTI's drops are counted
  std::size_t device_buffer_bytes = 0;  // CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE; 0 keeps CUPTI's default
  bool require_gpu = false;             // true: throw Error(kCuptiUnavailable) instead of degrading
  // GPU power and energy through NVML (docs/capture.md, "GPU power and energy"): the period of
  // the sampling thread's readings; 0 turns sampling off. libnvidia-ml.so.1 is loaded at run
  // time ($FPGAPROF_NVML_LIBRARY: an exact path instead); without it the trace has no samples
  // and one warning.
  uint64_t power_sample_period_ns = 1'000'000;
};

// What fpgaprof sees of CUPTI and the GPUs. probe_cupti() never throws; it loads libcupti
// (by the search order below) and libcuda if they can be found, and never loads a second copy.
//
// libcupti search order (first hit wins; the copy found is reused for the whole process):
//   1. a libcupti already loaded in the process (RTLD_NOLOAD; of several, the file
//      $FPGAPROF_CUPTI_LIBRARY names, then JAX's plugin major $FPGAPROF_JAX_CUDA_MAJOR, then
//      libcupti.so.13 / .so.12 / .so: loaded_cupti_probe_order);
//   2. $FPGAPROF_CUPTI_LIBRARY (exact path; if set and not loadable, that is the problem);
//   3. libcupti.so.13 / .so.12 in each directory of $FPGAPROF_WHEEL_LIB_DIRS (colon-separated;
//      the Python package sets it to site-packages/nvidia/*/lib);
//   4. $CUDA_HOME/lib64, $CUDA_HOME/extras/CUPTI/lib64, /usr/local/cuda/lib64,
//      /usr/local/cuda/extras/CUPTI/lib64;
//   5. libcupti.so.13, libcupti.so.12, then libcupti.so, on the system library path.
// Without an NVIDIA driver (libcuda.so.1 does not load), 4 comes before 3 and how_found says
// why: the nvidia-cuda-cupti wheel's libcupti needs a driver for the Profiler Host API.
struct CuptiStatus {
  bool library_found = false;
  std::string library_path;           // the libcupti it uses / would load
  std::string how_found;              // "already loaded", "FPGAPROF_CUPTI_LIBRARY", "pip wheel", ...
  uint32_t cupti_version = 0;         // cuptiGetVersion of that library (0: none or unknown)
  uint32_t header_cupti_version = 0;  // CUPTI_API_VERSION of the headers this build compiled with
  uint32_t min_cupti_version = 0;     // the oldest libcupti API version this build runs with
  std::string cupti_cuda;             // the CUDA release of each of those three ("12.8", "13.0"; ""
  std::string header_cuda;            //   when unknown)
  std::string min_cuda;
  uint32_t driver_version = 0;  // 0: no driver
  std::vector<DeviceInfo> devices;
  std::string problem;  // empty when tracing would work; else cause + fix, one line
};
CuptiStatus probe_cupti();

// One active capture. At most one exists per process. start() and stop() are serialized
// internally (any thread may call them); buffers from CUPTI are converted on CUPTI's threads.
// Activity buffers come from a process-wide pool reused across sessions.
class CaptureSession {
 public:
  // Starts capture. Without CUPTI/driver/GPU: with require_gpu, throws Error(kCuptiUnavailable);
  // otherwise returns a host-only session (gpu_active() false, reason in unavailable_reason()).
  // Throws Error(kProfilerConflict) when another CUPTI subscriber holds CUPTI (naming it when
  // CUPTI says), Error(kState) when a session is already active.
  static std::unique_ptr<CaptureSession> start(const CaptureOptions& options);
  virtual ~CaptureSession() = default;

  // Synchronizes every device, forces a flush, converts the remaining buffers, and returns
  // the owned store (records converted, not yet correlated: call correlate()). Reads the
  // dropped-record count at every flush. Call once: a second call throws Error(kState).
  // meta is filled (start/end ns, cupti/driver versions, cupti_path, gpu_available,
  // unavailable_reason, dropped/incomplete counts, warnings); devices from CUPTI's DEVICE
  // records completed by the driver. Destroying a session without stop() stops it and
  // discards its data. Records are converted on CUPTI's thread while the session runs.
  virtual TraceStore stop() = 0;
  virtual bool gpu_active() const = 0;
  virtual std::string unavailable_reason() const = 0;
};

// User regions (fpgaprof.region): recorded host-side on the trace clock, with or without a
// GPU, while a session is active; also pushed as NVTX ranges (domain "fpgaprof") so other
// tools see them. Thread-safe; each thread has its own stack.
void region_push(std::string_view name);
void region_pop();

// Trace clock now, in ns. cuptiGetTimestamp() when libcupti is loaded and answers (CUPTI
// 13.5 fails without a driver), else clock_gettime(CLOCK_REALTIME): both are CLOCK_REALTIME
// nanoseconds on Linux, so host-side and GPU-side times share one axis. Thread-safe.
uint64_t trace_clock_ns();

// The OS thread id (gettid) of the calling thread, cached per thread; the cache is dropped
// in a fork()ed child, so a child never reports its parent's tid. Thread-safe.
uint32_t current_thread_id();

// What NVTX's injection hook (libfpgaprof.so's InitializeInjectionNvtx2) did in this process.
// NVTX calls it at most once per process, at the first NVTX call (XLA's nvtxDomainCreateA), and
// only when NVTX_INJECTION64_PATH names libfpgaprof.so by then; a 0 return leaves NVTX off for
// the process. Without a success no XLA ranges reach CUPTI and HLO ops are attributed by
// kernel name only. Thread-safe.
struct NvtxInjectionStatus {
  uint32_t calls = 0;      // times InitializeInjectionNvtx2 was called
  int last_result = -1;    // what the last call returned (1 success, 0 failure); -1 never called
  bool succeeded = false;  // some call returned non-zero
  std::string detail;      // which libcupti entry point answered what, or why none did
};
NvtxInjectionStatus nvtx_injection_status();

// Absolute path of the loaded libfpgaprof.so (dladdr on one of its symbols); "" if unknown.
// The Python layer sets NVTX_INJECTION64_PATH to it before JAX starts: libfpgaprof.so exports
// `extern "C" int InitializeInjectionNvtx2(void*)`, which hands NVTX to the libcupti that
// CaptureSession uses (found by the search order in docs/capture.md; 0 when none).
std::string library_path();

}  // namespace fpgaprof

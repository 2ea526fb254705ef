// CuptiApi: libcupti loaded at run time (dlopen, never linked) and its entry points resolved
// into one function table.
//
// Search order (first hit wins; once a copy is loaded it is reused for the life of the
// process, so fpgaprof never loads a second CUPTI instance):
//   1. a libcupti already loaded in the process (dlopen(..., RTLD_NOLOAD) of libcupti.so.13,
//      libcupti.so.12, libcupti.so): e.g. the copy JAX's CUDA plugin loaded;
//   2. $FPGAPROF_CUPTI_LIBRARY, an exact path; when set and not loadable, that is the error
//      (no further search);
//   3. libcupti.so.13 / libcupti.so.12 in each directory of $FPGAPROF_WHEEL_LIB_DIRS
//      (colon-separated; the Python package sets it to the nvidia wheels' lib folders);
//   4. $CUDA_HOME/lib64, $CUDA_HOME/extras/CUPTI/lib64, /usr/local/cuda/lib64,
//      /usr/local/cuda/extras/CUPTI/lib64;
//   5. dlopen("libcupti.so.13"), "libcupti.so.12", then "libcupti.so", on the system search path.
// Without an NVIDIA driver (libcuda.so.1 does not load), 4 comes before 3 and how_found says
// why (cupti_search_order.hpp: the wheel's libcupti cannot plan counters without a driver).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cupti/cupti_headers.hpp"

namespace fpgaprof::cupti {

class CuptiApi {
 public:
  // Loads libcupti by the search order above, once. Thread-safe. Returns the process-wide
  // table (never freed), or nullptr with the reason (cause + fix, one line) in *error. A
  // failed search is retried on the next call (the environment may have changed).
  static const CuptiApi* get(std::string* error);
  // The table if libcupti was already loaded by get(); never loads. Thread-safe.
  static const CuptiApi* loaded();

  // Every distinct libcupti file mapped into this process now (from /proc/self/maps, by
  // file name libcupti.so*), in map order. Two entries mean two CUPTI instances.
  static std::vector<std::string> mapped_libraries();

  // Text of a CUPTI result code ("CUPTI_ERROR_UNKNOWN (999)").
  std::string result_string(CUptiResult result) const;

  std::string path;        // file the library was loaded from
  std::string how_found;   // "already loaded", "FPGAPROF_CUPTI_LIBRARY", "pip wheel", "CUDA toolkit", ...
  void* handle = nullptr;  // dlopen handle (never closed)

  // Required entry points (non-null in a returned table).
  CUptiResult (*GetVersion)(uint32_t*) = nullptr;
  CUptiResult (*GetResultString)(CUptiResult, const char**) = nullptr;
  CUptiResult (*Subscribe)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*) = nullptr;
  CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle) = nullptr;
  CUptiResult (*ActivityEnable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityDisable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                           CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*ActivityFlushAll)(uint32_t) = nullptr;
  CUptiResult (*ActivityGetNextRecord)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
  CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t*) = nullptr;
  CUptiResult (*GetTimestamp)(uint64_t*) = nullptr;

  // Optional entry points (nullptr when this libcupti lacks them). Only unversioned (V1)
  // calls: CUPTI refuses a process that mixes them with the _v2 ones (such as
  // cuptiSubscribe_v2) with CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, and XLA's own
  // CUPTI tracer is V1 by default.
  CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType) = nullptr;
  CUptiResult (*ActivitySetAttribute)(CUpti_ActivityAttribute, size_t*, void*) = nullptr;
  CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char**) = nullptr;
  CUptiResult (*ActivityEnableAndDump)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityEnableAllSyncRecords)(uint8_t) = nullptr;
  CUptiResult (*ActivityEnableDriverApi)(CUpti_CallbackId, uint8_t) = nullptr;
  CUptiResult (*ActivityEnableRuntimeApi)(CUpti_CallbackId, uint8_t) = nullptr;
  // NVTX injection entry points libcupti exports without declaring them in a header.
  int (*InitializeInjectionNvtx2)(void*) = nullptr;
  int (*NvtxInitialize2)(void*) = nullptr;  // returns a CUptiResult (0 = success)
};

// "" for a path that is a regular file after symlinks (or does not exist: dlopen's own error
// says so), else what it is instead ("is a FIFO, not a library file"): dlopen of a FIFO blocks
// until a writer comes and a device may never end, so only regular files are loaded.
std::string not_a_library_file(const std::string& path);

}  // namespace fpgaprof::cupti

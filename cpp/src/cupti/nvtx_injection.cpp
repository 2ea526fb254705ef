// NVTX injection entry point of libfpgaprof.so and the path of the library itself.
//
// The Python package sets NVTX_INJECTION64_PATH=<path of libfpgaprof.so> before JAX starts.
// NVTX (in XLA and in fpgaprof.region) then loads this library and calls
// InitializeInjectionNvtx2, which hands NVTX over to libcupti (loaded by CuptiApi's search
// order, so it is the same copy the collector uses) so that ranges reach CUPTI as MARKER
// records.
#include <dlfcn.h>

#include <atomic>
#include <mutex>
#include <string>

#include "cupti/cupti_api.hpp"
#include "fpgaprof/cupti/capture.hpp"

namespace fpgaprof {
namespace {

std::mutex g_nvtx_mutex;
NvtxInjectionStatus g_nvtx_status;  // guarded by g_nvtx_mutex

void record_injection(int result, std::string detail) {
  std::lock_guard<std::mutex> lock(g_nvtx_mutex);
  ++g_nvtx_status.calls;
  g_nvtx_status.last_result = result;
  if (result != 0) g_nvtx_status.succeeded = true;
  g_nvtx_status.detail = std::move(detail);
}

}  // namespace

NvtxInjectionStatus nvtx_injection_status() {
  std::lock_guard<std::mutex> lock(g_nvtx_mutex);
  return g_nvtx_status;
}

std::string library_path() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&library_path), &info) != 0 && info.dli_fname != nullptr) {
    return info.dli_fname;
  }
  return {};
}

}  // namespace fpgaprof

namespace {

// Keeps the call's note for nvtx_injection_status(); a failure to keep it (out of memory)
// loses the note only, never the result NVTX gets.
template <typename Text>
void note(int result, Text text) noexcept {
  try {
    fpgaprof::record_injection(result, text());
  } catch (...) {}
}

int inject(void* get_export_table) {
  std::string error;
  const fpgaprof::cupti::CuptiApi* api = fpgaprof::cupti::CuptiApi::get(&error);
  if (api == nullptr) {
    note(0, [&] { return "libcupti could not be loaded: " + error; });
    return 0;
  }
  // libcupti's own injection entry point does CUPTI's setup before attaching to NVTX.
  if (api->InitializeInjectionNvtx2 != nullptr) {
    const int result = api->InitializeInjectionNvtx2(get_export_table);
    note(result, [&] { return "InitializeInjectionNvtx2 of " + api->path + " returned " + std::to_string(result); });
    return result;
  }
  if (api->NvtxInitialize2 != nullptr) {
    const int rc = api->NvtxInitialize2(get_export_table);
    note(rc == 0 ? 1 : 0,
         [&] { return "cuptiNvtxInitialize2 of " + api->path + " returned " + std::to_string(rc) + " (0 = success)"; });
    return rc == 0 ? 1 : 0;
  }
  note(0, [&] { return api->path + " exports neither InitializeInjectionNvtx2 nor cuptiNvtxInitialize2"; });
  return 0;
}

}  // namespace

// Returns 1 when NVTX was handed to CUPTI, 0 when CUPTI is unavailable (NVTX calls then stay
// no-ops for the life of the process: NVTX asks once). Every call and its result are kept for
// nvtx_injection_status(), so a trace can say why it has no NVTX ranges. NVTX calls this from C
// on whichever thread makes the first NVTX call: no exception may leave it.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(void* get_export_table) {
  try {
    return inject(get_export_table);
  } catch (...) {
    // out of memory while loading libcupti: NVTX stays uninstrumented
    note(0, [] { return std::string("libcupti could not be loaded: out of memory"); });
    return 0;
  }
}

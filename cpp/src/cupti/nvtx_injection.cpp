// NVTX injection entry point of libfpgaprof.so and the path of the library itself.
//
// The Python package sets NVTX_INJECTION64_PATH=<path of libfpgaprof.so> before JAX starts.
// NVTX (in XLA and in fpgaprof.region) then loads this library and calls
// InitializeInjectionNvtx2, which hands NVTX over to libcupti (loaded by CuptiApi's search
// order, so it is the same copy the collector uses) so that ranges reach CUPTI as MARKER
// records.
#include <dlfcn.h>

#include <string>

#include "cupti/cupti_api.hpp"
#include "fpgaprof/capture.hpp"

namespace fpgaprof {

std::string library_path() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&library_path), &info) != 0 && info.dli_fname != nullptr) {
    return info.dli_fname;
  }
  return {};
}

}  // namespace fpgaprof

// Returns 1 when NVTX was handed to CUPTI, 0 when CUPTI is unavailable (NVTX calls then stay
// no-ops).
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(void* get_export_table) {
  const fpgaprof::cupti::CuptiApi* api = fpgaprof::cupti::CuptiApi::get(nullptr);
  if (api == nullptr) return 0;
  // libcupti's own injection entry point does CUPTI's setup before attaching to NVTX.
  if (api->InitializeInjectionNvtx2 != nullptr) return api->InitializeInjectionNvtx2(get_export_table);
  if (api->NvtxInitialize2 != nullptr) return api->NvtxInitialize2(get_export_table) == 0 ? 1 : 0;
  return 0;
}

#include "cupti/nvml_api.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "cupti/cupti_api.hpp"

namespace fpgaprof::cupti {
namespace {

template <typename Fn>
void resolve(void* handle, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(::dlsym(handle, name));
}

const char* return_name(NvmlApi::Return rc) {
  switch (rc) {
    case 0: return "NVML_SUCCESS";
    case 1: return "NVML_ERROR_UNINITIALIZED";
    case 2: return "NVML_ERROR_INVALID_ARGUMENT";
    case 3: return "NVML_ERROR_NOT_SUPPORTED";
    case 4: return "NVML_ERROR_NO_PERMISSION";
    case 6: return "NVML_ERROR_NOT_FOUND";
    case 7: return "NVML_ERROR_INSUFFICIENT_SIZE";
    case 9: return "NVML_ERROR_DRIVER_NOT_LOADED";
    case 10: return "NVML_ERROR_TIMEOUT";
    case 12: return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case 13: return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case 15: return "NVML_ERROR_GPU_IS_LOST";
    case 18: return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case 999: return "NVML_ERROR_UNKNOWN";
    default: return nullptr;
  }
}

}  // namespace

const NvmlApi* NvmlApi::load(std::string* error, bool* absent) {
  if (absent) *absent = false;
  static std::mutex mutex;
  static auto* loaded = new std::map<std::string, const NvmlApi*>();  // by name; process lifetime
  const char* exact = std::getenv("FPGAPROF_NVML_LIBRARY");
  const bool from_env = exact != nullptr && *exact != '\0';
  const std::string name = from_env ? std::string(exact) : std::string("libnvidia-ml.so.1");
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded->find(name); it != loaded->end()) return it->second;
  if (from_env) {
    if (std::string why = not_a_library_file(name); !why.empty()) {
      if (error)
        *error = "FPGAPROF_NVML_LIBRARY=" + name + " " + why + ": point it at a libnvidia-ml.so file or unset it";
      return nullptr;
    }
  }
  void* h = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* why = ::dlerror();
    if (absent) *absent = !from_env;
    if (error) {
      *error = from_env ? "FPGAPROF_NVML_LIBRARY=" + name + " could not be loaded (" +
                              (why ? why : "unknown dlopen error") + "): fix the path or unset it"
                        : std::string("libnvidia-ml.so.1 (NVML, part of the NVIDIA driver) could not be loaded (") +
                              (why ? why : "unknown dlopen error") +
                              "): install the driver's NVML library or set FPGAPROF_NVML_LIBRARY";
    }
    return nullptr;
  }
  auto api = std::make_unique<NvmlApi>();
  resolve(h, "nvmlInit_v2", api->Init);
  resolve(h, "nvmlShutdown", api->Shutdown);
  resolve(h, "nvmlDeviceGetCount_v2", api->DeviceGetCount);
  resolve(h, "nvmlDeviceGetHandleByIndex_v2", api->DeviceGetHandleByIndex);
  resolve(h, "nvmlDeviceGetUUID", api->DeviceGetUUID);
  resolve(h, "nvmlDeviceGetPowerUsage", api->DeviceGetPowerUsage);
  resolve(h, "nvmlDeviceGetTotalEnergyConsumption", api->DeviceGetTotalEnergyConsumption);
  resolve(h, "nvmlDeviceGetMigMode", api->DeviceGetMigMode);
  resolve(h, "nvmlErrorString", api->ErrorString);
  const std::pair<const char*, bool> required[] = {
      {"nvmlInit_v2", api->Init != nullptr},
      {"nvmlShutdown", api->Shutdown != nullptr},
      {"nvmlDeviceGetCount_v2", api->DeviceGetCount != nullptr},
      {"nvmlDeviceGetHandleByIndex_v2", api->DeviceGetHandleByIndex != nullptr},
      {"nvmlDeviceGetUUID", api->DeviceGetUUID != nullptr},
      {"nvmlDeviceGetPowerUsage", api->DeviceGetPowerUsage != nullptr},
  };
  for (const auto& [symbol, ok] : required) {
    if (!ok) {
      if (error) {
        *error = "NVML at " + name + " lacks " + symbol +
                 ": it is too old or not NVML; update the NVIDIA driver or point FPGAPROF_NVML_LIBRARY at its "
                 "libnvidia-ml.so.1";
      }
      return nullptr;  // the handle stays open: closing a library others may use is not ours
    }
  }
  api->path = name;
  const NvmlApi* table = api.release();
  loaded->emplace(name, table);
  return table;
}

std::string NvmlApi::result_string(Return rc) const {
  const char* n = return_name(rc);
  std::string text = n != nullptr ? std::string(n) : "NVML error";
  if (n == nullptr && ErrorString != nullptr) {
    if (const char* s = ErrorString(rc)) text = s;
  }
  return text + " (" + std::to_string(rc) + ")";
}

}  // namespace fpgaprof::cupti

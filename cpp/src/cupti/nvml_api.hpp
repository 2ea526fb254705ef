// NvmlApi: the few NVML entry points the power sampler needs, dlopen'ed from the driver's
// libnvidia-ml.so.1 at run time (never linked, like libcupti and libcuda). Declares its own
// types instead of including <nvml.h>, which a machine need not have: handles are opaque
// pointers and results are NVML's documented integer codes. Signatures as in NVML's API
// reference (docs.nvidia.com/deploy/nvml-api, "Device Queries"): nvmlInit_v2(void),
// nvmlShutdown(void), nvmlDeviceGetCount_v2(unsigned*), nvmlDeviceGetHandleByIndex_v2(unsigned,
// nvmlDevice_t*), nvmlDeviceGetUUID(nvmlDevice_t, char*, unsigned), nvmlDeviceGetPowerUsage(
// nvmlDevice_t, unsigned* mW), nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t, unsigned long
// long* mJ; Volta and later), nvmlDeviceGetMigMode(nvmlDevice_t, unsigned* current, unsigned*
// pending; "MIG Management"), nvmlErrorString(nvmlReturn_t).
#pragma once

#include <cstdint>
#include <string>

namespace fpgaprof::cupti {

struct NvmlApi {
  using Device = struct nvmlDevice_opaque*;  // nvmlDevice_t
  using Return = int;                        // nvmlReturn_t (an enum: int-sized)

  // NVML's return codes the sampler tells apart (nvmlReturn_t).
  static constexpr Return kSuccess = 0;
  static constexpr Return kNotSupported = 3;
  static constexpr Return kNoPermission = 4;
  static constexpr Return kInsufficientSize = 7;
  static constexpr Return kDriverNotLoaded = 9;
  static constexpr Return kFunctionNotFound = 13;
  static constexpr Return kGpuIsLost = 15;
  static constexpr Return kUnknown = 999;
  // NVML_DEVICE_MIG_ENABLE: nvmlDeviceGetMigMode's current mode of a GPU in MIG mode.
  static constexpr unsigned kMigEnabled = 1;
  // NVML_DEVICE_UUID_V2_BUFFER_SIZE: "will not exceed 96 characters in length (including the
  // NULL terminator)".
  static constexpr unsigned kUuidBufferSize = 96;

  Return (*Init)() = nullptr;      // nvmlInit_v2
  Return (*Shutdown)() = nullptr;  // nvmlShutdown
  Return (*DeviceGetCount)(unsigned*) = nullptr;
  Return (*DeviceGetHandleByIndex)(unsigned, Device*) = nullptr;
  Return (*DeviceGetUUID)(Device, char*, unsigned) = nullptr;
  Return (*DeviceGetPowerUsage)(Device, unsigned*) = nullptr;
  // Optional: absent from drivers before the energy counter existed.
  Return (*DeviceGetTotalEnergyConsumption)(Device, unsigned long long*) = nullptr;
  // Optional: absent from drivers before MIG (R450).
  Return (*DeviceGetMigMode)(Device, unsigned*, unsigned*) = nullptr;
  const char* (*ErrorString)(Return) = nullptr;  // optional

  std::string path;  // the library loaded

  // Loads libnvidia-ml.so.1 (or $FPGAPROF_NVML_LIBRARY: an exact path, regular files only)
  // and resolves the entry points. nullptr with the reason (cause + fix, one line) in *error
  // when the library cannot be loaded or lacks a required entry point. The table lives for the
  // process (the library is never closed). *absent (if given) is set when the default library
  // is simply not installed (no FPGAPROF_NVML_LIBRARY). Thread-safe.
  static const NvmlApi* load(std::string* error, bool* absent = nullptr);

  // "NVML_ERROR_NO_PERMISSION (4)"-style text of a return code.
  std::string result_string(Return rc) const;
};

}  // namespace fpgaprof::cupti

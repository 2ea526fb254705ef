// CudaDriver: the few libcuda entry points the collector needs (device facts, driver version,
// device synchronization before the final flush), dlopen'ed from libcuda.so.1 at run time.
// Uses no CUDA header: handles are opaque pointers and attributes are the driver's documented
// integer ids. When libcuda is absent (CPU-only machines, the CUPTI test double) every call
// reports that instead of failing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fpgaprof/diagnostics.hpp"
#include "fpgaprof/pcie_link.hpp"
#include "fpgaprof/records.hpp"

namespace fpgaprof::cupti {

// A 16-byte device UUID as nvidia-smi prints it: "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
std::string gpu_uuid_text(const unsigned char* bytes16);

class CudaDriver {
 public:
  // Loads libcuda.so.1 once (thread-safe); nullptr when it cannot be loaded.
  static const CudaDriver* get();

  // cuDriverGetVersion (e.g. 13000); 0 when it fails.
  uint32_t driver_version() const;
  // cuInit + cuDeviceGetCount; 0 when no device (or the driver fails), reason in *error.
  int device_count(std::string* error) const;
  // Device facts from cuDeviceGetAttribute / cuDeviceGetName / cuDeviceGetUuid. Fields the
  // driver does not report stay 0 (PCIe generation and width: the driver has no attribute;
  // pcie_link() reads them from sysfs).
  DeviceInfo device_info(int ordinal) const;
  // cuDeviceGetPCIBusId: "0000:65:00.0" (the driver's case and domain width); "" when it fails.
  std::string pci_bus_id(int ordinal) const;
  // The device's PCIe link from sysfs (read_pcie_link under sysfs_root()) at its PCI bus id;
  // unknown with the reason when the driver gives no bus id. Never throws.
  PcieLink pcie_link(int ordinal) const;
  // The context hardware counters profile: the calling thread's current one, else device
  // `ordinal`'s primary context (the one JAX uses), retained for the process and made current.
  // *ctx_device: the context's device (cuCtxGetDevice; `ordinal` when the driver cannot say).
  // nullptr with the reason (cause + fix) in *error.
  void* counting_context(int ordinal, int* ctx_device, std::string* error) const;
  // Synchronizes the calling thread's current context and the active primary context of
  // every device (pushed, synchronized, popped). Returns one warning per failure.
  Diagnostics synchronize_all() const;  // capture.device_sync when a device failed

 private:
  using Fn0 = int (*)();
  int (*Init_)(unsigned) = nullptr;
  int (*DriverGetVersion_)(int*) = nullptr;
  int (*DeviceGetCount_)(int*) = nullptr;
  int (*DeviceGet_)(int*, int) = nullptr;
  int (*DeviceGetAttribute_)(int*, int, int) = nullptr;
  int (*DeviceGetName_)(char*, int, int) = nullptr;
  int (*DeviceGetUuid_)(void*, int) = nullptr;
  int (*DeviceGetPCIBusId_)(char*, int, int) = nullptr;
  int (*DeviceTotalMem_)(std::size_t*, int) = nullptr;
  int (*PrimaryCtxGetState_)(int, unsigned*, int*) = nullptr;
  int (*PrimaryCtxRetain_)(void**, int) = nullptr;
  int (*PrimaryCtxRelease_)(int) = nullptr;
  int (*CtxPushCurrent_)(void*) = nullptr;
  int (*CtxPopCurrent_)(void**) = nullptr;
  int (*CtxGetCurrent_)(void**) = nullptr;
  int (*CtxSetCurrent_)(void*) = nullptr;
  int (*CtxGetDevice_)(int*) = nullptr;
  Fn0 CtxSynchronize_ = nullptr;
};

}  // namespace fpgaprof::cupti

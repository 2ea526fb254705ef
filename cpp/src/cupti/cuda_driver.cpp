#include "cupti/cuda_driver.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <memory>
#include <mutex>

namespace fpgaprof::cupti {
namespace {

// CUdevice_attribute values (cuda.h, stable across CUDA 11-13).
constexpr int kAttrClockRateKhz = 13;
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrMemoryClockRateKhz = 36;
constexpr int kAttrGlobalMemoryBusWidthBits = 37;
constexpr int kAttrL2CacheBytes = 38;
constexpr int kAttrMaxThreadsPerSm = 39;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrMaxSharedMemoryPerSmBytes = 81;
constexpr int kAttrMaxRegistersPerSm = 82;

template <typename Fn>
void resolve(void* handle, std::initializer_list<const char*> names, Fn& out) {
  for (const char* name : names) {
    if (void* sym = ::dlsym(handle, name)) {
      out = reinterpret_cast<Fn>(sym);
      return;
    }
  }
}

}  // namespace

std::string gpu_uuid_text(const unsigned char* b) {
  char text[48];
  std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

const CudaDriver* CudaDriver::get() {
  static const CudaDriver* driver = []() -> const CudaDriver* {
    void* h = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) return nullptr;
    auto d = std::make_unique<CudaDriver>();
    resolve(h, {"cuInit"}, d->Init_);
    resolve(h, {"cuDriverGetVersion"}, d->DriverGetVersion_);
    resolve(h, {"cuDeviceGetCount"}, d->DeviceGetCount_);
    resolve(h, {"cuDeviceGet"}, d->DeviceGet_);
    resolve(h, {"cuDeviceGetAttribute"}, d->DeviceGetAttribute_);
    resolve(h, {"cuDeviceGetName"}, d->DeviceGetName_);
    resolve(h, {"cuDeviceGetUuid_v2", "cuDeviceGetUuid"}, d->DeviceGetUuid_);
    resolve(h, {"cuDeviceTotalMem_v2", "cuDeviceTotalMem"}, d->DeviceTotalMem_);
    resolve(h, {"cuDeviceGetPCIBusId"}, d->DeviceGetPCIBusId_);
    resolve(h, {"cuDevicePrimaryCtxGetState"}, d->PrimaryCtxGetState_);
    resolve(h, {"cuDevicePrimaryCtxRetain"}, d->PrimaryCtxRetain_);
    resolve(h, {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}, d->PrimaryCtxRelease_);
    resolve(h, {"cuCtxPushCurrent_v2", "cuCtxPushCurrent"}, d->CtxPushCurrent_);
    resolve(h, {"cuCtxPopCurrent_v2", "cuCtxPopCurrent"}, d->CtxPopCurrent_);
    resolve(h, {"cuCtxGetCurrent"}, d->CtxGetCurrent_);
    resolve(h, {"cuCtxSetCurrent"}, d->CtxSetCurrent_);
    resolve(h, {"cuCtxGetDevice"}, d->CtxGetDevice_);
    resolve(h, {"cuCtxSynchronize"}, d->CtxSynchronize_);
    if (d->Init_ == nullptr || d->DeviceGetCount_ == nullptr) return nullptr;
    return d.release();  // process lifetime, like the library
  }();
  return driver;
}

uint32_t CudaDriver::driver_version() const {
  int version = 0;
  if (DriverGetVersion_ == nullptr || DriverGetVersion_(&version) != 0 || version < 0) return 0;
  return static_cast<uint32_t>(version);
}

int CudaDriver::device_count(std::string* error) const {
  if (const int rc = Init_(0); rc != 0) {
    if (error) *error = "cuInit failed with CUresult " + std::to_string(rc) + ": no usable GPU or driver";
    return 0;
  }
  int count = 0;
  if (const int rc = DeviceGetCount_(&count); rc != 0) {
    if (error) *error = "cuDeviceGetCount failed with CUresult " + std::to_string(rc);
    return 0;
  }
  if (count == 0 && error) *error = "the CUDA driver sees no GPU (check CUDA_VISIBLE_DEVICES)";
  return count;
}

DeviceInfo CudaDriver::device_info(int ordinal) const {
  DeviceInfo info;
  info.id = static_cast<uint32_t>(ordinal);
  int dev = 0;
  if (DeviceGet_ == nullptr || DeviceGet_(&dev, ordinal) != 0) return info;
  auto attr = [&](int id) -> uint64_t {
    int v = 0;
    if (DeviceGetAttribute_ == nullptr || DeviceGetAttribute_(&v, id, dev) != 0 || v < 0) return 0;
    return static_cast<uint64_t>(v);
  };
  if (DeviceGetName_ != nullptr) {
    char name[256] = {};
    if (DeviceGetName_(name, static_cast<int>(sizeof name - 1), dev) == 0) info.name = name;
  }
  if (DeviceGetUuid_ != nullptr) {
    unsigned char uuid[16] = {};
    if (DeviceGetUuid_(uuid, dev) == 0) info.uuid = gpu_uuid_text(uuid);
  }
  if (DeviceTotalMem_ != nullptr) {
    std::size_t bytes = 0;
    if (DeviceTotalMem_(&bytes, dev) == 0) info.global_memory_bytes = bytes;
  }
  info.compute_capability_major = static_cast<uint32_t>(attr(kAttrComputeCapabilityMajor));
  info.compute_capability_minor = static_cast<uint32_t>(attr(kAttrComputeCapabilityMinor));
  info.sm_count = static_cast<uint32_t>(attr(kAttrMultiprocessorCount));
  info.core_clock_khz = attr(kAttrClockRateKhz);
  info.memory_clock_khz = attr(kAttrMemoryClockRateKhz);
  info.memory_bus_width_bits = static_cast<uint32_t>(attr(kAttrGlobalMemoryBusWidthBits));
  info.l2_cache_bytes = attr(kAttrL2CacheBytes);
  info.shared_memory_per_sm_bytes = attr(kAttrMaxSharedMemoryPerSmBytes);
  info.max_threads_per_sm = static_cast<uint32_t>(attr(kAttrMaxThreadsPerSm));
  info.max_registers_per_sm = static_cast<uint32_t>(attr(kAttrMaxRegistersPerSm));
  return info;
}

std::string CudaDriver::pci_bus_id(int ordinal) const {
  int dev = 0;
  if (DeviceGetPCIBusId_ == nullptr || DeviceGet_ == nullptr || DeviceGet_(&dev, ordinal) != 0) return "";
  // "dddddddd:bb:dd.f" at most (16 characters + NUL); 64 leaves room for a longer domain.
  char id[64] = {};
  if (DeviceGetPCIBusId_(id, static_cast<int>(sizeof id - 1), dev) != 0) return "";
  return id;
}

PcieLink CudaDriver::pcie_link(int ordinal) const {
  const std::string id = pci_bus_id(ordinal);
  if (id.empty()) {
    PcieLink unknown;
    unknown.unknown_reason = DeviceGetPCIBusId_ == nullptr
                                 ? "libcuda.so.1 lacks cuDeviceGetPCIBusId; measure the link with `fpgaprof calibrate`"
                                 : "cuDeviceGetPCIBusId failed for device " + std::to_string(ordinal) +
                                       "; measure the link with `fpgaprof calibrate`";
    return unknown;
  }
  return read_pcie_link(sysfs_root(), id);
}

void* CudaDriver::counting_context(int ordinal, int* ctx_device, std::string* error) const {
  if (CtxGetCurrent_ == nullptr || PrimaryCtxRetain_ == nullptr || CtxSetCurrent_ == nullptr || DeviceGet_ == nullptr) {
    *error = "libcuda.so.1 lacks cuCtxGetCurrent/cuDevicePrimaryCtxRetain: update the NVIDIA driver";
    return nullptr;
  }
  if (Init_(0) != 0) {
    *error = "cuInit failed: no usable GPU for hardware counters";
    return nullptr;
  }
  // The current context may belong to another device than `ordinal`: counters and the chip
  // name follow the context actually profiled.
  const auto device_of_current = [&] {
    int d = ordinal;
    if (CtxGetDevice_ == nullptr || CtxGetDevice_(&d) != 0) d = ordinal;
    return d;
  };
  void* ctx = nullptr;
  if (CtxGetCurrent_(&ctx) == 0 && ctx != nullptr) {
    *ctx_device = device_of_current();
    return ctx;
  }
  int dev = 0;
  if (DeviceGet_(&dev, ordinal) != 0 || PrimaryCtxRetain_(&ctx, dev) != 0 || ctx == nullptr) {
    *error = "cannot retain the primary context of device " + std::to_string(ordinal) + ": check CUDA_VISIBLE_DEVICES";
    return nullptr;
  }
  CtxSetCurrent_(ctx);
  *ctx_device = device_of_current();
  return ctx;
}

Diagnostics CudaDriver::synchronize_all() const {
  static constexpr std::string_view kCode = "capture.device_sync";
  Diagnostics warnings;
  if (CtxSynchronize_ == nullptr) {
    warnings.add(kCode, "device synchronization skipped: libcuda lacks cuCtxSynchronize");
    return warnings;
  }
  void* current = nullptr;
  if (CtxGetCurrent_ != nullptr && CtxGetCurrent_(&current) == 0 && current != nullptr) {
    if (const int rc = CtxSynchronize_(); rc != 0) {
      warnings.add(kCode,
                   "cuCtxSynchronize on the current context failed (CUresult " + std::to_string(rc) +
                       "): the last GPU activity may be missing",
                   {static_cast<double>(rc)});
    }
  }
  int count = 0;
  if (DeviceGetCount_(&count) != 0) return warnings;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    int dev = 0;
    if (DeviceGet_ == nullptr || DeviceGet_(&dev, ordinal) != 0) continue;
    unsigned flags = 0;
    int active = 0;
    // Only contexts that exist: retaining an inactive primary context would create one.
    if (PrimaryCtxGetState_ == nullptr || PrimaryCtxGetState_(dev, &flags, &active) != 0 || !active) continue;
    if (PrimaryCtxRetain_ == nullptr || CtxPushCurrent_ == nullptr || CtxPopCurrent_ == nullptr) continue;
    void* ctx = nullptr;
    if (PrimaryCtxRetain_(&ctx, dev) != 0) continue;
    if (CtxPushCurrent_(ctx) == 0) {
      if (const int rc = CtxSynchronize_(); rc != 0) {
        warnings.add(kCode,
                     "cuCtxSynchronize on device " + std::to_string(ordinal) + " failed (CUresult " +
                         std::to_string(rc) + "): the last GPU activity may be missing",
                     {static_cast<double>(ordinal), static_cast<double>(rc)});
      }
      void* popped = nullptr;
      CtxPopCurrent_(&popped);
    }
    if (PrimaryCtxRelease_ != nullptr) PrimaryCtxRelease_(dev);
  }
  return warnings;
}

}  // namespace fpgaprof::cupti

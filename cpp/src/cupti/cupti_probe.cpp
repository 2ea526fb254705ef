// probe_cupti(): what fpgaprof sees of CUPTI, the driver and the GPUs, without starting a
// trace. Never throws.
#include <string>
#include <utility>

#include "cupti/capture_messages.hpp"
#include "cupti/cuda_driver.hpp"
#include "cupti/cupti_api.hpp"
#include "cupti/cupti_headers.hpp"
#include "fpgaprof/cupti/capture.hpp"

namespace fpgaprof {

CuptiStatus probe_cupti() {
  CuptiStatus status;
  status.header_cupti_version = cupti::kCuptiHeaderApiVersion;
  status.min_cupti_version = cupti::kMinRuntimeCuptiApiVersion;
  status.header_cuda = cupti::cupti_api_cuda_text(status.header_cupti_version);
  status.min_cuda = cupti::cupti_api_cuda_text(status.min_cupti_version);
  try {
    std::string error;
    const cupti::CuptiApi* api = cupti::CuptiApi::get(&error);
    if (api != nullptr) {
      status.library_found = true;
      status.library_path = api->path;
      status.how_found = api->how_found;
      uint32_t version = 0;
      if (api->GetVersion(&version) == CUPTI_SUCCESS) status.cupti_version = version;
      status.cupti_cuda = cupti::cupti_api_cuda_text(status.cupti_version);
    }
    const cupti::CudaDriver* driver = cupti::CudaDriver::get();
    std::string device_problem;
    if (driver != nullptr) {
      status.driver_version = driver->driver_version();
      // Devices are only listed when the driver reports some: CUPTI's device queries (such
      // as cuptiDeviceGetChipName) crash without one, so fpgaprof never calls them here.
      const int count = driver->device_count(&device_problem);
      for (int i = 0; i < count; ++i) {
        DeviceInfo d = driver->device_info(i);
        const PcieLink link = driver->pcie_link(i);  // sysfs: never throws
        d.pcie_generation = link.generation;
        d.pcie_link_width = link.width;
        status.devices.push_back(std::move(d));
      }
    }
    if (api == nullptr) {
      status.problem = error;
    } else if (std::string old =
                   cupti::old_cupti_reason(status.cupti_version, status.min_cupti_version, status.library_path);
               !old.empty()) {
      status.problem = std::move(old);
    } else if (driver == nullptr) {
      status.problem =
          "no CUDA driver found (libcuda.so.1 cannot be loaded): install the NVIDIA driver and run "
          "on a machine with an NVIDIA GPU";
    } else if (status.devices.empty()) {
      status.problem = device_problem.empty() ? "the CUDA driver sees no GPU" : device_problem;
    }
  } catch (const std::exception& e) {
    status.problem = std::string("probing CUPTI failed: ") + e.what();
  } catch (...) {
    status.problem = "probing CUPTI failed with an unknown error";
  }
  return status;
}

}  // namespace fpgaprof

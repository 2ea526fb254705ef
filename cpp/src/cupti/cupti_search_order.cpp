#include "cupti/cupti_search_order.hpp"

#include <cstdlib>
#include <string_view>

#include "cupti/cuda_driver.hpp"

namespace fpgaprof::cupti {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

void add_wheel(const std::string& dirs, std::vector<CuptiCandidate>& out) {
  std::string_view rest(dirs);
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (dir.empty()) continue;
    for (const char* so : {"libcupti.so.13", "libcupti.so.12"}) {
      out.push_back({CuptiCandidate::Kind::kFile, dir + "/" + so, "pip wheel"});
    }
  }
}

void add_toolkit(const std::string& cuda_home, const char* how, std::vector<CuptiCandidate>& out) {
  std::vector<std::string> dirs;
  if (!cuda_home.empty()) {
    dirs.push_back(cuda_home + "/lib64");
    dirs.push_back(cuda_home + "/extras/CUPTI/lib64");
  }
  dirs.emplace_back("/usr/local/cuda/lib64");
  dirs.emplace_back("/usr/local/cuda/extras/CUPTI/lib64");
  for (const auto& dir : dirs) {
    for (const char* so : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"}) {
      out.push_back({CuptiCandidate::Kind::kFile, dir + "/" + so, how});
    }
  }
}

}  // namespace

CuptiSearchInputs CuptiSearchInputs::from_process() {
  CuptiSearchInputs in;
  in.exact_library = env("FPGAPROF_CUPTI_LIBRARY");
  in.wheel_lib_dirs = env("FPGAPROF_WHEEL_LIB_DIRS");
  in.cuda_home = env("CUDA_HOME");
  // Loading libcuda is only worth it when it can change the order.
  in.driver_present = !in.exact_library.empty() || CudaDriver::get() != nullptr;
  return in;
}

std::vector<CuptiCandidate> cupti_search_order(const CuptiSearchInputs& in) {
  std::vector<CuptiCandidate> out;
  if (!in.exact_library.empty()) {
    out.push_back({CuptiCandidate::Kind::kExactPath, in.exact_library, "FPGAPROF_CUPTI_LIBRARY"});
    return out;
  }
  std::vector<CuptiCandidate> wheel;
  add_wheel(in.wheel_lib_dirs, wheel);
  if (!in.driver_present && !wheel.empty()) {
    add_toolkit(in.cuda_home, kNoDriverToolkitHow, out);
    out.insert(out.end(), wheel.begin(), wheel.end());
  } else {
    out = std::move(wheel);
    add_toolkit(in.cuda_home, "CUDA toolkit", out);
  }
  for (const char* so : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"}) {
    out.push_back({CuptiCandidate::Kind::kSoname, so, "system library path"});
  }
  return out;
}

std::vector<std::string> loaded_cupti_probe_order(const std::string& exact_library, const std::string& jax_cuda_major) {
  std::vector<std::string> out;
  auto add = [&out](std::string name) {
    for (const std::string& o : out) {
      if (o == name) return;
    }
    out.push_back(std::move(name));
  };
  if (!exact_library.empty()) add(exact_library);
  if (jax_cuda_major == "12" || jax_cuda_major == "13") add("libcupti.so." + jax_cuda_major);
  for (const char* so : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"}) add(so);
  return out;
}

}  // namespace fpgaprof::cupti

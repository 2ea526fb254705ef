#include "cupti/cupti_api.hpp"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cupti/cupti_search_order.hpp"

namespace fpgaprof::cupti {
namespace {

std::mutex g_load_mutex;
std::atomic<const CuptiApi*> g_api{nullptr};

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string handle_path(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

template <typename Fn>
void resolve(void* handle, const char* name, Fn& out) {
  // POSIX guarantees object and function pointers round-trip through dlsym's void*.
  out = reinterpret_cast<Fn>(::dlsym(handle, name));
}

// Fills the table from an open handle; returns the first missing required symbol, or "".
std::string fill(void* handle, CuptiApi& api) {
  resolve(handle, "cuptiGetVersion", api.GetVersion);
  resolve(handle, "cuptiGetResultString", api.GetResultString);
  resolve(handle, "cuptiSubscribe", api.Subscribe);
  resolve(handle, "cuptiUnsubscribe", api.Unsubscribe);
  resolve(handle, "cuptiActivityEnable", api.ActivityEnable);
  resolve(handle, "cuptiActivityDisable", api.ActivityDisable);
  resolve(handle, "cuptiActivityRegisterCallbacks", api.ActivityRegisterCallbacks);
  resolve(handle, "cuptiActivityFlushAll", api.ActivityFlushAll);
  resolve(handle, "cuptiActivityGetNextRecord", api.ActivityGetNextRecord);
  resolve(handle, "cuptiActivityGetNumDroppedRecords", api.ActivityGetNumDroppedRecords);
  resolve(handle, "cuptiGetTimestamp", api.GetTimestamp);
  resolve(handle, "cuptiSetThreadIdType", api.SetThreadIdType);
  resolve(handle, "cuptiActivitySetAttribute", api.ActivitySetAttribute);
  resolve(handle, "cuptiGetCallbackName", api.GetCallbackName);
  resolve(handle, "cuptiActivityEnableAndDump", api.ActivityEnableAndDump);
  resolve(handle, "cuptiActivityEnableAllSyncRecords", api.ActivityEnableAllSyncRecords);
  resolve(handle, "cuptiActivityEnableDriverApi", api.ActivityEnableDriverApi);
  resolve(handle, "cuptiActivityEnableRuntimeApi", api.ActivityEnableRuntimeApi);
  resolve(handle, "InitializeInjectionNvtx2", api.InitializeInjectionNvtx2);
  resolve(handle, "cuptiNvtxInitialize2", api.NvtxInitialize2);
  const std::pair<const char*, bool> required[] = {
      {"cuptiGetVersion", api.GetVersion != nullptr},
      {"cuptiGetResultString", api.GetResultString != nullptr},
      {"cuptiSubscribe", api.Subscribe != nullptr},
      {"cuptiUnsubscribe", api.Unsubscribe != nullptr},
      {"cuptiActivityEnable", api.ActivityEnable != nullptr},
      {"cuptiActivityDisable", api.ActivityDisable != nullptr},
      {"cuptiActivityRegisterCallbacks", api.ActivityRegisterCallbacks != nullptr},
      {"cuptiActivityFlushAll", api.ActivityFlushAll != nullptr},
      {"cuptiActivityGetNextRecord", api.ActivityGetNextRecord != nullptr},
      {"cuptiActivityGetNumDroppedRecords", api.ActivityGetNumDroppedRecords != nullptr},
      {"cuptiGetTimestamp", api.GetTimestamp != nullptr},
  };
  for (const auto& [name, ok] : required) {
    if (!ok) return name;
  }
  return {};
}

const CuptiApi* adopt(void* handle, const std::string& name, const std::string& how, std::string* error) {
  auto api = std::make_unique<CuptiApi>();
  const std::string missing = fill(handle, *api);
  if (!missing.empty()) {
    if (error) {
      *error = "libcupti at " + handle_path(handle, name) + " lacks " + missing +
               ": use the libcupti of CUDA 12 or 13 (pip install nvidia-cuda-cupti)";
    }
    return nullptr;  // the handle stays open: closing a library others may use is not ours
  }
  api->handle = handle;
  api->path = handle_path(handle, name);
  api->how_found = how;
  const CuptiApi* table = api.release();  // process lifetime: CUPTI may call back until exit
  g_api.store(table, std::memory_order_release);
  return table;
}

}  // namespace

std::string not_a_library_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};  // missing: dlopen's own error says so
  if (S_ISREG(st.st_mode)) return {};
  if (S_ISFIFO(st.st_mode)) return "is a FIFO, not a library file";
  if (S_ISDIR(st.st_mode)) return "is a folder, not a library file";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "is a device, not a library file";
  if (S_ISSOCK(st.st_mode)) return "is a socket, not a library file";
  return "is not a regular file";
}

const CuptiApi* CuptiApi::loaded() { return g_api.load(std::memory_order_acquire); }

const CuptiApi* CuptiApi::get(std::string* error) {
  if (const CuptiApi* api = loaded()) return api;
  std::lock_guard<std::mutex> lock(g_load_mutex);
  if (const CuptiApi* api = loaded()) return api;

  {
    const char* exact = std::getenv("FPGAPROF_CUPTI_LIBRARY");
    const char* major = std::getenv("FPGAPROF_JAX_CUDA_MAJOR");
    const std::string exact_path = exact != nullptr ? exact : "";
    for (const std::string& so : loaded_cupti_probe_order(exact_path, major != nullptr ? major : "")) {
      // a path given by the user: only a regular file (dlopen of a FIFO could block)
      if (so == exact_path && !not_a_library_file(so).empty()) continue;
      if (void* h = ::dlopen(so.c_str(), RTLD_NOW | RTLD_NOLOAD)) return adopt(h, so, "already loaded", error);
    }
  }
  for (const auto& c : cupti_search_order(CuptiSearchInputs::from_process())) {
    if (c.kind == CuptiCandidate::Kind::kFile && !file_exists(c.name)) continue;
    // dlopen of a FIFO blocks until a writer comes and a device may never end: regular files only.
    if (std::string why = not_a_library_file(c.name); c.kind == CuptiCandidate::Kind::kExactPath && !why.empty()) {
      if (error)
        *error = "FPGAPROF_CUPTI_LIBRARY=" + c.name + " " + why + ": point it at a libcupti.so file or unset it";
      return nullptr;
    }
    void* h = ::dlopen(c.name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h != nullptr) return adopt(h, c.name, c.how, error);
    if (c.kind == CuptiCandidate::Kind::kExactPath) {
      const char* why = ::dlerror();
      if (error) {
        *error = "FPGAPROF_CUPTI_LIBRARY=" + c.name + " could not be loaded (" + (why ? why : "unknown dlopen error") +
                 "): fix the path or unset it";
      }
      return nullptr;
    }
  }
  if (error) {
    *error =
        "libcupti not found: pip install nvidia-cuda-cupti (CUDA 13) or nvidia-cuda-cupti-cu12 (CUDA 12; "
        "jax[cuda12] brings it), or set FPGAPROF_CUPTI_LIBRARY to the path of libcupti.so.13 or .so.12";
  }
  return nullptr;
}

std::vector<std::string> CuptiApi::mapped_libraries() {
  std::vector<std::string> out;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    // The path is the sixth field and the only one that starts with '/'.
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash);
    if (path.size() > 10 && path.compare(path.size() - 10, 10, " (deleted)") == 0) {
      path.resize(path.size() - 10);
    }
    const auto base = path.rfind('/');
    if (path.compare(base + 1, 10, "libcupti.s") != 0) continue;
    if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
  }
  return out;
}

std::string CuptiApi::result_string(CUptiResult result) const {
  const char* text = nullptr;
  if (GetResultString != nullptr && GetResultString(result, &text) == CUPTI_SUCCESS && text) {
    return std::string(text) + " (" + std::to_string(static_cast<int>(result)) + ")";
  }
  return "CUPTI error " + std::to_string(static_cast<int>(result));
}

}  // namespace fpgaprof::cupti

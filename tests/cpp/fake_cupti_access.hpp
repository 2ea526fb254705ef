// Shared by the tests that run the capture layer over the libcupti test double
// (tests/fake_cupti): pointing the collector at it, calling its control functions, and
// reading a trace's warnings.
#pragma once

#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <stdlib.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../fake_cupti/fake_cupti.hpp"
#include "cupti/cupti_api.hpp"
#include "fpgaprof/trace_store.hpp"

namespace fpgaprof::fake_access {

// Sets the fake's scenario and points FPGAPROF_CUPTI_LIBRARY at it; the loaded libcupti, or
// nullptr (with a WARN saying why) when this process already loaded another one, which
// fpgaprof then keeps using by design.
inline const cupti::CuptiApi* load_fake(const char* scenario, int kernels, int threads) {
  ::setenv("FPGAPROF_CUPTI_LIBRARY", FPGAPROF_FAKE_CUPTI_PATH, 1);
  ::setenv("FAKE_CUPTI_SCENARIO", scenario, 1);
  ::setenv("FAKE_CUPTI_KERNELS", std::to_string(kernels).c_str(), 1);
  ::setenv("FAKE_CUPTI_THREADS", std::to_string(threads).c_str(), 1);
  std::string error;
  const cupti::CuptiApi* api = cupti::CuptiApi::get(&error);
  REQUIRE(api != nullptr);
  if (api->path.find("fake_cupti") == std::string::npos) {
    WARN("another libcupti is loaded in this process (" << api->path << "); run this test alone");
    return nullptr;
  }
  return api;
}

inline void* fake_symbol(const char* name) {
  void* h = ::dlopen(FPGAPROF_FAKE_CUPTI_PATH, RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(h != nullptr);
  void* sym = ::dlsym(h, name);
  ::dlclose(h);
  REQUIRE(sym != nullptr);
  return sym;
}

inline void fake_emit() { reinterpret_cast<void (*)()>(fake_symbol("fake_cupti_emit"))(); }

// The double's call log (name and argument of each CUPTI call, in order) and its reset.
inline void reset_calls() { reinterpret_cast<void (*)()>(fake_symbol("fake_cupti_reset_calls"))(); }

inline std::vector<FakeCuptiCall> calls() {
  auto fn = reinterpret_cast<size_t (*)(FakeCuptiCall*, size_t)>(fake_symbol("fake_cupti_calls"));
  std::vector<FakeCuptiCall> out(4096);
  out.resize(std::min<size_t>(fn(out.data(), out.size()), out.size()));
  return out;
}

inline FakeCuptiCounts fake_counts() {
  FakeCuptiCounts c{};
  reinterpret_cast<void (*)(FakeCuptiCounts*)>(fake_symbol("fake_cupti_counts"))(&c);
  return c;
}

inline bool has_warning(const TraceStore& store, const std::string& text) {
  for (const auto& w : store.meta.warnings) {
    if (w.message.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace fpgaprof::fake_access

// One build, either libcupti: CUDA 12.8's (what jax[cuda12] loads) or CUDA 13's. Kernel records
// of both layouts convert alike, a libcupti older than 12.8 is refused with its version and the
// fix before anything is subscribed, and a CUDA 13 build running with libcupti 12.x asks it
// about no callback id 12.x lacks. Over the libcupti test double, which plays another release
// through FAKE_CUPTI_API_VERSION; expected values are the CUPTI release notes' numbers
// (cupti_version.h: 26 = CUDA 12.8, 28 = 12.9, 130001 = 13.0).
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <cstddef>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "../fake_cupti/fake_cupti.hpp"
#include "cupti/capture_messages.hpp"
#include "cupti/cupti_headers.hpp"
#include "cupti/record_converter.hpp"
#include "fake_cupti/activity_layout.hpp"
#include "fake_cupti_access.hpp"
#include "fpgaprof/cupti/capture.hpp"
#include "fpgaprof/error.hpp"

using namespace fpgaprof;
using namespace fpgaprof::fake_access;

namespace {

// Sets FAKE_CUPTI_API_VERSION for one scope.
struct PlayVersion {
  explicit PlayVersion(const char* v) { ::setenv("FAKE_CUPTI_API_VERSION", v, 1); }
  ~PlayVersion() { ::unsetenv("FAKE_CUPTI_API_VERSION"); }
};

template <typename Kernel>
Kernel filled_kernel(const char* name) {
  Kernel k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = 1000;
  k.end = 3500;
  k.correlationId = 77;
  k.name = name;
  k.deviceId = 1;
  k.contextId = 2;
  k.streamId = 13;
  k.gridX = 40;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 32;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 4096;
  k.localMemoryPerThread = 16;
  k.graphId = 5;
  k.graphNodeId = 9;
  return k;
}

void check_converted(const TraceStore& s) {
  REQUIRE(s.kernels.size() == 1);
  const KernelRecord& k = s.kernels[0];
  CHECK(k.start_ns == 1000);
  CHECK(k.end_ns == 3500);
  CHECK(k.correlation_id == 77);
  CHECK(s.strings.get(k.name) == "loop_add_fusion");
  CHECK(k.device_id == 1);
  CHECK(k.context_id == 2);
  CHECK(k.stream_id == 13);
  const LaunchConfig& c = s.launch_configs[k.launch_config];
  CHECK(c.grid_x == 40);
  CHECK(c.grid_y == 2);
  CHECK(c.block_x == 256);
  CHECK(c.registers_per_thread == 32);
  CHECK(c.static_shared_bytes == 1024);
  CHECK(c.dynamic_shared_bytes == 4096);
  CHECK(c.local_bytes_per_thread == 16);
  CHECK(c.graph_id == 5);
  CHECK(c.graph_node_id == 9);
}

}  // namespace

TEST_CASE("kernel records of CUDA 12.8's layout (Kernel9) convert in every build", "[cupti][cupti12]") {
  static_assert(sizeof(CUpti_ActivityKernel9) == 208, "CUDA 12.8's kernel record is 208 bytes (cupti_activity.h)");
  TraceStore store;
  cupti::RecordConverter conv(store);
  const auto k = filled_kernel<CUpti_ActivityKernel9>("loop_add_fusion");
  conv.convert(reinterpret_cast<const CUpti_Activity&>(k));
  check_converted(store);
}

#if CUPTI_API_VERSION >= 130000
TEST_CASE("kernel records of CUDA 13's layout (Kernel10) convert to the same record", "[cupti][cupti12]") {
  static_assert(sizeof(CUpti_ActivityKernel10) == 216, "CUDA 13.0's kernel record is 216 bytes (cupti_activity.h)");
  TraceStore store;
  cupti::RecordConverter conv(store);
  auto k = filled_kernel<CUpti_ActivityKernel10>("loop_add_fusion");
  // Fields past Kernel9's end are never read: poison them.
  std::memset(reinterpret_cast<unsigned char*>(&k) + sizeof(CUpti_ActivityKernel9), 0xA5,
              sizeof(k) - sizeof(CUpti_ActivityKernel9));
  conv.convert(reinterpret_cast<const CUpti_Activity&>(k));
  check_converted(store);
}
#endif

TEST_CASE("CUPTI API versions name their CUDA release", "[cupti][cupti12][messages]") {
  CHECK(cupti::cupti_api_cuda_text(26) == "12.8");
  CHECK(cupti::cupti_api_cuda_text(28) == "12.9");
  CHECK(cupti::cupti_api_cuda_text(130001) == "13.0");
  CHECK(cupti::cupti_api_cuda_text(130500) == "13.5");
  CHECK(cupti::cupti_api_cuda_text(24).empty());  // a 12.x release fpgaprof does not name
  CHECK(cupti::kMinRuntimeCuptiApiVersion == 26);
  CHECK(cupti::kCuptiHeaderApiVersion == CUPTI_API_VERSION);

  CHECK(cupti::old_cupti_reason(26, 26, "/x/libcupti.so.12").empty());
  CHECK(cupti::old_cupti_reason(130001, 26, "/x/libcupti.so.13").empty());
  CHECK(cupti::old_cupti_reason(0, 26, "/x/libcupti.so.12").empty());  // unknown: not refused
  const std::string old = cupti::old_cupti_reason(24, 26, "/x/libcupti.so.12");
  CHECK(old.find("libcupti at /x/libcupti.so.12 is API version 24, older than the CUDA 12.8 (API version 26)") == 0);
  CHECK(old.find("pip install 'nvidia-cuda-cupti-cu12>=12.8'") != std::string::npos);
  CHECK(old.find("FPGAPROF_CUPTI_LIBRARY") != std::string::npos);
}

TEST_CASE("a libcupti older than CUDA 12.8 gives a host-only trace, or kCuptiUnavailable, naming both versions",
          "[cupti][cupti12]") {
  if (load_fake("kernels", 2, 1) == nullptr) return;
  PlayVersion play("24");
  reset_calls();
  auto session = CaptureSession::start(CaptureOptions{});
  CHECK_FALSE(session->gpu_active());
  CHECK(session->unavailable_reason().find("is API version 24, older than the CUDA 12.8 (API version 26)") !=
        std::string::npos);
  TraceStore store = session->stop();
  CHECK(store.kernels.empty());
  CHECK(store.meta.cupti_version == 24);
  // Nothing was subscribed: the refusal comes before any CUPTI state changes.
  for (const auto& c : calls()) CHECK(std::string(c.name) != "cuptiSubscribe");

  CaptureOptions strict;
  strict.require_gpu = true;
  try {
    auto s2 = CaptureSession::start(strict);
    FAIL("require_gpu with an old libcupti must throw");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kCuptiUnavailable);
    CHECK(std::string(e.what()).find("nvidia-cuda-cupti-cu12>=12.8") != std::string::npos);
  }
}

TEST_CASE("with libcupti 12.8 the trace runs and no CUDA-13-only callback id is touched", "[cupti][cupti12]") {
  if (load_fake("kernels", 4, 1) == nullptr) return;
  PlayVersion play("26");
  reset_calls();
  auto session = CaptureSession::start(CaptureOptions{});
  REQUIRE(session->gpu_active());
  fake_emit();
  TraceStore store = session->stop();
  CHECK(store.meta.cupti_version == 26);
  CHECK(store.kernels.size() == 4);
  std::set<uint64_t> driver_off;
  for (const auto& c : calls()) {
    if (std::string(c.name) == "cuptiActivityEnableDriverApi") driver_off.insert(c.arg);
  }
  // CUDA 12.9's driver callback ids end below 784 (CUPTI_DRIVER_TRACE_CBID_SIZE); every id
  // fpgaprof turns off for a 12.x library must be one it knows.
  CHECK(driver_off.size() == 10);
  for (uint64_t id : driver_off) CHECK(id < 784);
  CHECK(CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice < 784);
  CHECK(driver_off.count(CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice) == 1);
}

// The capture layer against what CUPTI 13 does (docs/capture.md, "CUPTI 13 facts"), over the
// libcupti test double: which calls the collector makes and in what order (the double logs
// them and, like CUPTI 13.3+, refuses a process that mixes V1 and _v2 calls), how refusals are
// reported, and which records stay out of a trace. Expected counts are worked out by hand from
// the generation rule in tests/fake_cupti/fake_cupti.hpp.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "../fake_cupti/fake_cupti.hpp"
#include "cupti/capture_messages.hpp"
#include "cupti/cupti_api.hpp"
#include "cupti/cupti_headers.hpp"
#include "cupti/record_converter.hpp"
#include "fake_cupti_access.hpp"
#include "fpgaprof/analysis/transfer_analysis.hpp"
#include "fpgaprof/cupti/capture.hpp"
#include "fpgaprof/error.hpp"
#include "transfer_fixture.hpp"

extern "C" int InitializeInjectionNvtx2(void* get_export_table);

using namespace fpgaprof;

namespace {

using namespace fpgaprof::fake_access;

// Points the collector at the fake; false when another libcupti is already loaded in this
// process.
bool use_fake(const char* scenario, int kernels, int threads) {
  return load_fake(scenario, kernels, threads) != nullptr;
}

// Index of the first call named `name` (with `arg` when arg >= 0); -1 when none.
long find_call(const std::vector<FakeCuptiCall>& log, const std::string& name, long long arg = -1) {
  for (size_t i = 0; i < log.size(); ++i) {
    if (log[i].name == name && (arg < 0 || log[i].arg == static_cast<uint64_t>(arg))) return static_cast<long>(i);
  }
  return -1;
}

}  // namespace

TEST_CASE("the collector makes only unversioned (V1) CUPTI calls, in CUPTI's order", "[cupti][capture13]") {
  if (!use_fake("kernels", 8, 2)) return;
  reset_calls();
  auto session = CaptureSession::start(CaptureOptions{});
  REQUIRE(session->gpu_active());
  fake_emit();
  TraceStore store = session->stop();
  const auto log = calls();
  REQUIRE(!log.empty());
  CHECK(std::string(log.front().name) == "cuptiSubscribe");
  for (const auto& c : log) {
    const std::string name = c.name;
    CHECK(name.find("_v2") == std::string::npos);
    CHECK(c.result == 0);
  }
  // MARKER_DATA is never enabled (the store keeps none of it); MARKER is.
  CHECK(find_call(log, "cuptiActivityEnable", CUPTI_ACTIVITY_KIND_MARKER_DATA) == -1);
  CHECK(find_call(log, "cuptiActivityEnable", CUPTI_ACTIVITY_KIND_MARKER) >= 0);
  // DEVICE through EnableAndDump, after the buffer callbacks are registered.
  const long dump = find_call(log, "cuptiActivityEnableAndDump", CUPTI_ACTIVITY_KIND_DEVICE);
  CHECK(dump > find_call(log, "cuptiActivityRegisterCallbacks"));
  CHECK(find_call(log, "cuptiActivityEnable", CUPTI_ACTIVITY_KIND_DEVICE) == -1);
  REQUIRE(store.devices.size() == 1);
  CHECK(store.devices[0].name == "Fake H100");
  // Only finished waits, set before SYNCHRONIZATION is enabled.
  const long all_sync = find_call(log, "cuptiActivityEnableAllSyncRecords", 0);
  CHECK(all_sync >= 0);
  CHECK(all_sync < find_call(log, "cuptiActivityEnable", CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
  // Polling/context calls turned off after DRIVER/RUNTIME are on (enabling the kind later
  // would turn them on again): 11 driver and 5 runtime callback ids.
  const long driver_on = find_call(log, "cuptiActivityEnable", CUPTI_ACTIVITY_KIND_DRIVER);
  const long runtime_on = find_call(log, "cuptiActivityEnable", CUPTI_ACTIVITY_KIND_RUNTIME);
  std::set<uint64_t> driver_off, runtime_off;
  for (size_t i = 0; i < log.size(); ++i) {
    const std::string name = log[i].name;
    if (name == "cuptiActivityEnableDriverApi") {
      CHECK(static_cast<long>(i) > driver_on);
      driver_off.insert(log[i].arg);
    }
    if (name == "cuptiActivityEnableRuntimeApi") {
      CHECK(static_cast<long>(i) > runtime_on);
      runtime_off.insert(log[i].arg);
    }
  }
  std::set<uint64_t> quiet_driver{
      CUPTI_DRIVER_TRACE_CBID_cuEventQuery,       CUPTI_DRIVER_TRACE_CBID_cuStreamQuery,
      CUPTI_DRIVER_TRACE_CBID_cuStreamQuery_ptsz, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
      CUPTI_DRIVER_TRACE_CBID_cuCtxSetCurrent,    CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice,
      CUPTI_DRIVER_TRACE_CBID_cuCtxPushCurrent,   CUPTI_DRIVER_TRACE_CBID_cuCtxPushCurrent_v2,
      CUPTI_DRIVER_TRACE_CBID_cuCtxPopCurrent,    CUPTI_DRIVER_TRACE_CBID_cuCtxPopCurrent_v2};
#if CUPTI_API_VERSION >= 130000
  // The fake reports its headers' version: a CUDA 13 libcupti knows cuCtxGetDevice_v2.
  quiet_driver.insert(CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice_v2);
#endif
  CHECK(driver_off == quiet_driver);
  CHECK(runtime_off == std::set<uint64_t>{CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020,
                                          CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020,
                                          CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_ptsz_v7000,
                                          CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
                                          CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020});

  // N = 8 kernels on T = 2 threads. Polls: 2 per kernel (cuEventQuery, cuCtxGetCurrent) =
  // 32, all suppressed. API records per thread: 8 launches + HtoD (i = 0, 4) 2 + DtoH (i = 0)
  // 1 + memset (i = 0) 1 + stream sync 1 = 13 -> 26. Syncs: the 2 stream syncs; the 2
  // unfinished event queries are not recorded.
  const FakeCuptiCounts c = fake_counts();
  CHECK(c.polls == 0);
  CHECK(c.polls_suppressed == 32);
  CHECK(c.unfinished_queries == 0);
  CHECK(store.api_calls.size() == 26);
  CHECK(store.syncs.size() == 2);
}

#if CUPTI_API_VERSION >= 130000  // the _v2 family came with CUDA 13
TEST_CASE("a process that also made _v2 calls gets a ProfilerConflict, not a host-only trace",
          "[cupti][capture13][conflict]") {
  if (!use_fake("kernels", 2, 1)) return;
  reset_calls();
  // Another client in the process used the V2 API (e.g. XLA with
  // --xla_gpu_enable_cupti_multi_subscriber).
  using SubscribeV2 = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*, CUpti_SubscriberParams*);
  auto subscribe_v2 = reinterpret_cast<SubscribeV2>(fake_symbol("cuptiSubscribe_v2"));
  CUpti_SubscriberHandle other = nullptr;
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  REQUIRE(subscribe_v2(&other, nullptr, nullptr, &params) == CUPTI_SUCCESS);
  auto unsubscribe = reinterpret_cast<CUptiResult (*)(CUpti_SubscriberHandle)>(fake_symbol("cuptiUnsubscribe"));
  // The other client is gone again, but the process has used both families now.
  CHECK(unsubscribe(other) == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  try {
    auto session = CaptureSession::start(CaptureOptions{});
    FAIL("start() should have thrown");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kProfilerConflict);
    CHECK(std::string(e.what()).find("cuptiSubscribe returned CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED") == 0);
  }
  // A fresh process (as far as the fake knows): the other client's subscription is dropped.
  reset_calls();
  CHECK(unsubscribe(other) == CUPTI_SUCCESS);
  auto session = CaptureSession::start(CaptureOptions{});
  CHECK(session->gpu_active());
  session->stop();
}
#endif

TEST_CASE("a conflict that shows only after subscribing is a ProfilerConflict naming the call",
          "[cupti][capture13][conflict]") {
  if (!use_fake("kernels", 2, 1)) return;
  for (const char* call : {"cuptiSetThreadIdType", "cuptiActivityRegisterCallbacks",
                           "cuptiActivityEnableAllSyncRecords", "cuptiActivityEnable", "cuptiActivityEnableAndDump",
                           "cuptiActivityEnableDriverApi", "cuptiActivityEnableRuntimeApi"}) {
    INFO(call);
    ::setenv("FAKE_CUPTI_FAIL", (std::string(call) + "=39").c_str(), 1);
    const FakeCuptiCounts before = fake_counts();
    try {
      auto session = CaptureSession::start(CaptureOptions{});
      FAIL("start() should have thrown");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kProfilerConflict);
      const std::string what = e.what();
      CHECK(what.find(std::string(call) + " returned CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (39)") == 0);
      CHECK(what.find("jax.profiler.trace") != std::string::npos);
    }
    const FakeCuptiCounts after = fake_counts();
    CHECK(after.subscribes == before.subscribes + 1);
    CHECK(after.unsubscribes == before.unsubscribes + 1);  // CUPTI released again
    CHECK(after.enabled_kinds == 0);
  }
  // Any other failure of a later call still degrades to host-only, with the call named.
  ::setenv("FAKE_CUPTI_FAIL", "cuptiActivityRegisterCallbacks=999", 1);
  {
    auto session = CaptureSession::start(CaptureOptions{});
    CHECK_FALSE(session->gpu_active());
    // Without libcuda (this machine) the missing driver is named instead.
    const std::string reason = session->unavailable_reason();
    CHECK((reason.find("cuptiActivityRegisterCallbacks: CUPTI_ERROR_UNKNOWN (999)") != std::string::npos ||
           reason.find("no CUDA driver found") == 0));
    session->stop();
  }
  ::unsetenv("FAKE_CUPTI_FAIL");
  auto session = CaptureSession::start(CaptureOptions{});
  CHECK(session->gpu_active());
  session->stop();
}

TEST_CASE("stop()'s own synchronize stays out of the trace, late work of other threads stays in",
          "[cupti][capture13][stop]") {
  if (!use_fake("kernels", 20, 3)) return;
  ::setenv("FAKE_CUPTI_STOP_SYNC", "1", 1);
  auto session = CaptureSession::start(CaptureOptions{});
  fake_emit();  // the fake's threads may still be emitting when stop() begins
  TraceStore store = session->stop();
  ::unsetenv("FAKE_CUPTI_STOP_SYNC");
  const FakeCuptiCounts c = fake_counts();
  // CUPTI did record the stop thread's cuCtxSynchronize and its CONTEXT_SYNCHRONIZE ...
  CHECK(c.stop_thread_records == 2);
  // ... but they are not in the trace, while the same thread's own work from before stop()
  // (emit's caller: cuLaunchKernel + cuStreamSynchronize and its STREAM_SYNCHRONIZE) is.
  // Per fake thread (N = 20): 20 launches + HtoD (i%4==0) 5 + DtoH (i%8==0) 3 + memset
  // (i%16==0) 2 + 1 stream sync = 31 API records -> 93; + the caller's 2 = 95. Syncs: 3 + 1.
  CHECK(c.caller_api_records == 2);
  CHECK(c.caller_syncs == 1);
  const uint32_t me = current_thread_id();
  CHECK(store.api_calls.size() == 95);
  std::set<uint32_t> mine;
  for (const auto& a : store.api_calls) {
    CHECK(store.api_functions[a.function].callback_id != CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize);
    if (a.thread_id == me) mine.insert(a.correlation_id);
  }
  CHECK(mine.size() == 2);
  REQUIRE(store.syncs.size() == 4);
  int my_syncs = 0;
  for (const auto& y : store.syncs) {
    CHECK(y.kind == SyncKind::kStreamSynchronize);
    my_syncs += mine.count(y.correlation_id) != 0 ? 1 : 0;
  }
  CHECK(my_syncs == 1);
  std::set<uint32_t> threads;
  for (const auto& a : store.api_calls) threads.insert(a.thread_id);
  CHECK(threads == std::set<uint32_t>{kFakeThreadBase, kFakeThreadBase + 1, kFakeThreadBase + 2, me});
  // The kernel that finished while stop() synchronized is kept: GPU-side kinds stay on until
  // the flush. 60 + 1.
  CHECK(c.drain_kernels == 1);
  CHECK(store.kernels.size() == 61);
}

TEST_CASE("without DRIVER API records, stop()'s own context synchronize still stays out", "[cupti][capture13][stop]") {
  if (!use_fake("kernels", 4, 2)) return;
  ::setenv("FAKE_CUPTI_STOP_SYNC", "1", 1);
  ::setenv("FAKE_CUPTI_FAIL", ("cuptiActivityEnable:" + std::to_string(CUPTI_ACTIVITY_KIND_DRIVER) + "=1").c_str(), 1);
  auto session = CaptureSession::start(CaptureOptions{});
  REQUIRE(session->gpu_active());
  fake_emit();
  TraceStore store = session->stop();
  ::unsetenv("FAKE_CUPTI_FAIL");
  ::unsetenv("FAKE_CUPTI_STOP_SYNC");
  const FakeCuptiCounts c = fake_counts();
  CHECK(has_warning(store, "CUPTI activity kind DRIVER could not be enabled"));
  CHECK(store.api_calls.empty());
  // Only the CONTEXT_SYNCHRONIZE of stop()'s synchronize was written (no API record).
  CHECK(c.stop_thread_records == 1);
  // Kept: 2 fake threads' stream syncs + the caller's one = 3, none without an API record
  // dropped as a poll (no sync has an API record here).
  REQUIRE(store.syncs.size() == 3);
  for (const auto& y : store.syncs) CHECK(y.kind == SyncKind::kStreamSynchronize);
  CHECK_FALSE(has_warning(store, "untraced calls"));
}

TEST_CASE("completed polls' sync records are dropped and counted, failed waits are kept and counted",
          "[cupti][capture13][syncs]") {
  if (!use_fake("kernels", 4, 2)) return;
  ::setenv("FAKE_CUPTI_SYNC_EXTRAS", "1", 1);
  auto session = CaptureSession::start(CaptureOptions{});
  fake_emit();
  TraceStore store = session->stop();
  ::unsetenv("FAKE_CUPTI_SYNC_EXTRAS");
  const FakeCuptiCounts c = fake_counts();
  // Per thread: one completed cuEventQuery (untraced: no API record) with its sync record,
  // one failed cuStreamSynchronize (719), one plain cuStreamSynchronize.
  CHECK(c.completed_poll_syncs == 2);
  CHECK(c.failed_waits == 2);
  CHECK(c.polls == 0);
  // Kept: 2 plain + 2 failed stream syncs; the 2 poll syncs are dropped.
  REQUIRE(store.syncs.size() == 4);
  std::set<uint32_t> traced;
  for (const auto& a : store.api_calls) traced.insert(a.correlation_id);
  for (const auto& y : store.syncs) {
    CHECK(y.kind == SyncKind::kStreamSynchronize);
    CHECK(traced.count(y.correlation_id) == 1);
  }
  CHECK(has_warning(store,
                    "2 CUPTI synchronization records of untraced calls (event/stream queries that "
                    "found the work complete) were skipped"));
  CHECK(has_warning(store, "2 host waits returned an error (first: CUresult 719): kept as host waits"));
  CHECK_FALSE(has_warning(store, "unfinished"));
}

TEST_CASE("a GPU trace without NVTX ranges says whether the injection ran and what it returned",
          "[cupti][capture13][nvtx]") {
  if (!use_fake("kernels", 4, 1)) return;
  ::setenv("FAKE_CUPTI_MARKERS", "0", 1);
  const NvtxInjectionStatus before = nvtx_injection_status();
  if (before.succeeded) {
    WARN("the NVTX injection already succeeded in this process: the failure case cannot be checked");
  } else {
    ::setenv("FAKE_CUPTI_NVTX_RESULT", "5", 1);  // cuptiNvtxInitialize2 fails
    CHECK(InitializeInjectionNvtx2(nullptr) == 0);
    const NvtxInjectionStatus failed = nvtx_injection_status();
    CHECK(failed.calls == before.calls + 1);
    CHECK(failed.last_result == 0);
    CHECK_FALSE(failed.succeeded);
    CHECK(failed.detail.find("cuptiNvtxInitialize2 of ") == 0);
    CHECK(failed.detail.find("returned 5") != std::string::npos);
    auto session = CaptureSession::start(CaptureOptions{});
    fake_emit();
    TraceStore store = session->stop();
    CHECK(store.kernels.size() == 4);
    CHECK(store.markers.empty());
    CHECK(has_warning(store, "NVTX injection returned 0 (cuptiNvtxInitialize2 of "));
    CHECK(has_warning(store, "no XLA ranges, HLO attribution by kernel name only"));
    ::unsetenv("FAKE_CUPTI_NVTX_RESULT");
  }
  CHECK(InitializeInjectionNvtx2(nullptr) == 1);
  const NvtxInjectionStatus ok = nvtx_injection_status();
  CHECK(ok.succeeded);
  CHECK(ok.last_result == 1);
  {
    auto session = CaptureSession::start(CaptureOptions{});
    fake_emit();
    TraceStore store = session->stop();
    CHECK(store.markers.empty());
    CHECK_FALSE(has_warning(store, "NVTX injection"));
  }
  ::unsetenv("FAKE_CUPTI_MARKERS");
}

TEST_CASE("two libcupti files in the process are a warning naming both", "[cupti][capture13][maps]") {
  if (!use_fake("kernels", 1, 1)) return;
  const auto before = cupti::CuptiApi::mapped_libraries();
  char dir_a[] = "/tmp/fpgaprof_cupti_a_XXXXXX";
  char dir_b[] = "/tmp/fpgaprof_cupti_b_XXXXXX";
  REQUIRE(::mkdtemp(dir_a) != nullptr);
  REQUIRE(::mkdtemp(dir_b) != nullptr);
  const std::string a = std::filesystem::canonical(dir_a).string() + "/libcupti.so.13";
  const std::string b = std::filesystem::canonical(dir_b).string() + "/libcupti.so.13";
  std::filesystem::copy_file(FPGAPROF_FAKE_CUPTI_PATH, a);
  std::filesystem::copy_file(FPGAPROF_FAKE_CUPTI_PATH, b);
  void* ha = ::dlopen(a.c_str(), RTLD_NOW | RTLD_LOCAL);
  void* hb = ::dlopen(b.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(ha != nullptr);
  REQUIRE(hb != nullptr);
  const auto mapped = cupti::CuptiApi::mapped_libraries();
  CHECK(mapped.size() == before.size() + 2);
  CHECK(std::count(mapped.begin(), mapped.end(), a) == 1);
  CHECK(std::count(mapped.begin(), mapped.end(), b) == 1);
  auto count_warnings = [](const TraceStore& store, const std::string& text) {
    return std::count_if(store.meta.warnings.begin(), store.meta.warnings.end(),
                         [&](const Diagnostic& w) { return w.message.find(text) != std::string::npos; });
  };
  {
    // Mapped before start(): begin() and stop() both see them, one warning.
    auto session = CaptureSession::start(CaptureOptions{});
    TraceStore store = session->stop();
    CHECK(count_warnings(store, " libcupti files are mapped in this process (") == 1);
    CHECK(has_warning(store, std::to_string(mapped.size()) + " libcupti files are mapped in this process ("));
    CHECK(has_warning(store, a));
    CHECK(has_warning(store, b));
    CHECK(has_warning(store, "set FPGAPROF_CUPTI_LIBRARY to the libcupti JAX loads"));
  }
  ::dlclose(hb);
  CHECK(cupti::CuptiApi::mapped_libraries().size() == before.size() + 1);
  if (!before.empty()) {
    WARN("a libcupti was already mapped before this test; the mapped-while-tracing case needs none");
  } else {
    // One libcupti file at start() (no warning then); the second is mapped while tracing (as
    // JAX's plugin may load its libcupti after the trace started): stop() warns, naming it.
    auto session = CaptureSession::start(CaptureOptions{});
    void* hb2 = ::dlopen(b.c_str(), RTLD_NOW | RTLD_LOCAL);
    REQUIRE(hb2 != nullptr);
    TraceStore store = session->stop();
    ::dlclose(hb2);
    CHECK(count_warnings(store, " libcupti files are mapped in this process (") == 1);
    CHECK(has_warning(store, b));
  }
  ::dlclose(ha);
  std::filesystem::remove_all(dir_a);
  std::filesystem::remove_all(dir_b);
  CHECK(cupti::CuptiApi::mapped_libraries() == before);
}

TEST_CASE("capture messages for states this machine cannot reach", "[cupti][capture13][messages]") {
  // CUPTI_ERROR_NOT_INITIALIZED with a driver: libcupti newer than the driver.
  const std::string old_driver =
      cupti::start_failure_reason("cuptiSubscribe", 15, "CUPTI_ERROR_NOT_INITIALIZED (15)", true, 130001, 12080);
  CHECK(old_driver.find("cuptiSubscribe returned CUPTI_ERROR_NOT_INITIALIZED (15): libcupti (API version 130001) "
                        "is likely newer than the driver, which supports CUDA 12.8 (cuDriverGetVersion 12080)") == 0);
  CHECK(old_driver.find("pip install 'nvidia-cuda-cupti-cu12==12.8.*'") != std::string::npos);
  CHECK(old_driver.find("FPGAPROF_CUPTI_LIBRARY") != std::string::npos);
  // Without a driver the driver is the problem, whatever CUPTI said.
  CHECK(cupti::start_failure_reason("cuptiSubscribe", 15, "x", false, 130001, 0).find("no CUDA driver found") == 0);
  const std::string other =
      cupti::start_failure_reason("cuptiActivityEnable", 999, "CUPTI_ERROR_UNKNOWN (999)", true, 0, 13000);
  CHECK(other.find("CUPTI could not start (cuptiActivityEnable: CUPTI_ERROR_UNKNOWN (999))") == 0);
  CHECK(cupti::cuda_version_text(13000) == "13.0");
  CHECK(cupti::cuda_version_text(12080) == "12.8");

  const std::string conflict = cupti::conflict_message("cuptiActivityEnable");
  CHECK(conflict.find("CUDA 13.3") != std::string::npos);
  CHECK(conflict.find("r610") != std::string::npos);
  CHECK(conflict.find("before CUPTI 13.2") == std::string::npos);

  NvtxInjectionStatus never;
  CHECK(cupti::nvtx_warning(never, 0, 0).empty());  // no kernels: nothing to attribute
  CHECK(cupti::nvtx_warning(never, 5, 1).empty());  // ranges arrived (another injection)
  CHECK(cupti::nvtx_warning(never, 5, 0).find("NVTX injection was not active") == 0);
  NvtxInjectionStatus ok;
  ok.calls = 1;
  ok.last_result = 1;
  ok.succeeded = true;
  CHECK(cupti::nvtx_warning(ok, 5, 0).empty());

  CHECK(cupti::multiple_cupti_warning({"/a/libcupti.so.13"}, "/a/libcupti.so.13").empty());
  const std::string two =
      cupti::multiple_cupti_warning({"/a/libcupti.so.13", "/b/libcupti.so.13"}, "/a/libcupti.so.13");
  CHECK(two.find("2 libcupti files are mapped in this process (/a/libcupti.so.13, /b/libcupti.so.13)") == 0);
}

TEST_CASE("memory records of operation type INVALID are counted, not taken for allocations",
          "[cupti][capture13][converter]") {
  TraceStore store;
  cupti::RecordConverter converter(store);
  CUpti_ActivityMemory4 invalid{};
  invalid.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  invalid.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID;
  invalid.bytes = 4096;
  CUpti_ActivityMemory4 alloc = invalid;
  alloc.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  CUpti_ActivityMemory4 release = invalid;
  release.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  for (const auto* r : {&invalid, &alloc, &release, &invalid}) {
    converter.convert(reinterpret_cast<const CUpti_Activity&>(*r));
  }
  REQUIRE(store.allocations.size() == 2);
  CHECK(store.allocations[0].is_alloc);
  CHECK_FALSE(store.allocations[1].is_alloc);
  CHECK(converter.stats().unknown_memory_operations == 2);
  CHECK(converter.stats().records == converter.stats().converted + converter.stats().ignored);
  converter.finish(0);
  CHECK(has_warning(store, "2 CUPTI memory records had operation type INVALID"));
}

TEST_CASE("synchronization records of unfinished queries are skipped and counted", "[cupti][capture13][converter]") {
  // 600 (CUDA_ERROR_NOT_READY) is a poll: skipped. 719 is a wait that failed: kept, counted.
  TraceStore store;
  cupti::RecordConverter converter(store);
  CUpti_ActivitySynchronization2 wait{};
  wait.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  wait.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
  wait.start = 100;
  wait.end = 200;
  wait.correlationId = 11;
  CUpti_ActivitySynchronization2 poll = wait;
  poll.returnValue = 600;  // CUDA_ERROR_NOT_READY
  CUpti_ActivitySynchronization2 failed = wait;
  failed.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  failed.correlationId = 12;
  failed.returnValue = 719;  // CUDA_ERROR_LAUNCH_FAILED
  CUpti_ActivitySynchronization2 completed_poll = wait;
  completed_poll.correlationId = 13;  // an untraced cuEventQuery: no API record
  for (const auto* r : {&wait, &poll, &failed, &completed_poll}) {
    converter.convert(reinterpret_cast<const CUpti_Activity&>(*r));
  }
  REQUIRE(store.syncs.size() == 3);
  CHECK(store.syncs[0].kind == SyncKind::kEventSynchronize);
  CHECK(store.syncs[1].kind == SyncKind::kStreamSynchronize);
  CHECK(converter.stats().unfinished_sync_queries == 1);
  CHECK(converter.stats().failed_sync_waits == 1);
  // API records for 11 and 12 only: 13 goes.
  ApiRecord a;
  a.correlation_id = 11;
  store.api_calls.push_back(a);
  a.correlation_id = 12;
  store.api_calls.push_back(a);
  CHECK(converter.drop_syncs_without_api_call() == 1);
  REQUIRE(store.syncs.size() == 2);
  CHECK(store.syncs[0].correlation_id == 11);
  CHECK(store.syncs[1].correlation_id == 12);
  converter.finish(0);
  CHECK(has_warning(store,
                    "1 CUPTI synchronization records of event/stream queries that found the work "
                    "unfinished (returnValue 600"));
  CHECK(has_warning(store, "1 CUPTI synchronization records of untraced calls"));
  CHECK(has_warning(store, "1 host waits returned an error (first: CUresult 719)"));
}

TEST_CASE("stream-wait-event records are no host wait", "[analysis][transfers][capture13]") {
  // Thread 7, no regions. Waits: event sync [100,300), stream wait event [200,900) (device
  // side), stream sync [250,400), context sync [1000,1100).
  // Host wait = [100,400) + [1000,1100) = 300 + 100 = 400 ns over 3 calls; counting the
  // stream wait event would give [100,900) + [1000,1100) = 900 ns over 4.
  TraceStore s;
  auto sync = [](SyncKind kind, uint64_t start, uint64_t end) {
    SyncRecord y;
    y.kind = kind;
    y.start_ns = start;
    y.end_ns = end;
    y.thread_id = 7;
    return y;
  };
  s.syncs = {sync(SyncKind::kEventSynchronize, 100, 300), sync(SyncKind::kStreamWaitEvent, 200, 900),
             sync(SyncKind::kStreamSynchronize, 250, 400), sync(SyncKind::kContextSynchronize, 1000, 1100)};
  const analysis::TransferReport r = analysis::analyze_transfers(s, analysis::TransferOptions{});
  const analysis::TransferGroup& t = fpgaprof::testing::group(r, analysis::GroupKind::kTrace, kNone32);
  CHECK(t.host_wait_ns == 400);
  CHECK(t.sync_calls == 3);
}

// End to end: CaptureSession over the libcupti test double (tests/fake_cupti), loaded through
// FPGAPROF_CUPTI_LIBRARY exactly as a real libcupti would be. The expected counts are worked
// out by hand from the generation rule in fake_cupti.hpp; the fake's own counts are a
// cross-check.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <string>
#include <thread>

#include "../fake_cupti/fake_cupti.hpp"
#include "cupti/cupti_api.hpp"
#include "fake_cupti_access.hpp"
#include "fpgaprof/cupti/capture.hpp"
#include "fpgaprof/error.hpp"
#include "fpgaprof/trace_file.hpp"

extern char** environ;
extern "C" int InitializeInjectionNvtx2(void* get_export_table);

using namespace fpgaprof;

namespace {

using namespace fpgaprof::fake_access;

// Points the collector at the fake; false (with a WARN) when this process already loaded
// another libcupti.
bool use_fake(const char* scenario, int kernels = 50, int threads = 3) {
  const cupti::CuptiApi* api = load_fake(scenario, kernels, threads);
  if (api == nullptr) return false;
  CHECK(api->how_found == "FPGAPROF_CUPTI_LIBRARY");
  return true;
}

}  // namespace

TEST_CASE("a session over the fake libcupti converts every record it emitted", "[cupti][session]") {
  if (!use_fake("kernels", 50, 3)) return;
  CaptureOptions options;
  options.buffer_bytes = 16 << 10;  // small: many buffers, many completions
  auto session = CaptureSession::start(options);
  REQUIRE(session->gpu_active());
  CHECK(session->unavailable_reason().empty());
  region_push("outer");
  fake_emit();
  region_pop();
  TraceStore store = session->stop();

  // By hand, N = 50 kernels on each of T = 3 threads:
  //   HtoD copies per thread: i = 0,4,...,48 -> 13; DtoH: i = 0,8,...,48 -> 7; memsets:
  //   i = 0,16,32,48 -> 4; API calls: 50 launches + 13 + 7 + 4 + 1 stream sync = 75.
  //   HtoD bytes per thread: 4096 * sum_{j=0..12}(4j+1) = 4096 * 325 = 1331200;
  //   DtoH bytes: 1024 * sum_{j=0..6}(8j+1) = 1024 * 175 = 179200.
  //   Markers: per thread 1 module + 1 instant + 50 thunks = 52, plus 1 "still_open" = 157.
  CHECK(store.kernels.size() == 150);
  CHECK(store.api_calls.size() == 225);
  CHECK(store.memsets.size() == 12);
  CHECK(store.syncs.size() == 3);
  CHECK(store.allocations.size() == 3);
  CHECK(store.external_correlations.size() == 3);
  CHECK(store.overheads.size() == 3);
  CHECK(store.markers.size() == 157);
  uint64_t htod = 0, dtoh = 0, htod_bytes = 0, dtoh_bytes = 0;
  for (const auto& m : store.memcpys) {
    if (m.copy_kind == CopyKind::kHtoD) {
      ++htod;
      htod_bytes += m.bytes;
    }
    if (m.copy_kind == CopyKind::kDtoH) {
      ++dtoh;
      dtoh_bytes += m.bytes;
    }
  }
  CHECK(htod == 39);
  CHECK(dtoh == 21);
  CHECK(htod_bytes == 3993600);
  CHECK(dtoh_bytes == 537600);

  const FakeCuptiCounts c = fake_counts();
  CHECK(c.kernels == store.kernels.size());
  CHECK(c.api_calls == store.api_calls.size());
  CHECK(c.marker_ranges + c.marker_instants == store.markers.size());
  CHECK(c.htod_bytes == htod_bytes);
  CHECK(c.lost_no_buffer == 0);
  CHECK(c.buffers_completed > 3);
  CHECK(c.enabled_kinds == 0);  // all disabled at stop
  CHECK(c.unsubscribes == c.subscribes);

  CHECK(store.meta.gpu_available);
  CHECK(store.meta.dropped_records == 0);
  CHECK(store.meta.incomplete_records == 0);
  CHECK(store.meta.cupti_path.find("fake_cupti") != std::string::npos);
  CHECK(store.meta.cupti_version == CUPTI_API_VERSION);
  CHECK(store.meta.start_ns > 0);
  CHECK(store.meta.end_ns >= store.meta.start_ns);

  REQUIRE(store.devices.size() == 1);
  CHECK(store.devices[0].name == "Fake H100");
  CHECK(store.devices[0].sm_count == 132);

  std::set<uint32_t> threads;
  for (const auto& a : store.api_calls) threads.insert(a.thread_id);
  CHECK(threads == std::set<uint32_t>{kFakeThreadBase, kFakeThreadBase + 1, kFakeThreadBase + 2});
  std::set<std::string> api_names;
  for (const auto& a : store.api_calls) api_names.insert(store.strings.get(store.api_function_of(a).name));
  CHECK(api_names == std::set<std::string>{"cuLaunchKernel", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2",
                                           "cuMemsetD8Async", "cuStreamSynchronize"});
  for (const auto& k : store.kernels) {
    CHECK(k.start_ns >= store.meta.start_ns);
    CHECK(k.start_ns <= store.meta.end_ns);
  }
  // Every kernel's correlation id has its launch API record.
  std::set<uint32_t> launch_ids;
  for (const auto& a : store.api_calls) launch_ids.insert(a.correlation_id);
  for (const auto& k : store.kernels) CHECK(launch_ids.count(k.correlation_id) == 1);

  int thunks = 0, modules = 0, open = 0;
  for (const auto& m : store.markers) {
    const std::string& name = store.strings.get(m.name);
    if (name.rfind("Thunk:#hlo_op=fusion.", 0) == 0) {
      ++thunks;
      CHECK(m.is_closed);
      CHECK(store.strings.get(m.domain) == "TSL");
    }
    if (name == "XlaModule:#hlo_module=jit_f,program_id=3#") {
      ++modules;
      CHECK(m.is_closed);
    }
    if (name == "still_open") {
      ++open;
      CHECK_FALSE(m.is_closed);
      CHECK(m.end_ns == store.meta.end_ns);
    }
  }
  CHECK(thunks == 150);
  CHECK(modules == 3);
  CHECK(open == 1);
  CHECK(has_warning(store, "NVTX ranges were still open"));

  REQUIRE(store.regions.size() == 1);
  CHECK(store.strings.get(store.regions[0].name) == "outer");
  CHECK(store.regions[0].thread_id == current_thread_id());
  CHECK(store.regions[0].start_ns >= store.meta.start_ns);
  CHECK(store.regions[0].end_ns >= store.regions[0].start_ns);
  CHECK(store.regions[0].end_ns <= store.meta.end_ns);
}

TEST_CASE("dropped and timestamp-less records surface as counts and warnings", "[cupti][session][dropped]") {
  if (!use_fake("dropped", 20, 1)) return;
  auto session = CaptureSession::start(CaptureOptions{});
  fake_emit();
  TraceStore store = session->stop();
  CHECK(store.meta.dropped_records == 17);    // the fake reports 17 once
  CHECK(store.meta.incomplete_records == 3);  // thread 0's first 3 kernels
  CHECK(has_warning(store, "17 CUPTI activity records were dropped"));
  CHECK(has_warning(store, "3 GPU activity records have no timestamps"));
  CHECK(fake_counts().dropped_reported == 17);
  CHECK(store.kernels.size() == 20);
}

TEST_CASE("a failed query of the dropped count is said, not read as 0 dropped", "[cupti][session][dropped]") {
  if (!use_fake("dropped", 20, 1)) return;
  // Every query fails (999): the 17 records the fake dropped are never reported.
  ::setenv("FAKE_CUPTI_FAIL", "cuptiActivityGetNumDroppedRecords=999", 1);
  auto session = CaptureSession::start(CaptureOptions{});
  fake_emit();
  TraceStore store = session->stop();
  ::unsetenv("FAKE_CUPTI_FAIL");
  CHECK(store.meta.dropped_records == 0);
  CHECK(fake_counts().dropped_reported == 0);
  // The 17 are still pending in the double (no query succeeded): the next session, whose
  // queries work, reports them, so the next test starts with none.
  auto next = CaptureSession::start(CaptureOptions{});
  CHECK(next->stop().meta.dropped_records == 17);
  CHECK(store.kernels.size() == 20);
  const Diagnostic* w = store.meta.warnings.first_of("capture.dropped_count_unknown");
  REQUIRE(w != nullptr);
  CHECK(w->message.find("queries of how many CUPTI activity records were dropped failed") != std::string::npos);
  CHECK(w->message.find("(999)") != std::string::npos);  // the result, with its code
  CHECK(w->message.find("dropped_records (0) is a lower bound") != std::string::npos);
  CHECK(w->numbers.at(0) >= 1);  // the failed queries: at least the one at stop
}

TEST_CASE("a buffer size out of range is refused before CUPTI is touched", "[cupti][session]") {
  if (!use_fake("kernels", 4, 1)) return;
  reset_calls();
  const FakeCuptiCounts before = fake_counts();
  for (std::size_t bytes : {std::size_t{100}, std::size_t{1} << 50}) {
    CaptureOptions options;
    options.buffer_bytes = bytes;
    try {
      (void)CaptureSession::start(options);
      FAIL("no error for buffer_bytes " << bytes);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kInvalidArgument);
      CHECK(std::string(e.what()).find("outside 4096 to 1073741824 bytes") != std::string::npos);
    }
  }
  CHECK(calls().empty());  // no CUPTI call was made
  CHECK(fake_counts().subscribes == before.subscribes);
  // and the next trace starts as usual (no subscriber left behind to read as a conflict)
  auto session = CaptureSession::start(CaptureOptions{});
  REQUIRE(session->gpu_active());
  fake_emit();
  CHECK(session->stop().kernels.size() == 4);
}

TEST_CASE("records that find no buffer are counted as dropped, never lost silently", "[cupti][session][dropped]") {
  if (!use_fake("kernels", 200, 2)) return;
  ::setenv("FAKE_CUPTI_BARRIER", "1", 1);  // both threads ask for a buffer before either goes on
  CaptureOptions options;
  options.buffer_bytes = 4096;
  options.max_buffers = 1;  // 2 emitting threads, 1 buffer: the second thread's first request fails
  auto session = CaptureSession::start(options);
  fake_emit();
  TraceStore store = session->stop();
  ::unsetenv("FAKE_CUPTI_BARRIER");
  const FakeCuptiCounts c = fake_counts();
  CHECK(c.lost_no_buffer >= 1);
  CHECK(store.meta.dropped_records == c.lost_no_buffer);
  CHECK(store.kernels.size() == c.kernels);
  CHECK(has_warning(store, std::to_string(c.lost_no_buffer) + " CUPTI activity records were dropped"));
}

TEST_CASE("another CUPTI subscriber is a ProfilerConflict naming it", "[cupti][session][conflict]") {
  if (!use_fake("conflict")) return;
  try {
    auto session = CaptureSession::start(CaptureOptions{});
    FAIL("start() should have thrown");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kProfilerConflict);
    const std::string what = e.what();
    // Pure V1: cuptiSubscribe cannot say who holds CUPTI, so the message names the likely ones.
    CHECK(what.find("cuptiSubscribe returned CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (39)") == 0);
    CHECK(what.find("Nsight Systems or Nsight Compute, jax.profiler.trace, or another fpgaprof trace") !=
          std::string::npos);
    CHECK(what.find("CUDA 13.3") != std::string::npos);
  }
  // The failed start left no session behind.
  use_fake("kernels", 4, 1);
  auto session = CaptureSession::start(CaptureOptions{});
  CHECK(session->gpu_active());
  session->stop();
}

TEST_CASE("without a driver a session is host-only, or an error with require_gpu", "[cupti][session][nodriver]") {
  if (!use_fake("nodriver")) return;
  {
    auto session = CaptureSession::start(CaptureOptions{});
    CHECK_FALSE(session->gpu_active());
    const std::string reason = session->unavailable_reason();
    CHECK((reason.find("no CUDA driver found") != std::string::npos ||
           reason.find("CUPTI could not start (CUPTI_ERROR_UNKNOWN") != std::string::npos));
    region_push("host_only");
    region_pop();
    TraceStore store = session->stop();
    CHECK_FALSE(store.meta.gpu_available);
    CHECK(store.meta.unavailable_reason == reason);
    CHECK(store.kernels.empty());
    REQUIRE(store.regions.size() == 1);
    CHECK(store.strings.get(store.regions[0].name) == "host_only");
  }
  CaptureOptions strict;
  strict.require_gpu = true;
  try {
    auto session = CaptureSession::start(strict);
    FAIL("start() should have thrown");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kCuptiUnavailable);
  }
}

TEST_CASE("kinds that fail to enable are warnings, the rest is captured", "[cupti][session]") {
  if (!use_fake("partial", 8, 1)) return;
  auto session = CaptureSession::start(CaptureOptions{});
  REQUIRE(session->gpu_active());
  fake_emit();
  TraceStore store = session->stop();
  CHECK(store.kernels.size() == 8);
  CHECK(store.allocations.empty());
  CHECK(store.overheads.empty());
  CHECK(has_warning(store, "MEMORY2 could not be enabled (CUPTI_ERROR_NOT_COMPATIBLE"));
  CHECK(has_warning(store, "OVERHEAD could not be enabled"));
}

TEST_CASE("nested sessions and a second stop are state errors", "[cupti][session]") {
  if (!use_fake("kernels", 2, 1)) return;
  auto session = CaptureSession::start(CaptureOptions{});
  try {
    auto inner = CaptureSession::start(CaptureOptions{});
    FAIL("nested start() should have thrown");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kState);
  }
  session->stop();
  try {
    session->stop();
    FAIL("second stop() should have thrown");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kState);
  }
  // Dropping a session without stop() releases CUPTI for the next one.
  { auto dropped = CaptureSession::start(CaptureOptions{}); }
  auto again = CaptureSession::start(CaptureOptions{});
  CHECK(again->gpu_active());
  again->stop();
}

TEST_CASE("a CUPTI call refused while the trace stops is a warning, and the records stay", "[cupti][session]") {
  if (!use_fake("kernels", 4, 1)) return;
  const int kind = static_cast<int>(CUPTI_ACTIVITY_KIND_MEMSET);
  ::setenv("FAKE_CUPTI_FAIL", ("cuptiActivityDisable:" + std::to_string(kind) + "=1").c_str(), 1);
  auto session = CaptureSession::start(CaptureOptions{});
  fake_emit();
  TraceStore store = session->stop();
  ::unsetenv("FAKE_CUPTI_FAIL");
  CHECK(store.kernels.size() == 4);
  CHECK(has_warning(store, "cuptiActivityDisable(" + std::to_string(kind) + ") failed"));
  // The rest of the release went through: the next trace subscribes as usual.
  auto next = CaptureSession::start(CaptureOptions{});
  CHECK(next->gpu_active());
  next->stop();
}

TEST_CASE("a child forked during a trace neither stops nor frees the parent's capture", "[cupti][session][fork]") {
  if (!use_fake("kernels", 4, 1)) return;
  auto session = CaptureSession::start(CaptureOptions{});
  fake_emit();
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // stop() is refused before it takes a lock or calls CUPTI (the fork may have copied a
    // lock held); the destructor of the child's copy touches nothing either.
    int code = 3;
    try {
      (void)session->stop();
      code = 1;
    } catch (const Error& e) {
      const std::string m = e.what();
      code = e.kind() == ErrorKind::kState && m.find("forked child") != std::string::npos ? 0 : 2;
    } catch (...) {}
    session.reset();
    ::_exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // The parent's capture is whole: its stop converts every record.
  TraceStore store = session->stop();
  CHECK(store.kernels.size() == 4);
}

TEST_CASE("a region name that is not UTF-8 is stored repaired, so the trace stays readable",
          "[cupti][session][regions]") {
  if (!use_fake("kernels", 1, 1)) return;
  auto session = CaptureSession::start(CaptureOptions{});
  region_push("caf\xe9");  // Latin-1, from the C++ API
  region_pop();
  TraceStore store = session->stop();
  REQUIRE(store.regions.size() == 1);
  CHECK(store.strings.get(store.regions[0].name) == "caf\xef\xbf\xbd");  // U+FFFD
  // before, the reader refused the file the writer had made
  const TraceStore back = deserialize_trace(serialize_trace(store, true), "regions.fpgaprof");
  CHECK(back.strings.get(back.regions[0].name) == "caf\xef\xbf\xbd");
}

TEST_CASE("regions nest per thread and are recorded only while a session runs", "[cupti][session][regions]") {
  if (!use_fake("kernels", 1, 1)) return;
  region_push("before");  // begun before the session: its pop is counted, not recorded
  auto session = CaptureSession::start(CaptureOptions{});
  region_pop();
  region_push("a");
  region_push("b");
  uint32_t other_tid = 0;
  std::thread other([&other_tid] {
    other_tid = current_thread_id();
    region_push("c");
    region_pop();
  });
  other.join();
  region_pop();
  region_pop();
  region_push("left_open");
  TraceStore store = session->stop();
  region_pop();  // after the session: a no-op

  REQUIRE(store.regions.size() == 4);
  auto name = [&](size_t i) { return store.strings.get(store.regions[i].name); };
  CHECK(name(0) == "a");
  CHECK(name(1) == "b");
  CHECK(name(2) == "c");
  CHECK(name(3) == "left_open");
  CHECK(store.regions[0].parent == kNone32);
  CHECK(store.regions[0].depth == 0);
  CHECK(store.regions[1].parent == 0);
  CHECK(store.regions[1].depth == 1);
  CHECK(store.regions[2].parent == kNone32);  // other thread: its own stack
  CHECK(store.regions[2].thread_id == other_tid);
  CHECK(other_tid != current_thread_id());
  CHECK(store.regions[1].end_ns <= store.regions[0].end_ns);
  CHECK(store.regions[3].end_ns == store.meta.end_ns);
  CHECK(has_warning(store, "1 fpgaprof regions were still open"));
  CHECK(has_warning(store, "1 fpgaprof regions ended in the trace but began before it"));
}

TEST_CASE("NVTX injection forwards to the loaded libcupti", "[cupti][nvtx]") {
  if (!use_fake("kernels")) return;
  const uint64_t before = fake_counts().nvtx_initializations;
  CHECK(InitializeInjectionNvtx2(nullptr) == 1);  // the fake's cuptiNvtxInitialize2 returns 0
  CHECK(fake_counts().nvtx_initializations == before + 1);
  const std::string path = library_path();
  CHECK(path.size() > std::string("libfpgaprof.so").size());
  CHECK(path.substr(path.rfind('/') + 1) == "libfpgaprof.so");
}

TEST_CASE("the trace clock is CLOCK_REALTIME nanoseconds", "[cupti][clock]") {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  const uint64_t os_ns = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
  const uint64_t trace_ns = trace_clock_ns();
  CHECK(trace_ns >= os_ns);
  CHECK(trace_ns - os_ns < 1000000000ull);  // within a second
  CHECK(current_thread_id() == static_cast<uint32_t>(::gettid()));
}

// Runs in a child process (the parent test below), so that the real libcupti is the one
// this process loads.
TEST_CASE("real libcupti without a driver (child)", "[.][real_cupti_child]") {
  const char* lib = std::getenv("FPGAPROF_CUPTI_LIBRARY");
  REQUIRE(lib != nullptr);
  const CuptiStatus status = probe_cupti();
  CHECK(status.library_found);
  CHECK(status.library_path == lib);
  CHECK(status.how_found == "FPGAPROF_CUPTI_LIBRARY");
  CHECK(status.driver_version == 0);
  CHECK(status.problem.find("no CUDA driver found") != std::string::npos);
  auto session = CaptureSession::start(CaptureOptions{});
  CHECK_FALSE(session->gpu_active());
  CHECK(session->unavailable_reason().find("no CUDA driver found") != std::string::npos);
  TraceStore store = session->stop();
  CHECK_FALSE(store.meta.gpu_available);
  CHECK(store.meta.end_ns > store.meta.start_ns - 1);
  CHECK(store.meta.start_ns > 1600000000ull * 1000000000ull);  // a real CLOCK_REALTIME value
  CaptureOptions strict;
  strict.require_gpu = true;
  CHECK_THROWS_AS(CaptureSession::start(strict), Error);
}

TEST_CASE("with the real libcupti and no driver, capture degrades to host-only", "[cupti][real]") {
  const char* real = "/usr/local/cuda/lib64/libcupti.so.13";
  if (::access(real, R_OK) != 0) {
    WARN("no CUDA toolkit libcupti at " << real << ": nothing to check");
    return;
  }
  if (void* cuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    ::dlclose(cuda);
    WARN("a CUDA driver is present: the no-driver path cannot be checked here");
    return;
  }
  std::string env_lib = std::string("FPGAPROF_CUPTI_LIBRARY=") + real;
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string(*e).rfind("FPGAPROF_CUPTI_LIBRARY=", 0) != 0) env.push_back(*e);
  }
  env.push_back(env_lib.data());
  env.push_back(nullptr);
  char exe[] = "/proc/self/exe";
  char filter[] = "[real_cupti_child]";
  char* argv[] = {exe, filter, nullptr};
  pid_t pid = 0;
  REQUIRE(::posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, env.data()) == 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

// Regions recorded in a fork()ed child carry the child's thread id. The forking thread keeps
// its thread_local state in the child, so a tid cached there before the fork would be the
// parent's: the child's regions would then nest under the parent's open ones.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>

#include "cupti/region_recorder.hpp"
#include "fpgaprof/cupti/capture.hpp"
#include "fpgaprof/trace_store.hpp"

using namespace fpgaprof;

namespace {

bool has_warning(const TraceStore& store, const std::string& text) {
  for (const auto& w : store.meta.warnings) {
    if (w.message.find(text) != std::string::npos) return true;
  }
  return false;
}

// In the child: records one region of its own, pops once more than it pushed, and writes
// what it saw to fd as "gettid current_thread_id n_regions {name tid depth parent}* unmatched".
[[noreturn]] void child_main(int fd) {
  const auto tid_now = static_cast<uint32_t>(::gettid());
  const uint32_t reported = current_thread_id();
  region_push("child");
  region_pop();  // closes "child"
  region_pop();  // nothing of the child's own is open: an unmatched pop
  TraceStore store;
  cupti::RegionRecorder::instance().end(trace_clock_ns(), store);
  std::ostringstream out;
  out << tid_now << ' ' << reported << ' ' << store.regions.size();
  for (const auto& r : store.regions) {
    out << ' ' << store.strings.get(r.name) << ' ' << r.thread_id << ' ' << r.depth << ' '
        << (r.parent == kNone32 ? -1L : static_cast<long>(r.parent));
  }
  out << ' ' << (has_warning(store, "1 fpgaprof regions ended in the trace but began before it") ? 1 : 0);
  const std::string text = out.str();
  const ssize_t n = ::write(fd, text.data(), text.size());
  ::_exit(n == static_cast<ssize_t>(text.size()) ? 0 : 3);
}

}  // namespace

TEST_CASE("a fork()ed child records regions under its own thread id", "[cupti][regions][fork]") {
  auto& recorder = cupti::RegionRecorder::instance();
  REQUIRE_FALSE(recorder.recording());              // no session active in this test
  const uint32_t parent_tid = current_thread_id();  // caches the parent's tid in this thread
  REQUIRE(parent_tid == static_cast<uint32_t>(::gettid()));
  recorder.begin();
  region_push("parent_open");  // open across the fork

  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1]);
  }
  ::close(fds[1]);
  std::string text;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);

  INFO("child wrote: " << text);
  std::istringstream in(text);
  uint32_t child_gettid = 0, child_reported = 0;
  std::size_t n_regions = 0;
  in >> child_gettid >> child_reported >> n_regions;
  CHECK(child_gettid != parent_tid);
  CHECK(child_reported == child_gettid);
  // The child inherited the parent's open region (index 0, the parent's tid) and added its
  // own at depth 0 under no parent: it runs on another thread than "parent_open".
  REQUIRE(n_regions == 2);
  std::string name0, name1;
  uint32_t tid0 = 0, tid1 = 0, depth0 = 0, depth1 = 0;
  long parent0 = 0, parent1 = 0;
  int unmatched = 0;
  in >> name0 >> tid0 >> depth0 >> parent0 >> name1 >> tid1 >> depth1 >> parent1 >> unmatched;
  CHECK(name0 == "parent_open");
  CHECK(tid0 == parent_tid);
  CHECK(name1 == "child");
  CHECK(tid1 == child_gettid);
  CHECK(depth1 == 0);
  CHECK(parent1 == -1);
  CHECK(unmatched == 1);  // the child's second pop did not close the parent's region

  // The parent's own recording is untouched by the child.
  region_pop();
  TraceStore store;
  recorder.end(trace_clock_ns(), store);
  REQUIRE(store.regions.size() == 1);
  CHECK(store.strings.get(store.regions[0].name) == "parent_open");
  CHECK(store.regions[0].thread_id == parent_tid);
  CHECK(store.meta.warnings.empty());
  CHECK(current_thread_id() == parent_tid);
}

TEST_CASE("a fork() while another thread records regions does not hang the child", "[cupti][regions][fork]") {
  // Another thread pushes and pops as fast as it can, so it holds the recorder's lock about
  // half the time; each of 20 children records a region of its own. Without the lock held
  // across fork() a child inherits the lock taken and hangs on its first region.
  auto& recorder = cupti::RegionRecorder::instance();
  REQUIRE_FALSE(recorder.recording());
  recorder.begin();
  // NVTX initialises itself on its first call, spinning in other threads until that is done;
  // a child forked during the busy thread's first call would spin for ever in NVTX, not in
  // fpgaprof. The first call happens here, before any fork.
  region_push("warm-up");
  region_pop();
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    for (uint64_t i = 1; !stop.load(std::memory_order_relaxed); ++i) {
      region_push("busy");
      region_pop();
      if (i % 10000 == 0) {  // keeps the recorder's list small (a region every ~100 ns)
        TraceStore drop;
        recorder.end(0, drop);
        recorder.begin();
      }
    }
  });
  int hung = 0;
  for (int i = 0; i < 20; ++i) {
    const pid_t pid = ::fork();
    if (pid < 0) {  // no REQUIRE here: the busy thread must be joined before the test ends
      FAIL_CHECK("fork failed: " << std::strerror(errno));
      break;
    }
    if (pid == 0) {
      region_push("child");
      region_pop();
      ::_exit(0);
    }
    int status = 0;
    pid_t done = 0;
    for (int waited_ms = 0; waited_ms < 5000 && (done = ::waitpid(pid, &status, WNOHANG)) == 0; waited_ms += 5)
      ::usleep(5000);
    if (done == 0) {  // still running after 5 s: hung on a lock
      ++hung;
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    } else {
      CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    }
  }
  stop.store(true);
  busy.join();
  TraceStore discard;
  recorder.end(trace_clock_ns(), discard);
  CHECK(hung == 0);
}

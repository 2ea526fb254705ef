#include "cupti/region_recorder.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>

#include <nvtx3/nvToolsExt.h>

#include "cupti/cupti_api.hpp"
#include "fpgaprof/cupti/capture.hpp"
#include "fpgaprof/text.hpp"

namespace fpgaprof {
namespace cupti {

namespace {
RegionRecorder* g_recorder = nullptr;  // set once, before the fork handlers that use it
}  // namespace

RegionRecorder& RegionRecorder::instance() {
  static RegionRecorder* recorder = [] {
    g_recorder = new RegionRecorder();  // outlives every thread that may pop
    // A fork() while another thread holds the lock would leave it locked for good in the
    // child (that thread does not exist there): its first region would hang. The lock is
    // held across the fork, so both sides go on with it free.
    ::pthread_atfork([] { g_recorder->mutex_.lock(); }, [] { g_recorder->mutex_.unlock(); },
                     [] { g_recorder->mutex_.unlock(); });
    return g_recorder;
  }();
  return *recorder;
}

void RegionRecorder::begin() {
  std::lock_guard<std::mutex> lock(mutex_);
  names_ = StringTable();
  regions_.clear();
  stacks_.clear();
  unmatched_pops_ = 0;
  recording_.store(true, std::memory_order_relaxed);
}

void RegionRecorder::push(std::string_view name, uint64_t now_ns, uint32_t thread_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!recording_.load(std::memory_order_relaxed)) return;
  auto& stack = stacks_[thread_id];
  RegionRecord r;
  r.start_ns = now_ns;
  r.end_ns = now_ns;
  r.thread_id = thread_id;
  r.name = names_.intern(name);
  r.parent = stack.empty() ? kNone32 : stack.back();
  r.depth = static_cast<uint16_t>(stack.size() > 0xffff ? 0xffff : stack.size());
  stack.push_back(static_cast<uint32_t>(regions_.size()));
  regions_.push_back(r);
}

void RegionRecorder::pop(uint64_t now_ns, uint32_t thread_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!recording_.load(std::memory_order_relaxed)) return;
  auto it = stacks_.find(thread_id);
  if (it == stacks_.end() || it->second.empty()) {
    ++unmatched_pops_;
    return;
  }
  regions_[it->second.back()].end_ns = now_ns;
  it->second.pop_back();
}

void RegionRecorder::end(uint64_t trace_end_ns, TraceStore& store) {
  std::lock_guard<std::mutex> lock(mutex_);
  recording_.store(false, std::memory_order_relaxed);
  std::size_t open = 0;
  for (auto& [thread, stack] : stacks_) {
    for (uint32_t index : stack) {
      regions_[index].end_ns = trace_end_ns;
      ++open;
    }
  }
  const std::size_t base = store.regions.size();
  for (RegionRecord r : regions_) {
    // The writer never stores what the reader refuses: a name that is not UTF-8 (from the C++
    // API or bytes given to _core.region_push) gets U+FFFD, as CUPTI and NVTX names do.
    const std::string& name = names_.get(r.name);
    r.name = is_utf8(name) ? store.strings.intern(name) : store.strings.intern(to_utf8(name));
    if (r.parent != kNone32) r.parent = static_cast<uint32_t>(r.parent + base);
    store.regions.push_back(r);
  }
  if (open > 0) {
    store.meta.warnings.add("capture.ranges_open_at_stop",
                            std::to_string(open) +
                                " fpgaprof regions were still open when the trace stopped: they "
                                "end at the trace end",
                            {static_cast<double>(open)});
  }
  if (unmatched_pops_ > 0) {
    store.meta.warnings.add("capture.ranges_begun_before",
                            std::to_string(unmatched_pops_) +
                                " fpgaprof regions ended in the trace but began before it: not "
                                "recorded",
                            {static_cast<double>(unmatched_pops_)});
  }
  regions_.clear();
  stacks_.clear();
}

namespace {

nvtxDomainHandle_t nvtx_domain() {
  static nvtxDomainHandle_t domain = nvtxDomainCreateA("fpgaprof");
  return domain;
}

}  // namespace
}  // namespace cupti

uint64_t trace_clock_ns() {
  if (const cupti::CuptiApi* api = cupti::CuptiApi::loaded()) {
    uint64_t now = 0;
    // Without a driver some CUPTI versions (13.5) fail here: fall back to the OS clock, the
    // same CLOCK_REALTIME CUPTI uses on Linux.
    if (api->GetTimestamp(&now) == CUPTI_SUCCESS && now != 0) return now;
  }
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

namespace {

// Bumped in a fork()ed child: the forking thread lives on there with a new tid but the same
// thread_local cache, so caches from an older generation are stale.
std::atomic<uint32_t> g_fork_generation{0};

void after_fork_in_child() { g_fork_generation.fetch_add(1, std::memory_order_relaxed); }

struct CachedTid {
  uint32_t tid = 0;
  uint32_t generation = 0;
  bool valid = false;
};

}  // namespace

uint32_t current_thread_id() {
  // Registered before any tid is cached, so no cache can predate the handler.
  static const bool registered = ::pthread_atfork(nullptr, nullptr, after_fork_in_child) == 0;
  thread_local CachedTid cache;
  const uint32_t generation = g_fork_generation.load(std::memory_order_relaxed);
  if (!registered || !cache.valid || cache.generation != generation) {
    cache.tid = static_cast<uint32_t>(::syscall(SYS_gettid));
    cache.generation = generation;
    cache.valid = registered;
  }
  return cache.tid;
}

void region_push(std::string_view name) {
  auto& recorder = cupti::RegionRecorder::instance();
  if (recorder.recording()) recorder.push(name, trace_clock_ns(), current_thread_id());
  // NVTX needs a NUL-terminated message; long names are cut (only other tools see these).
  char message[256];
  const std::size_t n = name.size() < sizeof message - 1 ? name.size() : sizeof message - 1;
  std::memcpy(message, name.data(), n);
  message[n] = '\0';
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = message;
  nvtxDomainRangePushEx(cupti::nvtx_domain(), &attributes);
}

void region_pop() {
  auto& recorder = cupti::RegionRecorder::instance();
  if (recorder.recording()) recorder.pop(trace_clock_ns(), current_thread_id());
  nvtxDomainRangePop(cupti::nvtx_domain());
}

}  // namespace fpgaprof

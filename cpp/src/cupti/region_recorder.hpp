// RegionRecorder: the host-side record of user regions (fpgaprof.region) for the active
// capture session. Regions get the trace clock and the OS thread id; each thread has its own
// stack, so nesting is per thread. Names are interned in the recorder's own table and moved
// into the session's store when the session ends.
//
// Thread-safe. When no session records, push/pop return at once (one relaxed atomic load).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fpgaprof/trace_store.hpp"

namespace fpgaprof::cupti {

class RegionRecorder {
 public:
  static RegionRecorder& instance();  // process-wide; never destroyed

  // Starts recording into an empty list (a session began).
  void begin();
  // Stops recording and moves the regions into store (names interned there). Regions still
  // open end at trace_end_ns; pops without a push (regions begun before the session) are
  // counted. Both become warnings in store.meta.
  void end(uint64_t trace_end_ns, TraceStore& store);

  bool recording() const { return recording_.load(std::memory_order_relaxed); }
  void push(std::string_view name, uint64_t now_ns, uint32_t thread_id);
  void pop(uint64_t now_ns, uint32_t thread_id);

 private:
  std::atomic<bool> recording_{false};
  std::mutex mutex_;
  StringTable names_;
  std::vector<RegionRecord> regions_;
  std::unordered_map<uint32_t, std::vector<uint32_t>> stacks_;  // thread -> open region indices
  uint64_t unmatched_pops_ = 0;
};

}  // namespace fpgaprof::cupti

// Joins records after capture or load (idempotent; the trace file stores raw records):
// kernels/memcpys/memsets/allocations/syncs -> their API call by correlation id (api_index,
// thread_id, launch_ns); marker and region nesting per thread (parent, depth); each GPU
// activity -> the innermost user region and NVTX range open on its launching thread at
// launch time (region_index, marker_index).
//
// Rules, precisely:
// - API join: the API record with the same non-zero correlation_id. When several API records
//   share one id (a runtime call and the driver call under it), the outermost one wins
//   (earliest start, then longest). Matched: api_index, thread_id = API thread, launch_ns =
//   API start (allocations: thread_id only; syncs: thread_id only). Unmatched (no API record,
//   or correlation_id 0): api_index = kNone32, launch_ns = 0, thread_id left as it was; counted.
// - Nesting (markers, regions), per thread: intervals [start_ns, end_ns) sorted by start
//   (ties: longer first); the parent is the innermost earlier range still open at the child's
//   start. Unclosed marker ranges (is_closed false) are open until the end of time.
//   Instantaneous markers (is_range false) get a parent but are never a parent. Ranges that
//   overlap without nesting are treated as nested in the one that started first.
// - Attribution: an activity with a launch_ns (i.e. joined to its API call) gets the
//   innermost region / range marker of its thread with start_ns <= launch_ns < end_ns;
//   otherwise kNone32. Allocations use their timestamp_ns on the API thread.
// - Region fallback by time: an activity launched by a thread that never opened a region
//   (JAX/PJRT may launch from its own worker threads while the Python thread that opened the
//   region waits), or that has no API record, gets the innermost region (latest start) open on ANY
//   thread at its launch time (no API record: its GPU start_ns); counted in regions_by_time.
//   NVTX range markers are never assigned across threads (XLA pushes its thunk ranges on
//   the launching thread).
// Runs in O(n log n). Replaces earlier "correlate:" warnings in store.meta.warnings with
// one warning per kind of unmatched record (so calling it twice changes nothing).
#pragma once
#include <cstdint>

#include "fpgaprof/trace_store.hpp"

namespace fpgaprof {

// What could not be joined (records whose correlation id has no API record).
struct CorrelationStats {
  uint64_t unmatched_kernels = 0;
  uint64_t unmatched_memcpys = 0;
  uint64_t unmatched_memsets = 0;
  uint64_t unmatched_allocations = 0;
  uint64_t unmatched_syncs = 0;
  uint64_t unattributed_to_region = 0;  // GPU activities launched outside every region
  uint64_t regions_by_time = 0;         // region assigned by the any-thread time fallback
};

CorrelationStats correlate(TraceStore& store);
}  // namespace fpgaprof

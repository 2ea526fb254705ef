// Joins records after capture or load (idempotent; the trace file stores raw records):
// kernels/memcpys/memsets/allocations/syncs -> their API call by correlation id (api_index,
// thread_id, launch_ns); marker and region nesting per thread (parent, depth); each GPU
// activity -> the innermost user region and NVTX range open on its launching thread at
// launch time (region_index, marker_index).
#pragma once
#include "fpgaprof/trace_store.hpp"

namespace fpgaprof {
void correlate(TraceStore& store);
}  // namespace fpgaprof

// The trace file: versioned, compact, self-describing, written atomically (temp file + rename).
// Readers throw Error(kTraceFormat) naming the path and the reason for truncated, corrupted,
// empty or future-version files; never crash.
#pragma once
#include <string>
#include <string_view>

#include "fpgaprof/trace_store.hpp"

namespace fpgaprof {
std::string serialize_trace(const TraceStore& store);
TraceStore deserialize_trace(std::string_view bytes, const std::string& origin);
void write_trace(const TraceStore& store, const std::string& path);
TraceStore read_trace(const std::string& path);
}  // namespace fpgaprof

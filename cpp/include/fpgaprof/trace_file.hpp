// The trace file: versioned, compact, self-describing, written atomically (temp file + rename).
// Readers throw Error(kTraceFormat) naming the path and the reason for truncated, corrupted,
// empty or future-version files; never crash.
#pragma once
#include <string>
#include <string_view>

#include "fpgaprof/trace_store.hpp"

namespace fpgaprof {
// The trace file's bytes (format in docs/trace-format.md). Deterministic: equal stores give
// equal bytes. compress=false stores sections uncompressed (bigger; for fuzzing seeds and
// debugging); readers accept both.
std::string serialize_trace(const TraceStore& store, bool compress = true);
// Reads the bytes of a trace file; `origin` (a path) starts every error message. Throws
// Error(kTraceFormat) for anything that is not a complete, valid trace of a supported version.
// Never reads out of bounds; allocations are bounded by the input size.
TraceStore deserialize_trace(std::string_view bytes, const std::string& origin);
// Writes atomically: a temporary file in the same directory, fsync, rename, fsync of the
// directory. Throws Error(kIo) naming the path when any step fails (the temporary is removed).
void write_trace(const TraceStore& store, const std::string& path);
// Reads a trace file: Error(kIo) if it cannot be opened/read or is a folder, else as
// deserialize_trace.
TraceStore read_trace(const std::string& path);
}  // namespace fpgaprof

// The trace file: versioned, compact, self-describing, written atomically (temp file + rename).
// Readers throw Error(kTraceFormat) naming the path and the reason for truncated, corrupted,
// empty or future-version files; never crash.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "fpgaprof/trace_store.hpp"

namespace fpgaprof {

// What reading a trace may allocate: the decoded store and the section being decoded stay
// below kTraceMaxExpansion times the input size plus kTraceExpansionAllowanceBytes; an input
// that would need more (a zlib bomb, a forged count) is refused with Error(kTraceFormat).
// docs/trace-format.md, "Limits".
inline constexpr uint64_t kTraceMaxExpansion = 64;
inline constexpr uint64_t kTraceExpansionAllowanceBytes = uint64_t{64} << 20;

struct ReadOptions {
  // Called now and then while a trace is read and decoded (about every MiB read or inflated,
  // and after each section); it may throw to stop the read, and the exception then leaves
  // read_trace / deserialize_trace as it is (the Python binding raises KeyboardInterrupt
  // from it on Ctrl-C). Empty: never called.
  std::function<void()> poll;
  // The memory the read may use, in bytes, instead of the bound above: for a trace fpgaprof
  // wrote whose records are regular enough to compress past it (a long run of identical
  // kernels). 0: the bound above.
  uint64_t max_memory_bytes = 0;
};

// The trace file's bytes (format in docs/trace-format.md). Deterministic: equal stores give
// equal bytes. compress=false stores sections uncompressed (bigger; for fuzzing seeds and
// debugging); readers accept both.
std::string serialize_trace(const TraceStore& store, bool compress = true);
// Reads the bytes of a trace file; `origin` (a path) starts every error message. Throws
// Error(kTraceFormat) for anything that is not a complete, valid trace of a supported version
// (every string UTF-8, every META number in its field's range). Never reads out of bounds;
// allocations are bounded as kTraceMaxExpansion says.
TraceStore deserialize_trace(std::string_view bytes, const std::string& origin, const ReadOptions& options = {});
// Writes atomically: a temporary file in the same directory, fsync, rename, fsync of the
// directory. Throws Error(kIo) naming the path when any step fails (the temporary is removed).
void write_trace(const TraceStore& store, const std::string& path);
// Reads a trace file as deserialize_trace does, one section at a time (the file is never held
// whole), checking the magic bytes before reading further. Error(kIo) if it cannot be opened
// or read, or is not a regular file (a folder, device, FIFO or socket: refused without
// reading or waiting).
TraceStore read_trace(const std::string& path, const ReadOptions& options = {});
}  // namespace fpgaprof

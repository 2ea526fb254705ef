// The one exception type of the fpgaprof core. The bindings map each ErrorKind to a
// specific Python exception (fpgaprof.CuptiUnavailableError, ...). Messages say the cause
// and the fix in one line.
#pragma once

#include <stdexcept>
#include <string>

namespace fpgaprof {

enum class ErrorKind {
  kInternal,          // a bug in fpgaprof
  kInvalidArgument,   // bad input from the caller
  kCuptiUnavailable,  // no CUPTI library, driver or GPU
  kProfilerConflict,  // another CUPTI subscriber holds the GPU
  kTraceFormat,       // a trace file that cannot be read
  kHloParse,          // HLO text that cannot be parsed
  kIo,                // a file could not be written or read
  kState,             // an operation in the wrong state (nested trace, ...)
  kCounters,          // hardware counters could not be collected
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace fpgaprof

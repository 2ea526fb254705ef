// Parser for HLO text as XLA prints it (HloModule ... ENTRY ...), long form (operands with
// shapes) and short form, with or without layouts, old metadata (source_file/source_line) and
// the newer stack-frame tables (FileNames, FunctionNames, FileLocations, StackFrames), whose
// stack_frame_id references are resolved into Metadata::source_file/source_line.
// Throws HloParseError (an fpgaprof::Error of kind kHloParse) with the message
// "line L, column C: expected X, found 'text'" on syntax it does not know; never crashes on any
// input. Thread-safe (no shared state). Linear in the input size.
#pragma once
#include <string>
#include <string_view>

#include "fpgaprof/error.hpp"
#include "fpgaprof/hlo/hlo_module.hpp"

namespace fpgaprof::hlo {

class HloParseError : public Error {
 public:
  HloParseError(int line, int column, std::string found, const std::string& message)
      : Error(ErrorKind::kHloParse, message), line_(line), column_(column), found_(std::move(found)) {}
  int line() const noexcept { return line_; }                   // 1-based
  int column() const noexcept { return column_; }               // 1-based, in bytes
  const std::string& found() const noexcept { return found_; }  // text at the error position

 private:
  int line_;
  int column_;
  std::string found_;
};

Module parse_hlo_module(std::string_view text);

}  // namespace fpgaprof::hlo

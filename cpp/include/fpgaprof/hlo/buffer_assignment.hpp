// XLA's buffer assignment and live ranges of one optimized module, as XLA dumps them next to
// the HLO text with --xla_dump_to: `*after_optimizations-buffer-assignment.txt` (every
// allocation: size, kind, the HLO values at their offsets) and `*-live-range.txt` (the flattened
// schedule and each value's live range over it). Parsed by parse_buffer_assignment() and
// parse_live_ranges(); both throw BufferAssignmentParseError (an Error of kind kHloParse) with
// the line number, never crash, and allocate at most a small multiple of the input size.
// Thread-safe (no shared state). Sizes in bytes.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fpgaprof/error.hpp"

namespace fpgaprof::hlo {

class BufferAssignmentParseError : public Error {
 public:
  BufferAssignmentParseError(int line, const std::string& message)
      : Error(ErrorKind::kHloParse, message), line_(line) {}
  int line() const noexcept { return line_; }  // 1-based

 private:
  int line_;
};

// What an allocation holds, from its header's flags (first that applies): an entry parameter;
// an output (the output tuple or a maybe-live-out buffer); a constant; a thread-local buffer
// (inside a called computation: a fusion's reducer, a CPU loop); else a temporary (on GPU the
// one preallocated temp buffer, its values at offsets).
enum class AllocationKind : uint8_t { kTemporary, kParameter, kOutput, kConstant, kThreadLocal };
const char* allocation_kind_name(AllocationKind k);  // "temporary", "parameter", ...

// One HLO value assigned to an allocation: `<id instruction{index} @color>`.
struct BufferValue {
  int64_t id = 0;
  std::string instruction;  // the instruction defining the value
  std::string shape_index;  // "{}" for a whole array, "{0,1}" for a tuple element
  uint64_t size_bytes = 0;
  uint64_t offset_bytes = 0;  // inside its allocation
  std::string shape;          // as printed, with layout
  bool is_phi = false;
  // A tuple's index table (its shape starts with '('): pointers, not data.
  bool is_tuple_table() const { return !shape.empty() && shape.front() == '('; }
  std::string key() const { return instruction + shape_index; }  // the live-range file's name
};

struct BufferAllocation {
  uint32_t index = 0;
  uint64_t size_bytes = 0;
  AllocationKind kind = AllocationKind::kTemporary;
  int64_t parameter_number = -1;  // entry parameter number, -1 none
  int64_t color = 0;              // memory space (0 default)
  bool maybe_live_out = false;
  bool preallocated_temp = false;
  int line = 0;  // 1-based line of its header in the text
  std::vector<BufferValue> values;
};

struct BufferAssignment {
  std::vector<BufferAllocation> allocations;  // in the order printed (by index)
  uint64_t total_bytes() const;               // sum of allocation sizes
};

// One value's live range over the flattened schedule: positions [start, end] as XLA prints them.
struct LiveRange {
  std::string value;  // "instruction{index}" (BufferValue::key)
  int64_t start = 0;
  int64_t end = 0;
};

struct LiveRanges {
  int64_t max_time = 0;               // "HloLiveRange (max N)": the schedule's end
  std::vector<std::string> sequence;  // instruction at each position, in order
  std::vector<LiveRange> ranges;
  int64_t xla_peak_time = -1;   // "Live ranges at T (peak)", -1 absent
  uint64_t xla_peak_bytes = 0;  // sum of the sizes XLA lists at its peak (0 absent)
};

// The allocations of a buffer-assignment dump: the text from its "BufferAssignment:" line (the
// module printed before it is skipped) or starting directly with "allocation N: ...". Lines
// after the allocations ("Total bytes used", "Used values", ...) are ignored. Limits: sizes and
// offsets below 2^62, offset + size within the allocation.
BufferAssignment parse_buffer_assignment(std::string_view text);

// A live-range dump ("HloLiveRange (max N):", its InstructionSequence and BufferLiveRange
// lists, the optional peak list). Positions must lie in [0, max] and max may not exceed the
// sequence length + 1.
LiveRanges parse_live_ranges(std::string_view text);

// The part of a buffer-assignment dump that parse_buffer_assignment reads (from the
// "BufferAssignment:" line to the end of the allocations), to keep in a trace; the text itself
// when it has no such line.
std::string_view buffer_assignment_allocations_text(std::string_view text);

}  // namespace fpgaprof::hlo

#include "fpgaprof/hlo/buffer_assignment.hpp"

#include <cctype>
#include <string>

namespace fpgaprof::hlo {
namespace {

constexpr uint64_t kMaxBytes = uint64_t{1} << 62;

[[noreturn]] void fail(int line, const std::string& what, std::string_view found) {
  std::string shown(found.substr(0, 60));
  for (char& ch : shown)
    if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7f) ch = '?';
  throw BufferAssignmentParseError(line, "line " + std::to_string(line) + ": " + what + ", found '" + shown + "'");
}

// Splits text into lines, numbering from 1.
class Lines {
 public:
  explicit Lines(std::string_view text) : text_(text) {}
  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    const std::size_t nl = text_.find('\n', pos_);
    const std::size_t end = nl == std::string_view::npos ? text_.size() : nl;
    line = text_.substr(pos_, end - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = end + 1;
    ++number_;
    return true;
  }
  int number() const { return number_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  int number_ = 0;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// A decimal number at the start of `s` (consumed); false when there is none or it exceeds `limit`.
bool take_number(std::string_view& s, uint64_t limit, uint64_t& out) {
  std::size_t i = 0;
  uint64_t v = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    v = v * 10 + static_cast<uint64_t>(s[i] - '0');
    if (v > limit) return false;
    ++i;
  }
  if (i == 0) return false;
  s.remove_prefix(i);
  out = v;
  return true;
}

bool take(std::string_view& s, std::string_view p) {
  if (!starts_with(s, p)) return false;
  s.remove_prefix(p.size());
  return true;
}

// " value: <18 ynn_fusion.1{0} (phi) @0> (size=262144,offset=0): f32[256,256]{1,0}"
BufferValue parse_value(std::string_view s, int line, const BufferAllocation& a) {
  const std::string_view whole = s;
  s = trim(s);
  if (!take(s, "value: <")) fail(line, "expected 'value: <'", whole);
  BufferValue v;
  uint64_t id = 0;
  if (!take_number(s, kMaxBytes, id) || !take(s, " ")) fail(line, "expected a value id and a space", whole);
  v.id = static_cast<int64_t>(id);
  std::size_t i = 0;
  while (i < s.size() && s[i] != ' ' && s[i] != '{' && s[i] != '>') ++i;
  if (i == 0) fail(line, "expected an instruction name", whole);
  v.instruction = std::string(s.substr(0, i));
  s.remove_prefix(i);
  if (!s.empty() && s.front() == '{') {
    const std::size_t close = s.find('}');
    if (close == std::string_view::npos) fail(line, "expected '}' closing the shape index", whole);
    v.shape_index = std::string(s.substr(0, close + 1));
    s.remove_prefix(close + 1);
  } else {
    v.shape_index = "{}";
  }
  if (take(s, " (phi)")) v.is_phi = true;
  if (take(s, " @")) {
    uint64_t color = 0;
    if (!take_number(s, kMaxBytes, color)) fail(line, "expected a color after '@'", whole);
  }
  if (!take(s, "> (size=")) fail(line, "expected '> (size='", whole);
  if (!take_number(s, kMaxBytes, v.size_bytes)) fail(line, "expected the value's size", whole);
  if (!take(s, ",offset=")) fail(line, "expected ',offset='", whole);
  if (!take_number(s, kMaxBytes, v.offset_bytes)) fail(line, "expected the value's offset", whole);
  if (!take(s, "):")) fail(line, "expected '):'", whole);
  v.shape = std::string(trim(s));
  if (v.offset_bytes + v.size_bytes > a.size_bytes)
    fail(line,
         "value at offset " + std::to_string(v.offset_bytes) + " of size " + std::to_string(v.size_bytes) +
             " lies outside allocation " + std::to_string(a.index) + " (" + std::to_string(a.size_bytes) + " bytes)",
         whole);
  return v;
}

// "allocation 1: size 262144, parameter 0, shape |f32[256,256]| at ShapeIndex {}:"
BufferAllocation parse_header(std::string_view s, int line) {
  const std::string_view whole = s;
  BufferAllocation a;
  a.line = line;
  uint64_t index = 0;
  if (!take(s, "allocation ") || !take_number(s, uint64_t{0xFFFFFFFF}, index))
    fail(line, "expected 'allocation N'", whole);
  a.index = static_cast<uint32_t>(index);
  if (!take(s, ": size ") || !take_number(s, kMaxBytes, a.size_bytes))
    fail(line, "expected ': size N' after the allocation number", whole);
  s = trim(s);
  if (s.empty() || s.back() != ':') fail(line, "expected the allocation header to end with ':'", whole);
  s.remove_suffix(1);
  // The flags, with the shapes between '|' taken out (they may hold commas).
  std::string flags;
  bool in_shape = false;
  for (char ch : s) {
    if (ch == '|') {
      in_shape = !in_shape;
      continue;
    }
    if (!in_shape) flags.push_back(ch);
  }
  if (in_shape) fail(line, "expected '|' closing a shape", whole);
  bool parameter = false, output = false, constant = false, thread_local_ = false;
  std::string_view rest(flags);
  while (!rest.empty()) {
    if (!take(rest, ", ")) fail(line, "expected ', ' before an allocation flag", whole);
    const std::size_t comma = rest.find(", ");
    std::string_view flag = rest.substr(0, comma);
    rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma);
    uint64_t n = 0;
    if (take(flag, "parameter ")) {
      if (!take_number(flag, kMaxBytes, n)) fail(line, "expected a parameter number", whole);
      a.parameter_number = static_cast<int64_t>(n);
      parameter = true;
    } else if (take(flag, "color ")) {
      if (!take_number(flag, kMaxBytes, n)) fail(line, "expected a color number", whole);
      a.color = static_cast<int64_t>(n);
    } else if (starts_with(flag, "shape ") || starts_with(flag, "output shape is")) {
      output = output || starts_with(flag, "output");
    } else if (flag == "constant") {
      constant = true;
    } else if (flag == "thread-local") {
      thread_local_ = true;
    } else if (flag == "maybe-live-out") {
      a.maybe_live_out = true;
    } else if (flag == "preallocated-temp") {
      a.preallocated_temp = true;
    }
    // Other flags (a newer XLA's) are skipped: they do not change the sizes.
  }
  a.kind = parameter                      ? AllocationKind::kParameter
           : (output || a.maybe_live_out) ? AllocationKind::kOutput
           : constant                     ? AllocationKind::kConstant
           : thread_local_                ? AllocationKind::kThreadLocal
                                          : AllocationKind::kTemporary;
  return a;
}

}  // namespace

const char* allocation_kind_name(AllocationKind k) {
  switch (k) {
    case AllocationKind::kTemporary: return "temporary";
    case AllocationKind::kParameter: return "parameter";
    case AllocationKind::kOutput: return "output";
    case AllocationKind::kConstant: return "constant";
    case AllocationKind::kThreadLocal: return "thread-local";
  }
  return "temporary";
}

uint64_t BufferAssignment::total_bytes() const {
  uint64_t sum = 0;
  for (const BufferAllocation& a : allocations) sum += a.size_bytes;
  return sum;
}

std::string_view buffer_assignment_allocations_text(std::string_view text) {
  std::size_t begin = 0;
  if (!starts_with(text, "BufferAssignment:")) {
    const std::size_t at = text.find("\nBufferAssignment:");
    if (at == std::string_view::npos) return text;
    begin = at + 1;
  }
  // The allocations end at the first line that is neither a header nor a value nor blank.
  std::size_t pos = text.find('\n', begin);
  while (pos != std::string_view::npos && pos + 1 < text.size()) {
    const std::string_view rest = text.substr(pos + 1);
    if (!(starts_with(rest, "allocation ") || starts_with(rest, " value: ") || starts_with(rest, "\n") ||
          starts_with(rest, "\r\n")))
      return text.substr(begin, pos + 1 - begin);
    pos = text.find('\n', pos + 1);
  }
  return text.substr(begin);
}

BufferAssignment parse_buffer_assignment(std::string_view text) {
  Lines lines(text);
  std::string_view line;
  bool found = false;
  bool started = false;
  BufferAssignment out;
  while (lines.next(line)) {
    if (!found) {
      if (starts_with(line, "BufferAssignment:")) {
        found = true;
        continue;
      }
      if (!starts_with(line, "allocation ")) continue;
      found = true;
    }
    if (trim(line).empty()) continue;
    if (starts_with(line, "allocation ")) {
      out.allocations.push_back(parse_header(line, lines.number()));
      started = true;
    } else if (starts_with(line, " value: ")) {
      if (!started) fail(lines.number(), "expected an allocation header before a value", line);
      BufferAllocation& a = out.allocations.back();
      a.values.push_back(parse_value(line, lines.number(), a));
    } else {
      break;  // "Total bytes used", "Used values", ...: not needed
    }
  }
  if (!found) fail(lines.number() + 1, "expected a 'BufferAssignment:' line or 'allocation N: ...'", "end of text");
  return out;
}

LiveRanges parse_live_ranges(std::string_view text) {
  Lines lines(text);
  std::string_view line;
  LiveRanges out;
  // First non-blank line: "HloLiveRange (max N):"
  bool header = false;
  while (lines.next(line)) {
    const std::string_view t = trim(line);
    if (t.empty()) continue;
    std::string_view s = t;
    uint64_t max = 0;
    if (!take(s, "HloLiveRange (max ") || !take_number(s, uint64_t{1} << 40, max) || s != "):")
      fail(lines.number(), "expected 'HloLiveRange (max N):'", t);
    out.max_time = static_cast<int64_t>(max);
    header = true;
    break;
  }
  if (!header) fail(lines.number() + 1, "expected 'HloLiveRange (max N):'", "end of text");
  enum class Section { kNone, kSequence, kRanges, kPeak, kOther } section = Section::kNone;
  while (lines.next(line)) {
    const std::string_view t = trim(line);
    if (t.empty()) continue;
    std::string_view s = t;
    if (t == "InstructionSequence:") {
      section = Section::kSequence;
      continue;
    }
    if (t == "BufferLiveRange:") {
      section = Section::kRanges;
      continue;
    }
    if (take(s, "Live ranges at ")) {
      uint64_t at = 0;
      if (!take_number(s, uint64_t{1} << 40, at) || s != " (peak):")
        fail(lines.number(), "expected 'Live ranges at T (peak):'", t);
      out.xla_peak_time = static_cast<int64_t>(at);
      section = Section::kPeak;
      continue;
    }
    if (section == Section::kSequence) {
      uint64_t pos = 0;
      if (!take_number(s, uint64_t{1} << 40, pos) || !take(s, ":") || s.empty())
        fail(lines.number(), "expected 'N:instruction' in the instruction sequence", t);
      if (pos != out.sequence.size())
        fail(lines.number(),
             "expected position " + std::to_string(out.sequence.size()) + " in the instruction sequence", t);
      out.sequence.emplace_back(s);
    } else if (section == Section::kRanges) {
      const std::size_t colon = t.rfind(':');
      if (colon == std::string_view::npos || colon == 0) fail(lines.number(), "expected 'value:start-end'", t);
      LiveRange r;
      r.value = std::string(t.substr(0, colon));
      std::string_view nums = t.substr(colon + 1);
      uint64_t a = 0, b = 0;
      if (!take_number(nums, uint64_t{1} << 40, a) || !take(nums, "-") || !take_number(nums, uint64_t{1} << 40, b) ||
          !nums.empty())
        fail(lines.number(), "expected 'value:start-end'", t);
      if (b < a) fail(lines.number(), "live range ends before it starts", t);
      if (static_cast<int64_t>(b) > out.max_time) fail(lines.number(), "live range ends after the schedule's max", t);
      r.start = static_cast<int64_t>(a);
      r.end = static_cast<int64_t>(b);
      out.ranges.push_back(std::move(r));
    } else if (section == Section::kPeak) {
      // "name{}: 262144 bytes (cumulative: ...)"
      const std::size_t sep = t.find(": ");
      if (sep == std::string_view::npos) {
        section = Section::kOther;
        continue;
      }
      std::string_view n = t.substr(sep + 2);
      uint64_t bytes = 0;
      if (!take_number(n, kMaxBytes, bytes) || !take(n, " bytes")) {
        section = Section::kOther;  // the stack-trace breakdown that follows
        continue;
      }
      out.xla_peak_bytes += bytes;
      if (out.xla_peak_bytes > kMaxBytes) fail(lines.number(), "peak bytes overflow", t);
    } else {
      section = Section::kOther;  // text this parser does not need
    }
  }
  if (static_cast<uint64_t>(out.max_time) > out.sequence.size() + 1)
    fail(lines.number(),
         "the schedule's max (" + std::to_string(out.max_time) + ") exceeds its " +
             std::to_string(out.sequence.size()) + " instructions",
         "HloLiveRange (max " + std::to_string(out.max_time) + ")");
  return out;
}

}  // namespace fpgaprof::hlo

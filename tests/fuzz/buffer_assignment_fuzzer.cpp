// libFuzzer target: the buffer-assignment and live-range parsers and module_memory must never
// crash, hang or leak on any input; the only allowed failure is BufferAssignmentParseError.
// The input is split at the first "\n====\n": buffer assignment before, live ranges after.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "fpgaprof/analysis/module_memory.hpp"
#include "fpgaprof/hlo/buffer_assignment.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1u << 20)) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::size_t cut = text.find("\n====\n");
  const std::string_view ba = text.substr(0, cut);
  const std::string_view lr = cut == std::string_view::npos ? std::string_view() : text.substr(cut + 6);
  try {
    const fpgaprof::hlo::BufferAssignment a = fpgaprof::hlo::parse_buffer_assignment(ba);
    (void)fpgaprof::hlo::buffer_assignment_allocations_text(ba);
    std::optional<fpgaprof::hlo::LiveRanges> r;
    if (!lr.empty()) r = fpgaprof::hlo::parse_live_ranges(lr);
    const fpgaprof::analysis::ModuleMemory m = fpgaprof::analysis::module_memory("m", a, r ? &*r : nullptr, nullptr);
    (void)m.peak_bytes;
  } catch (const fpgaprof::hlo::BufferAssignmentParseError&) {}
  return 0;
}

// libFuzzer target: the HLO parser and cost model must never crash, hang or leak on any input;
// the only allowed failure is HloParseError.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fpgaprof/hlo/cost_model.hpp"
#include "fpgaprof/hlo/hlo_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1u << 20)) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    fpgaprof::hlo::Module m = fpgaprof::hlo::analyze_hlo(text);
    (void)m.total.bytes_accessed();
  } catch (const fpgaprof::hlo::HloParseError&) {}
  return 0;
}

// libFuzzer target: the FPGA card a user describes (a card file or dict, docs/fpga-model.md "Your
// own card"). The bindings turn the JSON into an FpgaTarget (field by field, each a double or a
// whole number) and hand it to validate_fpga_target; this target does the same with any values
// (NaN, infinities, negatives, denormals, 0, huge) and, for every card the validation accepts,
// runs the static estimate of a fixed module (a dot, a gather, a loop of elementwise ops) and the
// per-op model in both scenarios. The only allowed failure is Error(kInvalidArgument) from the
// validation; a crash, a sanitizer report (a float-to-int conversion out of range, say) or an
// escaped exception is a finding.
//
// Input: byte 0 picks the start (a preset, or a memory type's calibration with no figures),
// then records of 9 bytes: a field number and 8 bytes (a double, or a uint32 in the low 4).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "card_fuzz_module.hpp"
#include "fpgaprof/analysis/fpga_model.hpp"
#include "fpgaprof/error.hpp"

using fpgaprof::analysis::Calibrated;
using fpgaprof::analysis::FpgaTarget;

namespace {

// The double fields of a card, then each calibrated field's low, nominal and high.
std::vector<double*> double_fields(FpgaTarget& t) {
  std::vector<double*> f = {&t.memory_channel_bytes_per_s, &t.memory_capacity_bytes, &t.sram_bytes,
                            &t.dsps_per_fma_fp64,          &t.dsps_per_fma_fp32,     &t.dsps_per_fma_fp16,
                            &t.fp64_flops_per_s,           &t.fp32_flops_per_s,      &t.fp16_flops_per_s,
                            &t.link_bytes_per_s,           &t.random_granule_bytes};
  for (Calibrated* c : {&t.clock_hz, &t.dsp_utilization, &t.stream_efficiency, &t.channel_share, &t.random_reads_per_s,
                        &t.rmw_updates_per_s, &t.cross_channel_factor, &t.onchip_share, &t.onchip_lanes,
                        &t.sort_bytes_per_s, &t.link_efficiency, &t.transfer_latency_s, &t.call_latency_s}) {
    f.push_back(&c->low);
    f.push_back(&c->nominal);
    f.push_back(&c->high);
  }
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 4096) return 0;
  const auto& presets = fpgaprof::analysis::fpga_presets();
  static const char* const kMemoryTypes[] = {"hbm2", "hbm2e", "ddr4"};
  FpgaTarget t;
  const std::size_t pick = data[0] % (presets.size() + 3);
  if (pick < presets.size()) {
    t = presets[pick];
  } else {
    t = fpgaprof::analysis::calibration_for(kMemoryTypes[pick - presets.size()]);
  }
  std::vector<double*> doubles = double_fields(t);
  for (std::size_t at = 1; at + 9 <= size; at += 9) {
    const std::size_t field = data[at] % (doubles.size() + 2);
    uint64_t bits = 0;
    std::memcpy(&bits, data + at + 1, 8);
    if (field < doubles.size()) {
      double v = 0;
      std::memcpy(&v, &bits, 8);
      *doubles[field] = v;
    } else if (field == doubles.size()) {
      t.memory_channels = static_cast<uint32_t>(bits);
    } else {
      t.dsp_count = static_cast<uint32_t>(bits);
    }
  }
  try {
    fpgaprof::analysis::validate_fpga_target(t);
  } catch (const fpgaprof::Error& e) {
    if (e.kind() != fpgaprof::ErrorKind::kInvalidArgument) __builtin_trap();
    return 0;
  }
  const fpgaprof::analysis::ModuleEstimate est = fpgaprof::analysis::estimate_module(card_fuzz::module(), t);
  (void)est.total_s.nominal;
  return 0;
}

// A custom kernel's own cost figures, as its author attached them (cost_model.cpp uses them
// before any rule).
#pragma once

#include "fpgaprof/hlo/hlo_module.hpp"

namespace fpgaprof::hlo {

// The figures a custom kernel's author attached to it: Pallas's Triton lowering drops
// pallas_call(cost_estimate=...), but keeps pallas_call(metadata={...}) as a JSON object in the
// custom call (backend_config serialized_metadata, or inside the zlib-compressed `opaque` of
// triton_kernel_call_ffi). The keys are CostEstimate's: "flops", "transcendentals",
// "bytes_accessed" (numbers or strings of numbers; docs/cost-model.md, "Custom kernels").
struct AuthorCost {
  double flops = -1, transcendentals = 0, bytes_accessed = -1;
};

// The author's figures of a Pallas/Triton custom call; false when it has none (or they are not
// finite, non-negative numbers).
bool author_cost(const Instruction& ins, AuthorCost& c);

}  // namespace fpgaprof::hlo

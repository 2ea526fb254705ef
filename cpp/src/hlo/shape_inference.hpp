// Result shapes of instructions printed without one. XLA's parser lets hand-written HLO leave
// the result shape out for the opcodes whose shape follows from the operands and attributes
// (hlo_parser.cc, CanInferShape) and fills it in with ShapeInference
// (xla/service/shape_inference.cc); this is the same inference, reimplemented for fpgaprof's
// Shape. Read from openxla/xla at 9a77a882 (2025-10-31).
#pragma once
#include <string>

#include "fpgaprof/hlo/hlo_module.hpp"

namespace fpgaprof::hlo {

// Fills ins.shape from ins.operand_shapes() (all known) and ins's attributes; called
// computations are looked up in `module` (XLA requires them defined before their callers).
// Returns "" on success, else why the shape cannot be inferred.
std::string infer_shape(Instruction& ins, const Module& module);

// Whether XLA's parser would infer the shape of this opcode (hlo_parser.cc, CanInferShape).
bool can_infer_shape(const std::string& opcode);

}  // namespace fpgaprof::hlo

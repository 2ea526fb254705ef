// The one table of HLO opcodes the cost model and the shape inference read: for each opcode
// XLA prints, what XLA's HloCostAnalysis does with it and whether XLA's parser infers its shape.
// Sources: xla/service/hlo_cost_analysis.cc (HandleElementwiseOp and its transcendental
// opcodes, the free and data-movement handlers), xla/hlo/ir/dfs_hlo_visitor.h (the elementwise
// defaults), xla/hlo/parser/hlo_parser.cc (CanInferShape, ParseOpcode's async names) and
// xla/service/shape_inference.cc, read at openxla/xla 9a77a882 (2025-10-31).
#pragma once
#include <cstdint>
#include <string_view>

namespace fpgaprof::hlo::opcode {

enum Property : uint16_t {
  kElementwise = 1U << 0,     // HandleElementwiseOp: one operation per result element (not copy)
  kTranscendental = 1U << 1,  // counted as transcendentals by HandleElementwiseOp
  kDataMovement = 1U << 2,    // moves or views data without arithmetic
  kFree = 1U << 3,            // no code runs: neither operations nor bytes
  kNativeAsync = 1U << 4,     // its own -start/-update/-done opcode (any other `<op>-start` is an
                              // async wrapper of <op>)
  kUnaryShape = 1U << 5,      // shape inferred as a unary elementwise op's
  kBinaryShape = 1U << 6,     // shape inferred as a binary elementwise op's (with broadcast)
  kOtherShape = 1U << 7,      // shape inferred by a rule of its own
};

// The properties of `op` (0 for an opcode the table does not hold).
uint16_t properties(std::string_view op);
inline bool has(std::string_view op, Property p) { return (properties(op) & p) != 0; }
// Whether XLA's parser infers the shape of `op` when the text leaves it out.
inline bool shape_inferred(std::string_view op) {
  return (properties(op) & (kUnaryShape | kBinaryShape | kOtherShape)) != 0;
}

}  // namespace fpgaprof::hlo::opcode

// Readers of the raw attribute text the parser keeps (Instruction::attributes), shared by the
// shape inference and the cost model. Every reader is total: malformed text gives an empty or
// partial result, never an exception.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fpgaprof/hlo/hlo_module.hpp"

namespace fpgaprof::hlo::attr {

// Raw text of attribute `key`, nullptr when absent.
const std::string* find(const Instruction& ins, std::string_view key);

// Every integer in the text, in order: "{1,0}" -> {1,0}; "{-1, 2}" -> {-1,2}.
std::vector<int64_t> int_list(std::string_view v);
// The attribute as an integer list (empty when absent).
std::vector<int64_t> ints(const Instruction& ins, std::string_view key);
// The attribute as one integer; false when absent or not an integer.
bool integer(const Instruction& ins, std::string_view key, int64_t& out);
// `true`/`false` attribute; `fallback` when absent.
bool boolean(const Instruction& ins, std::string_view key, bool fallback);

// One dimension of a window={size=.. stride=.. pad=lo_hi lhs_dilate=.. rhs_dilate=..}.
struct WindowDim {
  int64_t size = 1, stride = 1, pad_lo = 0, pad_hi = 0, base_dilation = 1, window_dilation = 1;
};
// Empty when the instruction has no window (XLA: a window of rank 0).
std::vector<WindowDim> window(const Instruction& ins);

// dim_labels=b01f_01io->b01f: positions of the batch/feature and spatial dimensions of the
// input, kernel and output. `ok` is false when the labels are missing or malformed.
struct ConvDims {
  bool ok = false;
  int64_t input_batch = -1, input_feature = -1, kernel_input_feature = -1, kernel_output_feature = -1,
          output_batch = -1, output_feature = -1;
  std::vector<int64_t> input_spatial, kernel_spatial, output_spatial;  // by spatial index
  std::size_t rank = 0;                                                // number of dimensions of each operand
};
ConvDims conv_dims(const Instruction& ins);

// lhs_batch_dims, lhs_contracting_dims, rhs_batch_dims, rhs_contracting_dims.
struct DotDims {
  std::vector<int64_t> lhs_batch, lhs_contracting, rhs_batch, rhs_contracting;
};
DotDims dot_dims(const Instruction& ins);

// `padding=lo_hi[_interior]x...` of a pad; false when malformed.
struct PadDim {
  int64_t lo = 0, hi = 0, interior = 0;
};
bool padding(const Instruction& ins, std::vector<PadDim>& out);

}  // namespace fpgaprof::hlo::attr

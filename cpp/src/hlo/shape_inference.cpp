#include "hlo/shape_inference.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include "hlo/hlo_attributes.hpp"
#include "hlo/opcodes.hpp"

namespace fpgaprof::hlo {
namespace {

constexpr int64_t kMaxDim = int64_t{1} << 40;

bool is_complex(PrimitiveType t) { return t == PrimitiveType::kC64 || t == PrimitiveType::kC128; }
bool is_floating(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
    case PrimitiveType::kF32:
    case PrimitiveType::kF64:
    case PrimitiveType::kF8E5M2:
    case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kF8E4M3B11FNUZ:
    case PrimitiveType::kF8E5M2FNUZ:
    case PrimitiveType::kF8E4M3FNUZ:
    case PrimitiveType::kF8E4M3:
    case PrimitiveType::kF8E3M4:
    case PrimitiveType::kF8E8M0FNU:
    case PrimitiveType::kF4E2M1FN: return true;
    default: return false;
  }
}

// ShapeUtil::HigherPrecisionElementType: complex over floating over integral, then the wider.
PrimitiveType higher_precision(PrimitiveType a, PrimitiveType b) {
  if (a == b) return a;
  auto rank = [](PrimitiveType t) { return is_complex(t) ? 3 : is_floating(t) ? 2 : 1; };
  if (rank(a) != rank(b)) return rank(a) > rank(b) ? a : b;
  return primitive_bits(b) > primitive_bits(a) ? b : a;
}

PrimitiveType complex_component(PrimitiveType t) {
  if (t == PrimitiveType::kC64) return PrimitiveType::kF32;
  if (t == PrimitiveType::kC128) return PrimitiveType::kF64;
  return t;
}

bool dynamic(const Shape& s, std::size_t d) { return d < s.dynamic_dims.size() && s.dynamic_dims[d]; }

// An array shape of `type` built dimension by dimension; no layout (XLA's inferred shapes get
// the default one).
struct Builder {
  Shape s;
  explicit Builder(PrimitiveType t) { s.type = t; }
  void add(int64_t d, bool is_dynamic = false) {
    s.dims.push_back(d);
    if (is_dynamic) {
      s.dynamic_dims.resize(s.dims.size(), false);
      s.dynamic_dims.back() = true;
    } else if (!s.dynamic_dims.empty()) {
      s.dynamic_dims.push_back(false);
    }
  }
  void add_from(const Shape& from, std::size_t d) { add(from.dims[d], dynamic(from, d)); }
  Shape done() {
    if (!s.dynamic_dims.empty()) s.dynamic_dims.resize(s.dims.size(), false);
    return std::move(s);
  }
};

Shape with_type(Shape s, PrimitiveType t) {
  s.type = t;
  s.element_size_in_bits = 0;
  return s;
}

Shape tuple_of(std::vector<Shape> elements) {
  Shape s;
  s.type = PrimitiveType::kTuple;
  s.tuple = std::move(elements);
  return s;
}

Shape scalar(PrimitiveType t) {
  Shape s;
  s.type = t;
  return s;
}

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

bool valid_dims(const std::vector<int64_t>& dims, std::size_t rank) {
  return std::all_of(dims.begin(), dims.end(), [&](int64_t d) { return d >= 0 && static_cast<std::size_t>(d) < rank; });
}

const Computation* callee(const Instruction& ins, const Module& m, std::size_t k = 0) {
  if (k >= ins.called_computations().size()) return nullptr;
  return m.find(ins.called_computations()[k]);
}

// InferWindowOutputShape: per dimension of `base`, the number of window positions.
bool window_output(const Shape& base, const std::vector<attr::WindowDim>& w, Builder& out, std::string& why) {
  if (w.size() != base.dims.size()) {
    why = "a window of the operand's rank";
    return false;
  }
  for (std::size_t i = 0; i < w.size(); ++i) {
    const attr::WindowDim& d = w[i];
    if (d.size <= 0 || d.stride <= 0 || d.base_dilation < 1 || d.window_dilation < 1) {
      why = "a window with positive sizes, strides and dilations";
      return false;
    }
    // In double: sizes beyond 2^40 are no real shape and must not overflow.
    const double b = static_cast<double>(base.dims[i]);
    const double dilated_base = b == 0 ? 0 : (b - 1) * static_cast<double>(d.base_dilation) + 1;
    const double padded = static_cast<double>(d.pad_lo) + dilated_base + static_cast<double>(d.pad_hi);
    const double dilated_window = static_cast<double>(d.size - 1) * static_cast<double>(d.window_dilation) + 1;
    const double n = padded <= 0 || dilated_window > padded
                         ? 0
                         : std::floor((padded - dilated_window) / static_cast<double>(d.stride)) + 1;
    if (n > static_cast<double>(kMaxDim)) {
      why = "a window leaving a valid size";
      return false;
    }
    out.add(static_cast<int64_t>(n), dynamic(base, i));
  }
  return true;
}

std::string infer(Instruction& ins, const Module& m) {
  const OperandShapes& ops = ins.operand_shapes();
  const std::string_view op = ins.opcode;
  const std::size_t n = ops.size();
  auto need = [&](std::size_t k) { return n == k; };
  auto array = [&](std::size_t k) { return k < n && ops[k].is_array(); };
  std::string why;

  if (opcode::has(op, opcode::kUnaryShape)) {
    if (!need(1)) return "one operand";
    if (op == "copy") {
      ins.shape = ops[0];
      return {};
    }
    if (!array(0)) return "an array operand";
    const PrimitiveType t = ops[0].type;
    if (op == "is-finite") {
      ins.shape = with_type(ops[0], PrimitiveType::kPred);
    } else if (op == "real" || op == "imag" || (op == "abs" && is_complex(t))) {
      ins.shape = is_complex(t) ? with_type(ops[0], complex_component(t)) : ops[0];
    } else {
      ins.shape = ops[0];
    }
    return {};
  }
  if (opcode::has(op, opcode::kBinaryShape)) {
    if (!need(2)) return "two operands";
    if (!array(0) || !array(1)) return "array operands";
    const Shape& a = ops[0];
    const Shape& b = ops[1];
    Shape r;
    if (a.dims.size() == b.dims.size()) {
      // InferDegenerateDimensionBroadcastShape: a dimension of 1 takes the other's size.
      Builder bl(higher_precision(a.type, b.type));
      for (std::size_t d = 0; d < a.dims.size(); ++d) {
        if (a.dims[d] == 1 && !dynamic(a, d)) {
          bl.add_from(b, d);
        } else if (b.dims[d] == 1 && !dynamic(b, d)) {
          bl.add_from(a, d);
        } else if (a.dims[d] == b.dims[d]) {
          bl.add(a.dims[d], dynamic(a, d) || dynamic(b, d));
        } else if (dynamic(a, d) && a.dims[d] == 0) {
          bl.add_from(b, d);
        } else if (dynamic(b, d) && b.dims[d] == 0) {
          bl.add_from(a, d);
        } else {
          return "operands of compatible shapes";
        }
      }
      r = bl.done();
      r.layout = a.layout;
      r.has_layout = a.has_layout;
    } else if (a.dims.empty() || b.dims.empty()) {
      r = with_type(a.dims.empty() ? b : a, higher_precision(a.type, b.type));
    } else {
      return "operands of the same rank (or a scalar)";
    }
    if (op == "compare") {
      r = with_type(std::move(r), PrimitiveType::kPred);
    } else if (op == "complex") {
      r = with_type(std::move(r), a.type == PrimitiveType::kF64 ? PrimitiveType::kC128 : PrimitiveType::kC64);
    } else if (a.dims.size() == b.dims.size() && r.type == a.type) {
      r.element_size_in_bits = a.element_size_in_bits;
    }
    ins.shape = std::move(r);
    return {};
  }
  if (op == "select") {
    if (!need(3) || !array(0) || !array(1) || !array(2)) return "three array operands";
    const Shape& full = ops[0].dims.empty() ? ops[1] : ops[0];
    ins.shape = with_type(full, higher_precision(ops[1].type, ops[2].type));
    ins.shape.element_size_in_bits = ops[1].element_size_in_bits;
    return {};
  }
  if (op == "clamp") {
    if (!need(3) || !array(1)) return "three operands";
    ins.shape = ops[1];
    return {};
  }
  if (op == "tuple") {
    ins.shape = tuple_of(ops.to_vector());
    return {};
  }
  if (op == "get-tuple-element") {
    int64_t index = -1;
    if (!need(1) || !ops[0].is_tuple()) return "a tuple-shaped operand";
    if (!attr::integer(ins, "index", index) || index < 0 || static_cast<std::size_t>(index) >= ops[0].tuple.size()) {
      return "an index= within the operand's tuple";
    }
    ins.shape = ops[0].tuple[static_cast<std::size_t>(index)];
    return {};
  }
  if (op == "while" || op == "opt-barrier" || op == "domain" || op == "add-dependency") {
    if (n < 1) return "an operand";
    ins.shape = ops[0];
    return {};
  }
  if (op == "after-all") {
    ins.shape = scalar(PrimitiveType::kToken);
    return {};
  }
  if (op == "partition-id" || op == "replica-id") {
    ins.shape = scalar(PrimitiveType::kU32);
    return {};
  }
  if (op == "get-dimension-size") {
    ins.shape = scalar(PrimitiveType::kS32);
    return {};
  }
  if (op == "set-dimension-size") {
    int64_t d = -1;
    if (n != 2 || !array(0)) return "an array operand and a size";
    const std::vector<int64_t> dims = attr::ints(ins, "dimensions");
    if (dims.size() != 1 || dims[0] < 0 || static_cast<std::size_t>(dims[0]) >= ops[0].dims.size()) {
      return "dimensions={d} within the operand's rank";
    }
    d = dims[0];
    ins.shape = ops[0];
    ins.shape.dynamic_dims.resize(ins.shape.dims.size(), false);
    ins.shape.dynamic_dims[static_cast<std::size_t>(d)] = true;
    return {};
  }
  if (op == "broadcast") {
    // The old form XLA's parser infers: dimensions= are the sizes of new major dimensions.
    if (!need(1) || !array(0)) return "an array operand";
    Builder b(ops[0].type);
    for (int64_t d : attr::ints(ins, "dimensions")) {
      if (d < 0 || d > kMaxDim) return "non-negative broadcast sizes";
      b.add(d);
    }
    for (std::size_t d = 0; d < ops[0].dims.size(); ++d) b.add_from(ops[0], d);
    ins.shape = b.done();
    return {};
  }
  if (op == "reverse" || op == "cholesky") {
    if (!need(1) || !array(0)) return "an array operand";
    ins.shape = ops[0];
    return {};
  }
  if (op == "triangular-solve") {
    if (!need(2) || !array(1)) return "two array operands";
    ins.shape = ops[1];
    return {};
  }
  if (op == "transpose") {
    if (!need(1) || !array(0)) return "an array operand";
    const std::vector<int64_t> perm = attr::ints(ins, "dimensions");
    std::vector<int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    if (perm.size() != ops[0].dims.size() || !valid_dims(perm, perm.size()) ||
        std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      return "a permutation in dimensions=";
    }
    Builder b(ops[0].type);
    for (int64_t p : perm) b.add_from(ops[0], static_cast<std::size_t>(p));
    ins.shape = b.done();
    // ShapeUtil::PermuteDimensions keeps the elements where they are: the layout follows the
    // dimensions (the operand's, or XLA's default), so the transpose is a bitcast.
    const std::size_t rank = perm.size();
    std::vector<int64_t> in_layout = ops[0].layout;
    if (in_layout.size() != rank) {
      in_layout.resize(rank);
      for (std::size_t k = 0; k < rank; ++k) in_layout[k] = static_cast<int64_t>(rank - 1 - k);
    }
    std::vector<int64_t> inverse(rank, 0);
    for (std::size_t i = 0; i < rank; ++i) inverse[static_cast<std::size_t>(perm[i])] = static_cast<int64_t>(i);
    ins.shape.layout.resize(rank);
    for (std::size_t k = 0; k < rank; ++k) {
      const int64_t l = in_layout[k];
      if (l < 0 || static_cast<std::size_t>(l) >= rank) return "a valid operand layout";
      ins.shape.layout[k] = inverse[static_cast<std::size_t>(l)];
    }
    ins.shape.has_layout = true;
    ins.shape.element_size_in_bits = ops[0].element_size_in_bits;
    return {};
  }
  if (op == "concatenate") {
    const std::vector<int64_t> dim = attr::ints(ins, "dimensions");
    if (n < 1 || !array(0) || dim.size() != 1 || !valid_dims(dim, ops[0].dims.size())) {
      return "array operands and dimensions={d}";
    }
    Shape r = ops[0];
    const auto d = static_cast<std::size_t>(dim[0]);
    for (std::size_t k = 1; k < n; ++k) {
      if (!array(k) || ops[k].dims.size() != r.dims.size()) return "operands of the same rank";
      if (r.dims[d] > kMaxDim || ops[k].dims[d] > kMaxDim) return "smaller operands";
      r.dims[d] += ops[k].dims[d];
    }
    r.type = ops[0].type;
    for (std::size_t k = 1; k < n; ++k) r.type = higher_precision(r.type, ops[k].type);
    r.layout.clear();  // a new shape: XLA's default layout
    r.has_layout = false;
    r.element_size_in_bits = 0;
    r.memory_space = 0;
    ins.shape = std::move(r);
    return {};
  }
  if (op == "pad") {
    std::vector<attr::PadDim> pads;
    if (!need(2) || !array(0)) return "an array operand and a padding value";
    if (!attr::padding(ins, pads) || pads.size() != ops[0].dims.size()) return "padding= for every dimension";
    Builder b(ops[0].type);
    for (std::size_t d = 0; d < pads.size(); ++d) {
      const double size = static_cast<double>(ops[0].dims[d]);
      const attr::PadDim& p = pads[d];
      if (p.interior < 0) return "non-negative interior padding";
      const double out = static_cast<double>(p.lo) + static_cast<double>(p.hi) + size +
                         std::max(size - 1, 0.0) * static_cast<double>(p.interior);
      if (out < 0 || out > static_cast<double>(kMaxDim)) return "padding that leaves a valid size";
      b.add(static_cast<int64_t>(out), dynamic(ops[0], d));
    }
    ins.shape = b.done();
    return {};
  }
  if (op == "dot" || op == "scaled-dot" || op == "ragged-dot") {
    const std::size_t rhs_index = op == "scaled-dot" ? 2 : 1;
    if (!array(0) || !array(rhs_index)) return "array operands";
    const Shape& lhs = ops[0];
    const Shape& rhs = ops[rhs_index];
    const attr::DotDims dd = attr::dot_dims(ins);
    if (!valid_dims(dd.lhs_batch, lhs.dims.size()) || !valid_dims(dd.lhs_contracting, lhs.dims.size()) ||
        !valid_dims(dd.rhs_batch, rhs.dims.size()) || !valid_dims(dd.rhs_contracting, rhs.dims.size())) {
      return "dimension numbers within the operands' ranks";
    }
    Builder b(higher_precision(lhs.type, rhs.type));
    std::vector<int64_t> rhs_group;
    if (op == "ragged-dot") {
      if (n != 3 || !array(2) || ops[2].dims.empty()) return "lhs, rhs and group sizes";
      const std::vector<int64_t> ragged = attr::ints(ins, "lhs_ragged_dims");
      rhs_group = attr::ints(ins, "rhs_group_dims");
      if (ragged.size() != 1 || !valid_dims(ragged, lhs.dims.size()) || !valid_dims(rhs_group, rhs.dims.size())) {
        return "one lhs_ragged_dims and rhs_group_dims within the operands' ranks";
      }
      // Ragged contracting dimension: the result gains the group dimension in front.
      if (contains(dd.lhs_contracting, ragged[0])) b.add(ops[2].dims.back(), dynamic(ops[2], ops[2].dims.size() - 1));
    }
    for (int64_t d : dd.lhs_batch) b.add_from(lhs, static_cast<std::size_t>(d));
    for (std::size_t d = 0; d < lhs.dims.size(); ++d) {
      const auto di = static_cast<int64_t>(d);
      if (!contains(dd.lhs_contracting, di) && !contains(dd.lhs_batch, di)) b.add_from(lhs, d);
    }
    for (std::size_t d = 0; d < rhs.dims.size(); ++d) {
      const auto di = static_cast<int64_t>(d);
      if (!contains(dd.rhs_contracting, di) && !contains(dd.rhs_batch, di) && !contains(rhs_group, di)) {
        b.add_from(rhs, d);
      }
    }
    ins.shape = b.done();
    return {};
  }
  if (op == "convolution") {
    if (!need(2) || !array(0) || !array(1)) return "two array operands";
    const Shape& lhs = ops[0];
    const Shape& rhs = ops[1];
    const attr::ConvDims cd = attr::conv_dims(ins);
    if (!cd.ok || cd.rank != lhs.dims.size() || cd.rank != rhs.dims.size()) return "dim_labels= of the operands' rank";
    int64_t batch_groups = 1;
    attr::integer(ins, "batch_group_count", batch_groups);
    if (batch_groups < 1) return "a positive batch_group_count";
    std::vector<attr::WindowDim> w = attr::window(ins);
    const std::size_t spatial = cd.input_spatial.size();
    if (w.empty() && spatial == 0) {
      // no spatial dimensions
    } else if (w.size() != spatial) {
      return "a window= for every spatial dimension";
    }
    Shape base;
    base.type = lhs.type;
    for (std::size_t s = 0; s < spatial; ++s) {
      const auto d = static_cast<std::size_t>(cd.input_spatial[s]);
      base.dims.push_back(lhs.dims[d]);
      if (dynamic(lhs, d)) {
        base.dynamic_dims.resize(base.dims.size(), false);
        base.dynamic_dims.back() = true;
      }
    }
    Builder spatial_out(lhs.type);
    if (!window_output(base, w, spatial_out, why)) return why;
    const Shape so = spatial_out.done();
    std::vector<int64_t> dims(cd.rank, 0);
    std::vector<bool> dyn(cd.rank, false);
    dims[static_cast<std::size_t>(cd.output_batch)] = lhs.dims[static_cast<std::size_t>(cd.input_batch)] / batch_groups;
    dyn[static_cast<std::size_t>(cd.output_batch)] = dynamic(lhs, static_cast<std::size_t>(cd.input_batch));
    dims[static_cast<std::size_t>(cd.output_feature)] = rhs.dims[static_cast<std::size_t>(cd.kernel_output_feature)];
    for (std::size_t s = 0; s < spatial; ++s) {
      dims[static_cast<std::size_t>(cd.output_spatial[s])] = so.dims[s];
      dyn[static_cast<std::size_t>(cd.output_spatial[s])] = dynamic(so, s);
    }
    Builder b(higher_precision(lhs.type, rhs.type));
    for (std::size_t d = 0; d < cd.rank; ++d) b.add(dims[d], dyn[d]);
    ins.shape = b.done();
    return {};
  }
  if (op == "fft") {
    if (!need(1) || !array(0)) return "an array operand";
    const std::string* type = attr::find(ins, "fft_type");
    const std::vector<int64_t> len = attr::ints(ins, "fft_length");
    const Shape& in_shape = ops[0];
    if (type == nullptr || len.empty() || len.size() > 3 || in_shape.dims.size() < len.size()) {
      return "fft_type= and an fft_length= no longer than the operand's rank";
    }
    Shape r = in_shape;
    const std::size_t last = r.dims.size() - 1;
    if (*type == "FFT" || *type == "IFFT") {
      // same shape
    } else if (*type == "RFFT") {
      r = with_type(r, in_shape.type == PrimitiveType::kF64 ? PrimitiveType::kC128 : PrimitiveType::kC64);
      if (len.back() != 0) r.dims[last] = len.back() / 2 + 1;
    } else if (*type == "IRFFT") {
      r = with_type(r, complex_component(in_shape.type));
      if (len.back() != 0) r.dims[last] = len.back();
    } else {
      return "fft_type=FFT, IFFT, RFFT or IRFFT";
    }
    ins.shape = std::move(r);
    return {};
  }
  if (op == "gather") {
    if (!need(2) || !array(0) || !array(1)) return "two array operands";
    const Shape& input = ops[0];
    const Shape& indices = ops[1];
    std::vector<int64_t> offset = attr::ints(ins, "offset_dims");
    std::vector<int64_t> collapsed = attr::ints(ins, "collapsed_slice_dims");
    std::vector<int64_t> batching = attr::ints(ins, "operand_batching_dims");
    const std::vector<int64_t> sizes = attr::ints(ins, "slice_sizes");
    int64_t ivd = -1;
    if (!attr::integer(ins, "index_vector_dim", ivd) || ivd < 0 ||
        static_cast<std::size_t>(ivd) > indices.dims.size() || sizes.size() != input.dims.size()) {
      return "index_vector_dim= and slice_sizes= for every operand dimension";
    }
    std::sort(offset.begin(), offset.end());
    std::sort(collapsed.begin(), collapsed.end());
    std::sort(batching.begin(), batching.end());
    std::vector<int64_t> expanded(indices.dims.begin(), indices.dims.end());
    std::vector<bool> expanded_dyn(indices.dims.size());
    for (std::size_t d = 0; d < indices.dims.size(); ++d) expanded_dyn[d] = dynamic(indices, d);
    if (static_cast<std::size_t>(ivd) == indices.dims.size()) {
      expanded.push_back(1);
      expanded_dyn.push_back(false);
    }
    const std::size_t rank = offset.size() + expanded.size() - 1;
    Builder b(input.type);
    std::size_t offset_seen = 0, gather_seen = 0;
    for (std::size_t i = 0; i < rank; ++i) {
      if (std::binary_search(offset.begin(), offset.end(), static_cast<int64_t>(i))) {
        while (std::binary_search(collapsed.begin(), collapsed.end(), static_cast<int64_t>(offset_seen)) ||
               std::binary_search(batching.begin(), batching.end(), static_cast<int64_t>(offset_seen))) {
          ++offset_seen;
        }
        if (offset_seen >= sizes.size()) return "offset_dims= matching slice_sizes=";
        const bool dyn = sizes[offset_seen] == input.dims[offset_seen] && dynamic(input, offset_seen);
        b.add(sizes[offset_seen], dyn);
        ++offset_seen;
      } else {
        if (gather_seen == static_cast<std::size_t>(ivd)) ++gather_seen;
        if (gather_seen >= expanded.size()) return "offset_dims= matching the indices' rank";
        b.add(expanded[gather_seen], expanded_dyn[gather_seen]);
        ++gather_seen;
      }
    }
    ins.shape = b.done();
    return {};
  }
  if (op == "scatter") {
    if (n < 3 || n % 2 == 0) return "operands, indices and updates";
    const std::size_t k = (n - 1) / 2;
    if (k == 1) {
      ins.shape = ops[0];
    } else {
      std::vector<Shape> first(k);
      for (std::size_t j = 0; j < k; ++j) first[j] = ops[j];
      ins.shape = tuple_of(std::move(first));
    }
    return {};
  }
  if (op == "sort") {
    if (n < 1) return "an operand";
    ins.shape = n == 1 ? ops[0] : tuple_of(ops.to_vector());
    return {};
  }
  if (op == "select-and-scatter") {
    if (n != 3 || !array(0)) return "three operands";
    ins.shape = ops[0];
    return {};
  }
  if (op == "reduce" || op == "reduce-window") {
    if (n < 2 || n % 2 != 0) return "inputs and as many init values";
    const std::size_t k = n / 2;
    std::vector<Shape> results;
    const std::vector<int64_t> dims = attr::ints(ins, "dimensions");
    const std::vector<attr::WindowDim> w = op == "reduce-window" ? attr::window(ins) : std::vector<attr::WindowDim>{};
    for (std::size_t i = 0; i < k; ++i) {
      if (!array(i)) return "array inputs";
      const PrimitiveType t = ops[k + i].is_array() ? ops[k + i].type : ops[i].type;
      Builder b(t);
      if (op == "reduce") {
        if (!valid_dims(dims, ops[i].dims.size())) return "dimensions= within the input's rank";
        for (std::size_t d = 0; d < ops[i].dims.size(); ++d) {
          if (!contains(dims, static_cast<int64_t>(d))) b.add_from(ops[i], d);
        }
      } else if (!window_output(ops[i], w, b, why)) {
        return why;
      }
      results.push_back(b.done());
    }
    ins.shape = k == 1 ? std::move(results[0]) : tuple_of(std::move(results));
    return {};
  }
  if (op == "map") {
    const Computation* c = callee(ins, m);
    if (n < 1 || !array(0) || c == nullptr || c->root() == nullptr) return "array operands and to_apply=";
    ins.shape = with_type(ops[0], c->root()->shape.type);
    return {};
  }
  if (op == "call" || op == "conditional") {
    const Computation* c = callee(ins, m);
    if (c == nullptr || c->root() == nullptr) return "a called computation defined before it";
    ins.shape = c->root()->shape;
    return {};
  }
  if (op == "batch-norm-inference") {
    if (n < 1 || !array(0)) return "an array operand";
    ins.shape = ops[0];
    return {};
  }
  if (op == "batch-norm-training" || op == "batch-norm-grad") {
    int64_t f = -1;
    if (n < 1 || !array(0) || !attr::integer(ins, "feature_index", f) || f < 0 ||
        static_cast<std::size_t>(f) >= ops[0].dims.size()) {
      return "an array operand and a feature_index= within its rank";
    }
    Builder b(ops[0].type);
    b.add_from(ops[0], static_cast<std::size_t>(f));
    const Shape feature = b.done();
    ins.shape = tuple_of({ops[0], feature, feature});
    return {};
  }
  if (op == "topk") {
    int64_t k = -1;
    if (!need(1) || !array(0) || ops[0].dims.empty() || !attr::integer(ins, "k", k) || k < 0 ||
        k > ops[0].dims.back()) {
      return "an array operand and k= up to its last dimension";
    }
    Shape values = ops[0];
    values.dims.back() = k;
    if (!values.dynamic_dims.empty()) values.dynamic_dims.back() = false;
    ins.shape = tuple_of({values, with_type(values, PrimitiveType::kS32)});
    return {};
  }
  return "an opcode whose shape XLA infers";
}

}  // namespace

bool can_infer_shape(const std::string& opcode) { return opcode::shape_inferred(opcode); }

std::string infer_shape(Instruction& ins, const Module& module) {
  for (const Shape& s : ins.operand_shapes()) {
    if (s.type == PrimitiveType::kInvalid) return "operands of known shape";
  }
  if (!can_infer_shape(ins.opcode)) return "a shape (XLA infers none for " + ins.opcode + ")";
  std::string why = infer(ins, module);
  if (!why.empty()) ins.shape = Shape{};
  return why;
}

}  // namespace fpgaprof::hlo

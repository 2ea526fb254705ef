#include "fpgaprof/hlo/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "fpgaprof/hlo/hlo_parser.hpp"
#include "hlo/author_cost.hpp"
#include "hlo/hlo_attributes.hpp"
#include "hlo/opcodes.hpp"

// The rules are XLA's HloCostAnalysis (xla/service/hlo_cost_analysis.cc, the base class the CPU
// backend uses) with the CPU shape size (xla/service/cpu/cpu_executable.cc, ShapeSizeBytes),
// reimplemented for fpgaprof's module, read from openxla/xla at 9a77a882 (2025-10-31); where
// fpgaprof deliberately differs, docs/cost-model.md says so and why.

namespace fpgaprof::hlo {
namespace {

// XLA's shape size: an array by its elements (and a dynamic array's size metadata); a tuple
// is its table of 8-byte pointers; a token nothing; an opaque a pointer.
double xla_size(const Shape& s) {
  if (s.is_tuple()) return 8.0 * static_cast<double>(s.tuple.size());
  return static_cast<double>(s.byte_size());
}

// Bytes of every array leaf (what a tuple-shaped value really occupies).
double leaf_bytes(const Shape& s) { return static_cast<double>(s.byte_size()); }

double elements(const Shape& s) { return static_cast<double>(s.is_tuple() ? 0 : s.element_count()); }

// ShapeUtil::ElementsInRecursive: the elements of every array leaf.
double elements_recursive(const Shape& s) {
  if (!s.is_tuple()) return s.is_array() ? static_cast<double>(s.element_count()) : 0.0;
  double n = 0;
  for (const Shape& e : s.tuple) n += elements_recursive(e);
  return n;
}

// The array itself, or a tuple's first element (XLA's `shape().IsArray() ? shape() :
// shape().tuple_shapes(0)`).
const Shape& array_or_first(const Shape& s) { return s.is_tuple() && !s.tuple.empty() ? s.tuple.front() : s; }

const Shape& first_array(const Shape& s) {
  const Shape* p = &s;
  while (p->is_tuple() && !p->tuple.empty()) p = &p->tuple.front();
  return *p;
}

// Sizes of every array subshape (ShapeUtil::ForEachSubshape over arrays).
double array_subshape_bytes(const Shape& s) {
  if (!s.is_tuple()) return s.is_array() ? xla_size(s) : 0.0;
  double n = 0;
  for (const Shape& e : s.tuple) n += array_subshape_bytes(e);
  return n;
}
double array_subshape_elements(const Shape& s) { return elements_recursive(s); }

// Sizes of every leaf (arrays, tokens, opaques): ShapeUtil::ForEachLeafShape.
double leaf_sizes(const Shape& s) {
  if (!s.is_tuple()) return xla_size(s);
  double n = 0;
  for (const Shape& e : s.tuple) n += leaf_sizes(e);
  return n;
}

const std::string* attr(const Instruction& ins, const char* key) { return attr::find(ins, key); }

int64_t dim(const Shape& s, int64_t d) {
  if (d < 0 || static_cast<std::size_t>(d) >= s.dims.size()) return 1;
  return s.dims[static_cast<std::size_t>(d)];
}

int64_t log2_floor(uint64_t v) {
  int64_t r = -1;
  while (v != 0) {
    v >>= 1;
    ++r;
  }
  return r < 0 ? 0 : r;
}
int64_t log2_ceil(uint64_t v) {
  if (v <= 1) return 0;
  int64_t f = log2_floor(v);
  return (uint64_t{1} << f) == v ? f : f + 1;
}

// The opcode classes (hlo/opcodes.hpp, the table shape inference reads too).
bool is_transcendental_op(std::string_view op) { return opcode::has(op, opcode::kTranscendental); }
// Opcodes XLA's visitor sends to HandleElementwiseOp (one operation per result element):
// DfsHloVisitor's elementwise defaults, less copy (HloCostAnalysis::HandleCopy counts none),
// plus select, clamp, compare, convert and reduce-precision.
bool is_elementwise_op(std::string_view op) { return opcode::has(op, opcode::kElementwise); }
// Ops that move or view data without arithmetic.
bool is_data_movement_op(std::string_view op) { return opcode::has(op, opcode::kDataMovement); }
// Ops XLA counts neither operations nor bytes for: no code runs.
bool is_free_op(std::string_view op) { return opcode::has(op, opcode::kFree); }
// Opcodes whose names end in -start/-update/-done; any other `<op>-start` is XLA's async
// wrapper of <op> (hlo_parser.cc, ParseOpcode).
bool is_native_async_name(std::string_view op) { return opcode::has(op, opcode::kNativeAsync); }
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_cublas_gemm(const std::string& target) {
  return target == "__cublas$gemm" || target == "__cublas$lt$matmul" || target == "__cublas$lt$matmul$f8";
}

// XLA:GPU's convolutions as cuDNN calls (xla/service/gpu/cublas_cudnn.cc,
// IsCustomCallToDnnConvolution): a tuple (convolution result, u8[] scratch) with the
// convolution's window=, dim_labels= and group counts.
bool is_cudnn_convolution(const std::string& target) {
  return target == "__cudnn$convForward" || target == "__cudnn$convForwardGraph" ||
         target == "__cudnn$convBackwardInput" || target == "__cudnn$convBackwardFilter" ||
         target == "__cudnn$convBiasActivationForward";
}

class CostModel {
 public:
  explicit CostModel(Module& m) : m_(m), path_(m.computations.size()) {
    comp_done_.assign(m.computations.size(), 0);
    comp_cost_.resize(m.computations.size());
  }

  void run() {
    // Every computation gets per-instruction costs, reached or not, so that all are filled;
    // callees first, so that costing one finds its callees done (fpgaprof takes computations
    // that call ones defined later: in text order a chain of them recursed as deep as it was
    // long, and 20,000 overflowed the stack).
    for (std::size_t c : callee_first_order()) computation_cost(c);
    m_.total = Cost{};
    m_.unknown_cost_instructions = 0;
    if (const Computation* e = m_.entry()) {
      m_.total = comp_cost_[m_.entry_index];
      m_.total.output_bytes = e->root() ? xla_size(e->root()->shape) : 0;
    }
    for (const Computation& c : m_.computations) {
      for (const Instruction& i : c.instructions) {
        if (i.cost.unknown && (i.opcode == "custom-call" || i.opcode == "custom-call-start")) {
          ++m_.unknown_cost_instructions;
        }
      }
    }
  }

 private:
  // Sum of the instructions' costs of one computation (XLA's sub-computation properties).
  const Cost& computation_cost(std::size_t idx) {
    if (comp_done_[idx] != 0) return comp_cost_[idx];  // done
    // A recursion (XLA's HLO has none): its cost so far (none), so that the sum stays finite.
    if (!path_.enter(idx)) return comp_cost_[idx];
    Computation& c = m_.computations[idx];
    Cost sum;
    for (Instruction& ins : c.instructions) {
      cost_instruction(ins, c);
      sum.flops += ins.cost.flops;
      sum.transcendentals += ins.cost.transcendentals;
      sum.bytes_read += ins.cost.bytes_read;
      sum.bytes_written += ins.cost.bytes_written;
      sum.working_set_bytes = std::max(sum.working_set_bytes, ins.cost.working_set_bytes);
      sum.per_iteration = sum.per_iteration || ins.cost.per_iteration;
      sum.unknown = sum.unknown || ins.cost.unknown;
    }
    comp_cost_[idx] = sum;
    comp_done_[idx] = 1;
    path_.leave(idx);
    return comp_cost_[idx];
  }

  // The computations in an order where each comes after every computation it calls (an
  // iterative depth-first walk; a call cycle, which XLA's HLO has none of, is cut where the
  // walk meets it again, and computation_cost bounds it).
  std::vector<std::size_t> callee_first_order() const {
    const std::size_t n = m_.computations.size();
    std::vector<uint8_t> state(n, 0);  // 0 unseen, 1 on the walk, 2 placed
    std::vector<std::size_t> order;
    order.reserve(n);
    auto callees = [this](std::size_t c) {
      std::vector<std::size_t> out;
      for (const Instruction& ins : m_.computations[c].instructions) {
        for (const std::string& name : ins.called_computations()) {
          if (const Computation* k = m_.find(name)) out.push_back(callee_index(k));
        }
      }
      return out;
    };
    std::vector<std::pair<std::size_t, std::vector<std::size_t>>> walk;
    for (std::size_t root = 0; root < n; ++root) {
      if (state[root] != 0) continue;
      state[root] = 1;
      walk.emplace_back(root, callees(root));
      while (!walk.empty()) {
        auto& [c, next] = walk.back();
        if (next.empty()) {
          state[c] = 2;
          order.push_back(c);
          walk.pop_back();
          continue;
        }
        const std::size_t k = next.back();
        next.pop_back();
        if (state[k] == 0) {
          state[k] = 1;
          walk.emplace_back(k, callees(k));  // invalidates c and next: the loop re-reads back()
        }
      }
    }
    return order;
  }

  const Computation* callee(const Instruction& ins, std::size_t k = 0) const {
    if (k >= ins.called_computations().size()) return nullptr;
    return m_.find(ins.called_computations()[k]);
  }
  std::size_t callee_index(const Computation* c) const { return static_cast<std::size_t>(c - m_.computations.data()); }
  const Computation* named_callee(const Instruction& ins, const char* key) const {
    const std::string* v = attr(ins, key);
    if (v == nullptr) return nullptr;
    std::string_view n = *v;
    if (!n.empty() && n.front() == '%') n.remove_prefix(1);
    return m_.find(std::string(n));
  }
  // Flops/transcendentals of one application of a scalar computation (to_apply, ...).
  Cost sub(const Computation* c) { return c ? computation_cost(callee_index(c)) : Cost{}; }

  // HloCostAnalysis::Preprocess: each operand at XLA's shape size (a tuple operand: its
  // pointer table), every leaf of the result (a tuple result: its arrays; jaxlib 0.10.2's XLA,
  // measured: its sort, copy-start, send and opt-barrier results count their arrays).
  static void set_default_bytes(Instruction& ins) {
    double r = 0;
    for (const Shape& s : ins.operand_shapes()) r += xla_size(s);
    ins.cost.bytes_read = r;
    ins.cost.bytes_written = leaf_sizes(ins.shape);
  }

  // The cost of the called computation, its bytes included (call, while, async-start,
  // fusion's arithmetic).
  static void take_all(Cost& cost, const Cost& b) {
    cost.flops = b.flops;
    cost.transcendentals = b.transcendentals;
    cost.bytes_read = b.bytes_read;
    cost.bytes_written = b.bytes_written;
    cost.working_set_bytes = std::max(cost.working_set_bytes, b.working_set_bytes);
    cost.unknown = b.unknown;
    cost.per_iteration = b.per_iteration;
  }

  void cost_instruction(Instruction& ins, const Computation& comp) {
    Cost& cost = ins.cost;
    cost = Cost{};
    const std::string_view op = ins.opcode;  // compared by length first
    cost.output_bytes = leaf_bytes(ins.shape);
    cost.working_set_bytes = cost.output_bytes;
    set_default_bytes(ins);
    ins.pattern = AccessPattern::kUnknown;

    if (is_free_op(op)) {
      cost.bytes_read = cost.bytes_written = 0;
      ins.pattern = AccessPattern::kDataMovement;
      if (op == "parameter" || op == "constant" || op == "get-tuple-element") cost.working_set_bytes = 0;
      return;
    }
    if (is_elementwise_op(op)) {
      (is_transcendental_op(op) ? cost.transcendentals : cost.flops) = elements(ins.shape);
      ins.pattern = op == "bitcast-convert" ? AccessPattern::kDataMovement : AccessPattern::kElementwise;
      return;
    }
    if (op == "transpose" && transpose_is_bitcast(ins)) {
      cost.bytes_read = cost.bytes_written = 0;
      ins.pattern = AccessPattern::kDataMovement;
      return;
    }
    if (op == "slice") {
      cost.bytes_read = cost.bytes_written = xla_size(ins.shape);
      ins.pattern = AccessPattern::kDataMovement;
      return;
    }
    if (op == "dynamic-slice") {
      cost.bytes_read = xla_size(ins.shape) + (ins.operand_shapes().size() > 1 ? xla_size(ins.operand_shapes()[1]) : 0);
      cost.bytes_written = xla_size(ins.shape);
      ins.pattern = AccessPattern::kDataMovement;
      return;
    }
    if (op == "dynamic-update-slice") {
      const double upd = ins.operand_shapes().size() > 1 ? xla_size(ins.operand_shapes()[1]) : 0;
      cost.bytes_read = upd + (ins.operand_shapes().size() > 2 ? xla_size(ins.operand_shapes()[2]) : 0);
      cost.bytes_written = upd;
      cost.working_set_bytes = upd;
      ins.pattern = AccessPattern::kDataMovement;
      return;
    }
    if (op == "tuple") {
      cost.bytes_read = 0;  // gathers pointers: its index table is written
      cost.bytes_written = xla_size(ins.shape);
      ins.pattern = AccessPattern::kDataMovement;
      cost.working_set_bytes = 0;
      return;
    }
    if (is_data_movement_op(op)) {
      ins.pattern = AccessPattern::kDataMovement;
      return;
    }
    if (op == "dot" || op == "scaled-dot") {
      cost.flops = dot_flops(ins, ins.shape);
      ins.pattern = AccessPattern::kDot;
      return;
    }
    if (op == "ragged-dot") {
      // HandleRaggedDot: the result with dimension i removed for each i < the number of rhs
      // group dimensions (XLA deletes by position, not by the group dimension's number).
      Shape result = ins.shape;
      const std::size_t groups = attr::ints(ins, "rhs_group_dims").size();
      for (std::size_t i = 0; i < groups && i < result.dims.size(); ++i) {
        result.dims.erase(result.dims.begin() + static_cast<std::ptrdiff_t>(i));
      }
      cost.flops = dot_flops(ins, result);
      ins.pattern = AccessPattern::kDot;
      return;
    }
    if (op == "convolution") {
      cost.flops = convolution_flops(ins);
      ins.pattern = AccessPattern::kConvolution;
      return;
    }
    if (op == "fft") {
      double log_factors = 1;
      for (int64_t d : attr::ints(ins, "fft_length")) {
        log_factors *= static_cast<double>(log2_floor(static_cast<uint64_t>(std::max<int64_t>(d, 1))));
      }
      const double n = ins.operand_shapes().empty() ? 0 : elements(array_or_first(ins.operand_shapes()[0]));
      cost.flops = 2.0 * 4.0 * log_factors * n;
      ins.pattern = AccessPattern::kFft;
      return;
    }
    if (op == "reduce") {
      const double in = ins.operand_shapes().empty() ? 0 : elements(ins.operand_shapes()[0]);
      const double out = elements(array_or_first(ins.shape));
      const Cost f = sub(callee(ins));
      cost.flops = f.flops * (in - out);
      cost.transcendentals = f.transcendentals * (in - out);
      ins.pattern = AccessPattern::kReduction;
      return;
    }
    if (op == "reduce-window") {
      reduce_window(ins);
      ins.pattern = AccessPattern::kStencil;
      return;
    }
    if (op == "select-and-scatter") {
      const double src = ins.operand_shapes().size() > 1 ? elements(ins.operand_shapes()[1]) : 0;
      double win = 1;
      for (const attr::WindowDim& d : attr::window(ins)) win *= static_cast<double>(d.size);
      const Cost sel = sub(named_callee(ins, "select") ? named_callee(ins, "select") : callee(ins, 0));
      const Cost sc = sub(named_callee(ins, "scatter") ? named_callee(ins, "scatter") : callee(ins, 1));
      cost.flops = sel.flops * src * (win - 1) + sc.flops * src;
      cost.transcendentals = sel.transcendentals * src * (win - 1) + sc.transcendentals * src;
      ins.pattern = AccessPattern::kStencil;
      return;
    }
    if (op == "map") {
      const Cost f = sub(callee(ins));
      cost.flops = f.flops * elements(ins.shape);
      cost.transcendentals = f.transcendentals * elements(ins.shape);
      ins.pattern = AccessPattern::kElementwise;
      return;
    }
    if (op == "gather") {
      gather(ins);
      return;
    }
    if (op == "scatter") {
      scatter(ins);
      return;
    }
    if (op == "sort") {
      const double n = ins.operand_shapes().empty() ? 0 : elements(ins.operand_shapes()[0]);
      cost.flops = n * static_cast<double>(log2_ceil(static_cast<uint64_t>(n)));
      ins.pattern = AccessPattern::kSort;
      return;
    }
    if (op == "rng") {
      cost.transcendentals = elements(ins.shape);
      ins.pattern = AccessPattern::kElementwise;
      return;
    }
    if (op == "rng-bit-generator") {
      cost.transcendentals = elements_recursive(ins.shape);
      ins.pattern = AccessPattern::kElementwise;
      return;
    }
    if (op == "infeed") {
      // HandleInfeed: every leaf of the result written, the token operand not read.
      cost.bytes_read = 0;
      cost.bytes_written = leaf_sizes(ins.shape);
      ins.pattern = AccessPattern::kDataMovement;
      return;
    }
    if (op == "outfeed") {
      // HandleOutfeed: every leaf of the operands read, nothing written.
      double r = 0;
      for (const Shape& s : ins.operand_shapes()) r += leaf_sizes(s);
      cost.bytes_read = r;
      cost.bytes_written = 0;
      ins.pattern = AccessPattern::kDataMovement;
      return;
    }
    if (op == "fusion") {
      fusion(ins, comp);
      return;
    }
    if (op == "while") {
      const Cost b = sub(named_callee(ins, "body"));
      const Cost c = sub(named_callee(ins, "condition"));
      cost.flops = b.flops + c.flops;
      cost.transcendentals = b.transcendentals + c.transcendentals;
      cost.bytes_read = b.bytes_read + c.bytes_read;
      cost.bytes_written = b.bytes_written + c.bytes_written;
      cost.working_set_bytes = std::max({cost.working_set_bytes, b.working_set_bytes, c.working_set_bytes});
      cost.unknown = b.unknown || c.unknown;
      cost.per_iteration = true;
      ins.pattern = AccessPattern::kControl;
      return;
    }
    if (op == "conditional") {
      // The largest of each property over the branches (bytes: the branch accessing most).
      Cost mx;
      double best_bytes = -1;
      for (std::size_t k = 0; k < ins.called_computations().size(); ++k) {
        const Cost b = sub(callee(ins, k));
        mx.flops = std::max(mx.flops, b.flops);
        mx.transcendentals = std::max(mx.transcendentals, b.transcendentals);
        if (b.bytes_accessed() > best_bytes) {
          best_bytes = b.bytes_accessed();
          mx.bytes_read = b.bytes_read;
          mx.bytes_written = b.bytes_written;
        }
        mx.working_set_bytes = std::max(mx.working_set_bytes, b.working_set_bytes);
        mx.unknown = mx.unknown || b.unknown;
      }
      take_all(cost, mx);
      cost.per_iteration = true;
      ins.pattern = AccessPattern::kControl;
      return;
    }
    if (op == "call" || (op == "async-start" && !ins.called_computations().empty())) {
      take_all(cost, sub(callee(ins)));
      ins.pattern = AccessPattern::kControl;
      return;
    }
    if (ends_with(op, "-start") && !is_native_async_name(op)) {
      async_wrapped_start(ins, comp);
      return;
    }
    if (op == "async-update" || op == "async-done" ||
        ((ends_with(op, "-update") || ends_with(op, "-done")) && !is_native_async_name(op))) {
      ins.pattern = AccessPattern::kControl;  // default bytes: the result and the async context
      return;
    }
    if (op == "custom-call") {
      custom_call(ins, comp);
      return;
    }
    if (op == "all-reduce" || op == "all-reduce-start") {
      // XLA assumes 2 replicas: one addition per result element; written: every array of the
      // result.
      cost.flops = array_subshape_elements(ins.shape);
      cost.bytes_written = array_subshape_bytes(ins.shape);
      ins.pattern = AccessPattern::kReduction;
      return;
    }
    if (op == "triangular-solve" && ins.operand_shapes().size() == 2) {
      const Shape& a = ins.operand_shapes()[0];
      cost.bytes_read = xla_size(a) / 2 + xla_size(ins.operand_shapes()[1]);
      cost.flops = 2.0 * static_cast<double>(a.dims.empty() ? 1 : a.dims.back()) * elements(ins.operand_shapes()[1]);
      ins.pattern = AccessPattern::kDot;
      return;
    }
    if (op == "cholesky" && !ins.operand_shapes().empty()) {
      const Shape& a = ins.operand_shapes()[0];
      cost.bytes_read = cost.bytes_written = xla_size(a) / 2;
      cost.flops = std::floor(static_cast<double>(a.dims.empty() ? 1 : a.dims.back()) * elements(a) / 3);
      ins.pattern = AccessPattern::kDot;
      return;
    }
    // Remaining ops (collectives, send/recv, iota, reshape, ...): default bytes, no arithmetic.
    ins.pattern = AccessPattern::kDataMovement;
  }

  // `<op>-start` printed for an async-start wrapping <op> (XLA's async wrapper computation:
  // the op on parameters): the wrapped op's cost, its operands the start's, its result the
  // second element of the start's tuple.
  void async_wrapped_start(Instruction& ins, const Computation& comp) {
    Instruction wrapped;
    wrapped.opcode = ins.opcode.substr(0, ins.opcode.size() - 6);
    wrapped.name = ins.name;
    wrapped.operands = ins.operands;
    wrapped.detail().attributes = ins.attributes();
    wrapped.detail().called_computations = ins.called_computations();
    wrapped.detail().custom_call_target = ins.custom_call_target();
    wrapped.detail().backend_config = ins.backend_config();
    wrapped.detail().fusion_kind = ins.fusion_kind();
    wrapped.shape = ins.shape.is_tuple() && ins.shape.tuple.size() >= 2 ? ins.shape.tuple[1] : ins.shape;
    if (wrapped.opcode == "fusion" || ends_with(wrapped.opcode, "-start")) {
      // A fusion's parameter reads look at its users in the computation: none here.
      wrapped.operands.detach();
    }
    cost_instruction(wrapped, comp);
    const double output_bytes = ins.cost.output_bytes;
    ins.cost = wrapped.cost;
    ins.cost.output_bytes = output_bytes;
    ins.pattern = wrapped.pattern;
  }

  // TransposeIsBitcast on the printed layouts, XLA's default (major-to-minor) where none is
  // printed: the transpose keeps every element where it is.
  static bool transpose_is_bitcast(const Instruction& ins) {
    if (ins.operand_shapes().empty()) return false;
    const Shape& in = ins.operand_shapes()[0];
    const Shape& out = ins.shape;
    if (!in.is_array() || !out.is_array() || in.type != out.type || in.dims.size() != out.dims.size()) return false;
    const std::vector<int64_t> perm = attr::ints(ins, "dimensions");
    const std::size_t rank = out.dims.size();
    if (perm.size() != rank) return false;
    auto layout = [rank](const Shape& s) -> std::vector<int64_t> {
      if (s.layout.size() == rank) return s.layout;
      std::vector<int64_t> l(rank);
      for (std::size_t k = 0; k < rank; ++k) l[k] = static_cast<int64_t>(rank - 1 - k);
      return l;
    };
    const std::vector<int64_t> in_l = layout(in), out_l = layout(out);
    for (std::size_t k = 0; k < rank; ++k) {
      const int64_t o = out_l[k];
      if (o < 0 || static_cast<std::size_t>(o) >= perm.size()) return false;
      if (perm[static_cast<std::size_t>(o)] != in_l[k]) return false;
    }
    return true;
  }

  // GetDotFlops: 2 x result elements x the product of the lhs contracting dimensions.
  static double dot_flops(const Instruction& ins, const Shape& result) {
    if (ins.operand_shapes().empty()) return 0;
    const Shape& lhs = ins.operand_shapes()[0];
    double width = 1;
    for (int64_t d : attr::ints(ins, "lhs_contracting_dims")) width *= static_cast<double>(dim(lhs, d));
    return 2.0 * elements(first_array(result)) * width;
  }

  void reduce_window(Instruction& ins) {
    Cost& cost = ins.cost;
    const std::vector<attr::WindowDim> w = attr::window(ins);
    double win = 1;
    for (const attr::WindowDim& d : w) win *= static_cast<double>(d.size);
    const Shape& out = array_or_first(ins.shape);
    const double out_n = elements(out);
    double count = (win - 1) * out_n;
    // A window spanning a whole padded dimension is a reduce + broadcast (prefix sums):
    // XLA counts it as one pass over the dimension.
    int reducing = 0, padded = 0;
    for (const attr::WindowDim& d : w) {
      reducing += d.size != 1;
      padded += (d.pad_lo != 0 || d.pad_hi != 0);
    }
    if (reducing == 1 && padded == 1 && !ins.shape.is_tuple()) {
      for (std::size_t k = 0; k < w.size(); ++k) {
        const attr::WindowDim& d = w[k];
        if (d.size != 1 && d.pad_lo != 0 && d.pad_hi != 0 && d.pad_lo == d.pad_hi && d.size == 2 * d.pad_lo + 1) {
          const int64_t span = dim(out, static_cast<int64_t>(k));
          if (d.pad_lo == span - 1 && span > 0) {
            count = std::floor(out_n / static_cast<double>(span)) + static_cast<double>(span - 1);
          }
          break;
        }
      }
    }
    const Cost f = sub(callee(ins));
    cost.flops = f.flops * count;
    cost.transcendentals = f.transcendentals * count;
  }

  // The (tap, output) pairs of one strided or base-dilated window dimension that land on a
  // real input element, counted without enumerating them: for tap kk the output positions o
  // whose o * stride - pad_lo + kk * window_dilation is a multiple of base_dilation recur with
  // period base_dilation / gcd(stride, base_dilation), and those that land inside the input
  // form a range of o. O(kl x period); the plain enumeration below is O(kl x ol). Falls back
  // to every pair (an upper bound) only when kl x period is itself beyond 1e8.
  static int64_t strided_valid_positions(int64_t kl, int64_t ol, int64_t il, const attr::WindowDim& d) {
    const int64_t s = d.stride, bd = d.base_dilation;
    const int64_t period = bd / std::gcd(s, bd);
    if (static_cast<double>(kl) * static_cast<double>(period) > 1e8) return ol * kl;
    auto floor_div = [](int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
    int64_t valid = 0;
    for (int64_t kk = 0; kk < kl; ++kk) {
      const int64_t c = kk * d.window_dilation - d.pad_lo;  // undilated position of output 0
      // 0 <= o * s + c <= (il - 1) * bd, and 0 <= o < ol
      const int64_t lo = std::max<int64_t>(0, -floor_div(c, s));
      const int64_t hi = std::min<int64_t>(ol - 1, floor_div((il - 1) * bd - c, s));
      if (lo > hi) continue;
      for (int64_t r = 0; r < period; ++r) {
        const int64_t m = ((r % bd) * (s % bd) + c % bd) % bd;
        if (m != 0) continue;  // o = r + j * period does not land on an input element
        const int64_t first = lo + ((r - lo) % period + period) % period;
        if (first <= hi) valid += (hi - first) / period + 1;
      }
    }
    return valid;
  }

  // Number of multiply-adds of a convolution: per spatial dimension, the (kernel, output)
  // position pairs that land on a real (not padding, not dilation hole) input element.
  // Operand 0 is the input, operand 1 the kernel, the result (its first array for a cuDNN
  // call's tuple) the output, each read through its part of dim_labels: XLA's
  // HloCostAnalysis::GetConvolutionFlops, which the GPU cost analysis applies unchanged to the
  // backward-input and backward-filter calls too.
  static double convolution_flops(const Instruction& ins) {
    if (ins.operand_shapes().size() < 2) return 0;
    const Shape& lhs = ins.operand_shapes()[0];
    const Shape& rhs = ins.operand_shapes()[1];
    const Shape& out = first_array(ins.shape);
    const attr::ConvDims cd = attr::conv_dims(ins);
    if (!cd.ok) return 0;
    int64_t feature_groups = 1, batch_groups = 1;
    attr::integer(ins, "feature_group_count", feature_groups);
    attr::integer(ins, "batch_group_count", batch_groups);
    if (feature_groups <= 0) feature_groups = 1;
    if (batch_groups <= 0) batch_groups = 1;
    const int64_t in_feature = dim(lhs, cd.input_feature);
    const int64_t batch = dim(lhs, cd.input_batch);
    const int64_t out_feature = dim(out, cd.output_feature);
    const std::vector<attr::WindowDim> w = attr::window(ins);
    double positions = 1;
    for (std::size_t k = 0; k < w.size() && k < cd.input_spatial.size(); ++k) {
      const attr::WindowDim& d = w[k];
      const int64_t kl = dim(rhs, cd.kernel_spatial[k]), ol = dim(out, cd.output_spatial[k]),
                    il = dim(lhs, cd.input_spatial[k]);
      int64_t valid = 0;
      constexpr int64_t kBig = int64_t{1} << 31;  // beyond any real convolution: no overflow below
      const bool huge = kl > kBig || ol > kBig || il > kBig || d.pad_lo > kBig || d.pad_lo < -kBig || d.stride > kBig ||
                        d.stride < 1 || d.base_dilation > kBig || d.base_dilation < 1 || d.window_dilation > kBig ||
                        d.window_dilation < 1;
      // past 2^27 taps (a hostile module: no real convolution has them) counting would cost
      // seconds a dimension: every pair, an upper bound
      if (huge || kl > (int64_t{1} << 27)) {
        positions *= static_cast<double>(ol) * static_cast<double>(kl);  // too large to count; upper bound
        continue;
      }
      if (d.stride == 1 && d.base_dilation == 1) {
        // Unit stride, no base dilation: kernel tap kk meets input positions o - pad_lo +
        // kk * window_dilation, o in [0, ol): those in [0, il) count.
        for (int64_t kk = 0; kk < kl; ++kk) {
          const int64_t shift = d.pad_lo - kk * d.window_dilation;
          valid += std::max<int64_t>(std::min(il + shift, ol) - std::max<int64_t>(shift, 0), 0);
        }
      } else if (static_cast<double>(kl) * static_cast<double>(ol) > 1e8) {
        valid = strided_valid_positions(kl, ol, il, d);
      } else {
        for (int64_t kk = 0; kk < kl; ++kk) {
          for (int64_t oo = 0; oo < ol; ++oo) {
            const int64_t undilated = oo * d.stride - d.pad_lo + kk * d.window_dilation;
            const int64_t base = d.base_dilation > 1 ? undilated / d.base_dilation : undilated;
            if (d.base_dilation > 1 && base * d.base_dilation != undilated) continue;
            if (base < 0 || base >= il) continue;
            ++valid;
          }
        }
      }
      positions *= static_cast<double>(valid);
    }
    const double fma = static_cast<double>(in_feature / feature_groups) * static_cast<double>(out_feature) *
                       static_cast<double>(batch / batch_groups) * positions;
    return 2.0 * fma;
  }

  void gather(Instruction& ins) {
    Cost& cost = ins.cost;
    const double out = xla_size(ins.shape);
    cost.bytes_read = out + (ins.operand_shapes().size() > 1 ? xla_size(ins.operand_shapes()[1]) : 0);
    cost.bytes_written = out;
    ins.pattern = AccessPattern::kGatherScatter;
  }

  void scatter(Instruction& ins) {
    Cost& cost = ins.cost;
    // operands: N inputs, indices, N updates
    const std::size_t total = ins.operand_shapes().size();
    const std::size_t n = total >= 3 ? (total - 1) / 2 : 0;
    double upd = 0, upd_elems = 0;
    for (std::size_t k = 0; k < n; ++k) upd += xla_size(ins.operand_shapes()[n + 1 + k]);
    if (n > 0) upd_elems = elements(ins.operand_shapes()[n + 1]);
    const double idx = n > 0 ? xla_size(ins.operand_shapes()[n]) : 0;
    cost.bytes_read = 2 * upd + idx;
    cost.bytes_written = upd;
    const Cost f = sub(callee(ins));
    cost.flops = f.flops * upd_elems;
    cost.transcendentals = f.transcendentals * upd_elems;
    ins.pattern = AccessPattern::kGatherScatter;
  }

  // XLA's `AllocateBuffer` custom call: an uninitialised buffer (no kernel, no data), e.g. the
  // output buffer JAX 0.10's Mosaic GPU lowering passes to its kernel as an operand aliased to
  // the result (`output_to_operand_aliasing`).
  static bool is_allocate_buffer(const Instruction& ins) {
    return ins.opcode == "custom-call" && ins.custom_call_target() == "AllocateBuffer";
  }

  void custom_call(Instruction& ins, const Computation& comp) {
    Cost& cost = ins.cost;
    const std::string& t = ins.custom_call_target();
    if (t == "AllocateBuffer") {  // no traffic and nothing to compute: a known zero cost
      cost.bytes_read = cost.bytes_written = 0;
      ins.pattern = AccessPattern::kControl;
      return;
    }
    if (is_cudnn_convolution(t) && ins.operand_shapes().size() >= 2 && attr(ins, "dim_labels") != nullptr) {
      // XLA's GpuHloCostAnalysis::HandleCustomCall: the convolution's FLOPs; bytes are the
      // operands (bias, side input and scales included) and the convolution result, not the
      // scratch buffer of the result tuple.
      const Shape& result = first_array(ins.shape);
      cost.flops = convolution_flops(ins);
      double r = 0;
      for (const Shape& s : ins.operand_shapes()) r += xla_size(s);
      cost.bytes_read = r;
      cost.bytes_written = xla_size(result);
      cost.output_bytes = leaf_bytes(result);
      cost.working_set_bytes = cost.output_bytes;
      ins.pattern = AccessPattern::kConvolution;
      return;
    }
    if (is_cublas_gemm(t) && ins.operand_shapes().size() >= 2) {
      const Shape& result = first_array(ins.shape);
      const Shape& lhs = ins.operand_shapes()[0];
      double width = -1;
      try {
        // Only find(): operator[] on a missing key of a const json asserts.
        const nlohmann::json j = nlohmann::json::parse(ins.backend_config());
        const nlohmann::json* g = &j;
        if (j.is_object()) {
          auto it = j.find("gemm_backend_config");
          if (it != j.end()) g = &*it;
        }
        if (g->is_object()) {
          auto dn = g->find("dot_dimension_numbers");
          if (dn != g->end() && dn->is_object()) {
            auto lc = dn->find("lhs_contracting_dimensions");
            if (lc != dn->end() && lc->is_array()) {
              width = 1;
              for (const auto& d : *lc) {
                const int64_t di = d.is_string() ? std::stoll(d.get<std::string>()) : d.get<int64_t>();
                width *= static_cast<double>(dim(lhs, di));
              }
            }
          }
        }
      } catch (const std::exception&) {
        width = -1;
      }
      if (width < 0) width = static_cast<double>(lhs.dims.empty() ? 1 : lhs.dims.back());
      cost.flops = 2.0 * elements(result) * width;
      double r = 0;
      for (const Shape& s : ins.operand_shapes()) r += leaf_bytes(s);
      cost.bytes_read = r;
      cost.bytes_written = leaf_bytes(result);
      cost.output_bytes = leaf_bytes(result);
      cost.working_set_bytes = cost.output_bytes;
      ins.pattern = AccessPattern::kDot;
      return;
    }
    // No rule: bytes are the operands and results (a lower bound), flops unknown, unless the
    // kernel's author gave its figures. An operand that is an uninitialised buffer
    // (AllocateBuffer) holds nothing to read: left out, or the bound would not be one.
    double r = 0;
    for (std::size_t i = 0; i < ins.operand_shapes().size(); ++i) {
      const Instruction* producer = i < ins.operands.size() ? comp.find(ins.operands[i]) : nullptr;
      if (producer == nullptr || !is_allocate_buffer(*producer)) r += leaf_bytes(ins.operand_shapes()[i]);
    }
    cost.bytes_read = r;
    cost.bytes_written = leaf_bytes(ins.shape);
    AuthorCost a;
    if (author_cost(ins, a)) {
      cost.flops = a.flops;
      cost.transcendentals = a.transcendentals;
      if (a.bytes_accessed >= 0) cost.bytes_read = std::max(a.bytes_accessed - cost.bytes_written, 0.0);
      cost.from_author = true;
      ins.pattern = AccessPattern::kLibraryCall;
      return;
    }
    cost.unknown = true;
    if (t.rfind("__cudnn$convReorder", 0) == 0) {
      ins.pattern = AccessPattern::kDataMovement;  // a filter (and bias) relayout for int8x32
    } else if (t.rfind("__cudnn$conv", 0) == 0) {
      ins.pattern = AccessPattern::kConvolution;
    } else if (t == "TopK" || t.find("topk") != std::string::npos) {
      ins.pattern = AccessPattern::kSort;
    } else {
      ins.pattern = AccessPattern::kLibraryCall;
    }
  }

  // ---- fusions ---------------------------------------------------------------------------------
  // HloCostAnalysis::HandleFusion: the fused computation's operations; bytes at the fusion's
  // boundary only (intermediates stay on chip).
  void fusion(Instruction& ins, const Computation& /*comp*/) {
    Cost& cost = ins.cost;
    const Computation* fc = callee(ins);
    if (fc == nullptr) return;
    const std::size_t fi = callee_index(fc);
    const Cost inner = computation_cost(fi);
    const Computation& f = m_.computations[fi];
    ins.pattern = fusion_pattern(f);

    // A custom fusion holding a gather or scatter costs as that instruction (XLA's rule).
    if (ins.fusion_kind() == "kCustom") {
      for (const Instruction& i : f.instructions) {
        if (i.opcode == "gather" || i.opcode == "scatter") {
          cost = i.cost;
          cost.output_bytes = leaf_bytes(ins.shape);
          return;
        }
      }
    }
    cost.flops = inner.flops;
    cost.transcendentals = inner.transcendentals;
    cost.unknown = inner.unknown;
    cost.per_iteration = inner.per_iteration;

    // Written (FusionProcessOutputBytesAccessed): every array of the result; where the fused
    // root, or an element of a tuple root, is a dynamic-update-slice only its update (the rest
    // of the buffer is updated in place).
    const Instruction* root = f.root();
    double written = 0;
    if (root != nullptr) {
      if (!ins.shape.is_tuple()) {
        if (ins.shape.is_array()) {
          written = root->opcode == "dynamic-update-slice" && root->operand_shapes().size() > 1
                        ? xla_size(root->operand_shapes()[1])
                        : xla_size(ins.shape);
        }
      } else {
        for (std::size_t k = 0; k < ins.shape.tuple.size(); ++k) {
          const Shape& leaf = ins.shape.tuple[k];
          if (leaf.is_tuple()) {
            written += array_subshape_bytes(leaf);
            continue;
          }
          if (!leaf.is_array()) continue;
          const Instruction* elem = root;
          if (root->opcode == "tuple" && k < root->operand_indices().size() &&
              root->operand_indices()[k] < f.instructions.size()) {
            elem = &f.instructions[root->operand_indices()[k]];
          }
          written += elem->opcode == "dynamic-update-slice" && elem->operand_shapes().size() > 1
                         ? xla_size(elem->operand_shapes()[1])
                         : xla_size(leaf);
        }
      }
    }
    cost.bytes_written = written;

    // Read: constants of more than one element inside (FusionCountConstantsMemoryAccess), plus
    // what each parameter's users read (FusionProcessOperandBytesRead).
    double read = 0;
    const Users& users = users_of(fi);
    for (std::size_t k = 0; k < f.instructions.size(); ++k) {
      const Instruction& i = f.instructions[k];
      if (i.opcode == "constant" && i.shape.is_array() && i.shape.element_count() > 1) read += xla_size(i.shape);
      if (i.opcode != "parameter") continue;
      if (!i.shape.is_tuple()) {
        read += parameter_read_bytes(fi, k, 0);
      } else {
        std::vector<int64_t> path;
        read += tuple_parameter_read_bytes(fi, k, i.shape, path, users);
      }
    }
    cost.bytes_read = read;

    // Working set: the largest value computed inside the fusion.
    double ws = 0;
    for (const Instruction& i : f.instructions) {
      if (i.opcode == "parameter" || i.opcode == "constant" || i.opcode == "get-tuple-element" || i.opcode == "tuple" ||
          i.opcode == "bitcast") {
        continue;
      }
      ws = std::max(ws, std::max(leaf_bytes(i.shape), i.cost.working_set_bytes));
    }
    cost.working_set_bytes = ws;
  }

  using Users = std::vector<std::vector<std::size_t>>;  // per instruction: its distinct users, in order

  const Users& users_of(std::size_t comp_idx) {
    auto it = users_.find(comp_idx);
    if (it != users_.end()) return it->second;
    const Computation& c = m_.computations[comp_idx];
    Users u(c.instructions.size());
    for (std::size_t k = 0; k < c.instructions.size(); ++k) {
      const Instruction& i = c.instructions[k];
      for (std::size_t o : i.operand_indices()) {
        if (o >= u.size()) continue;
        auto& list = u[o];
        if (list.empty() || list.back() != k) list.push_back(k);  // k ascends: repeats are adjacent
      }
    }
    return users_.emplace(comp_idx, std::move(u)).first->second;
  }

  // A tuple-shaped fused parameter, leaf by leaf: the get-tuple-element chain down to the leaf
  // (as far as it exists), read as FusionParameterReadBytes reads it.
  double tuple_parameter_read_bytes(std::size_t comp_idx, std::size_t pos, const Shape& shape,
                                    std::vector<int64_t>& path, const Users& users) {
    if (path.size() > 16) return 0;
    if (!shape.is_tuple()) {
      const Computation& c = m_.computations[comp_idx];
      std::size_t g = pos;
      for (int64_t sub_index : path) {
        // g's get-tuple-element users by index, found once per instruction (a tuple of n
        // leaves read through n users would otherwise cost n^2)
        auto [it, fresh] = gte_users_.try_emplace({comp_idx, g});
        if (fresh) {
          for (std::size_t u : users[g]) {
            const Instruction& user = c.instructions[u];
            int64_t index = -1;
            if (user.opcode == "get-tuple-element" && attr::integer(user, "index", index)) {
              it->second.try_emplace(index, u);  // the first such user, as the scan took
            }
          }
        }
        if (const auto found = it->second.find(sub_index); found != it->second.end()) g = found->second;
      }
      return parameter_read_bytes(comp_idx, g, 0);
    }
    double sum = 0;
    for (std::size_t k = 0; k < shape.tuple.size(); ++k) {
      path.push_back(static_cast<int64_t>(k));
      sum += tuple_parameter_read_bytes(comp_idx, pos, shape.tuple[k], path, users);
      path.pop_back();
    }
    return sum;
  }

  // HloCostAnalysis::FusionParameterReadBytes: bytes a fused parameter (or a
  // get-tuple-element of one) reads, by its users: a slice reads its result; a dynamic-slice
  // of it its result; a broadcast or reshape all of it, each; a dynamic-update-slice into it
  // nothing (in place); other users share one read of all of it; a nested fusion reads as its
  // own users do where the parameter feeds the nested root directly, else as the nested
  // parameter's users do, and nothing at all when it has no users (the fused root).
  double parameter_read_bytes(std::size_t comp_idx, std::size_t pos, int depth) {
    // Once per (computation, parameter, depth): a parameter read by w nested fusions on each
    // of d levels would otherwise cost w^d calls. The depth is in the key because it decides
    // where the nesting cap cuts, so the values are those of the plain recursion.
    const auto key = std::make_tuple(comp_idx, pos, depth);
    if (const auto hit = read_bytes_memo_.find(key); hit != read_bytes_memo_.end()) return hit->second;
    const double bytes = parameter_read_bytes_uncached(comp_idx, pos, depth);
    read_bytes_memo_.emplace(key, bytes);
    return bytes;
  }

  double parameter_read_bytes_uncached(std::size_t comp_idx, std::size_t pos, int depth) {
    const Computation& c = m_.computations[comp_idx];
    const Users& users = users_of(comp_idx);
    const Instruction& p = c.instructions[pos];
    const double full = xla_size(p.shape);
    double size = 0;
    bool seen = false;
    auto is_operand0 = [](const Instruction& user, std::size_t at) {
      return !user.operand_indices().empty() && user.operand_indices()[0] == at;
    };
    for (std::size_t u : users[pos]) {
      const Instruction& user = c.instructions[u];
      const std::string_view op = user.opcode;
      if (op == "fusion") {
        const Computation* nested = callee(user);
        if (nested == nullptr || depth >= 16) continue;
        const std::size_t ni = callee_index(nested);
        const Instruction* nroot = nested->root();
        for (std::size_t idx = 0; idx < user.operand_indices().size(); ++idx) {
          if (user.operand_indices()[idx] != pos) continue;
          std::size_t nparam = SIZE_MAX;
          for (std::size_t q = 0; q < nested->instructions.size(); ++q) {
            if (nested->instructions[q].opcode == "parameter" &&
                nested->instructions[q].parameter_number == static_cast<int64_t>(idx)) {
              nparam = q;
              break;
            }
          }
          if (nparam == SIZE_MAX) continue;
          const bool simple = nroot == nullptr || nroot->operands.empty() ||
                              (!nroot->operand_indices().empty() && nroot->operand_indices()[0] == nparam);
          bool nested_seen = false;
          for (std::size_t fu : users[u]) {
            const Instruction& fuser = c.instructions[fu];
            if (simple && fuser.opcode == "slice") {
              size += xla_size(fuser.shape);
            } else if (simple && fuser.opcode == "dynamic-slice") {
              if (is_operand0(fuser, u)) {
                size += xla_size(fuser.shape);
              } else if (!nested_seen) {
                nested_seen = true;
                size += xla_size(user.shape);
              }
            } else if (simple && fuser.opcode == "dynamic-update-slice") {
              if (!is_operand0(fuser, u) && !nested_seen) {
                nested_seen = true;
                size += xla_size(user.shape);
              }
            } else if (!nested_seen) {
              nested_seen = true;
              size += parameter_read_bytes(ni, nparam, depth + 1);
            }
          }
        }
      } else if (op == "slice") {
        size += xla_size(user.shape);
      } else if (op == "dynamic-slice") {
        if (is_operand0(user, pos)) {
          size += xla_size(user.shape);
        } else if (!seen) {
          seen = true;
          size += full;
        }
      } else if (op == "dynamic-update-slice") {
        if (!is_operand0(user, pos) && !seen) {
          seen = true;
          size += full;
        }
      } else if (op == "broadcast" || op == "reshape") {
        size += full;
      } else if (!seen) {
        seen = true;
        size += full;
      }
    }
    return size;
  }

  static AccessPattern fusion_pattern(const Computation& f) {
    int rank_best = 0;
    AccessPattern best = AccessPattern::kDataMovement;
    auto consider = [&](int rank, AccessPattern p) {
      if (rank > rank_best) {
        rank_best = rank;
        best = p;
      }
    };
    for (const Instruction& i : f.instructions) {
      switch (i.pattern) {
        case AccessPattern::kDot: consider(9, i.pattern); break;
        case AccessPattern::kConvolution: consider(9, i.pattern); break;
        case AccessPattern::kFft: consider(8, i.pattern); break;
        case AccessPattern::kSort: consider(7, i.pattern); break;
        case AccessPattern::kGatherScatter: consider(6, i.pattern); break;
        case AccessPattern::kStencil: consider(5, i.pattern); break;
        case AccessPattern::kReduction: consider(4, i.pattern); break;
        case AccessPattern::kLibraryCall: consider(3, i.pattern); break;
        case AccessPattern::kElementwise: consider(2, i.pattern); break;
        case AccessPattern::kControl: consider(2, i.pattern); break;
        default: break;
      }
    }
    return best;
  }

  Module& m_;
  CallPath path_;
  std::vector<int> comp_done_;
  std::vector<Cost> comp_cost_;
  std::unordered_map<std::size_t, Users> users_;
  std::map<std::tuple<std::size_t, std::size_t, int>, double> read_bytes_memo_;  // parameter_read_bytes
  // (computation, instruction) -> its get-tuple-element users by index (tuple_parameter_read_bytes)
  std::map<std::pair<std::size_t, std::size_t>, std::unordered_map<int64_t, std::size_t>> gte_users_;
};

}  // namespace

void analyze_costs(Module& module) { CostModel(module).run(); }

Module analyze_hlo(std::string_view text) {
  Module m = parse_hlo_module(text);
  analyze_costs(m);
  return m;
}

}  // namespace fpgaprof::hlo

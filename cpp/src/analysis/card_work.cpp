#include "fpgaprof/analysis/card_work.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <string>
#include <tuple>
#include <utility>

namespace fpgaprof::analysis {
namespace {

using hlo::Computation;
using hlo::Instruction;
using hlo::Shape;

// "{1,2}" -> {1,2}; anything else is skipped.
std::vector<int64_t> int_list(const std::string* v) {
  std::vector<int64_t> out;
  if (v == nullptr) return out;
  int64_t cur = 0;
  bool in = false;
  for (char c : *v) {
    if (c >= '0' && c <= '9') {
      if (cur < (int64_t{1} << 50)) cur = cur * 10 + (c - '0');
      in = true;
    } else {
      if (in) out.push_back(cur);
      cur = 0;
      in = false;
    }
  }
  if (in) out.push_back(cur);
  return out;
}

const std::string* attr(const Instruction& ins, const char* key) {
  auto it = ins.attributes().find(key);
  return it == ins.attributes().end() ? nullptr : &it->second;
}

double leaf_bytes(const Shape& s) { return static_cast<double>(s.byte_size()); }

double element_bytes(const Shape& s) {
  const int bits = hlo::primitive_bits(s.type);
  return bits <= 8 ? 1.0 : static_cast<double>(bits) / 8.0;
}

// Minor-to-major order of an array's dimensions: its printed layout, else XLA's default.
std::vector<int64_t> minor_to_major(const Shape& s) {
  if (s.has_layout && s.layout.size() == s.dims.size()) return s.layout;
  std::vector<int64_t> order;
  for (std::size_t d = s.dims.size(); d-- > 0;) order.push_back(static_cast<int64_t>(d));
  return order;
}

// Contiguous bytes of a box of `extent` (per dimension) inside array `s`: walk the dimensions
// from the most minor; each one spanned whole lets the run continue into the next.
double run_bytes(const Shape& s, const std::vector<int64_t>& extent) {
  double run = 1;
  for (int64_t d : minor_to_major(s)) {
    if (d < 0 || static_cast<std::size_t>(d) >= s.dims.size() || static_cast<std::size_t>(d) >= extent.size()) break;
    const int64_t e = std::max<int64_t>(extent[static_cast<std::size_t>(d)], 1);
    run *= static_cast<double>(e);
    if (e != s.dims[static_cast<std::size_t>(d)]) break;
  }
  return run * element_bytes(s);
}

bool is_view(const std::string& op) { return op == "bitcast" || op == "reshape" || op == "copy"; }

// An elementwise op computed per element on the way to a gather (a convert, a negate, a scale by
// a broadcast scalar): the operand it takes its elements from, the one of the result's size
// when exactly one is; SIZE_MAX otherwise.
std::size_t elementwise_source(const Computation& f, const Instruction& i) {
  if (i.pattern != hlo::AccessPattern::kElementwise || i.opcode == "rng" || i.opcode == "rng-bit-generator")
    return SIZE_MAX;
  const int64_t n = i.shape.is_array() ? i.shape.element_count() : -1;
  std::size_t found = SIZE_MAX;
  for (std::size_t k = 0; k < i.operand_indices().size() && k < i.operand_shapes().size(); ++k) {
    if (i.operand_shapes()[k].element_count() != n) continue;
    const std::size_t o = i.operand_indices()[k];
    if (o < f.instructions.size() && f.instructions[o].opcode == "broadcast") continue;  // a scalar spread
    if (found != SIZE_MAX) return SIZE_MAX;
    found = o;
  }
  return found;
}

// The fused parameter `pos` reaches through views and (`per_element`) per-element ops, or
// SIZE_MAX.
std::size_t parameter_behind(const Computation& f, std::size_t pos, bool per_element = true) {
  for (int steps = 0; pos < f.instructions.size() && steps < 32; ++steps) {
    const Instruction& i = f.instructions[pos];
    if (i.opcode == "parameter") return pos;
    if (is_view(i.opcode) && !i.operand_indices().empty()) {
      pos = i.operand_indices()[0];
    } else if (!per_element) {
      return SIZE_MAX;
    } else {
      pos = elementwise_source(f, i);
      if (pos == SIZE_MAX) return SIZE_MAX;
    }
  }
  return SIZE_MAX;
}

// How many elements of operand `k` (an operand index of u) an element of u's result is computed
// from, where u computes each element from single elements of its operands: views, slices,
// transposes, reverses (1), dynamic-slices (their operand 0: 1), pads (operand 0: its share of
// the result), concatenations (each operand its share), broadcasts (1: an element of the
// operand spread to many), per-element ops (their operands of the result's size: 1). -1 where
// u does not (a reduction, a dot, a gather, a scatter) or for an operand it reads whole (an
// offset, a padding value, a scalar operand: clamp's bounds, select's predicate).
double per_element_ratio(const Instruction& u, std::size_t k) {
  const auto& ops = u.operand_indices();
  if (k >= ops.size() || k >= u.operand_shapes().size()) return -1;
  const double n = u.shape.is_array() ? static_cast<double>(u.shape.element_count()) : 0;
  const double m = static_cast<double>(u.operand_shapes()[k].element_count());
  if (is_view(u.opcode) || u.opcode == "slice" || u.opcode == "transpose" || u.opcode == "reverse" ||
      u.opcode == "broadcast")
    return k == 0 ? 1 : -1;
  if (u.opcode == "dynamic-slice") return k == 0 ? 1 : -1;
  if (u.opcode == "pad") return k == 0 && n > 0 ? std::min(1.0, m / n) : -1;
  if (u.opcode == "concatenate") return n > 0 ? std::min(1.0, m / n) : -1;
  if (u.pattern == hlo::AccessPattern::kElementwise && u.opcode != "rng" && u.opcode != "rng-bit-generator")
    return u.shape.is_array() && u.operand_shapes()[k].element_count() == u.shape.element_count() ? 1 : -1;
  return -1;
}

// Whether each array of a fused computation holds elements of a fused parameter, moved or
// combined per element (per_element_ratio): a gather from it reads card memory. Not through a
// gather or a reduction: their own accesses are counted where they are. Through a broadcast
// only where `broadcasts` (then addressed_parameters decides which of its elements a gather
// takes).
std::vector<bool> holds_parameter(const Computation& f, bool broadcasts) {
  std::vector<bool> out(f.instructions.size(), false);
  for (std::size_t k = 0; k < f.instructions.size(); ++k) {
    const Instruction& i = f.instructions[k];
    if (i.opcode == "parameter") out[k] = true;
    if (i.opcode == "parameter" || (i.opcode == "broadcast" && !broadcasts)) continue;
    for (std::size_t q = 0; q < i.operand_indices().size() && !out[k]; ++q)
      if (const std::size_t o = i.operand_indices()[q]; o < k && out[o] && per_element_ratio(i, q) >= 0) out[k] = true;
  }
  return out;
}

// A set of an array's dimensions, one bit each (an array of more than 64 dimensions: all).
using DimMask = uint64_t;
constexpr DimMask kAllDims = ~DimMask{0};

bool has_dim(DimMask m, std::size_t d) { return d >= 64 || ((m >> d) & 1U) != 0; }
DimMask dim_bit(std::size_t d) { return d >= 64 ? kAllDims : DimMask{1} << d; }

// The dimensions of `in` that the dimensions `m` of `out` cover, where `out` holds the same
// elements in the same (row-major) order: a reshape, or a bitcast between default layouts.
// Dimensions are grouped between the positions where both shapes' running products agree.
DimMask reshaped_dims(const Shape& out, const Shape& in, DimMask m) {
  // Beyond 64 dimensions a mask holds them all. Running products in double: a shape from
  // hostile text cannot overflow them (exact for every real shape, below 2^53 elements).
  if (out.dims.size() > 64 || in.dims.size() > 64) return kAllDims;
  std::vector<double> po{1}, pi{1};
  for (int64_t d : out.dims) po.push_back(po.back() * static_cast<double>(std::max<int64_t>(d, 1)));
  for (int64_t d : in.dims) pi.push_back(pi.back() * static_cast<double>(std::max<int64_t>(d, 1)));
  if (po.back() != pi.back()) return kAllDims;
  DimMask r = 0;
  for (std::size_t d = 0; d < out.dims.size(); ++d) {
    if (!has_dim(m, d)) continue;
    // The group around out's dimension d: from the last common product at or below its start
    // to the first at or above its end.
    double lo = 1, hi = po.back();
    for (double v : po)
      if (v <= po[d] && std::find(pi.begin(), pi.end(), v) != pi.end()) lo = std::max(lo, v);
    for (double v : po)
      if (v >= po[d + 1] && std::find(pi.begin(), pi.end(), v) != pi.end()) hi = std::min(hi, v);
    for (std::size_t e = 0; e < in.dims.size(); ++e)
      if (pi[e] >= lo && pi[e + 1] <= hi) r |= dim_bit(e);
  }
  return r;
}

bool default_layout(const Shape& s) {
  if (!s.has_layout) return true;
  for (std::size_t k = 0; k < s.layout.size(); ++k)
    if (s.layout[k] != static_cast<int64_t>(s.layout.size() - 1 - k)) return false;
  return true;
}

// The dimensions of operand q of `i` that an element of i's result at dimensions `m` is taken
// from; 0 where that operand is not followed (it is read whole, or not per element).
DimMask operand_dims(const Instruction& i, std::size_t q, DimMask m) {
  if (per_element_ratio(i, q) < 0 || q >= i.operand_shapes().size()) return 0;
  const Shape& in = i.operand_shapes()[q];
  if (i.opcode == "broadcast") {
    // Operand dimension j is the result's dimension dimensions[j]; the others are added.
    const std::vector<int64_t> kept = int_list(attr(i, "dimensions"));
    DimMask r = 0;
    for (std::size_t j = 0; j < kept.size(); ++j)
      if (kept[j] >= 0 && has_dim(m, static_cast<std::size_t>(kept[j]))) r |= dim_bit(j);
    return r;
  }
  if (i.opcode == "transpose") {
    // The result's dimension d is the operand's dimensions[d].
    const std::vector<int64_t> perm = int_list(attr(i, "dimensions"));
    DimMask r = 0;
    for (std::size_t d = 0; d < perm.size(); ++d)
      if (has_dim(m, d)) r |= dim_bit(static_cast<std::size_t>(perm[d]));
    return r;
  }
  if (i.opcode == "reshape" || (i.opcode == "bitcast" && default_layout(i.shape) && default_layout(in)))
    return reshaped_dims(i.shape, in, m);
  if (i.opcode == "bitcast") return kAllDims;  // a layout change: not followed dimension by dimension
  return in.dims.size() == i.shape.dims.size() ? m : kAllDims;
}

// Whether each array of a fused computation is a constant: a literal, or computed from
// literals alone (through broadcasts, views, converts, arithmetic; rng is not).
std::vector<bool> constant_arrays(const Computation& f) {
  const std::size_t n = f.instructions.size();
  std::vector<bool> constant(n, false);
  for (std::size_t k = 0; k < n; ++k) {
    const Instruction& i = f.instructions[k];
    const auto& ops = i.operand_indices();
    constant[k] = i.opcode == "constant" ||
                  (i.opcode != "rng" && !ops.empty() &&
                   std::all_of(ops.begin(), ops.end(), [&](std::size_t o) { return o < k && constant[o]; }));
  }
  return constant;
}

// Whether each array of a fused computation may address its dimension out of order
// (`constant`: constant_arrays): anything but an iota walked with unit stride (an iota, plus or
// minus a constant, through views, converts, broadcasts, transposes and concatenations of such)
// and constants. An index computed from iotas and constants some other way (a hash: iota *
// 40503 & mask, a remainder, a constant permutation table gathered at iota, rng) lands
// anywhere: data-dependent as far as card memory is concerned.
std::vector<bool> out_of_order(const Computation& f, const std::vector<bool>& constant) {
  const std::size_t n = f.instructions.size();
  std::vector<bool> out(n, false);
  for (std::size_t k = 0; k < n; ++k) {
    const Instruction& i = f.instructions[k];
    const auto& ops = i.operand_indices();
    if (constant[k] || i.opcode == "iota") continue;
    if (i.opcode == "broadcast" || is_view(i.opcode) || i.opcode == "convert" || i.opcode == "transpose" ||
        i.opcode == "concatenate" || i.opcode == "slice") {
      out[k] = !std::all_of(ops.begin(), ops.end(), [&](std::size_t o) { return o < k && !out[o]; });
    } else if ((i.opcode == "add" || i.opcode == "subtract") && ops.size() == 2 && ops[0] < k && ops[1] < k) {
      // in order plus a constant, or a constant plus in order (not in order minus in order)
      out[k] = !((!out[ops[0]] && constant[ops[1]]) || (i.opcode == "add" && constant[ops[0]] && !out[ops[1]]));
    } else {
      out[k] = true;  // a parameter, a hash, a gather of a table, rng
    }
  }
  return out;
}

// Whether operand `n` of `ins` is, in the computation that holds `ins`, a constant or a while
// loop's counter: element k of the loop state (the computation's tuple parameter) that the
// body's root tuple gives back as itself plus or minus a constant (through copies, bitcasts,
// converts, and a fusion that adds the constant, as XLA's GPU loops do). A scalar read from
// data (idx[i] computed by another op) is neither.
bool counter_operand(const hlo::Module& module, const Instruction& ins, std::size_t n) {
  if (ins.computation_index >= module.computations.size() || n >= ins.operands.size()) return false;
  const Computation& c = module.computations[ins.computation_index];
  const auto& is = c.instructions;
  const auto through = [&](std::size_t pos) {  // through copies, bitcasts and converts
    for (int steps = 0; pos < is.size() && steps < 16; ++steps) {
      const Instruction& i = is[pos];
      if ((i.opcode != "copy" && i.opcode != "bitcast" && i.opcode != "convert") || i.operand_indices().empty()) break;
      pos = i.operand_indices()[0];
    }
    return pos;
  };
  const auto constant = [&](std::size_t pos) {
    pos = through(pos);
    return pos < is.size() && is[pos].opcode == "constant";
  };
  const std::size_t v = through(ins.operands.position(n));
  if (v >= is.size()) return false;
  if (is[v].opcode == "constant") return true;
  // element k of the computation's tuple parameter
  const auto element = [&](std::size_t pos) -> int64_t {
    if (pos >= is.size() || is[pos].opcode != "get-tuple-element" || is[pos].operand_indices().empty()) return -1;
    const std::size_t p = is[pos].operand_indices()[0];
    if (p >= is.size() || is[p].opcode != "parameter") return -1;
    const std::vector<int64_t> k = int_list(attr(is[pos], "index"));
    return k.size() == 1 ? k[0] : -1;
  };
  const int64_t k = element(v);
  const Instruction* root = c.root();
  if (k < 0 || root == nullptr || root->opcode != "tuple" || static_cast<std::size_t>(k) >= root->operands.size())
    return false;
  const std::size_t next = through(root->operands.position(static_cast<std::size_t>(k)));
  if (next >= is.size()) return false;
  const Instruction& step = is[next];
  const auto& ops = step.operand_indices();
  // the counter on one side (element k again), a constant on the other; or a fusion of the
  // counter (and constants) whose root adds or subtracts (XLA fuses the constant in)
  bool counter = false, others_constant = true;
  for (std::size_t o : ops) {
    if (element(through(o)) == k)
      counter = true;
    else
      others_constant = others_constant && constant(o);
  }
  if (!counter || !others_constant) return false;
  if ((step.opcode == "add" || step.opcode == "subtract") && ops.size() == 2) return true;
  if (step.opcode == "fusion" && !step.called_computations().empty())
    if (const Computation* f = module.find(step.called_computations().front()))
      if (const Instruction* r = f->root()) return r->opcode == "add" || r->opcode == "subtract";
  return false;
}

// The fused parameter (its parameter number) that a scalar offset is taken from, or from it
// shifted, scaled or clamped by constants (x[i + 1], x[n - 1 - i], the block x[i * k], an index
// clipped to the array); -1 when the offset is computed some other way. Where that parameter is
// a loop's counter (counter_operand) the offset walks the loop in order, one step a trip.
// `constant`: constant_arrays.
int64_t parameter_scalar(const Computation& f, const std::vector<bool>& constant, std::size_t pos) {
  for (int steps = 0; pos < f.instructions.size() && steps < 8; ++steps) {
    const Instruction& i = f.instructions[pos];
    if (i.opcode == "parameter") return i.shape.is_array() && i.shape.element_count() == 1 ? i.parameter_number : -1;
    const auto& ops = i.operand_indices();
    if (ops.empty()) return -1;
    if ((i.opcode == "add" || i.opcode == "subtract" || i.opcode == "multiply" || i.opcode == "maximum" ||
         i.opcode == "minimum") &&
        ops.size() == 2) {
      if (ops[1] < pos && constant[ops[1]]) {
        pos = ops[0];
      } else if (ops[0] < pos && constant[ops[0]]) {
        pos = ops[1];
      } else {
        return -1;
      }
      continue;
    }
    // through a clamp to constant bounds (lax.clamp(0, i, n - 1); jnp.clip's maximum and
    // minimum above), monotone
    if (i.opcode == "clamp" && ops.size() == 3) {
      if (!(ops[0] < pos && constant[ops[0]] && ops[2] < pos && constant[ops[2]])) return -1;
      pos = ops[1];
      continue;
    }
    // through the clamp of a negative index (select(lt(i, 0), i + n, i)), views, converts
    if (i.opcode != "select" && !is_view(i.opcode) && i.opcode != "convert") return -1;
    pos = ops[ops.size() - 1];
  }
  return -1;
}

// The dimensions of a gather's source that its data-dependent index components address
// (start_index_map): a component that walks its dimension in order (out_of_order false: an
// iota shifted by a constant, as MBIRJAX's row numbers concatenated to the computed columns)
// is not. The components are told apart where the indices are a concatenation along the index
// vector dimension, through views and transposes; otherwise all count as data-dependent when
// the indices may address out of order.
DimMask data_dependent_dims(const Computation& f, const Instruction& g, const std::vector<bool>& unordered) {
  const std::vector<int64_t> map = int_list(attr(g, "start_index_map"));
  if (g.operand_indices().size() < 2 || g.operand_shapes().size() < 2) return 0;
  std::size_t pos = g.operand_indices()[1];
  if (pos >= f.instructions.size()) return 0;
  std::vector<bool> data(map.size(), unordered[pos]);
  const std::vector<int64_t> ivd = int_list(attr(g, "index_vector_dim"));
  std::size_t dim = ivd.empty() ? SIZE_MAX : static_cast<std::size_t>(ivd.front());
  for (int steps = 0; steps < 32 && pos < f.instructions.size(); ++steps) {
    const Instruction& i = f.instructions[pos];
    if (dim >= i.shape.dims.size() || i.operand_indices().empty() || i.operand_shapes().empty()) break;
    if (i.opcode == "concatenate") {
      const std::vector<int64_t> along = int_list(attr(i, "dimensions"));
      if (along.size() != 1 || static_cast<std::size_t>(along.front()) != dim) break;
      std::size_t c = 0;
      for (std::size_t q = 0; q < i.operand_indices().size() && q < i.operand_shapes().size(); ++q) {
        const std::size_t o = i.operand_indices()[q];
        const Shape& in = i.operand_shapes()[q];
        for (int64_t e = 0; dim < in.dims.size() && e < in.dims[dim] && c < data.size(); ++e, ++c)
          data[c] = o < pos && unordered[o];
      }
      break;
    }
    const Shape& in = i.operand_shapes()[0];
    if (i.opcode == "transpose") {
      const std::vector<int64_t> perm = int_list(attr(i, "dimensions"));
      if (dim >= perm.size()) break;
      dim = static_cast<std::size_t>(perm[dim]);
    } else if (i.opcode == "reshape" || (i.opcode == "bitcast" && default_layout(i.shape) && default_layout(in))) {
      // Followed while the component dimension stays one dimension of the same size.
      const DimMask m = reshaped_dims(i.shape, in, dim_bit(dim));
      std::size_t e = 0;
      while (e < 64 && m != (DimMask{1} << e)) ++e;
      if (e >= in.dims.size() || in.dims[e] != i.shape.dims[dim]) break;
      dim = e;
    } else {
      break;
    }
    pos = i.operand_indices()[0];
  }
  DimMask out = 0;
  for (std::size_t c = 0; c < map.size(); ++c)
    if (data[c] && map[c] >= 0) out |= dim_bit(static_cast<std::size_t>(map[c]));
  return out;
}

// The bytes of the fused parameters a gather's data-dependent indices land in, where its source
// holds their elements only through broadcasts: the walk from the source follows the
// dimensions those indices address (data_dependent_dims) through views, moves and per-element ops,
// and a broadcast passes on only the dimensions it keeps from its operand. A gather that picks
// rows of a broadcast vector (the index on a dimension the broadcast adds) reads nothing at
// random; one that picks columns of a broadcast table (MBIRJAX 0.7's loop_gather_select_fusion)
// reads the table at random. A walk too long to finish counts the gather's whole source.
double addressed_parameters(const Computation& f, const Instruction& g, const std::vector<bool>& holds,
                            const std::vector<bool>& unordered) {
  if (g.operand_indices().empty()) return 0;
  const DimMask start = data_dependent_dims(f, g, unordered);
  std::set<std::pair<std::size_t, DimMask>> seen;
  std::set<std::size_t> reached;
  std::vector<std::pair<std::size_t, DimMask>> todo{{g.operand_indices()[0], start}};
  for (std::size_t steps = 0; !todo.empty(); ++steps) {
    if (steps >= 4096) return g.operand_shapes().empty() ? 0 : leaf_bytes(g.operand_shapes()[0]);
    const auto [pos, m] = todo.back();
    todo.pop_back();
    if (m == 0 || pos >= f.instructions.size() || !holds[pos] || !seen.insert({pos, m}).second) continue;
    const Instruction& i = f.instructions[pos];
    if (i.opcode == "parameter") {
      reached.insert(pos);
      continue;
    }
    for (std::size_t q = 0; q < i.operand_indices().size(); ++q)
      if (const std::size_t o = i.operand_indices()[q]; o < pos) todo.emplace_back(o, operand_dims(i, q, m));
  }
  double bytes = 0;
  for (std::size_t p : reached) bytes += leaf_bytes(f.instructions[p].shape);
  return bytes;
}

// How often each instruction of a fused computation is evaluated per execution, as XLA compiles
// it, where gathers take elements of arrays computed inside it: such an array is not
// materialized; each element a gather takes evaluates it there, and so every op it is computed
// from per element (per_element_ratio), down to the gathers it sums (MBIRJAX's cone back
// projection gathers single floats of a sum of gathers of its volume).
struct Evaluated {
  bool whole = false;  // all of its elements, once (an output, an index, a reduction's operand)
  double taken = 0;    // elements more, evaluated where gathers above it take them
  // A restructured design's share of the gathers above: it materializes each gather once and
  // serves the outer gathers from on-chip copies; their accesses, split among the gathers
  // each of their elements evaluates.
  double shared = 0;
};
std::vector<Evaluated> evaluated(const Computation& f, const std::vector<std::vector<std::size_t>>& users) {
  constexpr double kCap = 1e30;  // nested gathers multiply: a bound that stays finite
  const std::size_t n = f.instructions.size();
  const auto elements = [&](std::size_t k) {
    return f.instructions[k].shape.is_array() ? static_cast<double>(f.instructions[k].shape.element_count()) : 0.0;
  };
  // The gathers an element of each array is computed from, counted along every path.
  std::vector<double> below(n, 0.0);
  for (std::size_t k = 0; k < n; ++k) {
    const Instruction& i = f.instructions[k];
    if (i.opcode == "gather") {
      below[k] = 1;
      continue;
    }
    for (std::size_t q = 0; q < i.operand_indices().size(); ++q)
      if (const std::size_t o = i.operand_indices()[q]; o < k && per_element_ratio(i, q) >= 0)
        below[k] = std::min(kCap, below[k] + below[o]);
  }
  std::vector<Evaluated> out(n);
  // Users follow their operands in a computation: every user of k is done before k.
  for (std::size_t k = n; k-- > 0;) {
    Evaluated& e = out[k];
    if (f.instructions[k].is_root) e.whole = true;
    for (std::size_t u : users[k]) {
      if (u <= k) continue;
      const Instruction& ui = f.instructions[u];
      const Evaluated& eu = out[u];
      for (std::size_t q = 0; q < ui.operand_indices().size(); ++q) {
        if (ui.operand_indices()[q] != k) continue;
        if (ui.opcode == "gather" && q == 0) {
          const double evals = (eu.whole ? elements(u) : 0.0) + eu.taken;
          e.taken = std::min(kCap, e.taken + evals);
          e.shared = std::min(kCap, e.shared + (elements(u) + eu.shared) / std::max(1.0, below[k]));
        } else if (const double r = per_element_ratio(ui, q); r >= 0) {
          e.whole = e.whole || eu.whole;
          e.taken = std::min(kCap, e.taken + r * eu.taken);
          e.shared = std::min(kCap, e.shared + r * eu.shared);
        } else {
          e.whole = true;
        }
      }
    }
  }
  return out;
}

struct UpdateBytes {
  double bytes = 0;     // all update arrays
  double elements = 0;  // of the first
};

UpdateBytes scatter_updates(const Instruction& s) {
  UpdateBytes u;
  const std::size_t total = s.operand_shapes().size();
  const std::size_t n = total >= 3 ? (total - 1) / 2 : 0;
  for (std::size_t k = 0; k < n; ++k) u.bytes += leaf_bytes(s.operand_shapes()[n + 1 + k]);
  if (n > 0) u.elements = static_cast<double>(s.operand_shapes()[n + 1].element_count());
  return u;
}

// The get-tuple-element `v`'s index when it takes element i of its computation's parameter,
// else -1.
int64_t state_index(const Computation& c, const Instruction& v) {
  if (v.opcode != "get-tuple-element" || v.operand_indices().empty()) return -1;
  const std::size_t p = v.operand_indices()[0];
  if (p >= c.instructions.size() || c.instructions[p].opcode != "parameter") return -1;
  const std::vector<int64_t> i = int_list(attr(v, "index"));
  return i.size() == 1 ? i[0] : -1;
}

// Where a while body's loop state element comes from, when that is sure: `v`, in computation
// `ci`, takes element i of the loop state, the body returns that element unchanged (its root
// tuple's operand i is the same element, through bitcasts), the body is called by one
// instruction of the module alone, a while, and that while's operand is a tuple: its operand i,
// as {computation, position}. Otherwise {SIZE_MAX, SIZE_MAX}.
std::pair<std::size_t, std::size_t> loop_state_origin(const hlo::Module& m, std::size_t ci, const Instruction& v) {
  const std::pair<std::size_t, std::size_t> none{SIZE_MAX, SIZE_MAX};
  const Computation& c = m.computations[ci];
  if (c.is_entry || c.is_fusion) return none;
  const int64_t i = state_index(c, v);
  if (i < 0 || c.root_index >= c.instructions.size()) return none;
  const Instruction& root = c.instructions[c.root_index];
  const auto k = static_cast<std::size_t>(i);
  if (root.opcode != "tuple" || k >= root.operands.size()) return none;
  std::size_t r = root.operand_indices()[k];
  for (std::size_t steps = 0; r < c.instructions.size() && steps < c.instructions.size(); ++steps) {
    const Instruction& u = c.instructions[r];
    if (u.opcode != "bitcast" || u.operand_indices().empty()) break;
    r = u.operand_indices()[0];
  }
  if (r >= c.instructions.size() || state_index(c, c.instructions[r]) != i ||
      c.instructions[r].operand_indices()[0] != v.operand_indices()[0])
    return none;
  // The one instruction that calls this computation: a walk of the module, so only in modules
  // of at most kMaxCallerScan instructions (array_id runs per gather; above that the body's
  // array stays an array of its own, which errs slow).
  constexpr std::size_t kMaxCallerScan = 8192;
  std::size_t total = 0;
  for (const Computation& other : m.computations) total += other.instructions.size();
  if (total > kMaxCallerScan) return none;
  const Instruction* loop = nullptr;
  for (const Computation& other : m.computations)
    for (const Instruction& u : other.instructions)
      for (const std::string& called : u.called_computations())
        if (called == c.name) {
          if (loop != nullptr) return none;
          loop = &u;
        }
  if (loop == nullptr || loop->opcode != "while" || loop->operands.empty()) return none;
  const std::string* body = attr(*loop, "body");
  if (body == nullptr || (*body != c.name && *body != "%" + c.name)) return none;
  const std::size_t caller = loop->computation_index;
  if (caller >= m.computations.size() || caller == ci) return none;
  const Computation& cc = m.computations[caller];
  const std::size_t t = loop->operand_indices()[0];
  if (t >= cc.instructions.size() || cc.instructions[t].opcode != "tuple" || k >= cc.instructions[t].operands.size())
    return none;
  const std::size_t o = cc.instructions[t].operand_indices()[k];
  if (o >= cc.instructions.size()) return none;
  return {caller, o};
}

// The identity of operand k of `ins` (RandomTraffic::source_id): the name of the array it is,
// followed back through bitcasts (the same bytes under another shape: an array gathered
// directly by one op and through a bitcast by another is one array on chip) and out of while
// bodies (an element of the loop state the body returns unchanged is the array the while's
// operand tuple holds there: an array gathered before a loop and inside it is one array on
// chip), with the computation where the name is.
uint64_t array_id(const hlo::Module& m, const Instruction& ins, std::size_t k) {
  if (k >= ins.operands.size()) return 0;
  const std::string* name = &ins.operands[k];
  std::size_t ci = ins.computation_index;
  if (ci < m.computations.size()) {
    std::size_t o = ins.operand_indices()[k];
    // (each step goes to an earlier instruction of the computation, or out to its caller: at
    // most kMaxLoopLevels loops out, which also stops hand-written text whose loops call each
    // other in a ring)
    constexpr int kMaxLoopLevels = 8;
    int levels = 0;
    for (std::size_t steps = 0; steps < 4096; ++steps) {
      const Computation& c = m.computations[ci];
      if (o >= c.instructions.size()) break;
      const Instruction& v = c.instructions[o];
      name = &v.name;
      if (v.opcode == "bitcast" && !v.operand_indices().empty()) {
        o = v.operand_indices()[0];
        continue;
      }
      if (levels == kMaxLoopLevels) break;
      const auto [caller, at] = loop_state_origin(m, ci, v);
      if (caller == SIZE_MAX) break;
      ++levels;
      ci = caller;
      o = at;
    }
  }
  const uint64_t h = std::hash<std::string>{}(*name) ^ (0x9e3779b97f4a7c15ull * (ci + 1));
  return h == 0 ? 1 : h;
}

// The identity of the array a fusion's parameter instruction `param` stands for: the fusion's
// operand of that number.
uint64_t fused_array_id(const hlo::Module& m, const Instruction& fusion, const Instruction& param) {
  return param.parameter_number < 0 ? 0 : array_id(m, fusion, static_cast<std::size_t>(param.parameter_number));
}

RandomTraffic gather_traffic(const hlo::Module& m, const Instruction& g) {
  RandomTraffic t;
  t.run_bytes = gather_run_bytes(g);
  t.bytes = leaf_bytes(g.shape);
  t.accesses = t.run_bytes > 0 ? t.bytes / t.run_bytes : 0;
  t.source_bytes = g.operand_shapes().empty() ? 0 : leaf_bytes(g.operand_shapes()[0]);
  t.source_id = array_id(m, g, 0);
  return t;
}

RandomTraffic scatter_traffic(const hlo::Module& m, const Instruction& s) {
  RandomTraffic t;
  t.run_bytes = scatter_run_bytes(s);
  t.bytes = 2 * scatter_updates(s).bytes;  // each update reads and writes its target
  t.accesses = t.run_bytes > 0 ? t.bytes / t.run_bytes : 0;
  t.source_bytes = s.operand_shapes().empty() ? 0 : leaf_bytes(s.operand_shapes()[0]);
  t.source_id = array_id(m, s, 0);
  t.read_modify_write = true;
  return t;
}

void sort_facts(const Instruction& s, CardWork& w) {
  if (s.operand_shapes().empty()) return;
  const Shape& keys = s.operand_shapes()[0];
  const std::vector<int64_t> d = int_list(attr(s, "dimensions"));
  const int64_t axis = d.empty() ? static_cast<int64_t>(keys.dims.size()) - 1 : d.front();
  const double n = static_cast<double>(keys.element_count());
  w.sort_length = axis >= 0 && static_cast<std::size_t>(axis) < keys.dims.size()
                      ? static_cast<double>(keys.dims[static_cast<std::size_t>(axis)])
                      : n;
  w.sort_count = w.sort_length > 0 ? n / w.sort_length : 0;
  w.sort_element_bytes = 0;
  for (const Shape& o : s.operand_shapes()) w.sort_element_bytes += element_bytes(o);
}

// An FFT's facts, and its arithmetic on a card: a radix-2 Cooley-Tukey transform of N points
// takes 5 N log2 N real FLOPs (half for a real-input or real-output one), where XLA's cost
// analysis counts 8 N log2 N; the card's FLOPs replace XLA's.
void fft_facts(const Instruction& f, CardWork& w) {
  if (f.operand_shapes().empty()) return;
  double len = 1;
  for (int64_t l : int_list(attr(f, "fft_length"))) len *= static_cast<double>(std::max<int64_t>(l, 1));
  const Shape& in = f.operand_shapes()[0];
  const double points =
      static_cast<double>(std::max(in.element_count(), f.shape.is_tuple() ? 0 : f.shape.element_count()));
  w.fft_length = len;
  w.fft_count = len > 0 ? points / len : 0;
  w.fft_point_bytes = std::max(element_bytes(in), element_bytes(f.shape));
  const std::string* type = attr(f, "fft_type");
  const bool real = type != nullptr && (*type == "RFFT" || *type == "IRFFT");
  const double card_flops = (real ? 0.5 : 1.0) * 5.0 * len * std::log2(std::max(len, 1.0)) * w.fft_count;
  w.flops += card_flops - f.cost.flops;
  w.flops = std::max(w.flops, 0.0);
}

// Distinct operands (by name), each counted once: their bytes and how many arrays they are.
std::pair<double, double> distinct_operands(const Instruction& ins) {
  std::set<std::string> seen;
  double sum = 0, count = 0;
  for (std::size_t k = 0; k < ins.operand_shapes().size(); ++k) {
    // An operand without a name (given only by its inline shape) is its own array.
    if (k < ins.operands.size() && !seen.insert(ins.operands[k]).second) continue;
    sum += leaf_bytes(ins.operand_shapes()[k]);
    count += ins.operand_shapes()[k].is_tuple() ? static_cast<double>(ins.operand_shapes()[k].tuple.size()) : 1.0;
  }
  return {sum, count};
}

double array_leaves(const Shape& s) {
  if (!s.is_tuple()) return s.is_array() ? 1.0 : 0.0;
  double n = 0;
  for (const Shape& e : s.tuple) n += array_leaves(e);
  return n;
}

}  // namespace

double CardWork::random_bytes() const {
  double b = 0;
  for (const RandomTraffic& r : random) b += r.bytes;
  return b;
}

CardWork card_work_from_totals(double flops, double bytes_read, double bytes_written) {
  CardWork w;
  w.known = true;
  w.flops = flops;
  w.bytes = w.stream_bytes = w.compulsory_bytes = bytes_read + bytes_written;
  w.input_bytes = bytes_read;
  w.output_bytes = w.working_set_bytes = bytes_written;
  w.input_buffers = w.output_buffers = 1;
  return w;
}

double gather_run_bytes(const Instruction& g) {
  if (g.operand_shapes().empty()) return 0;
  const Shape& src = g.operand_shapes()[0];
  std::vector<int64_t> slice = int_list(attr(g, "slice_sizes"));
  if (slice.size() != src.dims.size()) slice.assign(src.dims.size(), 1);
  return run_bytes(src, slice);
}

double scatter_run_bytes(const Instruction& s) {
  if (s.operand_shapes().size() < 3) return 0;
  const Shape& target = s.operand_shapes()[0];
  const std::size_t n = (s.operand_shapes().size() - 1) / 2;
  const Shape& updates = s.operand_shapes()[n + 1];
  const std::vector<int64_t> window_dims = int_list(attr(s, "update_window_dims"));
  std::set<int64_t> inserted;
  for (int64_t d : int_list(attr(s, "inserted_window_dims"))) inserted.insert(d);
  for (int64_t d : int_list(attr(s, "input_batching_dims"))) inserted.insert(d);
  std::vector<int64_t> window(target.dims.size(), 1);
  std::size_t j = 0;
  for (std::size_t d = 0; d < target.dims.size(); ++d) {
    if (inserted.count(static_cast<int64_t>(d)) != 0) continue;
    if (j < window_dims.size()) {
      const int64_t ud = window_dims[j++];
      if (ud >= 0 && static_cast<std::size_t>(ud) < updates.dims.size())
        window[d] = updates.dims[static_cast<std::size_t>(ud)];
    }
  }
  return run_bytes(target, window);
}

CardWork card_work(const hlo::Module& module, const Instruction& ins) {
  CardWork w;
  const hlo::Cost& c = ins.cost;
  w.known = !c.unknown;
  w.flops = c.flops;
  w.transcendentals = c.transcendentals;
  w.bytes = c.bytes_accessed();
  w.working_set_bytes = c.working_set_bytes;
  w.output_bytes = leaf_bytes(ins.shape);
  w.output_buffers = array_leaves(ins.shape);
  // A library call with a rule (cuBLAS GEMM, cuDNN convolution) returns (result, scratch): the
  // scratch or workspace buffer is the GPU library's, not an output a card design produces.
  if (ins.opcode == "custom-call" && !c.unknown && !c.from_author && ins.shape.is_tuple() &&
      c.bytes_written < w.output_bytes) {
    w.output_bytes = c.bytes_written;
    w.output_buffers = 1;
  }
  std::tie(w.input_bytes, w.input_buffers) = distinct_operands(ins);
  double stream = w.bytes;
  bool in_place_root = false;

  const Computation* fused = nullptr;
  if (ins.opcode == "fusion" && !ins.called_computations().empty())
    fused = module.find(ins.called_computations().front());

  if (ins.opcode == "gather") {
    w.random.push_back(gather_traffic(module, ins));
  } else if (ins.opcode == "scatter") {
    w.random.push_back(scatter_traffic(module, ins));
    in_place_root = true;
  } else if (ins.opcode == "sort") {
    sort_facts(ins, w);
  } else if (ins.opcode == "fft") {
    fft_facts(ins, w);
  } else if (fused != nullptr) {
    const Computation& f = *fused;
    // A kCustom fusion wrapping a gather or scatter costs as that op (hlo cost model).
    const bool wraps = ins.fusion_kind() == "kCustom";
    // The passes over the computation that place gathers' and scatters' accesses, only for a
    // fusion that has one (most have none).
    std::vector<std::vector<std::size_t>> users;
    std::vector<Evaluated> evals;
    std::vector<bool> from_parameter, through_broadcast, constant, unordered;
    const auto has = [&](std::initializer_list<const char*> ops) {
      return std::any_of(f.instructions.begin(), f.instructions.end(), [&](const Instruction& i) {
        return std::any_of(ops.begin(), ops.end(), [&](const char* op) { return i.opcode == op; });
      });
    };
    if (has({"gather", "scatter"})) {
      users.resize(f.instructions.size());
      for (std::size_t k = 0; k < f.instructions.size(); ++k)
        for (std::size_t o : f.instructions[k].operand_indices())
          if (o < users.size()) users[o].push_back(k);
      evals = evaluated(f, users);
      from_parameter = holds_parameter(f, false);
      through_broadcast = holds_parameter(f, true);
    }
    // Which arrays may address out of order: for gathers' indices and dynamic(-update)-slices'
    // offsets.
    if (has({"gather", "dynamic-slice", "dynamic-update-slice"})) {
      constant = constant_arrays(f);
      unordered = out_of_order(f, constant);
    }
    // An offset that walks the loop in order: taken from a fused scalar that is the loop's
    // counter (or a constant) where the fusion is called.
    const auto in_order = [&](std::size_t o) {
      const int64_t n = parameter_scalar(f, constant, o);
      return n >= 0 && counter_operand(module, ins, static_cast<std::size_t>(n));
    };
    // Whether instruction i (at k) takes an offset read from data among its operands from `first` on.
    const auto data_offset = [&](const Instruction& i, std::size_t k, std::size_t first) {
      for (std::size_t q = first; q < i.operand_indices().size(); ++q)
        if (const std::size_t o = i.operand_indices()[q]; o < k && unordered[o] && !in_order(o)) return true;
      return false;
    };
    // A slice of `extent` of an array of shape `array` (the fused parameter `param`) at a
    // data-dependent offset: `bytes` moved as accesses of its contiguous run, not streamed.
    const auto slice_traffic = [&](const Shape& array, const std::vector<int64_t>& extent, double bytes,
                                   const Instruction& param) {
      RandomTraffic t;
      t.run_bytes = run_bytes(array, extent);
      t.bytes = bytes;
      t.accesses = t.run_bytes > 0 ? std::ceil(t.bytes / t.run_bytes) : 0;
      t.source_bytes = leaf_bytes(param.shape);
      t.source_id = fused_array_id(module, ins, param);
      w.random.push_back(t);
      stream -= std::min(stream, t.bytes);
    };
    std::set<std::size_t> random_params;
    for (std::size_t k = 0; k < f.instructions.size(); ++k) {
      const Instruction& i = f.instructions[k];
      if (i.opcode == "sort" && w.sort_length == 0) sort_facts(i, w);
      if (i.opcode == "fft" && w.fft_length == 0) fft_facts(i, w);
      // A dynamic-slice of a fused parameter at an offset read from data (x[idx[i]] in a loop
      // body): its slice is a data-dependent access of its contiguous run.
      // A dynamic-update-slice into a fused parameter (in place: the cost model counts its update
      // written) at an offset read from data (x.at[idx[i]].set(v) in a loop body): its update is
      // a data-dependent write of its contiguous run, at the random rate.
      if (i.opcode == "dynamic-update-slice" && !wraps && i.operand_indices().size() > 2 &&
          i.operand_shapes().size() > 1) {
        // (through views only: an array computed from the parameter per element is a new array,
        // streamed whole, with the update written in that pass)
        const std::size_t p = parameter_behind(f, i.operand_indices()[0], false);
        if (p != SIZE_MAX && data_offset(i, k, 2)) {
          const Shape& update = i.operand_shapes()[1];
          slice_traffic(i.operand_shapes()[0], std::vector<int64_t>(update.dims.begin(), update.dims.end()),
                        leaf_bytes(update), f.instructions[p]);
        }
        continue;
      }
      if (i.opcode == "dynamic-slice" && !wraps && i.operand_indices().size() > 1 && !i.operand_shapes().empty()) {
        const std::size_t p = parameter_behind(f, i.operand_indices()[0]);
        if (p != SIZE_MAX && data_offset(i, k, 1))
          slice_traffic(i.operand_shapes()[0], int_list(attr(i, "dynamic_slice_sizes")), leaf_bytes(i.shape),
                        f.instructions[p]);
        continue;
      }
      if ((i.opcode != "gather" && i.opcode != "scatter") || i.operand_indices().empty()) continue;
      const std::size_t src = i.operand_indices()[0];
      const std::size_t p = parameter_behind(f, src);
      // A source computed inside the fusion (iota, constant) never leaves the chip. One that
      // holds a parameter's elements some other way (a slice of it, a concatenation) is read at
      // random where they lie, as gather_traffic's source; the parameter keeps its counted read
      // (the cost model's, of the slice only, say) and a scatter into it writes a new array.
      // One that holds them only through broadcasts is read at random where the gather's
      // indices land on dimensions the broadcasts keep: those parameters are the array read.
      double broadcast_source = 0;
      if (p == SIZE_MAX && !wraps && !(src < k && from_parameter[src])) {
        if (i.opcode != "gather" || !(src < k && through_broadcast[src])) continue;
        broadcast_source = addressed_parameters(f, i, through_broadcast, unordered);
        if (broadcast_source <= 0) continue;
      }
      RandomTraffic t = i.opcode == "gather" ? gather_traffic(module, i) : scatter_traffic(module, i);
      if (broadcast_source > 0) t.source_bytes = std::min(t.source_bytes, broadcast_source);
      if (const Evaluated& e = evals[k]; i.opcode == "gather" && !wraps && e.taken > 0) {
        // Also evaluated where gathers above it take elements: an access of one element each
        // (their order follows the outer gathers' indices), besides its own result where that
        // is used whole. A restructured design may read its result once and serve the gathers
        // above from on-chip copies instead.
        const double own = t.accesses;
        t.restructured_accesses = own + e.shared;
        t.bytes = (e.whole ? t.bytes : 0.0) + e.taken * element_bytes(i.shape);
        t.accesses = (e.whole ? own : 0.0) + e.taken;
        t.run_bytes = t.bytes / t.accesses;
      }
      if (p != SIZE_MAX) {
        t.source_bytes = leaf_bytes(f.instructions[p].shape);
        t.source_id = fused_array_id(module, ins, f.instructions[p]);
      }
      w.random.push_back(t);
      if (p != SIZE_MAX) random_params.insert(p);
      if (i.opcode == "scatter" && (i.is_root || wraps) && (p != SIZE_MAX || wraps)) in_place_root = true;
      if (wraps) break;
    }
    if (!wraps) {
      // A parameter read only through gathers and scatters (and views of it) is not streamed:
      // take its one counted read back out (the cost model charges it whole).
      for (std::size_t p : random_params) {
        bool only_random = true;
        std::vector<std::size_t> todo{p};
        for (std::size_t steps = 0; !todo.empty() && only_random && steps < 4096; ++steps) {
          const std::size_t cur = todo.back();
          todo.pop_back();
          for (std::size_t u : users[cur]) {
            const Instruction& ui = f.instructions[u];
            if (is_view(ui.opcode) || elementwise_source(f, ui) == cur) {
              todo.push_back(u);
            } else if ((ui.opcode != "gather" && ui.opcode != "scatter") || ui.operand_indices().empty() ||
                       ui.operand_indices()[0] != cur) {
              only_random = false;
              break;
            }
          }
        }
        if (only_random) stream -= leaf_bytes(f.instructions[p].shape);
      }
    }
  }
  // What the random accesses move replaces what the cost model counted for them: for a plain
  // gather its result read (the gathered elements), for a scatter its two update-sized
  // accesses of the target; a scatter into a fused parameter updates it in place, so the
  // fusion's whole-array result write is not traffic either.
  for (const RandomTraffic& t : w.random) {
    if (ins.opcode == "gather" || (ins.opcode == "fusion" && ins.fusion_kind() == "kCustom" && !t.read_modify_write))
      stream -= t.bytes;
    else if (ins.opcode == "scatter" || (ins.opcode == "fusion" && ins.fusion_kind() == "kCustom"))
      stream -= t.bytes;
  }
  if (in_place_root && ins.opcode == "fusion" && ins.fusion_kind() != "kCustom") stream -= w.output_bytes;
  w.stream_bytes = std::max(stream, 0.0);
  if (fused != nullptr) {
    // A fusion also reads its large constants from card memory (they are in the design, not
    // sent from the host with each call).
    for (const Instruction& i : fused->instructions)
      if (i.opcode == "constant" && i.shape.is_array() && i.shape.element_count() > 1)
        w.constant_bytes += leaf_bytes(i.shape);
  }
  w.compulsory_bytes = w.input_bytes + w.constant_bytes + w.output_bytes;
  // Ops that read only part of their operands (slices, in-place updates) need no more than
  // they move as compiled; nothing at all for the free ops (parameters, bitcasts, tuples).
  if (w.random.empty()) w.compulsory_bytes = std::min(w.compulsory_bytes, w.bytes);
  return w;
}

}  // namespace fpgaprof::analysis

#include "fpgaprof/hlo/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <zlib.h>
#include <nlohmann/json.hpp>

#include "fpgaprof/hlo/hlo_parser.hpp"

namespace fpgaprof::hlo {
namespace {

// XLA's shape size: arrays by element count and type; a tuple is its table of 8-byte pointers.
double xla_size(const Shape& s) {
  if (s.is_tuple()) return 8.0 * static_cast<double>(s.tuple.size());
  return static_cast<double>(s.byte_size());
}

// Bytes of every array leaf (what a tuple-shaped result really occupies).
double leaf_bytes(const Shape& s) { return static_cast<double>(s.byte_size()); }

double elements(const Shape& s) { return static_cast<double>(s.is_tuple() ? 0 : s.element_count()); }

const Shape& first_array(const Shape& s) {
  const Shape* p = &s;
  while (p->is_tuple() && !p->tuple.empty()) p = &p->tuple.front();
  return *p;
}

// "{1,2}" -> {1,2}; a number beyond int64 (text from a hostile trace) saturates at INT64_MAX
// (-INT64_MAX with a minus) instead of overflowing.
std::vector<int64_t> int_list(const std::string& v) {
  std::vector<int64_t> out;
  int64_t cur = 0;
  bool in = false;
  bool neg = false;
  for (char c : v) {
    if (c >= '0' && c <= '9') {
      const int digit = c - '0';
      cur = cur > (INT64_MAX - digit) / 10 ? INT64_MAX : cur * 10 + digit;
      in = true;
    } else if (c == '-' && !in) {
      neg = true;
    } else {
      if (in) out.push_back(neg ? -cur : cur);
      cur = 0;
      in = false;
      neg = false;
    }
  }
  if (in) out.push_back(neg ? -cur : cur);
  return out;
}

const std::string* attr(const Instruction& ins, const char* key) {
  auto it = ins.attributes.find(key);
  return it == ins.attributes.end() ? nullptr : &it->second;
}

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

bool is_transcendental_op(const std::string& op) {
  static const std::unordered_set<std::string> kOps = {
      "exponential",           "log",          "logistic", "power", "sqrt", "cbrt", "rsqrt", "tanh", "sine", "cosine",
      "exponential-minus-one", "log-plus-one", "atan2",    "tan",   "erf"};
  return kOps.count(op) != 0;
}

bool is_elementwise_op(const std::string& op) {
  static const std::unordered_set<std::string> kOps = {"abs",
                                                       "add",
                                                       "and",
                                                       "atan2",
                                                       "cbrt",
                                                       "ceil",
                                                       "clamp",
                                                       "clz",
                                                       "compare",
                                                       "complex",
                                                       "convert",
                                                       "cosine",
                                                       "divide",
                                                       "erf",
                                                       "exponential",
                                                       "exponential-minus-one",
                                                       "floor",
                                                       "imag",
                                                       "is-finite",
                                                       "log",
                                                       "log-plus-one",
                                                       "logistic",
                                                       "maximum",
                                                       "minimum",
                                                       "multiply",
                                                       "negate",
                                                       "not",
                                                       "or",
                                                       "popcnt",
                                                       "power",
                                                       "real",
                                                       "reduce-precision",
                                                       "remainder",
                                                       "round-nearest-afz",
                                                       "round-nearest-even",
                                                       "rsqrt",
                                                       "select",
                                                       "shift-left",
                                                       "shift-right-arithmetic",
                                                       "shift-right-logical",
                                                       "sign",
                                                       "sine",
                                                       "sqrt",
                                                       "subtract",
                                                       "tan",
                                                       "tanh",
                                                       "xor",
                                                       "stochastic-convert"};
  return kOps.count(op) != 0;
}

// Ops that move or view data without arithmetic.
bool is_data_movement_op(const std::string& op) {
  static const std::unordered_set<std::string> kOps = {
      "broadcast",       "reshape",    "transpose",     "copy",
      "bitcast",         "slice",      "dynamic-slice", "dynamic-update-slice",
      "concatenate",     "pad",        "reverse",       "iota",
      "bitcast-convert", "copy-start", "copy-done",     "dynamic-reshape"};
  return kOps.count(op) != 0;
}

// Ops that neither compute nor touch memory.
bool is_free_op(const std::string& op) {
  return op == "parameter" || op == "constant" || op == "get-tuple-element" || op == "bitcast" || op == "after-all" ||
         op == "add-dependency" || op == "domain" || op == "opt-barrier";
}

// The figures a custom kernel's author attached to it: Pallas's Triton lowering drops
// pallas_call(cost_estimate=...), but keeps pallas_call(metadata={...}) as a JSON object in the
// custom call (backend_config serialized_metadata, or inside the zlib-compressed `opaque` of
// triton_kernel_call_ffi). The keys are CostEstimate's: "flops", "transcendentals",
// "bytes_accessed" (numbers or strings of numbers; docs/cost-model.md, "Custom kernels").
struct AuthorCost {
  double flops = -1, transcendentals = 0, bytes_accessed = -1;
};

std::string inflate_all(const std::string& in) {
  std::string out;
  if (in.empty() || in.size() > (std::size_t{64} << 20)) return out;
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) return out;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  char buf[65536];
  int rc = Z_OK;
  while (rc == Z_OK && out.size() < (std::size_t{256} << 20)) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
  }
  inflateEnd(&zs);
  return rc == Z_STREAM_END ? out : std::string();
}

bool read_author_cost(const nlohmann::json& j, AuthorCost& c) {
  if (!j.is_object()) return false;
  const auto number = [&](const char* key, double& v) {
    auto it = j.find(key);
    if (it == j.end()) return false;
    try {
      const double x = it->is_string() ? std::stod(it->get<std::string>()) : it->get<double>();
      if (!(std::isfinite(x) && x >= 0)) return false;
      v = x;
      return true;
    } catch (const std::exception&) {
      return false;
    }
  };
  if (!number("flops", c.flops)) return false;
  number("transcendentals", c.transcendentals);
  number("bytes_accessed", c.bytes_accessed);
  return true;
}

bool author_cost(const Instruction& ins, AuthorCost& c) {
  if (!is_triton_custom_call(ins)) return false;
  const std::string meta = backend_config_string(ins, "serialized_metadata");
  if (!meta.empty()) {
    try {
      if (read_author_cost(nlohmann::json::parse(meta), c)) return true;
    } catch (const std::exception&) {}
  }
  // triton_kernel_call_ffi: the metadata's JSON object sits inside the compressed call proto.
  const std::string proto = inflate_all(backend_config_string(ins, "opaque"));
  for (std::size_t at = proto.find("{\""); at != std::string::npos; at = proto.find("{\"", at + 1)) {
    int depth = 0;
    std::size_t end = at;
    for (; end < proto.size() && end < at + 65536; ++end) {
      if (proto[end] == '{') ++depth;
      if (proto[end] == '}' && --depth == 0) break;
    }
    if (depth != 0 || end >= proto.size()) continue;
    try {
      if (read_author_cost(nlohmann::json::parse(proto.substr(at, end - at + 1)), c)) return true;
    } catch (const std::exception&) {}
  }
  return false;
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
  explicit CostModel(Module& m) : m_(m) {
    comp_done_.assign(m.computations.size(), 0);
    comp_cost_.resize(m.computations.size());
  }

  void run() {
    // Every computation gets per-instruction costs, reached or not, so that all are filled.
    for (std::size_t c = 0; c < m_.computations.size(); ++c) computation_cost(c);
    m_.total = Cost{};
    m_.unknown_cost_instructions = 0;
    if (const Computation* e = m_.entry()) {
      m_.total = comp_cost_[m_.entry_index];
      m_.total.output_bytes = e->root() ? xla_size(e->root()->shape) : 0;
    }
    for (const Computation& c : m_.computations) {
      for (const Instruction& i : c.instructions) {
        if (i.cost.unknown && i.opcode == "custom-call") ++m_.unknown_cost_instructions;
      }
    }
  }

 private:
  // Sum of the instructions' costs of one computation (XLA's sub-computation properties).
  const Cost& computation_cost(std::size_t idx) {
    if (comp_done_[idx] == 2) return comp_cost_[idx];
    if (comp_done_[idx] == 1) return comp_cost_[idx];  // recursion: XLA HLO has none; stay finite
    comp_done_[idx] = 1;
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
    comp_done_[idx] = 2;
    return comp_cost_[idx];
  }

  const Computation* callee(const Instruction& ins, std::size_t k = 0) const {
    if (k >= ins.called_computations.size()) return nullptr;
    return m_.find(ins.called_computations[k]);
  }
  std::size_t callee_index(const Computation* c) const { return static_cast<std::size_t>(c - m_.computations.data()); }
  const Computation* named_callee(const Instruction& ins, const char* key) const {
    const std::string* v = attr(ins, key);
    if (v == nullptr) return nullptr;
    std::string n = *v;
    if (!n.empty() && n.front() == '%') n.erase(0, 1);
    return m_.find(n);
  }
  // Flops/transcendentals of one application of a scalar computation (to_apply, ...).
  Cost sub(const Computation* c) { return c ? computation_cost(callee_index(c)) : Cost{}; }

  void set_default_bytes(Instruction& ins) {
    double r = 0;
    for (const Shape& s : ins.operand_shapes) r += xla_size(s);
    ins.cost.bytes_read = r;
    ins.cost.bytes_written = xla_size(ins.shape);
  }

  void cost_instruction(Instruction& ins, const Computation& comp) {
    Cost& cost = ins.cost;
    cost = Cost{};
    const std::string& op = ins.opcode;
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
      ins.pattern = AccessPattern::kElementwise;
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
      cost.bytes_read = xla_size(ins.shape) + (ins.operand_shapes.size() > 1 ? xla_size(ins.operand_shapes[1]) : 0);
      cost.bytes_written = xla_size(ins.shape);
      ins.pattern = AccessPattern::kDataMovement;
      return;
    }
    if (op == "dynamic-update-slice") {
      const double upd = ins.operand_shapes.size() > 1 ? xla_size(ins.operand_shapes[1]) : 0;
      cost.bytes_read = upd + (ins.operand_shapes.size() > 2 ? xla_size(ins.operand_shapes[2]) : 0);
      cost.bytes_written = upd;
      cost.working_set_bytes = upd;
      ins.pattern = AccessPattern::kDataMovement;
      return;
    }
    if (op == "tuple") {
      cost.bytes_read = 0;
      ins.pattern = AccessPattern::kDataMovement;
      cost.working_set_bytes = 0;
      return;
    }
    if (is_data_movement_op(op)) {
      ins.pattern = AccessPattern::kDataMovement;
      return;
    }
    if (op == "dot") {
      cost.flops = dot_flops(ins);
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
      if (const std::string* fl = attr(ins, "fft_length")) {
        for (int64_t d : int_list(*fl))
          log_factors *= static_cast<double>(log2_floor(static_cast<uint64_t>(std::max<int64_t>(d, 1))));
      }
      const double n = ins.operand_shapes.empty() ? 0 : elements(first_array(ins.operand_shapes[0]));
      cost.flops = 2.0 * 4.0 * log_factors * n;
      ins.pattern = AccessPattern::kFft;
      return;
    }
    if (op == "reduce") {
      const double in = ins.operand_shapes.empty() ? 0 : elements(ins.operand_shapes[0]);
      const double out = elements(first_array(ins.shape));
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
      const double src = ins.operand_shapes.size() > 1 ? elements(ins.operand_shapes[1]) : 0;
      const double win = window_elements(ins);
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
      const double n = ins.operand_shapes.empty() ? 0 : elements(ins.operand_shapes[0]);
      cost.flops = n * static_cast<double>(log2_ceil(static_cast<uint64_t>(n)));
      // A multi-operand sort writes every array of its tuple result, not a pointer table.
      cost.bytes_written = leaf_bytes(ins.shape);
      ins.pattern = AccessPattern::kSort;
      return;
    }
    if (op == "rng" || op == "rng-bit-generator") {
      double n = 0;
      if (ins.shape.is_tuple()) {
        for (const Shape& t : ins.shape.tuple) n += elements(t);
      } else {
        n = elements(ins.shape);
      }
      cost.transcendentals = n;
      ins.pattern = AccessPattern::kElementwise;
      return;
    }
    if (op == "fusion") {
      fusion(ins, comp);
      return;
    }
    if (op == "while") {
      const Cost b = sub(named_callee(ins, "body"));
      const Cost c = sub(named_callee(ins, "condition"));
      add_sub(cost, b);
      add_sub(cost, c);
      cost.bytes_read = b.bytes_read + c.bytes_read;
      cost.bytes_written = b.bytes_written + c.bytes_written;
      cost.per_iteration = true;
      ins.pattern = AccessPattern::kControl;
      return;
    }
    if (op == "conditional") {
      Cost mx;
      for (std::size_t k = 0; k < ins.called_computations.size(); ++k) {
        const Cost b = sub(callee(ins, k));
        mx.flops = std::max(mx.flops, b.flops);
        mx.transcendentals = std::max(mx.transcendentals, b.transcendentals);
        mx.bytes_read = std::max(mx.bytes_read, b.bytes_read);
        mx.bytes_written = std::max(mx.bytes_written, b.bytes_written);
        mx.working_set_bytes = std::max(mx.working_set_bytes, b.working_set_bytes);
        mx.unknown = mx.unknown || b.unknown;
      }
      cost.flops = mx.flops;
      cost.transcendentals = mx.transcendentals;
      cost.bytes_read = mx.bytes_read;
      cost.bytes_written = mx.bytes_written;
      cost.working_set_bytes = std::max(cost.working_set_bytes, mx.working_set_bytes);
      cost.unknown = mx.unknown;
      cost.per_iteration = true;
      ins.pattern = AccessPattern::kControl;
      return;
    }
    if (op == "call" || op == "async-start") {
      const Cost b = sub(callee(ins));
      add_sub(cost, b);
      cost.bytes_read = b.bytes_read;
      cost.bytes_written = b.bytes_written;
      cost.per_iteration = b.per_iteration;
      ins.pattern = AccessPattern::kControl;
      return;
    }
    if (op == "async-update" || op == "async-done") {
      cost.bytes_read = cost.bytes_written = 0;
      ins.pattern = AccessPattern::kControl;
      return;
    }
    if (op == "custom-call") {
      custom_call(ins);
      return;
    }
    if (op == "all-reduce" || op == "all-reduce-start") {
      double n = 0;
      if (ins.shape.is_tuple()) {
        for (const Shape& t : ins.shape.tuple) n += elements(t);
      } else {
        n = elements(ins.shape);
      }
      cost.flops = n;
      ins.pattern = AccessPattern::kReduction;
      return;
    }
    if (op == "triangular-solve" && ins.operand_shapes.size() == 2) {
      const Shape& a = ins.operand_shapes[0];
      cost.bytes_read = xla_size(a) / 2 + xla_size(ins.operand_shapes[1]);
      cost.flops = 2.0 * static_cast<double>(a.dims.empty() ? 1 : a.dims.back()) * elements(ins.operand_shapes[1]);
      ins.pattern = AccessPattern::kDot;
      return;
    }
    if (op == "cholesky" && !ins.operand_shapes.empty()) {
      const Shape& a = ins.operand_shapes[0];
      cost.bytes_read = cost.bytes_written = xla_size(a) / 2;
      cost.flops = std::floor(static_cast<double>(a.dims.empty() ? 1 : a.dims.back()) * elements(a) / 3);
      ins.pattern = AccessPattern::kDot;
      return;
    }
    // Remaining ops (collectives, send/recv, infeed, ...): default bytes, no arithmetic.
    ins.pattern = AccessPattern::kDataMovement;
  }

  static void add_sub(Cost& cost, const Cost& b) {
    cost.flops += b.flops;
    cost.transcendentals += b.transcendentals;
    cost.working_set_bytes = std::max(cost.working_set_bytes, b.working_set_bytes);
    cost.unknown = cost.unknown || b.unknown;
  }

  // A transpose whose physical layout equals its operand's is a bitcast (no data moves).
  static bool transpose_is_bitcast(const Instruction& ins) {
    if (ins.operand_shapes.empty()) return false;
    const Shape& in = ins.operand_shapes[0];
    const Shape& out = ins.shape;
    if (!in.has_layout || !out.has_layout || in.layout.size() != out.layout.size()) return false;
    const std::string* d = attr(ins, "dimensions");
    if (d == nullptr) return false;
    const std::vector<int64_t> perm = int_list(*d);
    if (perm.size() != out.layout.size()) return false;
    for (std::size_t k = 0; k < out.layout.size(); ++k) {
      const int64_t o = out.layout[k];
      if (o < 0 || static_cast<std::size_t>(o) >= perm.size()) return false;
      if (perm[static_cast<std::size_t>(o)] != in.layout[k]) return false;
    }
    return true;
  }

  static double dot_flops(const Instruction& ins) {
    if (ins.operand_shapes.empty()) return 0;
    const Shape& lhs = ins.operand_shapes[0];
    double width = 1;
    if (const std::string* c = attr(ins, "lhs_contracting_dims")) {
      for (int64_t d : int_list(*c)) width *= static_cast<double>(dim(lhs, d));
    }
    return 2.0 * elements(first_array(ins.shape)) * width;
  }

  struct WindowDim {
    int64_t size = 1, stride = 1, pad_lo = 0, pad_hi = 0, lhs_dilate = 1, rhs_dilate = 1;
  };

  // window={size=3x3 stride=2x2 pad=1_1x0_0 lhs_dilate=.. rhs_dilate=..}
  static std::vector<WindowDim> parse_window(const Instruction& ins) {
    std::vector<WindowDim> w;
    const std::string* v = attr(ins, "window");
    if (v == nullptr) return w;
    std::string s = *v;
    auto field = [&](const std::string& key) -> std::string {
      std::size_t p = 0;
      while ((p = s.find(key + "=", p)) != std::string::npos) {
        if (p == 0 || s[p - 1] == ' ' || s[p - 1] == '{') break;
        p += key.size();
      }
      if (p == std::string::npos) return {};
      p += key.size() + 1;
      std::size_t e = s.find_first_of(" }", p);
      return s.substr(p, e == std::string::npos ? std::string::npos : e - p);
    };
    auto split = [](const std::string& t, char sep) {
      std::vector<std::string> parts;
      std::size_t a = 0;
      while (true) {
        std::size_t b = t.find(sep, a);
        parts.push_back(t.substr(a, b == std::string::npos ? std::string::npos : b - a));
        if (b == std::string::npos) break;
        a = b + 1;
      }
      return parts;
    };
    auto to_i = [](const std::string& t) -> int64_t {
      int64_t r = 0;
      bool neg = false;
      for (char c : t) {
        if (c == '-') neg = true;
        if (c >= '0' && c <= '9') r = r * 10 + (c - '0');
        if (r > (int64_t{1} << 40)) break;
      }
      return neg ? -r : r;
    };
    const std::string size = field("size");
    if (size.empty()) return w;
    for (const std::string& p : split(size, 'x')) {
      WindowDim d;
      d.size = to_i(p);
      w.push_back(d);
    }
    auto apply = [&](const std::string& key, auto setter) {
      std::string f = field(key);
      if (f.empty()) return;
      auto parts = split(f, 'x');
      for (std::size_t k = 0; k < parts.size() && k < w.size(); ++k) setter(w[k], parts[k]);
    };
    apply("stride", [&](WindowDim& d, const std::string& t) { d.stride = to_i(t); });
    apply("lhs_dilate", [&](WindowDim& d, const std::string& t) { d.lhs_dilate = to_i(t); });
    apply("rhs_dilate", [&](WindowDim& d, const std::string& t) { d.rhs_dilate = to_i(t); });
    apply("pad", [&](WindowDim& d, const std::string& t) {
      auto lh = split(t, '_');
      d.pad_lo = to_i(lh[0]);
      d.pad_hi = lh.size() > 1 ? to_i(lh[1]) : 0;
    });
    return w;
  }

  static double window_elements(const Instruction& ins) {
    double n = 1;
    for (const WindowDim& d : parse_window(ins)) n *= static_cast<double>(d.size);
    return n;
  }

  void reduce_window(Instruction& ins) {
    Cost& cost = ins.cost;
    const std::vector<WindowDim> w = parse_window(ins);
    double win = 1;
    for (const WindowDim& d : w) win *= static_cast<double>(d.size);
    const Shape& out = first_array(ins.shape);
    const double out_n = elements(out);
    double count = (win - 1) * out_n;
    // A window spanning a whole padded dimension is a reduce + broadcast (prefix sums):
    // XLA counts it as one pass over the dimension.
    int reducing = 0, padded = 0;
    for (const WindowDim& d : w) {
      reducing += d.size != 1;
      padded += (d.pad_lo != 0 || d.pad_hi != 0);
    }
    if (reducing == 1 && padded == 1 && !ins.shape.is_tuple()) {
      for (std::size_t k = 0; k < w.size(); ++k) {
        const WindowDim& d = w[k];
        if (d.size != 1 && d.pad_lo != 0 && d.pad_lo == d.pad_hi && d.size == 2 * d.pad_lo + 1) {
          const int64_t span = dim(out, static_cast<int64_t>(k));
          if (d.pad_lo == span - 1 && span > 0) {
            count = out_n / static_cast<double>(span) + static_cast<double>(span - 1);
          }
          break;
        }
      }
    }
    const Cost f = sub(callee(ins));
    cost.flops = f.flops * count;
    cost.transcendentals = f.transcendentals * count;
  }

  // Number of multiply-adds of a convolution: per spatial dimension, the (kernel, output)
  // position pairs that land on a real (not padding, not dilation hole) input element.
  // Operand 0 is the input, operand 1 the kernel, the result (its first array for a cuDNN
  // call's tuple) the output, each read through its part of dim_labels: XLA's
  // HloCostAnalysis::GetConvolutionFlops, which the GPU cost analysis applies unchanged to the
  // backward-input and backward-filter calls too.
  static double convolution_flops(const Instruction& ins) {
    if (ins.operand_shapes.size() < 2) return 0;
    const Shape& lhs = ins.operand_shapes[0];
    const Shape& rhs = ins.operand_shapes[1];
    const Shape& out = first_array(ins.shape);
    const std::string* labels = attr(ins, "dim_labels");
    if (labels == nullptr) return 0;
    // e.g. b01f_01io->b01f
    const std::string& l = *labels;
    std::size_t u = l.find('_'), a = l.find("->");
    if (u == std::string::npos || a == std::string::npos || a < u) return 0;
    const std::string in_l = l.substr(0, u), k_l = l.substr(u + 1, a - u - 1), o_l = l.substr(a + 2);
    auto pos = [](const std::string& s, char c) -> int64_t {
      std::size_t p = s.find(c);
      return p == std::string::npos ? -1 : static_cast<int64_t>(p);
    };
    auto spatial = [](const std::string& s, std::size_t k) -> int64_t {
      for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] >= '0' && s[i] <= '9' && static_cast<std::size_t>(s[i] - '0') == k) return static_cast<int64_t>(i);
      }
      return -1;
    };
    const int64_t in_feature = dim(lhs, pos(in_l, 'f'));
    const int64_t batch = dim(lhs, pos(in_l, 'b'));
    const int64_t out_feature = dim(out, pos(o_l, 'f'));
    auto group = [&](const char* key) -> int64_t {
      const std::string* g = attr(ins, key);
      if (g == nullptr) return 1;
      auto v = int_list(*g);
      return v.empty() || v[0] <= 0 ? 1 : v[0];
    };
    std::vector<WindowDim> w = parse_window(ins);
    double positions = 1;
    for (std::size_t k = 0; k < w.size(); ++k) {
      const WindowDim& d = w[k];
      const int64_t kl = dim(rhs, spatial(k_l, k)), ol = dim(out, spatial(o_l, k)), il = dim(lhs, spatial(in_l, k));
      int64_t valid = 0;
      if (d.stride == 1 && d.lhs_dilate == 1) {
        // Unit stride, no base dilation: kernel tap kk meets input positions o - pad_lo +
        // kk * rhs_dilate, o in [0, ol): those in [0, il) count.
        for (int64_t kk = 0; kk < kl; ++kk) {
          const int64_t shift = d.pad_lo - kk * d.rhs_dilate;
          valid += std::max<int64_t>(std::min(il + shift, ol) - std::max<int64_t>(shift, 0), 0);
        }
      } else if (static_cast<double>(kl) * static_cast<double>(ol) > 1e8) {
        valid = ol * kl;  // too large to enumerate; upper bound
      } else {
        for (int64_t kk = 0; kk < kl; ++kk) {
          for (int64_t oo = 0; oo < ol; ++oo) {
            const int64_t undilated = oo * d.stride - d.pad_lo + kk * d.rhs_dilate;
            const int64_t base = d.lhs_dilate > 1 ? undilated / d.lhs_dilate : undilated;
            if (d.lhs_dilate > 1 && base * d.lhs_dilate != undilated) continue;
            if (base < 0 || base >= il) continue;
            ++valid;
          }
        }
      }
      positions *= static_cast<double>(valid);
    }
    const double fma = static_cast<double>(in_feature / group("feature_group_count")) *
                       static_cast<double>(out_feature) * static_cast<double>(batch / group("batch_group_count")) *
                       positions;
    return 2.0 * fma;
  }

  void gather(Instruction& ins) {
    Cost& cost = ins.cost;
    const double out = xla_size(ins.shape);
    cost.bytes_read = out + (ins.operand_shapes.size() > 1 ? xla_size(ins.operand_shapes[1]) : 0);
    cost.bytes_written = out;
    ins.pattern = AccessPattern::kGatherScatter;
  }

  void scatter(Instruction& ins) {
    Cost& cost = ins.cost;
    // operands: N inputs, indices, N updates
    const std::size_t total = ins.operand_shapes.size();
    const std::size_t n = total >= 3 ? (total - 1) / 2 : 0;
    double upd = 0, upd_elems = 0;
    for (std::size_t k = 0; k < n; ++k) upd += xla_size(ins.operand_shapes[n + 1 + k]);
    if (n > 0) upd_elems = elements(ins.operand_shapes[n + 1]);
    const double idx = n > 0 ? xla_size(ins.operand_shapes[n]) : 0;
    cost.bytes_read = 2 * upd + idx;
    cost.bytes_written = upd;
    const Cost f = sub(callee(ins));
    cost.flops = f.flops * upd_elems;
    cost.transcendentals = f.transcendentals * upd_elems;
    ins.pattern = AccessPattern::kGatherScatter;
  }

  void custom_call(Instruction& ins) {
    Cost& cost = ins.cost;
    const std::string& t = ins.custom_call_target;
    if (is_cudnn_convolution(t) && ins.operand_shapes.size() >= 2 && attr(ins, "dim_labels") != nullptr) {
      // XLA's GpuHloCostAnalysis::HandleCustomCall: the convolution's FLOPs; bytes are the
      // operands (bias, side input and scales included) and the convolution result, not the
      // scratch buffer of the result tuple.
      const Shape& result = first_array(ins.shape);
      cost.flops = convolution_flops(ins);
      double r = 0;
      for (const Shape& s : ins.operand_shapes) r += xla_size(s);
      cost.bytes_read = r;
      cost.bytes_written = xla_size(result);
      cost.output_bytes = leaf_bytes(result);
      cost.working_set_bytes = cost.output_bytes;
      ins.pattern = AccessPattern::kConvolution;
      return;
    }
    if (is_cublas_gemm(t) && ins.operand_shapes.size() >= 2) {
      const Shape& result = first_array(ins.shape);
      const Shape& lhs = ins.operand_shapes[0];
      double width = -1;
      try {
        // Only find(): operator[] on a missing key of a const json asserts.
        const nlohmann::json j = nlohmann::json::parse(ins.backend_config);
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
      for (const Shape& s : ins.operand_shapes) r += leaf_bytes(s);
      cost.bytes_read = r;
      cost.bytes_written = leaf_bytes(result);
      cost.output_bytes = leaf_bytes(result);
      cost.working_set_bytes = cost.output_bytes;
      ins.pattern = AccessPattern::kDot;
      return;
    }
    // No rule: bytes are the operands and results (a lower bound), flops unknown, unless the
    // kernel's author gave its figures.
    double r = 0;
    for (const Shape& s : ins.operand_shapes) r += leaf_bytes(s);
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
  void fusion(Instruction& ins, const Computation& /*comp*/) {
    Cost& cost = ins.cost;
    const Computation* fc = callee(ins);
    if (fc == nullptr) return;
    const std::size_t fi = callee_index(fc);
    const Cost inner = computation_cost(fi);
    const Computation& f = m_.computations[fi];
    ins.pattern = fusion_pattern(f);

    // Custom fusions wrapping a gather/scatter cost as that op (XLA's rule).
    if (ins.fusion_kind == "kCustom") {
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

    // Written: each array leaf of the result; an in-place dynamic-update-slice root writes only
    // its update.
    const Instruction* root = f.root();
    double written = 0;
    if (root != nullptr && !ins.shape.is_tuple()) {
      written = root->opcode == "dynamic-update-slice" && root->operand_shapes.size() > 1
                    ? xla_size(root->operand_shapes[1])
                    : xla_size(ins.shape);
    } else if (root != nullptr) {
      for (std::size_t k = 0; k < ins.shape.tuple.size(); ++k) {
        const Shape& leaf = ins.shape.tuple[k];
        const Instruction* elem = nullptr;
        if (root->opcode == "tuple" && k < root->operands.size()) elem = f.find(root->operands[k]);
        if (elem != nullptr && elem->opcode == "dynamic-update-slice" && elem->operand_shapes.size() > 1) {
          written += xla_size(elem->operand_shapes[1]);
        } else {
          written += leaf.is_tuple() ? leaf_bytes(leaf) : xla_size(leaf);
        }
      }
    }
    cost.bytes_written = written;

    // Read: large constants inside, plus what each parameter's users really read.
    double read = 0;
    const Users& users = users_of(fi);
    for (std::size_t k = 0; k < f.instructions.size(); ++k) {
      const Instruction& i = f.instructions[k];
      if (i.opcode == "constant" && i.shape.is_array() && i.shape.element_count() > 1) read += xla_size(i.shape);
      if (i.opcode == "parameter") read += parameter_read_bytes(fi, k, users, 0);
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

  using Users = std::vector<std::vector<std::size_t>>;  // per instruction: unique user positions

  const Users& users_of(std::size_t comp_idx) {
    auto it = users_.find(comp_idx);
    if (it != users_.end()) return it->second;
    const Computation& c = m_.computations[comp_idx];
    Users u(c.instructions.size());
    for (std::size_t k = 0; k < c.instructions.size(); ++k) {
      const Instruction& i = c.instructions[k];
      for (std::size_t o : i.operand_indices) {
        if (o >= u.size()) continue;
        auto& list = u[o];
        if (list.empty() || list.back() != k) list.push_back(k);
      }
    }
    return users_.emplace(comp_idx, std::move(u)).first->second;
  }

  // Bytes a fused parameter (or a get-tuple-element of one) reads from memory: slicing users
  // read their slice, broadcast/reshape users each read it all, others share one read.
  double parameter_read_bytes(std::size_t comp_idx, std::size_t pos, const Users& users, int depth) {
    const Computation& c = m_.computations[comp_idx];
    const Instruction& p = c.instructions[pos];
    if (p.shape.is_tuple()) {
      double sum = 0;
      for (std::size_t u : users[pos]) {
        if (c.instructions[u].opcode == "get-tuple-element" && depth < 16) {
          sum += parameter_read_bytes(comp_idx, u, users, depth + 1);
        }
      }
      return sum;
    }
    const double full = xla_size(p.shape);
    double size = 0;
    bool shared = false;
    for (std::size_t u : users[pos]) {
      const Instruction& user = c.instructions[u];
      const std::string& op = user.opcode;
      const bool first_operand = !user.operands.empty() && user.operands[0] == p.name;
      if (op == "fusion" && depth < 16) {
        const Computation* nested = callee(user);
        if (nested == nullptr) continue;
        const std::size_t ni = callee_index(nested);
        const Users& nu = users_of(ni);
        for (std::size_t k = 0; k < user.operands.size(); ++k) {
          if (user.operands[k] != p.name) continue;
          for (std::size_t q = 0; q < nested->instructions.size(); ++q) {
            if (nested->instructions[q].opcode == "parameter" &&
                nested->instructions[q].parameter_number == static_cast<int64_t>(k)) {
              size += parameter_read_bytes(ni, q, nu, depth + 1);
            }
          }
        }
      } else if (op == "slice") {
        size += xla_size(user.shape);
      } else if (op == "dynamic-slice") {
        if (first_operand) {
          size += xla_size(user.shape);
        } else if (!shared) {
          shared = true;
          size += full;
        }
      } else if (op == "dynamic-update-slice") {
        if (!first_operand && !shared) {
          shared = true;
          size += full;
        }
      } else if (op == "broadcast" || op == "reshape") {
        size += full;
      } else if (!shared) {
        shared = true;
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
  std::vector<int> comp_done_;
  std::vector<Cost> comp_cost_;
  std::unordered_map<std::size_t, Users> users_;
};

}  // namespace

void analyze_costs(Module& module) { CostModel(module).run(); }

Module analyze_hlo(std::string_view text) {
  Module m = parse_hlo_module(text);
  analyze_costs(m);
  return m;
}

}  // namespace fpgaprof::hlo

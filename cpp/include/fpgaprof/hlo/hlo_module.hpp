// Parsed HLO: modules, computations, instructions, shapes, and per-instruction static cost.
// Produced by parse_hlo_module() (hlo_parser.hpp) and annotated by the cost model
// (cost_model.hpp). Owns all its data; immutable after analysis; safe to share read-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fpgaprof::hlo {

enum class PrimitiveType : uint8_t {
  kInvalid,
  kPred,
  kS2,
  kS4,
  kS8,
  kS16,
  kS32,
  kS64,
  kU2,
  kU4,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kF8E5M2,
  kF8E4M3FN,
  kF8E4M3B11FNUZ,
  kF8E5M2FNUZ,
  kF8E4M3FNUZ,
  kF8E4M3,
  kF8E3M4,
  kF8E8M0FNU,
  kF4E2M1FN,
  kC64,
  kC128,
  kToken,
  kTuple,
  kOpaque,
  kS1,
  kU1,
};

// Size of one element in bits (0 for token/tuple/opaque; 64 for opaque in byte sizes: a pointer).
int primitive_bits(PrimitiveType t);
const char* primitive_name(PrimitiveType t);

struct Shape {
  PrimitiveType type = PrimitiveType::kInvalid;
  std::vector<int64_t> dims;       // empty for scalars
  std::vector<int64_t> layout;     // minor-to-major, empty if not printed
  std::vector<Shape> tuple;        // elements when type == kTuple
  std::vector<bool> dynamic_dims;  // true where the dim was printed `<=N` (N kept in dims) or `?`
                                   // (unbounded: 0 in dims); empty if none
  int element_size_in_bits = 0;    // layout `E(n)`: packed sub-byte storage; 0 = one byte or more per element
  int memory_space = 0;            // layout `S(n)`
  bool has_layout = false;         // a `{...}` layout was printed
  int64_t element_count() const;   // product of dims (1 for scalars); 0 for tuples
  int64_t byte_size() const;       // sum over tuple elements; sub-byte types take a whole byte each
                                   // unless the layout packs them (E(n)): then ceil(count*n/8); a
                                   // dynamic array adds 4 bytes of size per dimension (XLA's CPU and
                                   // GPU shape size); opaque 8 bytes (a pointer), token 0
  bool is_dynamic() const;         // an array with a `<=N` or `?` dimension
  bool is_tuple() const { return type == PrimitiveType::kTuple; }
  bool is_array() const { return !is_tuple() && type != PrimitiveType::kToken && type != PrimitiveType::kOpaque; }
};

struct Metadata {
  std::string op_type;
  std::string op_name;  // JAX op path, e.g. "jit(f)/jit(main)/mul"
  std::string source_file;
  int64_t source_line = -1;
  int64_t stack_frame_id = -1;  // newer XLA: resolved into source_file/line by the parser
  int64_t source_column = -1;   // from the stack-frame table (newer XLA) when printed
  std::string function_name;    // from the stack-frame table (newer XLA) when printed
};

// One row of the module's stack-frame table (newer XLA prints FileNames, FunctionNames,
// FileLocations, StackFrames next to the computations). Frame ids are 1-based.
struct StackFrame {
  std::string file;
  std::string function;
  int64_t line = -1;
  int64_t column = -1;
  int64_t parent_id = 0;  // 0 = outermost frame
};

// Static cost of one instruction (for a fusion: of the whole fused computation, bytes at its boundary).
struct Cost {
  double flops = 0;  // floating point + integer arithmetic ops (XLA's convention: see docs/cost-model.md)
  double transcendentals = 0;
  double bytes_read = 0;     // bytes read from device memory (operands at the boundary)
  double bytes_written = 0;  // bytes written to device memory
  double output_bytes = 0;
  double working_set_bytes = 0;  // largest live intermediate inside (fusions), else output size
  bool per_iteration = false;    // while/conditional: cost of one iteration/branch
  bool unknown = false;          // custom call with no cost rule (bytes: operands + results, a lower bound)
  bool from_author = false;      // a custom kernel's own figures (its metadata), not a rule
  double bytes_accessed() const { return bytes_read + bytes_written; }
};

// Access pattern class, used by the FPGA model.
enum class AccessPattern : uint8_t {
  kUnknown,
  kElementwise,
  kStencil,
  kReduction,
  kGatherScatter,
  kDot,
  kConvolution,
  kFft,
  kSort,
  kDataMovement,
  kControl,
  kLibraryCall,
};
const char* access_pattern_name(AccessPattern p);

struct Instruction;

// The shapes of an instruction's operands, in order, as a read-only list (size(), [k], range-for).
// An operand defined in the same computation is read from that instruction's shape, not copied
// (4 bytes an operand: a module of 10^6 binary instructions saved ~0.4 GB this way); a shape
// known only from the text (an operand printed with its shape in place and defined elsewhere)
// is kept here. Bound to its computation's instructions by position (Computation keeps the
// binding when copied); an Instruction copied out of its computation reads the original's.
class OperandShapes {
 public:
  OperandShapes() = default;
  OperandShapes(const OperandShapes& o)
      : base_(o.base_), slot_(o.slot_), owned_(o.owned_ ? new std::vector<Shape>(*o.owned_) : nullptr) {}
  OperandShapes& operator=(const OperandShapes& o) {
    if (this != &o) {
      base_ = o.base_;
      slot_ = o.slot_;
      owned_.reset(o.owned_ ? new std::vector<Shape>(*o.owned_) : nullptr);
    }
    return *this;
  }
  OperandShapes(OperandShapes&&) noexcept = default;
  OperandShapes& operator=(OperandShapes&&) noexcept = default;

  std::size_t size() const { return slot_.size(); }
  bool empty() const { return slot_.empty(); }
  const Shape& operator[](std::size_t k) const;  // an unknown shape (kInvalid) where none is known

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Shape;
    using difference_type = std::ptrdiff_t;
    using pointer = const Shape*;
    using reference = const Shape&;
    const_iterator(const OperandShapes* list, std::size_t k) : list_(list), k_(k) {}
    const Shape& operator*() const { return (*list_)[k_]; }
    const Shape* operator->() const { return &(*list_)[k_]; }
    const_iterator& operator++() {
      ++k_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator r = *this;
      ++k_;
      return r;
    }
    bool operator==(const const_iterator& o) const { return k_ == o.k_; }
    bool operator!=(const const_iterator& o) const { return k_ != o.k_; }

   private:
    const OperandShapes* list_;
    std::size_t k_;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, slot_.size()}; }
  std::vector<Shape> to_vector() const { return {begin(), end()}; }

  // Building (the parser). push_back: the next operand's shape as the text gives it (kInvalid:
  // none given); resize: operands with no shape given up to n; refer: operand k is
  // instruction `position` of the computation; bind: where the computation's instructions are.
  void push_back(Shape shape);
  void resize(std::size_t n) { slot_.resize(n, kNone); }
  void refer(std::size_t k, std::size_t position) { slot_[k] = static_cast<uint32_t>(position); }
  void bind(const Instruction* instructions) { base_ = instructions; }
  static constexpr std::size_t kMaxPosition = 0x7fffffff;  // instructions a computation may hold

 private:
  static constexpr uint32_t kNone = 0xffffffffU;
  static constexpr uint32_t kOwned = 0x80000000U;
  const Instruction* base_ = nullptr;
  std::vector<uint32_t> slot_;                 // a position in base_, kOwned | k into owned_, or kNone
  std::unique_ptr<std::vector<Shape>> owned_;  // shapes known only from the text
};

struct Instruction {
  std::string name;    // without the leading '%'
  std::string opcode;  // "fusion", "add", "custom-call", ...
  Shape shape;
  std::vector<std::string> operands;                           // operand instruction names (no '%')
  OperandShapes operand_shapes;                                // resolved by the parser
  std::vector<std::size_t> operand_indices;                    // position of each operand in the same computation
                                                               // (SIZE_MAX for an operand given only by inline shape)
  std::map<std::string, std::string, std::less<>> attributes;  // raw text of every attribute (kind=, calls=,
                                                               // ...); a value re-wrapped over lines as on one
  std::string fusion_kind;                                     // "kLoop", "kInput", "kOutput", "kCustom" or empty
  std::vector<std::string> called_computations;  // calls=, to_apply=, body=, condition=, branch_computations=
                                                 // (a computation written in place there is named
                                                 // "<instruction>.<attribute>[.<position>]")
  std::string custom_call_target;
  std::string backend_config;  // raw JSON/text
  Metadata metadata;
  bool is_root = false;
  int line = 0;                       // 1-based line in the module text
  std::size_t computation_index = 0;  // position of the owning computation in Module::computations
  int64_t parameter_number = -1;      // parameter(N)
  int64_t known_trip_count = -1;      // while: backend_config known_trip_count, -1 if not printed
  Cost cost;                          // filled by the cost model
  AccessPattern pattern = AccessPattern::kUnknown;
};

// A field of an instruction's backend_config printed as an MLIR dictionary (typed-FFI custom
// calls: `backend_config={name = "add_kernel", grid_x = 4 : i32, ...}`), its string value
// unescaped (MLIR's \XX hex escapes); "" when absent or not a string.
std::string backend_config_string(const Instruction& ins, std::string_view key);

// A Pallas/Triton custom call: target __gpu$xla.gpu.triton (jaxlib <= 0.10.2) or
// triton_kernel_call_ffi (later). Its kernel's name is backend_config_string(ins, "name").
bool is_triton_custom_call(const Instruction& ins);

// A Mosaic GPU custom call (Pallas's Mosaic GPU backend, jax.experimental.mosaic.gpu): target
// mosaic_gpu_v2 (typed FFI, backend_config {kernel_hash, module = MLIR bytecode, ...}) or
// mosaic_gpu (older JAX, and its forward-compatible export form).
bool is_mosaic_gpu_custom_call(const Instruction& ins);

// The name the GPU kernel of a custom kernel call runs under, when the HLO tells it; "" when
// it does not. Triton: backend_config's `name`. Mosaic GPU (JAX 0.7 on): the host function
// `<name>_mosaic_gpu` found in the call's MLIR module, whose launch MLIR's
// gpu-kernel-outlining turns into the kernel `<name>_mosaic_gpu_kernel`.
std::string custom_kernel_name(const Instruction& ins);

inline const Shape& OperandShapes::operator[](std::size_t k) const {
  static const Shape kUnknown;
  const uint32_t s = slot_[k];
  if (s == kNone) return kUnknown;
  if ((s & kOwned) != 0) return (*owned_)[s & ~kOwned];
  return base_[s].shape;
}

inline void OperandShapes::push_back(Shape shape) {
  if (shape.type == PrimitiveType::kInvalid) {
    slot_.push_back(kNone);
    return;
  }
  if (!owned_) owned_ = std::make_unique<std::vector<Shape>>();
  slot_.push_back(kOwned | static_cast<uint32_t>(owned_->size()));
  owned_->push_back(std::move(shape));
}

struct Computation {
  Computation() = default;
  // A copy's operand shapes read the copy's instructions.
  Computation(const Computation& o)
      : name(o.name),
        is_entry(o.is_entry),
        is_fusion(o.is_fusion),
        instructions(o.instructions),
        index(o.index),
        root_index(o.root_index) {
    bind_operand_shapes();
  }
  Computation& operator=(const Computation& o) {
    if (this != &o) {
      name = o.name;
      is_entry = o.is_entry;
      is_fusion = o.is_fusion;
      instructions = o.instructions;
      index = o.index;
      root_index = o.root_index;
      bind_operand_shapes();
    }
    return *this;
  }
  Computation(Computation&&) noexcept = default;
  Computation& operator=(Computation&&) noexcept = default;
  void bind_operand_shapes() {
    for (Instruction& i : instructions) i.operand_shapes.bind(instructions.data());
  }

  std::string name;
  bool is_entry = false;
  bool is_fusion = false;  // called by a fusion instruction
  std::vector<Instruction> instructions;
  std::unordered_map<std::string, std::size_t> index;  // instruction name -> position
  std::size_t root_index = 0;                          // position of the ROOT instruction (last one if none is marked)
  const Instruction* root() const;
  const Instruction* find(const std::string& name) const;
};

// The computations on the current path of a walk down a module's call graph (while bodies and
// conditions, calls, fusions). XLA's HLO never recurses, but text written by hand may (a while
// loop whose body is its own enclosing computation): a walk enters a computation only when it
// is not on the path already, so it stays finite. The cost model and the FPGA module estimate
// both walk with it.
class CallPath {
 public:
  explicit CallPath(std::size_t computations) : on_path_(computations, 0) {}
  // Marks computation `index` as entered and returns true; false (nothing marked) when it is on
  // the path already: a recursion, which the caller does not expand.
  bool enter(std::size_t index) {
    if (index >= on_path_.size() || on_path_[index] != 0) return false;
    on_path_[index] = 1;
    return true;
  }
  void leave(std::size_t index) {
    if (index < on_path_.size()) on_path_[index] = 0;
  }

 private:
  std::vector<uint8_t> on_path_;
};

struct Module {
  std::string name;  // HloModule name
  std::vector<Computation> computations;
  std::map<std::string, std::size_t> index;       // computation name -> position
  std::map<std::string, std::string> attributes;  // HloModule line: is_scheduled, entry_computation_layout, ...
  std::vector<StackFrame> stack_frames;           // stack_frames[id - 1]; empty for older XLA text
  std::size_t entry_index = 0;
  bool has_entry = false;
  Cost total;                         // entry computation totals (what XLA's cost_analysis reports)
  int unknown_cost_instructions = 0;  // custom calls etc. counted, never silently dropped
  const Computation* entry() const;
  const Computation* find(const std::string& name) const;
  // Instruction by name across all computations (first match), nullptr if none.
  const Instruction* find_instruction(const std::string& name) const;
};

}  // namespace fpgaprof::hlo

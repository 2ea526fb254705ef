// Parsed HLO: modules, computations, instructions, shapes, and per-instruction static cost.
// Produced by parse_hlo_module() (hlo_parser.hpp) and annotated by the cost model
// (cost_model.hpp). Owns all its data; immutable after analysis; safe to share read-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
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

// A list that holds up to N values in place (no allocation) and more on the heap, with the
// std::vector operations the readers use; converts to std::vector<T>. Shapes' dimension sizes
// and layouts (DimList: two int64 in place, 24 bytes as a std::vector, no allocation for
// scalars, vectors and matrices) and instructions' operand slots (four in place) use it: a
// module of 10^6 rank-1 binary instructions saved ~96 MB of 32-byte heap blocks this way.
template <class T, std::size_t N>
class SmallVector {
 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() = default;
  SmallVector(std::initializer_list<T> v) { assign(v.begin(), v.end()); }
  SmallVector(const std::vector<T>& v) { assign(v.data(), v.data() + v.size()); }  // NOLINT: as a vector
  template <class It>
  SmallVector(It first, It last) {
    for (; first != last; ++first) push_back(*first);
  }
  SmallVector(const SmallVector& o) { assign(o.begin(), o.end()); }
  SmallVector(SmallVector&& o) noexcept { take(o); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  ~SmallVector() { release(); }
  operator std::vector<T>() const { return {begin(), end()}; }  // NOLINT: as a vector

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return on_heap() ? u_.heap : u_.local; }
  const T* data() const { return on_heap() ? u_.heap : u_.local; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& operator[](std::size_t k) { return data()[k]; }
  T operator[](std::size_t k) const { return data()[k]; }
  T& front() { return data()[0]; }
  T front() const { return data()[0]; }
  T& back() { return data()[size_ - 1]; }
  T back() const { return data()[size_ - 1]; }

  void push_back(T v) {
    if (size_ == capacity()) grow(size_ == 0 ? kLocal : 2 * static_cast<std::size_t>(size_));
    data()[size_++] = v;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  void resize(std::size_t n, T v = 0) {
    if (n > capacity()) grow(n);
    for (std::size_t k = size_; k < n; ++k) data()[k] = v;
    size_ = static_cast<uint32_t>(n);
  }
  T* erase(const T* at) {
    T* d = data();
    const std::size_t k = static_cast<std::size_t>(at - d);
    for (std::size_t j = k; j + 1 < size_; ++j) d[j] = d[j + 1];
    --size_;
    return d + k;
  }
  template <class It>
  void assign(It first, It last) {
    clear();
    for (; first != last; ++first) push_back(*first);
  }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    if (a.size_ != b.size_) return false;
    for (std::size_t k = 0; k < a.size_; ++k) {
      if (a[k] != b[k]) return false;
    }
    return true;
  }
  friend bool operator==(const SmallVector& a, const std::vector<T>& b) { return a == SmallVector(b); }

 private:
  static constexpr std::size_t kLocal = N;
  bool on_heap() const { return cap_ > kLocal; }
  std::size_t capacity() const { return cap_ == 0 ? kLocal : cap_; }
  void grow(std::size_t n) {
    if (n <= capacity()) return;
    if (n > (1U << 30)) throw std::length_error("SmallVector: too many values");
    auto* h = new T[n];
    for (std::size_t k = 0; k < size_; ++k) h[k] = data()[k];
    release();
    u_.heap = h;
    cap_ = static_cast<uint32_t>(n);
  }
  void release() {
    if (on_heap()) delete[] u_.heap;
    cap_ = 0;
  }
  void take(SmallVector& o) {
    size_ = o.size_;
    cap_ = o.cap_;
    u_ = o.u_;
    o.size_ = 0;
    o.cap_ = 0;
  }
  union Storage {
    T local[kLocal];
    T* heap;
  } u_{};
  uint32_t size_ = 0;
  uint32_t cap_ = 0;  // 0: in place (kLocal); more: on the heap
};

using DimList = SmallVector<int64_t, 2>;

struct Shape {
  DimList dims;                          // empty for scalars
  DimList layout;                        // minor-to-major, empty if not printed
  std::vector<Shape> tuple;              // elements when type == kTuple
  SmallVector<uint8_t, 8> dynamic_dims;  // 1 where the dim was printed `<=N` (N kept in dims) or
                                         // `?` (unbounded: 0 in dims); empty if none
  int element_size_in_bits = 0;          // layout `E(n)`: packed sub-byte storage; 0 = one byte or more per element
  int memory_space = 0;                  // layout `S(n)`
  PrimitiveType type = PrimitiveType::kInvalid;
  bool has_layout = false;        // a `{...}` layout was printed
  int64_t element_count() const;  // product of dims (1 for scalars); 0 for tuples
  int64_t byte_size() const;      // sum over tuple elements; sub-byte types take a whole byte each
                                  // unless the layout packs them (E(n)): then ceil(count*n/8); a
                                  // dynamic array adds 4 bytes of size per dimension (XLA's CPU and
                                  // GPU shape size); opaque 8 bytes (a pointer), token 0
  bool is_dynamic() const;        // an array with a `<=N` or `?` dimension
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

// An instruction's operands, in order: each one's name (operator[], range-for over the names),
// shape (shape(k)) and position in the computation (position(k)). An operand defined in the same
// computation is that instruction's position (4 bytes an operand), its name and shape read from
// the instruction itself; one known only from the text (printed with its shape in place and
// defined elsewhere) keeps its name and shape here. Bound to its computation's instructions by
// position (Computation keeps the binding when copied); an Instruction copied out of its
// computation reads the original's, or its own copies after detach().
class Operands {
 public:
  static constexpr std::size_t kNoPosition = static_cast<std::size_t>(-1);
  static constexpr std::size_t kMaxPosition = 0x7fffffff;  // instructions a computation may hold

  Operands() = default;
  Operands(const Operands& o)
      : base_(o.base_), slot_(o.slot_), owned_(o.owned_ ? std::make_unique<std::vector<Owned>>(*o.owned_) : nullptr) {}
  Operands& operator=(const Operands& o) {
    if (this != &o) *this = Operands(o);
    return *this;
  }
  Operands(Operands&&) noexcept = default;
  Operands& operator=(Operands&&) noexcept = default;
  ~Operands() = default;

  std::size_t size() const { return slot_.size(); }
  bool empty() const { return slot_.empty(); }
  const std::string& operator[](std::size_t k) const;  // the operand's instruction name (no '%')
  const Shape& shape(std::size_t k) const;             // an unknown shape (kInvalid) where none is known
  std::size_t position(std::size_t k) const {          // kNoPosition: not in the same computation
    return (slot_[k] & kOwned) != 0 ? kNoPosition : slot_[k];
  }
  std::vector<std::string> names() const;
  bool operator==(const std::vector<std::string>& names) const;

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::string;
    using difference_type = std::ptrdiff_t;
    using pointer = const std::string*;
    using reference = const std::string&;
    const_iterator(const Operands* list, std::size_t k) : list_(list), k_(k) {}
    const std::string& operator*() const { return (*list_)[k_]; }
    const std::string* operator->() const { return &(*list_)[k_]; }
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
    const Operands* list_;
    std::size_t k_;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, slot_.size()}; }

  // Building (the parser). push_back: the next operand by name, with its shape as the text
  // gives it (kInvalid: none given); push_back(position): the next operand is instruction
  // `position` of the computation; refer: operand k is instruction `position`; compact: drops
  // the names and shapes of operands that refer; bind: where the computation's instructions
  // are; detach: every operand keeps its own name and shape (for a copy that leaves its
  // computation), none has a position.
  void push_back(std::string name, Shape shape);
  void push_back(std::size_t position) { slot_.push_back(static_cast<uint32_t>(position)); }
  void refer(std::size_t k, std::size_t position) { slot_[k] = static_cast<uint32_t>(position); }
  void compact();
  void bind(const Instruction* instructions) { base_ = instructions; }
  void detach();

 private:
  struct Owned {
    std::string name;
    std::unique_ptr<Shape> shape;  // null: none given
    Owned() = default;
    Owned(std::string n, std::unique_ptr<Shape> s) : name(std::move(n)), shape(std::move(s)) {}
    Owned(const Owned& o) : name(o.name), shape(o.shape ? std::make_unique<Shape>(*o.shape) : nullptr) {}
    Owned& operator=(const Owned& o) {
      if (this != &o) *this = Owned(o);
      return *this;
    }
    Owned(Owned&&) noexcept = default;
    Owned& operator=(Owned&&) noexcept = default;
    ~Owned() = default;
  };
  static constexpr uint32_t kOwned = 0x80000000U;
  const Instruction* base_ = nullptr;
  SmallVector<uint32_t, 4> slot_;              // a position in base_, or kOwned | k into owned_
  std::unique_ptr<std::vector<Owned>> owned_;  // names and shapes known only from the text
};

// A read-only list (size(), [k], range-for) over an instruction's Operands, element k being
// what `Get` reads of operand k: a view, nothing copied.
template <class Value, class Ref, Ref (Operands::*Get)(std::size_t) const>
class OperandView {
 public:
  explicit OperandView(const Operands& operands) : ops_(&operands) {}
  std::size_t size() const { return ops_->size(); }
  bool empty() const { return ops_->empty(); }
  Ref operator[](std::size_t k) const { return (ops_->*Get)(k); }
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Value;
    using difference_type = std::ptrdiff_t;
    using pointer = const Value*;
    using reference = Ref;
    const_iterator(const Operands* list, std::size_t k) : list_(list), k_(k) {}
    Ref operator*() const { return (list_->*Get)(k_); }
    const Value* operator->() const requires std::is_reference_v<Ref> { return &(list_->*Get)(k_); }
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
    const Operands* list_;
    std::size_t k_;
  };
  const_iterator begin() const { return {ops_, 0}; }
  const_iterator end() const { return {ops_, ops_->size()}; }
  std::vector<Value> to_vector() const { return {begin(), end()}; }

 private:
  const Operands* ops_;
};

// The shapes of an instruction's operands, in order (Instruction::operand_shapes()).
using OperandShapes = OperandView<Shape, const Shape&, &Operands::shape>;
// The positions of an instruction's operands in its computation, in order (SIZE_MAX for an
// operand defined elsewhere, given only by its inline shape) (Instruction::operand_indices()).
using OperandIndices = OperandView<std::size_t, std::size_t, &Operands::position>;

// The fields most instructions of a large module leave empty (a module's own text sets them
// on few instructions; XLA's printed modules set metadata on most), kept out of line: one
// pointer in the Instruction, allocated when the first of them is set.
struct InstructionDetail {
  std::map<std::string, std::string, std::less<>> attributes;  // raw text of every attribute (kind=, calls=,
                                                               // ...); a value re-wrapped over lines as on one
  std::string fusion_kind;                                     // "kLoop", "kInput", "kOutput", "kCustom" or empty
  std::vector<std::string> called_computations;  // calls=, to_apply=, body=, condition=, branch_computations=
                                                 // (a computation written in place there is named
                                                 // "<instruction>.<attribute>[.<position>]")
  std::string custom_call_target;
  std::string backend_config;  // raw JSON/text
  Metadata metadata;
};

struct Instruction {
  Instruction() = default;
  Instruction(const Instruction& o) : Instruction(Copy{}, o) {}
  Instruction& operator=(const Instruction& o) {
    if (this != &o) *this = Instruction(o);
    return *this;
  }
  Instruction(Instruction&&) noexcept = default;
  Instruction& operator=(Instruction&&) noexcept = default;
  ~Instruction() = default;

  std::string name;    // without the leading '%'
  std::string opcode;  // "fusion", "add", "custom-call", ...
  Shape shape;
  Operands operands;  // names, shapes and positions, resolved by the parser
  bool is_root = false;
  AccessPattern pattern = AccessPattern::kUnknown;
  int line = 0;                       // 1-based line in the module text
  std::size_t computation_index = 0;  // position of the owning computation in Module::computations
  int64_t parameter_number = -1;      // parameter(N)
  int64_t known_trip_count = -1;      // while: backend_config known_trip_count, -1 if not printed
  Cost cost;                          // filled by the cost model

  OperandShapes operand_shapes() const { return OperandShapes(operands); }
  OperandIndices operand_indices() const { return OperandIndices(operands); }

  // The rarely set fields (InstructionDetail), read-only; empty when never set.
  const std::map<std::string, std::string, std::less<>>& attributes() const { return read().attributes; }
  const std::string& fusion_kind() const { return read().fusion_kind; }
  const std::vector<std::string>& called_computations() const { return read().called_computations; }
  const std::string& custom_call_target() const { return read().custom_call_target; }
  const std::string& backend_config() const { return read().backend_config; }
  const Metadata& metadata() const { return read().metadata; }
  // The same fields to write (allocates them on first use).
  InstructionDetail& detail() {
    if (!detail_) detail_ = std::make_unique<InstructionDetail>();
    return *detail_;
  }

 private:
  struct Copy {};
  Instruction(Copy /*tag*/, const Instruction& o)
      : name(o.name),
        opcode(o.opcode),
        shape(o.shape),
        operands(o.operands),
        is_root(o.is_root),
        pattern(o.pattern),
        line(o.line),
        computation_index(o.computation_index),
        parameter_number(o.parameter_number),
        known_trip_count(o.known_trip_count),
        cost(o.cost),
        detail_(o.detail_ ? std::make_unique<InstructionDetail>(*o.detail_) : nullptr) {}
  const InstructionDetail& read() const { return detail_ ? *detail_ : empty_detail(); }
  static const InstructionDetail& empty_detail();
  std::unique_ptr<InstructionDetail> detail_;
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

inline const std::string& Operands::operator[](std::size_t k) const {
  const uint32_t s = slot_[k];
  if ((s & kOwned) != 0) return (*owned_)[s & ~kOwned].name;
  return base_[s].name;
}

inline const Shape& Operands::shape(std::size_t k) const {
  static const Shape kUnknown;
  const uint32_t s = slot_[k];
  if ((s & kOwned) != 0) {
    const Owned& o = (*owned_)[s & ~kOwned];
    return o.shape ? *o.shape : kUnknown;
  }
  return base_[s].shape;
}

// A computation's instruction names -> positions: an open-addressing table of positions, 4
// bytes a slot at most half full, the names read from the instructions themselves (a map of
// names would copy each name once more: ~70 bytes an instruction).
class NameIndex {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  // Position of the instruction named `name` among `instructions`, npos when none.
  std::size_t find(std::string_view name, const std::vector<Instruction>& instructions) const;
  // Adds instructions[position] by its name; false (nothing added) when the name is there.
  bool insert(std::size_t position, const std::vector<Instruction>& instructions);
  // Room for n names without rehashing.
  void reserve(std::size_t n, const std::vector<Instruction>& instructions);
  std::size_t size() const { return size_; }

 private:
  static std::size_t hash_of(std::string_view name);
  void rehash(std::size_t slots, const std::vector<Instruction>& instructions);
  std::vector<uint32_t> slots_;  // position + 1 (0: empty); a power of two in size, or empty
  std::size_t size_ = 0;
};

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
    for (Instruction& i : instructions) i.operands.bind(instructions.data());
  }

  std::string name;
  bool is_entry = false;
  bool is_fusion = false;  // called by a fusion instruction
  std::vector<Instruction> instructions;
  NameIndex index;             // instruction name -> position
  std::size_t root_index = 0;  // position of the ROOT instruction (last one if none is marked)
  const Instruction* root() const;
  const Instruction* find(std::string_view name) const;
  // Position of the instruction named `name`, NameIndex::npos when none.
  std::size_t position(std::string_view instr_name) const { return index.find(instr_name, instructions); }
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

#include "fpgaprof/hlo/hlo_module.hpp"

#include <functional>
#include <stdexcept>

namespace fpgaprof::hlo {

int primitive_bits(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kPred: return 8;
    case PrimitiveType::kS1:
    case PrimitiveType::kU1: return 1;
    case PrimitiveType::kS2:
    case PrimitiveType::kU2: return 2;
    case PrimitiveType::kS4:
    case PrimitiveType::kU4:
    case PrimitiveType::kF4E2M1FN: return 4;
    case PrimitiveType::kS8:
    case PrimitiveType::kU8:
    case PrimitiveType::kF8E5M2:
    case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kF8E4M3B11FNUZ:
    case PrimitiveType::kF8E5M2FNUZ:
    case PrimitiveType::kF8E4M3FNUZ:
    case PrimitiveType::kF8E4M3:
    case PrimitiveType::kF8E3M4:
    case PrimitiveType::kF8E8M0FNU: return 8;
    case PrimitiveType::kS16:
    case PrimitiveType::kU16:
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16: return 16;
    case PrimitiveType::kS32:
    case PrimitiveType::kU32:
    case PrimitiveType::kF32: return 32;
    case PrimitiveType::kS64:
    case PrimitiveType::kU64:
    case PrimitiveType::kF64:
    case PrimitiveType::kC64: return 64;
    case PrimitiveType::kC128: return 128;
    case PrimitiveType::kInvalid:
    case PrimitiveType::kToken:
    case PrimitiveType::kTuple:
    case PrimitiveType::kOpaque: return 0;
  }
  return 0;
}

const char* primitive_name(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kInvalid: return "invalid";
    case PrimitiveType::kPred: return "pred";
    case PrimitiveType::kS1: return "s1";
    case PrimitiveType::kU1: return "u1";
    case PrimitiveType::kS2: return "s2";
    case PrimitiveType::kS4: return "s4";
    case PrimitiveType::kS8: return "s8";
    case PrimitiveType::kS16: return "s16";
    case PrimitiveType::kS32: return "s32";
    case PrimitiveType::kS64: return "s64";
    case PrimitiveType::kU2: return "u2";
    case PrimitiveType::kU4: return "u4";
    case PrimitiveType::kU8: return "u8";
    case PrimitiveType::kU16: return "u16";
    case PrimitiveType::kU32: return "u32";
    case PrimitiveType::kU64: return "u64";
    case PrimitiveType::kF16: return "f16";
    case PrimitiveType::kBF16: return "bf16";
    case PrimitiveType::kF32: return "f32";
    case PrimitiveType::kF64: return "f64";
    case PrimitiveType::kF8E5M2: return "f8e5m2";
    case PrimitiveType::kF8E4M3FN: return "f8e4m3fn";
    case PrimitiveType::kF8E4M3B11FNUZ: return "f8e4m3b11fnuz";
    case PrimitiveType::kF8E5M2FNUZ: return "f8e5m2fnuz";
    case PrimitiveType::kF8E4M3FNUZ: return "f8e4m3fnuz";
    case PrimitiveType::kF8E4M3: return "f8e4m3";
    case PrimitiveType::kF8E3M4: return "f8e3m4";
    case PrimitiveType::kF8E8M0FNU: return "f8e8m0fnu";
    case PrimitiveType::kF4E2M1FN: return "f4e2m1fn";
    case PrimitiveType::kC64: return "c64";
    case PrimitiveType::kC128: return "c128";
    case PrimitiveType::kToken: return "token";
    case PrimitiveType::kTuple: return "tuple";
    case PrimitiveType::kOpaque: return "opaque";
  }
  return "invalid";
}

std::string backend_config_string(const Instruction& ins, std::string_view key) {
  const std::string& c = ins.backend_config();
  const auto hex = [](char ch) -> int {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
  };
  std::size_t pos = 0;
  while ((pos = c.find(key, pos)) != std::string::npos) {
    // the key as a whole word: after '{', ',' or a space, followed by ' = "'
    const bool starts = pos == 0 || c[pos - 1] == '{' || c[pos - 1] == ' ' || c[pos - 1] == ',';
    std::size_t q = pos + key.size();
    while (q < c.size() && c[q] == ' ') ++q;
    if (!starts || q >= c.size() || c[q] != '=') {
      pos += key.size();
      continue;
    }
    ++q;
    while (q < c.size() && c[q] == ' ') ++q;
    if (q >= c.size() || c[q] != '"') return {};
    std::string out;
    for (++q; q < c.size() && c[q] != '"'; ++q) {
      if (c[q] != '\\' || q + 1 >= c.size()) {
        out += c[q];
      } else if (q + 2 < c.size() && hex(c[q + 1]) >= 0 && hex(c[q + 2]) >= 0) {
        out += static_cast<char>(hex(c[q + 1]) * 16 + hex(c[q + 2]));
        q += 2;
      } else {
        out += c[++q];
      }
    }
    return out;
  }
  return {};
}

bool is_triton_custom_call(const Instruction& ins) {
  return ins.opcode == "custom-call" &&
         (ins.custom_call_target() == "__gpu$xla.gpu.triton" || ins.custom_call_target() == "triton_kernel_call_ffi");
}

bool is_mosaic_gpu_custom_call(const Instruction& ins) {
  return ins.opcode == "custom-call" &&
         (ins.custom_call_target() == "mosaic_gpu_v2" || ins.custom_call_target() == "mosaic_gpu");
}

std::string custom_kernel_name(const Instruction& ins) {
  if (is_triton_custom_call(ins)) return backend_config_string(ins, "name");
  if (ins.opcode != "custom-call" || ins.custom_call_target() != "mosaic_gpu_v2") return {};
  // The module is MLIR bytecode whose string table holds each symbol name as a NUL-terminated
  // string. The host function JAX builds is `<kernel name>_mosaic_gpu`
  // (jax/experimental/mosaic/gpu/core.py, JAX 0.7 on; before, `mosaic_gpu_<name>` with a
  // name Pallas did not set). "stable_mosaic_gpu" is the serialized dialect's name.
  const std::string module = backend_config_string(ins, "module");
  static constexpr std::string_view kSuffix = "_mosaic_gpu";
  std::string found;
  for (std::size_t at = module.find(kSuffix); at != std::string::npos; at = module.find(kSuffix, at + 1)) {
    const std::size_t end = at + kSuffix.size();
    if (end >= module.size() || module[end] != '\0') continue;
    std::size_t begin = at;
    while (begin > 0) {
      const char c = module[begin - 1];
      const bool name_char = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                             c == '.' || c == '-' || c == '$';
      if (!name_char) break;
      --begin;
    }
    if (begin == at || (begin > 0 && module[begin - 1] != '\0')) continue;
    const std::string name = module.substr(begin, end - begin);
    if (name == "stable_mosaic_gpu" || name == found) continue;
    if (!found.empty()) return {};  // two candidates: not knowable
    found = name;
  }
  return found.empty() ? std::string() : found + "_kernel";
}

const char* access_pattern_name(AccessPattern p) {
  switch (p) {
    case AccessPattern::kUnknown: return "unknown";
    case AccessPattern::kElementwise: return "elementwise";
    case AccessPattern::kStencil: return "stencil";
    case AccessPattern::kReduction: return "reduction";
    case AccessPattern::kGatherScatter: return "gather_scatter";
    case AccessPattern::kDot: return "dot";
    case AccessPattern::kConvolution: return "convolution";
    case AccessPattern::kFft: return "fft";
    case AccessPattern::kSort: return "sort";
    case AccessPattern::kDataMovement: return "data_movement";
    case AccessPattern::kControl: return "control";
    case AccessPattern::kLibraryCall: return "library_call";
  }
  return "unknown";
}

namespace {

// Saturating arithmetic: a shape written with absurd dimensions counts INT64_MAX, never
// overflows.
int64_t mul_sat(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}
int64_t add_sat(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

}  // namespace

int64_t Shape::element_count() const {
  if (type == PrimitiveType::kTuple) return 0;
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d <= 0) return 0;
    n = mul_sat(n, d);
  }
  return n;
}

int64_t Shape::byte_size() const {
  if (type == PrimitiveType::kTuple) {
    int64_t sum = 0;
    for (const Shape& e : tuple) sum = add_sat(sum, e.byte_size());
    return sum;
  }
  if (type == PrimitiveType::kOpaque) return 8;  // a pointer (XLA's shape size with 8-byte pointers)
  const int bits = primitive_bits(type);
  if (bits == 0) return 0;
  // Each dimension of a dynamic array carries its size as an s32 (XLA:CPU and XLA:GPU
  // ShapeSizeBytes).
  const int64_t metadata = is_dynamic() ? 4 * static_cast<int64_t>(dims.size()) : 0;
  if (element_size_in_bits > 0 && element_size_in_bits < 8) {
    const int64_t bits_total = mul_sat(element_count(), element_size_in_bits);
    return add_sat(bits_total / 8 + (bits_total % 8 != 0 ? 1 : 0), metadata);
  }
  return add_sat(mul_sat(element_count(), (bits + 7) / 8), metadata);
}

bool Shape::is_dynamic() const {
  for (bool d : dynamic_dims) {
    if (d) return true;
  }
  return false;
}

const Instruction* Computation::root() const {
  if (instructions.empty()) return nullptr;
  return &instructions[root_index < instructions.size() ? root_index : instructions.size() - 1];
}

const Instruction* Computation::find(std::string_view instr_name) const {
  const std::size_t k = position(instr_name);
  return k == NameIndex::npos ? nullptr : &instructions[k];
}

void Operands::push_back(std::string name, Shape shape) {
  if (!owned_) owned_ = std::make_unique<std::vector<Owned>>();
  if (owned_->size() >= kOwned) throw std::length_error("Operands: too many operands");
  slot_.push_back(kOwned | static_cast<uint32_t>(owned_->size()));
  owned_->emplace_back(std::move(name),
                       shape.type == PrimitiveType::kInvalid ? nullptr : std::make_unique<Shape>(std::move(shape)));
}

void Operands::compact() {
  if (!owned_) return;
  std::vector<Owned> kept;
  for (uint32_t& s : slot_) {
    if ((s & kOwned) == 0) continue;
    kept.push_back(std::move((*owned_)[s & ~kOwned]));
    s = kOwned | static_cast<uint32_t>(kept.size() - 1);
  }
  if (kept.empty()) {
    owned_.reset();
  } else {
    kept.shrink_to_fit();
    *owned_ = std::move(kept);
  }
}

void Operands::detach() {
  std::vector<Owned> own;
  own.reserve(slot_.size());
  for (std::size_t k = 0; k < slot_.size(); ++k) {
    const Shape& s = shape(k);
    own.emplace_back((*this)[k], s.type == PrimitiveType::kInvalid ? nullptr : std::make_unique<Shape>(s));
  }
  for (std::size_t k = 0; k < slot_.size(); ++k) slot_[k] = kOwned | static_cast<uint32_t>(k);
  owned_ = std::make_unique<std::vector<Owned>>(std::move(own));
}

std::vector<std::string> Operands::names() const { return {begin(), end()}; }

bool Operands::operator==(const std::vector<std::string>& names) const {
  if (names.size() != size()) return false;
  for (std::size_t k = 0; k < size(); ++k) {
    if ((*this)[k] != names[k]) return false;
  }
  return true;
}

const InstructionDetail& Instruction::empty_detail() {
  static const InstructionDetail kEmpty;
  return kEmpty;
}

std::size_t NameIndex::hash_of(std::string_view name) { return std::hash<std::string_view>{}(name); }

std::size_t NameIndex::find(std::string_view name, const std::vector<Instruction>& instructions) const {
  if (slots_.empty()) return npos;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t k = hash_of(name) & mask;; k = (k + 1) & mask) {
    const uint32_t s = slots_[k];
    if (s == 0) return npos;
    const std::size_t p = s - 1;
    if (p < instructions.size() && instructions[p].name == name) return p;
  }
}

void NameIndex::rehash(std::size_t slots, const std::vector<Instruction>& instructions) {
  std::vector<uint32_t> old;
  old.swap(slots_);
  slots_.assign(slots, 0);
  const std::size_t mask = slots - 1;
  for (const uint32_t s : old) {
    if (s == 0) continue;
    std::size_t k = hash_of(instructions[s - 1].name) & mask;
    while (slots_[k] != 0) k = (k + 1) & mask;
    slots_[k] = s;
  }
}

void NameIndex::reserve(std::size_t n, const std::vector<Instruction>& instructions) {
  std::size_t want = 16;
  while (want < 2 * n) want *= 2;
  if (want > slots_.size()) rehash(want, instructions);
}

bool NameIndex::insert(std::size_t position, const std::vector<Instruction>& instructions) {
  if (position >= instructions.size() || position >= 0xffffffffU) {
    throw std::length_error("NameIndex: position beyond the instructions");
  }
  if (2 * (size_ + 1) > slots_.size()) rehash(slots_.empty() ? 16 : 2 * slots_.size(), instructions);
  const std::string& name = instructions[position].name;
  const std::size_t mask = slots_.size() - 1;
  std::size_t k = hash_of(name) & mask;
  for (; slots_[k] != 0; k = (k + 1) & mask) {
    const std::size_t p = slots_[k] - 1;
    if (p < instructions.size() && instructions[p].name == name) return false;
  }
  slots_[k] = static_cast<uint32_t>(position + 1);
  ++size_;
  return true;
}

const Computation* Module::entry() const {
  if (!has_entry || entry_index >= computations.size()) return nullptr;
  return &computations[entry_index];
}

const Computation* Module::find(const std::string& comp_name) const {
  auto it = index.find(comp_name);
  return it == index.end() ? nullptr : &computations[it->second];
}

const Instruction* Module::find_instruction(const std::string& instr_name) const {
  for (const Computation& c : computations) {
    if (const Instruction* i = c.find(instr_name)) return i;
  }
  return nullptr;
}

}  // namespace fpgaprof::hlo

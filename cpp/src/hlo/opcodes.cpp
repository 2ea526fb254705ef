#include "hlo/opcodes.hpp"

#include <array>
#include <iterator>

namespace fpgaprof::hlo::opcode {
namespace {

struct Entry {
  std::string_view name;
  uint16_t properties;
};

// Sorted by name, one entry per opcode (checked at compile time).
constexpr Entry kTable[] = {
    {"abs", kElementwise | kUnaryShape},
    {"acos", kElementwise | kTranscendental | kUnaryShape},
    {"acosh", kElementwise | kTranscendental | kUnaryShape},
    {"add", kElementwise | kBinaryShape},
    {"add-dependency", kFree | kOtherShape},
    {"after-all", kFree | kOtherShape},
    {"all-gather-done", kNativeAsync},
    {"all-gather-start", kNativeAsync},
    {"all-reduce-done", kNativeAsync},
    {"all-reduce-start", kNativeAsync},
    {"and", kElementwise | kBinaryShape},
    {"asin", kElementwise | kTranscendental | kUnaryShape},
    {"asinh", kElementwise | kTranscendental | kUnaryShape},
    {"async-done", kNativeAsync},
    {"async-start", kNativeAsync},
    {"async-update", kNativeAsync},
    {"atan2", kElementwise | kTranscendental | kBinaryShape},
    {"atanh", kElementwise | kTranscendental | kUnaryShape},
    {"batch-norm-grad", kOtherShape},
    {"batch-norm-inference", kOtherShape},
    {"batch-norm-training", kOtherShape},
    {"bitcast", kDataMovement | kFree},
    {"bitcast-convert", kElementwise | kDataMovement},
    {"broadcast", kDataMovement | kOtherShape},
    {"call", kOtherShape},
    {"cbrt", kElementwise | kTranscendental | kUnaryShape},
    {"ceil", kElementwise | kUnaryShape},
    {"cholesky", kOtherShape},
    {"clamp", kElementwise | kOtherShape},
    {"collective-permute-done", kNativeAsync},
    {"collective-permute-start", kNativeAsync},
    {"compare", kElementwise | kBinaryShape},
    {"complex", kElementwise | kBinaryShape},
    {"concatenate", kDataMovement | kOtherShape},
    {"conditional", kOtherShape},
    {"constant", kFree},
    {"convert", kElementwise},
    {"convolution", kOtherShape},
    {"copy", kDataMovement | kUnaryShape},
    {"copy-done", kDataMovement | kNativeAsync},
    {"copy-start", kDataMovement | kNativeAsync},
    {"cosh", kElementwise | kTranscendental | kUnaryShape},
    {"cosine", kElementwise | kTranscendental | kUnaryShape},
    {"count-leading-zeros", kElementwise | kUnaryShape},
    {"divide", kElementwise | kBinaryShape},
    {"domain", kFree | kOtherShape},
    {"dot", kOtherShape},
    {"dynamic-reshape", kDataMovement},
    {"dynamic-slice", kDataMovement},
    {"dynamic-update-slice", kDataMovement},
    {"erf", kElementwise | kTranscendental | kUnaryShape},
    {"exponential", kElementwise | kTranscendental | kUnaryShape},
    {"exponential-minus-one", kElementwise | kTranscendental | kUnaryShape},
    {"fft", kOtherShape},
    {"floor", kElementwise | kUnaryShape},
    {"gather", kOtherShape},
    {"get-dimension-size", kOtherShape},
    {"get-tuple-element", kFree | kOtherShape},
    {"imag", kElementwise | kUnaryShape},
    {"iota", kDataMovement},
    {"is-finite", kElementwise | kUnaryShape},
    {"log", kElementwise | kTranscendental | kUnaryShape},
    {"log-plus-one", kElementwise | kTranscendental | kUnaryShape},
    {"logistic", kElementwise | kTranscendental | kUnaryShape},
    {"map", kOtherShape},
    {"maximum", kElementwise | kBinaryShape},
    {"minimum", kElementwise | kBinaryShape},
    {"multiply", kElementwise | kBinaryShape},
    {"negate", kElementwise | kUnaryShape},
    {"not", kElementwise | kUnaryShape},
    {"opt-barrier", kDataMovement | kOtherShape},
    {"or", kElementwise | kBinaryShape},
    {"pad", kDataMovement | kOtherShape},
    {"parameter", kFree},
    {"partition-id", kOtherShape},
    {"popcnt", kElementwise | kUnaryShape},
    {"power", kElementwise | kTranscendental | kBinaryShape},
    {"ragged-dot", kOtherShape},
    {"real", kElementwise | kUnaryShape},
    {"recv-done", kNativeAsync},
    {"reduce", kOtherShape},
    {"reduce-precision", kElementwise},
    {"reduce-window", kOtherShape},
    {"remainder", kElementwise | kBinaryShape},
    {"replica-id", kOtherShape},
    {"reshape", kDataMovement},
    {"reverse", kDataMovement | kOtherShape},
    {"round-nearest-afz", kElementwise | kUnaryShape},
    {"round-nearest-even", kElementwise | kUnaryShape},
    {"rsqrt", kElementwise | kTranscendental | kUnaryShape},
    {"scaled-dot", kOtherShape},
    {"scatter", kOtherShape},
    {"select", kElementwise | kOtherShape},
    {"select-and-scatter", kOtherShape},
    {"send-done", kNativeAsync},
    {"set-dimension-size", kOtherShape},
    {"shift-left", kElementwise | kBinaryShape},
    {"shift-right-arithmetic", kElementwise | kBinaryShape},
    {"shift-right-logical", kElementwise | kBinaryShape},
    {"sign", kElementwise | kUnaryShape},
    {"sine", kElementwise | kTranscendental | kUnaryShape},
    {"sinh", kElementwise | kTranscendental | kUnaryShape},
    {"slice", kDataMovement},
    {"sort", kOtherShape},
    {"sqrt", kElementwise | kTranscendental | kUnaryShape},
    {"stochastic-convert", kElementwise},
    {"subtract", kElementwise | kBinaryShape},
    {"tan", kElementwise | kTranscendental | kUnaryShape},
    {"tanh", kElementwise | kTranscendental | kUnaryShape},
    {"topk", kOtherShape},
    {"transpose", kDataMovement | kOtherShape},
    {"triangular-solve", kOtherShape},
    {"tuple", kOtherShape},
    {"while", kOtherShape},
    {"xor", kElementwise | kBinaryShape},
};

constexpr bool sorted() {
  for (std::size_t i = 1; i < std::size(kTable); ++i) {
    if (!(kTable[i - 1].name < kTable[i].name)) return false;
  }
  return true;
}
static_assert(sorted(), "keep kTable sorted by name, one entry per opcode");

// kTable by hash: open addressing over a power-of-two table at most a quarter full, so a lookup
// is one hash of the name and, mostly, one comparison (a binary search made seven or eight, and
// the cost model and shape inference ask for every instruction).
constexpr std::size_t kSlots = 512;
static_assert(std::size(kTable) * 4 <= kSlots, "grow kSlots: the table must stay at most a quarter full");

constexpr std::size_t slot_of(std::string_view s) {
  uint32_t h = 2166136261U;  // FNV-1a
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 16777619U;
  return h & (kSlots - 1);
}

struct Index {
  std::array<int16_t, kSlots> entry{};  // index into kTable + 1; 0: empty
  constexpr Index() {
    for (std::size_t i = 0; i < std::size(kTable); ++i) {
      std::size_t s = slot_of(kTable[i].name);
      while (entry[s] != 0) s = (s + 1) & (kSlots - 1);
      entry[s] = static_cast<int16_t>(i + 1);
    }
  }
};
constexpr Index kIndex;

}  // namespace

uint16_t properties(std::string_view op) {
  for (std::size_t s = slot_of(op);; s = (s + 1) & (kSlots - 1)) {
    const int16_t e = kIndex.entry[s];
    if (e == 0) return 0;
    if (kTable[e - 1].name == op) return kTable[e - 1].properties;
  }
}

}  // namespace fpgaprof::hlo::opcode

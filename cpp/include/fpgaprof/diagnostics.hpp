// Diagnostics: what fpgaprof tells the user about a trace (dropped records, unmatched calls,
// modules that failed to parse, ...), as records. One table (diagnostic_codes()) names every
// kind once: its code, severity, source and a description with the fix, in the manner of
// Perfetto's storage/stats.h. A Diagnostic is one occurrence of a code: the message as shown,
// the figures it quotes and how many times it came; Diagnostics keeps them in order of first
// appearance and counts a repeated one (same code and message) instead of repeating it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fpgaprof {

enum class Severity : uint8_t {
  kInfo,     // a fact about the trace worth knowing; nothing is wrong
  kWarning,  // figures are incomplete or less certain: the message says which and the fix
  kError,    // an analysis failed: its section is missing
};

std::string_view severity_name(Severity s);  // "info", "warning", "error"

struct DiagnosticCode {
  std::string_view code;  // "capture.records_dropped": source, a dot, the kind
  Severity severity;
  std::string_view source;       // capture, correlate, attribution, hlo, fpga, energy, report, ...
  std::string_view description;  // what it means and the fix (docs/reports.md, "Warnings")
};

// Every code, in a fixed order (the table in cpp/src/core/diagnostics.cpp).
std::span<const DiagnosticCode> diagnostic_codes();
// The entry of `code`; throws Error(kInvalidArgument) naming it when it is not in the table.
const DiagnosticCode& diagnostic_code(std::string_view code);
// The entry of `code`, or nullptr.
const DiagnosticCode* find_diagnostic_code(std::string_view code);

// The code of a warning read from a trace whose writer kept warnings as prose only (or whose
// code this build does not know): kept whole, never dropped.
inline constexpr std::string_view kOlderTraceCode = "trace.older_warning";

struct Diagnostic {
  const DiagnosticCode* kind = nullptr;  // an entry of diagnostic_codes(), never null once made
  uint64_t count = 1;                    // occurrences of this code with this message
  std::vector<double> numbers;           // the figures the message quotes, in its order
  std::string message;                   // one line: cause, effect and fix

  std::string_view code() const { return kind->code; }
  Severity severity() const { return kind->severity; }
  std::string_view source() const { return kind->source; }
  bool operator==(const Diagnostic& o) const {
    return kind == o.kind && count == o.count && numbers == o.numbers && message == o.message;
  }
};

// Diagnostics in order of first appearance, one per (code, message); adding one again adds
// its count. add() is amortised O(length of the message).
class Diagnostics {
 public:
  Diagnostics() = default;
  Diagnostics(const Diagnostics& o) : items_(o.items_) { reindex(); }
  Diagnostics(Diagnostics&&) noexcept = default;
  Diagnostics& operator=(const Diagnostics& o) {
    if (this != &o) {
      items_ = o.items_;
      reindex();
    }
    return *this;
  }
  Diagnostics& operator=(Diagnostics&&) noexcept = default;

  // Adds `message` under `code` (which must be in the table), quoting `numbers`.
  void add(std::string_view code, std::string message, std::vector<double> numbers = {}, uint64_t count = 1);
  void add(Diagnostic d);
  void append(const Diagnostics& other);
  // Puts `d` in place of the diagnostic at `i` (a count reworded, ...).
  void replace(std::size_t i, Diagnostic d);
  // Removes those `pred` selects; keeps the order of the rest.
  template <class Pred>
  std::size_t remove_if(Pred pred) {
    const std::size_t before = items_.size();
    std::erase_if(items_, pred);
    if (items_.size() != before) reindex();
    return before - items_.size();
  }
  // The diagnostic of this code and message, or nullptr.
  Diagnostic* find(std::string_view code, std::string_view message);
  // The first diagnostic of `code`, or nullptr.
  Diagnostic* first_of(std::string_view code);

  const std::vector<Diagnostic>& items() const { return items_; }
  std::vector<std::string> messages() const;  // each message once, in order
  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const Diagnostic& operator[](std::size_t i) const { return items_[i]; }
  Diagnostic& operator[](std::size_t i) { return items_[i]; }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  void clear() {
    items_.clear();
    index_.clear();
  }
  bool operator==(const Diagnostics& o) const { return items_ == o.items_; }

 private:
  static std::string key(std::string_view code, std::string_view message);
  void reindex();
  std::vector<Diagnostic> items_;
  std::unordered_map<std::string, std::size_t> index_;  // key(code, message) -> position
};

}  // namespace fpgaprof

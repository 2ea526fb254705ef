// libFuzzer target: the card parser. The input's bytes are the text of a card file (or a dict, as
// the bindings hand it over field by field) read by card_from_json: the JSON parse, every field's
// type and range, base presets, calibration defaults and earlier names (card_from_fields), and
// validate_fpga_target. For every card it accepts, the card goes round through card_to_fields and
// back (it must come back the same, bit for bit), and the static estimate of a fixed module (a
// dot, a gather, a loop of elementwise ops) and one op's card time in both scenarios run on it.
// The only allowed failure is Error(kInvalidArgument); a crash, a sanitizer report, an escaped
// exception, or a card that does not come back the same is a finding.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "card_fuzz_module.hpp"
#include "fpgaprof/analysis/fpga_model.hpp"
#include "fpgaprof/error.hpp"

namespace fa = fpgaprof::analysis;

namespace {

// card_to_fields(t) as card_from_fields' input.
fa::CardFields as_fields(const fa::FpgaTarget& t) {
  fa::CardFields fields;
  for (const fa::CardOutput& o : fa::card_to_fields(t)) {
    fa::CardValue v;
    if (o.kind == fa::CardFieldKind::kText) {
      v.kind = fa::CardValue::Kind::kText;
      v.text = o.text;
      v.shown = "str";
    } else {
      v.kind = fa::CardValue::Kind::kNumber;
      v.number = o.kind == fa::CardFieldKind::kWhole ? static_cast<double>(o.whole) : o.number;
      v.shown = std::to_string(v.number);
    }
    fields.emplace_back(o.name, std::move(v));
  }
  return fields;
}

bool same(const fa::FpgaTarget& a, const fa::FpgaTarget& b) {
  const auto x = fa::card_to_fields(a), y = fa::card_to_fields(b);
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i].name != y[i].name || x[i].text != y[i].text || x[i].whole != y[i].whole) return false;
    if (std::memcmp(&x[i].number, &y[i].number, sizeof(double)) != 0) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  fa::FpgaTarget t;
  try {
    t = fa::card_from_json(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const fpgaprof::Error& e) {
    if (e.kind() != fpgaprof::ErrorKind::kInvalidArgument) __builtin_trap();
    return 0;
  }
  // A card as a table goes back in unchanged (presets() and resolve_target() rely on it).
  if (!same(fa::card_from_fields(as_fields(t)), t)) __builtin_trap();
  const fa::ModuleEstimate est = fa::estimate_module(card_fuzz::module(), t);
  (void)est.total_s.nominal;
  fa::CardWork w = fa::card_work_from_totals(1e9, 4e8, 4e8);
  for (fa::Scenario s : {fa::Scenario::kAsCompiled, fa::Scenario::kRestructured}) {
    const fa::OpCardEstimate e = fa::estimate_op_on_card(w, fa::Precision::kFp32, t, s);
    (void)e.time_s.nominal;
  }
  return 0;
}

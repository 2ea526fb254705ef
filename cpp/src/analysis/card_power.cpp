#include "fpgaprof/analysis/card_power.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "fpgaprof/error.hpp"

namespace fpgaprof::analysis {
namespace {

constexpr double kMaxWatts = 2000;  // over every PCIe card's power; a larger value is in the wrong unit

std::vector<CardPower> make_presets() {
  // Values: python/fpgaprof/data/fpga_card_power.json ("power_classes" and "cards";
  // tests/cpp/test_card_power.cpp checks that they equal the file and recomputes them from its
  // readings). Calibrated is {nominal, low, high}.
  // HBM2 (U55C, U280): loaded = three xbtest memory tests on all 32 pseudo-channels of a U55C
  // (61.08, 62.60, 64.78 W) and HiSparse on a U280 (45 W): median 61.84, 45 to 64.78 + 0.6;
  // idle = xbtest's rest power on a U55C, 40.7 +- 0.5 W.
  const Calibrated hbm2_loaded{61.84, 45.0, 65.38};
  const Calibrated hbm2_idle{40.7, 40.2, 41.2};
  // DDR4 (U250, U200): loaded = three xbtest memory tests on all 4 banks of a U250 (64.88, 67.82,
  // 68.39 W): median 67.82, 64.88 - 0.4 to 68.39 + 0.4; idle = xbtest's rest power on a U250, 45.9
  // +- 0.5 W.
  const Calibrated ddr4_loaded{67.82, 64.48, 68.79};
  const Calibrated ddr4_idle{45.9, 45.4, 46.4};
  // HBM2e (V80): loaded = the card status after AMD's AVED xbtest memory test, 56.7 +- 2.0 W
  // (taken during or just after the test: the distance to idle); idle = the AVED design loaded,
  // 54.695 W.
  const Calibrated hbm2e_loaded{56.7, 54.7, 58.7};
  const Calibrated hbm2e_idle = Calibrated::exact(54.695);
  const std::string hbm2 =
      "HBM2 cards: xbtest memory tests on a U55C (AMD xbtest 6.0 checklist) and HiSparse on a U280 (FPGA'22)";
  const std::string ddr4 = "DDR4 cards: xbtest memory tests on a U250 (AMD xbtest 6.0 checklist)";
  std::vector<CardPower> v;
  v.push_back({"alveo-u55c", hbm2_idle, hbm2_loaded, 150.0, hbm2 + "; maximum 150 W (xbtest checklist)"});
  v.push_back({"alveo-u280", hbm2_idle, hbm2_loaded, 0.0, hbm2 + "; maximum not found"});
  v.push_back({"alveo-u250", ddr4_idle, ddr4_loaded, 225.0, ddr4 + "; maximum 225 W (its 12 V rail limits)"});
  v.push_back({"alveo-u200", ddr4_idle, ddr4_loaded, 0.0, ddr4 + " (the U200's own not found); maximum not found"});
  v.push_back({"versal-v80", hbm2e_idle, hbm2e_loaded, 0.0,
               "V80: AMD's AVED guide (ami_tool sensors, xbtest memory test); maximum not found"});
  // Intel cards: no published board power was found (python/fpgaprof/data/fpga_card_power.json
  // says what was searched), so their energy is unknown rather than filled in.
  const std::string intel = "no published board power for this card";
  v.push_back({"intel-pac-a10", {}, {}, 0.0, intel + " (Intel PAC with Arria 10 GX)"});
  v.push_back({"bittware-520n-s10gx", {}, {}, 0.0, intel + " (BittWare 520N)"});
  v.push_back({"intel-pac-d5005", {}, {}, 0.0, intel + " (Intel FPGA PAC D5005)"});
  v.push_back({"intel-s10mx-2100", {}, {}, 0.0, intel + " (Stratix 10 MX development kit)"});
  return v;
}

std::string preset_names() {
  std::string out;
  for (const CardPower& p : card_power_presets()) out += (out.empty() ? "" : ", ") + p.card;
  return out;
}

void check_watts(const std::string& card, const char* field, const Calibrated& c) {
  if (c.low == 0 && c.nominal == 0 && c.high == 0) return;  // unknown
  const auto bad = [&](const std::string& why) {
    std::ostringstream s;
    s << "card power of '" << card << "': " << field << " " << why << " (low " << c.low << ", nominal " << c.nominal
      << ", high " << c.high << "); give watts with 0 < low <= nominal <= high, or all 0 for unknown";
    throw Error(ErrorKind::kInvalidArgument, s.str());
  };
  if (!(std::isfinite(c.low) && std::isfinite(c.nominal) && std::isfinite(c.high))) bad("is not a finite number");
  if (!(c.low > 0)) bad("must be positive");
  if (!(c.low <= c.nominal && c.nominal <= c.high)) bad("is not an ordered range");
  if (c.high > kMaxWatts) bad("is over 2000 W (a value in mW or uW?)");
}

}  // namespace

const std::vector<CardPower>& card_power_presets() {
  static const std::vector<CardPower> presets = make_presets();
  return presets;
}

const CardPower& card_power(const std::string& preset) {
  for (const CardPower& p : card_power_presets()) {
    if (p.card == preset) return p;
  }
  throw Error(ErrorKind::kInvalidArgument, "no card power for '" + preset + "': use one of " + preset_names() +
                                               " or give your card's loaded_w (watts)");
}

void validate_card_power(const CardPower& p) {
  if (p.card.empty()) throw Error(ErrorKind::kInvalidArgument, "card power without a card name: set card");
  check_watts(p.card, "idle_w", p.idle_w);
  check_watts(p.card, "loaded_w", p.loaded_w);
  if (p.max_w == 0) return;
  const double most = std::max(p.loaded_w.high, p.idle_w.high);
  if (!(std::isfinite(p.max_w) && p.max_w > 0 && p.max_w <= kMaxWatts && p.max_w >= most)) {
    std::ostringstream s;
    s << "card power of '" << p.card << "': max_w " << p.max_w << " W is not a finite power in watts at or above "
      << "loaded_w and idle_w (" << most << " W); give the board's limit in watts, or 0 for unknown";
    throw Error(ErrorKind::kInvalidArgument, s.str());
  }
}

EnergyRange card_energy(const TimeRange& t, const CardPower& p) {
  validate_card_power(p);
  if (!(std::isfinite(t.low) && std::isfinite(t.nominal) && std::isfinite(t.high) && t.low >= 0 && t.low <= t.nominal &&
        t.nominal <= t.high)) {
    std::ostringstream s;
    s << "card energy of '" << p.card << "': the card time (low " << t.low << ", nominal " << t.nominal << ", high "
      << t.high << " s) is not a finite range with 0 <= low <= nominal <= high; pass the estimate's time_s";
    throw Error(ErrorKind::kInvalidArgument, s.str());
  }
  if (!p.has_loaded()) {
    throw Error(ErrorKind::kInvalidArgument, "card energy of '" + p.card + "': its loaded board power is unknown (" +
                                                 p.basis + "); give the card's loaded_w in watts");
  }
  return {t.low * p.loaded_w.low, t.nominal * p.loaded_w.nominal, t.high * p.loaded_w.high};
}

EnergyRange card_energy_on(const TimeRange& t, const FpgaTarget& target) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  // Energy is unknown (never an error: it rides on every estimate) when the power is, or when the
  // card time is not an ordered finite range (a card the model cannot time, e.g. hostile figures).
  if (!(std::isfinite(t.low) && std::isfinite(t.nominal) && std::isfinite(t.high) && t.low >= 0 && t.low <= t.nominal &&
        t.nominal <= t.high) ||
      !(target.loaded_w.nominal > 0))
    return {kNaN, kNaN, kNaN};
  CardPower p;
  p.card = target.name;
  p.loaded_w = target.loaded_w;
  p.basis = "the card's loaded_w";
  try {
    return card_energy(t, p);
  } catch (const Error&) {  // power outside validate_card_power's bounds
    return {kNaN, kNaN, kNaN};
  }
}

}  // namespace fpgaprof::analysis

#include "fpgaprof/analysis/card_power.hpp"

#include <cmath>
#include <sstream>

#include "fpgaprof/error.hpp"

namespace fpgaprof::analysis {
namespace {

constexpr double kMaxWatts = 2000;  // over every PCIe card's power; a larger value is in the wrong unit

Calibrated unknown() { return {0, 0, 0}; }

std::vector<CardPower> make_presets() {
  // Values: python/fpgaprof/data/fpga_card_power.json ("values"; tests/cpp/test_card_power.cpp
  // checks that they equal the file and recomputes them from its measurements).
  std::vector<CardPower> v;
  v.push_back({"alveo-u55c", unknown(), unknown(),
               "not found: no published U55C board power under a stated load (two readings of 14.50 and 15.04 W "
               "were found, their load not stated)"});
  v.push_back({"alveo-u280",
               unknown(),
               {45.0, 39.22, 58.28},
               "loaded: HiSparse SpMV measured at 45 W (FPGA'22, Table 6); range: the U280 board readings "
               "published (39.22-58.28 W, PC2 cluster documentation, load not stated). Idle: not found"});
  v.push_back({"alveo-u250", unknown(), unknown(), "not found: no published U250 board power was found"});
  v.push_back({"alveo-u200", unknown(), unknown(), "not found: no published U200 board power was found"});
  v.push_back({"versal-v80", unknown(), unknown(), "not found: no published V80 board power was found"});
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

}  // namespace fpgaprof::analysis

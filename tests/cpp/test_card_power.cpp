// Card power and card energy (card_power.hpp). Expected joules are worked by hand in the comments
// (seconds x watts at each end of both ranges); the preset table is checked against its data file,
// python/fpgaprof/data/fpga_card_power.json, and recomputed from the file's measurements.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fpgaprof/analysis/card_power.hpp"
#include "fpgaprof/analysis/fpga_model.hpp"
#include "fpgaprof/error.hpp"

using namespace fpgaprof;
using namespace fpgaprof::analysis;

namespace {

Approx near(double v) { return Approx(v).epsilon(1e-12); }

void check_energy(const EnergyRange& e, double low, double nominal, double high) {
  CHECK(e.low == near(low));
  CHECK(e.nominal == near(nominal));
  CHECK(e.high == near(high));
}

CardPower custom(Calibrated loaded, Calibrated idle = {0, 0, 0}, double max_w = 0) {
  return {"my-card", idle, loaded, max_w, "given"};
}

// The substring of the error `f` throws (kInvalidArgument), or "" when it does not throw.
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInvalidArgument);
    return e.what();
  }
  return "";
}

nlohmann::json data_file() {
  std::ifstream f(std::string(FPGAPROF_TEST_DATA_DIR) + "/../../python/fpgaprof/data/fpga_card_power.json");
  REQUIRE(f.good());
  return nlohmann::json::parse(f);
}

}  // namespace

TEST_CASE("card power: energy is card time x the card's published power, end by end", "[analysis][fpga][power]") {
  // HBM2 cards: 61.84 W (45-65.38 W). 0.5 ms x 45 W = 0.0225 J; 1 ms x 61.84 W = 0.06184 J;
  // 2 ms x 65.38 W = 0.13076 J.
  const CardPower& u280 = card_power("alveo-u280");
  REQUIRE(u280.has_loaded());
  check_energy(card_energy({0.5e-3, 1e-3, 2e-3}, u280), 0.0225, 0.06184, 0.13076);
  // An exact time: 10 s x 45 = 450 J, x 61.84 = 618.4 J, x 65.38 = 653.8 J.
  check_energy(card_energy({10, 10, 10}, u280), 450, 618.4, 653.8);
  // No time, no energy.
  check_energy(card_energy({0, 0, 0}, u280), 0, 0, 0);
  // DDR4 cards: 67.82 W (64.48-68.79 W). 1 s x 64.48 = 64.48 J; 2 s x 67.82 = 135.64 J;
  // 4 s x 68.79 = 275.16 J.
  check_energy(card_energy({1, 2, 4}, card_power("alveo-u250")), 64.48, 135.64, 275.16);
  // V80 (HBM2e): 56.7 W (54.7-58.7 W); 1 s each: 54.7, 56.7, 58.7 J.
  check_energy(card_energy({1, 1, 1}, card_power("versal-v80")), 54.7, 56.7, 58.7);
  // Cards of one memory type share its power; each keeps its own maximum.
  CHECK(card_power("alveo-u55c").loaded_w.nominal == u280.loaded_w.nominal);
  CHECK(card_power("alveo-u200").loaded_w.high == card_power("alveo-u250").loaded_w.high);
  CHECK(card_power("alveo-u55c").max_w == 150);
  CHECK(u280.max_w == 0);
  CHECK(card_power("alveo-u250").max_w == 225);
  // Idle below loaded, loaded below the maximum.
  for (const CardPower& p : card_power_presets()) {
    if (!p.has_loaded()) continue;
    CHECK(p.idle_w.high < p.loaded_w.nominal);
    if (p.max_w > 0) CHECK(p.loaded_w.high < p.max_w);
  }
}

TEST_CASE("card power: a custom card's own watts, with and without a range", "[analysis][fpga][power]") {
  // Calibrated is {nominal, low, high}: 100 W (80-120 W); time 3 s (2-5 s): 2 x 80 = 160 J,
  // 3 x 100 = 300 J, 5 x 120 = 600 J.
  check_energy(card_energy({2, 3, 5}, custom({100, 80, 120})), 160, 300, 600);
  // An exact 75 W over 4 ms (2-8 ms): 0.15 J, 0.3 J, 0.6 J.
  check_energy(card_energy({2e-3, 4e-3, 8e-3}, custom(Calibrated::exact(75))), 0.15, 0.3, 0.6);
  // Idle watts are not what card time is charged at: 300 W idle changes nothing.
  check_energy(card_energy({2, 3, 5}, custom({100, 80, 120}, Calibrated::exact(300))), 160, 300, 600);
}

TEST_CASE("card power: a card without a loaded power refuses, naming the card and the fix", "[analysis][fpga][power]") {
  const CardPower unknown{"my-card", {0, 0, 0}, {0, 0, 0}, 0, "not found"};
  CHECK_FALSE(unknown.has_loaded());
  CHECK_FALSE(unknown.has_idle());
  const std::string msg = error_of([&] { card_energy({1, 1, 1}, unknown); });
  CHECK(msg.find("my-card") != std::string::npos);
  CHECK(msg.find("loaded_w") != std::string::npos);
  CHECK(msg.find("not found") != std::string::npos);
  // Every AMD preset has one; the Intel ones have none published, and say so.
  for (const CardPower& p : card_power_presets()) {
    INFO(p.card);
    const bool intel = p.card == "intel-pac-a10" || p.card == "bittware-520n-s10gx" || p.card == "intel-pac-d5005" ||
                       p.card == "intel-s10mx-2100";
    CHECK(p.has_loaded() == !intel);
    if (!intel) continue;
    CHECK_FALSE(p.has_idle());
    CHECK(p.max_w == 0);
    CHECK(p.basis.find("no published board power for this card") != std::string::npos);
    // Its energy: unknown on the model's rows (NaN, never 0), a clear error when asked for.
    const EnergyRange e = card_energy_on({1e-3, 2e-3, 3e-3}, fpga_preset(p.card));
    CHECK(std::isnan(e.low));
    CHECK(std::isnan(e.nominal));
    CHECK(std::isnan(e.high));
    const std::string why = error_of([&] { card_energy({1e-3, 2e-3, 3e-3}, p); });
    CHECK(why.find(p.card) != std::string::npos);
    CHECK(why.find("no published board power for this card") != std::string::npos);
  }
  const std::string bad_name = error_of([] { card_power("alveo-u999"); });
  CHECK(bad_name.find("alveo-u999") != std::string::npos);
  CHECK(bad_name.find("alveo-u280") != std::string::npos);
}

TEST_CASE("card power: bad watts and bad times are refused with the field named", "[analysis][fpga][power]") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(error_of([] {
          validate_card_power(custom({45, 50, 60}));
        }).find("loaded_w is not an ordered range") != std::string::npos);
  CHECK(error_of([] { validate_card_power(custom({-5, -5, -5})); }).find("must be positive") != std::string::npos);
  CHECK(error_of([] { validate_card_power(custom({5, 0, 5})); }).find("must be positive") != std::string::npos);
  CHECK(error_of([&] { validate_card_power(custom({nan, 1, 2})); }).find("finite") != std::string::npos);
  CHECK(error_of([&] { validate_card_power(custom({1, 1, inf})); }).find("finite") != std::string::npos);
  // 45 W given in mW.
  CHECK(error_of([] { validate_card_power(custom(Calibrated::exact(45000))); }).find("mW") != std::string::npos);
  CHECK(error_of([] { validate_card_power(custom({45, 40, 50}, {10, 12, 15})); }).find("idle_w") != std::string::npos);
  CHECK(error_of([] {
          validate_card_power({"", {}, Calibrated::exact(45), 0, ""});
        }).find("card name") != std::string::npos);
  // A maximum below the loaded power's high end, negative, or not finite.
  CHECK(error_of([] { validate_card_power(custom({100, 80, 120}, {}, 110)); }).find("max_w") != std::string::npos);
  CHECK(error_of([] { validate_card_power(custom({100, 80, 120}, {}, -5)); }).find("max_w") != std::string::npos);
  CHECK(error_of([&] { validate_card_power(custom({100, 80, 120}, {}, nan)); }).find("max_w") != std::string::npos);
  CHECK(error_of([] {
          validate_card_power(custom({40, 30, 50}, {60, 55, 65}, 62));
        }).find("max_w") != std::string::npos);
  CHECK(error_of([] { validate_card_power(custom({100, 80, 120}, {}, 150)); }).empty());
  // Unknown (all 0) and a good range pass.
  CHECK(error_of([] { validate_card_power(custom({0, 0, 0})); }).empty());
  CHECK(error_of([] { validate_card_power(custom({45, 39, 58}, {20, 15, 25})); }).empty());

  const CardPower p = custom(Calibrated::exact(45));
  for (const TimeRange& t :
       {TimeRange{2, 1, 3}, TimeRange{1, 2, 1.5}, TimeRange{-1, 0, 1}, TimeRange{0, 1, inf}, TimeRange{nan, 1, 2}}) {
    CHECK(error_of([&] { card_energy(t, p); }).find("card time") != std::string::npos);
  }
}

TEST_CASE("card power: one entry per FPGA preset, in the presets' order", "[analysis][fpga][power]") {
  const std::vector<CardPower>& power = card_power_presets();
  const std::vector<FpgaTarget>& targets = fpga_presets();
  REQUIRE(power.size() == targets.size());
  for (size_t i = 0; i < power.size(); ++i) {
    CHECK(power[i].card == targets[i].name);
    CHECK_NOTHROW(validate_card_power(power[i]));
    CHECK_FALSE(power[i].basis.empty());
  }
}

namespace {

// The rule of the data file: nominal = the median of the readings (or the one named), low = the
// lowest reading less its precision, high = the highest plus its precision.
Calibrated recompute(const nlohmann::json& q) {
  std::vector<double> v;
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const nlohmann::json& m : q.at("measurements")) {
    const double x = m.at("value").get<double>(), p = m.at("precision").get<double>();
    v.push_back(x);
    lo = std::min(lo, x - p);
    hi = std::max(hi, x + p);
    CHECK_FALSE(m.at("quote").get<std::string>().empty());
    CHECK_FALSE(m.at("source").at("url").get<std::string>().empty());
    CHECK_FALSE(m.at("load").get<std::string>().empty());
  }
  REQUIRE_FALSE(v.empty());
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  const double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return {median, lo, hi};
}

}  // namespace

TEST_CASE("card power: the preset table equals its data file and the file's rule", "[analysis][fpga][power]") {
  const nlohmann::json d = data_file();
  REQUIRE(d.at("cards").size() == card_power_presets().size());
  for (const nlohmann::json& c : d.at("cards")) {
    const CardPower& p = card_power(c.at("card").get<std::string>());
    INFO(p.card);
    const nlohmann::json& m = c.at("max_w");
    CHECK(p.max_w == (m.at("value").is_null() ? 0.0 : m.at("value").get<double>()));
    const nlohmann::json* cls = nullptr;
    for (const nlohmann::json& k : d.at("power_classes")) {
      if (k.at("scope") == c.at("scope")) cls = &k;
    }
    REQUIRE(cls != nullptr);
    CHECK(std::find(cls->at("cards").begin(), cls->at("cards").end(), c.at("card")) != cls->at("cards").end());
    for (const char* field : {"loaded_w", "idle_w"}) {
      const nlohmann::json& q = cls->at(field);
      const Calibrated& got = std::string(field) == "loaded_w" ? p.loaded_w : p.idle_w;
      if (q.at("values").is_null()) {
        CHECK(got.nominal == 0);
        CHECK(got.low == 0);
        CHECK(got.high == 0);
        CHECK_FALSE(q.at("searched").get<std::string>().empty());
        continue;
      }
      CHECK(got.nominal == q.at("values").at("nominal").get<double>());
      CHECK(got.low == q.at("values").at("low").get<double>());
      CHECK(got.high == q.at("values").at("high").get<double>());
      const Calibrated r = recompute(q);
      CHECK(got.nominal == Approx(r.nominal).margin(1e-9));
      CHECK(got.low == Approx(r.low).margin(1e-9));
      CHECK(got.high == Approx(r.high).margin(1e-9));
    }
  }
}

TEST_CASE("card power: the energy anchors' ratios follow from their printed figures", "[analysis][fpga][power]") {
  const nlohmann::json d = data_file();
  for (const nlohmann::json& a : d.at("energy_anchors")) {
    INFO(a.at("id").get<std::string>());
    if (!a.at("fpga_w").is_null()) {
      // Energy per operation = watts / (operations per second); same work on both.
      const double fpga_j = a.at("fpga_w").get<double>() / a.at("fpga_gops").get<double>();
      const double gpu_j = a.at("gpu_w").get<double>() / a.at("gpu_gops").get<double>();
      CHECK(a.at("energy_ratio_fpga_over_gpu").get<double>() == Approx(fpga_j / gpu_j).margin(5e-4));
      CHECK(a.at("time_ratio_fpga_over_gpu").get<double>() ==
            Approx(a.at("gpu_gops").get<double>() / a.at("fpga_gops").get<double>()).margin(5e-4));
    }
  }
  for (const nlohmann::json& a : d.at("energy_anchors")) {
    if (!a.contains("cross_check")) continue;
    // HiSpMV prints ratios only: FPGA W = 153 W (the same GPU in HiSparse) / (time ratio x the
    // efficiency ratio, 1 / energy ratio): balanced 153 / (1.6 x 2.21) = 43.27 W, imbalanced
    // 153 / (2.1 x 1.9) = 38.35 W.
    const double implied =
        153.0 * a.at("energy_ratio_fpga_over_gpu").get<double>() / a.at("time_ratio_fpga_over_gpu").get<double>();
    CHECK(a.at("cross_check").at("implied_fpga_w").get<double>() == Approx(implied).epsilon(2e-3));
  }
  // HiSparse: 45 W / 16.7 GOP/s = 2.695 nJ; 153 / 16.8 = 9.107 nJ; 2.695 / 9.107 = 0.296.
  CHECK(d.at("energy_anchors").at(0).at("energy_ratio_fpga_over_gpu").get<double>() == 0.296);
  // The anchor's 45 W is the U280 reading among the HBM2 cards' loaded power: its low end.
  CHECK(card_power("alveo-u280").loaded_w.low == d.at("energy_anchors").at(0).at("fpga_w").get<double>());
}

TEST_CASE("card energy on an estimate is unknown and never an error for a time range the model cannot order",
          "[analysis][fpga][power]") {
  // Found by card_model_fuzzer: a hostile card made the module estimate's time range low 2.1e25 s
  // above high 4e-6 s, and card_energy's check escaped as an exception from estimate_module.
  FpgaTarget t = fpga_preset("alveo-u55c");
  const EnergyRange bad = card_energy_on(TimeRange{2.0e25, 3.0e25, 4.0e-6}, t);
  CHECK(std::isnan(bad.low));
  CHECK(std::isnan(bad.nominal));
  CHECK(std::isnan(bad.high));
  // an ordered range at the preset's power: 1 ms x 61.84 W = 61.84 mJ nominal
  const EnergyRange ok = card_energy_on(TimeRange{0.5e-3, 1.0e-3, 2.0e-3}, t);
  CHECK(ok.nominal == Approx(61.84e-3));
  CHECK(ok.low == Approx(0.5e-3 * 45.0));
  CHECK(ok.high == Approx(2.0e-3 * 65.38));
}

// The card field table (card_fields) and what it drives: a card from named fields or a card
// file (card_from_fields, card_from_json), a card as a table (card_to_fields) and the docs' card
// field list. Expected figures are worked out by hand in the comments from the data sheets'
// figures docs/fpga-model.md cites, never read back from the model.
#include <catch2/catch.hpp>

#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fpgaprof/analysis/fpga_model.hpp"
#include "fpgaprof/error.hpp"

using namespace fpgaprof;
using namespace fpgaprof::analysis;

namespace {

CardValue num(double v, std::string shown = "") {
  CardValue c;
  c.kind = CardValue::Kind::kNumber;
  c.number = v;
  c.shown = shown.empty() ? std::to_string(v) : shown;
  return c;
}

CardValue str(std::string s) {
  CardValue c;
  c.kind = CardValue::Kind::kText;
  c.text = std::move(s);
  c.shown = "str";
  return c;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInvalidArgument);
    return e.what();
  }
  FAIL("no error");
  return "";
}

const CardOutput& field(const std::vector<CardOutput>& out, const std::string& name) {
  for (const CardOutput& o : out)
    if (o.name == name) return o;
  FAIL("no field " << name);
  return out.front();
}

}  // namespace

TEST_CASE("card_from_json: the DDR4 card of docs/fpga-model.md", "[analysis][fpga][card]") {
  const FpgaTarget t = card_from_json(
      R"({"name": "my-card", "memory_type": "ddr4", "memory_channels": 4, "memory_bytes_per_s": 77e9,
          "memory_capacity_bytes": 68719476736, "sram_bytes": 54e6, "dsp_count": 12288,
          "dsps_per_fma_fp32": 5, "link_bytes_per_s": 15.754e9})");
  CHECK(t.name == "my-card");
  CHECK(t.description.empty());
  CHECK(t.memory_type == "ddr4");
  CHECK(t.memory_channels == 4u);
  CHECK(t.memory_channel_bytes_per_s == Approx(19.25e9));  // 77 GB/s over 4 banks (UG1393: 19.25 GB/s a bank)
  CHECK(t.random_granule_bytes == 64);                     // DDR4 BL8 x 64 bit
  CHECK(t.dsps_per_fma_fp64 == 0);                         // not given: no fp64
  // The DDR4 calibration (docs/fpga-model.md, "Constants"): channel_share 1 (0.5-1).
  CHECK(t.channel_share.nominal == 1.0);
  CHECK(t.channel_share.low == 0.5);
  // fp32: 12,288 DSPs x 0.6675 / 5 per FMA x 2 FLOP x 222 MHz = 728.3 GFLOP/s.
  CHECK(t.flops_per_s(Precision::kFp32) == Approx(12288 * 0.6675 / 5 * 2 * 222e6));
  CHECK(t.flops_per_s(Precision::kFp64) == 0);
}

TEST_CASE("card_from_fields: a base, a calibrated field given alone, earlier names", "[analysis][fpga][card]") {
  const FpgaTarget t = card_from_fields({{"base", str("alveo-u55c")}, {"clock_hz", num(250e6)}});
  CHECK(t.name == "alveo-u55c (modified)");
  CHECK_THAT(t.description, Catch::EndsWith(" (modified: clock_hz)"));
  // Given alone, exact: its range collapses.
  CHECK(t.clock_hz.low == 250e6);
  CHECK(t.clock_hz.high == 250e6);
  // Its ends given too: a range.
  const FpgaTarget r = card_from_fields(
      {{"base", str("alveo-u55c")}, {"clock_hz", num(250e6)}, {"clock_hz_low", num(200e6)}, {"name", str("mine")}});
  CHECK(r.name == "mine");
  CHECK(r.clock_hz.low == 200e6);
  CHECK(r.clock_hz.high == 250e6);
  // hbm_bytes_per_s (memory_bytes_per_s) is split over the channels; hbm_efficiency is stream_efficiency.
  const FpgaTarget old =
      card_from_fields({{"base", str("alveo-u280")}, {"hbm_bytes_per_s", num(320e9)}, {"hbm_efficiency", num(0.8)}});
  CHECK(old.memory_channel_bytes_per_s == Approx(10e9));  // 320 GB/s over 32 pseudo-channels
  CHECK(old.stream_efficiency.low == 0.8);
  CHECK(old.stream_efficiency.high == 0.8);
  CHECK_THAT(old.description, Catch::EndsWith(" (modified: hbm_bytes_per_s, hbm_efficiency)"));
  // A base with another memory type takes that type's calibration but keeps its clock.
  const FpgaTarget ddr = card_from_fields({{"base", str("alveo-u55c")}, {"memory_type", str("ddr4")}});
  CHECK(ddr.random_granule_bytes == 64);
  CHECK(ddr.clock_hz.nominal == 222e6);
}

TEST_CASE("card_from_fields / card_from_json: typed errors naming the field", "[analysis][fpga][card]") {
  const auto from = [](CardFields f) { return [f] { card_from_fields(f); }; };
  CHECK_THAT(message_of(from({{"base", str("alveo-u55c")}, {"clock_mhz", num(250)}})),
             Catch::StartsWith("unknown FPGA target field 'clock_mhz' (did you mean clock_hz? valid fields are base, "
                               "name, description, memory_type, memory_channels, memory_bytes_per_s, dsp_count, "
                               "memory_channel_bytes_per_s,"));
  // The closest name by single-character edits, a range end's too; none when nothing is close.
  CHECK_THAT(message_of(from({{"base", str("alveo-u55c")}, {"clok_hz_hihg", num(3e8)}})),
             Catch::StartsWith("unknown FPGA target field 'clok_hz_hihg' (did you mean clock_hz_high? valid "));
  CHECK_THAT(message_of(from({{"base", str("alveo-u55c")}, {"frobnicate", num(1)}})),
             Catch::StartsWith("unknown FPGA target field 'frobnicate' (valid fields are base, name, "));
  CHECK(message_of(from({{"base", str("alveo-u55c")}, {"sram_bytes", str("big")}})) ==
        "FPGA target field 'sram_bytes' must be a number, not str");
  CardValue flag;
  flag.shown = "bool";
  CHECK(message_of(from({{"base", str("alveo-u55c")}, {"dsp_count", flag}})) ==
        "FPGA target field 'dsp_count' must be a number, not bool");
  CHECK(message_of(from({{"base", str("alveo-u55c")}, {"memory_channels", num(2.5, "2.5")}})) ==
        "FPGA target field 'memory_channels' = 2.5 must be a positive whole number of memory channels");
  CHECK(message_of(from({{"name", num(1)}})) == "FPGA target field 'name' must be a string");
  CHECK_THAT(message_of(from({{"base", str("alveo-u55c")}, {"random_access_efficiency", num(0.5)}})),
             Catch::StartsWith("FPGA target field 'random_access_efficiency' is gone"));
  CHECK_THAT(message_of(from({{"memory_bytes_per_s", num(77e9)}})),
             Catch::StartsWith("FPGA target field 'memory_bytes_per_s' needs memory_channels"));
  // A card without a base names its memory: every measured rate it takes follows from it.
  CHECK_THAT(message_of(from({{"name", str("my-card")},
                              {"memory_channels", num(4)},
                              {"memory_bytes_per_s", num(77e9)},
                              {"memory_capacity_bytes", num(68719476736.0)},
                              {"sram_bytes", num(54e6)},
                              {"dsp_count", num(12288)},
                              {"dsps_per_fma_fp32", num(5)},
                              {"link_bytes_per_s", num(15.754e9)}})),
             Catch::StartsWith("FPGA target 'my-card': memory_type is missing: it decides which measured memory "
                               "calibration the card takes (hbm2: UltraScale+ HBM, hbm2e: Versal HBM, ddr4); set it, "
                               "or start from a preset (base=one of alveo-u55c,"));
  // The validation: a share above 1.
  CHECK_THAT(message_of(from({{"base", str("alveo-u55c")}, {"onchip_share", num(1.5)}})),
             Catch::Contains("onchip_share = 1.5 must be a share in (0, 1]"));
  // A 401-digit literal: beyond a double, quoted to 40 characters.
  const std::string big = "1" + std::string(400, '0');
  CHECK(message_of([&] { card_from_json("{\"base\": \"alveo-u55c\", \"clock_hz\": " + big + "}"); }) ==
        "FPGA target field 'clock_hz' = 1" + std::string(36, '0') +
            "... (401 characters) is beyond the range of a "
            "number (1.8e308)");
  CHECK_THAT(message_of([] { card_from_json("[1]"); }),
             Catch::StartsWith("FPGA card holds a JSON array, not an object"));
  CHECK_THAT(message_of([] { card_from_json("{\"base\": "); }), Catch::StartsWith("FPGA card is not valid JSON"));
  CHECK_THAT(message_of([] { card_from_json(R"({"base": "alveo-u55c", "clock_hz": [1]})"); }),
             Catch::EndsWith("'clock_hz' must be a number, not list"));
}

TEST_CASE("card_to_fields: every field, ranges, derived rates, and it goes back in unchanged",
          "[analysis][fpga][card]") {
  const FpgaTarget& u55c = fpga_preset("alveo-u55c");
  const std::vector<CardOutput> out = card_to_fields(u55c);
  REQUIRE(out.size() >= 5);
  CHECK(out[0].name == "name");
  CHECK(out[0].text == "alveo-u55c");
  CHECK(out[3].name == "memory_channels");
  CHECK(out[3].whole == 32u);
  CHECK(field(out, "clock_hz_low").number == 147e6);
  CHECK(field(out, "clock_hz_high").number == 297e6);
  CHECK(field(out, "memory_bytes_per_s").number == Approx(460e9));  // 32 x 14.375 GB/s
  // 32 channels x 0.71875 driven x 14.375 GB/s x 0.91216 streaming efficiency = 301.6 GB/s.
  CHECK(field(out, "stream_bytes_per_s").number == Approx(32 * 0.71875 * 14.375e9 * 0.91216));
  // 9,024 DSPs x 0.5005 / 14 per fp64 FMA x 2 x 147 MHz at the slow end.
  CHECK(field(out, "card_fp64_flops_per_s_low").number == Approx(9024 * 0.5005 / 14 * 2 * 147e6));
  for (const FpgaTarget& p : fpga_presets()) {
    CardFields back;
    for (const CardOutput& o : card_to_fields(p))
      back.emplace_back(o.name, o.kind == CardFieldKind::kText    ? str(o.text)
                                : o.kind == CardFieldKind::kWhole ? num(o.whole)
                                                                  : num(o.number));
    const FpgaTarget again = card_from_fields(back);
    CHECK(again.name == p.name);
    CHECK(again.description == p.description);
    CHECK(again.link_efficiency.low == p.link_efficiency.low);
    CHECK(again.sram_bytes == p.sram_bytes);
    CHECK(again.dsps_per_fma_fp64 == p.dsps_per_fma_fp64);
  }
}

TEST_CASE("card_fields: docs/fpga-model.md lists the table", "[analysis][fpga][card]") {
  std::ifstream in(std::string(FPGAPROF_TEST_DATA_DIR) + "/../../docs/fpga-model.md");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  // The list between the two markers is card_fields_markdown() as it stands.
  const std::string doc = text.str(), begin = "<!-- card fields: begin -->\n", end = "<!-- card fields: end -->";
  const std::size_t a = doc.find(begin), b = doc.find(end);
  REQUIRE(a != std::string::npos);
  REQUIRE(b != std::string::npos);
  INFO("docs/fpga-model.md's card field list should read:\n" << card_fields_markdown());
  CHECK(doc.substr(a + begin.size(), b - a - begin.size()) == card_fields_markdown());
  // Every field validate_fpga_target checks has its rule's words in the table.
  for (const CardField& f : card_fields()) {
    CHECK(std::string(f.unit).size() + std::string(f.description).size() > 0);
    if (f.kind != CardFieldKind::kDerived && f.kind != CardFieldKind::kText) CHECK(f.check_order >= 0);
  }
}

TEST_CASE("loaded_w: a preset's board power, a custom card's own, unknown without one, bad ones refused",
          "[analysis][fpga][card][energy]") {
  // A preset carries its published board power (docs/fpga-model.md, "Card power"): the U55C's
  // HBM2 class, 61.84 W (45 to 65.38 W); the U250's DDR4 class, 67.82 W (64.48 to 68.79 W).
  const FpgaTarget u55c = fpga_preset("alveo-u55c");
  CHECK(u55c.loaded_w.nominal == 61.84);
  CHECK(u55c.loaded_w.low == 45.0);
  CHECK(u55c.loaded_w.high == 65.38);
  CHECK(fpga_preset("alveo-u250").loaded_w.nominal == 67.82);
  // A base keeps it; a custom card gives its own (alone: exact; with its ends: a range).
  CHECK(card_from_fields({{"base", str("alveo-u55c")}}).loaded_w.nominal == 61.84);
  const FpgaTarget exact = card_from_fields({{"base", str("alveo-u55c")}, {"loaded_w", num(70)}});
  CHECK((exact.loaded_w.low == 70 && exact.loaded_w.nominal == 70 && exact.loaded_w.high == 70));
  const FpgaTarget ranged =
      card_from_json(R"({"base": "alveo-u250", "loaded_w": 80, "loaded_w_low": 60, "loaded_w_high": 90})");
  CHECK((ranged.loaded_w.low == 60 && ranged.loaded_w.nominal == 80 && ranged.loaded_w.high == 90));
  // The table writes it back as loaded_w, loaded_w_low, loaded_w_high, and it goes back in.
  const std::vector<CardOutput> out = card_to_fields(ranged);
  CHECK(field(out, "loaded_w").number == 80);
  CHECK(field(out, "loaded_w_low").number == 60);
  CHECK(field(out, "loaded_w_high").number == 90);
  // A card without a base and without loaded_w: unknown power (all 0).
  const FpgaTarget own = card_from_json(
      R"({"name": "my-card", "memory_type": "ddr4", "memory_channels": 4, "memory_bytes_per_s": 77e9,
          "memory_capacity_bytes": 68719476736, "sram_bytes": 44.7e6, "dsp_count": 12288,
          "dsps_per_fma_fp32": 5, "link_bytes_per_s": 15.75e9})");
  CHECK((own.loaded_w.low == 0 && own.loaded_w.nominal == 0 && own.loaded_w.high == 0));
  // Bad values: a typed error naming the field.
  const auto bad = [](CardFields f) {
    f.insert(f.begin(), {"base", str("alveo-u55c")});
    return message_of([&] { card_from_fields(f); });
  };
  CHECK_THAT(bad({{"loaded_w", num(-5)}}), Catch::Contains("loaded_w = -5 must be > 0 (or all 0: unknown)"));
  CHECK_THAT(bad({{"loaded_w", num(std::nan(""), "nan")}}), Catch::Contains("loaded_w = nan must be a finite number"));
  CHECK_THAT(bad({{"loaded_w", num(70)}, {"loaded_w_low", num(80)}, {"loaded_w_high", num(75)}}),
             Catch::Contains("loaded_w: low 80 <= 70 <= high 75 does not hold"));
  CHECK_THAT(bad({{"loaded_w", num(70)}, {"loaded_w_low", num(0)}}),
             Catch::Contains("loaded_w_low = 0 must be > 0 when the value is known"));
  CHECK_THAT(bad({{"loaded_w", num(70000)}}), Catch::Contains("loaded_w = 70000 is over 2000 W"));
}

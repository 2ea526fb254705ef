// The result field tables (analysis/result_schema.hpp): range names, unique output names per
// table, and the getters of the FPGA op row on a hand-filled candidate (null where a value does
// not apply, a range from its three members).
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <variant>

#include "fpgaprof/analysis/result_schema.hpp"

using namespace fpgaprof::analysis;

namespace {

template <class Row, class Ctx>
const ResultField<Row, Ctx>& field(const ResultTable<Row, Ctx>& t, const std::string& name) {
  for (const auto& f : t)
    if (f.info.name == name) return f;
  FAIL("no field " << name);
  return t.front();
}

}  // namespace

TEST_CASE("a range field names its ends as the rows always have") {
  CHECK(range_end_name("card_time_s", "low") == "card_time_low_s");
  CHECK(range_end_name("card_time_s", "high") == "card_time_high_s");
  CHECK(range_end_name("op_speedup", "low") == "op_speedup_low");
  CHECK(range_end_name("restructured_region_speedup", "high") == "restructured_region_speedup_high");
}

TEST_CASE("every table's output names are unique and described") {
  for (const ResultTableInfo& t : result_tables()) {
    std::set<std::string> seen;
    for (const FieldInfo& f : t.fields) {
      INFO(t.name << "." << f.name);
      CHECK(std::string(f.description).size() > 0);
      CHECK(seen.insert(f.name).second);
      if (f.range) {
        CHECK(seen.insert(f.low_name).second);
        CHECK(seen.insert(f.high_name).second);
      }
    }
  }
}

TEST_CASE("the FPGA op row's getters read the candidate and its op") {
  OpInputs in;
  in.ops.resize(2);
  in.sources = {"a.py:1", "b.py:7"};
  in.ops[1].working_set_source = "xla buffer assignment";
  in.ops[1].onchip_input_bytes = 4096;
  FpgaCandidate c;
  c.op_index = 1;
  c.card_time_s = 2e-3;
  c.card_time_low_s = 1e-3;
  c.card_time_high_s = 5e-3;
  c.cost_known = false;
  const FpgaOpRowContext ctx{&in, 3};
  const auto& t = fpga_op_row_fields();

  CHECK(std::get<uint64_t>(field(t, "rank").get(c, ctx)) == 3);
  CHECK(std::get<std::string>(field(t, "source").get(c, ctx)) == "b.py:7");
  CHECK(std::get<double>(field(t, "onchip_input_bytes").get(c, ctx)) == 4096.0);
  // no basis, no counters, cost unknown: null, not "" / 0 / false
  CHECK(std::holds_alternative<std::monostate>(field(t, "estimate_basis").get(c, ctx)));
  CHECK(std::holds_alternative<std::monostate>(field(t, "measured_coverage").get(c, ctx)));
  CHECK(std::holds_alternative<std::monostate>(field(t, "fits_on_chip").get(c, ctx)));
  c.estimate_basis = "measured bound";
  c.measured_coverage = 0.25;
  CHECK(std::get<std::string>(field(t, "estimate_basis").get(c, ctx)) == "measured bound");
  CHECK(std::get<double>(field(t, "measured_coverage").get(c, ctx)) == 0.25);

  const auto& card = field(t, "card_time_s");
  REQUIRE(card.info.range);
  const TimeRange r = card.get_range(c, ctx);
  CHECK(r.low == 1e-3);
  CHECK(r.nominal == 2e-3);
  CHECK(r.high == 5e-3);
}

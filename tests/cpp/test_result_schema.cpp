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

namespace {

// Writes what a converter receives as compact text: {key:value,...}, [..., ...], null, numbers
// as written by std::to_string, strings quoted.
class TextWriter final : public ResultWriter {
 public:
  std::string out;
  void key(const std::string& name) override {
    comma();
    out += name + ":";
    fresh_ = true;
  }
  void value(const FieldValue& v) override {
    comma();
    if (std::holds_alternative<std::monostate>(v))
      out += "null";
    else if (const auto* u = std::get_if<uint64_t>(&v))
      out += std::to_string(*u);
    else if (const auto* i = std::get_if<int64_t>(&v))
      out += std::to_string(*i);
    else if (const auto* s = std::get_if<std::string>(&v))
      out += "\"" + *s + "\"";
    else if (const auto* b = std::get_if<bool>(&v))
      out += *b ? "true" : "false";
    else if (const auto* d = std::get_if<double>(&v))
      out += std::to_string(*d);
    else
      out += "<list>";
    fresh_ = false;
  }
  void begin_object() override { open('{'); }
  void end_object() override { close('}'); }
  void begin_list() override { open('['); }
  void end_list() override { close(']'); }

 private:
  void comma() {
    if (!fresh_ && !out.empty() && out.back() != '{' && out.back() != '[') out += ",";
    fresh_ = false;
  }
  void open(char c) {
    comma();
    out += c;
    fresh_ = true;
  }
  void close(char c) {
    out += c;
    fresh_ = false;
  }
  bool fresh_ = true;
};

}  // namespace

TEST_CASE("a nested entry writes its object in place: only the copy directions a device has") {
  DeviceCopyStats htod;
  htod.count = 2;
  htod.bytes = 8;
  htod.busy_ns = 4;
  htod.timed_bytes = 8;
  DeviceCopyStats dtod;
  dtod.count = 1;
  dtod.bytes = 3;
  dtod.busy_ns = 1;
  dtod.timed_bytes = 3;
  DeviceRow r;
  r.by_direction[static_cast<std::size_t>(Direction::kHtoD)] = htod;
  r.by_direction[static_cast<std::size_t>(Direction::kDtoD)] = dtod;
  TextWriter w;
  write_row(device_directions_fields(), r, NoContext{}, w);
  // HtoD crosses the host link (its link fields null: no peak known), DtoD does not; the
  // directions without copies are absent. 8 bytes in 4 ns = 2e9 bytes/s, 3 in 1 ns = 3e9.
  CHECK(w.out ==
        "{HtoD:{count:2,bytes:8,busy_ns:4,timed_bytes:8,achieved_bytes_per_s:2000000000.000000,link_bytes:0,"
        "link_bytes_per_s:null,link_percent:null},"
        "DtoD:{count:1,bytes:3,busy_ns:1,timed_bytes:3,achieved_bytes_per_s:3000000000.000000,link_bytes:0,"
        "link_bytes_per_s:null,link_percent:null}}");
}

TEST_CASE("a keyed object and a list are written as the table's nested writers give them") {
  fpgaprof::TraceMeta m;
  m.environment = {{"jax_version", "0.10.1"}, {"backend", "gpu"}};
  TextWriter w;
  const auto& t = trace_meta_fields();
  w.begin_object();
  for (const auto& f : t) {
    if (f.info.name != "environment" && f.info.name != "warnings") continue;
    w.key(f.info.name);
    REQUIRE(f.write != nullptr);
    f.write(m, NoContext{}, w);
  }
  w.end_object();
  // std::map order: backend before jax_version
  CHECK(w.out == "{warnings:[],environment:{backend:\"gpu\",jax_version:\"0.10.1\"}}");

  Ceilings c;
  c.peak_flops_per_s[static_cast<std::size_t>(Precision::kFp64)] = 5.0;
  TextWriter p;
  write_row(ceiling_peak_fields(), c, NoContext{}, p);
  CHECK(p.out.rfind("{fp64:5.000000,fp64_tensor:0.000000,", 0) == 0);
}

// estimate_module: the static estimate of a whole HLO module on an FPGA card (no trace), on
// hand-written HLO and the round card of fpga_fixture.hpp. Every expected number is worked out
// by hand in the comments (docs/fpga-model-cases.md, "Case E").
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "fpga_fixture.hpp"
#include "fpgaprof/analysis/fpga_model.hpp"
#include "fpgaprof/error.hpp"
#include "fpgaprof/hlo/cost_model.hpp"

using namespace fpgaprof;
using namespace fpgaprof::analysis;
using fpgaprof::testing::round_card;

namespace {

Approx near(double v) { return Approx(v).epsilon(1e-9); }

void check_range(const TimeRange& r, double low, double nominal, double high) {
  CHECK(r.low == near(low));
  CHECK(r.nominal == near(nominal));
  CHECK(r.high == near(high));
}

// x -> 10 (or an unknown number of) iterations of v = v * v, a 4e6 B f32 array carried with an
// s32 counter.
std::string loop_module(bool known_trips) {
  return std::string(R"(HloModule loop
body {
  p = (s32[], f32[1000000]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[1000000]{0} get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  n = f32[1000000]{0} multiply(v, v)
  ROOT r = (s32[], f32[1000000]{0}) tuple(j, n)
}
cond {
  q = (s32[], f32[1000000]{0}) parameter(0)
  qi = s32[] get-tuple-element(q), index=0
  k = s32[] constant(10)
  ROOT c = pred[] compare(qi, k), direction=LT
}
ENTRY e {
  x = f32[1000000]{0} parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[1000000]{0}) tuple(z, x)
  w = (s32[], f32[1000000]{0}) while(t), condition=cond, body=body)") +
         (known_trips ? R"(, backend_config={"known_trip_count":{"n":"10"}})" : "") + R"(
  ROOT y = f32[1000000]{0} get-tuple-element(w), index=1
}
)";
}

void check_energy(const EnergyRange& r, double low, double nominal, double high) {
  CHECK(r.low == near(low));
  CHECK(r.nominal == near(nominal));
  CHECK(r.high == near(high));
}

const StaticOpEstimate& row(const ModuleEstimate& m, const std::string& op) {
  for (const StaticOpEstimate& r : m.ops)
    if (r.op == op) return r;
  FAIL("no row " << op);
  return m.ops.front();
}

}  // namespace

TEST_CASE("estimate_module: a while loop with a known trip count runs its body that often",
          "[analysis][fpga][module]") {
  const hlo::Module m = hlo::analyze_hlo(loop_module(true));
  const ModuleEstimate e = estimate_module(m, round_card());
  CHECK(e.module == "loop");
  CHECK(e.target.name == "round");
  // Rows in program order: the condition's compare, then the body's add and multiply (the
  // tuple, get-tuple-element, constant and parameter instructions run no code). The body runs
  // 10 times; the condition once more (the test that ends the loop): 11 times.
  REQUIRE(e.ops.size() == 3);
  CHECK(e.ops[0].op == "c");
  CHECK(e.ops[0].computation == "cond");
  CHECK(e.ops[0].executions == 11);
  CHECK(e.ops[1].op == "j");
  CHECK(e.ops[1].executions == 10);
  CHECK(e.ops[2].op == "n");
  CHECK(e.ops[2].executions == 10);
  for (const StaticOpEstimate& r : e.ops) {
    CHECK(r.estimated);
    CHECK(r.precision == Precision::kFp32);  // pred and s32 count as fp32 work
  }
  // n = v * v: per iteration 1e6 FLOPs, 8e6 B read (v twice) + 4e6 B written = 12e6 B,
  // compulsory v once + the result = 8e6 B. x 10: 1e7 FLOPs, 1.2e8 B, 8e7 B.
  const StaticOpEstimate& n = e.ops[2];
  CHECK(n.opcode == "multiply");
  CHECK(n.computation == "body");
  CHECK(n.pattern == hlo::AccessPattern::kElementwise);
  CHECK(n.flops == near(1e7));
  CHECK(n.bytes == near(1.2e8));
  CHECK(n.stream_bytes == near(1.2e8));
  CHECK(n.random_bytes == 0);
  CHECK(n.compulsory_bytes == near(8e7));
  CHECK(n.card_limit == "memory");
  CHECK(n.memory_efficiency == near(0.4));
  // Per iteration 12e6 / (40e9, 16e9, 5e9) = 0.3, 0.75, 2.4 ms; x 10 = 3, 7.5, 24 ms.
  check_range(n.card_time_s, 3e-3, 7.5e-3, 24e-3);
  check_range(n.card_memory_s, 3e-3, 7.5e-3, 24e-3);
  // compute 1e6 / (800e9, 200e9, 50e9) x 10 = 12.5, 50, 200 us.
  check_range(n.card_compute_s, 12.5e-6, 50e-6, 200e-6);
  // Restructured alone: 8e6 B / rate x 10 = 2, 5, 16 ms.
  check_range(n.restructured_time_s, 2e-3, 5e-3, 16e-3);
  CHECK_FALSE(n.restructured_onchip);
  // c = compare(qi, k): 4 + 4 B read, 1 B (pred) written = 9 B per test: 9 / rate = 0.225,
  // 0.5625, 1.8 ns, under one clock cycle (2.5, 5, 10 ns at 400, 200, 100 MHz), which each
  // execution takes at least: x 11 = 27.5, 55, 110 ns. j = add(i, one): 12 B, 0.3, 0.75, 2.4 ns,
  // also a cycle: x 10 = 25, 50, 100 ns.
  check_range(e.ops[0].card_time_s, 27.5e-9, 55e-9, 110e-9);
  check_range(e.ops[1].card_time_s, 25e-9, 50e-9, 100e-9);
  CHECK(e.ops[0].card_limit == "cycles");
  // As compiled: the ops one after another, 3.0000525, 7.500105, 24.00021 ms, + one launch
  // (10, 20, 40 us).
  check_range(e.call_latency_s, 10e-6, 20e-6, 40e-6);
  check_range(e.card_time_s, 3.0100525e-3, 7.520105e-3, 24.04021e-3);
  // Restructured: each op alone sums to 2.0000525, 5.000105, 16.00021 ms. The whole
  // function as one dataflow design reads x and writes y once (8e6 B) and hands v from one
  // iteration to the next: 9 repeats of the body. Fast: v (4e6 B) fits in 4,608,000 B of
  // on-chip room: 8e6 / 40e9 = 0.2 ms. Nominal and slow: 4e6 > 2,304,000 and 1,152,000 B: v
  // goes out and back each repeat, 2 x 9 x 4e6 = 72e6 B: 80e6 / 16e9 = 5 ms, 80e6 / 5e9 = 16 ms.
  // Its 10 x (1e6 + 1) + 11 FLOPs take about 12.5, 50, 200 us. The dataflow design is no slower at
  // any corner (5 ms < 5.000105 ms; its stages issue 11 executions at most, 11 cycles), +
  // launch: 0.21, 5.02, 16.04 ms.
  CHECK(e.restructured_dataflow);
  CHECK_FALSE(e.restructured_onchip);
  check_range(e.restructured_card_time_s, 0.21e-3, 5.02e-3, 16.04e-3);
  // Transfer: x in, y out: 8e6 B in 2 arrays: 8e6 / (10e9, 8e9, 5e9) + 2 x (5, 10, 20) us.
  CHECK(e.transfer_bytes == 8e6);
  CHECK(e.transfer_buffers == 2);
  check_range(e.transfer_s, 0.81e-3, 1.02e-3, 1.64e-3);
  check_range(e.total_s, 3.8200525e-3, 8.540105e-3, 25.68021e-3);
  check_range(e.restructured_total_s, 1.02e-3, 6.04e-3, 17.68e-3);
  CHECK(e.not_estimated_count == 0);
  CHECK(e.notes.empty());
  // Card energy at the round card's 50 W (25 to 100 W), low x low and high x high: n as compiled
  // 3, 7.5, 24 ms -> 0.075, 0.375, 2.4 J; restructured 2, 5, 16 ms -> 0.05, 0.25, 1.6 J.
  check_energy(n.card_energy_j, 0.075, 0.375, 2.4);
  check_energy(n.restructured_card_energy_j, 0.05, 0.25, 1.6);
  // c: 27.5, 55, 110 ns -> 687.5 nJ, 2.75 uJ, 11 uJ.
  check_energy(e.ops[0].card_energy_j, 687.5e-9, 2.75e-6, 11e-6);
  // The whole function: 3.0100525 ms x 25 W = 75.2513125 mJ, 7.520105 ms x 50 W =
  // 376.00525 mJ, 24.04021 ms x 100 W = 2.404021 J; restructured 0.21, 5.02, 16.04 ms ->
  // 5.25 mJ, 0.251 J, 1.604 J. The host link is not card time: no energy of its own.
  check_energy(e.card_energy_j, 75.2513125e-3, 376.00525e-3, 2.404021);
  check_energy(e.restructured_card_energy_j, 5.25e-3, 0.251, 1.604);
}

TEST_CASE("estimate_module: a card without loaded_w has unknown energy (NaN), never 0",
          "[analysis][fpga][module][energy]") {
  FpgaTarget t = round_card();
  t.loaded_w = {0, 0, 0};
  const ModuleEstimate e = estimate_module(hlo::analyze_hlo(loop_module(true)), t);
  CHECK(e.card_time_s.nominal > 0);  // the time is there; its energy is not
  CHECK(std::isnan(e.card_energy_j.nominal));
  CHECK(std::isnan(e.card_energy_j.low));
  CHECK(std::isnan(e.restructured_card_energy_j.high));
  for (const StaticOpEstimate& r : e.ops) CHECK(std::isnan(r.card_energy_j.nominal));
}

TEST_CASE("estimate_module: a while loop without a trip count is counted once, with a note",
          "[analysis][fpga][module]") {
  const ModuleEstimate e = estimate_module(hlo::analyze_hlo(loop_module(false)), round_card());
  REQUIRE(e.ops.size() == 3);
  for (const StaticOpEstimate& r : e.ops) CHECK(r.executions == 1);
  REQUIRE(e.notes.size() == 1);
  CHECK(e.notes[0] == "while loop 'w': trip count unknown, its body counted once (a lower bound)");
  // One iteration: 0.75 ms + one 5 ns cycle each for the compare and the add, + 20 us.
  CHECK(e.card_time_s.nominal == near(0.75e-3 + 5e-9 + 5e-9 + 20e-6));
  // Restructured: the dataflow design 8e6 / 16e9 = 0.5 ms (< 0.5 ms + 10 ns alone), + 20 us.
  CHECK(e.restructured_card_time_s.nominal == near(0.52e-3));
}

TEST_CASE("estimate_module: loops in loops multiply their trip counts", "[analysis][fpga][module]") {
  const hlo::Module m = hlo::analyze_hlo(R"(HloModule nested
inner_body {
  ip = (s32[], f32[1000]{0}) parameter(0)
  ii = s32[] get-tuple-element(ip), index=0
  iv = f32[1000]{0} get-tuple-element(ip), index=1
  ione = s32[] constant(1)
  ij = s32[] add(ii, ione)
  ineg = f32[1000]{0} negate(iv)
  ROOT ir = (s32[], f32[1000]{0}) tuple(ij, ineg)
}
inner_cond {
  cp = (s32[], f32[1000]{0}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  ck = s32[] constant(4)
  ROOT icc = pred[] compare(ci, ck), direction=LT
}
outer_body {
  op = (s32[], f32[1000]{0}) parameter(0)
  oi = s32[] get-tuple-element(op), index=0
  ov = f32[1000]{0} get-tuple-element(op), index=1
  oz = s32[] constant(0)
  ot = (s32[], f32[1000]{0}) tuple(oz, ov)
  iw = (s32[], f32[1000]{0}) while(ot), condition=inner_cond, body=inner_body, backend_config={"known_trip_count":{"n":"4"}}
  iy = f32[1000]{0} get-tuple-element(iw), index=1
  oone = s32[] constant(1)
  oj = s32[] add(oi, oone)
  ROOT orr = (s32[], f32[1000]{0}) tuple(oj, iy)
}
outer_cond {
  dp = (s32[], f32[1000]{0}) parameter(0)
  di = s32[] get-tuple-element(dp), index=0
  dk = s32[] constant(3)
  ROOT occ = pred[] compare(di, dk), direction=LT
}
ENTRY e {
  x = f32[1000]{0} parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[1000]{0}) tuple(z, x)
  w = (s32[], f32[1000]{0}) while(t), condition=outer_cond, body=outer_body, backend_config={"known_trip_count":{"n":"3"}}
  ROOT y = f32[1000]{0} get-tuple-element(w), index=1
}
)");
  const ModuleEstimate e = estimate_module(m, round_card());
  // The outer body 3 times, its condition 3 + 1 = 4; the inner body 3 x 4 = 12 times, its
  // condition 3 x (4 + 1) = 15.
  REQUIRE(e.ops.size() == 5);
  CHECK(e.ops[0].op == "occ");
  CHECK(e.ops[0].executions == 4);
  CHECK(e.ops[1].op == "icc");
  CHECK(e.ops[1].executions == 15);
  CHECK(e.ops[2].op == "ij");
  CHECK(e.ops[2].executions == 12);
  CHECK(e.ops[3].op == "ineg");
  CHECK(e.ops[3].executions == 12);
  CHECK(e.ops[3].flops == 12000);  // 1000 negations x 12
  CHECK(e.ops[4].op == "oj");
  CHECK(e.ops[4].executions == 3);
  CHECK(e.notes.empty());
}

TEST_CASE("estimate_module: a conditional counts its costliest branch", "[analysis][fpga][module]") {
  const hlo::Module m = hlo::analyze_hlo(R"(HloModule cond
t_branch {
  a = f32[1000000]{0} parameter(0)
  ROOT e1 = f32[1000000]{0} exponential(a)
}
f_branch {
  a2 = f32[1000000]{0} parameter(0)
  b2 = f32[1000000]{0} multiply(a2, a2)
  ROOT s2 = f32[1000000]{0} add(b2, a2)
}
ENTRY e {
  p = pred[] parameter(0)
  x = f32[1000000]{0} parameter(1)
  ROOT cnd = f32[1000000]{0} conditional(p, x, x), true_computation=t_branch, false_computation=f_branch
}
)");
  const ModuleEstimate e = estimate_module(m, round_card());
  // Branch cost (FLOPs + bytes): t_branch exp 0 + 8e6 = 8e6; f_branch multiply 1e6 + 12e6 and
  // add 1e6 + 12e6 = 26e6: f_branch.
  REQUIRE(e.notes.size() == 1);
  CHECK(e.notes[0] == "conditional 'cnd': its costliest branch 'f_branch' counted");
  REQUIRE(e.ops.size() == 2);
  CHECK(e.ops[0].op == "b2");
  CHECK(e.ops[0].computation == "f_branch");
  CHECK(e.ops[1].op == "s2");
  // b2 = a2 * a2: 12e6 B as compiled (0.3, 0.75, 2.4 ms), 8e6 compulsory (0.2, 0.5, 1.6 ms);
  // s2 = b2 + a2: 12e6 B, all compulsory: 0.3, 0.75, 2.4 ms either way.
  check_range(e.ops[0].restructured_time_s, 0.2e-3, 0.5e-3, 1.6e-3);
  check_range(e.ops[1].restructured_time_s, 0.3e-3, 0.75e-3, 2.4e-3);
  // As compiled 0.6, 1.5, 4.8 ms + launch = 0.61, 1.52, 4.84 ms.
  check_range(e.card_time_s, 0.61e-3, 1.52e-3, 4.84e-3);
  // Transfer: p 1 B + x 4e6 B in, the result 4e6 B out: 8,000,001 B in 3 arrays:
  // / (10e9, 8e9, 5e9) + 3 x (5, 10, 20) us = 815.0001, 1030.000125, 1660.0002 us.
  CHECK(e.transfer_bytes == 8000001);
  CHECK(e.transfer_buffers == 3);
  check_range(e.transfer_s, 815.0001e-6, 1030.000125e-6, 1660.0002e-6);
  // Restructured: alone 0.5, 1.25, 4 ms; as one design 8,000,001 B / (40e9, 16e9, 5e9) =
  // 200.000025, 500.0000625, 1600.0002 us (compute 2e6 FLOPs: 2.5, 10, 40 us): the design.
  CHECK(e.restructured_dataflow);
  check_range(e.restructured_card_time_s, 210.000025e-6, 520.0000625e-6, 1640.0002e-6);
}

TEST_CASE("estimate_module: calls are walked, a custom call without a rule is not estimated",
          "[analysis][fpga][module]") {
  const hlo::Module m = hlo::analyze_hlo(R"(HloModule calls
g_callee {
  a3 = f32[1000000]{0} parameter(0)
  ROOT m3 = f32[1000000]{0} multiply(a3, a3)
}
ENTRY e {
  x = f32[1000000]{0} parameter(0)
  c = f32[1000000]{0} call(x), to_apply=g_callee
  u = f32[1000000]{0} custom-call(c), custom_call_target="my_solver"
  ROOT r = (f32[1000000]{0}, f32[1000000]{0}) tuple(c, u)
}
)");
  const ModuleEstimate e = estimate_module(m, round_card());
  REQUIRE(e.ops.size() == 2);
  const StaticOpEstimate& m3 = row(e, "m3");
  CHECK(m3.computation == "g_callee");
  CHECK(m3.executions == 1);
  CHECK(m3.estimated);
  const StaticOpEstimate& u = row(e, "u");
  CHECK_FALSE(u.estimated);
  CHECK(u.opcode == "custom-call");
  CHECK(u.estimate_note == "not estimated: custom call 'my_solver' has no cost rule");
  CHECK(std::isnan(u.card_energy_j.nominal));  // not estimated: null energy, never 0
  CHECK(std::isnan(u.restructured_card_energy_j.nominal));
  CHECK(std::isnan(u.card_time_s.nominal));
  CHECK(std::isnan(u.restructured_time_s.low));
  CHECK(std::isnan(u.memory_efficiency));
  CHECK(e.not_estimated_count == 1);
  REQUIRE(e.notes.size() == 1);
  CHECK(e.notes[0] == "1 op(s) without a cost are in no time above: the card time is a lower bound");
  // m3 only: 0.3, 0.75, 2.4 ms + launch = 0.31, 0.77, 2.44 ms.
  check_range(e.card_time_s, 0.31e-3, 0.77e-3, 2.44e-3);
  // Transfer: x 4e6 B in; the result, a tuple of two 4e6 B arrays, out: 12e6 B in 3 arrays:
  // / (10e9, 8e9, 5e9) + 3 x (5, 10, 20) us = 1.215, 1.53, 2.46 ms.
  CHECK(e.transfer_bytes == 12e6);
  CHECK(e.transfer_buffers == 3);
  check_range(e.transfer_s, 1.215e-3, 1.53e-3, 2.46e-3);
  check_range(e.total_s, 1.525e-3, 2.3e-3, 4.9e-3);
  // Restructured: m3 alone streams its compulsory 8e6 B (0.2, 0.5, 1.6 ms); one design for
  // the function would stream its 12e6 B of arguments and results (0.3, 0.75, 2.4 ms): the op
  // alone is better. + launch: 0.21, 0.52, 1.64 ms.
  CHECK_FALSE(e.restructured_dataflow);
  check_range(e.restructured_card_time_s, 0.21e-3, 0.52e-3, 1.64e-3);
  check_range(e.restructured_total_s, 1.425e-3, 2.05e-3, 4.1e-3);
}

TEST_CASE("estimate_module: case D's module, the gather's table on chip", "[analysis][fpga][module]") {
  const hlo::Module m = hlo::analyze_hlo(R"(HloModule case_d
add_y {
  a = f32[1000000]{0} parameter(0)
  b = f32[1000000]{0} parameter(1)
  ROOT s = f32[1000000]{0} add(a, b)
}
ENTRY e {
  table = f32[262144]{0} parameter(0)
  idx = s32[1000000,1]{1,0} parameter(1)
  y = f32[1000000]{0} parameter(2)
  gather = f32[1000000]{0} gather(table, idx), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
  ROOT add_fusion = f32[1000000]{0} fusion(gather, y), kind=kLoop, calls=add_y
}
)");
  const ModuleEstimate e = estimate_module(m, round_card());
  // Two rows: the gather and the fusion (one op; its fused computation is not walked).
  REQUIRE(e.ops.size() == 2);
  const StaticOpEstimate& g = row(e, "gather");
  CHECK(g.pattern == hlo::AccessPattern::kGatherScatter);
  CHECK(g.stream_bytes == 8e6);
  CHECK(g.random_bytes == 4e6);
  CHECK(g.compulsory_bytes == 9048576);
  CHECK(g.card_limit == "random access");
  // As in test_analysis_fpga_random_access.cpp: 1.45, 5.5, 21.6 ms as compiled; restructured
  // with the table on chip 226.2144, 565.536, 1809.7152 us.
  check_range(g.card_time_s, 1.45e-3, 5.5e-3, 21.6e-3);
  check_range(g.restructured_time_s, 226.2144e-6, 565.536e-6, 1809.7152e-6);
  CHECK(g.restructured_onchip);
  const StaticOpEstimate& a = row(e, "add_fusion");
  CHECK(a.opcode == "fusion");
  check_range(a.card_time_s, 0.3e-3, 0.75e-3, 2.4e-3);
  // As compiled: 1.75, 6.25, 24 ms + launch.
  check_range(e.card_time_s, 1.76e-3, 6.27e-3, 24.04e-3);
  // Transfer: table 1,048,576 + idx 4e6 + y 4e6 in, 4e6 out: 13,048,576 B in 4 arrays:
  // / (10e9, 8e9, 5e9) + 4 x (5, 10, 20) us = 1324.8576, 1671.072, 2689.7152 us.
  CHECK(e.transfer_bytes == 13048576);
  CHECK(e.transfer_buffers == 4);
  check_range(e.transfer_s, 1324.8576e-6, 1671.072e-6, 2689.7152e-6);
  // Restructured: the ops alone 526.2144, 1315.536, 4209.7152 us; as one design the 13,048,576
  // B once: 326.2144, 815.536, 2609.7152 us, the gather served on chip (78.125, 312.5,
  // 1250 us): the design; + launch: 336.2144, 835.536, 2649.7152 us (as region "recon").
  CHECK(e.restructured_dataflow);
  CHECK(e.restructured_onchip);
  check_range(e.restructured_card_time_s, 336.2144e-6, 835.536e-6, 2649.7152e-6);
  check_range(e.restructured_total_s, 336.2144e-6 + 1324.8576e-6, 835.536e-6 + 1671.072e-6,
              2649.7152e-6 + 2689.7152e-6);
}

TEST_CASE("estimate_module: a loop that sums one row of a large argument per trip reads it once",
          "[analysis][fpga][module]") {
  // for i in range(2000): acc += x[i].sum(), x f32[2000,1000] (8e6 B, larger than every end's
  // on-chip room): the body's fusion dynamic-slices row i (the loop's counter: in order).
  const hlo::Module m = hlo::analyze_hlo(R"(HloModule rowsum
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused_row {
  p0 = f32[2000,1000]{1,0} parameter(0)
  p1 = s32[] parameter(1)
  z = s32[] constant(0)
  ds = f32[1,1000]{1,0} dynamic-slice(p0, p1, z), dynamic_slice_sizes={1,1000}
  init = f32[] constant(0)
  ROOT r = f32[] reduce(ds, init), dimensions={0,1}, to_apply=add
}
body {
  p = (s32[], f32[], f32[2000,1000]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[] get-tuple-element(p), index=1
  x = f32[2000,1000]{1,0} get-tuple-element(p), index=2
  row = f32[] fusion(x, i), kind=kLoop, calls=fused_row
  acc2 = f32[] add(acc, row)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[], f32[2000,1000]{1,0}) tuple(j, acc2, x)
}
cond {
  q = (s32[], f32[], f32[2000,1000]{1,0}) parameter(0)
  qi = s32[] get-tuple-element(q), index=0
  n = s32[] constant(2000)
  ROOT c = pred[] compare(qi, n), direction=LT
}
ENTRY e {
  x = f32[2000,1000]{1,0} parameter(0)
  z = s32[] constant(0)
  a0 = f32[] constant(0)
  t = (s32[], f32[], f32[2000,1000]{1,0}) tuple(z, a0, x)
  w = (s32[], f32[], f32[2000,1000]{1,0}) while(t), condition=cond, body=body, backend_config={"known_trip_count":{"n":"2000"}}
  ROOT y = f32[] get-tuple-element(w), index=1
}
)");
  const ModuleEstimate e = estimate_module(m, round_card());
  REQUIRE(e.ops.size() == 4);
  // The fusion streams the row (4,000 B), its offset (4 B) and its sum (4 B) a trip: 4,008 B,
  // 2000 times; its input is the whole 8,000,004 B (x and i).
  const StaticOpEstimate& r = row(e, "row");
  CHECK(r.executions == 2000);
  CHECK(r.stream_bytes == near(2000 * 4008.0));
  CHECK(r.random_bytes == 0);
  // Each op alone: the fusion 4,008 B / (40e9, 16e9, 5e9) = 100.2, 250.5, 801.6 ns a trip
  // (above its cycle, 2.5, 5, 10 ns), x 2000 = 200.4, 501, 1603.2 us; the compare (2001 runs) and
  // the two adds (2000 each), a cycle each: 15.0025, 30.005, 60.01 us. Sum 215.4025, 531.005,
  // 1663.21 us.
  check_range(r.restructured_time_s, 200.4e-6, 501e-6, 1603.2e-6);
  // As one design: the io is x once and the sum, 8,000,004 B, and the trips together read
  // 2000 x 4,008 B from the body's input, 16,000 B more than its one read of 8,000,004 - 4 B
  // (not the whole of x again on each of the 1,999 repeats): 8,016,004 B / (40e9, 16e9, 5e9) =
  // 200.4001, 501.00025, 1603.2008 us, above the 2,001 cycles and the FLOPs. + launch (10, 20,
  // 40 us).
  CHECK(e.transfer_bytes == 8000004);
  CHECK(e.restructured_dataflow);
  check_range(e.restructured_card_time_s, 210.4001e-6, 521.00025e-6, 1643.2008e-6);
}

TEST_CASE("estimate_module: a table gathered directly and through a bitcast is on chip once",
          "[analysis][fpga][module]") {
  // Two gathers of 1e6 f32 from one 1.5e6 B table, the second through a bitcast of it, summed.
  const hlo::Module m = hlo::analyze_hlo(R"(HloModule twoviews
ENTRY e {
  table = f32[375000]{0} parameter(0)
  idx = s32[1000000,1]{1,0} parameter(1)
  g1 = f32[1000000]{0} gather(table, idx), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
  tb = f32[375000,1]{1,0} bitcast(table)
  g2 = f32[1000000]{0} gather(tb, idx), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,1}
  ROOT s = f32[1000000]{0} add(g1, g2)
}
)");
  const ModuleEstimate e = estimate_module(m, round_card());
  REQUIRE(e.ops.size() == 3);
  // As one design: io = the table, the indices and the sum, 1.5e6 + 4e6 + 4e6 = 9.5e6 B:
  // 237.5, 593.75, 1900 us. The table (1.5e6 B, once: not 3e6 B for its two names) fits the
  // fast and nominal rooms (4,608,000, 2,304,000 B): its 2e6 one-element reads on chip,
  // copies floor(room / 1.5e6) = 3 (fast), 1 (nominal), 326 blocks each, min(lanes 32, 16,
  // 2 x blocks) a cycle: 2e6 / (32 x 400e6) = 156.25 us, 2e6 / (16 x 200e6) = 625 us. Fast
  // 237.5 us, nominal 625 us, + launch 10, 20 us.
  CHECK(e.restructured_dataflow);
  CHECK(e.restructured_onchip);
  CHECK(e.restructured_card_time_s.low == near(247.5e-6));
  CHECK(e.restructured_card_time_s.nominal == near(645e-6));
}

TEST_CASE("estimate_module: a table gathered before a loop and inside it is on chip once", "[analysis][fpga][module]") {
  // The twoviews module above with its second gather inside a while body (one trip), from the
  // table the loop's state carries unchanged: the same 1.5e6 B array, not a second one.
  const hlo::Module m = hlo::analyze_hlo(R"(HloModule loopview
body {
  p = (s32[], f32[375000]{0}, s32[1000000,1]{1,0}, f32[1000000]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  t = f32[375000]{0} get-tuple-element(p), index=1
  ix = s32[1000000,1]{1,0} get-tuple-element(p), index=2
  g2 = f32[1000000]{0} gather(t, ix), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT r = (s32[], f32[375000]{0}, s32[1000000,1]{1,0}, f32[1000000]{0}) tuple(j, t, ix, g2)
}
cond {
  q = (s32[], f32[375000]{0}, s32[1000000,1]{1,0}, f32[1000000]{0}) parameter(0)
  qi = s32[] get-tuple-element(q), index=0
  n = s32[] constant(1)
  ROOT c = pred[] compare(qi, n), direction=LT
}
ENTRY e {
  table = f32[375000]{0} parameter(0)
  idx = s32[1000000,1]{1,0} parameter(1)
  g1 = f32[1000000]{0} gather(table, idx), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
  z = s32[] constant(0)
  st = (s32[], f32[375000]{0}, s32[1000000,1]{1,0}, f32[1000000]{0}) tuple(z, table, idx, g1)
  w = (s32[], f32[375000]{0}, s32[1000000,1]{1,0}, f32[1000000]{0}) while(st), condition=cond, body=body, backend_config={"known_trip_count":{"n":"1"}}
  y = f32[1000000]{0} get-tuple-element(w), index=3
  ROOT s = f32[1000000]{0} add(g1, y)
}
)");
  const ModuleEstimate e = estimate_module(m, round_card());
  // g1, the add, the body's gather and counter add (1 trip), the compare (2 runs).
  REQUIRE(e.ops.size() == 5);
  // As one design, as twoviews: io = the table, the indices and the sum, 9.5e6 B: 237.5,
  // 593.75, 1900 us. The table (1.5e6 B, once: not 3e6 B for its names in two computations)
  // fits the fast and nominal rooms (4,608,000, 2,304,000 B): the 2e6 one-element reads on
  // chip, 156.25 us fast, 625 us nominal; above the 3 cycles of the counter add and the
  // compare and the 1e6 FLOPs of the add. Fast 237.5 us, nominal 625 us, + launch 10, 20 us.
  CHECK(e.restructured_dataflow);
  CHECK(e.restructured_onchip);
  CHECK(e.restructured_card_time_s.low == near(247.5e-6));
  CHECK(e.restructured_card_time_s.nominal == near(645e-6));
}

TEST_CASE("estimate_module: what it refuses", "[analysis][fpga][module]") {
  hlo::Module no_entry;
  no_entry.name = "empty";
  CHECK_THROWS_AS(estimate_module(no_entry, round_card()), Error);
  CHECK_THROWS_WITH(estimate_module(no_entry, round_card()), Catch::Contains("has no entry computation"));
  FpgaTarget bad = round_card();
  bad.link_bytes_per_s = 0;
  CHECK_THROWS_WITH(estimate_module(hlo::analyze_hlo(loop_module(true)), bad),
                    Catch::Contains("link_bytes_per_s is missing"));
}

TEST_CASE("estimate_module: a while body that runs its own computation is walked once",
          "[analysis][fpga][module][hostile]") {
  // body holds one add and two whiles whose body is body itself (XLA never writes this). The
  // walk enters body from the entry's while, counts its add once, and does not enter body again
  // from inside it: before hlo::CallPath guarded the walk, 2^64 expansions ran out of memory.
  const std::string text = R"(HloModule rec

cond {
  p = s32[] parameter(0)
  ROOT c = pred[] constant(true)
}

body {
  p = s32[] parameter(0)
  a = s32[] add(p, p)
  w1 = s32[] while(a), condition=cond, body=body
  ROOT w2 = s32[] while(w1), condition=cond, body=body
}

ENTRY e {
  p = s32[] parameter(0)
  ROOT w = s32[] while(p), condition=cond, body=body
}
)";
  const ModuleEstimate e = estimate_module(hlo::analyze_hlo(text), round_card());
  REQUIRE(e.ops.size() == 1);
  CHECK(e.ops[0].op == "a");
  CHECK(e.ops[0].executions == 1);
  const std::string recursion =
      "computation 'body' calls itself (a recursion XLA never writes): not expanded again (the card time is a lower "
      "bound)";
  CHECK(std::count(e.notes.begin(), e.notes.end(), recursion) == 1);
}

TEST_CASE("estimate_module: a call graph built to explode is cut with a note", "[analysis][fpga][module][hostile]") {
  // c_k runs c_{k-1} in two while loops of 2 trips, 40 levels: 2^40 expansions of c0's negate
  // without a cap. The walk stops after 16 x instructions + 4,096 op visits.
  std::string text = "HloModule boom\n\ncond {\n  p = s32[] parameter(0)\n  ROOT c = pred[] constant(true)\n}\n\n";
  text += "c0 {\n  p = s32[] parameter(0)\n  ROOT n = s32[] negate(p)\n}\n\n";
  const std::string cfg = R"(backend_config={"known_trip_count":{"n":"2"}})";
  for (int k = 1; k <= 40; ++k) {
    const std::string prev = "c" + std::to_string(k - 1);
    text += "c" + std::to_string(k) +
            " {\n  p = s32[] parameter(0)\n  w1 = s32[] while(p), condition=cond, body=" + prev + ", " + cfg +
            "\n  ROOT w2 = s32[] while(w1), condition=cond, body=" + prev + ", " + cfg + "\n}\n\n";
  }
  text += "ENTRY e {\n  p = s32[] parameter(0)\n  ROOT w = s32[] call(p), to_apply=c40\n}\n";
  const hlo::Module m = hlo::analyze_hlo(text);
  std::size_t instructions = 0;
  for (const hlo::Computation& c : m.computations) instructions += c.instructions.size();
  const ModuleEstimate e = estimate_module(m, round_card());
  CHECK(e.ops.size() <= 16 * instructions + 4096);
  CHECK(!e.ops.empty());
  CHECK(std::any_of(e.notes.begin(), e.notes.end(), [](const std::string& n) {
    return n.find("op executions to walk: the rest are not counted") != std::string::npos;
  }));
}

// Roofline and FPGA what-if on a constructed trace; every expected number is worked out by
// hand in the comments (the FPGA cases A and B step by step in docs/fpga-model-cases.md).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <utility>

#include "analysis_fixture.hpp"
#include "fpga_fixture.hpp"
#include "fpgaprof/analysis/fpga_model.hpp"
#include "fpgaprof/analysis/roofline.hpp"
#include "fpgaprof/error.hpp"

using namespace fpgaprof;
using namespace fpgaprof::analysis;

namespace {

using testing::kernel;
DeviceInfo device() { return testing::sm80_device(); }

struct Fixture {
  TraceStore store;
  std::vector<OpCost> ops;
  std::vector<uint32_t> op_of_kernel;
  Fixture() {
    store.devices = {device()};
    const StringId ew = store.strings.intern("loop_add_fusion");
    const StringId gemm = store.strings.intern("sm80_gemm");
    const StringId tiny = store.strings.intern("tiny");
    // op0: elementwise f32, 1e6 FLOP, 8e6 B read + 4e6 B written per execution.
    OpCost op0;
    op0.name = "add_fusion";
    op0.flops = 1e6;
    op0.bytes_read = 8e6;
    op0.bytes_written = 4e6;
    op0.working_set_bytes = 4e6;
    op0.pattern = hlo::AccessPattern::kElementwise;
    op0.precision = Precision::kFp32;
    // op1: f32 dot -> tf32 tensor roof, 2e9 FLOP, 4e6 + 2e6 B per execution.
    OpCost op1;
    op1.name = "dot";
    op1.flops = 2e9;
    op1.bytes_read = 4e6;
    op1.bytes_written = 2e6;
    op1.working_set_bytes = 2e6;
    op1.pattern = hlo::AccessPattern::kDot;
    op1.precision = Precision::kTf32Tensor;
    ops = {op0, op1};
    // k0, k1: op0 in two thunk ranges (5, 6) -> 2 executions, 20 us each.
    // k2, k3: op1, both in thunk range 7 -> 1 execution of 2 kernels (100 us + 50 us).
    // k4: unattributed 2 us kernel with one block, in region 1.
    store.kernels = {kernel(store, 0, 20000, 5, 0, 1000, ew), kernel(store, 30000, 20000, 6, 0, 1000, ew),
                     kernel(store, 60000, 100000, 7, 0, 1000, gemm), kernel(store, 170000, 50000, 7, 0, 1000, gemm),
                     kernel(store, 230000, 2000, kNone32, 1, 1, tiny)};
    op_of_kernel = {0, 0, 1, 1, kNone32};
    RegionRecord r0;
    r0.start_ns = 0;
    r0.end_ns = 300000;
    r0.thread_id = 1;
    RegionRecord r1;
    r1.start_ns = 225000;
    r1.end_ns = 240000;
    r1.thread_id = 1;
    r1.parent = 0;
    r1.depth = 1;
    store.regions = {r0, r1};
  }
};

}  // namespace

TEST_CASE("Roofline per op, region, kernel name and kernel", "[analysis][roofline]") {
  Fixture f;
  const Ceilings c = table_ceilings(f.store.devices[0]);
  REQUIRE(c.flops_for(Precision::kFp32) == Approx(12.8e12));
  REQUIRE(c.dram_bytes_per_s == Approx(1.024e12));
  RooflineOptions o;
  o.per_kernel = true;
  o.region_rows = RegionRows::kInstances;
  const RooflineReport r = analyze_roofline(f.store, c, f.ops, f.op_of_kernel, o);

  // op0: 2 executions x (1e6 FLOP, 12e6 B) over 40 us: intensity 1/12 = 0.08333 FLOP/B;
  // roof = min(12.8e12, 0.08333 x 1.024e12 = 85.33e9) = 85.33e9 FLOP/s; achieved 2e6 / 40e-6
  // = 50e9 FLOP/s -> 58.59 % (the same as 24e6 B / 40 us = 600 GB/s of 1024 GB/s).
  const RooflinePoint& p0 = r.ops[0];
  CHECK(p0.kernel_count == 2);
  CHECK(p0.executions == 2);
  CHECK(p0.time_ns == 40000);
  CHECK(p0.flops == Approx(2e6));
  CHECK(p0.bytes == Approx(24e6));
  CHECK(p0.intensity == Approx(1.0 / 12.0));
  CHECK(p0.achieved_bytes_per_s == Approx(600e9));
  CHECK(p0.roof_flops_per_s == Approx(85.333e9).epsilon(1e-4));
  CHECK(p0.percent_of_roof == Approx(58.59).epsilon(1e-3));
  CHECK(p0.bound == Bound::kMemory);
  CHECK(p0.ridge_flops_per_byte == Approx(12.5));

  // op1: one execution split over 2 kernels (each gets half the cost); 2e9 FLOP / 6e6 B =
  // 333.3 FLOP/B > ridge 100 -> compute; achieved 2e9 / 150e-6 = 13.33e12 of 102.4e12 = 13.02 %.
  const RooflinePoint& p1 = r.ops[1];
  CHECK(p1.executions == 1);
  CHECK(p1.flops == Approx(2e9));
  CHECK(p1.intensity == Approx(333.333).epsilon(1e-5));
  CHECK(p1.precision == Precision::kTf32Tensor);
  CHECK(p1.roof_flops_per_s == Approx(102.4e12));
  CHECK(p1.percent_of_roof == Approx(13.02).epsilon(1e-3));
  CHECK(p1.bound == Bound::kCompute);
  CHECK(r.kernels[2].flops == Approx(1e9));
  CHECK(r.kernels[3].flops == Approx(1e9));

  // Trace: 192 us of kernels, 2 us of them unattributed.
  CHECK(r.trace.time_ns == 192000);
  CHECK(r.unattributed_kernels == 1);
  CHECK(r.unattributed_ns == 2000);
  CHECK(r.trace.cost_coverage == Approx(190000.0 / 192000.0));
  // Region 1 holds only the 2 us kernel: mean 2 us < 5 us -> latency. Region 0 is inclusive.
  CHECK(r.regions[1].bound == Bound::kLatency);
  CHECK(r.regions[1].kernel_count == 1);
  CHECK(r.regions[0].kernel_count == 5);
  CHECK(r.regions[0].time_ns == 192000);
  CHECK(r.kernels[4].bound == Bound::kLatency);
  CHECK(r.kernels[0].bound == Bound::kMemory);
  // Kernel names by time: sm80_gemm (150 us), loop_add_fusion (40 us), tiny (2 us).
  REQUIRE(r.kernel_names.size() == 3);
  CHECK(f.store.strings.get(r.kernel_names[0]) == "sm80_gemm");
  CHECK(r.by_kernel_name[0].time_ns == 150000);
  CHECK(r.by_kernel_name[2].bound == Bound::kLatency);
}

TEST_CASE("Roofline: kernels without timestamps add cost, not rates", "[analysis][roofline]") {
  // The fixture with the dot's two kernels untimed (start = end: a counter replay left them
  // without timestamps). The trace's cost still holds the dot (2.002e9 FLOP, 30e6 B: its
  // intensity), but its rates are over the timed kernels' cost only: add_fusion's 24e6 B in
  // 40 us = 600 GB/s, 58.59 % of its roof, as the op alone (the dot's 2e9 FLOP over add_fusion's
  // 40 us read 50 TFLOP/s, 390 % of the roof).
  Fixture f;
  f.store.kernels[2].end_ns = f.store.kernels[2].start_ns;
  f.store.kernels[3].end_ns = f.store.kernels[3].start_ns;
  const Ceilings c = table_ceilings(f.store.devices[0]);
  const RooflineReport r = analyze_roofline(f.store, c, f.ops, f.op_of_kernel);
  CHECK(r.trace.flops == Approx(2.002e9));
  CHECK(r.trace.bytes == Approx(30e6));
  CHECK(r.trace.intensity == Approx(2.002e9 / 30e6));
  CHECK(r.trace.achieved_bytes_per_s == Approx(600e9));
  CHECK(r.trace.achieved_flops_per_s == Approx(50e9));
  CHECK(r.trace.percent_of_roof == Approx(58.59).epsilon(1e-3));
  CHECK(r.ops[1].time_ns == 0);
  CHECK(r.ops[1].percent_of_roof == 0.0);
  // The mean kernel duration (the latency rule's input) is over the 3 timed kernels,
  // (20 + 20 + 2 us) / 3 = 14 us, not over all 5 (8.4 us, as if the dot's had run in 0 ns).
  CHECK(r.trace.mean_kernel_ns() == Approx(14000));
}

TEST_CASE("Roofline: tiny grid rule and measured counters", "[analysis][roofline]") {
  Fixture f;
  // 10 blocks < 0.5 x 100 SMs and (as below) < 10 % of the roof -> latency though it runs 20 us.
  LaunchConfig ten_blocks;
  ten_blocks.grid_x = 10;
  ten_blocks.grid_y = 1;
  ten_blocks.grid_z = 1;
  f.store.kernels[0].launch_config = f.store.kernels[1].launch_config = f.store.intern_launch_config(ten_blocks);
  f.ops[0].bytes_read = 0.4e6;  // 2 x (1e6 FLOP, 0.8e6 B) in 40 us: 40 GB/s = 3.9 % of DRAM
  f.ops[0].bytes_written = 0.4e6;
  // Counters for kernel 0: 1000 ffma + 500 fadd -> 2500 FLOP; DRAM 3e6 + 1e6 B.
  const auto add = [&](const char* metric, double v) {
    CounterRecord cr;
    cr.kernel_index = 0;
    cr.metric = f.store.strings.intern(metric);
    cr.value = v;
    f.store.counters.push_back(cr);
  };
  add("sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 1000);
  add("sm__sass_thread_inst_executed_op_fadd_pred_on.sum", 500);
  add("dram__bytes_read.sum", 3e6);
  add("dram__bytes_write.sum", 1e6);
  const Ceilings c = table_ceilings(f.store.devices[0]);
  const RooflineReport r = analyze_roofline(f.store, c, f.ops, f.op_of_kernel);
  CHECK(r.ops[0].percent_of_roof == Approx(3.906).epsilon(1e-3));
  CHECK(r.ops[0].bound == Bound::kLatency);
  REQUIRE(r.ops[0].has_measured);
  CHECK(r.ops[0].measured_flops == Approx(2500));
  CHECK(r.ops[0].measured_bytes == Approx(4e6));
  CHECK(r.ops[0].measured_intensity == Approx(2500.0 / 4e6));
  // Counters cover k0 only (20 us of op0's 40 us): measured intensity 2500 / 4e6 = 6.25e-4
  // FLOP/B, roof min(12.8e12, 6.25e-4 x 1.024e12 = 640e6) = 640e6 FLOP/s; rate over k0's
  // 20 us = 2500 / 20e-6 = 125e6 FLOP/s -> 19.531 % (over all 40 us it would read 9.766 %).
  CHECK(r.ops[0].measured_kernel_count == 1);
  CHECK(r.ops[0].measured_time_ns == 20000);
  CHECK(r.ops[0].measured_coverage == Approx(0.5));
  CHECK(r.ops[0].measured_percent_of_roof == Approx(19.53125));
  // 10 blocks < 50 but 19.5 % >= the 10 % tiny-grid limit, 20 us >= 5 us, 6.25e-4 < ridge
  // 12.5: memory-bound (the diluted 9.766 % would have made it latency-bound).
  CHECK(r.ops[0].measured_bound == Bound::kMemory);
  CHECK_FALSE(r.ops[1].has_measured);
  CHECK(r.ops[1].measured_kernel_count == 0);
  CHECK(r.ops[1].measured_coverage == 0.0);
  // Trace: k0's 20 us of 192 us of kernels have counters.
  CHECK(r.trace.measured_kernel_count == 1);
  CHECK(r.trace.measured_coverage == Approx(20000.0 / 192000.0));
  const auto m = measured_kernels(f.store);
  REQUIRE(m.size() == 5);
  CHECK(m[0].has);
  CHECK_FALSE(m[1].has);
}

TEST_CASE("Roofline: measured rates are over the kernels that have counters", "[analysis][roofline]") {
  // Two 20 us kernels of one op (1000 blocks each), counters for the first only (the second
  // ran past the counter image). Counters: 1000 ffma = 2000 FLOP, DRAM 3e6 + 1e6 = 4e6 B.
  // Intensity 2000 / 4e6 = 5e-4 FLOP/B; roof = min(12.8e12, 5e-4 x 1.024e12) = 512e6 FLOP/s.
  // Over the measured kernel's 20 us: 2000 / 20e-6 = 100e6 FLOP/s = 19.531 % of the roof
  // (the same as 4e6 B / 20 us = 200 GB/s of 1024 GB/s). Over both kernels' 40 us it would
  // read 9.766 %, as if the second kernel had done no work.
  TraceStore s;
  s.devices = {device()};
  const StringId ew = s.strings.intern("ew");
  s.kernels = {kernel(s, 0, 20000, kNone32, kNone32, 1000, ew), kernel(s, 30000, 20000, kNone32, kNone32, 1000, ew)};
  const auto add_counters = [&](uint32_t kernel_index) {
    for (const auto& [metric, v] : {std::pair{"dram__bytes_read.sum", 3e6}, std::pair{"dram__bytes_write.sum", 1e6},
                                    std::pair{"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 1000.0}}) {
      CounterRecord cr;
      cr.kernel_index = kernel_index;
      cr.metric = s.strings.intern(metric);
      cr.value = v;
      s.counters.push_back(cr);
    }
  };
  add_counters(0);
  OpCost op;
  op.name = "add";
  op.flops = 1e6;
  op.bytes_read = 8e6;
  op.bytes_written = 4e6;
  op.pattern = hlo::AccessPattern::kElementwise;
  const Ceilings c = table_ceilings(s.devices[0]);
  const RooflineReport r = analyze_roofline(s, c, {op}, {0, 0});
  const RooflinePoint& p = r.ops[0];
  CHECK(p.kernel_count == 2);
  CHECK(p.time_ns == 40000);
  REQUIRE(p.has_measured);
  CHECK(p.measured_kernel_count == 1);
  CHECK(p.measured_time_ns == 20000);
  CHECK(p.measured_coverage == Approx(0.5));
  CHECK(p.measured_flops == Approx(2000));
  CHECK(p.measured_bytes == Approx(4e6));
  CHECK(p.measured_intensity == Approx(5e-4));
  CHECK(p.measured_percent_of_roof == Approx(19.53125));
  CHECK(p.measured_bound == Bound::kMemory);
  // The kernel-name row and the trace hold the same two kernels: the same numbers.
  REQUIRE(r.by_kernel_name.size() == 1);
  CHECK(r.by_kernel_name[0].measured_percent_of_roof == Approx(19.53125));
  CHECK(r.trace.measured_coverage == Approx(0.5));
  // Counters on both kernels (the second the same as the first): 4000 FLOP over 40 us = the
  // same 19.531 %, coverage 1.
  add_counters(1);
  const RooflinePoint full = analyze_roofline(s, c, {op}, {0, 0}).ops[0];
  CHECK(full.measured_kernel_count == 2);
  CHECK(full.measured_coverage == Approx(1.0));
  CHECK(full.measured_flops == Approx(4000));
  CHECK(full.measured_percent_of_roof == Approx(19.53125));
}

TEST_CASE("Roofline input validation", "[analysis][roofline]") {
  Fixture f;
  const Ceilings c = table_ceilings(f.store.devices[0]);
  CHECK_THROWS_AS(analyze_roofline(f.store, c, f.ops, {0, 1}), Error);
  CHECK_THROWS_AS(analyze_roofline(f.store, c, f.ops, {0, 0, 1, 9, kNone32}), Error);
  const RooflineReport r = analyze_roofline(f.store, c, f.ops, {});
  CHECK(r.unattributed_kernels == 5);
  CHECK(r.trace.bound == Bound::kUnknown);  // no cost known anywhere, mean 38.4 us
}

namespace {

Approx near(double v) { return Approx(v).epsilon(1e-9); }

const FpgaCandidate& candidate(const FpgaReport& rep, const std::string& name) {
  for (const FpgaCandidate& c : rep.candidates)
    if (c.name == name) return c;
  FAIL("no candidate " << name);
  return rep.candidates.front();
}

}  // namespace

TEST_CASE("FPGA what-if, case A: small elementwise op over PCIe on the round card", "[analysis][fpga]") {
  // docs/fpga-model-cases.md, case A. The fixture's ops have no HLO: the card streams their
  // bytes (card_work_from_totals): add_fusion 1e6 FLOP, 8e6 B in + 4e6 B out per execution.
  Fixture f;
  const Ceilings c = table_ceilings(f.store.devices[0]);
  const RooflineReport r = analyze_roofline(f.store, c, f.ops, f.op_of_kernel);
  FpgaOptions o;
  o.workload_ns = 1e6;  // the traced program took 1 ms
  const FpgaReport rep = rank_fpga_candidates(f.ops, r, testing::round_card(), o);
  REQUIRE(rep.candidates.size() == 2);
  const FpgaCandidate& a = candidate(rep, "add_fusion");
  CHECK(a.executions == 2);
  // Score inputs: 40 of 192 us; intensity 1e6 / 12e6 = 1/12, ridge 12.5: boundness
  // 1 - (1/12) / 12.5 = 0.993333; elementwise 1; 4e6 B <= 4,608,000 B on chip: 1.
  CHECK(a.time_share == near(40.0 / 192.0));
  CHECK(a.memory_boundness == near(1.0 - (1.0 / 12.0) / 12.5));
  CHECK(a.pattern_affinity == 1.0);
  CHECK(a.fits_on_chip);
  CHECK(a.onchip_factor == 1.0);
  // Card, per execution: compute 1e6 / (800e9, 200e9, 50e9) = 1.25, 5, 20 us; memory
  // 12e6 / (40e9, 16e9, 5e9) = 0.3, 0.75, 2.4 ms. Two executions + two launches of
  // (10, 20, 40) us: card = 0.62, 1.54, 4.88 ms.
  CHECK(a.flops == near(2e6));
  CHECK(a.bytes == near(24e6));
  CHECK(a.stream_bytes == near(24e6));
  CHECK(a.random_bytes == 0);
  CHECK(a.card_compute_s == near(10e-6));
  CHECK(a.card_memory_s == near(1.5e-3));
  CHECK(a.card_latency_s == near(40e-6));
  CHECK(a.card_limit == "memory");
  CHECK(a.memory_efficiency == near(0.4));
  CHECK(a.card_time_low_s == near(0.62e-3));
  CHECK(a.card_time_s == near(1.54e-3));
  CHECK(a.card_time_high_s == near(4.88e-3));
  // Transfer: (8e6 + 4e6) x 2 = 24e6 B in (1 + 1) x 2 = 4 buffers: 24e6 / (10e9, 8e9, 5e9) +
  // 4 x (5, 10, 20) us = 2.42, 3.04, 4.88 ms.
  CHECK(a.transfer_bytes == near(24e6));
  CHECK(a.transfer_low_s == near(2.42e-3));
  CHECK(a.transfer_s == near(3.04e-3));
  CHECK(a.transfer_high_s == near(4.88e-3));
  // Total 3.04, 4.58, 9.76 ms; op_speedup 40 us / 4.58 ms = 0.0087336 (range 40 / 9760 =
  // 0.0040984 to 40 / 3040 = 0.0131579).
  CHECK(a.fpga_total_low_s == near(3.04e-3));
  CHECK(a.fpga_total_s == near(4.58e-3));
  CHECK(a.fpga_total_high_s == near(9.76e-3));
  CHECK(a.op_speedup == near(40e-6 / 4.58e-3));
  CHECK(a.op_speedup_low == near(40e-6 / 9.76e-3));
  CHECK(a.op_speedup_high == near(40e-6 / 3.04e-3));
  // Amdahl: 1 ms - 40 us + 4.58 ms = 5.54 ms -> 0.180505; range 1 / 10.72 = 0.093284 to
  // 1 / 4 = 0.25.
  CHECK(a.workload_speedup == near(1.0 / 5.54));
  CHECK(a.workload_speedup_low == near(1.0 / 10.72));
  CHECK(a.workload_speedup_high == near(0.25));
  // link_factor = 40 / (40 + 3040) = 0.012987; score = 0.208333 x (0.25 + 0.75 x 0.993333 =
  // 0.995) x 1 x 1 x 0.012987 = 0.0026921.
  CHECK(a.link_factor == near(40.0 / 3080.0));
  CHECK(a.score == near(40.0 / 192.0 * 0.995 * 40.0 / 3080.0));
  // Every byte is compulsory: restructured = as compiled.
  CHECK(a.restructured_bytes == near(24e6));
  CHECK_FALSE(a.restructured_onchip);
  CHECK(a.restructured_card_time_s == near(1.54e-3));
  CHECK(a.restructured_card_time_low_s == near(0.62e-3));
  CHECK(a.restructured_card_time_high_s == near(4.88e-3));
  CHECK(a.restructured_op_speedup == near(40e-6 / 4.58e-3));
  CHECK(a.scenario == "neither");

  // dot (tf32 -> fp32 on the card): 2e9 FLOP / (800e9, 200e9, 50e9) = 2.5, 10, 40 ms >
  // memory 6e6 / rate = 0.15, 0.375, 1.2 ms; + 1 launch: 2.51, 10.02, 40.04 ms. Transfer 6e6 B
  // in 2 buffers: 0.61, 0.77, 1.24 ms. Total 10.79 ms: 150 us / 10.79 ms = 0.013902.
  const FpgaCandidate& d = candidate(rep, "dot");
  CHECK(d.card_limit == "compute");
  CHECK(d.card_time_s == near(10.02e-3));
  CHECK(d.transfer_s == near(0.77e-3));
  CHECK(d.fpga_total_low_s == near(2.51e-3 + 0.61e-3));
  CHECK(d.fpga_total_high_s == near(40.04e-3 + 1.24e-3));
  CHECK(d.op_speedup == near(150e-6 / 10.79e-3));
  // Score: 150/192 x (0.25 + 0.75 x 0: intensity 333 > ridge 100) x 0.3 x 1 x
  // 150 / (150 + 770) = 0.0095533 (add_fusion 0.0026921).
  CHECK(d.memory_boundness == 0.0);
  CHECK(d.score == near(150.0 / 192.0 * 0.25 * 0.3 * 150.0 / 920.0));
  // Neither gains even at the fast end (0.0480x, 0.0132x): each could save nothing, so they
  // rank by GPU time, dot (150 us) before add_fusion (40 us).
  CHECK(d.could_save_ns == 0.0);
  CHECK(a.could_save_ns == 0.0);
  CHECK(d.verdict == "no");
  CHECK(rep.candidates[0].name == "dot");
  // Nothing gains.
  CHECK(rep.combined_count == 0);
  CHECK(rep.combined_speedup == 1.0);
  CHECK(rep.combined_speedup_low == 1.0);
  CHECK(rep.combined_speedup_high == 1.0);
  CHECK(rep.restructured_combined_count == 0);
  CHECK(rep.restructured_combined_speedup == 1.0);
  CHECK(rep.workload_ns == 1e6);
  CHECK(rep.gpu_kernel_ns == 192000);

  SECTION("the GPU's own host link caps the transfer") {
    // 6e9 B/s: 24e6 / 6e9 = 4 ms + 4 x 10 us = 4.04 ms (nominal; the card's 8e9 is faster).
    FpgaOptions capped = o;
    capped.gpu_link_bytes_per_s = 6e9;
    CHECK(candidate(rank_fpga_candidates(f.ops, r, testing::round_card(), capped), "add_fusion").transfer_s ==
          near(4.04e-3));
  }
  SECTION("data resident on the card: no transfer") {
    FpgaOptions resident = o;
    resident.inputs_cross_link = false;
    const FpgaReport resident_report = rank_fpga_candidates(f.ops, r, testing::round_card(), resident);
    const FpgaCandidate& ar = candidate(resident_report, "add_fusion");
    CHECK(ar.transfer_s == 0.0);
    CHECK(ar.transfer_bytes == 0.0);
    CHECK(ar.link_factor == 1.0);
    CHECK(ar.fpga_total_s == near(1.54e-3));
    CHECK(ar.op_speedup == near(40e-6 / 1.54e-3));  // 0.025974
  }
  SECTION("min_time_share drops the small op") {
    FpgaOptions big = o;
    big.min_time_share = 0.5;  // add_fusion 0.208, dot 0.781
    const FpgaReport only = rank_fpga_candidates(f.ops, r, testing::round_card(), big);
    REQUIRE(only.candidates.size() == 1);
    CHECK(only.candidates[0].name == "dot");
  }
}

TEST_CASE("FPGA what-if: a user card given in FLOP/s per precision instead of DSPs", "[analysis][fpga]") {
  Fixture f;
  const RooflineReport r = analyze_roofline(f.store, table_ceilings(f.store.devices[0]), f.ops, f.op_of_kernel);
  FpgaTarget t = testing::round_card();
  t.name = "flops-only";
  t.dsp_count = 0;
  t.dsps_per_fma_fp32 = t.dsps_per_fma_fp16 = 0;
  t.fp32_flops_per_s = 0.5e9;  // a slow card: case A's op becomes compute-bound
  CHECK_FALSE(t.uses_dsp_model());
  CHECK_NOTHROW(validate_fpga_target(t));
  CHECK(t.flops_per_s(Precision::kFp32) == 0.5e9);
  CHECK(t.flops_per_s(Precision::kTf32Tensor) == 0.5e9);
  CHECK(t.flops_per_s(Precision::kFp64) == 0.0);
  CHECK(t.flops_per_s(Precision::kFp16) == 0.0);
  FpgaOptions o;
  o.workload_ns = 1e6;
  const FpgaReport rep = rank_fpga_candidates(f.ops, r, t, o);
  const FpgaCandidate& a = candidate(rep, "add_fusion");
  // Per execution: 1e6 / 0.5e9 = 2 ms at every corner (a given rate has no range) > memory
  // 0.3, 0.75, 2.4 ms... except at the slow corner: 2.4 ms. Two executions: 4, 4, 4.8 ms;
  // + launches 20, 40, 80 us: 4.02, 4.04, 4.88 ms.
  CHECK(a.card_compute_s == near(4e-3));
  CHECK(a.card_memory_s == near(1.5e-3));
  CHECK(a.card_limit == "compute");
  CHECK(a.card_time_low_s == near(4.02e-3));
  CHECK(a.card_time_s == near(4.04e-3));
  CHECK(a.card_time_high_s == near(4.88e-3));
  CHECK(a.fpga_total_s == near(4.04e-3 + 3.04e-3));
  // The dot is tf32 -> fp32: 2e9 / 0.5e9 = 4 s.
  CHECK(candidate(rep, "dot").card_compute_s == near(4.0));
}

namespace {

// Case B: one stencil op, 1 execution, 1e8 FLOP, 0.6e9 B read + 0.4e9 B written, working set
// 32 MB, on the fictional GPU (one kernel of `gpu_ns`); optionally a custom call without a cost
// rule (one 10 ms kernel).
struct StencilTrace {
  TraceStore s;
  std::vector<OpCost> ops;
  std::vector<uint32_t> op_of_kernel;
  StencilTrace(uint64_t gpu_ns, bool with_solver) {
    s.devices = {device()};
    s.kernels = {kernel(s, 0, gpu_ns, 1, kNone32, 1000, s.strings.intern("stencil"))};
    OpCost st;
    st.name = "stencil_fusion";
    st.flops = 1e8;
    st.bytes_read = 0.6e9;
    st.bytes_written = 0.4e9;
    st.working_set_bytes = 32e6;
    st.pattern = hlo::AccessPattern::kStencil;
    st.precision = Precision::kFp32;
    ops = {st};
    op_of_kernel = {0};
    if (with_solver) {
      s.kernels.push_back(kernel(s, gpu_ns + 1000000, 10000000, 2, kNone32, 1000, s.strings.intern("solver_kernel")));
      OpCost solver;
      solver.name = "solver";
      solver.bytes_read = 4194304;
      solver.bytes_written = 4194304;
      solver.working_set_bytes = 4194304;
      solver.pattern = hlo::AccessPattern::kLibraryCall;
      solver.cost_known = false;
      solver.cost_unknown_reason = "custom call 'my_vendor_solver' has no cost rule";
      ops.push_back(solver);
      op_of_kernel.push_back(1);
    }
  }
  RooflineReport roofline() const { return analyze_roofline(s, table_ceilings(s.devices[0]), ops, op_of_kernel); }
};

FpgaOptions resident(double workload_ns) {
  FpgaOptions o;
  o.workload_ns = workload_ns;
  o.inputs_cross_link = false;
  return o;
}

}  // namespace

TEST_CASE("FPGA what-if, case B: a large stream with data resident on a 64-channel round card", "[analysis][fpga]") {
  // docs/fpga-model-cases.md, case B: 10 ms on the GPU, the workload 20 ms.
  const StencilTrace tr(10000000, false);
  const FpgaReport rep = rank_fpga_candidates(tr.ops, tr.roofline(), testing::wide_round_card(), resident(20e6));
  REQUIRE(rep.candidates.size() == 1);
  const FpgaCandidate& b = rep.candidates[0];
  // Memory 1e9 B / (640e9, 256e9, 80e9) = 1.5625, 3.90625, 12.5 ms; compute 1e8 / (800e9,
  // 200e9, 50e9) = 0.125, 0.5, 2 ms; + 1 launch (10, 20, 40 us): 1.5725, 3.92625, 12.54 ms.
  CHECK(b.card_memory_s == near(3.90625e-3));
  CHECK(b.card_compute_s == near(0.5e-3));
  CHECK(b.card_limit == "memory");
  CHECK(b.memory_efficiency == near(0.4));  // 1e9 / (3.90625e-3 x 640e9 peak)
  CHECK(b.card_time_low_s == near(1.5725e-3));
  CHECK(b.card_time_s == near(3.92625e-3));
  CHECK(b.card_time_high_s == near(12.54e-3));
  CHECK(b.transfer_s == 0.0);
  CHECK(b.link_factor == 1.0);
  CHECK(b.fpga_total_s == near(3.92625e-3));
  // op_speedup 10 / 3.92625 = 2.546960 (range 10 / 12.54 = 0.797448 to 10 / 1.5725 = 6.359300).
  CHECK(b.op_speedup == near(10.0 / 3.92625));
  CHECK(b.op_speedup_low == near(10.0 / 12.54));
  CHECK(b.op_speedup_high == near(10.0 / 1.5725));
  // Amdahl: 20 / (20 - 10 + 3.92625) = 1.436137 (range 20 / 22.54 = 0.887311 to
  // 20 / 11.5725 = 1.728235).
  CHECK(b.workload_speedup == near(20.0 / 13.92625));
  CHECK(b.workload_speedup_low == near(20.0 / 22.54));
  CHECK(b.workload_speedup_high == near(20.0 / 11.5725));
  // Restructured: every byte compulsory (no HLO): the same; it gains as compiled.
  CHECK(b.restructured_card_time_s == near(3.92625e-3));
  CHECK(b.restructured_op_speedup == near(10.0 / 3.92625));
  CHECK(b.scenario == "as compiled");
  // One op offloaded: combined = its workload speedup, at the ends of its range (the slow end
  // loses 2.54 ms: 20 / 22.54).
  CHECK(rep.combined_count == 1);
  CHECK(rep.combined_speedup == near(20.0 / 13.92625));
  CHECK(rep.combined_speedup_low == near(20.0 / 22.54));
  CHECK(rep.combined_speedup_high == near(20.0 / 11.5725));
  CHECK(rep.restructured_combined_count == 1);
  CHECK(rep.restructured_combined_speedup == near(20.0 / 13.92625));
  // Score: share 1; intensity 0.1, boundness 1 - 0.1 / 12.5 = 0.992; stencil 1; 32e6 B >
  // 4,608,000 B on chip: 0.5 + 0.5 x 4.608 / 32 = 0.572; link 1:
  // (0.25 + 0.75 x 0.992 = 0.994) x 0.572 = 0.568568.
  CHECK_FALSE(b.fits_on_chip);
  CHECK(b.onchip_factor == near(0.572));
  CHECK(b.score == near(0.994 * 0.572));
}

TEST_CASE("FPGA what-if: an op with unknown static cost gets no estimate and no share of the combined speedup",
          "[analysis][fpga]") {
  // Case B's stencil with one 5 ms kernel, and a solver (custom call without a cost rule, one
  // 10 ms kernel, 4,194,304 B of operands and as many of results); the workload took 20 ms.
  // Kernels: 15 ms.
  const StencilTrace tr(5000000, true);
  const RooflineReport r = tr.roofline();
  SECTION("data resident on the 64-channel round card: an operand bound") {
    const FpgaReport rep = rank_fpga_candidates(tr.ops, r, testing::wide_round_card(), resident(20e6));
    REQUIRE(rep.candidates.size() == 2);
    const FpgaCandidate& a = candidate(rep, "stencil_fusion");
    const FpgaCandidate& b = candidate(rep, "solver");
    // Ranked by what offloading could change: the stencil at most 5 - 1.5725 = 3.4275 ms (its
    // card time's fast end, resident); the solver's bound leaves 10 ms - 23.1072 us =
    // 9.9768928 ms possible, so the solver comes first, carrying its bound.
    CHECK(a.could_save_ns == near(3.4275e6));
    CHECK(b.could_save_ns == near(10e6 - 23107.2));
    CHECK(rep.candidates[0].name == "solver");
    CHECK(a.verdict == "gains");
    CHECK(b.verdict == "unknown: bound only");
    CHECK(a.name == "stencil_fusion");
    CHECK(a.cost_known);
    CHECK(a.estimate_basis == "static");
    CHECK(a.estimate_note.empty());
    // 5 / 15 x 0.994 x 1 x 0.572 x 1 = 0.189523.
    CHECK(a.score == near(5.0 / 15.0 * 0.994 * 0.572));
    // Card 3.92625 ms (case B): 5 / 3.92625 = 1.273480; workload 20 / (20 - 5 + 3.92625) = 1.056733.
    CHECK(a.op_speedup == near(5.0 / 3.92625));
    CHECK(a.workload_speedup == near(20.0 / 18.92625));
    CHECK(b.name == "solver");
    CHECK_FALSE(b.cost_known);
    CHECK(b.estimate_basis == "operand bound");
    CHECK(b.is_bound());
    CHECK(b.estimate_note ==
          "bound only: no static cost (custom call 'my_vendor_solver' has no cost rule); its operands and results "
          "alone, streamed once (FLOPs unknown): the card times are lower bounds, the speedups upper bounds");
    CHECK(b.time_share == near(10.0 / 15.0));
    CHECK(b.pattern_affinity == near(0.3));
    // No score, no FLOPs, no intensity: nothing to rank it by.
    for (double v : {b.flops, b.bytes, b.intensity, b.memory_boundness, b.working_set_bytes, b.onchip_factor, b.score})
      CHECK(std::isnan(v));
    // The bound: 8,388,608 B streamed at (640e9, 256e9, 80e9) B/s = 13.1072, 32.768, 104.8576 us,
    // + 1 launch (10, 20, 40 us) = 23.1072, 52.768, 144.8576 us: the card needs at least that.
    CHECK(b.stream_bytes == 8388608);
    CHECK(b.card_limit == "memory");
    CHECK(b.card_time_low_s == near(23.1072e-6));
    CHECK(b.card_time_s == near(52.768e-6));
    CHECK(b.card_time_high_s == near(144.8576e-6));
    // So it is at most 10 / 0.052768 = 189.5087x faster (10 / 0.0231072 = 432.766x at the fast
    // end): no verdict. Restructured moves the same 8,388,608 B: the same bound.
    CHECK(b.op_speedup == near(10.0 / 52.768e-3));
    CHECK(b.op_speedup_high == near(10.0 / 23.1072e-3));
    CHECK(b.restructured_card_time_s == near(52.768e-6));
    CHECK(b.restructured_op_speedup == near(10.0 / 52.768e-3));
    CHECK(b.scenario.empty());
    // Combined: the stencil alone.
    CHECK(rep.combined_count == 1);
    CHECK(rep.combined_speedup == near(20.0 / 18.92625));
    CHECK(rep.not_estimated_count == 1);
    CHECK(rep.not_estimated_gpu_ns == 10e6);
    CHECK(rep.bounded_count == 1);
    CHECK(rep.ruled_out_count == 0);
  }
  SECTION("counters measured the solver: a measured bound, and a bound that rules it out") {
    // Counters over half of its time: 1e9 FLOPs and 10e9 DRAM bytes there, so 2e9 FLOPs and
    // 20e9 B over all of it (1 execution).
    RooflineReport m = r;
    RooflinePoint& p = m.ops[1];
    p.has_measured = true;
    p.measured_coverage = 0.5;
    p.measured_flops = 1e9;
    p.measured_bytes = 10e9;
    const FpgaReport rep = rank_fpga_candidates(tr.ops, m, testing::wide_round_card(), resident(20e6));
    const FpgaCandidate& b = candidate(rep, "solver");
    CHECK(b.estimate_basis == "measured bound");
    CHECK(b.measured_coverage == 0.5);
    CHECK(b.estimate_note ==
          "bound only: no static cost (custom call 'my_vendor_solver' has no cost rule); FLOPs and DRAM bytes "
          "measured by counters over 50% of its time, streamed at the card's best (access pattern unknown): the "
          "card times are lower bounds, the speedups upper bounds");
    CHECK(b.flops == near(2e9));
    CHECK(b.bytes == near(20e9));
    CHECK(b.intensity == near(0.1));
    // 20e9 B of DRAM traffic for 8,388,608 B of operands and results: 2384.185791x.
    CHECK(b.measured_traffic_ratio == near(20e9 / 8388608));
    CHECK(std::isnan(b.score));
    // As compiled: 20e9 B / (640e9, 256e9, 80e9) = 31.25, 78.125, 250 ms (compute 2e9 / (800e9,
    // 200e9, 50e9) = 2.5, 10, 40 ms) + launch = 31.26, 78.145, 250.04 ms.
    CHECK(b.card_time_low_s == near(31.26e-3));
    CHECK(b.card_time_s == near(78.145e-3));
    CHECK(b.card_time_high_s == near(250.04e-3));
    CHECK(b.op_speedup == near(10.0 / 78.145));
    CHECK(b.op_speedup_high == near(10.0 / 31.26));
    // Restructured: its operands and results once (8,388,608 B < 20e9 B: 13.1072 us at the fast
    // end), so compute-bound: 2.5, 10, 40 ms + launch = 2.51, 10.02, 40.04 ms; at most
    // 10 / 10.02 = 0.998x, 10 / 2.51 = 3.984x at the fast end: not ruled out.
    CHECK(b.restructured_card_time_low_s == near(2.51e-3));
    CHECK(b.restructured_card_time_s == near(10.02e-3));
    CHECK(b.restructured_card_time_high_s == near(40.04e-3));
    CHECK(b.restructured_op_speedup_high == near(10.0 / 2.51));
    CHECK(b.scenario.empty());
    CHECK(rep.ruled_out_count == 0);
    // 5 times the FLOPs (1e10 over all of it): restructured 12.5 ms + 10 us at the fast end:
    // at most 10 / 12.51 = 0.799x; as compiled at most 10 / 31.26 = 0.320x: ruled out.
    p.measured_flops = 5e9;
    const FpgaReport out = rank_fpga_candidates(tr.ops, m, testing::wide_round_card(), resident(20e6));
    const FpgaCandidate& c = candidate(out, "solver");
    CHECK(c.restructured_op_speedup_high == near(10.0 / 12.51));
    CHECK(c.op_speedup_high == near(10.0 / 31.26));
    CHECK(c.scenario == "neither");
    CHECK(out.ruled_out_count == 1);
    // Ruled out, it could change nothing: after the stencil (3.4275 ms), verdict "no".
    CHECK(c.could_save_ns == 0.0);
    CHECK(c.verdict == "no");
    CHECK(out.candidates[1].name == "solver");
    CHECK(out.ruled_out_gpu_ns == 10e6);
    CHECK(out.combined_count == 1);  // still the stencil alone
    // Without bytes to go by (no operands, no counters): not estimated at all.
    std::vector<OpCost> bare = tr.ops;
    bare[1].bytes_read = bare[1].bytes_written = 0;
    const FpgaReport none =
        rank_fpga_candidates(bare, analyze_roofline(tr.s, table_ceilings(tr.s.devices[0]), bare, tr.op_of_kernel),
                             testing::wide_round_card(), resident(20e6));
    const FpgaCandidate& n = candidate(none, "solver");
    // Nothing bounds it: it could change all of its 10 ms, first.
    CHECK(n.could_save_ns == 10e6);
    CHECK(n.verdict == "unknown: not estimated");
    CHECK(none.candidates[0].name == "solver");
    CHECK(n.estimate_basis.empty());
    CHECK(n.estimate_note == "not estimated: no FLOP/byte count (custom call 'my_vendor_solver' has no cost rule)");
    for (double v : {n.card_time_s, n.op_speedup, n.restructured_op_speedup, n.transfer_s, n.score})
      CHECK(std::isnan(v));
    CHECK(none.bounded_count == 0);
  }
  SECTION("over PCIe nothing gains") {
    // The stencil moves 0.6e9 + 0.4e9 B in 2 buffers: 1e9 / 8e9 = 125 ms + 20 us of transfer.
    FpgaOptions o;
    o.workload_ns = 20e6;
    const FpgaReport rep = rank_fpga_candidates(tr.ops, r, testing::wide_round_card(), o);
    REQUIRE(rep.candidates.size() == 2);
    const FpgaCandidate& st = candidate(rep, "stencil_fusion");
    CHECK(st.transfer_s == near(125.02e-3));
    CHECK(st.op_speedup == near(5e-3 / (3.92625e-3 + 125.02e-3)));
    CHECK(st.could_save_ns == 0.0);  // the link alone takes longer than its 5 ms
    // The solver's bound over PCIe: its 8,388,608 B in 2 buffers cross the link, 1.048576 ms +
    // 20 us, + 52.768 us on the card: at most 10 / 1.121344 = 8.918x.
    CHECK(rep.candidates[0].name == "solver");
    CHECK(rep.candidates[0].transfer_s == near(8388608 / 8e9 + 20e-6));
    CHECK(rep.candidates[0].op_speedup == near(10e-3 / (52.768e-6 + 8388608 / 8e9 + 20e-6)));
    CHECK(rep.combined_count == 0);
    CHECK(rep.combined_speedup == 1.0);
  }
  SECTION("two bounded ops rank by what their bounds leave possible, before a scored op that cannot gain") {
    StencilTrace three(5000000, true);
    OpCost small = three.ops[1];
    small.name = "small_solver";
    three.ops.push_back(small);
    three.s.kernels.push_back(kernel(three.s, 17000000, 1000000, 3, kNone32, 1000, three.s.strings.intern("small")));
    three.op_of_kernel.push_back(2);
    const FpgaReport rep = rank_fpga_candidates(three.ops, three.roofline(), testing::wide_round_card(), FpgaOptions{});
    REQUIRE(rep.candidates.size() == 3);
    // Over PCIe the stencil's link alone (125 ms) outlasts its 5 ms: it could save nothing.
    // Each solver's bound: 8,388,608 B over the link and 23.1072 us on the card at the fast
    // end, well under 10 ms and under 1 ms, so each could save part of its time.
    CHECK(rep.candidates[0].name == "solver");        // could save up to ~9.1 ms of 10 ms
    CHECK(rep.candidates[1].name == "small_solver");  // up to ~0.1 ms of 1 ms
    CHECK(rep.candidates[2].name == "stencil_fusion");
    CHECK(rep.candidates[0].could_save_ns > rep.candidates[1].could_save_ns);
    CHECK(rep.candidates[1].could_save_ns > 0.0);
    CHECK(rep.candidates[2].could_save_ns == 0.0);
    CHECK(rep.not_estimated_count == 2);
    CHECK(rep.not_estimated_gpu_ns == 11e6);
  }
  SECTION("mismatched inputs are refused") {
    CHECK_THROWS_AS(rank_fpga_candidates({tr.ops[0]}, r, testing::wide_round_card(), FpgaOptions{}), Error);
    CHECK_THROWS_AS(rank_fpga_candidates(tr.ops, r, testing::wide_round_card(), FpgaOptions{}, {1.0}), Error);
  }
}

TEST_CASE("FPGA ranking key and verdict words", "[analysis][fpga]") {
  const double kNaN = std::numeric_limits<double>::quiet_NaN();
  // 10 ms on the GPU, at most 4x at the fast end: 10 - 10 / 4 = 7.5 ms could be saved.
  CHECK(could_save_ns(10e6, 4.0, 0.5) == near(7.5e6));
  CHECK(could_save_ns(10e6, 0.5, 4.0) == near(7.5e6));  // the restructured end counts too
  CHECK(could_save_ns(10e6, 0.9, 0.99) == 0.0);         // ruled out: changes nothing
  CHECK(could_save_ns(10e6, kNaN, kNaN) == 10e6);       // nothing bounds it: all of it
  CHECK(could_save_ns(0.0, kNaN, kNaN) == 0.0);         // no GPU time
  CHECK(offload_verdict("as compiled", false) == "gains");
  CHECK(offload_verdict("restructured only", false) == "only restructured");
  CHECK(offload_verdict("neither", true) == "no");
  CHECK(offload_verdict("", true) == "unknown: bound only");
  CHECK(offload_verdict("", false) == "unknown: not estimated");
}

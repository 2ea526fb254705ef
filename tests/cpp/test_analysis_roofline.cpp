// Roofline and FPGA what-if on a constructed trace; every expected number is worked out by
// hand in the comments (and the FPGA cases step by step in docs/fpga-model.md).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <utility>

#include "fpgaprof/analysis/fpga_model.hpp"
#include "fpgaprof/analysis/roofline.hpp"
#include "fpgaprof/error.hpp"
#include "analysis_fixture.hpp"

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
    op0.name = "add_fusion"; op0.flops = 1e6; op0.bytes_read = 8e6; op0.bytes_written = 4e6;
    op0.working_set_bytes = 4e6; op0.pattern = hlo::AccessPattern::kElementwise; op0.precision = Precision::kFp32;
    // op1: f32 dot -> tf32 tensor roof, 2e9 FLOP, 4e6 + 2e6 B per execution.
    OpCost op1;
    op1.name = "dot"; op1.flops = 2e9; op1.bytes_read = 4e6; op1.bytes_written = 2e6;
    op1.working_set_bytes = 2e6; op1.pattern = hlo::AccessPattern::kDot; op1.precision = Precision::kTf32Tensor;
    ops = {op0, op1};
    // k0, k1: op0 in two thunk ranges (5, 6) -> 2 executions, 20 us each.
    // k2, k3: op1, both in thunk range 7 -> 1 execution of 2 kernels (100 us + 50 us).
    // k4: unattributed 2 us kernel with one block, in region 1.
    store.kernels = {kernel(store, 0, 20000, 5, 0, 1000, ew), kernel(store, 30000, 20000, 6, 0, 1000, ew),
                     kernel(store, 60000, 100000, 7, 0, 1000, gemm), kernel(store, 170000, 50000, 7, 0, 1000, gemm),
                     kernel(store, 230000, 2000, kNone32, 1, 1, tiny)};
    op_of_kernel = {0, 0, 1, 1, kNone32};
    RegionRecord r0; r0.start_ns = 0; r0.end_ns = 300000; r0.thread_id = 1;
    RegionRecord r1; r1.start_ns = 225000; r1.end_ns = 240000; r1.thread_id = 1; r1.parent = 0; r1.depth = 1;
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

TEST_CASE("Roofline: tiny grid rule and measured counters", "[analysis][roofline]") {
  Fixture f;
  // 10 blocks < 0.5 x 100 SMs and (as below) < 10 % of the roof -> latency though it runs 20 us.
  LaunchConfig ten_blocks;
  ten_blocks.grid_x = 10; ten_blocks.grid_y = 1; ten_blocks.grid_z = 1;
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
  op.name = "add"; op.flops = 1e6; op.bytes_read = 8e6; op.bytes_written = 4e6;
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

TEST_CASE("FPGA presets follow the documented derivation", "[analysis][fpga]") {
  const FpgaTarget& u55c = fpga_preset("alveo-u55c");
  // 9024 DSP x 0.7 / 5 DSP per FMA x 2 FLOP x 300 MHz = 758.0 GFLOP/s fp32.
  CHECK(u55c.flops_per_s(Precision::kFp32) == Approx(758.016e9));
  // fp64: 9024 x 0.7 / 14 x 2 x 300e6 = 270.7 GFLOP/s.
  CHECK(u55c.flops_per_s(Precision::kFp64) == Approx(270.72e9));
  // BRAM 2016 x 36 Kib + URAM 960 x 288 Kib = 357,433,344 bit = 44,679,168 B.
  CHECK(u55c.sram_bytes == Approx(44679168.0));
  CHECK(u55c.host_link_bytes_per_s() == Approx(12.603e9).epsilon(1e-4));  // 15.754e9 x 0.8
  CHECK(fpga_preset("versal-v80").flops_per_s(Precision::kFp32) == Approx(4.55616e12));  // 10848 x .7 x 2 x 300e6
  CHECK(fpga_presets().size() >= 3);
  CHECK_THROWS_AS(fpga_preset("stratix"), Error);
}

TEST_CASE("FPGA what-if, case A: small elementwise op over PCIe (docs/fpga-model.md)", "[analysis][fpga]") {
  Fixture f;
  const Ceilings c = table_ceilings(f.store.devices[0]);
  const RooflineReport r = analyze_roofline(f.store, c, f.ops, f.op_of_kernel);
  FpgaOptions o;
  o.workload_ns = 1e6;  // the traced program took 1 ms
  const FpgaReport rep = rank_fpga_candidates(f.ops, r, fpga_preset("alveo-u55c"), o);
  REQUIRE(rep.candidates.size() == 2);
  const FpgaCandidate* a = nullptr;
  for (const auto& cand : rep.candidates) if (cand.op_index == 0) a = &cand;
  REQUIRE(a != nullptr);
  // Step by step (docs/fpga-model.md, case A):
  CHECK(a->time_share == Approx(40000.0 / 192000.0));                 // 0.20833
  CHECK(a->memory_boundness == Approx(1.0 - (1.0 / 12.0) / 12.5));   // 0.99333
  CHECK(a->pattern_affinity == 1.0);
  CHECK(a->fits_on_chip);                                            // 4 MB < 44.7 MB
  CHECK(a->card_compute_s == Approx(2e6 / 758.016e9));               // 2.638 us
  CHECK(a->card_memory_s == Approx(24e6 / 391e9));                   // 61.38 us
  CHECK(a->card_latency_s == Approx(20e-6));                         // 2 x 10 us
  CHECK(a->card_time_s == Approx(81.381e-6).epsilon(1e-4));
  CHECK(a->transfer_s == Approx(24e6 / 12.6031e9 + 4 * 5e-6).epsilon(1e-4));  // 1924.3 us
  CHECK(a->fpga_total_s == Approx(2005.67e-6).epsilon(1e-4));
  CHECK(a->op_speedup == Approx(40e-6 / 2005.67e-6).epsilon(1e-4));  // 0.0199: PCIe kills it
  // link_factor = GPU time / (GPU time + transfer) = 40 / (40 + 1924.30) = 0.020364 (the card
  // time does not enter it; it was 81.38 / 2005.67 = 0.04058, score 0.00841).
  CHECK(a->link_factor == Approx(40.0 / (40.0 + 1924.30)).epsilon(1e-4));
  // 0.20833 x (0.25 + 0.75 x 0.99333 = 0.995) x 1 x 1 x 0.020364 = 0.0042212.
  CHECK(a->score == Approx(0.0042212).epsilon(1e-4));
  // Amdahl: 1 ms - 40 us + 2005.67 us = 2965.67 us -> 0.3372x.
  CHECK(a->workload_speedup == Approx(1000.0 / 2965.67).epsilon(1e-4));
  CHECK(rep.combined_count == 0);
  CHECK(rep.combined_speedup == 1.0);
}

TEST_CASE("FPGA what-if: a user card given in FLOP/s per precision instead of DSPs", "[analysis][fpga]") {
  Fixture f;
  const Ceilings c = table_ceilings(f.store.devices[0]);
  const RooflineReport r = analyze_roofline(f.store, c, f.ops, f.op_of_kernel);
  FpgaTarget t;  // no DSP fields at all: dsp_count 0
  t.name = "flops-only";
  t.hbm_bytes_per_s = 100e9;   // x 0.85 = 85 GB/s
  t.sram_bytes = 1e8;
  t.link_bytes_per_s = 16e9;   // x 0.8 = 12.8 GB/s
  t.fp32_flops_per_s = 0.5e9;  // a slow card: case A's op becomes compute-bound
  CHECK_FALSE(t.uses_dsp_model());
  CHECK_NOTHROW(validate_fpga_target(t));
  CHECK(t.flops_per_s(Precision::kFp32) == 0.5e9);
  CHECK(t.flops_per_s(Precision::kTf32Tensor) == 0.5e9);
  CHECK(t.flops_per_s(Precision::kFp64) == 0.0);  // not given, no DSP mapping: not run
  FpgaOptions o;
  o.workload_ns = 1e6;
  const FpgaReport rep = rank_fpga_candidates(f.ops, r, t, o);
  const FpgaCandidate* a = nullptr;
  for (const auto& cand : rep.candidates) if (cand.op_index == 0) a = &cand;
  REQUIRE(a != nullptr);
  // Case A's op, 2 executions: 2e6 FLOP / 0.5e9 = 4 ms; 24e6 B / 85e9 = 282.35 us; 2 x 10 us
  // launch: card 4.020 ms. Transfer 24e6 / 12.8e9 = 1875 us + 4 x 5 us = 1895 us. Total 5.915 ms.
  CHECK(a->card_compute_s == Approx(4e-3));
  CHECK(a->card_memory_s == Approx(24e6 / 85e9));
  CHECK(a->card_time_s == Approx(4.020e-3));
  CHECK(a->transfer_s == Approx(1.895e-3));
  CHECK(a->fpga_total_s == Approx(5.915e-3));

  // A given rate replaces the DSP estimate of its precision only.
  FpgaTarget u = fpga_preset("alveo-u55c");
  u.fp32_flops_per_s = 1e12;
  CHECK(u.flops_per_s(Precision::kFp32) == 1e12);
  CHECK(u.flops_per_s(Precision::kFp64) == Approx(270.72e9));  // still 9024 x 0.7 / 14 x 2 x 300e6
  CHECK(u.uses_dsp_model());

  // Validation: a negative rate is named; DSP fields are required only where they are used;
  // a card with no rate at all is refused.
  FpgaTarget bad = t;
  bad.fp16_flops_per_s = -1;
  CHECK_THROWS_WITH(validate_fpga_target(bad), Catch::Contains("fp16_flops_per_s = -1"));
  FpgaTarget dsp = t;
  dsp.dsps_per_fma_fp64 = 14;  // fp64 from DSPs, but dsp_count is 0
  CHECK_THROWS_WITH(validate_fpga_target(dsp), Catch::Contains("dsp_count is missing"));
  FpgaTarget none = t;
  none.fp32_flops_per_s = 0;
  CHECK_THROWS_WITH(validate_fpga_target(none), Catch::Contains("no precision has a rate"));
}

TEST_CASE("FPGA what-if, case B: large stream with data resident on a V80 (docs/fpga-model.md)", "[analysis][fpga]") {
  // One stencil op: 1 execution, 1e8 FLOP, 0.6e9 B read + 0.4e9 B written, 10 ms on the GPU
  // (100 GB/s achieved), working set 32 MB; the workload took 20 ms.
  TraceStore s;
  s.devices = {device()};
  s.kernels = {kernel(s, 0, 10000000, 1, kNone32, 1000, s.strings.intern("stencil"))};
  OpCost op;
  op.name = "stencil_fusion"; op.flops = 1e8; op.bytes_read = 0.6e9; op.bytes_written = 0.4e9;
  op.working_set_bytes = 32e6; op.pattern = hlo::AccessPattern::kStencil; op.precision = Precision::kFp32;
  const std::vector<OpCost> ops = {op};
  const RooflineReport r = analyze_roofline(s, table_ceilings(s.devices[0]), ops, {0});
  FpgaOptions o;
  o.workload_ns = 20e6;
  o.inputs_cross_link = false;
  const FpgaReport rep = rank_fpga_candidates(ops, r, fpga_preset("versal-v80"), o);
  REQUIRE(rep.candidates.size() == 1);
  const FpgaCandidate& b = rep.candidates[0];
  // Memory: 1e9 B / (819.2e9 x 0.85 = 696.32e9 B/s) = 1436.1 us; compute 1e8 / 4.556e12 = 21.9 us.
  CHECK(b.card_memory_s == Approx(1e9 / 696.32e9));
  CHECK(b.card_compute_s == Approx(1e8 / 4.55616e12));
  // + 1 launch of 10 us = 1446.1 us; no transfer.
  CHECK(b.fpga_total_s == Approx(1446.1e-6).epsilon(1e-4));
  CHECK(b.transfer_s == 0.0);
  CHECK(b.link_factor == 1.0);
  CHECK(b.op_speedup == Approx(10e-3 / 1446.1e-6).epsilon(1e-4));     // 6.915x
  // Amdahl: 20 ms -> 20 - 10 + 1.4461 = 11.4461 ms: 1.7473x.
  CHECK(b.workload_speedup == Approx(20.0 / 11.4461).epsilon(1e-4));
  CHECK(rep.combined_count == 1);
  CHECK(rep.combined_speedup == Approx(20.0 / 11.4461).epsilon(1e-4));
  // Score: share 1, intensity 0.1 (ridge 12.5 -> boundness 0.992), affinity 1, fits, link 1.
  CHECK(b.score == Approx(1.0 * (0.25 + 0.75 * 0.992)).epsilon(1e-4));
}

TEST_CASE("FPGA what-if: an op with unknown static cost gets no estimate and no share of the combined speedup",
          "[analysis][fpga]") {
  // Two ops on the fictional GPU, the workload took 20 ms:
  //  op0 "stencil_fusion": case B's op (1e8 FLOP, 1e9 B, 32 MB working set), one 2 ms kernel.
  //  op1 "solver": custom call without a cost rule (cost_known false): its operand/output shapes
  //      give 4.194304e6 B read + 4.194304e6 B written and no FLOPs; one 10 ms kernel.
  TraceStore s;
  s.devices = {device()};
  s.kernels = {kernel(s, 0, 2000000, 1, kNone32, 1000, s.strings.intern("stencil")),
               kernel(s, 3000000, 10000000, 2, kNone32, 1000, s.strings.intern("solver_kernel"))};
  OpCost st;
  st.name = "stencil_fusion"; st.flops = 1e8; st.bytes_read = 0.6e9; st.bytes_written = 0.4e9;
  st.working_set_bytes = 32e6; st.pattern = hlo::AccessPattern::kStencil; st.precision = Precision::kFp32;
  OpCost solver;
  solver.name = "solver"; solver.bytes_read = 4194304; solver.bytes_written = 4194304;
  solver.working_set_bytes = 4194304; solver.pattern = hlo::AccessPattern::kLibraryCall;
  solver.cost_known = false;
  solver.cost_unknown_reason = "custom call 'my_vendor_solver' has no cost rule";
  const std::vector<OpCost> ops = {st, solver};
  const RooflineReport r = analyze_roofline(s, table_ceilings(s.devices[0]), ops, {0, 1});

  SECTION("data resident on a V80") {
    FpgaOptions o;
    o.workload_ns = 20e6;
    o.inputs_cross_link = false;
    const FpgaReport rep = rank_fpga_candidates(ops, r, fpga_preset("versal-v80"), o);
    REQUIRE(rep.candidates.size() == 2);
    // Scored first even though the solver, estimated from its 8.39 MB of operands as if it did
    // no work, would score (10/12) x (0.25 + 0.75 x 1) x 0.3 x 1 x 1 = 0.25 > the stencil's
    // (2/12) x (0.25 + 0.75 x 0.992) = 0.16567.
    const FpgaCandidate& a = rep.candidates[0];
    const FpgaCandidate& b = rep.candidates[1];
    CHECK(a.name == "stencil_fusion");
    CHECK(a.cost_known);
    CHECK(a.estimate_note.empty());
    CHECK(a.score == Approx(2.0 / 12.0 * (0.25 + 0.75 * 0.992)).epsilon(1e-4));
    // Card time as case B: 1436.1 us memory + 10 us launch = 1446.1 us -> 2 ms / 1.4461 ms.
    CHECK(a.op_speedup == Approx(2e-3 / 1446.1e-6).epsilon(1e-4));                // 1.383x
    CHECK(a.workload_speedup == Approx(20.0 / (20.0 - 2.0 + 1.4461)).epsilon(1e-4));  // 1.0285x
    CHECK(b.name == "solver");
    CHECK_FALSE(b.cost_known);
    CHECK(b.estimate_note == "not estimated: no FLOP/byte count (custom call 'my_vendor_solver' has no cost rule)");
    CHECK(b.time_share == Approx(10.0 / 12.0));          // known: it is GPU time
    CHECK(b.pattern_affinity == Approx(0.3));
    for (double v : {b.flops, b.bytes, b.intensity, b.memory_boundness, b.working_set_bytes, b.onchip_factor,
                     b.link_factor, b.score, b.card_compute_s, b.card_memory_s, b.card_latency_s, b.card_time_s,
                     b.transfer_bytes, b.transfer_s, b.fpga_total_s, b.op_speedup, b.workload_speedup})
      CHECK(std::isnan(v));
    // Combined: only the stencil is offloaded: 20 / (20 - 2 + 1.4461) ms.
    CHECK(rep.combined_count == 1);
    CHECK(rep.combined_speedup == Approx(20.0 / 19.4461).epsilon(1e-4));
    CHECK(rep.not_estimated_count == 1);
    CHECK(rep.not_estimated_gpu_ns == 10e6);
  }
  SECTION("the reviewer's case: over PCIe on a U55C the solver alone looked 14.1x faster") {
    // Without the cost check: card 8388608 / 391e9 = 21.45 us + 10 us launch, transfer
    // 8388608 / 12.603e9 = 665.6 us + 2 x 5 us -> 707.1 us against 10 ms: 14.1x, and the
    // workload 20 / (20 - 10 + 0.7071) = 1.87x. Now: no estimate, nothing offloaded. The
    // stencil over PCIe: 1e9 B / 12.603e9 = 79.3 ms of transfers, slower than the GPU.
    FpgaOptions o;
    o.workload_ns = 20e6;
    const FpgaReport rep = rank_fpga_candidates(ops, r, fpga_preset("alveo-u55c"), o);
    REQUIRE(rep.candidates.size() == 2);
    CHECK(rep.candidates[1].name == "solver");
    CHECK(std::isnan(rep.candidates[1].op_speedup));
    CHECK(rep.candidates[0].op_speedup < 1.0);
    CHECK(rep.combined_count == 0);
    CHECK(rep.combined_speedup == 1.0);
  }
  SECTION("two not estimated ops rank after the scored one by GPU time") {
    std::vector<OpCost> three = {solver, st, solver};
    three[0].name = "small_solver";
    s.kernels.push_back(kernel(s, 14000000, 1000000, 3, kNone32, 1000, s.strings.intern("small")));
    const RooflineReport r3 = analyze_roofline(s, table_ceilings(s.devices[0]), three, {1, 2, 0});
    const FpgaReport rep = rank_fpga_candidates(three, r3, fpga_preset("versal-v80"), FpgaOptions{});
    REQUIRE(rep.candidates.size() == 3);
    CHECK(rep.candidates[0].name == "stencil_fusion");
    CHECK(rep.candidates[1].name == "solver");        // 10 ms
    CHECK(rep.candidates[2].name == "small_solver");  // 1 ms
    CHECK(rep.not_estimated_gpu_ns == 11e6);
  }
}

TEST_CASE("FPGA target validation", "[analysis][fpga]") {
  for (const FpgaTarget& t : fpga_presets()) CHECK_NOTHROW(validate_fpga_target(t));
  const auto message = [](const FpgaTarget& t) {
    try {
      validate_fpga_target(t);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kInvalidArgument);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  FpgaTarget empty;
  empty.name = "user";
  // Zero bandwidth would make memory time free: rejected, naming the field and the presets.
  const std::string m = message(empty);
  CHECK(m.find("hbm_bytes_per_s") != std::string::npos);
  CHECK(m.find("alveo-u55c") != std::string::npos);
  FpgaTarget t = fpga_preset("alveo-u55c");
  t.hbm_bytes_per_s = -1;
  CHECK(message(t).find("hbm_bytes_per_s = -1") != std::string::npos);
  t = fpga_preset("alveo-u55c");
  t.clock_hz = std::numeric_limits<double>::quiet_NaN();
  CHECK(message(t).find("clock_hz") != std::string::npos);
  t = fpga_preset("alveo-u55c");
  t.link_efficiency = 1.5;
  CHECK(message(t).find("link_efficiency") != std::string::npos);
  t = fpga_preset("alveo-u55c");
  t.link_bytes_per_s = std::numeric_limits<double>::infinity();
  CHECK(message(t).find("link_bytes_per_s") != std::string::npos);
  t = fpga_preset("alveo-u55c");
  t.dsps_per_fma_fp64 = t.dsps_per_fma_fp32 = t.dsps_per_fma_fp16 = 0;
  CHECK(message(t).find("dsps_per_fma") != std::string::npos);
  t = fpga_preset("alveo-u55c");
  t.dsps_per_fma_fp64 = 0;  // no fp64 on this card: allowed
  CHECK(message(t) == "accepted");
  t.call_latency_s = -1e-6;
  CHECK(message(t).find("call_latency_s") != std::string::npos);
  t = fpga_preset("alveo-u55c");
  t.name.clear();
  CHECK(message(t).find("name") != std::string::npos);
  // A field left out (0) is called missing, not blamed as a value the user gave.
  CHECK(m.find("hbm_bytes_per_s is missing (or 0)") != std::string::npos);
  // Values in the wrong unit are refused with the unit to use.
  t = fpga_preset("alveo-u55c");
  t.clock_hz = 250;  // MHz by mistake
  CHECK(message(t).find("clock_hz = 250 is below 1 MHz: give hertz") != std::string::npos);
  t = fpga_preset("alveo-u55c");
  t.hbm_bytes_per_s = 77;  // GB/s by mistake
  CHECK(message(t).find("not GB/s") != std::string::npos);
  t = fpga_preset("alveo-u55c");
  t.link_bytes_per_s = 15.75;
  CHECK(message(t).find("link_bytes_per_s = 15.75") != std::string::npos);
  t = fpga_preset("alveo-u55c");
  t.sram_bytes = 44.7;  // MB by mistake
  CHECK(message(t).find("not MB") != std::string::npos);
  t = fpga_preset("alveo-u55c");
  t.call_latency_s = 10;  // us by mistake
  CHECK(message(t).find("not microseconds") != std::string::npos);
  t = fpga_preset("alveo-u55c");
  t.transfer_latency_s = 5;
  CHECK(message(t).find("transfer_latency_s = 5 is over 1 s") != std::string::npos);
  t = fpga_preset("alveo-u55c");
  t.fp32_flops_per_s = 1.2;  // TFLOP/s by mistake
  CHECK(message(t).find("not TFLOP/s") != std::string::npos);
  t = fpga_preset("alveo-u55c");
  t.clock_hz = 1e6;  // the smallest accepted clock
  t.link_bytes_per_s = 1e7;
  t.call_latency_s = 1.0;
  CHECK(message(t) == "accepted");
  // The model itself refuses a bad target.
  Fixture f;
  const RooflineReport r = analyze_roofline(f.store, table_ceilings(f.store.devices[0]), f.ops, f.op_of_kernel);
  CHECK_THROWS_AS(rank_fpga_candidates(f.ops, r, empty, FpgaOptions{}), Error);
}

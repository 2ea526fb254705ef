// FPGA what-if for user regions (rank_fpga_regions) on a constructed trace, on the round card
// of fpga_fixture.hpp. Every expected number is worked out by hand below (and the same case
// step by step in docs/fpga-model-cases.md, "Case C").
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "analysis_fixture.hpp"
#include "fpga_fixture.hpp"
#include "fpgaprof/analysis/fpga_model.hpp"
#include "fpgaprof/analysis/roofline.hpp"
#include "fpgaprof/error.hpp"

using namespace fpgaprof;
using namespace fpgaprof::analysis;

namespace {

// The GPU of the other analysis tests: fp32 12.8e12 FLOP/s, DRAM 1.024e12 B/s, ridge fp32 = 12.5 FLOP/B.
DeviceInfo device() { return testing::sm80_device(); }

using testing::round_card;

Approx near(double v) { return Approx(v).epsilon(1e-9); }

RegionRecord region(TraceStore& s, const char* name, uint64_t start, uint64_t end, uint32_t parent) {
  RegionRecord r;
  r.start_ns = start;
  r.end_ns = end;
  r.thread_id = 1;
  r.name = s.strings.intern(name);
  r.parent = parent;
  r.depth = parent == kNone32 ? 0 : 1;
  return r;
}

MarkerRecord marker(TraceStore& s, const std::string& name, uint32_t parent) {
  MarkerRecord m;
  m.thread_id = 1;
  m.name = s.strings.intern(name);
  m.parent = parent;
  return m;
}

KernelRecord kernel(TraceStore& s, uint64_t start, uint64_t ns, uint32_t region, uint32_t marker_index) {
  return testing::kernel(s, start, ns, marker_index, region, 1000, s.strings.intern("k"));
}

MemcpyRecord copy(CopyKind kind, uint64_t bytes, uint32_t region) {
  MemcpyRecord c;
  c.copy_kind = kind;
  c.bytes = bytes;
  c.region_index = region;
  return c;
}

// Two "step" regions, each holding a "proj" region, then one "other" region:
//   r0 step [0, 1 ms)       r1 step > proj
//   r2 step [1, 2 ms)       r3 step > proj
//   r4 other [2, 3 ms)
// Ops: op0 add_fusion (elementwise f32, 1e6 FLOP, 8e6 + 4e6 B, working set 4 MB) and op1
// reduce (reduction f32, 1e6 FLOP, 4e6 B read, working set 0.5 MB) in module 0 (8 MB of
// parameters + results per call, in 3 arrays; add_fusion's output feeds reduce inside the
// call); op2 solver (custom call, cost unknown) in module 1 (8 MB per call, array count
// unknown: 2 per call); op3 dgemm (fp64 dot: the card has no fp64).
// Kernels: in each proj, add_fusion 200 us and reduce 10 us under one XlaModule range of
// module 0; in each step (outside proj), solver 30 us under an XlaModule range of module 1;
// in other, a 5 us kernel without an op and dgemm 40 us. All kernels: 525 us.
struct RegionFixture {
  TraceStore store;
  std::vector<OpCost> ops;
  std::vector<uint32_t> op_of_kernel;
  explicit RegionFixture(bool with_ranges) {
    store.devices = {device()};
    store.regions = {region(store, "step", 0, 999999, kNone32), region(store, "proj", 10, 999000, 0),
                     region(store, "step", 1000000, 1999999, kNone32), region(store, "proj", 1000010, 1999000, 2),
                     region(store, "other", 2000000, 2999999, kNone32)};
    OpCost add;
    add.name = "add_fusion";
    add.flops = 1e6;
    add.bytes_read = 8e6;
    add.bytes_written = 4e6;
    add.working_set_bytes = 4e6;
    add.pattern = hlo::AccessPattern::kElementwise;
    add.executions = 2;
    add.module_index = 0;
    add.module_io_bytes = 8e6;
    add.module_io_buffers = 3;
    OpCost reduce;
    reduce.name = "reduce";
    reduce.flops = 1e6;
    reduce.bytes_read = 4e6;
    reduce.working_set_bytes = 0.5e6;
    reduce.pattern = hlo::AccessPattern::kReduction;
    reduce.executions = 2;
    reduce.module_index = 0;
    reduce.module_io_bytes = 8e6;
    reduce.module_io_buffers = 3;
    OpCost solver;
    solver.name = "solver";
    solver.cost_known = false;
    solver.executions = 2;
    solver.pattern = hlo::AccessPattern::kLibraryCall;
    solver.module_index = 1;
    solver.module_io_bytes = 8e6;
    OpCost dgemm;
    dgemm.name = "dgemm";
    dgemm.flops = 1e9;
    dgemm.bytes_read = 1e6;
    dgemm.precision = Precision::kFp64;
    dgemm.pattern = hlo::AccessPattern::kDot;
    dgemm.executions = 1;
    dgemm.module_index = 2;
    ops = {add, reduce, solver, dgemm};
    uint32_t m[8];
    for (uint32_t& x : m) x = kNone32;
    if (with_ranges) {
      const std::string mod0 = "XlaModule:#hlo_module=jit_proj,program_id=1#";
      const std::string mod1 = "XlaModule:#hlo_module=jit_solve,program_id=2#";
      // markers: 0 mod0 (call 1), 1 thunk add, 2 thunk reduce, 3 mod0 (call 2), 4, 5 thunks,
      // 6 mod1 (call 1), 7 thunk solver, 8 mod1 (call 2), 9 thunk solver.
      store.markers = {marker(store, mod0, kNone32),
                       marker(store, "Thunk:#hlo_op=add_fusion#", 0),
                       marker(store, "Thunk:#hlo_op=reduce#", 0),
                       marker(store, mod0, kNone32),
                       marker(store, "Thunk:#hlo_op=add_fusion#", 3),
                       marker(store, "Thunk:#hlo_op=reduce#", 3),
                       marker(store, mod1, kNone32),
                       marker(store, "Thunk:#hlo_op=solver#", 6),
                       marker(store, mod1, kNone32),
                       marker(store, "Thunk:#hlo_op=solver#", 8)};
      m[0] = 1;
      m[1] = 2;
      m[2] = 4;
      m[3] = 5;
      m[4] = 7;
      m[5] = 9;
    }
    store.kernels = {kernel(store, 100, 200000, 1, m[0]),      kernel(store, 300000, 10000, 1, m[1]),
                     kernel(store, 999100, 30000, 0, m[4]),    kernel(store, 1000100, 200000, 3, m[2]),
                     kernel(store, 1300000, 10000, 3, m[3]),   kernel(store, 1999100, 30000, 2, m[5]),
                     kernel(store, 2000100, 5000, 4, kNone32), kernel(store, 2100000, 40000, 4, kNone32)};
    op_of_kernel = {0, 1, 2, 0, 1, 2, kNone32, 3};
    // HtoD 1 MB in step (r0), DtoH 2 MB in proj (r3), a DtoD copy (not host traffic) in proj (r1).
    store.memcpys = {copy(CopyKind::kHtoD, 1000000, 0), copy(CopyKind::kDtoH, 2000000, 3),
                     copy(CopyKind::kDtoD, 5000000, 1)};
  }
  std::vector<FpgaRegionCandidate> rank(bool cross_link, const EnergyReport* energy = nullptr) const {
    const RooflineReport r = analyze_roofline(store, table_ceilings(store.devices[0]), ops, op_of_kernel);
    FpgaOptions o;
    o.workload_ns = 3e6;  // the traced program took 3 ms
    o.inputs_cross_link = cross_link;
    o.energy = energy;
    return rank_fpga_regions(store, ops, op_of_kernel, r, round_card(), o);
  }
  FpgaReport rank_ops(const EnergyReport* energy) const {
    const RooflineReport r = analyze_roofline(store, table_ceilings(store.devices[0]), ops, op_of_kernel);
    FpgaOptions o;
    o.workload_ns = 3e6;
    o.energy = energy;
    return rank_fpga_candidates(ops, r, round_card(), o);
  }
};

const FpgaRegionCandidate& find(const std::vector<FpgaRegionCandidate>& v, const std::string& path) {
  for (const FpgaRegionCandidate& c : v)
    if (c.path == path) return c;
  FAIL("no region path " << path);
  return v.front();
}

}  // namespace

TEST_CASE("FPGA regions, case C: ops of a region on the card, data crossing at its jitted calls",
          "[analysis][fpga][regions]") {
  const RegionFixture f(true);
  const auto regions = f.rank(true);
  REQUIRE(regions.size() == 3);
  // Ranked by what offloading could change: other is not estimated (its 5 + 40 us kernels have
  // no op the card can run), so it could change all of its 45 us; step and step > proj lose
  // even at the fast end (below), so they could change nothing and follow by GPU time: step
  // (all 8 kernels but other's) before step > proj. Their scores (0.08259, 0.13346) decide
  // nothing here.
  CHECK(regions[0].path == "other");
  CHECK(regions[0].could_save_ns == 45000.0);
  CHECK(regions[0].verdict == "unknown: not estimated");
  CHECK(regions[1].path == "step");
  CHECK(regions[2].path == "step > proj");
  CHECK(regions[1].could_save_ns == 0.0);
  CHECK(regions[2].could_save_ns == 0.0);
  CHECK(regions[1].gpu_time_ns > regions[2].gpu_time_ns);

  const FpgaRegionCandidate& proj = find(regions, "step > proj");
  CHECK(proj.name == "proj");
  CHECK(proj.depth == 1);
  CHECK(proj.instances == 2);
  CHECK(proj.kernel_count == 4);
  CHECK(proj.op_count == 2);
  CHECK(proj.top_op == "add_fusion");
  CHECK(proj.estimated);
  CHECK(proj.gpu_time_ns == 420000.0);
  CHECK(proj.time_share == near(420.0 / 525.0));  // 0.8
  CHECK(proj.estimated_share == 1.0);
  CHECK(proj.estimate_note.empty());
  // add_fusion: 2 executions here (both of its kernels are inside): 2e6 FLOP, 24e6 B;
  // reduce: 2e6 FLOP, 8e6 B. Intensity 4e6 / 32e6 = 0.125 FLOP/B.
  CHECK(proj.flops == near(4e6));
  CHECK(proj.bytes == near(32e6));
  CHECK(proj.intensity == near(0.125));
  // Boundness per op: 1 - (1/12)/12.5 = 0.993333 and 1 - 0.25/12.5 = 0.98, weighted by GPU
  // time 400 : 20 -> 0.992698; affinity (400 x 1.0 + 20 x 0.8) / 420 = 0.990476.
  CHECK(proj.memory_boundness == near((400 * (1 - (1.0 / 12.0) / 12.5) + 20 * 0.98) / 420));
  CHECK(proj.pattern_affinity == near(416.0 / 420.0));
  // Largest working set 4e6 B <= 4,608,000 B on chip.
  CHECK(proj.working_set_bytes == 4e6);
  CHECK(proj.fits_on_chip);
  CHECK(proj.onchip_factor == 1.0);
  // Per execution on the round card: add_fusion compute 1e6 / (800e9, 200e9, 50e9) = 1.25, 5,
  // 20 us, memory 12e6 / (40e9, 16e9, 5e9) = 0.3, 0.75, 2.4 ms; reduce memory 4e6 / rate = 0.1,
  // 0.25, 0.8 ms. Ops: 2 x 0.3 + 2 x 0.1 = 0.8 ms, 2 x 0.75 + 2 x 0.25 = 2 ms, 2 x 2.4 +
  // 2 x 0.8 = 6.4 ms. 2 calls of module 0 (two XlaModule ranges) x (10, 20, 40) us.
  CHECK(proj.module_calls == 2.0);
  CHECK(proj.module_calls_counted);
  CHECK(proj.card_compute_s == near(20e-6));
  CHECK(proj.card_memory_s == near(2e-3));
  CHECK(proj.random_access_bytes == 0);
  CHECK(proj.memory_efficiency == near(0.4));  // 32e6 / (2e-3 x 40e9)
  CHECK(proj.card_latency_s == near(40e-6));
  CHECK(proj.kept_gpu_s == 0.0);
  CHECK(proj.card_time_low_s == near(0.82e-3));
  CHECK(proj.card_time_s == near(2.04e-3));
  CHECK(proj.card_time_high_s == near(6.48e-3));
  // Link: 2 calls x 8e6 = 16e6 B in 2 x 3 = 6 arrays: 16e6 / (10e9, 8e9, 5e9) + 6 x (5, 10,
  // 20) us = 1.63, 2.06, 3.32 ms.
  CHECK(proj.transfer_bytes == near(16e6));
  CHECK(proj.transfer_low_s == near(1.63e-3));
  CHECK(proj.transfer_s == near(2.06e-3));
  CHECK(proj.transfer_high_s == near(3.32e-3));
  CHECK(proj.fpga_total_low_s == near(2.45e-3));
  CHECK(proj.fpga_total_s == near(4.1e-3));
  CHECK(proj.fpga_total_high_s == near(9.8e-3));
  // link_factor = 420 / (420 + 2060) = 0.169355.
  CHECK(proj.link_factor == near(420.0 / 2480.0));
  // 0.8 x 1 x (0.25 + 0.75 x 0.992698) x 0.990476 x 1 x 0.169355 = 0.133459.
  CHECK(proj.score == near(0.8 * (0.25 + 0.75 * proj.memory_boundness) * (416.0 / 420.0) * 420.0 / 2480.0));
  CHECK(proj.score == Approx(0.133459).epsilon(1e-5));
  // 420 us / 4.1 ms = 0.102439 (range 420 / 9800 = 0.042857 to 420 / 2450 = 0.171429).
  CHECK(proj.region_speedup == near(420.0 / 4100.0));
  CHECK(proj.region_speedup_low == near(420.0 / 9800.0));
  CHECK(proj.region_speedup_high == near(420.0 / 2450.0));
  // Amdahl: 3 / (3 - 0.42 + 4.1) = 0.449102 (range 3 / 12.38 to 3 / 5.03).
  CHECK(proj.workload_speedup == near(3.0 / 6.68));
  CHECK(proj.workload_speedup_low == near(3.0 / 12.38));
  CHECK(proj.workload_speedup_high == near(3.0 / 5.03));
  // Restructured: each op alone gains nothing (known by totals: every byte compulsory): 0.8,
  // 2, 6.4 ms. As one dataflow design reading the calls' arguments and writing their results
  // once: 2 x 8e6 = 16e6 B / (40e9, 16e9, 5e9) = 0.4, 1, 3.2 ms (compute 2 x 2 x 1e6 FLOP:
  // 5, 20, 80 us; add_fusion's 4e6 B result streams to reduce on chip). The better: 0.4, 1,
  // 3.2 ms; + launches: 0.42, 1.04, 3.28 ms.
  CHECK(proj.restructured_card_time_low_s == near(0.42e-3));
  CHECK(proj.restructured_card_time_s == near(1.04e-3));
  CHECK(proj.restructured_card_time_high_s == near(3.28e-3));
  // Card energy at the round card's 50 W (25 to 100 W), low x low, high x high: 0.82, 2.04,
  // 6.48 ms -> 20.5, 102, 648 mJ; restructured 0.42, 1.04, 3.28 ms -> 10.5, 52, 328 mJ.
  CHECK(proj.card_energy_j.low == near(20.5e-3));
  CHECK(proj.card_energy_j.nominal == near(102e-3));
  CHECK(proj.card_energy_j.high == near(648e-3));
  CHECK(proj.restructured_card_energy_j.low == near(10.5e-3));
  CHECK(proj.restructured_card_energy_j.nominal == near(52e-3));
  CHECK(proj.restructured_card_energy_j.high == near(328e-3));
  CHECK(proj.restructured_fpga_total_s == near(1.04e-3 + 2.06e-3));
  // 420 / 3100 = 0.135484 (range 420 / (3.28 + 3.32 ms) to 420 / (0.42 + 1.63 ms)).
  CHECK(proj.restructured_region_speedup == near(420.0 / 3100.0));
  CHECK(proj.restructured_region_speedup_low == near(420.0 / 6600.0));
  CHECK(proj.restructured_region_speedup_high == near(420.0 / 2050.0));
  CHECK(proj.scenario == "neither");
  // Host copies inside: DtoH 2 MB over 2 instances (the DtoD copy is not host traffic).
  CHECK(proj.host_bytes_per_instance == near(1e6));

  const FpgaRegionCandidate& step = find(regions, "step");
  CHECK(step.instances == 2);
  CHECK(step.depth == 0);
  CHECK(step.kernel_count == 6);
  CHECK(step.gpu_time_ns == 480000.0);  // proj's 420 us + solver 2 x 30 us
  CHECK(step.time_share == near(480.0 / 525.0));
  CHECK(step.estimated_share == near(420.0 / 480.0));  // solver has no cost: kept
  CHECK(step.kept_gpu_s == near(60e-6));
  CHECK(step.estimate_note == "12.5 % of its GPU time kept at GPU speed (no FLOP/byte count for 'solver')");
  // 2 calls of module 0 + 2 of module 1: 2 x 8e6 + 2 x 8e6 = 32e6 B in 2 x 3 + 2 x 2 = 10
  // arrays (module 1's count unknown: 2 per call).
  CHECK(step.module_calls == 4.0);
  CHECK(step.module_calls_counted);
  CHECK(step.transfer_bytes == near(32e6));
  // Card: ops 0.8, 2, 6.4 ms + 4 x (10, 20, 40) us + 60 us kept = 0.9, 2.14, 6.62 ms.
  // Link: 32e6 / (10e9, 8e9, 5e9) + 10 x (5, 10, 20) us = 3.25, 4.1, 6.6 ms.
  CHECK(step.card_latency_s == near(80e-6));
  CHECK(step.card_time_low_s == near(0.9e-3));
  CHECK(step.card_time_s == near(2.14e-3));
  CHECK(step.card_time_high_s == near(6.62e-3));
  // Its kept GPU time is card time too, but not the card's energy (those kernels still run on
  // the GPU: case C below adds their GPU joules): 0.84, 2.08, 6.56 ms x 25, 50, 100 W = 21.0,
  // 104, 656 mJ.
  CHECK(step.card_energy_j.low == near(21.0e-3));
  CHECK(step.card_energy_j.nominal == near(104e-3));
  CHECK(step.card_energy_j.high == near(656e-3));
  CHECK(step.transfer_low_s == near(3.25e-3));
  CHECK(step.transfer_s == near(4.1e-3));
  CHECK(step.transfer_high_s == near(6.6e-3));
  CHECK(step.fpga_total_s == near(6.24e-3));
  // Boundness, affinity and working set from the estimated ops only (as proj).
  CHECK(step.memory_boundness == near(proj.memory_boundness));
  CHECK(step.pattern_affinity == near(416.0 / 420.0));
  // link_factor = 480 / (480 + 4100) = 0.104803 (the 60 us kept on the GPU count as GPU time).
  CHECK(step.link_factor == near(480.0 / 4580.0));
  // 0.914286 x 0.875 x 0.994524 x 0.990476 x 1 x 0.104803 = 0.082590.
  CHECK(step.score ==
        near(480.0 / 525.0 * 420.0 / 480.0 * (0.25 + 0.75 * proj.memory_boundness) * (416.0 / 420.0) * 480.0 / 4580.0));
  CHECK(step.score == Approx(0.0825895).epsilon(1e-5));
  CHECK(step.region_speedup == near(480.0 / 6240.0));
  CHECK(step.region_speedup_low == near(480.0 / 13220.0));
  CHECK(step.region_speedup_high == near(480.0 / 4150.0));
  CHECK(step.workload_speedup == near(3.0 / 8.76));  // 3 / (3 - 0.48 + 6.24) = 0.342466
  // HtoD 1 MB in step + DtoH 2 MB in its proj, over 2 instances.
  CHECK(step.host_bytes_per_instance == near(1.5e6));

  // other: a kernel without an op and an fp64 dot the card cannot run: nothing to estimate.
  const FpgaRegionCandidate& other = find(regions, "other");
  CHECK_FALSE(other.estimated);
  CHECK(other.gpu_time_ns == 45000.0);
  CHECK(other.estimated_share == 0.0);
  CHECK(std::isnan(other.score));
  CHECK(std::isnan(other.fpga_total_s));
  CHECK(std::isnan(other.workload_speedup));
  CHECK(std::isnan(other.restructured_card_time_s));
  CHECK(std::isnan(other.restructured_region_speedup));
  CHECK(other.scenario.empty());
  CHECK(other.estimate_note ==
        "not estimated: nothing inside can be modelled on the card (the card has no DSP mapping for "
        "'dgemm (fp64)'; 1 kernel(s) without an HLO op)");
}

TEST_CASE("FPGA regions, case C: the dataflow design streams only the io of the calls it runs",
          "[analysis][fpga][regions]") {
  // io_bytes, what the region's dataflow design streams, counts calls x module io only for
  // modules with an estimated op: module 1, whose only op (the solver) has no cost, is kept at
  // its GPU time (that time already covers its own reads and writes).
  // By hand: dataflow io = 2 x 8e6 = 16e6 B / (40e9, 16e9, 5e9) = 0.4, 1, 3.2 ms < each op
  // restructured (0.8, 2, 6.4 ms); + 4 launches (40, 80, 160 us) + 60 us kept =
  // 0.5, 1.14, 3.42 ms (with module 1's 16e6 B as well it would be 0.9, 2.14, 6.62 ms).
  const RegionFixture f(true);
  const auto regions = f.rank(true);
  const FpgaRegionCandidate& step = find(regions, "step");
  CHECK(step.restructured_card_time_low_s == near(0.5e-3));
  CHECK(step.restructured_card_time_s == near(1.14e-3));
  CHECK(step.restructured_card_time_high_s == near(3.42e-3));
  CHECK(step.restructured_region_speedup == near(480.0 / (1.14e3 + 4.1e3)));
}

TEST_CASE("FPGA regions: data already on the card, and module calls without XlaModule ranges",
          "[analysis][fpga][regions]") {
  SECTION("inputs_cross_link = false: no transfer") {
    const RegionFixture f(true);
    const auto regions = f.rank(false);
    const FpgaRegionCandidate& proj = find(regions, "step > proj");
    CHECK(proj.transfer_bytes == 0.0);
    CHECK(proj.transfer_s == 0.0);
    CHECK(proj.link_factor == 1.0);
    CHECK(proj.fpga_total_s == near(2.04e-3));
    CHECK(proj.region_speedup == near(420.0 / 2040.0));             // 0.205882
    CHECK(proj.workload_speedup == near(3.0 / (3 - 0.42 + 2.04)));  // 0.649351
    // The dataflow design still reads the calls' arguments from card memory: 1.04 ms.
    CHECK(proj.restructured_card_time_s == near(1.04e-3));
    CHECK(proj.restructured_region_speedup == near(420.0 / 1040.0));  // 0.403846
    // Score: 0.8 x 0.994524 x 0.990476 x 1 x 1 = 0.788034.
    CHECK(proj.score == near(0.8 * (0.25 + 0.75 * proj.memory_boundness) * (416.0 / 420.0)));
  }
  SECTION("no NVTX ranges, a loop body's op run more often: calls are the fewest executions") {
    RegionFixture f(false);
    f.ops[0].executions = 8;  // add_fusion four times a call (a loop body), reduce once
    CHECK(find(f.rank(true), "step > proj").module_calls == 2.0);  // the most executions read 8
  }
  SECTION("no NVTX ranges: calls estimated as the fewest executions of one of the module's ops") {
    const RegionFixture f(false);
    const auto regions = f.rank(true);
    const FpgaRegionCandidate& proj = find(regions, "step > proj");
    CHECK(proj.module_calls == 2.0);  // add_fusion and reduce ran twice each inside
    CHECK_FALSE(proj.module_calls_counted);
    CHECK(proj.transfer_bytes == near(16e6));
    CHECK(proj.transfer_s == near(2.06e-3));
    CHECK(find(regions, "step").module_calls == 4.0);
  }
  SECTION("min_time_share drops small regions") {
    const RegionFixture f(true);
    const RooflineReport r = analyze_roofline(f.store, table_ceilings(f.store.devices[0]), f.ops, f.op_of_kernel);
    FpgaOptions o;
    o.min_time_share = 0.85;
    const auto regions = rank_fpga_regions(f.store, f.ops, f.op_of_kernel, r, round_card(), o);
    REQUIRE(regions.size() == 1);
    CHECK(regions[0].path == "step");
  }
  SECTION("bad input") {
    const RegionFixture f(true);
    const RooflineReport r = analyze_roofline(f.store, table_ceilings(f.store.devices[0]), f.ops, f.op_of_kernel);
    CHECK_THROWS_AS(rank_fpga_regions(f.store, f.ops, {0, 1}, r, round_card(), {}), Error);
    FpgaTarget bad = round_card();
    bad.memory_channel_bytes_per_s = 0;
    CHECK_THROWS_AS(rank_fpga_regions(f.store, f.ops, f.op_of_kernel, r, bad, {}), Error);
    TraceStore empty;
    CHECK(rank_fpga_regions(empty, {}, {}, analyze_roofline(empty, Ceilings{}, {}, {}), round_card(), {}).empty());
  }
}

TEST_CASE("FPGA regions: paths, nesting by time and degenerate traces", "[analysis][fpga][regions]") {
  const OpCost add = [] {
    OpCost op;
    op.name = "add";
    op.flops = 1e6;
    op.bytes_read = 8e6;
    op.bytes_written = 4e6;
    op.executions = 1;
    op.pattern = hlo::AccessPattern::kElementwise;
    return op;
  }();
  const auto rank = [&](const TraceStore& s, const std::vector<uint32_t>& op_of_kernel, double workload_ns) {
    const RooflineReport r = analyze_roofline(s, table_ceilings(s.devices[0]), {add}, op_of_kernel);
    FpgaOptions o;
    o.workload_ns = workload_ns;
    o.inputs_cross_link = false;
    return rank_fpga_regions(s, {add}, op_of_kernel, r, round_card(), o);
  };
  SECTION("back-to-back outermost regions are siblings (one ends where the next starts)") {
    TraceStore s;
    s.devices = {device()};
    s.regions = {region(s, "A", 0, 100, kNone32), region(s, "B", 100, 200, kNone32)};
    s.kernels = {kernel(s, 10, 40, 0, kNone32), kernel(s, 150, 40, 1, kNone32)};
    const auto regions = rank(s, {0, 0}, 1000);
    REQUIRE(regions.size() == 2);
    CHECK(find(regions, "A").kernel_count == 1);
    CHECK(find(regions, "B").depth == 0);
  }
  SECTION("a name containing the separator is its own path, shown in quotes") {
    TraceStore s;
    s.devices = {device()};
    s.regions = {region(s, "x > y", 0, 100, kNone32), region(s, "x", 200, 400, kNone32), region(s, "y", 210, 300, 1)};
    s.kernels = {kernel(s, 10, 40, 0, kNone32), kernel(s, 250, 40, 2, kNone32)};
    const auto regions = rank(s, {0, 0}, 1000);
    REQUIRE(regions.size() == 3);
    CHECK(find(regions, "\"x > y\"").instances == 1);
    CHECK(find(regions, "x").kernel_count == 1);
    CHECK(find(regions, "x > y").depth == 1);  // y nested in x
  }
  SECTION("kernels on two streams that sum past the workload: at most T is saved (Amdahl)") {
    // One region, T = 60 us, kernels 30 + 30 + 50 = 110 us overlapping. On the 64-channel
    // round card each add runs max(1e6 / 200e9 = 5 us, 12e6 / 256e9 = 46.875 us); 3 executions
    // -> 140.625 us; the op has no module, so no calls (no latency, no transfer).
    TraceStore s;
    s.devices = {device()};
    s.regions = {region(s, "main", 0, 60000, kNone32)};
    s.kernels = {kernel(s, 0, 30000, 0, kNone32), kernel(s, 0, 30000, 0, kNone32), kernel(s, 10000, 50000, 0, kNone32)};
    OpCost three = add;
    three.executions = 3;
    const RooflineReport r = analyze_roofline(s, table_ceilings(s.devices[0]), {three}, {0, 0, 0});
    FpgaOptions o;
    o.workload_ns = 60000;
    o.inputs_cross_link = false;
    const auto regions = rank_fpga_regions(s, {three}, {0, 0, 0}, r, testing::wide_round_card(), o);
    REQUIRE(regions.size() == 1);
    const FpgaRegionCandidate& m = regions[0];
    CHECK(m.gpu_time_ns == 110000.0);
    CHECK(m.module_calls == 0.0);  // no module known: no call latency, no transfer
    CHECK(m.card_latency_s == 0.0);
    CHECK(m.fpga_total_s == near(140.625e-6));
    // T - min(110, 60) + 140.625 = 140.625 us -> 60 / 140.625 = 0.426667 (the sum would give
    // 60 / (60 - 110 + 140.625) = 0.662).
    CHECK(m.workload_speedup == near(60.0 / 140.625));
  }
  SECTION("kernels without GPU time (no timestamps) are not estimated: there is no time to compare") {
    // Kernel replay whose counter window could not be paired leaves start = end = 0 (seen on an
    // H200, docs/gpu-validation.md); a speedup over 0 s would read "0x", a verdict never made.
    TraceStore s;
    s.devices = {device()};
    s.regions = {region(s, "r", 0, 100, kNone32)};
    s.kernels = {kernel(s, 10, 0, 0, kNone32)};
    const auto regions = rank(s, {0}, 1000);
    REQUIRE(regions.size() == 1);
    CHECK_FALSE(regions[0].estimated);
    CHECK(regions[0].estimate_note.find("1 kernel(s) have no GPU time") != std::string::npos);
    CHECK(std::isnan(regions[0].region_speedup));
    CHECK(std::isnan(regions[0].restructured_region_speedup_high));
    CHECK(std::isnan(regions[0].card_time_s));
    CHECK(std::isnan(regions[0].card_energy_j.nominal));  // not estimated: null, never 0
    CHECK(std::isnan(regions[0].restructured_card_energy_j.high));
    const RooflineReport r = analyze_roofline(s, table_ceilings(s.devices[0]), {add}, {0});
    FpgaOptions o;
    o.workload_ns = 1000;
    const FpgaReport ops = rank_fpga_candidates({add}, r, round_card(), o);
    REQUIRE(ops.candidates.size() == 1);
    const FpgaCandidate& c = ops.candidates[0];
    CHECK_FALSE(c.cost_known);
    CHECK(ops.not_estimated_count == 1);
    CHECK(c.estimate_note.find("1 kernel(s) have no GPU time") != std::string::npos);
    CHECK(std::isnan(c.op_speedup));
    CHECK(std::isnan(c.op_speedup_high));
    CHECK(std::isnan(c.score));
    CHECK(std::isnan(c.card_time_s));
    CHECK(std::isnan(c.card_energy_j.nominal));
    CHECK(std::isnan(c.restructured_card_energy_j.low));
  }
  SECTION("a kernel with GPU time next to one without: the region is estimated on the time it has") {
    TraceStore s;
    s.devices = {device()};
    s.regions = {region(s, "r", 0, 100, kNone32)};
    s.kernels = {kernel(s, 10, 0, 0, kNone32), kernel(s, 20, 40, 0, kNone32)};
    const auto regions = rank(s, {0, 0}, 1000);
    REQUIRE(regions.size() == 1);
    CHECK(regions[0].estimated);
    CHECK(regions[0].gpu_time_ns == 40.0);
  }
}

TEST_CASE("Energy verdict: the decision table of time and energy", "[analysis][fpga][energy]") {
  // (estimated, speedup low, high, GPU energy known, ratio low, high) -> the label, each rule once.
  const double nan = std::nan("");
  CHECK(time_energy_verdict(false, 2, 3, true, 0.1, 0.2) == "unknown: not estimated");
  CHECK(time_energy_verdict(true, nan, 3, true, 0.1, 0.2) == "unknown: not estimated");
  CHECK(time_energy_verdict(true, 2, 3, false, nan, nan) == "unknown: no GPU energy");
  CHECK(time_energy_verdict(true, 2, 3, true, nan, nan) == "unknown: no card energy");
  CHECK(time_energy_verdict(true, 1.01, 3, true, 2, 4) == "gains");  // faster everywhere, energy aside
  CHECK(time_energy_verdict(true, 0.2, 0.5, true, 0.3, 0.9) == "wins only on energy");
  CHECK(time_energy_verdict(true, 0.5, 2, true, 0.3, 0.9) == "wins only on energy");  // time straddles 1
  CHECK(time_energy_verdict(true, 0.2, 1.0, true, 1.0, 3) == "loses");                // 1 is no gain
  CHECK(time_energy_verdict(true, 0.2, 0.5, true, 0.5, 3) == "uncertain");            // energy straddles 1
  CHECK(time_energy_verdict(true, 0.5, 2, true, 1.5, 3) == "uncertain");              // time straddles 1
  CHECK(time_energy_verdict(true, 1.0, 2, true, 1.5, 3) == "uncertain");              // low end 1.0 is no gain
}

TEST_CASE("FPGA regions and ops, case C: GPU joules beside the card's, ratios and verdicts",
          "[analysis][fpga][regions][energy]") {
  const RegionFixture f(true);
  const RegionPaths paths(f.store);
  uint32_t proj_path = kNone32, step_path = kNone32, other_path = kNone32;
  for (uint32_t p = 0; p < paths.size(); ++p) {
    if (paths.path(p) == "step > proj") proj_path = p;
    if (paths.path(p) == "step") step_path = p;
    if (paths.path(p) == "other") other_path = p;
  }
  REQUIRE(proj_path != kNone32);
  REQUIRE(step_path != kNone32);
  REQUIRE(other_path != kNone32);
  // An energy report written by hand (as analyze_energy words it). The region rows compare the
  // attributed joules of each path's kernels (path_op_kernels, by innermost path and op; a path
  // counts its sub-paths'): in proj add_fusion 0.4 J over its 400 us and reduce 0.1 J over its
  // 20 us; in step (outside proj) the solver 1.5 J over 30 of its 60 us; in other dgemm 0.04 J
  // and the kernel without an op 0.01 J, all sampled. The measured windows (region_paths) hold
  // far more (idle gaps, host work, a second GPU) and must not enter a row: 50 J on proj would
  // turn its verdict. The op rows read e.ops: add_fusion 0.1 J over 300 of its 400 us; reduce
  // 0.2 J over all of its 20 us.
  EnergyReport e;
  e.measured = true;
  EnergyWindow w;
  w.joules = 50.0;
  w.duration_ns = w.coverage_ns = 1997980;
  e.region_paths.emplace_back(proj_path, w);
  w.joules = 60.0;
  w.duration_ns = w.coverage_ns = 2000000;
  e.region_paths.emplace_back(step_path, w);
  w.device_id = 1;
  e.region_paths.emplace_back(step_path, w);
  e.path_op_kernels = {{proj_path, 0, 0.4, 400000},
                       {proj_path, 1, 0.1, 20000},
                       {step_path, 2, 1.5, 30000},
                       {other_path, 3, 0.04, 40000},
                       {other_path, kNone32, 0.01, 5000}};
  e.ops = {{1, 0.2, 20000}, {0, 0.1, 300000}};

  const auto regions = f.rank(true, &e);
  // proj: 0.5 J over all of its 420 us; card 20.5, 102, 648 mJ (case C above): 0.041, 0.204,
  // 1.296, straddling 1, slower across its speedup range (0.043-0.171x): uncertain.
  // Restructured 10.5, 52, 328 mJ: 0.021, 0.104, 0.656, slower (0.064-0.205x): wins only on
  // energy. Nothing kept.
  const FpgaRegionCandidate& proj = find(regions, "step > proj");
  CHECK(proj.gpu_energy_j == near(0.5));
  CHECK(proj.gpu_energy_coverage == near(1.0));
  CHECK(proj.kept_gpu_energy_j == near(0.0));
  CHECK(proj.energy_ratio.low == near(0.041));
  CHECK(proj.energy_ratio.nominal == near(0.204));
  CHECK(proj.energy_ratio.high == near(1.296));
  CHECK(proj.restructured_energy_ratio.low == near(0.021));
  CHECK(proj.restructured_energy_ratio.nominal == near(0.104));
  CHECK(proj.restructured_energy_ratio.high == near(0.656));
  CHECK(proj.energy_verdict == "uncertain");
  CHECK(proj.restructured_energy_verdict == "wins only on energy");
  // step: proj's 0.5 J + the kept solver's 1.5 J = 2.0 J over 450 of its 480 us (coverage
  // 0.9375). With the offload the solver still runs on the GPU. The card's joules stand for the
  // sampled share of the work it takes (proj's 420 us, all sampled: 1.0), not the region's
  // 0.9375 (the kept solver's unsampled half is no work of the card's): (card 21.0, 104, 656 mJ
  // x 1.0 + 1.5 J) / 2.0 J = 0.7605, 0.802, 1.078: straddles 1, slower (0.036-0.116x):
  // uncertain. (Charging the kept 60 us at the card's power instead, 22.5, 107, 662 mJ x 0.9375
  // / 2.0 = 0.0105-0.31, would read "wins only on energy" for a region that is mostly GPU work.)
  const FpgaRegionCandidate& step = find(regions, "step");
  CHECK(step.gpu_energy_j == near(2.0));
  CHECK(step.gpu_energy_coverage == near(0.9375));
  CHECK(step.kept_gpu_energy_j == near(1.5));
  CHECK(step.energy_ratio.low == near(0.7605));
  CHECK(step.energy_ratio.nominal == near(0.802));
  CHECK(step.energy_ratio.high == near(1.078));
  CHECK(step.energy_verdict == "uncertain");
  // other: measured, but nothing inside can be estimated: GPU joules shown, no ratio.
  const FpgaRegionCandidate& other = find(regions, "other");
  CHECK(other.gpu_energy_j == near(0.05));
  CHECK(std::isnan(other.energy_ratio.nominal));
  CHECK(other.energy_verdict == "unknown: not estimated");
  CHECK(other.restructured_energy_verdict == "unknown: not estimated");

  const FpgaReport ops = f.rank_ops(&e);
  const auto op = [&](const std::string& name) -> const FpgaCandidate& {
    for (const FpgaCandidate& c : ops.candidates)
      if (c.name == name) return c;
    FAIL("no op " << name);
    return ops.candidates.front();
  };
  // add_fusion, 2 executions: memory 2 x (0.3, 0.75, 2.4) ms + launches 2 x (10, 20, 40) us =
  // 0.62, 1.54, 4.88 ms; x (25, 50, 100) W = 15.5, 77, 488 mJ (restructured the same: every
  // byte compulsory). 0.1 J over 300 of 400 us: x 0.75 / 0.1 = 0.11625, 0.5775, 3.66: uncertain.
  const FpgaCandidate& add = op("add_fusion");
  CHECK(add.card_energy_j.nominal == near(77e-3));
  CHECK(add.gpu_energy_j == near(0.1));
  CHECK(add.gpu_energy_coverage == near(0.75));
  CHECK(add.energy_ratio.low == near(0.11625));
  CHECK(add.energy_ratio.nominal == near(0.5775));
  CHECK(add.energy_ratio.high == near(3.66));
  CHECK(add.energy_verdict == "uncertain");
  // reduce: 2 x (0.1, 0.25, 0.8) ms + 2 x (10, 20, 40) us = 0.22, 0.54, 1.68 ms -> 5.5, 27,
  // 168 mJ over 0.2 J: 0.0275, 0.135, 0.84; its 20 us on the GPU against > 0.22 ms: wins only
  // on energy.
  const FpgaCandidate& reduce = op("reduce");
  CHECK(reduce.gpu_energy_coverage == near(1.0));
  CHECK(reduce.energy_ratio.low == near(0.0275));
  CHECK(reduce.energy_ratio.nominal == near(0.135));
  CHECK(reduce.energy_ratio.high == near(0.84));
  CHECK(reduce.energy_verdict == "wins only on energy");
  CHECK(reduce.restructured_energy_verdict == "wins only on energy");
  // solver: no cost: not estimated, and no energy either. dgemm: fp64, which the card cannot
  // run (time verdict "no"): loses in energy too, whatever the GPU's joules.
  CHECK(op("solver").energy_verdict == "unknown: not estimated");
  CHECK(std::isnan(op("solver").gpu_energy_j));
  CHECK(op("dgemm").verdict == "no");
  CHECK(op("dgemm").energy_verdict == "loses");
  CHECK(op("dgemm").restructured_energy_verdict == "loses");
  CHECK(std::isnan(op("dgemm").energy_ratio.nominal));

  // No energy (no NVML, or a report without samples): null, never 0, and said so.
  for (const EnergyReport* none : {static_cast<const EnergyReport*>(nullptr), static_cast<const EnergyReport*>(&e)}) {
    EnergyReport unmeasured;
    const FpgaReport o = f.rank_ops(none == nullptr ? nullptr : &unmeasured);
    const FpgaCandidate& a = [&]() -> const FpgaCandidate& {
      for (const FpgaCandidate& c : o.candidates)
        if (c.name == "add_fusion") return c;
      return o.candidates.front();
    }();
    CHECK(std::isnan(a.gpu_energy_j));
    CHECK(std::isnan(a.gpu_energy_coverage));
    CHECK(std::isnan(a.energy_ratio.low));
    CHECK(std::isnan(a.restructured_energy_ratio.high));
    CHECK(a.energy_verdict == "unknown: no GPU energy");
    CHECK_FALSE(std::isnan(a.card_energy_j.nominal));
  }
  const auto unmeasured_regions = f.rank(true);
  CHECK(std::isnan(find(unmeasured_regions, "step > proj").gpu_energy_j));
  CHECK(find(unmeasured_regions, "step > proj").energy_verdict == "unknown: no GPU energy");
}

// FPGA what-if for random (gather/scatter) access: case D of docs/fpga-model-cases.md on the
// round card of fpga_fixture.hpp, its ops built from hand-written HLO as op_inputs builds them
// (CardWork from the instruction); every expected number worked out by hand below. Then the
// score's properties: a slower card never scores higher; a slower link lowers it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "analysis_fixture.hpp"
#include "fpga_fixture.hpp"
#include "fpgaprof/analysis/card_work.hpp"
#include "fpgaprof/analysis/fpga_model.hpp"
#include "fpgaprof/analysis/op_inputs.hpp"
#include "fpgaprof/analysis/roofline.hpp"
#include "fpgaprof/error.hpp"
#include "fpgaprof/hlo/cost_model.hpp"

using namespace fpgaprof;
using namespace fpgaprof::analysis;
using testing::round_card;

namespace {

Approx near(double v) { return Approx(v).epsilon(1e-9); }

// Case D's module: a gather of 1e6 f32 with s32 indices from a 1 MiB table (262,144 f32), and
// an elementwise add of the gathered values and y.
const char* kCaseD = R"(HloModule case_d
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
)";

// One region "recon" [0, 1 ms) holds the two ops of one call of module 0, one execution
// each: gather 100 us, add_fusion 20 us on the fictional GPU of the other tests (fp32 ridge
// 12.5 FLOP/B); 120 us of kernels; the program took 1 ms.
struct GatherFixture {
  hlo::Module module = hlo::analyze_hlo(kCaseD);
  TraceStore store;
  std::vector<OpCost> ops;
  std::vector<uint32_t> op_of_kernel;
  GatherFixture() {
    store.devices = {testing::sm80_device()};
    RegionRecord r;
    r.start_ns = 0;
    r.end_ns = 999999;
    r.thread_id = 1;
    r.name = store.strings.intern("recon");
    store.regions = {r};
    for (const char* name : {"gather", "add_fusion"}) {
      const hlo::Instruction* ins = module.find_instruction(name);
      REQUIRE(ins != nullptr);
      OpCost op;  // as op_inputs builds it
      op.name = name;
      op.module = module.name;
      op.flops = ins->cost.flops;
      op.bytes_read = ins->cost.bytes_read;
      op.bytes_written = ins->cost.bytes_written;
      op.working_set_bytes = ins->cost.working_set_bytes;
      op.pattern = ins->pattern;
      op.precision = Precision::kFp32;
      op.executions = 1;
      op.module_index = 0;
      op.module_io_bytes = module_io_bytes(module);
      op.module_io_buffers = module_io_buffers(module);
      op.work = card_work(module, *ins);
      ops.push_back(std::move(op));
    }
    store.kernels = {testing::kernel(store, 1000, 100000, 1, 0, 1000, store.strings.intern("gather_kernel")),
                     testing::kernel(store, 200000, 20000, 2, 0, 1000, store.strings.intern("add_kernel"))};
    op_of_kernel = {0, 1};
  }
  RooflineReport roofline() const {
    return analyze_roofline(store, table_ceilings(store.devices[0]), ops, op_of_kernel);
  }
};

FpgaOptions resident() {
  FpgaOptions o;
  o.workload_ns = 1e6;
  o.inputs_cross_link = false;
  return o;
}

FpgaOptions over_pcie() {
  FpgaOptions o = resident();
  o.inputs_cross_link = true;
  return o;
}

const FpgaCandidate& row(const FpgaReport& rep, const std::string& name) {
  for (const FpgaCandidate& c : rep.candidates)
    if (c.name == name) return c;
  FAIL("no candidate " << name);
  return rep.candidates.front();
}

}  // namespace

TEST_CASE("FPGA case D: the ops as the cost model and card_work see them", "[analysis][fpga]") {
  const GatherFixture f;
  const OpCost& g = f.ops[0];
  // gather: 4e6 B gathered + 4e6 B indices read, 4e6 B written; no FLOPs.
  CHECK(g.flops == 0);
  CHECK(g.bytes_read == 8e6);
  CHECK(g.bytes_written == 4e6);
  CHECK(g.working_set_bytes == 4e6);
  CHECK(g.pattern == hlo::AccessPattern::kGatherScatter);
  // Its card work: 1e6 accesses of 4 B into the 1,048,576 B table; indices and result stream
  // (8e6 B); compulsory: table + indices + result = 9,048,576 B; inputs in 2 arrays.
  REQUIRE(g.work.random.size() == 1);
  CHECK(g.work.random[0].accesses == 1e6);
  CHECK(g.work.random[0].run_bytes == 4);
  CHECK(g.work.random[0].source_bytes == 1048576);
  CHECK(g.work.stream_bytes == 8e6);
  CHECK(g.work.compulsory_bytes == 9048576);
  CHECK(g.work.input_bytes == 5048576);
  CHECK(g.work.input_buffers == 2);
  // add_fusion: 1e6 FLOPs, 8e6 + 4e6 B, all compulsory.
  const OpCost& a = f.ops[1];
  CHECK(a.flops == 1e6);
  CHECK(a.bytes() == 12e6);
  CHECK(a.work.compulsory_bytes == 12e6);
  CHECK(a.pattern == hlo::AccessPattern::kElementwise);
  // Module 0: table 1,048,576 + idx 4e6 + y 4e6 in, 4e6 out = 13,048,576 B in 4 arrays.
  CHECK(g.module_io_bytes == 13048576);
  CHECK(g.module_io_buffers == 4);
}

TEST_CASE("FPGA what-if, case D: a gather on the round card (docs/fpga-model-cases.md)", "[analysis][fpga]") {
  const GatherFixture f;
  const RooflineReport r = f.roofline();
  const FpgaReport rep = rank_fpga_candidates(f.ops, r, round_card(), resident());
  REQUIRE(rep.candidates.size() == 2);
  const FpgaCandidate& g = row(rep, "gather");
  const FpgaCandidate& a = row(rep, "add_fusion");
  // gather, as compiled: 1e6 accesses at 800e6, 200e6, 50e6 per s = 1.25, 5, 20 ms (the
  // per-channel read rate binds: 200e6, 100e6, 50e6 < channel B/s / 32) + indices and result
  // 8e6 B / (40e9, 16e9, 5e9) = 0.2, 0.5, 1.6 ms = 1.45, 5.5, 21.6 ms; + 1 launch (10, 20,
  // 40 us): 1.46, 5.52, 21.64 ms.
  CHECK(g.stream_bytes == 8e6);
  CHECK(g.random_bytes == 4e6);
  CHECK(g.card_limit == "random access");
  CHECK(g.card_compute_s == 0.0);
  CHECK(g.card_memory_s == near(5.5e-3));
  CHECK(g.memory_efficiency == near(12e6 / (5.5e-3 * 40e9)));  // 0.054545
  CHECK(g.card_time_low_s == near(1.46e-3));
  CHECK(g.card_time_s == near(5.52e-3));
  CHECK(g.card_time_high_s == near(21.64e-3));
  CHECK(g.transfer_s == 0.0);
  CHECK(g.fpga_total_s == near(5.52e-3));
  // 100 us / 5.52 ms = 0.018116 (range 100 / 21640 = 0.004621 to 100 / 1460 = 0.068493).
  CHECK(g.op_speedup == near(100.0 / 5520.0));
  CHECK(g.op_speedup_low == near(100.0 / 21640.0));
  CHECK(g.op_speedup_high == near(100.0 / 1460.0));
  CHECK(g.workload_speedup == near(1.0 / 6.42));  // 1 / (1 - 0.1 + 5.52)
  // Restructured: the 1 MiB table fits on chip at every corner (room 4,608,000 / 2,304,000 /
  // 1,152,000 B): copies 4 / 2 / 1, blocks x ceil(1,048,576 / 4608) = 228: 912 / 456 / 228;
  // per cycle min(32, 1824) = 32 / min(16, 912) = 16 / min(8, 456) = 8: 1e6 accesses in
  // 78.125 us / 312.5 us / 1.25 ms; compulsory 9,048,576 B / (40e9, 16e9, 5e9) = 226.2144,
  // 565.536, 1809.7152 us, the longer at every corner. + launch: 236.2144, 585.536,
  // 1849.7152 us.
  CHECK(g.restructured_onchip);
  CHECK(g.restructured_bytes == 9048576);
  CHECK(g.restructured_card_time_low_s == near(236.2144e-6));
  CHECK(g.restructured_card_time_s == near(585.536e-6));
  CHECK(g.restructured_card_time_high_s == near(1849.7152e-6));
  // Card energy at the round card's 50 W (25 to 100 W), low x low, high x high: as compiled 1.46,
  // 5.52, 21.64 ms -> 36.5 mJ, 276 mJ, 2.164 J; restructured 236.2144, 585.536, 1849.7152 us ->
  // 5.90536 mJ, 29.2768 mJ, 184.97152 mJ.
  CHECK(g.card_energy_j.low == near(36.5e-3));
  CHECK(g.card_energy_j.nominal == near(276e-3));
  CHECK(g.card_energy_j.high == near(2.164));
  CHECK(g.restructured_card_energy_j.low == near(5.90536e-3));
  CHECK(g.restructured_card_energy_j.nominal == near(29.2768e-3));
  CHECK(g.restructured_card_energy_j.high == near(184.97152e-3));
  // 100 / 585.536 = 0.170784 (range 100 / 1849.7152 = 0.054062 to 100 / 236.2144 = 0.423344).
  CHECK(g.restructured_op_speedup == near(100.0 / 585.536));
  CHECK(g.restructured_op_speedup_low == near(100.0 / 1849.7152));
  CHECK(g.restructured_op_speedup_high == near(100.0 / 236.2144));
  CHECK(g.scenario == "neither");
  // add_fusion streams 12e6 B: 0.3, 0.75, 2.4 ms (compute 5 us nominal) + launch: 0.31,
  // 0.77, 2.44 ms; 20 / 770 = 0.025974.
  CHECK(a.card_limit == "memory");
  CHECK(a.memory_efficiency == near(0.4));
  CHECK(a.card_time_s == near(0.77e-3));
  CHECK(a.op_speedup == near(20.0 / 770.0));
  CHECK(a.restructured_card_time_s == near(0.77e-3));
  // Score (link_factor 1 with the data resident; both working sets 4e6 B fit on chip):
  // gather 100/120 x (0.25 + 0.75 x 1) x 0.4 x 1 x 1 = 0.333333, ranked first;
  // add_fusion 20/120 x (0.25 + 0.75 x 0.993333) x 1 = 0.165833.
  CHECK(g.score == near(100.0 / 120.0 * 0.4));
  CHECK(a.score == near(20.0 / 120.0 * 0.995));
  CHECK(rep.candidates[0].name == "gather");
  CHECK(rep.combined_count == 0);
  CHECK(rep.combined_speedup == 1.0);
  CHECK(rep.restructured_combined_count == 0);
  CHECK(rep.restructured_combined_speedup == 1.0);

  SECTION("over PCIe: the compulsory inputs and outputs cross the link") {
    const FpgaReport pcie = rank_fpga_candidates(f.ops, r, round_card(), over_pcie());
    const FpgaCandidate& gp = row(pcie, "gather");
    // table 1,048,576 + indices 4e6 + result 4e6 = 9,048,576 B in 3 arrays:
    // 9,048,576 / (10e9, 8e9, 5e9) + 3 x (5, 10, 20) us = 919.8576, 1161.072, 1869.7152 us.
    CHECK(gp.transfer_bytes == 9048576);
    CHECK(gp.transfer_low_s == near(919.8576e-6));
    CHECK(gp.transfer_s == near(1161.072e-6));
    CHECK(gp.transfer_high_s == near(1869.7152e-6));
    CHECK(gp.card_time_s == near(g.card_time_s));
    CHECK(gp.fpga_total_s == near(5.52e-3 + 1161.072e-6));
    CHECK(gp.restructured_fpga_total_s == near(585.536e-6 + 1161.072e-6));
    // link_factor = 100 / (100 + 1161.072) = 0.079298; score = 100/120 x 1 x 0.4 x 1 x
    // 0.079298 = 0.026433.
    CHECK(gp.link_factor == near(100.0 / 1261.072));
    CHECK(gp.score == near(100.0 / 120.0 * 0.4 * 100.0 / 1261.072));
    // add_fusion: 12e6 B in 3 arrays: 1.5 ms + 30 us = 1.53 ms; 20 / 1550 = 0.012903;
    // 20/120 x 0.995 x 0.012903 = 0.0021398.
    const FpgaCandidate& ap = row(pcie, "add_fusion");
    CHECK(ap.transfer_s == near(1.53e-3));
    CHECK(ap.link_factor == near(20.0 / 1550.0));
    CHECK(ap.score == near(20.0 / 120.0 * 0.995 * 20.0 / 1550.0));
  }
  SECTION("more lanes and channels: the restructured design gains") {
    // The 64-channel round card with onchip_lanes 128 (64, 256).
    FpgaTarget wide = testing::wide_round_card();
    wide.onchip_lanes = {128, 64, 256};
    const FpgaReport w = rank_fpga_candidates(f.ops, r, wide, resident());
    const FpgaCandidate& gw = row(w, "gather");
    // As compiled: 1e6 accesses at 64 x share x (200e6, 100e6, 50e6) = 12.8e9, 3.2e9, 0.8e9
    // per s = 78.125, 312.5, 1250 us + 8e6 B / (640e9, 256e9, 80e9) = 12.5, 31.25, 100 us =
    // 90.625, 343.75, 1350 us; + launch: 100.625, 363.75, 1390 us; 100 / 363.75 = 0.274914.
    CHECK(gw.card_time_low_s == near(100.625e-6));
    CHECK(gw.card_time_s == near(363.75e-6));
    CHECK(gw.card_time_high_s == near(1390e-6));
    // Restructured: per cycle min(256, 1824) = 256 / min(128, 912) = 128 / min(64, 456) = 64:
    // 1e6 / (256 x 400e6) = 9.765625 us, / (128 x 200e6) = 39.0625 us, / (64 x 100e6) =
    // 156.25 us; compulsory 9,048,576 B / (640e9, 256e9, 80e9) = 14.1384, 35.346, 113.1072 us.
    // Longer of the two: 14.1384, 39.0625, 156.25 us; + launch: 24.1384, 59.0625, 196.25 us.
    CHECK(gw.restructured_card_time_low_s == near(24.1384e-6));
    CHECK(gw.restructured_card_time_s == near(59.0625e-6));
    CHECK(gw.restructured_card_time_high_s == near(196.25e-6));
    CHECK(gw.op_speedup == near(100.0 / 363.75));
    CHECK(gw.restructured_op_speedup == near(100.0 / 59.0625));  // 1.693122
    CHECK(gw.scenario == "restructured only");
    // add_fusion: 12e6 / 256e9 = 46.875 us + 20 us = 66.875 us > 20 us: neither.
    CHECK(row(w, "add_fusion").scenario == "neither");
    // Restructured combined: the gather saves 100 - 59.0625 = 40.9375 us of 1 ms: 1.042685.
    CHECK(w.combined_count == 0);
    CHECK(w.restructured_combined_count == 1);
    CHECK(w.restructured_combined_speedup == near(1.0 / (1.0 - 0.0409375)));
    // A workload of 50 us (kernels overlapping on several streams: their 120 us exceed it): the
    // combined speedup is over the ops' summed 120 us, 120 / (120 - 40.9375) = 1.517787 (over
    // 50 us it read 5.517, and savings past the wall time gave 1.00 with its range reversed).
    FpgaOptions overlapped = resident();
    overlapped.workload_ns = 50e3;
    const FpgaReport o = rank_fpga_candidates(f.ops, r, wide, overlapped);
    CHECK(o.restructured_combined_speedup == near(120.0 / (120.0 - 40.9375)));
  }
  SECTION("a precision the card lacks: score 0, no speedup") {
    std::vector<OpCost> ops = f.ops;
    ops[1].precision = Precision::kFp64;  // the round card has no fp64
    const FpgaReport rep64 = rank_fpga_candidates(ops, r, round_card(), resident());
    const FpgaCandidate& a64 = row(rep64, "add_fusion");
    CHECK(a64.cost_known);
    CHECK(a64.score == 0.0);
    CHECK(a64.op_speedup == 0.0);
    CHECK(a64.workload_speedup == 1.0);
    CHECK(a64.scenario == "neither");
    CHECK(std::isnan(a64.card_time_s));
    CHECK(a64.estimate_note ==
          "the card has no DSP mapping for fp64 (its dsps_per_fma and flops_per_s are 0): not offloadable");
    CHECK(rep64.candidates.back().name == "add_fusion");
  }
}

TEST_CASE("FPGA regions, case D: the region's ops on the card and as one dataflow design",
          "[analysis][fpga][regions]") {
  const GatherFixture f;
  const RooflineReport r = f.roofline();
  const std::vector<FpgaRegionCandidate> regions =
      rank_fpga_regions(f.store, f.ops, f.op_of_kernel, r, round_card(), resident());
  REQUIRE(regions.size() == 1);
  const FpgaRegionCandidate& c = regions[0];
  CHECK(c.path == "recon");
  // As compiled: gather 1.45, 5.5, 21.6 ms + add_fusion 0.3, 0.75, 2.4 ms + one call (no
  // XlaModule ranges: the fewest executions of an op of module 0) 10, 20, 40 us =
  // 1.76, 6.27, 24.04 ms.
  CHECK(c.module_calls == 1.0);
  CHECK_FALSE(c.module_calls_counted);
  CHECK(c.card_memory_s == near(6.25e-3));
  CHECK(c.card_compute_s == near(5e-6));
  CHECK(c.random_access_bytes == 4e6);
  // (12e6 + 12e6) B / (6.25 ms x 40e9) = 0.096.
  CHECK(c.memory_efficiency == near(0.096));
  CHECK(c.card_time_low_s == near(1.76e-3));
  CHECK(c.card_time_s == near(6.27e-3));
  CHECK(c.card_time_high_s == near(24.04e-3));
  CHECK(c.region_speedup == near(120.0 / 6270.0));  // 0.019139
  // Restructured: each op alone 226.2144 + 300, 565.536 + 750, 1809.7152 + 2400 us =
  // 526.2144, 1315.536, 4209.7152 us; as one dataflow design: the call's 13,048,576 B once,
  // / (40e9, 16e9, 5e9) = 326.2144, 815.536, 2609.7152 us (the gathered values stream to the
  // add on chip; the table fits: on-chip accesses 78.125, 312.5, 1250 us; compute 5 us).
  // The better: the dataflow design; + launch: 336.2144, 835.536, 2649.7152 us.
  CHECK(c.restructured_card_time_low_s == near(336.2144e-6));
  CHECK(c.restructured_card_time_s == near(835.536e-6));
  CHECK(c.restructured_card_time_high_s == near(2649.7152e-6));
  CHECK(c.restructured_region_speedup == near(120.0 / 835.536));  // 0.143620
  CHECK(c.scenario == "neither");
  // Score: share 1, estimated 1; boundness (100 x 1 + 20 x 0.993333) / 120 = 0.998889;
  // affinity (100 x 0.4 + 20 x 1) / 120 = 0.5; 4e6 B fits; link 1:
  // (0.25 + 0.75 x 0.998889) x 0.5 = 0.499583.
  CHECK(c.memory_boundness == near((100 + 20 * (1 - (1.0 / 12.0) / 12.5)) / 120));
  CHECK(c.pattern_affinity == near(0.5));
  CHECK(c.score == near((0.25 + 0.75 * c.memory_boundness) * 0.5));

  SECTION("over PCIe: the call's arguments and results cross once") {
    const auto pcie = rank_fpga_regions(f.store, f.ops, f.op_of_kernel, r, round_card(), over_pcie());
    REQUIRE(pcie.size() == 1);
    // 13,048,576 B in 4 arrays: 13,048,576 / 8e9 + 4 x 10 us = 1671.072 us.
    CHECK(pcie[0].transfer_bytes == 13048576);
    CHECK(pcie[0].transfer_s == near(1671.072e-6));
    // link_factor 120 / (120 + 1671.072) = 0.066999; score 0.499583 x 0.066999 = 0.033472.
    CHECK(pcie[0].link_factor == near(120.0 / 1791.072));
    CHECK(pcie[0].score == near((0.25 + 0.75 * c.memory_boundness) * 0.5 * 120.0 / 1791.072));
  }
}

namespace {

// Every calibrated constant moved to its slow end, and the memory itself made slower.
std::vector<std::pair<std::string, std::function<void(FpgaTarget&)>>> slower_cards() {
  using F = std::function<void(FpgaTarget&)>;
  std::vector<std::pair<std::string, F>> out;
  const auto lower = [&](const char* name, Calibrated FpgaTarget::*f) {
    out.push_back({name, [f](FpgaTarget& t) { (t.*f).nominal = (t.*f).low; }});
  };
  const auto higher = [&](const char* name, Calibrated FpgaTarget::*f) {
    out.push_back({name, [f](FpgaTarget& t) { (t.*f).nominal = (t.*f).high; }});
  };
  lower("clock_hz", &FpgaTarget::clock_hz);
  lower("dsp_utilization", &FpgaTarget::dsp_utilization);
  lower("stream_efficiency", &FpgaTarget::stream_efficiency);
  lower("channel_share", &FpgaTarget::channel_share);
  lower("random_reads_per_s", &FpgaTarget::random_reads_per_s);
  lower("rmw_updates_per_s", &FpgaTarget::rmw_updates_per_s);
  lower("cross_channel_factor", &FpgaTarget::cross_channel_factor);
  lower("onchip_share", &FpgaTarget::onchip_share);
  lower("onchip_lanes", &FpgaTarget::onchip_lanes);
  lower("sort_bytes_per_s", &FpgaTarget::sort_bytes_per_s);
  lower("link_efficiency", &FpgaTarget::link_efficiency);
  higher("transfer_latency_s", &FpgaTarget::transfer_latency_s);
  higher("call_latency_s", &FpgaTarget::call_latency_s);
  out.push_back({"half the channel bandwidth", [](FpgaTarget& t) { t.memory_channel_bytes_per_s /= 2; }});
  out.push_back({"half the DSPs", [](FpgaTarget& t) { t.dsp_count /= 2; }});
  out.push_back({"half the on-chip RAM", [](FpgaTarget& t) { t.sram_bytes /= 2; }});
  return out;
}

}  // namespace

TEST_CASE("FPGA score: a slower card never scores higher (ops and regions, over PCIe)", "[analysis][fpga]") {
  const GatherFixture f;
  const RooflineReport r = f.roofline();
  std::vector<FpgaTarget> cards = fpga_presets();
  cards.push_back(round_card());
  for (const FpgaTarget& fast : cards) {
    const FpgaReport base = rank_fpga_candidates(f.ops, r, fast, over_pcie());
    const auto base_regions = rank_fpga_regions(f.store, f.ops, f.op_of_kernel, r, fast, over_pcie());
    REQUIRE(base_regions.size() == 1);
    for (const auto& [what, move] : slower_cards()) {
      FpgaTarget slow = fast;
      move(slow);
      INFO(fast.name << ", " << what);
      const FpgaReport rep = rank_fpga_candidates(f.ops, r, slow, over_pcie());
      for (const char* name : {"gather", "add_fusion"}) {
        INFO(name);
        CHECK(row(rep, name).card_time_s >= row(base, name).card_time_s);
        CHECK(row(rep, name).restructured_card_time_s >= row(base, name).restructured_card_time_s);
        CHECK(row(rep, name).fpga_total_s >= row(base, name).fpga_total_s);
        CHECK(row(rep, name).score <= row(base, name).score);
      }
      const auto regions = rank_fpga_regions(f.store, f.ops, f.op_of_kernel, r, slow, over_pcie());
      REQUIRE(regions.size() == 1);
      CHECK(regions[0].card_time_s >= base_regions[0].card_time_s);
      CHECK(regions[0].restructured_card_time_s >= base_regions[0].restructured_card_time_s);
      CHECK(regions[0].score <= base_regions[0].score);
    }
  }
  // On the round card: the gather at the slow end of the read rate (50e6 per channel):
  // 4 x 0.5 x 50e6 = 100e6 accesses/s -> 10 ms + 0.5 ms streamed + 20 us = 10.52 ms, twice
  // as slow, and the same score 0.026433 (the score does not see the card's speed).
  FpgaTarget slow_reads = round_card();
  slow_reads.random_reads_per_s.nominal = 50e6;
  const FpgaReport slow_reads_report = rank_fpga_candidates(f.ops, r, slow_reads, over_pcie());
  const FpgaCandidate& gs = row(slow_reads_report, "gather");
  CHECK(gs.card_time_s == near(10.52e-3));
  CHECK(gs.score == near(100.0 / 120.0 * 0.4 * 100.0 / 1261.072));
  // Half the channel bandwidth (5e9): per channel min(100e6, 4e9 / 32 = 125e6) = 100e6: the
  // random part stays 5 ms; streamed 8e6 / 8e9 = 1 ms: 6 ms + 20 us; the same score.
  FpgaTarget half = round_card();
  half.memory_channel_bytes_per_s = 5e9;
  const FpgaReport half_report = rank_fpga_candidates(f.ops, r, half, over_pcie());
  const FpgaCandidate& gh = row(half_report, "gather");
  CHECK(gh.card_time_s == near(6.02e-3));
  CHECK(gh.score == near(gs.score));
}

TEST_CASE("FPGA score: monotone in the host link", "[analysis][fpga]") {
  const GatherFixture f;
  const RooflineReport r = f.roofline();
  const FpgaTarget t = round_card();
  // A slower link (efficiency 0.4): 9,048,576 / 4e9 + 30 us = 2292.144 us for the gather:
  // link_factor 100 / 2392.144 = 0.041804 < 0.079298.
  FpgaTarget slow_link = t;
  slow_link.link_efficiency = {0.4, 0.25, 0.5};
  const FpgaReport slow_link_report = rank_fpga_candidates(f.ops, r, slow_link, over_pcie());
  const FpgaCandidate& g = row(slow_link_report, "gather");
  CHECK(g.transfer_s == near(9048576 / 4e9 + 30e-6));
  CHECK(g.link_factor == near(100.0 / (100.0 + 2292.144)));
  CHECK(g.score < row(rank_fpga_candidates(f.ops, r, t, over_pcie()), "gather").score);
  CHECK(rank_fpga_regions(f.store, f.ops, f.op_of_kernel, r, slow_link, over_pcie())[0].score <
        rank_fpga_regions(f.store, f.ops, f.op_of_kernel, r, t, over_pcie())[0].score);
  // More bytes over the link: a GPU link cap of 4e9 B/s gives the same 2292.144 us.
  FpgaOptions capped = over_pcie();
  capped.gpu_link_bytes_per_s = 4e9;
  CHECK(row(rank_fpga_candidates(f.ops, r, t, capped), "gather").link_factor == near(g.link_factor));
  // More DMA latency: 3 x 20 us instead of 3 x 10 us.
  FpgaTarget late = t;
  late.transfer_latency_s.nominal = 20e-6;
  CHECK(row(rank_fpga_candidates(f.ops, r, late, over_pcie()), "gather").link_factor ==
        near(100.0 / (100.0 + 1131.072 + 60.0)));
  // Nothing crosses the link: factor 1 whatever the link.
  CHECK(row(rank_fpga_candidates(f.ops, r, slow_link, resident()), "gather").link_factor == 1.0);
}

namespace {

// Case D with add_fusion run a second time without timestamps (a counter replay's start = end =
// 0), that run inside region `region`: 0 is "recon", 1 a region "warmup" added for it.
GatherFixture with_untimed_add_run(uint32_t region) {
  GatherFixture f;
  if (region == 1) {
    RegionRecord warmup;
    warmup.start_ns = 1000000;
    warmup.end_ns = 2000000;
    warmup.thread_id = 1;
    warmup.name = f.store.strings.intern("warmup");
    f.store.regions.push_back(warmup);
  }
  f.ops[1].executions = 2;
  f.store.kernels.push_back(testing::kernel(f.store, 0, 0, 3, region, 1000, f.store.strings.intern("add_kernel")));
  f.op_of_kernel.push_back(1);
  return f;
}

}  // namespace

TEST_CASE("FPGA what-if: an op with some untimed runs is costed on the card for its timed runs",
          "[analysis][fpga][regions]") {
  // Case D, with add_fusion run twice: the second run without timestamps (a counter replay's
  // start = end = 0). Its GPU time (20 us) covers one run of two, so the card's figures are
  // for one run: the same as in case D (0.77 ms nominal with its launch, 20 / 770), not two
  // runs (1.54 ms, a speedup half as large). The region's card time stays case D's 6.27 ms.
  const GatherFixture once;
  const GatherFixture twice = with_untimed_add_run(0);
  const RooflineReport r = twice.roofline();
  REQUIRE(r.ops[1].kernel_count == 2);
  REQUIRE(r.ops[1].timed_kernel_count == 1);
  const FpgaReport rep = rank_fpga_candidates(twice.ops, r, round_card(), resident());
  const FpgaCandidate& a = row(rep, "add_fusion");
  CHECK(a.executions == 2);
  CHECK(a.gpu_time_ns == 20000);
  CHECK(a.card_time_s == near(0.77e-3));
  CHECK(a.card_time_low_s == near(0.31e-3));
  CHECK(a.card_time_high_s == near(2.44e-3));
  CHECK(a.op_speedup == near(20.0 / 770.0));
  CHECK_THAT(a.estimate_note, Catch::Contains("covers 50% of its kernel runs"));
  // the gather (all runs timed) has no such note
  CHECK_THAT(row(rep, "gather").estimate_note, !Catch::Contains("kernel runs"));

  const auto base =
      rank_fpga_regions(once.store, once.ops, once.op_of_kernel, once.roofline(), round_card(), resident());
  const auto part = rank_fpga_regions(twice.store, twice.ops, twice.op_of_kernel, r, round_card(), resident());
  REQUIRE(base.size() == 1);
  REQUIRE(part.size() == 1);
  CHECK(part[0].card_time_s == near(6.27e-3));
  CHECK(part[0].card_time_s == near(base[0].card_time_s));
  CHECK(part[0].card_time_low_s == near(base[0].card_time_low_s));
  CHECK(part[0].card_time_high_s == near(base[0].card_time_high_s));
  CHECK_THAT(part[0].estimate_note, Catch::Contains("an op inside covers 50% of its kernel runs"));
  CHECK(base[0].estimate_note.find("kernel runs") == std::string::npos);
}

TEST_CASE("FPGA what-if: a region is costed for the runs of its ops timed inside it, not elsewhere",
          "[analysis][fpga][regions]") {
  // As the H200 counters traces have it: add_fusion's second run is untimed (start = end = 0)
  // and falls in another region ("warmup"), so every kernel inside "recon" has its duration.
  // By hand: inside recon add_fusion runs 2 x 1/2 = 1 time and its 20 us cover that run, so
  // recon's card figures are case D's (6.27 ms), with no partly-timed note; costing recon for
  // 1 x (1 timed / 2 kernels of the whole trace) = 0.5 runs undercounted the card.
  const GatherFixture once;
  const GatherFixture twice = with_untimed_add_run(1);
  const RooflineReport r = twice.roofline();
  REQUIRE(r.ops[1].timed_kernel_count == 1);
  const auto base =
      rank_fpga_regions(once.store, once.ops, once.op_of_kernel, once.roofline(), round_card(), resident());
  const auto part = rank_fpga_regions(twice.store, twice.ops, twice.op_of_kernel, r, round_card(), resident());
  const auto recon = std::find_if(part.begin(), part.end(), [](const auto& c) { return c.name == "recon"; });
  REQUIRE(recon != part.end());
  REQUIRE(base.size() == 1);
  CHECK(recon->card_time_s == near(6.27e-3));
  CHECK(recon->card_time_s == near(base[0].card_time_s));
  CHECK(recon->card_memory_s == near(base[0].card_memory_s));
  CHECK(recon->estimate_note.find("kernel runs") == std::string::npos);
}

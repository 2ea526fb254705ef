// FPGA what-if for random (gather/scatter) access: case D of docs/fpga-model.md, every
// expected number worked out by hand below and in the doc.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "fpgaprof/analysis/fpga_model.hpp"
#include "fpgaprof/analysis/roofline.hpp"
#include "fpgaprof/error.hpp"
#include "analysis_fixture.hpp"

using namespace fpgaprof;
using namespace fpgaprof::analysis;

namespace {

// Case D: on the fictional GPU of the other tests (fp32 ridge 12.5 FLOP/B), one region "recon"
// [0, 1 ms) holds
//   op0 "gather": gather_scatter f32, 0 FLOP, 8e6 B read (4e6 gathered + 4e6 of s32 indices)
//       + 4e6 B written, working set 12 MB; one 100 us kernel;
//   op1 "add_fusion": elementwise f32, 1e6 FLOP, 8e6 + 4e6 B, working set 4 MB; one 20 us kernel.
// Both in module 0 (24 MB of parameters + results); 120 us of kernels; the program took 1 ms;
// the data stays on the card (inputs_cross_link false).
struct GatherFixture {
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
    OpCost gather;
    gather.name = "gather"; gather.flops = 0; gather.bytes_read = 8e6; gather.bytes_written = 4e6;
    gather.working_set_bytes = 12e6; gather.pattern = hlo::AccessPattern::kGatherScatter;
    gather.precision = Precision::kFp32; gather.executions = 1; gather.module_index = 0; gather.module_io_bytes = 24e6;
    OpCost add;
    add.name = "add_fusion"; add.flops = 1e6; add.bytes_read = 8e6; add.bytes_written = 4e6;
    add.working_set_bytes = 4e6; add.pattern = hlo::AccessPattern::kElementwise;
    add.precision = Precision::kFp32; add.executions = 1; add.module_index = 0; add.module_io_bytes = 24e6;
    ops = {gather, add};
    store.kernels = {testing::kernel(store, 1000, 100000, 1, 0, 1000, store.strings.intern("gather_kernel")),
                     testing::kernel(store, 200000, 20000, 2, 0, 1000, store.strings.intern("add_kernel"))};
    op_of_kernel = {0, 1};
  }
};

FpgaOptions resident() {
  FpgaOptions o;
  o.workload_ns = 1e6;
  o.inputs_cross_link = false;
  return o;
}

const FpgaCandidate& row(const FpgaReport& rep, const std::string& name) {
  for (const FpgaCandidate& c : rep.candidates)
    if (c.name == name) return c;
  FAIL("no candidate " << name);
  return rep.candidates.front();
}

}  // namespace

TEST_CASE("Random access efficiency: which patterns get it, and the presets' value", "[analysis][fpga]") {
  using A = hlo::AccessPattern;
  CHECK(is_random_access(A::kGatherScatter));
  // Sort merges stream in bursts; transposes go through on-chip tiles: both stay streamed.
  for (A p : {A::kElementwise, A::kStencil, A::kReduction, A::kSort, A::kDataMovement, A::kDot, A::kConvolution,
              A::kFft, A::kLibraryCall, A::kControl, A::kUnknown})
    CHECK_FALSE(is_random_access(p));
  // 12 B per gathered f32 with an s32 index: 4 B at 4/32 x 0.5 = 0.0625, 8 B at 0.85:
  // 12 / (4 / 0.0625 + 8 / 0.85) = 12 / 73.41 = 0.1635, rounded down to 0.16.
  CHECK(12.0 / (4.0 / (4.0 / 32.0 * 0.5) + 8.0 / 0.85) == Approx(0.1635).epsilon(1e-3));
  for (const FpgaTarget& t : fpga_presets()) {
    CHECK(t.random_access_efficiency == 0.16);
    CHECK(t.memory_efficiency(A::kGatherScatter) == 0.16);
    CHECK(t.memory_efficiency(A::kSort) == t.hbm_efficiency);
    CHECK(t.memory_bytes_per_s(A::kGatherScatter) == Approx(t.hbm_bytes_per_s * 0.16));
  }
}

TEST_CASE("FPGA what-if, case D: a gather on an Alveo U55C (docs/fpga-model.md)", "[analysis][fpga]") {
  GatherFixture f;
  const RooflineReport r = analyze_roofline(f.store, table_ceilings(f.store.devices[0]), f.ops, f.op_of_kernel);
  const FpgaTarget& u55c = fpga_preset("alveo-u55c");
  const FpgaReport rep = rank_fpga_candidates(f.ops, r, u55c, resident());
  REQUIRE(rep.candidates.size() == 2);
  const FpgaCandidate& g = row(rep, "gather");
  const FpgaCandidate& a = row(rep, "add_fusion");
  // gather: 12e6 B at 460e9 x 0.16 = 73.6e9 B/s -> 163.04 us; no FLOPs; + 10 us launch.
  CHECK(g.memory_efficiency == 0.16);
  CHECK(g.card_memory_s == Approx(12e6 / 73.6e9));                   // 163.043 us
  CHECK(g.card_compute_s == 0.0);
  CHECK(g.card_time_s == Approx(173.043e-6).epsilon(1e-5));
  CHECK(g.transfer_s == 0.0);
  CHECK(g.fpga_total_s == Approx(173.043e-6).epsilon(1e-5));
  CHECK(g.op_speedup == Approx(100.0 / 173.043).epsilon(1e-5));      // 0.578: slower than the GPU
  CHECK(g.workload_speedup == Approx(1000.0 / (1000.0 - 100.0 + 173.043)).epsilon(1e-5));  // 0.9319
  // add_fusion streams: 12e6 B at 460e9 x 0.85 = 391e9 B/s -> 30.69 us (unchanged).
  CHECK(a.memory_efficiency == 0.85);
  CHECK(a.card_memory_s == Approx(12e6 / 391e9));
  CHECK(a.op_speedup == Approx(20.0 / (30.691 + 10.0)).epsilon(1e-4));  // 0.4915
  // Score: the memory efficiency does not enter it with the data resident (link_factor 1):
  // gather 100/120 x (0.25 + 0.75 x 1) x 0.4 x 1 x 1 = 0.3333; add 20/120 x 0.995 = 0.1658.
  CHECK(g.score == Approx(100.0 / 120.0 * 0.4));
  CHECK(rep.candidates[0].name == "gather");
  // Neither op gains: nothing is offloaded.
  CHECK(rep.combined_count == 0);
  CHECK(rep.combined_speedup == 1.0);

  SECTION("random_access_efficiency = hbm_efficiency gives the single-efficiency model") {
    FpgaTarget old = u55c;
    old.random_access_efficiency = old.hbm_efficiency;
    const FpgaReport before = rank_fpga_candidates(f.ops, r, old, resident());
    const FpgaCandidate& g0 = row(before, "gather");
    // 12e6 / 391e9 = 30.69 us + 10 us = 40.69 us: the gather looked 2.46x faster on the card.
    CHECK(g0.memory_efficiency == 0.85);
    CHECK(g0.card_memory_s == Approx(12e6 / 391e9));
    CHECK(g0.fpga_total_s == Approx(40.691e-6).epsilon(1e-4));
    CHECK(g0.op_speedup == Approx(100.0 / 40.691).epsilon(1e-4));    // 2.4575
    CHECK(before.combined_count == 1);
    CHECK(before.combined_speedup == Approx(1000.0 / (1000.0 - 100.0 + 40.691)).epsilon(1e-4));  // 1.0631
    CHECK(row(before, "add_fusion").card_memory_s == a.card_memory_s);
  }
  SECTION("over PCIe the transfer is the same; only the card time changes") {
    FpgaOptions o = resident();
    o.inputs_cross_link = true;
    const FpgaReport pcie = rank_fpga_candidates(f.ops, r, u55c, o);
    const FpgaCandidate& gp = row(pcie, "gather");
    // 12e6 B / (15.754e9 x 0.8) + 2 x 5 us = 952.1 + 10 = 962.1 us.
    CHECK(gp.transfer_s == Approx(12e6 / (pcie_bytes_per_s(3, 16) * 0.8) + 10e-6));
    CHECK(gp.card_time_s == Approx(g.card_time_s));
    // link_factor = GPU time / (GPU time + transfer) = 100 / (100 + 962.148) = 0.094149;
    // score = 100/120 x (0.25 + 0.75 x 1) x 0.4 x 1 x 0.094149 = 0.031383.
    CHECK(gp.link_factor == Approx(100.0 / 1062.148).epsilon(1e-5));
    CHECK(gp.score == Approx(0.031383).epsilon(1e-4));
    // add_fusion: 20 / (20 + 962.148) = 0.020364; 20/120 x 0.995 x 1 x 1 x 0.020364 = 0.0033770.
    const FpgaCandidate& ap = row(pcie, "add_fusion");
    CHECK(ap.link_factor == Approx(20.0 / 982.148).epsilon(1e-5));
    CHECK(ap.score == Approx(0.0033770).epsilon(1e-4));
  }
}

TEST_CASE("FPGA score: a slower card never scores higher (ops and regions, over PCIe)", "[analysis][fpga]") {
  // Case D over PCIe on the U55C and on copies that differ only in the card's memory model.
  // The old link_factor, card / (card + transfer), gave the gather 0.1524 at efficiency 0.16
  // and 0.0406 at 0.85: the card that is 4.3x slower on it scored 3.8x higher (0.0508 against
  // 0.0135). The score must not rise when the card gets slower.
  GatherFixture f;
  const RooflineReport r = analyze_roofline(f.store, table_ceilings(f.store.devices[0]), f.ops, f.op_of_kernel);
  FpgaOptions o = resident();
  o.inputs_cross_link = true;
  const FpgaTarget& u55c = fpga_preset("alveo-u55c");
  FpgaTarget fast_random = u55c;  // gathers stream like everything else
  fast_random.name = "u55c, gathers at 0.85";
  fast_random.random_access_efficiency = u55c.hbm_efficiency;
  FpgaTarget slow_hbm = u55c;     // a card with half the HBM bandwidth
  slow_hbm.name = "u55c, half the HBM";
  slow_hbm.hbm_bytes_per_s = u55c.hbm_bytes_per_s / 2;
  const struct {
    const FpgaTarget* slow;
    const FpgaTarget* fast;
  } pairs[] = {{&u55c, &fast_random}, {&slow_hbm, &u55c}};
  for (const auto& p : pairs) {
    const FpgaReport slow = rank_fpga_candidates(f.ops, r, *p.slow, o);
    const FpgaReport fast = rank_fpga_candidates(f.ops, r, *p.fast, o);
    for (const char* name : {"gather", "add_fusion"}) {
      INFO(p.slow->name << " vs " << p.fast->name << ": " << name);
      // The premise: the card really is slower on this op (or no faster, for add_fusion
      // when only the random-access efficiency differs).
      CHECK(row(slow, name).card_time_s >= row(fast, name).card_time_s);
      CHECK(row(slow, name).score <= row(fast, name).score);
    }
    // The gather: 163.04 us (0.16) against 30.69 us (0.85) on the card, the same link_factor
    // 0.094149 and score 0.031383 on both (case D over PCIe, above).
    CHECK(row(slow, "gather").card_time_s > row(fast, "gather").card_time_s);
    CHECK(row(slow, "gather").score == Approx(0.031383).epsilon(1e-4));
    const auto slow_regions = rank_fpga_regions(f.store, f.ops, f.op_of_kernel, r, *p.slow, o);
    const auto fast_regions = rank_fpga_regions(f.store, f.ops, f.op_of_kernel, r, *p.fast, o);
    REQUIRE(slow_regions.size() == 1);
    REQUIRE(fast_regions.size() == 1);
    CHECK(slow_regions[0].card_time_s > fast_regions[0].card_time_s);
    CHECK(slow_regions[0].score <= fast_regions[0].score);
  }
  // Region "recon" over PCIe: one call, 24e6 B / 12.603e9 + 2 x 5 us = 1914.30 us;
  // link_factor = 120 / (120 + 1914.30) = 0.058988; boundness (100 x 1 + 20 x 0.99333) / 120 =
  // 0.998889, affinity (100 x 0.4 + 20 x 1) / 120 = 0.5, 12 MB fits: score = 1 x 1 x
  // (0.25 + 0.75 x 0.998889) x 0.5 x 1 x 0.058988 = 0.029470 (old: 0.0481 at 0.16, 0.0180 at 0.85).
  const auto regions = rank_fpga_regions(f.store, f.ops, f.op_of_kernel, r, u55c, o);
  REQUIRE(regions.size() == 1);
  CHECK(regions[0].transfer_s == Approx(1914.297e-6).epsilon(1e-5));
  CHECK(regions[0].link_factor == Approx(120.0 / 2034.297).epsilon(1e-5));
  CHECK(regions[0].score == Approx(0.029470).epsilon(1e-4));
  // More bytes over the link lower the factor: a slower link (half the efficiency).
  FpgaTarget slow_link = u55c;
  slow_link.link_efficiency = u55c.link_efficiency / 2;
  const FpgaReport narrow = rank_fpga_candidates(f.ops, r, slow_link, o);
  CHECK(row(narrow, "gather").link_factor < 100.0 / 1062.148);
  CHECK(rank_fpga_regions(f.store, f.ops, f.op_of_kernel, r, slow_link, o)[0].score < regions[0].score);
}

TEST_CASE("FPGA regions, case D: each op inside at its own pattern's efficiency", "[analysis][fpga]") {
  GatherFixture f;
  const RooflineReport r = analyze_roofline(f.store, table_ceilings(f.store.devices[0]), f.ops, f.op_of_kernel);
  const std::vector<FpgaRegionCandidate> regions =
      rank_fpga_regions(f.store, f.ops, f.op_of_kernel, r, fpga_preset("alveo-u55c"), resident());
  REQUIRE(regions.size() == 1);
  const FpgaRegionCandidate& c = regions[0];
  CHECK(c.path == "recon");
  // gather 163.043 us + add_fusion 30.691 us (its compute, 1.32 us, is shorter) = 193.734 us.
  CHECK(c.card_memory_s == Approx(12e6 / 73.6e9 + 12e6 / 391e9));
  CHECK(c.random_access_bytes == 12e6);
  // 24e6 B / (193.734 us x 460e9 B/s) = 0.2693 = 2 / (1/0.16 + 1/0.85).
  CHECK(c.memory_efficiency == Approx(2.0 / (1.0 / 0.16 + 1.0 / 0.85)));
  // One call (no XlaModule ranges: the most executions of an op of module 0), 10 us.
  CHECK(c.module_calls == 1.0);
  CHECK(c.card_time_s == Approx(193.734e-6 + 10e-6).epsilon(1e-5));
  CHECK(c.region_speedup == Approx(120.0 / 203.734).epsilon(1e-5));  // 0.589

  FpgaTarget old = fpga_preset("alveo-u55c");
  old.random_access_efficiency = old.hbm_efficiency;
  const std::vector<FpgaRegionCandidate> before =
      rank_fpga_regions(f.store, f.ops, f.op_of_kernel, r, old, resident());
  REQUIRE(before.size() == 1);
  CHECK(before[0].memory_efficiency == Approx(0.85));
  CHECK(before[0].card_memory_s == Approx(24e6 / 391e9));             // 61.38 us
  CHECK(before[0].region_speedup == Approx(120.0 / 71.382).epsilon(1e-4));  // 1.68
}

TEST_CASE("random_access_efficiency is validated like the other shares", "[analysis][fpga]") {
  FpgaTarget t = fpga_preset("alveo-u55c");
  for (double bad : {0.0, -0.1, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    t.random_access_efficiency = bad;
    try {
      validate_fpga_target(t);
      FAIL("accepted random_access_efficiency = " << bad);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kInvalidArgument);
      CHECK(std::string(e.what()).find("random_access_efficiency") != std::string::npos);
      CHECK(std::string(e.what()).find("(0, 1]") != std::string::npos);
    }
  }
  t.random_access_efficiency = 1.0;
  CHECK_NOTHROW(validate_fpga_target(t));
}

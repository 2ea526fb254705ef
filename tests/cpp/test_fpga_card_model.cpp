// The FPGA card model (fpga_model.hpp): estimate_op_on_card, link_time, dataflow_time,
// offload_scenario, the presets and validate_fpga_target. Every expected number is worked out
// by hand in the comments from the formulas, on the round card of fpga_fixture.hpp (the same
// cases step by step: docs/fpga-model-cases.md). The presets are checked for properties.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "fpga_fixture.hpp"
#include "fpgaprof/analysis/fpga_model.hpp"
#include "fpgaprof/error.hpp"

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

RandomTraffic random_traffic(double bytes, double accesses, double run, double source, bool rmw = false) {
  RandomTraffic r;
  r.bytes = bytes;
  r.accesses = accesses;
  r.run_bytes = run;
  r.source_bytes = source;
  r.read_modify_write = rmw;
  return r;
}

// A CardWork given by hand: FLOPs, streamed bytes as compiled, inputs and outputs (compulsory
// = inputs + outputs unless given), and random traffic.
CardWork work(double flops, double stream, double input, double output, std::vector<RandomTraffic> random = {}) {
  CardWork w;
  w.known = true;
  w.flops = flops;
  w.stream_bytes = stream;
  w.random = std::move(random);
  w.bytes = stream + w.random_bytes();
  w.input_bytes = input;
  w.output_bytes = output;
  w.compulsory_bytes = input + output;
  w.input_buffers = w.output_buffers = 1;
  return w;
}

// multiply(y, y) of a 4e6 B f32 array: 1e6 FLOPs; the cost model reads y twice (8e6 B) and
// writes 4e6 B: 12e6 B streamed; compulsory y once + the result = 8e6 B.
CardWork streaming_op(double flops = 1e6) { return work(flops, 12e6, 4e6, 4e6); }

// An element gather of 1e6 f32 (4e6 B) with s32 indices from a table of `table` bytes:
// indices 4e6 + result 4e6 stream; 1e6 accesses of 4 B at random.
CardWork element_gather(double table) { return work(0, 8e6, table + 4e6, 4e6, {random_traffic(4e6, 1e6, 4, table)}); }

// A scatter-add of 1e6 f32 updates into a table of `table` bytes: indices 4e6 + updates 4e6
// stream; 2 x 4e6 B at random in 2e6 accesses (1e6 read-modify-write updates); 1e6 adds.
CardWork scatter_add(double table) {
  return work(1e6, 8e6, table + 8e6, table, {random_traffic(8e6, 2e6, 4, table, true)});
}

}  // namespace

TEST_CASE("round card: valid, and its rates at the three corners", "[analysis][fpga][card]") {
  const FpgaTarget t = round_card();
  CHECK_NOTHROW(validate_fpga_target(t));
  CHECK(t.memory_bytes_per_s() == near(40e9));            // 4 x 10e9
  CHECK(t.flops_per_s(Precision::kFp32) == near(200e9));  // 1000 x 0.5 / 1 x 2 x 200e6
  CHECK(t.flops_per_s(Precision::kFp32, 400e6, 1.0) == near(800e9));
  CHECK(t.flops_per_s(Precision::kTf32Tensor) == near(200e9));  // tf32 -> fp32
  CHECK(t.flops_per_s(Precision::kFp16Tensor) == near(200e9));  // fp16 tensor -> fp16, 1 DSP
  CHECK(t.flops_per_s(Precision::kFp64) == 0.0);                // no fp64
  CHECK(t.uses_dsp_model());
}

TEST_CASE("estimate_op_on_card: a streaming op, memory-bound and compute-bound", "[analysis][fpga][card]") {
  const FpgaTarget t = round_card();
  SECTION("memory-bound") {
    const CardWork w = streaming_op();
    const OpCardEstimate a = estimate_op_on_card(w, Precision::kFp32, t, Scenario::kAsCompiled);
    REQUIRE(a.estimated);
    // compute 1e6 FLOP / (800e9, 200e9, 50e9) = 1.25 us, 5 us, 20 us
    check_range(a.compute_s, 1.25e-6, 5e-6, 20e-6);
    // memory 12e6 B / (40e9, 16e9, 5e9) = 0.3 ms, 0.75 ms, 2.4 ms
    check_range(a.memory_s, 0.3e-3, 0.75e-3, 2.4e-3);
    check_range(a.time_s, 0.3e-3, 0.75e-3, 2.4e-3);
    CHECK(a.limit == "memory");
    CHECK(a.memory_bytes == 12e6);
    // 12e6 / (0.75e-3 x 40e9 peak) = 0.4 (= stream efficiency 0.8 x channel share 0.5)
    CHECK(a.memory_efficiency == near(0.4));
    CHECK_FALSE(a.onchip);
    CHECK(a.note.empty());
    // Restructured: the compulsory 8e6 B once: 8e6 / (40e9, 16e9, 5e9) = 0.2, 0.5, 1.6 ms.
    const OpCardEstimate r = estimate_op_on_card(w, Precision::kFp32, t, Scenario::kRestructured);
    check_range(r.time_s, 0.2e-3, 0.5e-3, 1.6e-3);
    check_range(r.compute_s, 1.25e-6, 5e-6, 20e-6);
    CHECK(r.memory_bytes == 8e6);
    CHECK(r.memory_efficiency == near(0.4));  // 8e6 / (0.5e-3 x 40e9)
    CHECK(r.limit == "memory");
    CHECK_FALSE(r.onchip);  // nothing at random
    // Every byte compulsory (an op known by its totals): restructured = as compiled.
    const CardWork totals = card_work_from_totals(1e6, 8e6, 4e6);
    check_range(estimate_op_on_card(totals, Precision::kFp32, t, Scenario::kRestructured).time_s, 0.3e-3, 0.75e-3,
                2.4e-3);
  }
  SECTION("compute-bound") {
    const CardWork w = streaming_op(1e10);
    // compute 1e10 / (800e9, 200e9, 50e9) = 12.5, 50, 200 ms > memory 0.3, 0.75, 2.4 ms
    const OpCardEstimate a = estimate_op_on_card(w, Precision::kFp32, t, Scenario::kAsCompiled);
    check_range(a.compute_s, 12.5e-3, 50e-3, 200e-3);
    check_range(a.memory_s, 0.3e-3, 0.75e-3, 2.4e-3);
    check_range(a.time_s, 12.5e-3, 50e-3, 200e-3);
    CHECK(a.limit == "compute");
    // Restructuring cannot shorten compute.
    check_range(estimate_op_on_card(w, Precision::kFp32, t, Scenario::kRestructured).time_s, 12.5e-3, 50e-3, 200e-3);
    // fp16 runs at 1 DSP per FMA too: the same; tf32 maps to fp32.
    check_range(estimate_op_on_card(w, Precision::kFp16, t, Scenario::kAsCompiled).time_s, 12.5e-3, 50e-3, 200e-3);
    check_range(estimate_op_on_card(w, Precision::kTf32Tensor, t, Scenario::kAsCompiled).time_s, 12.5e-3, 50e-3,
                200e-3);
  }
}

TEST_CASE("estimate_op_on_card: gathers and scatters as compiled", "[analysis][fpga][card]") {
  const FpgaTarget t = round_card();
  SECTION("element gather: bound by the per-channel access rate") {
    // 4 B runs round up to one 32 B granule. Per channel: min(random reads, channel B/s / 32):
    //   fast min(200e6, 10e9/32 = 312.5e6) = 200e6; nominal min(100e6, 8e9/32 = 250e6) = 100e6;
    //   slow min(50e6, 5e9/32 = 156.25e6) = 50e6.
    // Table 4e6 B <= 1e9 B per channel: no cross-channel factor. Card rate = 4 x share x that:
    //   4 x 1 x 200e6 = 800e6; 4 x 0.5 x 100e6 = 200e6; 4 x 0.25 x 50e6 = 50e6 accesses/s;
    //   1e6 accesses -> 1.25 ms, 5 ms, 20 ms.
    // Streamed 8e6 B / (40e9, 16e9, 5e9) = 0.2, 0.5, 1.6 ms. Memory = 1.45, 5.5, 21.6 ms.
    const OpCardEstimate a = estimate_op_on_card(element_gather(4e6), Precision::kFp32, t, Scenario::kAsCompiled);
    check_range(a.memory_s, 1.45e-3, 5.5e-3, 21.6e-3);
    check_range(a.time_s, 1.45e-3, 5.5e-3, 21.6e-3);
    check_range(a.compute_s, 0, 0, 0);
    CHECK(a.limit == "random access");                           // 5 ms random > 0.5 ms streamed
    CHECK(a.memory_bytes == 12e6);                               // 8e6 streamed + 4e6 at random
    CHECK(a.memory_efficiency == near(12e6 / (5.5e-3 * 40e9)));  // 0.054545
  }
  SECTION("a long run: bound by the channel's bandwidth") {
    // 1000 accesses of 4096 B (4.096e6 B): 4096 / 32 = 128 granules. Per channel:
    //   fast min(200e6, 10e9/4096 = 2,441,406.25) -> x 4 x 1 = 9,765,625/s -> 102.4 us;
    //   nominal min(100e6, 8e9/4096 = 1,953,125) -> x 4 x 0.5 = 3,906,250/s -> 256 us;
    //   slow min(50e6, 5e9/4096 = 1,220,703.125) -> x 4 x 0.25 = 1,220,703.125/s -> 819.2 us:
    // the bytes at the streaming rate (4.096e6 / 16e9 = 256 us).
    const CardWork w = work(0, 0, 4e6, 4.096e6, {random_traffic(4.096e6, 1000, 4096, 4e6)});
    const OpCardEstimate a = estimate_op_on_card(w, Precision::kFp32, t, Scenario::kAsCompiled);
    check_range(a.time_s, 102.4e-6, 256e-6, 819.2e-6);
    CHECK(a.limit == "random access");
    CHECK(a.memory_efficiency == near(0.4));  // 4.096e6 / (256e-6 x 40e9)
  }
  SECTION("a 100 B run moves 4 granules (128 B) per access") {
    // 1000 accesses: per channel fast min(200e6, 10e9/128 = 78.125e6) -> x 4 = 312.5e6/s -> 3.2 us;
    // nominal min(100e6, 8e9/128 = 62.5e6) -> x 2 = 125e6/s -> 8 us;
    // slow min(50e6, 5e9/128 = 39.0625e6) -> x 1 = 39.0625e6/s -> 25.6 us.
    const CardWork w = work(0, 0, 4e6, 1e5, {random_traffic(1e5, 1000, 100, 4e6)});
    const OpCardEstimate a = estimate_op_on_card(w, Precision::kFp32, t, Scenario::kAsCompiled);
    check_range(a.time_s, 3.2e-6, 8e-6, 25.6e-6);
    CHECK(a.memory_bytes == 1e5);
    CHECK(a.memory_efficiency == near(1e5 / (8e-6 * 40e9)));  // 0.3125 = 0.4 x 100 / 128
  }
  SECTION("read-modify-write scatter: bound by the update rate") {
    // Per channel min(rmw updates, channel B/s / (2 x 32)): fast min(20e6, 156.25e6) = 20e6;
    // nominal min(10e6, 125e6) = 10e6; slow min(5e6, 78.125e6) = 5e6; x 4 x share:
    // 80e6, 20e6, 5e6 updates/s; 2e6 accesses = 1e6 updates -> 12.5, 50, 200 ms.
    // + streamed 8e6 B: 0.2, 0.5, 1.6 ms -> 12.7, 50.5, 201.6 ms.
    const OpCardEstimate a = estimate_op_on_card(scatter_add(4e6), Precision::kFp32, t, Scenario::kAsCompiled);
    check_range(a.memory_s, 12.7e-3, 50.5e-3, 201.6e-3);
    check_range(a.time_s, 12.7e-3, 50.5e-3, 201.6e-3);
    check_range(a.compute_s, 1.25e-6, 5e-6, 20e-6);  // 1e6 adds
    CHECK(a.limit == "random access");
    CHECK(a.memory_bytes == 16e6);  // 8e6 streamed + 8e6 at random
  }
  SECTION("a table larger than one channel: cross-channel factor") {
    // Table 2e9 B > 4e9 / 4 = 1e9 B per channel: rate x factor (1.0, 0.5, 0.25):
    // 800e6 x 1 -> 1.25 ms; 200e6 x 0.5 = 100e6 -> 10 ms; 50e6 x 0.25 = 12.5e6 -> 80 ms;
    // + streamed 0.2, 0.5, 1.6 ms -> 1.45, 10.5, 81.6 ms.
    check_range(estimate_op_on_card(element_gather(2e9), Precision::kFp32, t, Scenario::kAsCompiled).time_s, 1.45e-3,
                10.5e-3, 81.6e-3);
    // Exactly one channel's capacity (1e9 B) is not larger: no factor (1.45, 5.5, 21.6 ms).
    check_range(estimate_op_on_card(element_gather(1e9), Precision::kFp32, t, Scenario::kAsCompiled).time_s, 1.45e-3,
                5.5e-3, 21.6e-3);
    // Restructured: 2e9 B never fits on chip, and its compulsory traffic (2.008e9 B) is far
    // more than it moves as compiled: it stays as compiled.
    check_range(estimate_op_on_card(element_gather(2e9), Precision::kFp32, t, Scenario::kRestructured).time_s, 1.45e-3,
                10.5e-3, 81.6e-3);
  }
}

// An SpMV-like op in coordinate form: nnz f32 values, column and row indices (int32) streamed,
// gathers from x (50,000 f32: 200,000 B) and scatter-adds into y (200,000 rows: 800,000 B),
// 2 FLOPs per nonzero. Compulsory: inputs 12 x nnz + 200,000, output 800,000.
namespace {
CardWork spmv_like(double nnz) {
  return work(2 * nnz, 12 * nnz, 12 * nnz + 200000, 800000,
              {random_traffic(4 * nnz, nnz, 4, 200000), random_traffic(8 * nnz, 2 * nnz, 4, 800000, true)});
}
}  // namespace

TEST_CASE("estimate_op_on_card: restructured gather + scatter through tiled vectors", "[analysis][fpga][card]") {
  const FpgaTarget t = round_card();
  SECTION("low density, output tiled at the slow end") {
    // nnz 200,000: density 200,000 / (50,000 x 200,000) = 2e-5 <= 1e-4.
    // x + y = 1e6 B fits the room at every end (4,608,000 / 2,304,000 / 1,152,000 B).
    // On chip: x footprint 200,000 B -> copies floor(room / 200,000) = 23 / 11 / 5, blocks x 44
    // = 1012 / 484 / 220, per cycle min(32, 2024) = 32 / 16 / 8 -> 200,000 reads in 15.625 /
    // 62.5 / 250 us; y 800,000 B -> copies 5 / 2 / 1, blocks x 174 = 870 / 348 / 174, per cycle
    // min(lanes, blocks) = 32 / 16 / 8 -> 200,000 updates in 15.625 / 62.5 / 250 us. On chip
    // 31.25 / 125 / 500 us.
    // Output tiles: ceil(800,000 / 12,582,912) = 1, ceil(800,000 / 4,194,304) = 1,
    // ceil(800,000 / 524,288) = 2. The vectors over one channel (10e9 / 8e9 / 5e9 B/s):
    // (1 x 200,000 + 800,000) / 10e9 = 100 us, 1e6 / 8e9 = 125 us, (2 x 200,000 + 800,000) / 5e9
    // = 240 us. The matrix streams the compulsory 3.4e6 B less x and y (2.4e6 B), at the slow end
    // plus x's second reading (200,000 B): 2.4e6 / 40e9 = 60 us, 2.4e6 / 16e9 = 150 us,
    // 2.6e6 / 5e9 = 520 us.
    // Fast: overlapped, max(60, 31.25, 100) = 100 us. Nominal: max(150, 125) + 125 = 275 us.
    // Slow: the density (<= 1e-4) makes the structure decide, and the slow end is the design
    // whose tiles find no reuse: as compiled at the slow end. Its stream 2.4e6 B / 5e9 = 480 us;
    // the gathers: 32-B transactions, min(50e6, 5e9 / 32) = 50e6 per channel x 4 x 0.25 =
    // 50e6/s -> 200,000 in 4 ms; the updates: min(5e6, 5e9 / 64) = 5e6 x 4 x 0.25 = 5e6/s ->
    // 200,000 in 40 ms. 0.48 + 4 + 40 = 44.48 ms (the design without that widening: 760 us).
    const OpCardEstimate r = estimate_op_on_card(spmv_like(200000), Precision::kFp32, t, Scenario::kRestructured);
    check_range(r.time_s, 100e-6, 275e-6, 44.48e-3);
    check_range(r.memory_s, 100e-6, 275e-6, 44.48e-3);
    check_range(r.compute_s, 0.5e-6, 2e-6, 8e-6);  // 400,000 FLOPs at 800e9 / 200e9 / 50e9
    CHECK(r.onchip);
    CHECK(r.structure_dependent);
    CHECK(r.limit == "memory");      // the matrix stream and the vectors, not the banks
    CHECK(r.memory_bytes == 3.4e6);  // nominal: no tile re-read
    // As compiled, far slower: gathers 200,000 at 200e6/s (1 ms) and updates at 20e6/s (10 ms).
    CHECK(estimate_op_on_card(spmv_like(200000), Precision::kFp32, t, Scenario::kAsCompiled).time_s.nominal > 10e-3);
  }
  SECTION("density above 1e-4, one tile at the nominal end: shapes decide") {
    // nnz 4e6: density 4e6 / 1e10 = 4e-4. On chip 2 x 4e6 / (32 x 400e6, 16 x 200e6, 8 x 100e6)
    // = 625 us, 2.5 ms, 10 ms. Matrix 48e6 B: 1.2 ms, 3 ms, (48e6 + 200,000) / 5e9 = 9.64 ms.
    // Vectors as above: 100, 125, 240 us.
    // Fast max(1.2 ms, 625 us, 100 us) = 1.2 ms; nominal max(3, 2.5) + 0.125 = 3.125 ms;
    // slow max(9.64, 10) + 0.24 = 10.24 ms (no low-density factor).
    const OpCardEstimate r = estimate_op_on_card(spmv_like(4e6), Precision::kFp32, t, Scenario::kRestructured);
    check_range(r.time_s, 1.2e-3, 3.125e-3, 10.24e-3);
    CHECK(r.onchip);
    CHECK_FALSE(r.structure_dependent);
  }
  SECTION("as one dataflow design: the design's own ends, then widened") {
    // One stage, io the compulsory 3.4e6 B: the op's design (100 us, 275 us), its own slow end
    // 760 us (the vectors 240 us over max(520 us matrix, 500 us on chip)), and marked; widened
    // for the structure, the slow end becomes the as-compiled one given.
    const CardWork w = spmv_like(200000);
    bool structure = false;
    TimeRange r = dataflow_time({{&w, Precision::kFp32, 1, 0}}, 3.4e6, t, nullptr, &structure);
    check_range(r, 100e-6, 275e-6, 760e-6);
    CHECK(structure);
    widen_for_structure(r, {1e-3, 11e-3, 44.48e-3});
    check_range(r, 100e-6, 275e-6, 44.48e-3);
    widen_for_structure(r, {1e-3, 11e-3, 1e-3});  // never narrowed
    CHECK(r.high == near(44.48e-3));
    // Denser (4e-4, one tile): not marked (slow end 10.24 ms, below).
    const CardWork dense = spmv_like(4e6);
    CHECK(dataflow_time({{&dense, Precision::kFp32, 1, 0}}, 49e6, t, nullptr, &structure).high == near(10.24e-3));
    CHECK_FALSE(structure);
    // The same stage run 20 times in one design (a loop body): each run tiles the same 800 KB
    // output (one tile at the nominal end: still not marked) and moves its vectors again: on
    // chip 20 x 2.5 ms = 50 ms, vectors 20 x 1e6 B / 8e9 = 2.5 ms, the matrix's 48e6 B (io less
    // one x and one y) 3 ms: nominal max(3, 50) + 2.5 = 52.5 ms. Counting the 20 outputs as one
    // (16 MB: 4 tiles) marked it and re-read x 4 times.
    CHECK(dataflow_time({{&dense, Precision::kFp32, 20, 0}}, 49e6, t, nullptr, &structure).nominal == near(52.5e-3));
    CHECK_FALSE(structure);
  }
  SECTION("a gather alone is not tiled") {
    const OpCardEstimate r = estimate_op_on_card(element_gather(46080), Precision::kFp32, t, Scenario::kRestructured);
    CHECK(r.onchip);
    CHECK_FALSE(r.structure_dependent);
  }
}

TEST_CASE("estimate_op_on_card: the user's row imbalance on a restructured gather + scatter",
          "[analysis][fpga][card]") {
  const FpgaTarget t = round_card();
  // spmv_like(4e6) without an imbalance (the section above): fast max(1.2 ms, 625 us) + 100 us
  // overlapped = 1.2 ms; nominal max(3 ms, 2.5 ms) + 125 us; slow max(9.64 ms, 10 ms) + 240 us.
  // The PE work (the larger of the matrix stream and the on-chip accesses) is multiplied by
  // max(1, delta / 1.22) at the nominal and slow ends, by 10 more at the slow end when delta
  // >= 2; the vectors are not; the fast end (a hybrid row distribution) is unchanged.
  SECTION("delta 4.88: 4x the PE work, 40x at the slow end") {
    const OpCardEstimate r = estimate_op_on_card(spmv_like(4e6), Precision::kFp32, t, Scenario::kRestructured, 4.88);
    // nominal 4 x 3 ms + 0.125 ms; slow 40 x 10 ms + 0.24 ms (as compiled is slower at each end:
    // 4e6 updates alone take 200 ms nominal, 800 ms slow at 20e6 / 5e6 updates/s).
    check_range(r.time_s, 1.2e-3, 12.125e-3, 400.24e-3);
    CHECK(r.structure_dependent == false);  // density 4e-4, one tile: the shapes say the rest
  }
  SECTION("delta 1.83 (< 2): 1.5x the PE work, no stalls at the slow end") {
    const OpCardEstimate r = estimate_op_on_card(spmv_like(4e6), Precision::kFp32, t, Scenario::kRestructured, 1.83);
    check_range(r.time_s, 1.2e-3, 4.625e-3, 15.24e-3);  // 1.5 x 3 + 0.125; 1.5 x 10 + 0.24
  }
  SECTION("delta up to 1.22 changes nothing; 0 is not known") {
    for (double delta : {0.0, 1.0, 1.1, 1.22}) {
      const OpCardEstimate r = estimate_op_on_card(spmv_like(4e6), Precision::kFp32, t, Scenario::kRestructured, delta);
      check_range(r.time_s, 1.2e-3, 3.125e-3, 10.24e-3);
    }
  }
  SECTION("a gather alone has no rows to deal: unchanged") {
    const OpCardEstimate a = estimate_op_on_card(element_gather(46080), Precision::kFp32, t, Scenario::kRestructured);
    const OpCardEstimate b =
        estimate_op_on_card(element_gather(46080), Precision::kFp32, t, Scenario::kRestructured, 20.0);
    CHECK(b.time_s.low == a.time_s.low);
    CHECK(b.time_s.nominal == a.time_s.nominal);
    CHECK(b.time_s.high == a.time_s.high);
  }
  SECTION("as compiled ignores it") {
    const OpCardEstimate a = estimate_op_on_card(spmv_like(4e6), Precision::kFp32, t, Scenario::kAsCompiled);
    const OpCardEstimate b = estimate_op_on_card(spmv_like(4e6), Precision::kFp32, t, Scenario::kAsCompiled, 20.0);
    CHECK(b.time_s.nominal == a.time_s.nominal);
  }
  SECTION("a ratio below 1, not finite or absurd is refused with the fix") {
    CHECK_NOTHROW(validate_row_imbalance(0.0));
    CHECK_NOTHROW(validate_row_imbalance(1.0));
    for (double bad :
         {0.5, -1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(), 2e9}) {
      try {
        validate_row_imbalance(bad);
        FAIL("accepted " << bad);
      } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::kInvalidArgument);
        CHECK(std::string(e.what()).find("fpgaprof.fpga.row_imbalance") != std::string::npos);
      }
    }
  }
}

TEST_CASE("estimate_op_on_card: restructured, data-dependent accesses on chip", "[analysis][fpga][card]") {
  SECTION("lanes limited by onchip_lanes") {
    // A gather of 1e6 f32 from a 46,080 B table (10 BRAM36 blocks) with indices computed on
    // chip and a 4000 B result: stream 50,080 B, compulsory 46,080 + 4000 = 50,080 B.
    const FpgaTarget t = round_card();
    const CardWork w = work(0, 50080, 46080, 4000, {random_traffic(4e6, 1e6, 4, 46080)});
    // As compiled: random 1.25, 5, 20 ms + 50,080 B / (40e9, 16e9, 5e9) = 1.252, 3.13, 10.016 us.
    const OpCardEstimate a = estimate_op_on_card(w, Precision::kFp32, t, Scenario::kAsCompiled);
    check_range(a.time_s, 1.251252e-3, 5.00313e-3, 20.010016e-3);
    // On chip: room = share x 4,608,000 = 4,608,000 / 2,304,000 / 1,152,000 B; copies =
    // floor(room / 46,080) = 100 / 50 / 25; blocks = copies x 10 = 1000 / 500 / 250; accesses per
    // cycle = min(lanes, 2 x blocks) = min(32, 2000) = 32 / min(16, 1000) = 16 / min(8, 500) = 8;
    // 1e6 / (32 x 400e6) = 78.125 us, 1e6 / (16 x 200e6) = 312.5 us, 1e6 / (8 x 100e6) = 1.25 ms.
    // The compulsory 50,080 B stream in 1.252, 3.13, 10.016 us: the on-chip accesses bound it.
    const OpCardEstimate r = estimate_op_on_card(w, Precision::kFp32, t, Scenario::kRestructured);
    check_range(r.time_s, 78.125e-6, 312.5e-6, 1.25e-3);
    check_range(r.memory_s, 78.125e-6, 312.5e-6, 1.25e-3);  // max(streamed, on-chip)
    check_range(r.compute_s, 0, 0, 0);
    CHECK(r.onchip);
    CHECK(r.limit == "on-chip access");
    CHECK(r.memory_bytes == 50080);
    CHECK(r.memory_efficiency == near(0.4));  // 50,080 / (3.13e-6 x 40e9)
  }
  SECTION("lanes limited by 2 x blocks (a card with 4 blocks of on-chip RAM)") {
    FpgaTarget t = round_card();
    t.sram_bytes = 18432;  // 4 x 4608
    // Table 4608 B (1 block), 1e6 gathered f32, indices and result streamed (8e6 B):
    // compulsory 4608 + 4e6 + 4e6 = 8,004,608 B.
    // Room 18,432 / 9216 / 4608 B -> copies 4 / 2 / 1 -> blocks 4 / 2 / 1; per cycle
    // min(32, 8) = 8 / min(16, 4) = 4 / min(8, 2) = 2;
    // 1e6 / (8 x 400e6) = 312.5 us, 1e6 / (4 x 200e6) = 1.25 ms, 1e6 / (2 x 100e6) = 5 ms.
    // Streamed: 8,004,608 / (40e9, 16e9, 5e9) = 200.1152, 500.288, 1600.9216 us.
    const OpCardEstimate r = estimate_op_on_card(element_gather(4608), Precision::kFp32, t, Scenario::kRestructured);
    check_range(r.time_s, 312.5e-6, 1.25e-3, 5e-3);
    CHECK(r.limit == "on-chip access");
    CHECK(r.onchip);
    CHECK(r.memory_bytes == 8004608);
    // As compiled (1.45, 5.5, 21.6 ms) is slower at every corner.
    check_range(estimate_op_on_card(element_gather(4608), Precision::kFp32, t, Scenario::kAsCompiled).time_s, 1.45e-3,
                5.5e-3, 21.6e-3);
    // A scatter-add into it: an updated table is partitioned by index over as many banks as
    // copies of a read-only one would take (4 / 2 / 1 blocks), one update per block per cycle:
    // min(32, 4) = 4 / min(16, 2) = 2 / min(8, 1) = 1; 1e6 updates / (4 x 400e6) = 625 us,
    // / (2 x 200e6) = 2.5 ms, / (1 x 100e6) = 10 ms (compulsory 8,009,216 B streams in
    // 200.2304, 500.576, 1601.8432 us).
    const OpCardEstimate s = estimate_op_on_card(scatter_add(4608), Precision::kFp32, t, Scenario::kRestructured);
    check_range(s.time_s, 625e-6, 2.5e-3, 10e-3);
    CHECK(s.onchip);
  }
  SECTION("a table that fits at the fast end only, and one that never fits") {
    const FpgaTarget t = round_card();
    // Table 4e6 B: compulsory 4e6 + 4e6 + 4e6 = 12e6 B.
    //   fast: room 4,608,000 >= 4e6: copies 1, blocks ceil(4e6 / 4608) = 869, per cycle
    //     min(32, 1738) = 32: 1e6 / (32 x 400e6) = 78.125 us; streamed 12e6 / 40e9 = 300 us:
    //     300 us < 1.45 ms as compiled.
    //   nominal: 2,304,000 < 4e6: random at the card's rate 5 ms + 12e6 / 16e9 = 0.75 ms =
    //     5.75 ms > 5.5 ms as compiled: kept as compiled.
    //   slow: 20 ms + 12e6 / 5e9 = 2.4 ms = 22.4 ms > 21.6 ms: as compiled.
    const OpCardEstimate r = estimate_op_on_card(element_gather(4e6), Precision::kFp32, t, Scenario::kRestructured);
    check_range(r.time_s, 300e-6, 5.5e-3, 21.6e-3);
    CHECK_FALSE(r.onchip);          // the nominal design is the compiled one
    CHECK(r.memory_bytes == 12e6);  // as compiled: 8e6 + 4e6
    CHECK(r.limit == "random access");
    // Table 8e6 B (compulsory 16e6 B): never fits (8e6 > 4,608,000):
    //   fast 16e6 / 40e9 = 0.4 + 1.25 = 1.65 ms > 1.45; nominal 1 + 5 = 6 ms > 5.5;
    //   slow 3.2 + 20 = 23.2 ms > 21.6: as compiled at every corner.
    check_range(estimate_op_on_card(element_gather(8e6), Precision::kFp32, t, Scenario::kRestructured).time_s, 1.45e-3,
                5.5e-3, 21.6e-3);
    // The scatter-add into 4e6 B: fast on chip, one update per cycle per lane: min(32, 869)
    // = 32: 78.125 us, streamed 16e6 / 40e9 = 400 us < 12.7 ms; nominal 16e6 / 16e9 = 1 ms +
    // 50 ms = 51 ms > 50.5; slow 3.2 + 200 = 203.2 ms > 201.6: as compiled.
    check_range(estimate_op_on_card(scatter_add(4e6), Precision::kFp32, t, Scenario::kRestructured).time_s, 400e-6,
                50.5e-3, 201.6e-3);
  }
}

TEST_CASE("estimate_op_on_card: sort at the sort rate, FFT passes", "[analysis][fpga][card]") {
  const FpgaTarget t = round_card();
  SECTION("a sort that fits on chip: one pass") {
    // 8 sorts of 1000 (key f32 + value s32: 8 B per element): 64,000 sorted bytes;
    // 1000 x 8 = 8000 B per sort <= room: 1 pass. Sort: 64,000 / (2e9, 1e9, 0.5e9) = 32, 64,
    // 128 us; streamed 128,000 / (40e9, 16e9, 5e9) = 3.2, 8, 25.6 us.
    CardWork w = work(104000, 128000, 64000, 64000);
    w.sort_length = 1000;
    w.sort_count = 8;
    w.sort_element_bytes = 8;
    const OpCardEstimate a = estimate_op_on_card(w, Precision::kFp32, t, Scenario::kAsCompiled);
    check_range(a.time_s, 32e-6, 64e-6, 128e-6);
    check_range(a.compute_s, 32e-6, 64e-6, 128e-6);  // the sort, not its 104,000 FLOPs
    check_range(a.memory_s, 3.2e-6, 8e-6, 25.6e-6);
    CHECK(a.limit == "sort");
    CHECK(a.note == "sort: at the measured sort rate of published designs");
    CHECK(a.memory_bytes == 128000);
    // A sort needs no DSPs: estimated even in fp64, which this card cannot compute.
    CHECK(estimate_op_on_card(w, Precision::kFp64, t, Scenario::kAsCompiled).estimated);
    check_range(estimate_op_on_card(w, Precision::kFp32, t, Scenario::kRestructured).time_s, 32e-6, 64e-6, 128e-6);
  }
  SECTION("a sort that does not fit: two passes over card memory") {
    // One sort of 1e6 f32: 4e6 B; > room 2,304,000 (nominal) and 1,152,000 (slow): 2 passes;
    // <= 4,608,000 (fast): 1 pass. Sort 4e6 / (2e9, 1e9, 0.5e9) = 2, 4, 8 ms. Streamed
    // 8e6 B x passes: 1 x 8e6 / 40e9 = 0.2 ms, 2 x 8e6 / 16e9 = 1 ms, 2 x 8e6 / 5e9 = 3.2 ms.
    CardWork w = work(0, 8e6, 4e6, 4e6);
    w.sort_length = 1e6;
    w.sort_count = 1;
    w.sort_element_bytes = 4;
    const OpCardEstimate a = estimate_op_on_card(w, Precision::kFp32, t, Scenario::kAsCompiled);
    check_range(a.time_s, 2e-3, 4e-3, 8e-3);
    check_range(a.memory_s, 0.2e-3, 1e-3, 3.2e-3);
    CHECK(a.memory_bytes == 16e6);  // 2 passes x 8e6 (nominal)
    CHECK(a.limit == "sort");
  }
  SECTION("FFT: one pass when a transform fits on chip, two when not") {
    // 1024 transforms of 1024 points (c64, 8 B): 1024 x 8 = 8192 B fits: 1 pass.
    // Card FLOPs 5 x 1024 x 10 x 1024 = 52,428,800 / (800e9, 200e9, 50e9) = 65.536, 262.144,
    // 1048.576 us; bytes 2 x 8,388,608 = 16,777,216 / (40e9, 16e9, 5e9) = 419.4304, 1048.576,
    // 3355.4432 us: memory-bound at every corner.
    CardWork f1 = work(52428800, 16777216, 8388608, 8388608);
    f1.fft_length = 1024;
    f1.fft_count = 1024;
    f1.fft_point_bytes = 8;
    const OpCardEstimate a1 = estimate_op_on_card(f1, Precision::kFp32, t, Scenario::kAsCompiled);
    check_range(a1.compute_s, 65.536e-6, 262.144e-6, 1048.576e-6);
    check_range(a1.time_s, 419.4304e-6, 1048.576e-6, 3355.4432e-6);
    CHECK(a1.limit == "memory");
    // The same points as one transform of 2^20: 2^20 x 8 = 8,388,608 B > every room: 2 passes.
    // FLOPs 5 x 2^20 x 20 = 104,857,600 / rate = 131.072, 524.288, 2097.152 us; memory
    // 2 x 16,777,216 = 33,554,432 B / rate = 838.8608, 2097.152, 6710.8864 us.
    CardWork f2 = work(104857600, 16777216, 8388608, 8388608);
    f2.fft_length = 1048576;
    f2.fft_count = 1;
    f2.fft_point_bytes = 8;
    const OpCardEstimate a2 = estimate_op_on_card(f2, Precision::kFp32, t, Scenario::kAsCompiled);
    check_range(a2.compute_s, 131.072e-6, 524.288e-6, 2097.152e-6);
    check_range(a2.time_s, 838.8608e-6, 2097.152e-6, 6710.8864e-6);
    CHECK(a2.memory_bytes == 33554432);
    // Restructured gains nothing on an op that moves only its compulsory bytes.
    check_range(estimate_op_on_card(f2, Precision::kFp32, t, Scenario::kRestructured).time_s, 838.8608e-6, 2097.152e-6,
                6710.8864e-6);
  }
}

TEST_CASE("estimate_op_on_card: a two-pass sort restructured moves its data twice, not three times",
          "[analysis][fpga][card]") {
  // The restructured design of one op streams its compulsory bytes once and adds the extra
  // pass of a sort that does not fit on chip once: 2x its compulsory bytes, as dataflow_time of
  // the same single stage (below, "a sort that does not fit ...", last check).
  // Card: the round card with a sort rate of 10e9 (5e9, 20e9) B/s. Work: a fusion that reads
  // its 8e6 B input twice (two reshape users) and sorts 2e6 f32: stream 24e6 B, compulsory
  // 8e6 + 8e6 = 16e6 B; 8e6 B per sort > every room: 2 passes.
  FpgaTarget t = round_card();
  t.sort_bytes_per_s = {10e9, 5e9, 20e9};
  CardWork w = work(0, 24e6, 8e6, 8e6);
  w.sort_length = 2e6;
  w.sort_count = 1;
  w.sort_element_bytes = 4;
  // Sort 8e6 / (20e9, 10e9, 5e9) = 0.4, 0.8, 1.6 ms.
  // As compiled: 2 passes x 24e6 = 48e6 B / (40e9, 16e9, 5e9) = 1.2, 3, 9.6 ms.
  check_range(estimate_op_on_card(w, Precision::kFp32, t, Scenario::kAsCompiled).time_s, 1.2e-3, 3e-3, 9.6e-3);
  // Restructured by hand: compulsory 16e6 B once + one extra pass of inputs + outputs
  // (16e6 B) = 32e6 B / (40e9, 16e9, 5e9) = 0.8, 2, 6.4 ms (> sort), not 3 x 16e6 = 48e6 B
  // (1.2, 3, 9.6 ms, no better than as compiled).
  const OpCardEstimate r = estimate_op_on_card(w, Precision::kFp32, t, Scenario::kRestructured);
  check_range(r.time_s, 0.8e-3, 2e-3, 6.4e-3);
  CHECK(r.memory_bytes == 32e6);
}

TEST_CASE("estimate_op_on_card: what it does not estimate", "[analysis][fpga][card]") {
  const FpgaTarget t = round_card();
  SECTION("a precision the card lacks") {
    const OpCardEstimate e = estimate_op_on_card(streaming_op(), Precision::kFp64, t, Scenario::kAsCompiled);
    CHECK_FALSE(e.estimated);
    CHECK(e.note == "the card has no DSP mapping for fp64 (its dsps_per_fma and flops_per_s are 0): not offloadable");
    CHECK(std::isnan(e.time_s.nominal));
    CHECK(std::isnan(e.compute_s.low));
    CHECK(std::isnan(e.memory_s.high));
    CHECK(std::isnan(e.memory_bytes));
    CHECK_FALSE(estimate_op_on_card(streaming_op(), Precision::kFp64Tensor, t, Scenario::kRestructured).estimated);
    // An fp64 op without FLOPs (a copy) needs no DSPs: 12e6 B streamed as any other.
    const OpCardEstimate copy = estimate_op_on_card(streaming_op(0), Precision::kFp64, t, Scenario::kAsCompiled);
    CHECK(copy.estimated);
    check_range(copy.time_s, 0.3e-3, 0.75e-3, 2.4e-3);
  }
  SECTION("unknown work (no FLOP/byte count)") {
    const OpCardEstimate e = estimate_op_on_card(CardWork{}, Precision::kFp32, t, Scenario::kAsCompiled);
    CHECK_FALSE(e.estimated);
    CHECK(e.note == "not estimated: no FLOP/byte count");
    CHECK(std::isnan(e.time_s.low));
    CHECK(std::isnan(e.time_s.nominal));
    CHECK(std::isnan(e.time_s.high));
    CHECK(std::isnan(e.memory_efficiency));
  }
  SECTION("an op that moves nothing") {
    const OpCardEstimate e = estimate_op_on_card(work(0, 0, 0, 0), Precision::kFp32, t, Scenario::kAsCompiled);
    CHECK(e.estimated);
    check_range(e.time_s, 0, 0, 0);
    CHECK(e.limit.empty());
  }
}

TEST_CASE("link_time: bytes at the link rate plus a latency per buffer", "[analysis][fpga][card]") {
  const FpgaTarget t = round_card();
  // 8e6 B in 4 buffers: 8e6 / (10e9, 8e9, 5e9) = 0.8, 1, 1.6 ms + 4 x (5, 10, 20) us.
  check_range(link_time(8e6, 4, t), 0.82e-3, 1.04e-3, 1.68e-3);
  // Capped by a 6e9 B/s GPU link: min(10e9, 6e9) and min(8e9, 6e9) = 6e9 -> 1.3333 ms;
  // min(5e9, 6e9) = 5e9 -> 1.6 ms.
  check_range(link_time(8e6, 4, t, 6e9), 8e6 / 6e9 + 20e-6, 8e6 / 6e9 + 40e-6, 1.68e-3);
  check_range(link_time(0, 0, t), 0, 0, 0);
  // Monotone: more bytes, more buffers, a slower link or more latency never shorten it.
  CHECK(link_time(9e6, 4, t).nominal > link_time(8e6, 4, t).nominal);
  CHECK(link_time(8e6, 5, t).nominal > link_time(8e6, 4, t).nominal);
  FpgaTarget slow = t;
  slow.link_efficiency.nominal = 0.5;
  CHECK(link_time(8e6, 4, slow).nominal == near(1.6e-3 + 40e-6));
  FpgaTarget late = t;
  late.transfer_latency_s.nominal = 20e-6;
  CHECK(link_time(8e6, 4, late).nominal == near(1e-3 + 80e-6));
}

TEST_CASE("dataflow_time: stages share the DSPs and the memory, io once", "[analysis][fpga][card]") {
  const FpgaTarget t = round_card();
  SECTION("a streaming stage twice and a gather whose table fits on chip") {
    // A: 0.5e9 FLOPs, 2 executions; B: a gather of 1e6 f32 from 46,080 B, 1e8 FLOPs, once.
    const CardWork a = work(0.5e9, 8e6, 4e6, 4e6);
    const CardWork b = work(1e8, 8e6, 4046080, 4e6, {random_traffic(4e6, 1e6, 4, 46080)});
    const std::vector<DataflowStage> stages = {{&a, Precision::kFp32, 2, 0}, {&b, Precision::kFp32, 1, 0}};
    // Compute (2 x 0.5e9 + 1e8 = 1.1e9) / (800e9, 200e9, 50e9) = 1.375, 5.5, 22 ms.
    // On chip (46,080 B fits): 78.125, 312.5, 1250 us (as the restructured gather above).
    // io 10e6 B / (40e9, 16e9, 5e9) = 0.25, 0.625, 2 ms; the stages' own streams are on chip.
    bool onchip = false;
    check_range(dataflow_time(stages, 10e6, t, &onchip), 1.375e-3, 5.5e-3, 22e-3);
    CHECK(onchip);
    // io 200e6 B: 5, 12.5, 40 ms > compute.
    check_range(dataflow_time(stages, 200e6, t), 5e-3, 12.5e-3, 40e-3);
  }
  SECTION("a loop body re-reads an input larger than the on-chip room on every trip") {
    // A GEMV-like body run 100 times in one design (99 repeats): its 1e8 B matrix and 4,000 B
    // vector in, 4,000 B out; the io holds the matrix once (1e8 + 8,000 B). The matrix does not
    // fit any end's room (4,608,000 / 2,304,000 / 1,152,000 B): each repeat streams it again,
    // 99 x (1.00004e8 - 4,000) = 9.9e9 B. (1.00008e8 + 9.9e9) B at 40e9 / 16e9 / 5e9 B/s =
    // 250.0002 ms, 625.0005 ms, 2.0000016 s (without the re-reading: 2.5, 6.25, 20 ms).
    const CardWork body = work(0, 1.00008e8, 1.00004e8, 4000);
    check_range(dataflow_time({{&body, Precision::kFp32, 100, 99}}, 1.00008e8, t), 250.0002e-3, 625.0005e-3, 2.0000016);
    // A body whose inputs fit on chip (8,000 B) is read once: io 12,000 B / (40e9, 16e9, 5e9).
    const CardWork small = work(0, 12000, 8000, 4000);
    check_range(dataflow_time({{&small, Precision::kFp32, 100, 99}}, 12000, t), 0.3e-6, 0.75e-6, 2.4e-6);
  }
  SECTION("a loop body that reads one row of a large input per trip reads that input once over the trips") {
    // x[i].sum() for i in range(2000) in one design (1,999 repeats): the body's input is the
    // 8e6 B matrix (and its 4 B offset), but each trip reads one 4,000 B row of it; as compiled
    // it streams 4,008 B a trip (the row, its offset, its sum written). The matrix does not fit
    // any end's room, yet the trips read no more than they stream: 2000 x 4,008 = 8,016,000 B,
    // 16,000 B beyond the io's one read of the 8e6 B (not 1,999 x 8e6 B: each trip the whole
    // matrix). (8,000,004 + 16,000) B at 40e9 / 16e9 / 5e9 B/s = 200.4001 us, 501.00025 us,
    // 1.6032008 ms, above the 2,000 cycles (5, 10, 20 us) and the 2e6 FLOPs (2.5, 10, 40 us).
    const CardWork row = work(1000, 4008, 8000004, 4);
    check_range(dataflow_time({{&row, Precision::kFp32, 2000, 1999}}, 8000004, t), 200.4001e-6, 501.00025e-6,
                1.6032008e-3);
  }
  SECTION("an argument read again after its summary is charged where the end's room cannot hold it") {
    // A small stage (12,000 B io) called twice, whose module re-reads two arguments after a
    // summary of them: 3,000,000 B (fits the fast end's 4,608,000 B room only) and 1,500,000 B
    // (fits the fast and nominal rooms, not the slow end's 1,152,000 B). Each re-read it does
    // not hold is read again each call: fast 12,000 B / 40e9 = 0.3 us; nominal 12,000 +
    // 2 x 3e6 = 6,012,000 B / 16e9 = 375.75 us; slow 12,000 + 2 x 4.5e6 = 9,012,000 B / 5e9 =
    // 1,802.4 us. (Filtered at the nominal room at every end, the fast end read 6,012,000 B,
    // 150.3 us, and the slow end 6,012,000 B.)
    const CardWork small = work(0, 12000, 8000, 4000);
    const std::vector<double> rereads = {3e6, 1.5e6};
    DataflowIo io(12000);
    io.rereads = &rereads;
    io.reread_times = 2;
    check_range(dataflow_time({{&small, Precision::kFp32, 2, 0}}, io, t), 0.3e-6, 375.75e-6, 1802.4e-6);
  }
  SECTION("a re-read kept on chip shares the room with the gathers' table and the other re-reads") {
    // A gather from a 2,000,000 B table (on chip at the fast end's 4,608,000 B room) in a design
    // whose module re-reads a 3,000,000 B argument after its summary: each fits the fast room
    // alone, not together (5e6 B), so the fast end reads the argument again, as a design of
    // the same io plus 3e6 B does. Two re-reads of 3e6 B without the gather: one stays.
    const CardWork g = element_gather(2e6);
    const std::vector<double> rereads = {3e6};
    DataflowIo io(10e6);
    io.rereads = &rereads;
    const TimeRange kept = dataflow_time({{&g, Precision::kFp32, 1, 0}}, io, t);
    const TimeRange read = dataflow_time({{&g, Precision::kFp32, 1, 0}}, 13e6, t);
    CHECK(kept.low == near(read.low));
    const CardWork small = work(0, 12000, 8000, 4000);
    const std::vector<double> two = {3e6, 3e6};
    DataflowIo both(12000);
    both.rereads = &two;
    CHECK(dataflow_time({{&small, Precision::kFp32, 1, 0}}, both, t).low ==
          near(dataflow_time({{&small, Precision::kFp32, 1, 0}}, 3012000.0, t).low));
  }
  SECTION("an array several gathers read counts once towards the on-chip room") {
    // Two gathers of 1e6 f32 each from one 2,000,000 B array: it fits the nominal room
    // (2,304,000 B) once, as one gather of 2e6 f32 from it does; from two different arrays of
    // that size (4,000,000 B together) the nominal design serves them from card memory instead.
    RandomTraffic g = random_traffic(4e6, 1e6, 4, 2e6);
    g.source_id = 7;
    const CardWork same = work(0, 8e6, 2012000, 8e6, {g, g});
    RandomTraffic both = random_traffic(8e6, 2e6, 4, 2e6);
    both.source_id = 7;
    const CardWork once = work(0, 8e6, 2012000, 8e6, {both});
    RandomTraffic h = g;
    h.source_id = 8;
    const CardWork apart = work(0, 8e6, 4012000, 8e6, {g, h});
    bool onchip_same = false, onchip_once = false, onchip_apart = true;
    const TimeRange a = dataflow_time({{&same, Precision::kFp32, 1, 0}}, 10.012e6, t, &onchip_same);
    const TimeRange b = dataflow_time({{&once, Precision::kFp32, 1, 0}}, 10.012e6, t, &onchip_once);
    dataflow_time({{&apart, Precision::kFp32, 1, 0}}, 12.012e6, t, &onchip_apart);
    CHECK(onchip_same);
    CHECK(onchip_once);
    CHECK_FALSE(onchip_apart);
    check_range(a, b.low, b.nominal, b.high);
  }
  SECTION("an array a stage both gathers from and scatters into is still the scatter's target") {
    // u.at[r].add(u[c]) as one fusion: a gather of 131,072 f32 from the 16,384 B table and a
    // scatter-add of as many into it, one source_id. Sharing the table on chip changes the on-chip
    // room (once), not the scatter: a row imbalance slows it as it does with the gather reading
    // another table of that size (both fit the room either way, so the two designs agree).
    // Skipping the scatter as a repeated array dropped y: no PE factor, delta ignored.
    RandomTraffic g = random_traffic(524288, 131072, 4, 16384);
    RandomTraffic sc = random_traffic(1048576, 262144, 4, 16384, true);
    g.source_id = sc.source_id = 7;
    const CardWork same = work(0, 1048576, 1064960, 16384, {g, sc});
    sc.source_id = 8;
    const CardWork apart = work(0, 1048576, 1064960, 16384, {g, sc});
    for (const double delta : {0.0, 20.0}) {
      const TimeRange a = dataflow_time({{&same, Precision::kFp32, 1, 0}}, 1081344.0, t, nullptr, nullptr, delta);
      const TimeRange b = dataflow_time({{&apart, Precision::kFp32, 1, 0}}, 1081344.0, t, nullptr, nullptr, delta);
      check_range(a, b.low, b.nominal, b.high);
    }
    CHECK(dataflow_time({{&same, Precision::kFp32, 1, 0}}, 1081344.0, t, nullptr, nullptr, 20.0).nominal >
          dataflow_time({{&same, Precision::kFp32, 1, 0}}, 1081344.0, t, nullptr, nullptr, 0.0).nominal);
  }
  SECTION("a given row imbalance slows the scatter's own stream, not the rest of the design") {
    // A 512e6 B streaming stage and a scatter of 65,536 updates (4-byte indices and values,
    // 524,288 B in) into a 16,384 B table, as one design: io 512e6 + 557,056 B. The stream takes
    // the design: 512.557056e6 B / (40e9, 16e9, 5e9) = 12.8139264, 32.034816, 102.5114112 ms.
    // The scatter's own stream (557,056 - 16,384 B) at delta 20: nominal x 20 / 1.22 on
    // 540,672 / 16e9 = 33.792 us = 554 us; slow x 163.9 on 108.13 us = 17.7 ms: both under the
    // stream, so delta 20 changes nothing (it multiplied the whole stream: 525 ms nominal).
    const CardWork stream = work(0, 512e6, 256e6, 256e6);
    const CardWork scatter = work(0, 524288, 540672, 16384, {random_traffic(524288, 131072, 4, 16384, true)});
    const std::vector<DataflowStage> design = {{&stream, Precision::kFp32, 1, 0}, {&scatter, Precision::kFp32, 1, 0}};
    const TimeRange balanced = dataflow_time(design, 512557056.0, t, nullptr, nullptr, 0.0);
    check_range(balanced, 12.8139264e-3, 32.034816e-3, 102.5114112e-3);
    const TimeRange skewed = dataflow_time(design, 512557056.0, t, nullptr, nullptr, 20.0);
    check_range(skewed, 12.8139264e-3, 32.034816e-3, 102.5114112e-3);
    // The scatter alone: its own stream and banks slowed (nominal 16.393 x max(33.792 us, 20.48 us
    // on chip)).
    CHECK(dataflow_time({{&scatter, Precision::kFp32, 1, 0}}, 557056, t, nullptr, nullptr, 20.0).nominal ==
          near(20.0 / 1.22 * 33.792e-6));
  }
  SECTION("a region's calls of an SpMV: the io holds each call's vectors, moved once per call") {
    // spmv_like(200000) called 10 times (no loop): io 10 x 3.4e6 B. The matrix streams 10 x 2.4e6
    // B, the vectors move 10 times: exactly 10 one-call designs (100 us, 275 us, 760 us each,
    // "as one dataflow design" above): 1 ms, 2.75 ms, 7.6 ms. (Subtracting one call's vectors
    // from the io streamed 9 x 1e6 B twice.)
    const CardWork w = spmv_like(200000);
    check_range(dataflow_time({{&w, Precision::kFp32, 10, 0}}, 34e6, t), 1e-3, 2.75e-3, 7.6e-3);
  }
  SECTION("two tables that fit on chip alone but not together") {
    const CardWork g = element_gather(1.5e6);
    bool onchip = true;
    // One gather (io 8e6 B): nominal room 2,304,000 >= 1.5e6: copies 1, blocks
    // ceil(1.5e6 / 4608) = 326, min(16, 652) = 16 per cycle: 312.5 us; io 8e6 / 16e9 = 500 us.
    // Fast: copies floor(4,608,000 / 1.5e6) = 3, blocks 978, min(32, 1956) = 32: 78.125 us;
    // io 200 us. Slow: room 1,152,000 < 1.5e6: random 20 ms + 8e6 / 5e9 = 1.6 ms.
    check_range(dataflow_time({{&g, Precision::kFp32, 1, 0}}, 8e6, t, &onchip), 200e-6, 500e-6, 21.6e-3);
    CHECK(onchip);
    // Both (io 16e6 B): 3e6 B of tables. Fast room 4,608,000: fits: 2 x 78.125 us on chip,
    // io 16e6 / 40e9 = 400 us. Nominal 2,304,000 and slow 1,152,000: no: 2 x 5 ms + 16e6 / 16e9
    // = 11 ms; 2 x 20 ms + 16e6 / 5e9 = 43.2 ms.
    const std::vector<DataflowStage> both = {{&g, Precision::kFp32, 1, 0}, {&g, Precision::kFp32, 1, 0}};
    check_range(dataflow_time(both, 16e6, t, &onchip), 400e-6, 11e-3, 43.2e-3);
    CHECK_FALSE(onchip);
  }
  SECTION("a sort that does not fit spills one extra pass of its inputs and outputs") {
    FpgaTarget fast_sort = t;
    fast_sort.sort_bytes_per_s = {10e9, 5e9, 20e9};
    CardWork s = work(0, 8e6, 4e6, 4e6);
    s.sort_length = 1e6;
    s.sort_count = 1;
    s.sort_element_bytes = 4;
    // Fast: 4e6 B fits in 4,608,000: no spill: 8e6 / 40e9 = 0.2 ms; sort 4e6 / 20e9 = 0.2 ms.
    // Nominal: spill 1 x (4e6 + 4e6): 16e6 / 16e9 = 1 ms; sort 0.4 ms.
    // Slow: 16e6 / 5e9 = 3.2 ms; sort 0.8 ms.
    check_range(dataflow_time({{&s, Precision::kFp32, 1, 0}}, 8e6, fast_sort), 0.2e-3, 1e-3, 3.2e-3);
    // 3 executions: fast max(0.2, 3 x 0.2 = 0.6 ms); nominal (8e6 + 3 x 8e6) / 16e9 = 2 ms;
    // slow 32e6 / 5e9 = 6.4 ms.
    check_range(dataflow_time({{&s, Precision::kFp32, 3, 0}}, 8e6, fast_sort), 0.6e-3, 2e-3, 6.4e-3);
    // The work of the two-pass-sort test above as one stage with its compulsory 16e6 B: spill
    // 16e6: 32e6 B / (40e9, 16e9, 5e9) = 0.8, 2, 6.4 ms (sort 0.4, 0.8, 1.6 ms).
    CardWork w = work(0, 24e6, 8e6, 8e6);
    w.sort_length = 2e6;
    w.sort_count = 1;
    w.sort_element_bytes = 4;
    check_range(dataflow_time({{&w, Precision::kFp32, 1, 0}}, 16e6, fast_sort), 0.8e-3, 2e-3, 6.4e-3);
  }
  SECTION("a repeated stage (a loop body) spills its result when it does not fit on chip") {
    // streaming_op: 1e6 FLOPs, 12e6 B as compiled, 4e6 B in, 4e6 B out; 5 executions, 4 of
    // them repeats inside one invocation. io 8e6 B. Output 4e6 B vs room 4,608,000 (fast: fits,
    // no spill), 2,304,000 and 1,152,000 (nominal, slow: out and back each repeat, 2 x 4 x 4e6
    // = 32e6 B). Memory: 8e6 / 40e9 = 0.2 ms; 40e6 / 16e9 = 2.5 ms; 40e6 / 5e9 = 8 ms.
    // Compute 5e6 / (800e9, 200e9, 50e9) = 6.25, 25, 100 us: memory-bound.
    const CardWork s = streaming_op();
    check_range(dataflow_time({{&s, Precision::kFp32, 5, 4}}, 8e6, t), 0.2e-3, 2.5e-3, 8e-3);
    // The same 5 executions as separate invocations (no repeats): io only: 0.2, 0.5, 1.6 ms.
    check_range(dataflow_time({{&s, Precision::kFp32, 5, 0}}, 8e6, t), 0.2e-3, 0.5e-3, 1.6e-3);
  }
  SECTION("nothing to run") { check_range(dataflow_time({}, 0, t), 0, 0, 0); }
}

TEST_CASE("offload_scenario: the verdict from the nominal speedups", "[analysis][fpga][card]") {
  CHECK(offload_scenario(2.0, 3.0) == "as compiled");
  CHECK(offload_scenario(1.5, 0.5) == "as compiled");
  CHECK(offload_scenario(0.5, 2.0) == "restructured only");
  CHECK(offload_scenario(0.5, 0.9) == "neither");
  CHECK(offload_scenario(1.0, 1.0) == "neither");  // a gain is > 1
  CHECK(offload_scenario(std::numeric_limits<double>::quiet_NaN(), 2.0).empty());
  CHECK(std::string(scenario_name(Scenario::kAsCompiled)) == "as compiled");
  CHECK(std::string(scenario_name(Scenario::kRestructured)) == "restructured");
}

TEST_CASE("FPGA presets: derivation of their figures", "[analysis][fpga][presets]") {
  CHECK(fpga_preset_names() ==
        "alveo-u55c, alveo-u280, alveo-u250, alveo-u200, versal-v80, intel-pac-a10, bittware-520n-s10gx, "
        "intel-pac-d5005, intel-s10mx-2100");
  CHECK_THROWS_AS(fpga_preset("stratix"), Error);
  CHECK_THROWS_WITH(fpga_preset("stratix"), Catch::Contains("alveo-u55c"));
  const FpgaTarget& u55c = fpga_preset("alveo-u55c");
  CHECK(u55c.memory_type == "hbm2");
  CHECK(u55c.memory_bytes_per_s() == near(460e9));  // 32 x 14.375e9
  // BRAM 2016 x 36 Kib + URAM 960 x 288 Kib = 357,433,344 bit = 44,679,168 B.
  CHECK(u55c.sram_bytes == near(44679168.0));
  // fp32: 9024 DSP x 0.6675 / 5 per FMA x 2 x 222e6 = 534.888576e9 FLOP/s;
  // fp64: 9024 x 0.6675 / 14 x 2 x 222e6 = 191.031634e9.
  CHECK(u55c.flops_per_s(Precision::kFp32) == near(534.888576e9));
  CHECK(u55c.flops_per_s(Precision::kFp64) == near(9024 * 0.6675 / 14.0 * 2 * 222e6));
  // A 1e9 B stream: 32 x 0.71875 x 14.375e9 x 0.91216 = 23 x 14.375e9 x 0.91216 = 301.582900e9 B/s
  // -> 3.3158379 ms.
  const OpCardEstimate s =
      estimate_op_on_card(card_work_from_totals(0, 0.5e9, 0.5e9), Precision::kFp32, u55c, Scenario::kAsCompiled);
  CHECK(s.time_s.nominal == near(1e9 / (23 * 14.375e9 * 0.91216)));
  CHECK(s.time_s.nominal == near(3.31583787e-3));
  // Fast end: 32 x 1.0 x 14.375e9 x 0.923913; slow end: 32 x 0.5 x 14.375e9 x 0.852522.
  CHECK(s.time_s.low == near(1e9 / (32 * 1.0 * 14.375e9 * 0.923913)));
  CHECK(s.time_s.high == near(1e9 / (32 * 0.5 * 14.375e9 * 0.852522)));
  // U250 (DDR4): 4 x 19.25e9 = 77e9 peak; 2688 BRAM + 1280 URAM = 59,572,224 B;
  // a 1e9 B stream at 4 x 1.0 x 19.25e9 x 0.788675 = 60.727975e9 B/s.
  const FpgaTarget& u250 = fpga_preset("alveo-u250");
  CHECK(u250.memory_type == "ddr4");
  CHECK(u250.memory_bytes_per_s() == near(77e9));
  CHECK(u250.sram_bytes == near(59572224.0));
  CHECK(u250.random_granule_bytes == 64);
  CHECK(estimate_op_on_card(card_work_from_totals(0, 0.5e9, 0.5e9), Precision::kFp32, u250, Scenario::kAsCompiled)
            .time_s.nominal == near(1e9 / 60.727975e9));
  // V80: 32 x 25.6e9 = 819.2e9; 541 Mib = 70,909,952 B; fp32 10848 x 0.6675 / 1 x 2 x 222e6.
  const FpgaTarget& v80 = fpga_preset("versal-v80");
  CHECK(v80.memory_type == "hbm2e");
  CHECK(v80.memory_bytes_per_s() == near(819.2e9));
  CHECK(v80.sram_bytes == near(70909952.0));
  CHECK(v80.flops_per_s(Precision::kFp32) == near(10848 * 0.6675 * 2 * 222e6));
  CHECK(v80.link_bytes_per_s == near(pcie_bytes_per_s(5, 8)));
  // The U200 is a smaller U250: 6840 DSPs, 2160 BRAM + 960 URAM = 45,342,720 B.
  CHECK(fpga_preset("alveo-u200").sram_bytes == near((2160 * 36864.0 + 960 * 294912.0) / 8));
  CHECK(fpga_preset("alveo-u280").memory_capacity_bytes == near(8.0 * 1024 * 1024 * 1024));
  // calibration_for: the measured tables by memory type.
  CHECK(calibration_for("hbm2e").stream_efficiency.nominal == near(0.561523));
  CHECK(calibration_for("ddr4").cross_channel_factor.low == 1.0);
  CHECK_THROWS_WITH(calibration_for("gddr6"), Catch::Contains("is not modelled"));
}

TEST_CASE("FPGA presets: the Intel cards from their data-sheet figures", "[analysis][fpga][presets]") {
  // Intel's DSP block does one IEEE fp32 multiply-add in its hard floating-point mode (fp16 runs in
  // it), and has no fp64 mode: Intel's table (683332) gives a double-precision multiply as one
  // 54 x 54 on 4 blocks with an external adder, so fp64 is charged 4 blocks per FMA.
  // On-chip RAM = M20K x 20 Kibit.
  for (const char* name : {"intel-pac-a10", "bittware-520n-s10gx", "intel-pac-d5005", "intel-s10mx-2100"}) {
    INFO(name);
    const FpgaTarget& t = fpga_preset(name);
    CHECK(t.dsps_per_fma_fp32 == 1);
    CHECK(t.dsps_per_fma_fp16 == 1);
    CHECK(t.dsps_per_fma_fp64 == 4);
    // a quarter of the fp32 rate: dsp x 0.6675 / 4 x 2 x 222e6
    CHECK(t.flops_per_s(Precision::kFp64) == near(t.dsp_count * 0.6675 / 4 * 2 * 222e6));
    CHECK(t.flops_per_s(Precision::kFp64) == near(t.flops_per_s(Precision::kFp32) / 4));
    CHECK(estimate_op_on_card(streaming_op(), Precision::kFp64, t, Scenario::kAsCompiled).estimated);
    // Borrowed from the AMD fabric calibration: the clock and the DSP share (labelled so in the
    // description).
    CHECK(t.clock_hz.nominal == near(222e6));
    CHECK(t.dsp_utilization.nominal == near(0.6675));
    CHECK(t.description.find("borrowed") != std::string::npos);
    // No published board power: unknown, never filled in.
    CHECK(t.loaded_w.nominal == 0);
    CHECK(t.loaded_w.high == 0);
  }
  // PAC with Arria 10 GX (GX 1150): 2 banks of 4 GB ("two banks of 4 GB", Intel 683633) at
  // DDR4-2666 x 8 B = 21.328e9 B/s each -> 42.656e9; 2,713 M20K x 20,480 bit / 8 = 6,945,280 B;
  // fp32 1518 x 0.6675 / 1 x 2 x 222e6 = 449.88966e9 FLOP/s, fp64 / 4 = 112.47e9; PCIe gen3 x8 = 8 x 8e9 x 128/130 / 8
  // = 7.876923e9 B/s. A 1e9 B stream: 2 x 1.0 (DDR4 channel share) x 21.328e9 x 0.791331 (Intel
  // DDR4 stream efficiency) = 33.755015e9 B/s -> 29.625227 ms.
  const FpgaTarget& pac = fpga_preset("intel-pac-a10");
  CHECK(pac.memory_type == "ddr4");
  CHECK(pac.memory_channels == 2);
  CHECK(pac.memory_bytes_per_s() == near(42.656e9));
  CHECK(pac.memory_capacity_bytes == near(8.0 * 1024 * 1024 * 1024));
  CHECK(pac.sram_bytes == near(6945280.0));
  CHECK(pac.dsp_count == 1518);
  CHECK(pac.flops_per_s(Precision::kFp32) == near(449.88966e9));
  CHECK(pac.flops_per_s(Precision::kFp64) == near(112.472415e9));  // 1518 x 0.6675 / 4 x 2 x 222e6
  CHECK(pac.link_bytes_per_s == near(7.876923077e9));
  CHECK(pac.stream_bytes_per_s() == near(33.755015136e9));
  CHECK(estimate_op_on_card(card_work_from_totals(0, 0.5e9, 0.5e9), Precision::kFp32, pac, Scenario::kAsCompiled)
            .time_s.nominal == near(29.625227420e-3));
  // BittWare 520N (Stratix 10 GX 2800): 4 banks x 21.328e9 = 85.312e9 B/s; the stream rate is
  // 85.312e9 x 1.0 x 0.791331 = 67.510030e9 B/s, the median of HPCC's eight STREAM cells on the
  // card ((67.24 + 67.78) / 2 = 67.51 GB/s) by construction. 11,721 M20K x 20,480 / 8 =
  // 30,005,760 B (= the 240,046,080 block-memory bits a Quartus fitter report gives the 2800).
  // fp32 5760 x 0.6675 x 2 x 222e6 = 1.7070912e12. Link: 15.753846e9 x 0.399902 = 6.2999946e9 B/s
  // (HPCC's PCIe read/write median (6.28 + 6.32) / 2 = 6.30 GB/s). RandomAccess's 2^31 updates on
  // 4 banks at 53.8291e6 updates/s each: 9.97 s (HPCC measured 8.77-11.57 s).
  const FpgaTarget& n520 = fpga_preset("bittware-520n-s10gx");
  CHECK(n520.memory_bytes_per_s() == near(85.312e9));
  CHECK(n520.stream_bytes_per_s() == near(67.510030272e9));
  CHECK(n520.sram_bytes == near(240046080.0 / 8));
  CHECK(n520.flops_per_s(Precision::kFp32) == near(1.7070912e12));
  CHECK(n520.link_bytes_per_s * n520.link_efficiency.nominal == Approx(6.30e9).epsilon(1e-5));
  CHECK(n520.rmw_updates_per_s.nominal == near(53.8291e6));
  CHECK(n520.rmw_updates_per_s.low == near(46.4083e6));  // 185.633e6 / 4
  CHECK(n520.rmw_updates_per_s.high == near(61.25e6));   // 245.0e6 / 4
  // The PAC takes the 520N's Intel DDR4 figures, not the AMD DDR4 ones, but its own link's
  // efficiency stays the fabric's (no Intel PAC transfer measured).
  CHECK(pac.stream_efficiency.nominal == n520.stream_efficiency.nominal);
  CHECK(pac.stream_efficiency.nominal != calibration_for("ddr4").stream_efficiency.nominal);
  CHECK(pac.link_efficiency.nominal == calibration_for("ddr4").link_efficiency.nominal);
  // Stratix 10 MX 2100 development kit: 2 HBM2 stacks x 16 pseudo-channels of 64 bit at 2 Gbps =
  // 32 x 16e9 = 512e9 B/s; 239.5 Mibit / 8 = 31,391,744 B; fp32 3960 x 0.6675 x 2 x 222e6 =
  // 1.1736252e12; a stream at the (borrowed UltraScale+) HBM2 constants: 32 x 0.71875 x 16e9 x
  // 0.91216 = 335.67488e9 B/s.
  const FpgaTarget& mx = fpga_preset("intel-s10mx-2100");
  CHECK(mx.memory_type == "hbm2");
  CHECK(mx.memory_bytes_per_s() == near(512e9));
  CHECK(mx.sram_bytes == near(31391744.0));
  CHECK(mx.flops_per_s(Precision::kFp32) == near(1.1736252e12));
  CHECK(mx.stream_bytes_per_s() == near(335.67488e9));
  CHECK(mx.link_bytes_per_s == near(15.753846154e9));
  // Intel FPGA PAC D5005 (Stratix 10 SX 2800): 4 banks of DDR4-2400 = 4 x 19.2e9 = 76.8e9 B/s, 32
  // GiB; 11,721 M20K = 30,005,760 B; 5,760 DSP blocks; gen3 x16. Its own DDR4 efficiency from
  // Intel's board test (one kernel a bank): write 16138.4, read 17341.3, read-write 16050.6 MiB/s of
  // 19.2e9 B/s = 0.881372, 0.947066, 0.876577: median 0.881372, so it streams 76.8e9 x 1.0 x
  // 0.881372 = 67.689370e9 B/s. Its link: 32,767 MB copies at 7462.91 and 6188.28 MiB/s and 8 MB
  // copies at 4412.13 and 4659.93 MiB/s: median (4659.93 + 6188.28) / 2 MiB/s = 5.6877e9 B/s of
  // 15.753846e9. Random updates are the 520N's (the Intel DDR4 group).
  const FpgaTarget& d5005 = fpga_preset("intel-pac-d5005");
  CHECK(d5005.memory_type == "ddr4");
  CHECK(d5005.memory_channels == 4);
  CHECK(d5005.memory_bytes_per_s() == near(76.8e9));
  CHECK(d5005.memory_capacity_bytes == near(32.0 * 1024 * 1024 * 1024));
  CHECK(d5005.sram_bytes == near(30005760.0));
  CHECK(d5005.dsp_count == 5760);
  CHECK(d5005.stream_bytes_per_s() == Approx(67.689370e9).epsilon(1e-5));
  CHECK(d5005.stream_efficiency.low == Approx(16050.6 * 1048576 / 19.2e9).epsilon(1e-5));
  CHECK(d5005.stream_efficiency.high == Approx(17341.3 * 1048576 / 19.2e9).epsilon(1e-5));
  CHECK(d5005.link_bytes_per_s * d5005.link_efficiency.nominal ==
        Approx((4659.93 + 6188.28) / 2 * 1048576).epsilon(1e-5));
  CHECK(d5005.rmw_updates_per_s.nominal == n520.rmw_updates_per_s.nominal);
}

namespace {

// Works that cover every part of the model (streams, random reads and updates, a large table,
// on-chip tables, sorts and FFTs with 1 or 2 passes).
std::vector<std::pair<const char*, CardWork>> property_works() {
  std::vector<std::pair<const char*, CardWork>> out = {
      {"streaming", streaming_op()},
      {"compute-bound", streaming_op(1e12)},
      {"gather, small table", element_gather(46080)},
      {"gather, 4 MB table", element_gather(4e6)},
      {"gather, 40 MB table", element_gather(40e6)},
      {"gather, 2 GB table", element_gather(2e9)},
      {"gather, long runs", work(0, 8e6, 8e6, 4.096e6, {random_traffic(4.096e6, 1000, 4096, 4e6)})},
      {"scatter-add, small table", scatter_add(46080)},
      {"scatter-add, 40 MB table", scatter_add(40e6)},
  };
  CardWork sort = work(0, 24e6, 8e6, 8e6);
  sort.sort_length = 2e6;
  sort.sort_count = 1;
  sort.sort_element_bytes = 4;
  out.push_back({"sort, 8 MB", sort});
  sort.sort_length = 1000;
  sort.sort_count = 2000;
  out.push_back({"sorts of 1000", sort});
  CardWork fft = work(104857600, 16777216, 8388608, 8388608);
  fft.fft_length = 1048576;
  fft.fft_count = 1;
  fft.fft_point_bytes = 8;
  out.push_back({"fft, 2^20 points", fft});
  fft.fft_length = 1024;
  fft.fft_count = 1024;
  out.push_back({"ffts of 1024", fft});
  return out;
}

// Every Calibrated field with its slow end: the low end when a larger value is faster, the
// high end for the latencies.
std::vector<std::pair<const char*, std::function<void(FpgaTarget&)>>> slow_moves() {
  using F = std::function<void(FpgaTarget&)>;
  const auto lower = [](Calibrated FpgaTarget::*f) { return F([f](FpgaTarget& t) { (t.*f).nominal = (t.*f).low; }); };
  const auto higher = [](Calibrated FpgaTarget::*f) { return F([f](FpgaTarget& t) { (t.*f).nominal = (t.*f).high; }); };
  return {{"clock_hz", lower(&FpgaTarget::clock_hz)},
          {"dsp_utilization", lower(&FpgaTarget::dsp_utilization)},
          {"stream_efficiency", lower(&FpgaTarget::stream_efficiency)},
          {"channel_share", lower(&FpgaTarget::channel_share)},
          {"random_reads_per_s", lower(&FpgaTarget::random_reads_per_s)},
          {"rmw_updates_per_s", lower(&FpgaTarget::rmw_updates_per_s)},
          {"cross_channel_factor", lower(&FpgaTarget::cross_channel_factor)},
          {"onchip_share", lower(&FpgaTarget::onchip_share)},
          {"onchip_lanes", lower(&FpgaTarget::onchip_lanes)},
          {"sort_bytes_per_s", lower(&FpgaTarget::sort_bytes_per_s)},
          {"link_efficiency", lower(&FpgaTarget::link_efficiency)},
          {"transfer_latency_s", higher(&FpgaTarget::transfer_latency_s)},
          {"call_latency_s", higher(&FpgaTarget::call_latency_s)}};
}

}  // namespace

TEST_CASE("FPGA presets: valid, ordered ranges, restructured never slower", "[analysis][fpga][presets]") {
  REQUIRE(fpga_presets().size() == 9);
  std::vector<FpgaTarget> cards = fpga_presets();
  cards.push_back(round_card());
  for (const FpgaTarget& t : cards) {
    INFO(t.name);
    CHECK_NOTHROW(validate_fpga_target(t));
    for (const Calibrated* c :
         {&t.clock_hz, &t.dsp_utilization, &t.stream_efficiency, &t.channel_share, &t.random_reads_per_s,
          &t.rmw_updates_per_s, &t.cross_channel_factor, &t.onchip_share, &t.onchip_lanes, &t.sort_bytes_per_s,
          &t.link_efficiency, &t.transfer_latency_s, &t.call_latency_s}) {
      CHECK(c->low <= c->nominal);
      CHECK(c->nominal <= c->high);
    }
    for (const auto& [name, w] : property_works()) {
      INFO(name);
      const OpCardEstimate a = estimate_op_on_card(w, Precision::kFp32, t, Scenario::kAsCompiled);
      const OpCardEstimate r = estimate_op_on_card(w, Precision::kFp32, t, Scenario::kRestructured);
      REQUIRE(a.estimated);
      REQUIRE(r.estimated);
      for (const OpCardEstimate* e : {&a, &r}) {
        // The fast corner never takes longer than the nominal one, the nominal than the slow.
        for (const TimeRange* x : {&e->compute_s, &e->memory_s, &e->time_s}) {
          CHECK(x->low <= x->nominal);
          CHECK(x->nominal <= x->high);
          CHECK(x->low >= 0);
        }
      }
      // A designer can keep what XLA compiled: restructured <= as compiled at every corner.
      CHECK(r.time_s.low <= a.time_s.low);
      CHECK(r.time_s.nominal <= a.time_s.nominal);
      CHECK(r.time_s.high <= a.time_s.high);
    }
    const TimeRange l = link_time(1e8, 10, t);
    CHECK(l.low <= l.nominal);
    CHECK(l.nominal <= l.high);
  }
}

TEST_CASE("FPGA presets: a constant moved towards its slow end never shortens a time", "[analysis][fpga][presets]") {
  std::vector<FpgaTarget> cards = fpga_presets();
  cards.push_back(round_card());
  const auto works = property_works();
  for (const FpgaTarget& t : cards) {
    for (const auto& [field, move] : slow_moves()) {
      FpgaTarget slow = t;
      move(slow);
      INFO(t.name << ": " << field << " at its slow end");
      REQUIRE_NOTHROW(validate_fpga_target(slow));
      for (const auto& [name, w] : works) {
        INFO(name);
        for (Scenario s : {Scenario::kAsCompiled, Scenario::kRestructured}) {
          CHECK(estimate_op_on_card(w, Precision::kFp32, slow, s).time_s.nominal >=
                estimate_op_on_card(w, Precision::kFp32, t, s).time_s.nominal);
        }
      }
      std::vector<DataflowStage> stages;
      for (const auto& entry : works) stages.push_back({&entry.second, Precision::kFp32, 1, 0});
      CHECK(dataflow_time(stages, 1e8, slow).nominal >= dataflow_time(stages, 1e8, t).nominal);
      CHECK(link_time(1e8, 10, slow).nominal >= link_time(1e8, 10, t).nominal);
    }
  }
}

TEST_CASE("validate_fpga_target: missing fields, ranges out of order, wrong units", "[analysis][fpga][presets]") {
  const auto message = [](const FpgaTarget& t) {
    try {
      validate_fpga_target(t);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kInvalidArgument);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const auto contains = [&](const FpgaTarget& t, const std::string& text) {
    const std::string m = message(t);
    INFO(m);
    CHECK(m.find(text) != std::string::npos);
  };
  FpgaTarget empty;
  contains(empty, "FPGA target without a name");
  empty.name = "user";
  // The first field a default-constructed card lacks, named missing, with the presets.
  contains(empty, "FPGA target 'user': memory_channels is missing (or 0)");
  contains(empty, "alveo-u55c");
  FpgaTarget t = round_card();
  t.memory_channel_bytes_per_s = 0;
  contains(t, "memory_channel_bytes_per_s is missing (or 0)");
  t = round_card();
  t.memory_type = "gddr6";
  contains(t, "memory_type = 'gddr6' is not modelled");
  // Ranges: low <= nominal <= high.
  t = round_card();
  t.clock_hz = {200e6, 300e6, 400e6};
  contains(t, "clock_hz: low 3e+08 <= 2e+08 <= high 4e+08 does not hold; give clock_hz_low and clock_hz_high");
  t = round_card();
  t.random_reads_per_s = {100e6, 50e6, 80e6};
  contains(t, "random_reads_per_s: low 5e+07 <= 1e+08 <= high 8e+07 does not hold");
  t = round_card();
  t.stream_efficiency.high = 1.5;
  contains(t, "stream_efficiency_high = 1.5 must be a share in (0, 1]");
  t = round_card();
  t.channel_share.low = 0;
  contains(t, "channel_share_low = 0 must be a share in (0, 1]");
  t = round_card();
  t.onchip_lanes.nominal = std::numeric_limits<double>::quiet_NaN();
  contains(t, "onchip_lanes = nan must be a finite number");
  t = round_card();
  t.call_latency_s.low = -1e-6;
  contains(t, "call_latency_s_low = -1e-06 must be >= 0");
  // A factor may exceed 1 (RAMA makes cross-channel reads faster than one channel's).
  t = round_card();
  t.cross_channel_factor.high = 1.35;
  CHECK(message(t) == "accepted");
  // Wrong units.
  t = round_card();
  t.clock_hz = {250, 250, 250};
  contains(t, "clock_hz = 250 is below 1 MHz: give hertz");
  t = round_card();
  t.memory_channel_bytes_per_s = 14.375;
  contains(t, "not GB/s");
  t = round_card();
  t.link_bytes_per_s = 15.75;
  contains(t, "link_bytes_per_s = 15.75 is outside 10 MB/s to 1 TB/s");
  // Absurdly large figures too (bits for bytes, a typo of the exponent): refused, not a link
  // that takes no time.
  t = round_card();
  t.link_bytes_per_s = 1e300;
  contains(t, "link_bytes_per_s = 1e+300 is outside 10 MB/s to 1 TB/s");
  t = round_card();
  t.memory_channel_bytes_per_s = 1e18;
  contains(t, "memory_channel_bytes_per_s = 1e+18 is outside 100 MB/s to 10 TB/s");
  t = round_card();
  t.sram_bytes = 44.7;
  contains(t, "not MB");
  t = round_card();
  t.memory_capacity_bytes = 16;
  contains(t, "not GB");
  t = round_card();
  t.call_latency_s = {10, 10, 10};
  contains(t, "not microseconds");
  t = round_card();
  t.transfer_latency_s.high = 5;
  contains(t, "transfer_latency_s = 5 is over 1 s");
  t = round_card();
  t.random_reads_per_s = {92.6, 92.6, 92.6};
  contains(t, "random_reads_per_s = 92.6 is below 1000 accesses/s");
  t = round_card();
  t.fp32_flops_per_s = 1.2;
  contains(t, "not TFLOP/s");
  // Precisions: none at all is refused; DSP fields only where some precision uses them.
  t = round_card();
  t.dsps_per_fma_fp32 = t.dsps_per_fma_fp16 = 0;
  contains(t, "no precision has a rate");
  FpgaTarget rates = round_card();
  rates.dsp_count = 0;
  rates.dsps_per_fma_fp32 = rates.dsps_per_fma_fp16 = 0;
  rates.fp32_flops_per_s = 1e12;
  CHECK_FALSE(rates.uses_dsp_model());
  CHECK(message(rates) == "accepted");
  CHECK(rates.flops_per_s(Precision::kFp32) == 1e12);  // exact: no clock or utilization range
  rates.dsps_per_fma_fp64 = 14;
  contains(rates, "dsp_count is missing (or 0)");
  // The ranking refuses a bad card too.
  CHECK_THROWS_AS(rank_fpga_candidates({}, RooflineReport{}, empty, FpgaOptions{}), Error);
}

// Collective kernels (NCCL's by name, XLA's by the HLO op they are attributed to) and their
// overlap with compute. Expected numbers worked out by hand in the comments.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "analysis_fixture.hpp"
#include "fpgaprof/analysis/collectives.hpp"
#include "fpgaprof/analysis/trace_analysis.hpp"

using namespace fpgaprof;
using namespace fpgaprof::analysis;

TEST_CASE("collective_kind: NCCL kernel names and XLA collective ops", "[analysis][collectives]") {
  CHECK(collective_kind("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "") == "all-reduce");
  CHECK(collective_kind("ncclKernel_AllGather_RING_LL_Sum_int8_t", "") == "all-gather");
  CHECK(collective_kind("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", "fusion.3") == "reduce-scatter");
  CHECK(collective_kind("ncclDevKernel_SendRecv", "") == "send-recv");
  CHECK(collective_kind("ncclDevKernel_Generic_1", "") == "nccl");
  CHECK(collective_kind("loop_fusion", "all-reduce.3") == "all-reduce");
  CHECK(collective_kind("x", "all-gather-start.1") == "all-gather");
  CHECK(collective_kind("x", "collective-permute-done") == "collective-permute");
  CHECK(collective_kind("x", "all-to-all") == "all-to-all");
  CHECK(collective_kind("x", "reduce-scatter.12") == "reduce-scatter");
  // Not collectives: other ops, names that only begin like one, kernels without an op.
  CHECK(collective_kind("x", "fusion.1").empty());
  CHECK(collective_kind("x", "all-reduce-fusion.2").empty());
  CHECK(collective_kind("x", "all-reducer").empty());
  CHECK(collective_kind("nccl_helper", "").empty());
  CHECK(collective_kind("", "").empty());
}

TEST_CASE("analyze_collectives: time, union and overlap with compute", "[analysis][collectives]") {
  TraceStore s;
  const StringId ar = s.strings.intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  const StringId ag = s.strings.intern("ncclDevKernel_AllGather_RING_LL");
  const StringId fu = s.strings.intern("loop_fusion");
  const StringId cp = s.strings.intern("xla_copy_kernel");
  // compute: [0, 100) fusion, [150, 300) fusion          -> union 250
  // all-reduce (NCCL): [50, 200), [400, 450)              -> 150 + 50 = 200
  // all-gather (NCCL): [180, 220)                          -> 40
  // collective-permute (by op, kernel 5): [500, 530)       -> 30
  // collectives: 4 kernels, 270 ns summed; union [50, 220) + [400, 450) + [500, 530) = 250;
  // overlap with compute: [50, 100) + [150, 220) = 50 + 70 = 120.
  s.kernels = {
      testing::kernel(s, 0, 100, kNone32, kNone32, 1, fu),   testing::kernel(s, 50, 150, kNone32, kNone32, 1, ar),
      testing::kernel(s, 150, 150, kNone32, kNone32, 1, fu), testing::kernel(s, 180, 40, kNone32, kNone32, 1, ag),
      testing::kernel(s, 400, 50, kNone32, kNone32, 1, ar),  testing::kernel(s, 500, 30, kNone32, kNone32, 1, cp)};
  const std::vector<uint32_t> op_of_kernel = {0, kNone32, 0, kNone32, kNone32, 1};
  const std::vector<std::string_view> op_names = {"fusion.1", "collective-permute-start.4"};
  const CollectiveReport r = analyze_collectives(s, op_of_kernel, op_names, 3);
  CHECK(r.kernel_count == 4);
  CHECK(r.kernel_ns == 270);
  CHECK(r.busy_ns == 250);
  CHECK(r.compute_busy_ns == 250);
  CHECK(r.overlap_ns == 120);
  REQUIRE(r.by_kind.size() == 3);
  CHECK(r.by_kind[0].kind == "all-reduce");
  CHECK(r.by_kind[0].count == 2);
  CHECK(r.by_kind[0].total_ns == 200);
  CHECK(r.by_kind[1].kind == "all-gather");
  CHECK(r.by_kind[1].total_ns == 40);
  CHECK(r.by_kind[2].kind == "collective-permute");
  CHECK(r.by_kind[2].total_ns == 30);
  // The first three collectives by start: [50, 200), [180, 220), [400, 450).
  CHECK(r.first_end_ns == std::vector<uint64_t>{200, 220, 450});

  // Without attribution the permute kernel counts as compute: compute [0,100) [150,300)
  // [500,530) = 280; collectives 3 kernels, 240 ns, union 220, overlap still 120.
  const CollectiveReport n = analyze_collectives(s, {}, {});
  CHECK(n.kernel_count == 3);
  CHECK(n.kernel_ns == 240);
  CHECK(n.busy_ns == 220);
  CHECK(n.compute_busy_ns == 280);
  CHECK(n.overlap_ns == 120);
}

TEST_CASE("analyze_trace reports the collectives of the trace", "[analysis][collectives][trace_analysis]") {
  TraceStore s;
  s.kernels = {testing::kernel(s, 10, 90, kNone32, kNone32, 1, s.strings.intern("ncclKernel_AllReduce_RING_LL")),
               testing::kernel(s, 0, 40, kNone32, kNone32, 1, s.strings.intern("gemm"))};
  s.meta.end_ns = 1000;
  const TraceAnalysis a = analyze_trace(s, {});
  CHECK(a.collectives.kernel_count == 1);
  CHECK(a.collectives.kernel_ns == 90);
  CHECK(a.collectives.overlap_ns == 30);  // [10, 40)
  CHECK(a.collectives.first_end_ns == std::vector<uint64_t>{100});
}

TEST_CASE(
    "analyze_collectives: unions and overlap equal a nanosecond-by-nanosecond count, kernels in start order or not",
    "[analysis][collectives]") {
  // Kernels in start order take the merge-while-reading path, shuffled ones the sorted copy:
  // both must give what marking every covered nanosecond gives.
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    TraceStore s;
    const StringId ar = s.strings.intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    const StringId fu = s.strings.intern("loop_fusion");
    constexpr std::size_t kSpan = 60 * 80 + 120;  // the last kernel ends before this
    std::vector<bool> coll_ns(kSpan, false), compute_ns(kSpan, false);
    uint64_t start = 0;
    const int n = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      start += rng() % 80;               // overlapping, touching and gapped kernels
      const uint64_t dur = rng() % 120;  // some of no duration
      const bool is_coll = rng() % 4 == 0;
      s.kernels.push_back(testing::kernel(s, start, dur, kNone32, kNone32, 1, is_coll ? ar : fu));
      for (uint64_t t = start; t < start + dur; ++t) (is_coll ? coll_ns : compute_ns)[t] = true;
    }
    uint64_t coll_busy = 0, compute_busy = 0, overlap = 0;
    for (std::size_t t = 0; t < coll_ns.size(); ++t) {
      coll_busy += coll_ns[t];
      compute_busy += compute_ns[t];
      overlap += coll_ns[t] && compute_ns[t];
    }
    for (const bool shuffled : {false, true}) {
      if (shuffled) std::shuffle(s.kernels.begin(), s.kernels.end(), rng);
      const CollectiveReport r = analyze_collectives(s, {}, {}, 64);
      INFO("round " << round << (shuffled ? ", shuffled" : ", in start order"));
      CHECK(r.busy_ns == coll_busy);
      CHECK(r.compute_busy_ns == compute_busy);
      CHECK(r.overlap_ns == overlap);
    }
  }
}

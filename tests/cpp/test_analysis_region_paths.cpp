// Region results per path (RegionPaths): transfers, device memory and roofline with the
// instances of a path summed, on one constructed trace. Every expected number is worked out by
// hand in the comments.
#include <catch2/catch.hpp>

#include "transfer_fixture.hpp"

#include "analysis_fixture.hpp"
#include "fpgaprof/analysis/fpga_model.hpp"
#include "fpgaprof/analysis/memory_analysis.hpp"
#include "fpgaprof/analysis/region_paths.hpp"
#include "fpgaprof/analysis/roofline.hpp"
#include "fpgaprof/analysis/transfer_analysis.hpp"
#include "fpgaprof/error.hpp"

using namespace fpgaprof;
using namespace fpgaprof::analysis;
using fpgaprof::testing::dir;
using fpgaprof::testing::group;

namespace {

// Regions (records in this order):
//   R0 "step" [0, 1000]     thread 1
//   R1 "step" [2000, 3000]  thread 1
//   R2 "step" [2500, 3500]  thread 2 (overlaps R1 in time)
//   R3 "proj" [2100, 2600]  thread 1, inside R1
//   R4 "proj" [6000, 6500]  thread 1, at the top
// Paths in order of first appearance: 0 "step" (R0 R1 R2), 1 "step > proj" (R3), 2 "proj" (R4).
// Kernels: K0 [100,150) R0 op0; K1 [2250,2350) R3 op0; K2 [2850,2950) R2 op1; K3 [6100,6300) R4 op1.
// Copies:  C0 HtoD 1000 B [100,200) R0; C1 HtoD 2000 B [2200,2400) R3; C2 DtoH 500 B [2700,2900) R1;
//          C3 DtoH 500 B [2800,3000) R2; C4 HtoD 100 B [6100,6200) R4.
// Waits:   W0 thread 1 [2300,2500) (in R3); W1 thread 2 [2600,2800) (R2); W2 thread 1 [2650,2750)
//          (R1: R3 closed at 2600).
// Allocations: +1000 @50 R0, -1000 @900 R0, +3000 @2150 R3, +500 @2600 R2, -3000 @2700 R1,
//          -500 @3400 R2, +200 @6100 R4.
TraceStore paths_trace() {
  TraceStore s;
  const auto region = [&](const char* name, uint64_t b, uint64_t e, uint32_t thread, uint32_t parent, uint32_t depth) {
    RegionRecord r;
    r.name = s.strings.intern(name);
    r.start_ns = b;
    r.end_ns = e;
    r.thread_id = thread;
    r.parent = parent;
    r.depth = depth;
    s.regions.push_back(r);
  };
  region("step", 0, 1000, 1, kNone32, 0);
  region("step", 2000, 3000, 1, kNone32, 0);
  region("step", 2500, 3500, 2, kNone32, 0);
  region("proj", 2100, 2600, 1, 1, 1);
  region("proj", 6000, 6500, 1, kNone32, 0);
  const StringId kname = s.strings.intern("k");
  s.kernels = {
      testing::kernel(s, 100, 50, kNone32, 0, 1000, kname), testing::kernel(s, 2250, 100, kNone32, 3, 1000, kname),
      testing::kernel(s, 2850, 100, kNone32, 2, 1000, kname), testing::kernel(s, 6100, 200, kNone32, 4, 1000, kname)};
  const auto copy = [&](CopyKind kind, uint64_t bytes, uint64_t b, uint64_t e, uint32_t r) {
    MemcpyRecord c;
    c.copy_kind = kind;
    c.bytes = bytes;
    c.start_ns = b;
    c.end_ns = e;
    c.region_index = r;
    c.src_kind = kind == CopyKind::kHtoD ? MemoryKind::kPinned : MemoryKind::kDevice;
    c.dst_kind = kind == CopyKind::kHtoD ? MemoryKind::kDevice : MemoryKind::kPinned;
    c.is_async = true;
    s.memcpys.push_back(c);
  };
  copy(CopyKind::kHtoD, 1000, 100, 200, 0);
  copy(CopyKind::kHtoD, 2000, 2200, 2400, 3);
  copy(CopyKind::kDtoH, 500, 2700, 2900, 1);
  copy(CopyKind::kDtoH, 500, 2800, 3000, 2);
  copy(CopyKind::kHtoD, 100, 6100, 6200, 4);
  const auto wait = [&](uint64_t b, uint64_t e, uint32_t thread) {
    SyncRecord w;
    w.start_ns = b;
    w.end_ns = e;
    w.thread_id = thread;
    s.syncs.push_back(w);
  };
  wait(2300, 2500, 1);
  wait(2600, 2800, 2);
  wait(2650, 2750, 1);
  const auto alloc = [&](uint64_t t, uint64_t address, uint64_t bytes, bool is_alloc, uint32_t r) {
    AllocationRecord a;
    a.timestamp_ns = t;
    a.address = address;
    a.bytes = bytes;
    a.is_alloc = is_alloc;
    a.region_index = r;
    s.allocations.push_back(a);
  };
  alloc(50, 0x1000, 1000, true, 0);
  alloc(900, 0x1000, 1000, false, 0);
  alloc(2150, 0x2000, 3000, true, 3);
  alloc(2600, 0x3000, 500, true, 2);
  alloc(2700, 0x2000, 3000, false, 1);
  alloc(3400, 0x3000, 500, false, 2);
  alloc(6100, 0x4000, 200, true, 4);
  return s;
}

}  // namespace

TEST_CASE("Region paths: ids, names, nesting and instance counts", "[analysis][region_paths]") {
  const TraceStore s = paths_trace();
  const RegionPaths p(s);
  REQUIRE(p.size() == 3);
  CHECK(p.region_count() == 5);
  CHECK(p.path(0) == "step");
  CHECK(p.path(1) == "step > proj");
  CHECK(p.path(2) == "proj");  // same name as path 1, another enclosing path: its own path
  CHECK(p.name(1) == "proj");
  CHECK(p.parent(1) == 0);
  CHECK(p.parent(2) == kNone32);
  CHECK(p.depth(1) == 1);
  CHECK(p.instances(0) == 3);
  CHECK(p.instances(1) == 1);
  CHECK(p.path_of(0) == 0);
  CHECK(p.path_of(2) == 0);
  CHECK(p.path_of(3) == 1);
  CHECK(p.path_of(4) == 2);
  CHECK(p.path_of(5) == kNone32);
  CHECK(p.path_of(kNone32) == kNone32);
  std::vector<uint32_t> up;
  p.for_self_and_ancestors(1, [&](uint32_t q) { up.push_back(q); });
  CHECK(up == std::vector<uint32_t>{1, 0});
}

TEST_CASE("Region paths: a nested record stored before its parent", "[analysis][region_paths]") {
  // Regions are stored as they close, inner first: record 0 "inner" (parent 1), record 1 "outer".
  TraceStore s;
  RegionRecord inner;
  inner.name = s.strings.intern("inner");
  inner.start_ns = 10;
  inner.end_ns = 20;
  inner.thread_id = 1;
  inner.parent = 1;
  inner.depth = 1;
  RegionRecord outer = inner;
  outer.name = s.strings.intern("outer");
  outer.start_ns = 0;
  outer.end_ns = 30;
  outer.parent = kNone32;
  outer.depth = 0;
  s.regions = {inner, outer};
  const StringId k = s.strings.intern("k");
  s.kernels = {testing::kernel(s, 12, 5, kNone32, 0, 1, k), testing::kernel(s, 25, 3, kNone32, 1, 1, k)};
  const RegionPaths p(s);
  REQUIRE(p.size() == 2);
  CHECK(p.path(0) == "outer");  // numbered before the path inside it
  CHECK(p.path(1) == "outer > inner");
  CHECK(p.path_of(0) == 1);
  CHECK(p.path_of(1) == 0);
  // Inclusive roll-up: "outer" = 5 ns (inner's kernel) + 3 ns (its own).
  const RooflineReport r = analyze_roofline(s, Ceilings{}, {}, {});
  REQUIRE(r.region_paths.size() == 2);
  CHECK(r.region_paths[0].time_ns == 8);
  CHECK(r.region_paths[0].kernel_count == 2);
  CHECK(r.region_paths[1].time_ns == 5);
}

TEST_CASE("Region paths: nesting kept to 64 levels, deeper regions count in the deepest path",
          "[analysis][region_paths]") {
  // 100 regions each inside the last, stored inner first (as they close): record i is level
  // 100 - i (record 99 the outermost, "r0"; record 0 the innermost, "r99"), [i, 1000 - i]. One
  // kernel of 10 ns and one allocation of 100 B in the innermost. Levels 1-64 are paths 0-63
  // ("r0" ... "r63"); the 36 records of levels 65-100 (records 0-35) count in path 63.
  TraceStore s;
  for (uint32_t i = 0; i < 100; ++i) {
    RegionRecord r;
    r.name = s.strings.intern("r" + std::to_string(99 - i));
    r.start_ns = i;
    r.end_ns = 1000 - i;
    r.thread_id = 1;
    r.parent = i == 99 ? kNone32 : i + 1;
    r.depth = 99 - i;
    s.regions.push_back(r);
  }
  const StringId k = s.strings.intern("k");
  s.kernels = {testing::kernel(s, 200, 10, kNone32, 0, 1, k)};
  AllocationRecord a;
  a.timestamp_ns = 300;
  a.address = 0x1000;
  a.bytes = 100;
  a.is_alloc = true;
  a.region_index = 0;
  s.allocations = {a};
  const RegionPaths p(s);
  REQUIRE(p.size() == kRegionMaxDepth);
  CHECK(p.folded_count() == 36);
  CHECK(p.depth(63) == 63);
  CHECK(p.name(63) == "r63");
  CHECK(p.path(63).rfind("r0 > r1 > r2 > ", 0) == 0);
  CHECK(p.path_of(0) == 63);  // the innermost record: in the deepest kept path
  CHECK(p.path_of(35) == 63);
  CHECK(p.path_of(36) == 63);  // level 64 itself: the path's instance
  CHECK_FALSE(p.is_instance(0));
  CHECK_FALSE(p.is_instance(35));
  CHECK(p.is_instance(36));
  CHECK(p.instances(63) == 1);
  // The kernel counts in every kept level once: 10 ns in path 0 and in path 63.
  const RooflineReport r = analyze_roofline(s, Ceilings{}, {}, {});
  REQUIRE(r.region_paths.size() == 64);
  CHECK(r.region_paths[0].time_ns == 10);
  CHECK(r.region_paths[63].time_ns == 10);
  // The allocation once per path, not once per folded record (36 + 1 times in path 63).
  const MemoryReport m = analyze_memory(s);
  REQUIRE(m.region_paths.size() == 64);
  CHECK(m.region_paths[63].allocated_bytes == 100);
  CHECK(m.region_paths[63].allocations == 1);
  CHECK(m.region_paths[0].allocated_bytes == 100);
}

TEST_CASE("Region paths: a long name is shown cut at a character boundary", "[analysis][region_paths]") {
  // 255 ASCII bytes then a 2-byte character (bytes 255 and 256): the cut at 256 would split
  // it, so the name is cut after 255 bytes.
  const std::string name = std::string(255, 'a') + "\xc3\xa9" + std::string(1000, 'b');
  CHECK(shown_region_name(name) == std::string(255, 'a') + "... (1257 bytes)");
  CHECK(shown_region_name(std::string(256, 'x')) == std::string(256, 'x'));
  CHECK(shown_region_name(std::string(257, 'x')) == std::string(256, 'x') + "... (257 bytes)");
  TraceStore s;
  RegionRecord outer;
  outer.name = s.strings.intern(name + " > x");
  outer.end_ns = 10;
  outer.thread_id = 1;
  RegionRecord inner = outer;
  inner.name = s.strings.intern("in");
  inner.start_ns = 1;
  inner.end_ns = 9;
  inner.parent = 0;
  s.regions = {outer, inner};
  const RegionPaths p(s);
  REQUIRE(p.size() == 2);
  CHECK(p.name(0) == std::string(255, 'a') + "... (1261 bytes)");
  CHECK(p.path(1) == "\"" + std::string(255, 'a') + "... (1261 bytes)\" > in");  // " > " in the name: quoted
}

TEST_CASE("Transfers per region path: sums and unions over instances", "[analysis][region_paths]") {
  const TraceStore s = paths_trace();
  const TransferReport r = analyze_transfers(s);
  // trace, then paths in order of their first copy: C0 -> "step", C1 -> "step > proj", C4 -> "proj".
  REQUIRE(r.groups.size() == 4);
  CHECK(r.groups[1].kind == GroupKind::kRegionPath);
  CHECK(r.groups[1].index == 0);
  CHECK(r.groups[2].index == 1);
  CHECK(r.groups[3].index == 2);

  const TransferGroup& step = group(r, GroupKind::kRegionPath, 0);
  // "step" holds C0..C3 (C1 through its nested path): 4 copies, 1000+2000+500+500 = 4000 B.
  CHECK(step.all.count == 4);
  CHECK(step.all.bytes == 4000);
  // Busy = union [100,200) + [2200,2400) + [2700,3000) = 100 + 200 + 300 = 600 ns. The
  // instances' own unions would add up to 100 (R0) + 400 (R1: C1, C2) + 200 (R2: C3) = 700:
  // R1's C2 and R2's C3 overlap in [2800,2900) and that time counts once.
  CHECK(step.all.busy_ns == 600);
  CHECK(step.all.duration_sum_ns == 700);  // 100 + 200 + 200 + 200
  // Kernel overlap: [100,200)&K0 = 50, [2200,2400)&K1 = 100, [2700,3000)&K2 = 100.
  CHECK(step.all.kernel_overlap_ns == 250);
  // HtoD: C0 + C1 = 3000 B over [100,200) + [2200,2400) = 300 ns -> 10 GB/s.
  CHECK(dir(step, Direction::kHtoD).count == 2);
  CHECK(dir(step, Direction::kHtoD).bytes == 3000);
  CHECK(dir(step, Direction::kHtoD).busy_ns == 300);
  CHECK(dir(step, Direction::kHtoD).achieved_bytes_per_s() == Approx(10e9));
  // DtoH: C2 + C3 = 1000 B over [2700,3000) = 300 ns.
  CHECK(dir(step, Direction::kDtoH).bytes == 1000);
  CHECK(dir(step, Direction::kDtoH).busy_ns == 300);
  // Waits W0 (via "step > proj"), W1 (R2), W2 (R1): 3 calls; union [2300,2500) + [2600,2800) = 400 ns.
  CHECK(step.sync_calls == 3);
  CHECK(step.host_wait_ns == 400);

  const TransferGroup& nested = group(r, GroupKind::kRegionPath, 1);
  CHECK(nested.all.count == 1);  // C1
  CHECK(nested.all.bytes == 2000);
  CHECK(nested.all.busy_ns == 200);
  CHECK(nested.all.kernel_overlap_ns == 100);  // K1 [2250,2350)
  CHECK(nested.sync_calls == 1);               // W0
  CHECK(nested.host_wait_ns == 200);

  const TransferGroup& top_proj = group(r, GroupKind::kRegionPath, 2);
  CHECK(top_proj.all.bytes == 100);              // C4 only: not mixed with "step > proj"
  CHECK(top_proj.all.kernel_overlap_ns == 100);  // K3 [6100,6300) covers C4
  CHECK(top_proj.sync_calls == 0);

  // Trace: 4100 B, busy 600 + 100 = 700 ns (the paths' unions are the same kind of number).
  CHECK(r.groups[0].all.bytes == 4100);
  CHECK(r.groups[0].all.busy_ns == 700);

  // Per instance on request: R1 alone has C1 + C2 (busy 400), R2 has C3 (200).
  TransferOptions o;
  o.region_rows = RegionRows::kInstances;
  const TransferReport inst = analyze_transfers(s, o);
  CHECK(inst.groups.size() == 6);  // trace + R0..R4
  CHECK(group(inst, GroupKind::kRegion, 1).all.busy_ns == 400);
  CHECK(group(inst, GroupKind::kRegion, 2).all.busy_ns == 200);

  // A caller's RegionPaths gives the same groups; one of another store is refused.
  const RegionPaths p(s);
  TransferOptions given;
  given.region_paths = &p;
  CHECK(group(analyze_transfers(s, given), GroupKind::kRegionPath, 0).all.busy_ns == 600);
  TraceStore other = paths_trace();
  other.regions.pop_back();
  CHECK_THROWS_AS(analyze_transfers(other, given), Error);
}

TEST_CASE("Transfer flags name the region path and its instance count", "[analysis][region_paths]") {
  const TraceStore s = paths_trace();
  TransferOptions o;
  o.tiny_flood_count = 4;  // every copy is < 64 KiB: the trace (5) and "step" (4) are floods
  const TransferReport r = analyze_transfers(s, o);
  int step_flags = 0;
  for (const TransferFlag& f : r.flags) {
    if (f.group_kind != GroupKind::kRegionPath) continue;
    CHECK(f.index == 0);
    CHECK(f.message.find("region 'step' (3 instances)") != std::string::npos);
    step_flags += 1;
  }
  CHECK(step_flags == 1);
}

TEST_CASE("A path whose flagged copies all come from one nested path is not flagged again",
          "[analysis][region_paths]") {
  // "loop" [0,1000] holds "loop > body" [100,900]; both copies (1 kB, pageable) are in the body.
  TraceStore s;
  RegionRecord outer;
  outer.name = s.strings.intern("loop");
  outer.start_ns = 0;
  outer.end_ns = 1000;
  outer.thread_id = 1;
  RegionRecord inner = outer;
  inner.name = s.strings.intern("body");
  inner.start_ns = 100;
  inner.end_ns = 900;
  inner.parent = 0;
  inner.depth = 1;
  s.regions = {outer, inner};
  for (uint64_t t : {200u, 400u}) {
    MemcpyRecord c;
    c.copy_kind = CopyKind::kHtoD;
    c.bytes = 1000;
    c.start_ns = t;
    c.end_ns = t + 50;
    c.region_index = 1;
    c.src_kind = MemoryKind::kPageable;
    c.dst_kind = MemoryKind::kDevice;
    s.memcpys.push_back(c);
  }
  TransferOptions o;
  o.tiny_flood_count = 2;
  const TransferReport r = analyze_transfers(s, o);
  std::vector<std::string> where;
  for (const TransferFlag& f : r.flags)
    if (f.group_kind == GroupKind::kRegionPath) where.push_back(f.kind + " " + std::to_string(f.index));
  // Path 0 "loop" has the same 2 copies as path 1 "loop > body": only the body is named.
  CHECK(where == std::vector<std::string>{"pageable 1", "tiny_transfers 1"});
  CHECK(r.flags_left_out == 0);
  // A third copy in "loop" itself: the paths differ (3 vs 2 copies), both are flagged.
  MemcpyRecord own = s.memcpys.front();
  own.start_ns = 950;
  own.end_ns = 990;
  own.region_index = 0;
  s.memcpys.push_back(own);
  int pageable = 0;
  for (const TransferFlag& f : analyze_transfers(s, o).flags)
    pageable += f.group_kind == GroupKind::kRegionPath && f.kind == "pageable";
  CHECK(pageable == 2);
}

TEST_CASE("Device memory per region path: highest peak, summed allocations", "[analysis][region_paths]") {
  const TraceStore s = paths_trace();
  // Levels after each event: @50 1000, @900 0, @2150 3000, @2600 3500, @2700 500, @3400 0, @6100 200.
  // R0 [0,1000]: start 0, peak 1000; R1 [2000,3000]: start 0, peak 3500; R2 [2500,3500]: start
  // 3000 (after @2150), peak 3500; R3 [2100,2600]: start 0, peak 3500 (@2600 is inside); R4: 0, 200.
  const MemoryReport m = analyze_memory(s);
  CHECK(m.regions.empty());
  REQUIRE(m.region_paths.size() == 3);
  const RegionPathMemory& step = m.region_paths[0];
  CHECK(step.path == 0);
  CHECK(step.instances == 3);
  CHECK(step.peak_in_use_bytes == 3500);
  CHECK(step.peak_region_index == 1);      // R1 and R2 both reach 3500; R1 starts first
  CHECK(step.in_use_at_start_bytes == 0);  // R1's level at its start
  CHECK(step.allocated_bytes == 4500);     // 1000 (R0) + 3000 (R3 inside R1) + 500 (R2)
  CHECK(step.allocations == 3);
  CHECK(step.freed_bytes == 4500);  // 1000 (R0) + 3000 (R1) + 500 (R2)
  CHECK(step.frees == 3);
  const RegionPathMemory& nested = m.region_paths[1];
  CHECK(nested.peak_in_use_bytes == 3500);
  CHECK(nested.peak_region_index == 3);
  CHECK(nested.allocated_bytes == 3000);
  CHECK(nested.frees == 0);  // the 3000 B are freed in R1 after R3 closed
  CHECK(m.region_paths[2].peak_in_use_bytes == 200);
  CHECK(m.region_paths[2].allocated_bytes == 200);

  const MemoryReport inst = analyze_memory(s, 20, {}, RegionRows::kInstances);
  CHECK(inst.region_paths.empty());
  REQUIRE(inst.regions.size() == 5);
  CHECK(inst.regions[2].in_use_at_start_bytes == 3000);
  CHECK(inst.regions[2].peak_in_use_bytes == 3500);
}

TEST_CASE("Roofline per region path: sums, intensity and bound recomputed", "[analysis][region_paths]") {
  const TraceStore s = paths_trace();
  // A made-up roof: 1e11 FLOP/s FP32 and 1e11 B/s DRAM -> ridge 1 FLOP/B.
  Ceilings c;
  c.peak_flops_per_s[static_cast<std::size_t>(Precision::kFp32)] = 1e11;
  c.dram_bytes_per_s = 1e11;
  OpCost op0;  // 2000 FLOP, 1000 B per execution: intensity 2 (compute-bound alone)
  op0.name = "dot";
  op0.flops = 2000;
  op0.bytes_read = 1000;
  OpCost op1;  // 0 FLOP, 4000 B: memory-bound
  op1.name = "copy";
  op1.flops = 0;
  op1.bytes_read = 4000;
  RooflineOptions o;
  o.latency_kernel_ns = 10;  // every kernel (50-200 ns) counts as long enough to classify
  const std::vector<uint32_t> op_of_kernel = {0, 0, 1, 1};
  const RooflineReport r = analyze_roofline(s, c, {op0, op1}, op_of_kernel, o);
  CHECK(r.regions.empty());
  REQUIRE(r.region_paths.size() == 3);
  // "step": K0 (R0), K1 (R3, nested), K2 (R2): 3 kernels, 50 + 100 + 100 = 250 ns,
  // 2000 + 2000 + 0 = 4000 FLOP, 1000 + 1000 + 4000 = 6000 B -> intensity 0.667 < ridge 1:
  // memory-bound, although two of its three instances (R0, R1) alone are compute-bound.
  const RooflinePoint& step = r.region_paths[0];
  CHECK(step.kernel_count == 3);
  CHECK(step.time_ns == 250);
  CHECK(step.flops == Approx(4000));
  CHECK(step.bytes == Approx(6000));
  CHECK(step.intensity == Approx(4000.0 / 6000.0));
  CHECK(step.bound == Bound::kMemory);
  // achieved 4000 FLOP / 250 ns = 1.6e10 FLOP/s; roof min(1e11, 0.667 x 1e11) = 6.667e10 -> 24 %.
  CHECK(step.achieved_flops_per_s == Approx(1.6e10));
  CHECK(step.roof_flops_per_s == Approx(1e11 * 4000.0 / 6000.0));
  CHECK(step.percent_of_roof == Approx(24.0));
  CHECK(classify(step, c, 0, o) == Bound::kMemory);
  // "step > proj": K1 alone: 2000 FLOP / 1000 B = 2 -> compute; 2000 / 100 ns = 2e10 = 20 % of 1e11.
  const RooflinePoint& nested = r.region_paths[1];
  CHECK(nested.kernel_count == 1);
  CHECK(nested.intensity == Approx(2.0));
  CHECK(nested.bound == Bound::kCompute);
  CHECK(nested.percent_of_roof == Approx(20.0));
  // "proj": K3: 0 FLOP, 4000 B in 200 ns = 2e10 B/s = 20 % of the DRAM roof, memory-bound.
  const RooflinePoint& top_proj = r.region_paths[2];
  CHECK(top_proj.bound == Bound::kMemory);
  CHECK(top_proj.percent_of_roof == Approx(20.0));

  // Per instance: R0 and R1 (K1 through R3) compute-bound, R2 memory-bound.
  o.region_rows = RegionRows::kInstances;
  const RooflineReport inst = analyze_roofline(s, c, {op0, op1}, op_of_kernel, o);
  CHECK(inst.region_paths.empty());
  REQUIRE(inst.regions.size() == 5);
  CHECK(inst.regions[0].bound == Bound::kCompute);
  CHECK(inst.regions[1].bound == Bound::kCompute);
  CHECK(inst.regions[2].bound == Bound::kMemory);
  CHECK(inst.regions[1].kernel_count == 1);

  // The FPGA region ranking keys regions by the same paths (given or built itself).
  const RegionPaths p(s);
  FpgaOptions fo;
  fo.region_paths = &p;
  const std::vector<FpgaRegionCandidate> ranked =
      rank_fpga_regions(s, {op0, op1}, op_of_kernel, r, fpga_preset("alveo-u55c"), fo);
  REQUIRE(ranked.size() == 3);
  for (const FpgaRegionCandidate& cand : ranked) {
    if (cand.path == "step") CHECK(cand.instances == 3);
    if (cand.path == "step") CHECK(cand.kernel_count == 3);
  }
}

TEST_CASE("A RegionPaths from another store is refused, naming the option", "[analysis][region_paths]") {
  const TraceStore s = paths_trace();
  TraceStore other;  // no regions: its grouping covers 0 records
  const RegionPaths foreign(other);
  TransferOptions o;
  o.region_paths = &foreign;
  try {
    (void)analyze_transfers(s, o);
    FAIL("accepted a grouping of another store");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInvalidArgument);
    CHECK(std::string(e.what()).find("TransferOptions::region_paths was built from another store") !=
          std::string::npos);
  }
  o.region_rows = RegionRows::kInstances;  // per record: the grouping is not used, not checked
  CHECK_NOTHROW(analyze_transfers(s, o));
}

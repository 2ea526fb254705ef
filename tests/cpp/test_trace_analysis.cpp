// analyze_trace: the whole pipeline in one call, on hand-built stores. Expected numbers are
// worked out by hand in the comments; where the result must equal what the stage functions give
// when called directly (attribution, roofline, FPGA ranking), the test calls them.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "analysis_fixture.hpp"
#include "fpgaprof/analysis/attribution.hpp"
#include "fpgaprof/analysis/op_inputs.hpp"
#include "fpgaprof/analysis/trace_analysis.hpp"
#include "fpgaprof/error.hpp"
#include "fpgaprof/hlo/cost_model.hpp"

using namespace fpgaprof;
using namespace fpgaprof::analysis;

namespace {

// One module, two loop fusions of 1024 f32 elements each: fusion.0 multiplies (1024 FLOPs per
// execution), fusion.1 adds (1024 FLOPs); each reads its 4 KiB operand and writes 4 KiB.
const char* kModule = R"(HloModule jit_step

fused_0 {
  p0 = f32[1024]{0} parameter(0)
  ROOT m = f32[1024]{0} multiply(p0, p0)
}

fused_1 {
  p0 = f32[1024]{0} parameter(0)
  ROOT a = f32[1024]{0} add(p0, p0)
}

ENTRY main {
  x = f32[1024]{0} parameter(0)
  fusion.0 = f32[1024]{0} fusion(x), kind=kLoop, calls=fused_0
  ROOT fusion.1 = f32[1024]{0} fusion(fusion.0), kind=kLoop, calls=fused_1
}
)";

uint32_t marker(TraceStore& s, const std::string& name, uint64_t start, uint64_t end, uint32_t parent) {
  MarkerRecord m;
  m.name = s.strings.intern(name);
  m.domain = s.strings.intern("TSL");
  m.start_ns = start;
  m.end_ns = end;
  m.thread_id = 1;
  m.parent = parent;
  m.depth = parent == kNone32 ? 0 : 1;
  s.markers.push_back(m);
  return static_cast<uint32_t>(s.markers.size() - 1);
}

// XLA's ranges around three kernels of the module, plus one kernel nothing explains:
//   k0 fusion.0 [100, 200)  thunk T0      k1 fusion.1 [300, 350)  thunk T1
//   k2 fusion.0 [400, 600)  thunk T2      k3 "mystery" [700, 710)  no range, no such op
// fusion.0: 2 kernels, 2 executions (two thunk ranges), 300 ns, 2 x 1024 = 2048 FLOPs.
// fusion.1: 1 kernel, 50 ns, 1024 FLOPs. Unattributed: 1 kernel, 10 ns.
TraceStore xla_trace() {
  TraceStore s;
  s.devices = {testing::sm80_device()};
  const uint32_t module = marker(s, "XlaModule:#hlo_module=jit_step,program_id=1#", 0, 10000, kNone32);
  const uint32_t t0 = marker(s, "Thunk:#hlo_op=fusion.0#", 10, 20, module);
  const uint32_t t1 = marker(s, "Thunk:#hlo_op=fusion.1#", 30, 40, module);
  const uint32_t t2 = marker(s, "Thunk:#hlo_op=fusion.0#", 50, 60, module);
  s.kernels = {testing::kernel(s, 100, 100, t0, kNone32, 1000, s.strings.intern("fusion_0")),
               testing::kernel(s, 300, 50, t1, kNone32, 1000, s.strings.intern("fusion_1")),
               testing::kernel(s, 400, 200, t2, kNone32, 1000, s.strings.intern("fusion_0")),
               testing::kernel(s, 700, 10, kNone32, kNone32, 1000, s.strings.intern("mystery"))};
  s.hlo_modules.push_back({"jit_step", 1, kModule});
  s.meta.start_ns = 0;
  s.meta.end_ns = 20000;
  return s;
}

const OpStats& op_named(const AttributionResult& r, const std::string& name) {
  for (const OpStats& o : r.ops)
    if (o.hlo_op == name) return o;
  FAIL("no op " << name);
  static OpStats none;
  return none;
}

}  // namespace

TEST_CASE("analyze_trace attributes once, and its op rows are the stage functions' own", "[analysis][trace_analysis]") {
  const TraceStore s = xla_trace();
  std::vector<std::string> stages;
  AnalysisOptions o;
  o.on_stage = [&](std::string_view name) { stages.emplace_back(name); };
  const TraceAnalysis a = analyze_trace(s, o);

  CHECK(stages == std::vector<std::string>{"region paths", "hlo", "attribution", "op inputs", "module memory",
                                           "kernels by name", "busy", "transfers", "memory", "devices", "roofline",
                                           "energy", "fpga ops", "fpga regions", "region gpu time", "collectives"});
  CHECK(a.warnings.empty());

  // The numbers of the trace, by hand.
  const AttributionResult& at = a.attribution;
  REQUIRE(at.ops.size() == 2);
  CHECK(at.ops[0].hlo_op == "fusion.0");  // most time first
  CHECK(op_named(at, "fusion.0").kernel_count == 2);
  CHECK(op_named(at, "fusion.0").executions == 2);
  CHECK(op_named(at, "fusion.0").total_ns == 300);
  CHECK(op_named(at, "fusion.1").total_ns == 50);
  CHECK(at.attributed_count == 3);
  CHECK(at.attributed_ns == 350);
  CHECK(at.unattributed_count == 1);
  CHECK(at.unattributed_ns == 10);
  REQUIRE(a.op_inputs.ops.size() == 2);
  REQUIRE(a.roofline.ops.size() == 2);
  CHECK(a.roofline.ops[0].time_ns == 300);
  CHECK(a.roofline.ops[0].flops == Approx(2048));
  CHECK(a.roofline.ops[1].time_ns == 50);
  CHECK(a.roofline.ops[1].flops == Approx(1024));
  CHECK(a.roofline.unattributed_kernels == 1);
  CHECK(a.roofline.unattributed_ns == 10);
  // No workload time given: the trace's span, 20000 - 0 ns.
  CHECK(a.fpga.workload_ns == Approx(20000));

  // The same as attribute(store) alone ...
  const AttributionResult direct = attribute(s);
  CHECK(at.kernels.sites() == direct.kernels.sites());
  CHECK(at.kernels.site_indices() == direct.kernels.site_indices());
  CHECK(at.op_of_site == direct.op_of_site);
  REQUIRE(at.ops.size() == direct.ops.size());
  for (std::size_t i = 0; i < at.ops.size(); ++i) {
    CHECK(at.ops[i].hlo_op == direct.ops[i].hlo_op);
    CHECK(at.ops[i].total_ns == direct.ops[i].total_ns);
    CHECK(at.ops[i].flops == direct.ops[i].flops);
  }
  CHECK(at.warnings == direct.warnings);

  // ... and the roofline and FPGA ranking as analyze_roofline / rank_fpga_candidates give them
  // from that attribution.
  std::vector<hlo::Module> modules = {hlo::analyze_hlo(kModule)};
  const OpInputs in = op_inputs(s, direct, modules);
  CHECK(in.op_of_kernel == a.op_inputs.op_of_kernel);
  const RooflineReport rr = analyze_roofline(s, table_ceilings(s.devices[0]), in.ops, in.op_of_kernel);
  REQUIRE(rr.ops.size() == a.roofline.ops.size());
  for (std::size_t i = 0; i < rr.ops.size(); ++i) {
    CHECK(rr.ops[i].time_ns == a.roofline.ops[i].time_ns);
    CHECK(rr.ops[i].flops == a.roofline.ops[i].flops);
    CHECK(rr.ops[i].bytes == a.roofline.ops[i].bytes);
    CHECK(rr.ops[i].bound == a.roofline.ops[i].bound);
  }
  FpgaOptions fo;
  fo.workload_ns = 20000;
  const FpgaReport fr = rank_fpga_candidates(in.ops, rr, fpga_preset("alveo-u55c"), fo, in.host_bytes);
  REQUIRE(fr.candidates.size() == a.fpga.candidates.size());
  for (std::size_t i = 0; i < fr.candidates.size(); ++i) {
    CHECK(fr.candidates[i].name == a.fpga.candidates[i].name);
    CHECK(fr.candidates[i].card_time_s == a.fpga.candidates[i].card_time_s);
  }
}

TEST_CASE("analyze_trace ranks the same ops and regions on other cards in the same pass",
          "[analysis][trace_analysis]") {
  const TraceStore s = xla_trace();
  AnalysisOptions o;
  o.other_fpga_targets = {fpga_preset("versal-v80"), fpga_preset("alveo-u200")};
  const TraceAnalysis a = analyze_trace(s, o);
  REQUIRE(a.other_fpga.size() == 2);
  // Each as rank_fpga_candidates gives it on that card from the same ops and roofline.
  FpgaOptions fo;
  fo.workload_ns = 20000;
  fo.gpu_link_bytes_per_s = a.ceilings.link_bytes_per_s;
  fo.region_paths = &a.region_paths;
  for (std::size_t t = 0; t < 2; ++t) {
    const FpgaReport fr =
        rank_fpga_candidates(a.op_inputs.ops, a.roofline, o.other_fpga_targets[t], fo, a.op_inputs.host_bytes);
    const FpgaReport& got = a.other_fpga[t].ops;
    CHECK(got.target.name == o.other_fpga_targets[t].name);
    REQUIRE(got.candidates.size() == fr.candidates.size());
    for (std::size_t i = 0; i < fr.candidates.size(); ++i) {
      CHECK(got.candidates[i].name == fr.candidates[i].name);
      CHECK(got.candidates[i].card_time_s == fr.candidates[i].card_time_s);
      CHECK(got.candidates[i].could_save_ns == fr.candidates[i].could_save_ns);
    }
    CHECK(a.other_fpga[t].regions.size() == a.fpga_regions.size());
  }
  // The chosen card's rankings do not change for the others.
  const TraceAnalysis alone = analyze_trace(s, AnalysisOptions{});
  REQUIRE(alone.fpga.candidates.size() == a.fpga.candidates.size());
  for (std::size_t i = 0; i < a.fpga.candidates.size(); ++i)
    CHECK(alone.fpga.candidates[i].card_time_s == a.fpga.candidates[i].card_time_s);
  CHECK(alone.other_fpga.empty());
  // An invalid other card is refused like the chosen one.
  AnalysisOptions bad;
  bad.other_fpga_targets = {fpga_preset("alveo-u55c")};
  bad.other_fpga_targets[0].clock_hz.nominal = -1.0;
  CHECK_THROWS_AS(analyze_trace(s, bad), Error);
}

TEST_CASE("analyze_trace without the per-record attribution keeps the ops and drops the lists",
          "[analysis][trace_analysis]") {
  const TraceStore s = xla_trace();
  AnalysisOptions o;
  o.keep_record_attribution = false;
  const TraceAnalysis a = analyze_trace(s, o);
  CHECK(a.attribution.kernels.empty());
  CHECK(a.attribution.memcpys.empty());
  REQUIRE(a.attribution.ops.size() == 2);
  CHECK(a.attribution.ops[0].total_ns == 300);  // fusion.0, as above
  CHECK(a.attribution.unattributed_ns == 10);
  // The analyses after it saw the whole attribution: k0 and k2 are fusion.0's (op 0), k1 is
  // fusion.1's, k3 nobody's.
  CHECK(a.op_inputs.op_of_kernel == std::vector<uint32_t>{0, 1, 0, kNone32});
  CHECK(a.roofline.ops[0].time_ns == 300);
}

TEST_CASE("analyze_trace: a module that does not parse is a warning, worded as attribute() words it",
          "[analysis][trace_analysis]") {
  TraceStore s = xla_trace();
  s.hlo_modules.push_back({"broken", 7, "this is not HLO"});
  const TraceAnalysis a = analyze_trace(s);
  REQUIRE(a.warnings.size() == 1);
  CHECK(a.warnings[0].message.rfind("HLO module 'broken': ", 0) == 0);
  CHECK(a.warnings[0].code() == "hlo.module_unparsed");
  const AttributionResult direct = attribute(s);
  CHECK(a.attribution.warnings == direct.warnings);
  REQUIRE_FALSE(direct.warnings.empty());
  CHECK(direct.warnings[0].message.rfind("HLO module broken (program_id 7) could not be analysed (", 0) == 0);
  // The module that parses is still used: fusion.0 has its cost.
  CHECK(op_named(a.attribution, "fusion.0").has_cost);
}

TEST_CASE("analyze_trace refuses an invalid FPGA target before any work", "[analysis][trace_analysis]") {
  const TraceStore s = xla_trace();
  AnalysisOptions o;
  o.fpga_target.memory_type = "sram";
  int stages = 0;
  o.on_stage = [&](std::string_view) { ++stages; };
  try {
    (void)analyze_trace(s, o);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInvalidArgument);
    CHECK(std::string(e.what()).find("memory_type = 'sram'") != std::string::npos);
  }
  CHECK(stages == 0);
}

TEST_CASE("GPU busy time: unions of overlapping kernels, copies and memsets", "[analysis][trace_analysis]") {
  // Kernels K0 [0, 100), K1 [50, 150) (overlaps K0), K2 [300, 400), K3 [500, 450) (end before
  //   start: empty). Union [0, 150) + [300, 400) = 150 + 100 = 250 ns; durations 100+100+100+0.
  // Copies C0 [120, 200) 1000 B (overlaps K1), C1 [600, 700) 24 B: 80 + 100 = 180 ns, 1024 B.
  // Memsets M0 [390, 420): 30 ns.
  // Everything: [0, 200) (K0, K1, C0) + [300, 420) (K2, M0) + [600, 700) (C1) = 200 + 120 + 100.
  TraceStore s;
  const StringId k = s.strings.intern("k");
  s.kernels = {testing::kernel(s, 0, 100, kNone32, kNone32, 1, k), testing::kernel(s, 50, 100, kNone32, kNone32, 1, k),
               testing::kernel(s, 300, 100, kNone32, kNone32, 1, k)};
  KernelRecord inverted = testing::kernel(s, 500, 0, kNone32, kNone32, 1, k);
  inverted.end_ns = 450;
  s.kernels.push_back(inverted);
  const auto copy = [&](uint64_t b, uint64_t e, uint64_t bytes) {
    MemcpyRecord c;
    c.start_ns = b;
    c.end_ns = e;
    c.bytes = bytes;
    c.copy_kind = CopyKind::kHtoD;
    s.memcpys.push_back(c);
  };
  copy(120, 200, 1000);
  copy(600, 700, 24);
  MemsetRecord m;
  m.start_ns = 390;
  m.end_ns = 420;
  s.memsets.push_back(m);

  for (const GpuBusyTime& b : {gpu_busy_time(s), analyze_trace(s).busy}) {
    CHECK(b.kernel_busy_ns == 250);
    CHECK(b.copy_busy_ns == 180);
    CHECK(b.memset_busy_ns == 30);
    CHECK(b.busy_ns == 420);
    CHECK(b.kernel_count == 4);
    CHECK(b.kernel_time_ns == 300);
    CHECK(b.copy_count == 2);
    CHECK(b.copy_bytes == 1024);
    CHECK(b.memset_count == 1);
  }
  // An empty store: nothing busy.
  const GpuBusyTime none = gpu_busy_time(TraceStore{});
  CHECK(none.busy_ns == 0);
  CHECK(none.kernel_count == 0);
}

TEST_CASE("GPU time per region path, nested regions included", "[analysis][trace_analysis]") {
  // Regions (records in this order; paths numbered as the records first reach them):
  //   R0 "step"  [0, 1000]     top             path 0 "step"
  //   R1 "fwd"   [100, 500]    in R0           path 1 "step > fwd"
  //   R2 "step"  [2000, 3000]  top             path 0
  //   R3 "fwd"   [2100, 2500]  in R2           path 1
  //   R4 "inner" [150, 400]    in R1           path 2 "step > fwd > inner"
  //   R5 "fwd"   [5000, 5100]  top             path 3 "fwd"
  // Kernels: R4 60 ns, R1 40 ns, R3 100 ns, R0 10 ns, R5 20 ns, none 5 ns.
  // Copies: R4 20 ns, R2 100 ns. Memsets: R3 5 ns.
  // Inclusive:
  //   path 2: kernels 1 / 60 ns, copies 1 / 20 ns -> 80 ns
  //   path 1: kernels R1 + R3 + path 2 = 3 / 200 ns, copies 1 / 20, memsets 1 / 5 -> 225 ns
  //   path 0: kernels R0 + path 1 = 4 / 210 ns, copies R2 + path 1 = 2 / 120, memsets 1 / 5 -> 335 ns
  //   path 3: kernels 1 / 20 ns -> 20 ns
  TraceStore s;
  const auto region = [&](const char* name, uint64_t b, uint64_t e, uint32_t parent) {
    RegionRecord r;
    r.name = s.strings.intern(name);
    r.start_ns = b;
    r.end_ns = e;
    r.thread_id = 1;
    r.parent = parent;
    r.depth = parent == kNone32 ? 0 : s.regions[parent].depth + 1;
    s.regions.push_back(r);
  };
  region("step", 0, 1000, kNone32);
  region("fwd", 100, 500, 0);
  region("step", 2000, 3000, kNone32);
  region("fwd", 2100, 2500, 2);
  region("inner", 150, 400, 1);
  region("fwd", 5000, 5100, kNone32);
  const StringId k = s.strings.intern("k");
  s.kernels = {testing::kernel(s, 200, 60, kNone32, 4, 1, k),   testing::kernel(s, 300, 40, kNone32, 1, 1, k),
               testing::kernel(s, 2200, 100, kNone32, 3, 1, k), testing::kernel(s, 600, 10, kNone32, 0, 1, k),
               testing::kernel(s, 5010, 20, kNone32, 5, 1, k),  testing::kernel(s, 7000, 5, kNone32, kNone32, 1, k)};
  const auto copy = [&](uint64_t b, uint64_t e, uint32_t r) {
    MemcpyRecord c;
    c.start_ns = b;
    c.end_ns = e;
    c.region_index = r;
    s.memcpys.push_back(c);
  };
  copy(210, 230, 4);
  copy(2600, 2700, 2);
  MemsetRecord m;
  m.start_ns = 2400;
  m.end_ns = 2405;
  m.region_index = 3;
  s.memsets.push_back(m);

  const TraceAnalysis a = analyze_trace(s);
  const RegionPaths& p = a.region_paths;
  REQUIRE(p.size() == 4);
  CHECK(p.path(0) == "step");
  CHECK(p.path(1) == "step > fwd");
  CHECK(p.path(2) == "step > fwd > inner");
  CHECK(p.path(3) == "fwd");
  CHECK(p.path_of(4) == 2);
  CHECK(p.instances(0) == 2);
  CHECK(p.instances(1) == 2);
  REQUIRE(a.region_path_gpu.size() == 4);
  const auto& g = a.region_path_gpu;
  CHECK((g[2].kernel_count == 1 && g[2].kernel_ns == 60 && g[2].copy_count == 1 && g[2].copy_ns == 20));
  CHECK(g[2].memset_count == 0);
  CHECK(g[2].gpu_ns() == 80);
  CHECK((g[1].kernel_count == 3 && g[1].kernel_ns == 200 && g[1].copy_count == 1 && g[1].copy_ns == 20));
  CHECK((g[1].memset_count == 1 && g[1].memset_ns == 5));
  CHECK(g[1].gpu_ns() == 225);
  CHECK((g[0].kernel_count == 4 && g[0].kernel_ns == 210 && g[0].copy_count == 2 && g[0].copy_ns == 120));
  CHECK(g[0].gpu_ns() == 335);
  CHECK((g[3].kernel_count == 1 && g[3].kernel_ns == 20 && g[3].gpu_ns() == 20));

  // Paths of another store are refused.
  TraceStore other;
  CHECK_THROWS_AS(region_path_gpu_time(s, RegionPaths(other)), Error);
}

TEST_CASE("Kernels by name: count, time, shortest and longest, most time first, ties by name",
          "[analysis][trace_analysis]") {
  // "b": 10, 30, 20 ns and one without timestamps (a counter replay's) -> 4 kernels, 3 timed,
  // 60 ns, min 10 (not the untimed 0), max 30.  "a": 25, 35 -> 2, 60 ns (tie with "b": "a"
  // first).  "c": 100 -> first.  "z": end before start -> 1 kernel, none timed, 0 ns, last.
  TraceStore s;
  const StringId b = s.strings.intern("b"), a = s.strings.intern("a"), c = s.strings.intern("c"),
                 z = s.strings.intern("z");
  s.kernels = {
      testing::kernel(s, 0, 10, kNone32, kNone32, 1, b),   testing::kernel(s, 100, 25, kNone32, kNone32, 1, a),
      testing::kernel(s, 200, 30, kNone32, kNone32, 1, b), testing::kernel(s, 300, 100, kNone32, kNone32, 1, c),
      testing::kernel(s, 500, 20, kNone32, kNone32, 1, b), testing::kernel(s, 600, 35, kNone32, kNone32, 1, a)};
  KernelRecord backwards = testing::kernel(s, 900, 0, kNone32, kNone32, 1, z);
  backwards.end_ns = 800;
  s.kernels.push_back(backwards);
  s.kernels.push_back(testing::kernel(s, 0, 0, kNone32, kNone32, 1, b));  // start = end = 0

  const std::vector<KernelNameStats> by = analyze_trace(s).kernels_by_name;
  REQUIRE(by.size() == 4);
  CHECK(by[0].name == c);
  CHECK((by[0].count == 1 && by[0].timed_count == 1 && by[0].total_ns == 100 && by[0].min_ns == 100 &&
         by[0].max_ns == 100));
  CHECK(by[1].name == a);
  CHECK(
      (by[1].count == 2 && by[1].timed_count == 2 && by[1].total_ns == 60 && by[1].min_ns == 25 && by[1].max_ns == 35));
  CHECK(by[1].mean_ns() == 30.0);
  CHECK(by[2].name == b);
  CHECK(
      (by[2].count == 4 && by[2].timed_count == 3 && by[2].total_ns == 60 && by[2].min_ns == 10 && by[2].max_ns == 30));
  CHECK(by[2].mean_ns() == 20.0);  // 60 ns over the 3 timed launches, not 15 over all 4
  CHECK(by[3].name == z);
  CHECK((by[3].count == 1 && by[3].timed_count == 0 && by[3].total_ns == 0 && by[3].min_ns == 0 && by[3].max_ns == 0));
  CHECK(by[3].mean_ns() == 0.0);
}

TEST_CASE("analyze_trace: per-device ceilings take the given overrides, DRAM peaks per device",
          "[analysis][trace_analysis]") {
  // Device 0: the fixture's sm_80, DRAM 2 x 1e9 x 4096 / 8 = 1.024e12 B/s. Device 1: half the
  // memory clock, 5.12e11 B/s. Given ceilings: DRAM 2e12 (measured) and a 1e10 B/s link (user).
  // Row of device 0 (the first): both. Row of device 1: the user's link only (a user or measured
  // link peak applies to every link), its own DRAM.
  TraceStore s;
  DeviceInfo d0 = testing::sm80_device(), d1 = testing::sm80_device();
  d0.id = 0;
  d1.id = 1;
  d1.memory_clock_khz = 500000;
  s.devices = {d0, d1};
  AnalysisOptions o;
  Ceilings c = table_ceilings(d0);
  c.dram_bytes_per_s = 2e12;
  c.dram_source = CeilingSource::kMeasured;
  c.link_bytes_per_s = 1e10;
  c.link_source = CeilingSource::kUser;
  o.ceilings = c;
  o.workload_ns = 5e6;
  const TraceAnalysis a = analyze_trace(s, o);
  REQUIRE(a.device_dram_bytes_per_s.size() == 2);
  CHECK(a.device_dram_bytes_per_s[0] == Approx(1.024e12));
  CHECK(a.device_dram_bytes_per_s[1] == Approx(5.12e11));
  REQUIRE(a.devices.devices.size() == 2);
  REQUIRE(a.device_ceilings.size() == 2);
  CHECK(a.device_ceilings[0].dram_bytes_per_s == Approx(2e12));
  CHECK(a.device_ceilings[0].dram_source == CeilingSource::kMeasured);
  CHECK(a.device_ceilings[0].link_bytes_per_s == Approx(1e10));
  CHECK(a.device_ceilings[1].dram_bytes_per_s == Approx(5.12e11));
  CHECK(a.device_ceilings[1].dram_source == CeilingSource::kTable);
  CHECK(a.device_ceilings[1].link_bytes_per_s == Approx(1e10));
  CHECK(a.device_ceilings[1].link_source == CeilingSource::kUser);
  // The given link peak reaches the transfers, the given workload time the FPGA model.
  CHECK(a.transfers.link_bytes_per_s == Approx(1e10));
  CHECK(a.transfers.link_source == "user");
  CHECK(a.fpga.workload_ns == Approx(5e6));
  CHECK(a.ceilings.dram_bytes_per_s == Approx(2e12));
}

TEST_CASE("kernels_by_name: the modules whose ops launched each name, most launches first", "[trace_analysis]") {
  // xla_trace() and a second module, jit_eval (no HLO text), whose range holds three more
  // fusion_0 launches (thunk ranges of its own fusion.0). By hand: fusion_0 5 launches,
  // jit_eval 3 then jit_step 2; fusion_1 jit_step 1; mystery (in no range) no module, 1.
  TraceStore s = xla_trace();
  const uint32_t eval = marker(s, "XlaModule:#hlo_module=jit_eval,program_id=2#", 1000, 5000, kNone32);
  for (uint64_t k = 0; k < 3; ++k) {
    const uint32_t t = marker(s, "Thunk:#hlo_op=fusion.0#", 1010 + 100 * k, 1020 + 100 * k, eval);
    s.kernels.push_back(testing::kernel(s, 2000 + 100 * k, 10, t, kNone32, 1000, s.strings.intern("fusion_0")));
  }
  const TraceAnalysis a = analyze_trace(s);
  const auto modules_of = [&](const std::string& name) {
    std::vector<std::pair<std::string, uint64_t>> out;
    for (const KernelNameStats& k : a.kernels_by_name)
      if (s.strings.get(k.name) == name)
        for (const KernelNameModule& m : k.modules) out.emplace_back(m.module, m.count);
    return out;
  };
  using M = std::vector<std::pair<std::string, uint64_t>>;
  CHECK(modules_of("fusion_0") == M{{"jit_eval", 3}, {"jit_step", 2}});
  CHECK(modules_of("fusion_1") == M{{"jit_step", 1}});
  CHECK(modules_of("mystery") == M{{"", 1}});
  // Without the attribution (the kernels alone), no modules.
  for (const KernelNameStats& k : kernels_by_name(s)) CHECK(k.modules.empty());
}

// Attribution on hand-built stores: markers + kernels + HLO modules, expected results worked
// out by hand in the comments.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fpgaprof/analysis/attribution.hpp"
#include "fpgaprof/error.hpp"
#include "fpgaprof/hlo/cost_model.hpp"

using namespace fpgaprof;
using namespace fpgaprof::analysis;

namespace {

hlo::Instruction instr(std::string name, std::string opcode, std::string op_name = "", std::string file = "",
                       int64_t line = -1) {
  hlo::Instruction i;
  i.name = std::move(name);
  i.opcode = std::move(opcode);
  i.detail().metadata.op_name = std::move(op_name);
  i.detail().metadata.source_file = std::move(file);
  i.detail().metadata.source_line = line;
  return i;
}

hlo::Computation comp(std::string name, std::vector<hlo::Instruction> ins, bool entry = false, bool fusion = false) {
  hlo::Computation c;
  c.name = std::move(name);
  c.is_entry = entry;
  c.is_fusion = fusion;
  c.instructions = std::move(ins);
  for (std::size_t i = 0; i < c.instructions.size(); ++i) c.index.insert(i, c.instructions);
  if (!c.instructions.empty()) {
    c.instructions.back().is_root = true;
    c.root_index = c.instructions.size() - 1;
  }
  return c;
}

hlo::Module module(std::string name, std::vector<hlo::Computation> comps) {
  hlo::Module m;
  m.name = std::move(name);
  m.computations = std::move(comps);
  for (std::size_t i = 0; i < m.computations.size(); ++i) {
    m.index[m.computations[i].name] = i;
    if (m.computations[i].is_entry) {
      m.entry_index = i;
      m.has_entry = true;
    }
  }
  return m;
}

uint32_t add_marker(TraceStore& s, const std::string& name, uint64_t start, uint64_t end, uint32_t tid,
                    uint32_t parent) {
  MarkerRecord m;
  m.name = s.strings.intern(name);
  m.domain = s.strings.intern("TSL");
  m.start_ns = start;
  m.end_ns = end;
  m.thread_id = tid;
  m.parent = parent;
  s.markers.push_back(m);
  return static_cast<uint32_t>(s.markers.size() - 1);
}

void add_kernel(TraceStore& s, const std::string& name, uint64_t start, uint64_t dur, uint32_t stream,
                uint32_t marker) {
  KernelRecord k;
  k.name = s.strings.intern(name);
  k.start_ns = start;
  k.end_ns = start + dur;
  k.stream_id = stream;
  k.marker_index = marker;
  s.kernels.push_back(k);
}

const OpStats* find_op(const AttributionResult& r, const std::string& module, const std::string& op) {
  for (const auto& o : r.ops)
    if (o.module_name == module && o.hlo_op == op) return &o;
  return nullptr;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("parse_xla_range_name reads XLA's module and thunk ranges", "[attribution]") {
  auto m = parse_xla_range_name("XlaModule:#hlo_module=jit_f,program_id=12#");
  CHECK(m.kind == XlaRangeName::Kind::kModule);
  CHECK(m.hlo_module == "jit_f");
  CHECK(m.program_id == 12);
  CHECK(m.prefix.empty());

  m = parse_xla_range_name("XlaModule:#prefix=jit(f)/jit(main),hlo_module=jit_f,program_id=3#");
  CHECK(m.kind == XlaRangeName::Kind::kModule);
  CHECK(m.prefix == "jit(f)/jit(main)");
  CHECK(m.hlo_module == "jit_f");
  CHECK(m.program_id == 3);

  m = parse_xla_range_name("XlaModule:#hlo_module=jit_g#");
  CHECK(m.kind == XlaRangeName::Kind::kModule);
  CHECK(m.program_id == -1);

  auto t = parse_xla_range_name("Thunk:#hlo_op=loop_add_fusion.3,unique_hlo_op_id=7#");
  CHECK(t.kind == XlaRangeName::Kind::kThunk);
  CHECK(t.hlo_op == "loop_add_fusion.3");
  CHECK(t.unique_hlo_op_id == 7);

  // Commas inside brackets and commas not followed by `key=` stay in the value.
  t = parse_xla_range_name("Thunk:#name=transpose[permutation=(1,0)],hlo_op=transpose_fusion.1#");
  CHECK(t.kind == XlaRangeName::Kind::kThunk);
  CHECK(t.name == "transpose[permutation=(1,0)]");
  CHECK(t.hlo_op == "transpose_fusion.1");
  t = parse_xla_range_name("Thunk:#name=a,b/c#d,hlo_op=x.1#");
  CHECK(t.name == "a,b/c#d");
  CHECK(t.hlo_op == "x.1");

  // Not XLA ranges, or broken ones: kind none, no throw.
  CHECK(parse_xla_range_name("Thunk:#hlo_op=#").kind == XlaRangeName::Kind::kNone);
  CHECK(parse_xla_range_name("Thunk:hlo_op=x").kind == XlaRangeName::Kind::kNone);
  CHECK(parse_xla_range_name("my range").kind == XlaRangeName::Kind::kNone);
  CHECK(parse_xla_range_name("").kind == XlaRangeName::Kind::kNone);
  CHECK(parse_xla_range_name("XlaModule:#").kind == XlaRangeName::Kind::kNone);
  m = parse_xla_range_name("XlaModule:#program_id=abc,hlo_module=m#");
  CHECK(m.kind == XlaRangeName::Kind::kModule);
  CHECK(m.program_id == -1);
  m = parse_xla_range_name("XlaModule:#hlo_module=m,program_id=99999999999999999999999#");
  CHECK(m.program_id == -1);
}

TEST_CASE("kernel names: sanitizing and libraries", "[attribution]") {
  CHECK(sanitize_kernel_name("loop_add_fusion.3") == "loop_add_fusion_3");
  CHECK(sanitize_kernel_name("a-b.c$d") == "a_b_c$d");
  CHECK(library_of_kernel("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32") == "cuBLAS");
  CHECK(library_of_kernel("nvjet_tst_128x64_64x4_1x2_h_bz_TNT") == "cuBLAS");
  CHECK(library_of_kernel("void splitKreduce_kernel<32, 16, int, float>") == "cuBLAS");
  CHECK(library_of_kernel("cudnn::fusion::compute_kernel") == "cuDNN");
  CHECK(library_of_kernel("regular_fft_factor_8_8") == "cuFFT");
  CHECK(library_of_kernel("loop_add_fusion_3") == "");
  CHECK(library_of_kernel("input_reduce_fusion") == "");
}

namespace {

// Two modules, both with a fusion named loop_add_fusion.3:
//   jit_f (program 5): loop_add_fusion.3 (kLoop, fused root add.1 "jit(f)/add" at /x.py:10),
//                      custom-call.2 (__cublas$gemm, "jit(f)/dot_general" at /x.py:11, 524288 flops)
//   jit_g (program 9): loop_add_fusion.3, reduce.4 ("jit(g)/reduce_sum" at /y.py:20)
std::vector<hlo::Module> two_modules(TraceStore& s) {
  std::vector<hlo::Module> mods;
  {
    auto add = instr("add.1", "add", "jit(f)/add", "/x.py", 10);
    auto fused = comp("fused_computation", {instr("param_0", "parameter"), add}, false, true);
    auto fusion = instr("loop_add_fusion.3", "fusion");
    fusion.detail().fusion_kind = "kLoop";
    fusion.detail().called_computations = {"fused_computation"};
    auto gemm = instr("custom-call.2", "custom-call", "jit(f)/dot_general", "/x.py", 11);
    gemm.detail().custom_call_target = "__cublas$gemm";
    gemm.cost.flops = 524288;  // 2*64*64*64
    gemm.cost.bytes_read = 32768;
    gemm.cost.bytes_written = 16384;
    gemm.pattern = hlo::AccessPattern::kDot;
    auto entry = comp("main", {instr("p0", "parameter"), fusion, gemm}, true);
    mods.push_back(module("jit_f", {fused, entry}));
    s.hlo_modules.push_back(HloModuleText{"jit_f", 5, "(text)"});
  }
  {
    auto add = instr("add.9", "add", "jit(g)/add", "/y.py", 19);
    auto fused = comp("fused_computation", {add}, false, true);
    auto fusion = instr("loop_add_fusion.3", "fusion");
    fusion.detail().fusion_kind = "kLoop";
    fusion.detail().called_computations = {"fused_computation"};
    auto reduce = instr("reduce.4", "reduce", "jit(g)/reduce_sum", "/y.py", 20);
    auto entry = comp("main", {fusion, reduce}, true);
    mods.push_back(module("jit_g", {fused, entry}));
    s.hlo_modules.push_back(HloModuleText{"jit_g", 9, "(text)"});
  }
  return mods;
}

}  // namespace

TEST_CASE("attribution by thunk range, kernel name, library and context", "[attribution]") {
  TraceStore s;
  auto mods = two_modules(s);
  const uint32_t m0 = add_marker(s, "XlaModule:#hlo_module=jit_f,program_id=5#", 100, 1000, 1, kNone32);
  const uint32_t m1 = add_marker(s, "Thunk:#hlo_op=loop_add_fusion.3#", 110, 200, 1, m0);
  const uint32_t m2 = add_marker(s, "Thunk:#name=dot_general,hlo_op=custom-call.2#", 210, 400, 1, m0);
  const uint32_t m3 = add_marker(s, "XlaModule:#hlo_module=jit_f,program_id=5#", 2000, 3000, 2, kNone32);

  add_kernel(s, "loop_add_fusion_3", 150, 50, 1, m1);          // k0: thunk m1
  add_kernel(s, "sm90_xmma_gemm_f32f32_tn", 300, 100, 1, m2);  // k1: thunk m2, cuBLAS
  add_kernel(s, "splitKreduce_kernel", 420, 10, 1, m2);        // k2: thunk m2, cuBLAS
  add_kernel(s, "reduce_4", 5000, 20, 7, kNone32);             // k3: name, only in jit_g
  add_kernel(s, "loop_add_fusion_3", 5100, 60, 7, kNone32);    // k4: ambiguous; neighbour k3 -> jit_g
  add_kernel(s, "reduce_4__2", 9000, 25, 8, kNone32);          // k5: clash suffix -> reduce.4
  add_kernel(s, "my_custom_kernel", 9500, 15, 8, kNone32);     // k6: unattributed
  add_kernel(s, "nvjet_tst_64x64", 2100, 40, 3, m3);           // k7: library, module range jit_f
  add_kernel(s, "loop_add_fusion_3", 2200, 30, 3, m3);         // k8: ambiguous; range says jit_f

  MemcpyRecord c0;
  c0.start_ns = 405;
  c0.end_ns = 410;
  c0.bytes = 256;
  c0.marker_index = m2;
  s.memcpys.push_back(c0);
  MemcpyRecord c1 = c0;
  c1.marker_index = kNone32;
  s.memcpys.push_back(c1);

  const AttributionResult r = attribute(s, mods);
  REQUIRE(r.kernels.size() == 9);

  CHECK(r.kernels[0].method == MatchMethod::kNvtxThunk);
  CHECK(r.kernels[0].module_name == "jit_f");
  CHECK(r.kernels[0].program_id == 5);
  CHECK(r.kernels[0].hlo_op == "loop_add_fusion.3");
  CHECK(r.kernels[0].category == "fusion:kLoop");
  CHECK(r.kernels[0].op_name == "jit(f)/add");  // from the fused computation's root
  CHECK(r.kernels[0].source_file == "/x.py");
  CHECK(r.kernels[0].source_line == 10);
  CHECK(r.kernels.site(0) != r.kernels.site(1));  // two ops, two sites

  CHECK(r.kernels[1].method == MatchMethod::kNvtxThunk);
  CHECK(r.kernels[1].hlo_op == "custom-call.2");
  CHECK(r.kernels[1].library == "cuBLAS");
  CHECK(r.kernels[1].category == "custom-call:__cublas$gemm");
  CHECK(r.kernels[1].source_line == 11);
  CHECK(r.kernels[2].hlo_op == "custom-call.2");

  CHECK(r.kernels[3].method == MatchMethod::kKernelName);
  CHECK(r.kernels[3].module_name == "jit_g");
  CHECK(r.kernels[3].hlo_op == "reduce.4");
  CHECK(r.kernels[3].category == "reduce");

  CHECK(r.kernels[4].method == MatchMethod::kKernelName);
  CHECK(r.kernels[4].module_name == "jit_g");
  CHECK(r.kernels[4].hlo_op == "loop_add_fusion.3");
  CHECK(r.kernels[4].source_line == 19);

  CHECK(r.kernels[5].method == MatchMethod::kKernelName);
  CHECK(r.kernels[5].hlo_op == "reduce.4");

  CHECK(r.kernels[6].method == MatchMethod::kUnattributed);
  CHECK_FALSE(r.kernels[6].reason.empty());

  CHECK(r.kernels[7].method == MatchMethod::kLibrary);
  CHECK(r.kernels[7].module_name == "jit_f");
  CHECK(r.kernels[7].hlo_op == "custom-call.2");

  CHECK(r.kernels[8].method == MatchMethod::kKernelName);
  CHECK(r.kernels[8].module_name == "jit_f");

  CHECK(r.memcpys[0].method == MatchMethod::kNvtxThunk);
  CHECK(r.memcpys[0].hlo_op == "custom-call.2");
  CHECK(r.memcpys[1].method == MatchMethod::kUnattributed);

  // Totals: nvtx k0,k1,k2; name k3,k4,k5,k8; library k7; unattributed k6 (15 ns).
  CHECK(r.count_by_method[static_cast<int>(MatchMethod::kNvtxThunk)] == 3);
  CHECK(r.count_by_method[static_cast<int>(MatchMethod::kKernelName)] == 4);
  CHECK(r.count_by_method[static_cast<int>(MatchMethod::kLibrary)] == 1);
  CHECK(r.unattributed_count == 1);
  CHECK(r.unattributed_ns == 15);
  CHECK(r.attributed_count == 8);
  CHECK(r.attributed_ns == 50 + 100 + 10 + 20 + 60 + 25 + 40 + 30);
  REQUIRE(r.unattributed.size() == 1);
  CHECK(r.unattributed[0].name == "my_custom_kernel");
  CHECK(r.unattributed[0].count == 1);

  // Ops: gemm 100+10+40 = 150 ns, executions: thunk m2 once + k7 (no thunk) = 2, mean 75;
  // jit_f fusion 50+30 = 80 (2 executions); jit_g fusion 60; reduce 20+25 = 45.
  REQUIRE(r.ops.size() == 4);
  CHECK(r.ops[0].hlo_op == "custom-call.2");
  CHECK(r.ops[1].module_name == "jit_f");
  CHECK(r.ops[1].hlo_op == "loop_add_fusion.3");
  CHECK(r.ops[2].module_name == "jit_g");
  CHECK(r.ops[2].hlo_op == "loop_add_fusion.3");
  CHECK(r.ops[3].hlo_op == "reduce.4");
  const OpStats* gemm = find_op(r, "jit_f", "custom-call.2");
  REQUIRE(gemm);
  CHECK(gemm->kernel_count == 3);
  CHECK(gemm->total_ns == 150);
  CHECK(gemm->executions == 2);
  CHECK(gemm->mean_ns == 75);
  CHECK(gemm->method == MatchMethod::kNvtxThunk);
  CHECK(gemm->memcpy_count == 1);
  CHECK(gemm->memcpy_ns == 5);
  CHECK(gemm->memcpy_bytes == 256);
  CHECK(gemm->has_cost);
  CHECK(gemm->flops == 524288);
  CHECK(gemm->bytes_accessed == 32768 + 16384);
  CHECK(gemm->pattern == hlo::access_pattern_name(hlo::AccessPattern::kDot));
  CHECK(gemm->opcode == "custom-call");
  CHECK(gemm->kernel_names.size() == 3);
  const OpStats* f_fusion = find_op(r, "jit_f", "loop_add_fusion.3");
  REQUIRE(f_fusion);
  CHECK(f_fusion->total_ns == 80);
  CHECK(f_fusion->executions == 2);
  CHECK(f_fusion->mean_ns == 40);
  CHECK(f_fusion->kernel_names == std::vector<std::string>{"loop_add_fusion_3"});
  const OpStats* reduce = find_op(r, "jit_g", "reduce.4");
  REQUIRE(reduce);
  CHECK(reduce->total_ns == 45);
  CHECK(reduce->source_file == "/y.py");
  CHECK(reduce->source_line == 20);
}

TEST_CASE("an op's mean is over its executions whose kernels all have a duration", "[attribution]") {
  // A counter replay leaves some kernels with start = end = 0. custom-call.2 runs in three
  // thunk ranges: m1 (100 + 10 ns), m2 (300 ns + an untimed kernel), m3 (both untimed);
  // loop_add_fusion.3 in jit_f runs three times by name under the module range: 40 ns,
  // untimed, 20 ns. By hand: custom-call.2 3 executions, 1 timed, mean 110 ns (not
  // 410 / 3 = 136); the fusion 3 executions, 2 timed, mean 30 ns (not 60 / 3 = 20).
  TraceStore s;
  auto mods = two_modules(s);
  const uint32_t mod = add_marker(s, "XlaModule:#hlo_module=jit_f,program_id=5#", 100, 9000, 1, kNone32);
  const uint32_t m1 = add_marker(s, "Thunk:#hlo_op=custom-call.2#", 110, 400, 1, mod);
  const uint32_t m2 = add_marker(s, "Thunk:#hlo_op=custom-call.2#", 1000, 1500, 1, mod);
  const uint32_t m3 = add_marker(s, "Thunk:#hlo_op=custom-call.2#", 2000, 2500, 1, mod);
  add_kernel(s, "sm90_xmma_gemm_f32f32_tn", 200, 100, 1, m1);
  add_kernel(s, "splitKreduce_kernel", 320, 10, 1, m1);
  add_kernel(s, "sm90_xmma_gemm_f32f32_tn", 1100, 300, 1, m2);
  add_kernel(s, "splitKreduce_kernel", 0, 0, 1, m2);
  add_kernel(s, "sm90_xmma_gemm_f32f32_tn", 0, 0, 1, m3);
  add_kernel(s, "splitKreduce_kernel", 0, 0, 1, m3);
  add_kernel(s, "loop_add_fusion_3", 3000, 40, 3, mod);
  add_kernel(s, "loop_add_fusion_3", 0, 0, 3, mod);
  add_kernel(s, "loop_add_fusion_3", 3200, 20, 3, mod);

  const AttributionResult r = attribute(s, mods);
  const OpStats* gemm = find_op(r, "jit_f", "custom-call.2");
  REQUIRE(gemm);
  CHECK(gemm->kernel_count == 6);
  CHECK(gemm->executions == 3);
  CHECK(gemm->timed_executions == 1);
  CHECK(gemm->total_ns == 410);
  CHECK(gemm->mean_ns == 110);
  const OpStats* fusion = find_op(r, "jit_f", "loop_add_fusion.3");
  REQUIRE(fusion);
  CHECK(fusion->executions == 3);
  CHECK(fusion->timed_executions == 2);
  CHECK(fusion->total_ns == 60);
  CHECK(fusion->mean_ns == 30);
}

TEST_CASE("an op XLA runs as several thunks in a row is one execution", "[attribution]") {
  // custom-call.2 as a sort of three passes, one thunk range and kernel each (sort_1,
  // sort_1__1, sort_1__2), under one module range: one execution (10 + 20 + 30 ns, mean 60).
  // Then sort_1 again (the next call's passes: a kernel the execution already ran) starts a
  // second one, whose sort_1__1 is untimed (untimed execution); a loop_add_fusion.3 range on
  // the thread between its passes and the next sort_1__2 starts a third. By hand: 3 executions,
  // 2 timed (the first, 60 ns; the third, 5 ns), mean (60 + 5) / 2 = 32 ns (integer ns).
  TraceStore s;
  auto mods = two_modules(s);
  const uint32_t mod = add_marker(s, "XlaModule:#hlo_module=jit_f,program_id=5#", 100, 9000, 1, kNone32);
  const auto thunk = [&](const std::string& op, uint64_t start, const std::string& kernel, uint64_t dur) {
    const uint32_t m = add_marker(s, "Thunk:#hlo_op=" + op + "#", start, start + 90, 1, mod);
    add_kernel(s, kernel, dur == 0 ? 0 : start + 10, dur, 1, m);
  };
  thunk("custom-call.2", 200, "sort_1", 10);
  thunk("custom-call.2", 300, "sort_1__1", 20);
  thunk("custom-call.2", 400, "sort_1__2", 30);
  thunk("custom-call.2", 500, "sort_1", 40);
  thunk("custom-call.2", 600, "sort_1__1", 0);
  thunk("loop_add_fusion.3", 700, "loop_add_fusion_3", 7);
  thunk("custom-call.2", 800, "sort_1__2", 5);

  const AttributionResult r = attribute(s, mods);
  const OpStats* sort = find_op(r, "jit_f", "custom-call.2");
  REQUIRE(sort);
  CHECK(sort->kernel_count == 6);
  CHECK(sort->executions == 3);
  CHECK(sort->timed_executions == 2);
  CHECK(sort->mean_ns == 32);
  const OpStats* fusion = find_op(r, "jit_f", "loop_add_fusion.3");
  REQUIRE(fusion);
  CHECK(fusion->executions == 1);
}

TEST_CASE("an execution's time past 2^32 ns is summed whole", "[attribution]") {
  // custom-call.2 runs twice, one thunk range each: m1 holds kernels of 3 s and 2 s (5 s,
  // past the 4.29 s a 32-bit sum holds), m2 one of 6 s (a single kernel past it) and one of
  // 1 s. By hand: 2 executions, both timed, total 12 s, mean 6 s.
  TraceStore s;
  auto mods = two_modules(s);
  constexpr uint64_t kS = 1'000'000'000;
  const uint32_t mod = add_marker(s, "XlaModule:#hlo_module=jit_f,program_id=5#", 100, 20 * kS, 1, kNone32);
  const uint32_t m1 = add_marker(s, "Thunk:#hlo_op=custom-call.2#", 110, 200, 1, mod);
  const uint32_t m2 = add_marker(s, "Thunk:#hlo_op=custom-call.2#", 300, 400, 1, mod);
  add_kernel(s, "sm90_xmma_gemm_f32f32_tn", 1000, 3 * kS, 1, m1);
  add_kernel(s, "splitKreduce_kernel", 1000 + 3 * kS, 2 * kS, 1, m1);
  add_kernel(s, "sm90_xmma_gemm_f32f32_tn", 6 * kS, 6 * kS, 1, m2);
  add_kernel(s, "splitKreduce_kernel", 12 * kS, kS, 1, m2);

  const AttributionResult r = attribute(s, mods);
  const OpStats* gemm = find_op(r, "jit_f", "custom-call.2");
  REQUIRE(gemm);
  CHECK(gemm->kernel_count == 4);
  CHECK(gemm->executions == 2);
  CHECK(gemm->timed_executions == 2);
  CHECK(gemm->total_ns == 12 * kS);
  CHECK(gemm->mean_ns == 6 * kS);
}

TEST_CASE("module resolution by program id, name and op", "[attribution]") {
  TraceStore s;
  std::vector<hlo::Module> mods;
  // Two compilations of jit_f (programs 5 and 6) with different ops, and jit_h.
  mods.push_back(module("jit_f", {comp("main", {instr("fusion.1", "fusion", "jit(f)/a", "/a.py", 1)}, true)}));
  s.hlo_modules.push_back(HloModuleText{"jit_f", 5, ""});
  mods.push_back(module("jit_f", {comp("main",
                                       {instr("fusion.1", "fusion", "jit(f)/b", "/a.py", 2),
                                        instr("fusion.2", "fusion", "jit(f)/c", "/a.py", 3)},
                                       true)}));
  s.hlo_modules.push_back(HloModuleText{"jit_f", 6, ""});
  mods.push_back(module("jit_h", {comp("main", {instr("sort.7", "sort", "jit(h)/sort", "/h.py", 7)}, true)}));
  s.hlo_modules.push_back(HloModuleText{"jit_h", 11, ""});

  const uint32_t p6 = add_marker(s, "XlaModule:#hlo_module=jit_f,program_id=6#", 0, 100, 1, kNone32);
  const uint32_t t6 = add_marker(s, "Thunk:#hlo_op=fusion.1#", 1, 10, 1, p6);
  const uint32_t nopid = add_marker(s, "XlaModule:#hlo_module=jit_f#", 200, 300, 1, kNone32);
  const uint32_t t2 = add_marker(s, "Thunk:#hlo_op=fusion.2#", 201, 210, 1, nopid);
  const uint32_t lone = add_marker(s, "Thunk:#hlo_op=sort.7,unique_hlo_op_id=3#", 400, 410, 1, kNone32);
  const uint32_t ghost_m = add_marker(s, "XlaModule:#hlo_module=jit_zz,program_id=77#", 500, 600, 1, kNone32);
  const uint32_t ghost = add_marker(s, "Thunk:#name=mul,hlo_op=multiply.3#", 501, 510, 1, ghost_m);
  // A user range between the thunk and the kernel does not hide the thunk.
  const uint32_t user = add_marker(s, "my region", 502, 505, 1, ghost);
  // A broken parent chain (self loop) must not hang.
  const uint32_t loop = add_marker(s, "loop", 700, 710, 1, kNone32);
  s.markers[loop].parent = loop;

  add_kernel(s, "fusion_1", 2, 5, 1, t6);        // program 6's fusion.1: line 2, not program 5's line 1
  add_kernel(s, "fusion_2", 202, 5, 1, t2);      // no program id: the jit_f holding fusion.2 (program 6)
  add_kernel(s, "sort_7", 401, 5, 1, lone);      // no module range: sort.7 exists only in jit_h
  add_kernel(s, "multiply_3", 503, 5, 1, user);  // module HLO not in the trace
  add_kernel(s, "k", 701, 5, 1, loop);

  const AttributionResult r = attribute(s, mods);
  CHECK(r.kernels[0].program_id == 6);
  CHECK(r.kernels[0].source_line == 2);
  CHECK(r.kernels[1].program_id == 6);
  CHECK(r.kernels[1].hlo_op == "fusion.2");
  CHECK(r.kernels[2].module_name == "jit_h");
  CHECK(r.kernels[2].method == MatchMethod::kNvtxThunk);
  CHECK(r.kernels[3].method == MatchMethod::kNvtxThunk);
  CHECK(r.kernels[3].module_name == "jit_zz");
  CHECK(r.kernels[3].program_id == 77);
  CHECK(r.kernels[3].hlo_op == "multiply.3");
  CHECK(r.kernels[3].op_name == "mul");
  CHECK(r.kernels[3].module_index == kNone32);
  CHECK(r.kernels[4].method == MatchMethod::kUnattributed);
  const OpStats* ghost_op = find_op(r, "jit_zz", "multiply.3");
  REQUIRE(ghost_op);
  CHECK_FALSE(ghost_op->has_cost);
  CHECK(ghost_op->total_ns == 5);

  // fusion.1 of program 5 got nothing: only program 6's did.
  for (const auto& o : r.ops) CHECK_FALSE((o.program_id == 5));
}

TEST_CASE("ambiguous names and library call sites stay unattributed without context", "[attribution]") {
  TraceStore s;
  auto mods = two_modules(s);
  // Add a second cuBLAS call site to jit_f: a library kernel next to a jit_f kernel is ambiguous.
  auto gemm2 = instr("custom-call.5", "custom-call");
  gemm2.detail().custom_call_target = "__cublas$lt$matmul";
  mods[0].computations[1].instructions.push_back(gemm2);
  mods[0].computations[1].index.insert(mods[0].computations[1].instructions.size() - 1,
                                       mods[0].computations[1].instructions);

  add_kernel(s, "loop_add_fusion_3", 100, 10, 4, kNone32);    // alone on its stream: which module?
  add_kernel(s, "custom_call_2", 200, 10, 5, kNone32);        // jit_f only -> context for the next
  add_kernel(s, "sm80_xmma_gemm_bf16", 300, 10, 5, kNone32);  // 2 cuBLAS sites in jit_f
  const AttributionResult r = attribute(s, mods);
  CHECK(r.kernels[0].method == MatchMethod::kUnattributed);
  CHECK(r.kernels[0].reason.find("2 modules") != std::string::npos);
  CHECK(r.kernels[1].method == MatchMethod::kKernelName);
  CHECK(r.kernels[2].method == MatchMethod::kUnattributed);
  CHECK(r.kernels[2].reason.find("2 cuBLAS call sites") != std::string::npos);
  CHECK(r.unattributed_count == 2);
  CHECK(r.unattributed_ns == 20);
}

TEST_CASE("module count mismatch is an error", "[attribution]") {
  TraceStore s;
  s.hlo_modules.push_back(HloModuleText{"m", 1, ""});
  CHECK_THROWS_AS(attribute(s, std::vector<hlo::Module>{}), Error);
}

TEST_CASE("attribution with a real XLA dump (CPU jit_f) and the HLO parser", "[attribution]") {
  // tests/data/attribution/jit_f_cpu_after_optimizations.txt: XLA's dump of
  //   def f(x, y): return jnp.sin(x) * y + 1.0      (line 3 of /tmp/t1.py)
  // whose entry root is the fusion broadcast_add_fusion (metadata stack_frame_id=2 -> line 3).
  TraceStore s;
  s.hlo_modules.push_back(HloModuleText{
      "jit_f", 4, read_file(std::string(FPGAPROF_TEST_DATA_DIR) + "/attribution/jit_f_cpu_after_optimizations.txt")});
  s.hlo_modules.push_back(HloModuleText{"broken", 8, "HloModule broken\n\nENTRY %e { this is not HLO"});
  const uint32_t m = add_marker(s, "XlaModule:#prefix=jit(f),hlo_module=jit_f,program_id=4#", 0, 100, 1, kNone32);
  const uint32_t t = add_marker(s, "Thunk:#name=add,hlo_op=broadcast_add_fusion#", 1, 50, 1, m);
  add_kernel(s, "broadcast_add_fusion", 10, 7, 1, t);
  add_kernel(s, "broadcast_add_fusion", 60, 9, 1, kNone32);

  const AttributionResult r = attribute(s);
  REQUIRE(r.kernels.size() == 2);
  CHECK(r.kernels[0].method == MatchMethod::kNvtxThunk);
  CHECK(r.kernels[0].hlo_op == "broadcast_add_fusion");
  CHECK(r.kernels[0].category == "fusion:kLoop");
  CHECK(r.kernels[0].op_name == "jit(f)/add");
  CHECK(r.kernels[0].source_file == "/tmp/t1.py");
  CHECK(r.kernels[0].source_line == 3);
  CHECK(r.kernels[1].method == MatchMethod::kKernelName);
  CHECK(r.kernels[1].hlo_op == "broadcast_add_fusion");
  REQUIRE(r.ops.size() == 1);
  CHECK(r.ops[0].total_ns == 16);
  CHECK(r.ops[0].executions == 2);
  CHECK(r.ops[0].has_cost);
  // 128 elements: sine (transcendental), multiply, add -> 2 flops/element = 256 flops; bytes at
  // the fusion boundary: 2 inputs + 1 output of f32[128] = 3 * 512 = 1536.
  CHECK(r.ops[0].flops == 256);
  CHECK(r.ops[0].transcendentals == 128);
  CHECK(r.ops[0].bytes_accessed == 1536);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].message.find("broken") != std::string::npos);
  CHECK(r.warnings[0].code() == "hlo.module_unparsed");
}

TEST_CASE("kernels of CUDA graphs (command buffers) prefer their own name over the range", "[attribution]") {
  // jit_f has loop_add_fusion.3 and custom-call.2. One command-buffer launch inside the range
  // of loop_add_fusion.3 runs three graph kernels: "custom_call_2" (named like the other
  // instruction -> kernel_name, custom-call.2), "loop_add_fusion_3" (-> kernel_name, same op as
  // the range) and "graph_only_kernel" (no instruction of that name -> the range's op).
  // A kernel without graph_id in the same range keeps the range's op even with another name.
  TraceStore s;
  auto mods = two_modules(s);
  const uint32_t m0 = add_marker(s, "XlaModule:#hlo_module=jit_f,program_id=5#", 0, 1000, 1, kNone32);
  const uint32_t t = add_marker(s, "Thunk:#hlo_op=loop_add_fusion.3#", 10, 900, 1, m0);
  add_kernel(s, "custom_call_2", 100, 10, 1, t);
  add_kernel(s, "loop_add_fusion_3", 200, 10, 1, t);
  add_kernel(s, "graph_only_kernel", 300, 10, 1, t);
  add_kernel(s, "custom_call_2", 400, 10, 1, t);
  LaunchConfig in_graph;
  in_graph.graph_id = 42;
  const uint32_t graph_config = s.intern_launch_config(in_graph);
  for (int i = 0; i < 3; ++i) s.kernels[static_cast<std::size_t>(i)].launch_config = graph_config;

  const AttributionResult r = attribute(s, mods);
  CHECK(r.kernels[0].method == MatchMethod::kKernelName);
  CHECK(r.kernels[0].hlo_op == "custom-call.2");
  CHECK(r.kernels[1].method == MatchMethod::kKernelName);
  CHECK(r.kernels[1].hlo_op == "loop_add_fusion.3");
  CHECK(r.kernels[1].module_name == "jit_f");
  CHECK(r.kernels[2].method == MatchMethod::kNvtxThunk);
  CHECK(r.kernels[2].hlo_op == "loop_add_fusion.3");
  CHECK(r.kernels[3].method == MatchMethod::kNvtxThunk);
  CHECK(r.kernels[3].hlo_op == "loop_add_fusion.3");
}

TEST_CASE("kernel names demangled for display, as c++filt prints them", "[attribution]") {
  // Expected text: binutils' c++filt on the same symbols (CUB's segmented radix sort as XLA's
  // cub_sort_pairs launched it on an H200, 2026-11-26; XProf showed the same text).
  CHECK(demangle_kernel_name(
            "_ZN3cub39_V_300200_SM_750_800_900_1000_1100_12006detail10radix_sort30DeviceSegmentedRadixSortKernelINS1_"
            "5radix10policy_hubIijiE10Policy1000ELb1ELNS0_9SortOrderE0EijPiS9_iNS1_21identity_decomposer_tEEEvPKT2_PSB_"
            "PKT3_PSF_T4_T5_iiT7_") ==
        "void cub::_V_300200_SM_750_800_900_1000_1100_1200::detail::radix_sort::DeviceSegmentedRadixSortKernel<"
        "cub::_V_300200_SM_750_800_900_1000_1100_1200::detail::radix::policy_hub<int, unsigned int, int>::Policy1000, "
        "true, (cub::_V_300200_SM_750_800_900_1000_1100_1200::SortOrder)0, int, unsigned int, int*, int*, int, "
        "cub::_V_300200_SM_750_800_900_1000_1100_1200::detail::identity_decomposer_t>(int const*, int*, unsigned int "
        "const*, unsigned int*, int*, int*, int, int, cub::_V_300200_SM_750_800_900_1000_1100_1200::detail::identity_"
        "decomposer_t)");
  CHECK(demangle_kernel_name("_Z6kernelPfi") == "kernel(float*, int)");
  // XLA's and Triton's kernels are plain names; a broken symbol and "_Z" alone stay as they are
  CHECK(demangle_kernel_name("loop_add_fusion") == "loop_add_fusion");
  CHECK(demangle_kernel_name("_fwd_kernel__1") == "_fwd_kernel__1");
  CHECK(demangle_kernel_name("_ZN3cub") == "_ZN3cub");
  CHECK(demangle_kernel_name("_Z") == "_Z");
  CHECK(demangle_kernel_name("") == "");
}

// Cost model rules, one test per rule, with the expected numbers worked out by hand in the
// comments (XLA's HloCostAnalysis conventions, docs/cost-model.md).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fpgaprof/hlo/cost_model.hpp"
#include "fpgaprof/hlo/hlo_parser.hpp"

using namespace fpgaprof::hlo;

namespace {

Module run(const std::string& body, const std::string& extra = "") {
  return analyze_hlo("HloModule t\n" + extra + "\nENTRY e {\n" + body + "}\n");
}
const Instruction& ins(const Module& m, const char* name) {
  const Instruction* i = m.find_instruction(name);
  REQUIRE(i != nullptr);
  return *i;
}

const char* kAdd = R"(add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

}  // namespace

TEST_CASE("elementwise: one flop per output element, transcendentals separate", "[hlo][cost]") {
  Module m = run(R"(  x = f32[100,10]{1,0} parameter(0)
  y = f32[100,10]{1,0} multiply(x, x)
  ROOT z = f32[100,10]{1,0} exponential(y)
)");
  // multiply: 1000 flops, reads 2 x 4000 B, writes 4000 B
  CHECK(ins(m, "y").cost.flops == 1000);
  CHECK(ins(m, "y").cost.bytes_read == 8000);
  CHECK(ins(m, "y").cost.bytes_written == 4000);
  CHECK(ins(m, "y").pattern == AccessPattern::kElementwise);
  // exp: 1000 transcendentals, 0 flops
  CHECK(ins(m, "z").cost.transcendentals == 1000);
  CHECK(ins(m, "z").cost.flops == 0);
  CHECK(m.total.flops == 1000);
  CHECK(m.total.bytes_accessed() == 12000 + 8000);
}

TEST_CASE("data movement: no flops, slice reads only its output, bitcast and parameters are free",
          "[hlo][cost]") {
  Module m = run(R"(  x = f32[64,32]{1,0} parameter(0)
  b = f32[32,64]{0,1} transpose(x), dimensions={1,0}
  c = f32[32,64]{1,0} transpose(x), dimensions={1,0}
  s = f32[8,32]{1,0} slice(x), slice={[0:8], [0:32]}
  r = f32[2048]{0} reshape(x)
  ROOT t = (f32[32,64]{0,1}, f32[32,64]{1,0}, f32[8,32]{1,0}, f32[2048]{0}) tuple(b, c, s, r)
)");
  CHECK(ins(m, "x").cost.bytes_accessed() == 0);
  // b: layout {0,1} of a {1,0} transpose is the same memory -> bitcast, 0 bytes
  CHECK(ins(m, "b").cost.bytes_accessed() == 0);
  // c: a real transpose reads 8192 B and writes 8192 B
  CHECK(ins(m, "c").cost.bytes_accessed() == 16384);
  // slice: 8*32*4 = 1024 B read and written
  CHECK(ins(m, "s").cost.bytes_read == 1024);
  CHECK(ins(m, "s").cost.bytes_written == 1024);
  CHECK(ins(m, "r").cost.flops == 0);
  // tuple: writes its table of 4 pointers (32 B), reads nothing
  CHECK(ins(m, "t").cost.bytes_written == 32);
  CHECK(ins(m, "t").cost.bytes_read == 0);
}

TEST_CASE("dot: 2 x output elements x contracted size", "[hlo][cost]") {
  Module m = run(R"(  a = f32[4,16,32]{2,1,0} parameter(0)
  b = f32[4,32,8]{2,1,0} parameter(1)
  ROOT d = f32[4,16,8]{2,1,0} dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
)");
  // 4*16*8 = 512 outputs x 32 x 2 = 32768
  CHECK(ins(m, "d").cost.flops == 32768);
  CHECK(ins(m, "d").pattern == AccessPattern::kDot);
  CHECK(ins(m, "d").cost.bytes_read == 4 * 16 * 32 * 4 + 4 * 32 * 8 * 4);
}

TEST_CASE("convolution: multiply-adds over valid (kernel, output) positions", "[hlo][cost]") {
  Module m = run(R"(  x = f32[1,1,5]{2,1,0} parameter(0)
  k = f32[1,1,3]{2,1,0} parameter(1)
  ROOT c = f32[1,1,5]{2,1,0} convolution(x, k), window={size=3 pad=1_1}, dim_labels=bf0_oi0->bf0
)");
  // 1-D, input 5, kernel 3, pad 1 each side, output 5: of the 15 (kernel, output) pairs the two
  // that hit padding (first output x first tap, last output x last tap) do not count: 13 MACs.
  CHECK(ins(m, "c").cost.flops == 26);
  CHECK(ins(m, "c").pattern == AccessPattern::kConvolution);
}

TEST_CASE("reduce: (input - output elements) applications of the reducer", "[hlo][cost]") {
  Module m = run(R"(  x = f32[10,20]{1,0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[10]{0} reduce(x, z), dimensions={1}, to_apply=add
)", kAdd);
  // 200 - 10 = 190 adds
  CHECK(ins(m, "r").cost.flops == 190);
  CHECK(ins(m, "r").pattern == AccessPattern::kReduction);
  // reads x (800 B) and the scalar init (4 B), writes 40 B
  CHECK(ins(m, "r").cost.bytes_accessed() == 844);
}

TEST_CASE("reduce-window: (window - 1) reducer applications per output", "[hlo][cost]") {
  Module m = run(R"(  x = f32[8,8]{1,0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4,4]{1,0} reduce-window(x, z), window={size=2x2 stride=2x2}, to_apply=add
)", kAdd);
  // 16 outputs x 3 adds = 48
  CHECK(ins(m, "r").cost.flops == 48);
  CHECK(ins(m, "r").pattern == AccessPattern::kStencil);
}

TEST_CASE("reduce-window as a prefix sum over a whole padded dimension", "[hlo][cost]") {
  Module m = run(R"(  x = f32[16]{0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[16]{0} reduce-window(x, z), window={size=31 pad=15_15}, to_apply=add
)", kAdd);
  // XLA's cumsum rule: outputs/span + (span - 1) = 16/16 + 15 = 16
  CHECK(ins(m, "r").cost.flops == 16);
}

TEST_CASE("select-and-scatter: (window-1) selects + 1 scatter per source element", "[hlo][cost]") {
  Module m = run(R"(  x = f32[4,4]{1,0} parameter(0)
  s = f32[2,2]{1,0} parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4,4]{1,0} select-and-scatter(x, s, z), window={size=2x2 stride=2x2}, select=ge, scatter=add
)", std::string(kAdd) + R"(ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
)");
  // 4 source elements: 4 x 3 compares + 4 x 1 adds = 16
  CHECK(ins(m, "r").cost.flops == 16);
}

TEST_CASE("gather and scatter read the slices they touch, not the whole operand", "[hlo][cost]") {
  Module m = run(R"(  x = f32[1000,8]{1,0} parameter(0)
  i = s32[5,1]{1,0} parameter(1)
  u = f32[5,8]{1,0} parameter(2)
  g = f32[5,8]{1,0} gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
  ROOT sc = f32[1000,8]{1,0} scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
)", kAdd);
  // gather: output 160 B read from x + 20 B indices; 160 B written
  CHECK(ins(m, "g").cost.bytes_read == 180);
  CHECK(ins(m, "g").cost.bytes_written == 160);
  CHECK(ins(m, "g").cost.flops == 0);
  // scatter: 3 x 160 B (operand part, updates, output part) + 20 B indices; 40 adds
  CHECK(ins(m, "sc").cost.bytes_accessed() == 500);
  CHECK(ins(m, "sc").cost.flops == 40);
  CHECK(ins(m, "sc").pattern == AccessPattern::kGatherScatter);
}

TEST_CASE("sort: n * ceil(log2 n), fft: 8 * prod(floor(log2 len)) * n", "[hlo][cost]") {
  Module m = run(R"(  x = f32[1000]{0} parameter(0)
  y = s32[1000]{0} parameter(1)
  s = (f32[1000]{0}, s32[1000]{0}) sort(x, y), dimensions={0}, to_apply=lt
  c = c64[4,256]{1,0} parameter(2)
  ROOT f = c64[4,256]{1,0} fft(c), fft_type=FFT, fft_length={256}
)", R"(lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT
}
)");
  // 1000 * ceil(log2 1000) = 1000 * 10
  CHECK(ins(m, "s").cost.flops == 10000);
  // reads 8000 B, writes both arrays 8000 B
  CHECK(ins(m, "s").cost.bytes_accessed() == 16000);
  // 2 * 4 * log2(256)=8 * 1024 elements = 65536
  CHECK(ins(m, "f").cost.flops == 65536);
  CHECK(ins(m, "f").pattern == AccessPattern::kFft);
}

TEST_CASE("dynamic-slice and in-place dynamic-update-slice", "[hlo][cost]") {
  Module m = run(R"(  x = f32[100,10]{1,0} parameter(0)
  i = s32[] parameter(1)
  j = s32[] constant(0)
  d = f32[4,10]{1,0} dynamic-slice(x, i, j), dynamic_slice_sizes={4,10}
  ROOT u = f32[100,10]{1,0} dynamic-update-slice(x, d, i, j)
)");
  // dynamic-slice: 160 B read + 4 B first index, 160 B written
  CHECK(ins(m, "d").cost.bytes_accessed() == 324);
  // update in place: 160 B update read + 4 B index, 160 B written
  CHECK(ins(m, "u").cost.bytes_read == 164);
  CHECK(ins(m, "u").cost.bytes_written == 160);
}

TEST_CASE("fusion: flops of the fused computation, bytes at the boundary only", "[hlo][cost]") {
  Module m = run(R"(  x = f32[256]{0} parameter(0)
  y = f32[256]{0} parameter(1)
  ROOT f = f32[256]{0} fusion(x, y), kind=kLoop, calls=fc
)", R"(fc {
  p0 = f32[256]{0} parameter(0)
  p1 = f32[256]{0} parameter(1)
  m = f32[256]{0} multiply(p0, p1)
  e = f32[256]{0} exponential(m)
  sl = f32[16]{0} slice(p1), slice={[0:16]}
  b = f32[256]{0} broadcast(sl), dimensions={}
  ROOT a = f32[256]{0} add(e, p0)
}
)");
  const Cost& c = ins(m, "f").cost;
  // multiply + add = 512 flops, exp = 256 transcendentals
  CHECK(c.flops == 512);
  CHECK(c.transcendentals == 256);
  // p0 read once (1024 B); p1: the multiply reads it all (1024 B) and the slice reads 64 B
  CHECK(c.bytes_read == 1024 + 1024 + 64);
  CHECK(c.bytes_written == 1024);
  CHECK(c.working_set_bytes == 1024);
  CHECK(ins(m, "f").pattern == AccessPattern::kElementwise);
}

TEST_CASE("fusion with a dynamic-update-slice root writes only the update", "[hlo][cost]") {
  Module m = run(R"(  x = f32[1000]{0} parameter(0)
  u = f32[10]{0} parameter(1)
  i = s32[] parameter(2)
  ROOT f = f32[1000]{0} fusion(x, u, i), kind=kLoop, calls=fc
)", R"(fc {
  p0 = f32[1000]{0} parameter(0)
  p1 = f32[10]{0} parameter(1)
  p2 = s32[] parameter(2)
  n = f32[10]{0} negate(p1)
  ROOT d = f32[1000]{0} dynamic-update-slice(p0, n, p2)
}
)");
  // written 40 B (the update); read: p0 aliased (0), p1 40 B, p2 4 B
  CHECK(ins(m, "f").cost.bytes_written == 40);
  CHECK(ins(m, "f").cost.bytes_read == 44);
  CHECK(ins(m, "f").cost.flops == 10);
}

TEST_CASE("while: one iteration of body + condition, flagged per_iteration", "[hlo][cost]") {
  Module m = run(R"(  x = f32[100]{0} parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[100]{0}) tuple(z, x)
  ROOT w = (s32[], f32[100]{0}) while(t), condition=cond, body=body, backend_config={"known_trip_count":{"n":"7"}}
)", R"(body {
  p = (s32[], f32[100]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[100]{0} get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  n = f32[100]{0} multiply(v, v)
  ROOT r = (s32[], f32[100]{0}) tuple(j, n)
}
cond {
  p = (s32[], f32[100]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(7)
  ROOT c = pred[] compare(i, k), direction=LT
}
)");
  const Instruction& w = ins(m, "w");
  // body: add 1 + multiply 100; cond: compare 1
  CHECK(w.cost.flops == 102);
  CHECK(w.cost.per_iteration);
  CHECK(w.known_trip_count == 7);
  CHECK(w.pattern == AccessPattern::kControl);
  // bytes: body add 12 + multiply 1200 + tuple 16; cond compare 9
  CHECK(w.cost.bytes_accessed() == 12 + 1200 + 16 + 9);
}

TEST_CASE("conditional: the most expensive branch", "[hlo][cost]") {
  Module m = run(R"(  p = pred[] parameter(0)
  x = f32[10]{0} parameter(1)
  ROOT cnd = f32[10]{0} conditional(p, x, x), true_computation=t, false_computation=f
)", R"(t {
  a = f32[10]{0} parameter(0)
  ROOT e = f32[10]{0} exponential(a)
}
f {
  a = f32[10]{0} parameter(0)
  b = f32[10]{0} multiply(a, a)
  ROOT c = f32[10]{0} add(b, a)
}
)");
  CHECK(ins(m, "cnd").cost.flops == 20);
  CHECK(ins(m, "cnd").cost.transcendentals == 10);
  CHECK(ins(m, "cnd").cost.per_iteration);
}

TEST_CASE("custom calls: cuBLAS GEMM from backend_config, others unknown and counted", "[hlo][cost]") {
  Module m = run(R"(  a = f16[64,128]{1,0} parameter(0)
  b = f16[128,32]{1,0} parameter(1)
  g = (f16[64,32]{1,0}, s8[4194304]{0}) custom-call(a, b), custom_call_target="__cublas$gemm", backend_config={"gemm_backend_config":{"alpha_real":1,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]}}}
  ROOT u = f32[8]{0} custom-call(a), custom_call_target="my_kernel"
)");
  const Instruction& g = ins(m, "g");
  // 64*32 outputs x 128 x 2 = 524288
  CHECK(g.cost.flops == 524288);
  CHECK_FALSE(g.cost.unknown);
  CHECK(g.pattern == AccessPattern::kDot);
  // reads 16384 + 8192 B, writes the 4096 B result (workspace not counted)
  CHECK(g.cost.bytes_read == 24576);
  CHECK(g.cost.bytes_written == 4096);
  const Instruction& u = ins(m, "u");
  CHECK(u.cost.unknown);
  CHECK(u.pattern == AccessPattern::kLibraryCall);
  CHECK(m.unknown_cost_instructions == 1);
}

TEST_CASE("hand-written GPU HLO: attributes continued on the next lines, cuBLASLt matmul", "[hlo][cost]") {
  // The form of XLA's own GPU tests (no layouts on parameters, one attribute per line).
  Module m = analyze_hlo(R"(HloModule module

ENTRY main {
  p0 = f32[100,100] parameter(0)
  p1 = f32[100,100] parameter(1)
  %custom-call.1 = (f32[100,100]{1,0}, s8[4194304]{0}) custom-call(p0, p1),
    custom_call_target="__cublas$lt$matmul",
    backend_config={
      "gemm_backend_config":{
        "alpha_real":1,
        "dot_dimension_numbers":{
          "lhs_contracting_dimensions":["1"],
          "rhs_contracting_dimensions":["0"]
        }
      }
    }
  ROOT %get-tuple-element = f32[100,100]{1,0} get-tuple-element(%custom-call.1), index=0
}
)");
  const Instruction& g = ins(m, "custom-call.1");
  CHECK(g.custom_call_target == "__cublas$lt$matmul");
  // 100*100 outputs x 100 x 2
  CHECK(g.cost.flops == 2e6);
  CHECK(g.cost.bytes_read == 80000);
  CHECK(g.cost.bytes_written == 40000);
  CHECK(m.total.flops == 2e6);
}

namespace {

// XLA's tuple-element shorthand (as printed on an H100 by JAX 0.11: `%arg_tuple.1#2`) and the
// same module with explicit get-tuple-element instructions, which is what the shorthand means.
const char* kShorthand = R"(HloModule m, is_scheduled=true

%fused_add (p0: f32[1024], p1: f32[1024]) -> f32[1024] {
  %p0 = f32[1024]{0} parameter(0)
  %p1 = f32[1024]{0} parameter(1)
  ROOT %a = f32[1024]{0} add(%p0, %p1)
}

%body (arg: (s32[], f32[1024], f32[1024])) -> (s32[], f32[1024], f32[1024]) {
  %arg = (s32[], f32[1024]{0}, f32[1024]{0}) parameter(0)
  %one = s32[] constant(1)
  %i = s32[] add(%arg#0, %one)
  %f = f32[1024]{0} fusion(%arg#1, %arg#2), kind=kLoop, calls=%fused_add
  ROOT %t = (s32[], f32[1024]{0}, f32[1024]{0}) tuple(%i, %f, %arg#2)
}

%cond (arg.c: (s32[], f32[1024], f32[1024])) -> pred[] {
  %arg.c = (s32[], f32[1024]{0}, f32[1024]{0}) parameter(0)
  %n = s32[] constant(8)
  ROOT %lt = pred[] compare(%arg.c#0, %n), direction=LT
}

ENTRY %e (x: f32[1024], y: f32[1024]) -> f32[1024] {
  %x = f32[1024]{0} parameter(0)
  %y = f32[1024]{0} parameter(1)
  %z = s32[] constant(0)
  %init = (s32[], f32[1024]{0}, f32[1024]{0}) tuple(%z, %x, %y)
  %w = (s32[], f32[1024]{0}, f32[1024]{0}) while(%init), condition=%cond, body=%body, backend_config={"known_trip_count":{"n":"8"}}
  ROOT %neg = f32[1024]{0} negate(%w#1)
}
)";

const char* kExplicit = R"(HloModule m, is_scheduled=true

%fused_add (p0: f32[1024], p1: f32[1024]) -> f32[1024] {
  %p0 = f32[1024]{0} parameter(0)
  %p1 = f32[1024]{0} parameter(1)
  ROOT %a = f32[1024]{0} add(%p0, %p1)
}

%body (arg: (s32[], f32[1024], f32[1024])) -> (s32[], f32[1024], f32[1024]) {
  %arg = (s32[], f32[1024]{0}, f32[1024]{0}) parameter(0)
  %g0 = s32[] get-tuple-element(%arg), index=0
  %g1 = f32[1024]{0} get-tuple-element(%arg), index=1
  %g2 = f32[1024]{0} get-tuple-element(%arg), index=2
  %one = s32[] constant(1)
  %i = s32[] add(%g0, %one)
  %f = f32[1024]{0} fusion(%g1, %g2), kind=kLoop, calls=%fused_add
  ROOT %t = (s32[], f32[1024]{0}, f32[1024]{0}) tuple(%i, %f, %g2)
}

%cond (arg.c: (s32[], f32[1024], f32[1024])) -> pred[] {
  %arg.c = (s32[], f32[1024]{0}, f32[1024]{0}) parameter(0)
  %gc = s32[] get-tuple-element(%arg.c), index=0
  %n = s32[] constant(8)
  ROOT %lt = pred[] compare(%gc, %n), direction=LT
}

ENTRY %e (x: f32[1024], y: f32[1024]) -> f32[1024] {
  %x = f32[1024]{0} parameter(0)
  %y = f32[1024]{0} parameter(1)
  %z = s32[] constant(0)
  %init = (s32[], f32[1024]{0}, f32[1024]{0}) tuple(%z, %x, %y)
  %w = (s32[], f32[1024]{0}, f32[1024]{0}) while(%init), condition=%cond, body=%body, backend_config={"known_trip_count":{"n":"8"}}
  %gw = f32[1024]{0} get-tuple-element(%w), index=1
  ROOT %neg = f32[1024]{0} negate(%gw)
}
)";

}  // namespace

TEST_CASE("tuple-element shorthand %t#N costs what explicit get-tuple-element does", "[hlo][cost][parser]") {
  Module s = analyze_hlo(kShorthand);
  Module x = analyze_hlo(kExplicit);
  // The shorthand becomes one get-tuple-element per distinct element, named as printed.
  const Computation* body = s.find("body");
  REQUIRE(body != nullptr);
  const Instruction* g1 = body->find("arg#1");
  REQUIRE(g1 != nullptr);
  CHECK(g1->opcode == "get-tuple-element");
  CHECK(g1->operands == std::vector<std::string>{"arg"});
  CHECK(g1->attributes.at("index") == "1");
  CHECK(g1->shape.dims == std::vector<int64_t>{1024});
  CHECK(g1->line == 0);  // no text of its own
  const Instruction& f = ins(s, "f");
  REQUIRE(f.operand_shapes.size() == 2);
  CHECK(f.operand_shapes[0].dims == std::vector<int64_t>{1024});
  CHECK(body->instructions[f.operand_indices[1]].name == "arg#2");
  // One get-tuple-element for arg#2 although it is used twice (by %f and by the ROOT tuple).
  int count = 0;
  for (const Instruction& i : body->instructions) count += i.name == "arg#2";
  CHECK(count == 1);
  // Every instruction both texts share costs the same; so do the totals.
  for (const char* name : {"i", "f", "t", "lt", "init", "w", "neg"}) {
    INFO(name);
    CHECK(ins(s, name).cost.flops == ins(x, name).cost.flops);
    CHECK(ins(s, name).cost.bytes_read == ins(x, name).cost.bytes_read);
    CHECK(ins(s, name).cost.bytes_written == ins(x, name).cost.bytes_written);
  }
  CHECK(s.total.flops == x.total.flops);
  CHECK(s.total.bytes_read == x.total.bytes_read);
  CHECK(s.total.bytes_written == x.total.bytes_written);
  // By hand: negate of element 1 of the loop result: 1024 flops, reads and writes 4096 B; the
  // fused add in the body: 1024 flops, reads 2 x 4096 B, writes 4096 B per iteration.
  CHECK(ins(s, "neg").cost.flops == 1024);
  CHECK(ins(s, "neg").cost.bytes_read == 4096);
  CHECK(ins(s, "neg").cost.bytes_written == 4096);
  CHECK(ins(s, "f").cost.flops == 1024);
  CHECK(ins(s, "f").cost.bytes_read == 8192);
  CHECK(ins(s, "f").cost.bytes_written == 4096);
}

TEST_CASE("tuple-element shorthand errors name the operand and the fix", "[hlo][parser]") {
  const std::string head = "HloModule m\nENTRY e {\n  p = (f32[2]{0}, f32[3]{0}) parameter(0)\n  q = f32[2]{0} parameter(1)\n";
  auto message = [&](const std::string& line) -> std::string {
    try {
      parse_hlo_module(head + line + "}\n");
    } catch (const HloParseError& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK_THAT(message("  ROOT n = f32[2]{0} negate(p#2)\n"),
             Catch::Contains("line 5") && Catch::Contains("'p#2' to name an element of a tuple-shaped instruction ('p' has 2 elements)"));
  CHECK_THAT(message("  ROOT n = f32[2]{0} negate(q#0)\n"), Catch::Contains("('q' has no tuple shape)"));
  CHECK_THAT(message("  ROOT n = f32[2]{0} negate(r#0)\n"), Catch::Contains("operand 'r' (of 'r#0') defined in computation 'e'"));
  CHECK_THAT(message("  ROOT n = f32[2]{0} negate(p#)\n"), Catch::Contains("expected a tuple index after '#' in operand 'p'"));
  CHECK(message("  ROOT n = f32[3]{0} negate(p#1)\n") == "no error");
}

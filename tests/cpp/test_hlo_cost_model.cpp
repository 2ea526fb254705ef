// Cost model rules, one test per rule, with the expected numbers worked out by hand in the
// comments (XLA's HloCostAnalysis conventions, docs/cost-model.md).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
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

TEST_CASE("data movement: no flops, slice reads only its output, bitcast and parameters are free", "[hlo][cost]") {
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

TEST_CASE("convolution: large strided or dilated windows are counted exactly, not bounded", "[hlo][cost]") {
  // A transposed 1-D convolution (lhs_dilate=2: 5,000,000 inputs upsampled to 9,999,999, 32
  // taps, pad 31 each side: output 10,000,030): kl x ol = 3.2e8 pairs, past what is
  // enumerated. Each input element meets all 32 taps exactly once: 5,000,000 x 32 =
  // 160,000,000 MACs (XLA's HloCostAnalysis: 320,000,000 flops). Before, every pair counted
  // (taps on the dilation holes too): about twice that.
  Module m = run(R"(  x = f32[1,1,5000000]{2,1,0} parameter(0)
  k = f32[32,1,1]{2,1,0} parameter(1)
  ROOT c = f32[1,1,10000030]{2,1,0} convolution(x, k), window={size=32 pad=31_31 lhs_dilate=2}, dim_labels=bf0_0io->bf0
)");
  CHECK(ins(m, "c").cost.flops == 320'000'000);
  // The 'full' correlation of two 12,000,000-sample signals (stride 1, more than 1e7 taps):
  // every pair of samples once, n^2 MACs = 2.88e14 flops (by hand; XLA would enumerate 2.9e14
  // pairs). Before, past 1e7 taps every (tap, output) pair counted: 5.76e14.
  Module full = run(R"(  x = f32[1,1,12000000]{2,1,0} parameter(0)
  k = f32[12000000,1,1]{2,1,0} parameter(1)
  ROOT c = f32[1,1,23999999]{2,1,0} convolution(x, k), window={size=12000000 pad=11999999_11999999}, dim_labels=bf0_0io->bf0
)");
  CHECK(ins(full, "c").cost.flops == Approx(2.0 * 12e6 * 12e6));
}

TEST_CASE("reduce: (input - output elements) applications of the reducer", "[hlo][cost]") {
  Module m = run(R"(  x = f32[10,20]{1,0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[10]{0} reduce(x, z), dimensions={1}, to_apply=add
)",
                 kAdd);
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
)",
                 kAdd);
  // 16 outputs x 3 adds = 48
  CHECK(ins(m, "r").cost.flops == 48);
  CHECK(ins(m, "r").pattern == AccessPattern::kStencil);
}

TEST_CASE("reduce-window as a prefix sum over a whole padded dimension", "[hlo][cost]") {
  Module m = run(R"(  x = f32[16]{0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[16]{0} reduce-window(x, z), window={size=31 pad=15_15}, to_apply=add
)",
                 kAdd);
  // XLA's cumsum rule: outputs/span + (span - 1) = 16/16 + 15 = 16
  CHECK(ins(m, "r").cost.flops == 16);
}

TEST_CASE("select-and-scatter: (window-1) selects + 1 scatter per source element", "[hlo][cost]") {
  Module m = run(R"(  x = f32[4,4]{1,0} parameter(0)
  s = f32[2,2]{1,0} parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4,4]{1,0} select-and-scatter(x, s, z), window={size=2x2 stride=2x2}, select=ge, scatter=add
)",
                 std::string(kAdd) + R"(ge {
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
)",
                 kAdd);
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
)",
                 R"(lt {
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
)",
                 R"(fc {
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
)",
                 R"(fc {
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
)",
                 R"(body {
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
)",
                 R"(t {
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
  CHECK(g.custom_call_target() == "__cublas$lt$matmul");
  // XLA's GpuHloCostAnalysisTest.CublasCustomCall (gpu_hlo_cost_analysis_test.cc, newer than
  // the corpus) expects 40,000 B read per operand and 40,000 B written: the f32 result, not the
  // s8 workspace.
  // 100*100 outputs x 100 x 2
  CHECK(g.cost.flops == 2e6);
  CHECK(g.cost.bytes_read == 80000);
  CHECK(g.cost.bytes_written == 40000);
  CHECK(m.total.flops == 2e6);
}

TEST_CASE("cuDNN convolution custom call: XLA's GPU cost analysis test, its flops and bytes", "[hlo][cost]") {
  // The module of XLA's GpuHloCostAnalysisTest.ConvCustomCall
  // (xla/service/gpu/model/gpu_hlo_cost_analysis_test.cc), written as XLA's tests write it
  // (no shape on the ROOT tuple). XLA's expectations there: operand bytes 128*12*24*24*4,
  // 16*12*5*5*4 and 4*16, output bytes 128*4*24*24*4 (the s8 result, not the u8[0] scratch),
  // flop_count 159694848.
  Module m = analyze_hlo(R"(HloModule module, is_scheduled=true

ENTRY entry {
  p0 = s8[128,12,24,24,4]{4,3,2,1,0} parameter(0)
  p1 = s8[16,12,5,5,4]{4,3,2,1,0} parameter(1)
  p2 = f32[16]{0} parameter(2)
  conv1 = (s8[128,4,24,24,4]{4,3,2,1,0}, u8[0]{0}) custom-call(p0, p1, p2),
              window={size=5x5 pad=2_2x2_2},
              dim_labels=bf01_oi01->bf01,
              custom_call_target="__cudnn$convBiasActivationForward"
  ROOT tuple = tuple(conv1)
}
)");
  const Instruction& c = ins(m, "conv1");
  CHECK_FALSE(c.cost.unknown);
  CHECK(c.pattern == AccessPattern::kConvolution);
  CHECK(c.cost.flops == 159694848);
  CHECK(c.cost.bytes_read == 128 * 12 * 24 * 24 * 4 + 16 * 12 * 5 * 5 * 4 + 4 * 16);
  CHECK(c.cost.bytes_written == 128 * 4 * 24 * 24 * 4);
  CHECK(c.cost.output_bytes == 128 * 4 * 24 * 24 * 4);
  // By hand, the same figure: per spatial dimension the 5 taps over 24 outputs with pad 2 meet
  // 22 + 23 + 24 + 23 + 22 = 114 real inputs; input features 12 (the dim labelled f, not the
  // vector dim), output features 4, batch 128: 2 x 12 x 4 x 128 x 114^2 = 159,694,848.
  CHECK(c.cost.flops == 2.0 * 12 * 4 * 128 * 114 * 114);
  CHECK(m.unknown_cost_instructions == 0);
}

TEST_CASE("cuDNN backward-input call: dim_labels read against operand 0 and the result as XLA does", "[hlo][cost]") {
  // The call of XLA's conv_padding_legalization_test.cc (a constant kernel made a parameter).
  // For a backward-input call dim_labels give the cuDNN view (conv_rewriter.cc,
  // MatchBackwardInput): bf01 is the result (dx), b01f operand 0 (dy). XLA's
  // GetConvolutionFlops still takes operand 0 as input and the result as output:
  //   input features = operand 0 dim 1 = 2, batch = operand 0 dim 0 = 2,
  //   output features = result dim 3 = 4,
  //   spatial 0: 2 taps x 2 outputs, stride 2, input extent 2 (operand 0 dim 2):
  //     output 0 meets inputs 0, 1; output 1 meets 2, 3 (out): 2 pairs,
  //   spatial 1: 3 taps x 4 outputs (result dim 2), stride 2, input extent 3 (operand 0 dim 3):
  //     output 0: 0, 1, 2; output 1: 2 (3, 4 out); outputs 2, 3: none: 4 pairs,
  //   2 x 2 x 4 x 2 x (2 x 4) = 256 FLOPs.
  // (Read the cuDNN way, dx 4x4 with 2 features to dy 2x2 with 3, the multiply-adds are
  // 2 x 2 x 3 x (4 x 5) = 240: 480 FLOPs. fpgaprof reports XLA's figure.)
  Module m = run(R"(  dy = f64[2,2,2,3]{3,2,1,0} parameter(0)
  w = f64[2,3,2,3]{3,2,1,0} parameter(1)
  ROOT c = (f64[2,2,4,4]{3,2,1,0}, u8[0]{0}) custom-call(dy, w), window={size=2x3 stride=2x2 pad=0_0x0_1}, dim_labels=bf01_01io->b01f, custom_call_target="__cudnn$convBackwardInput"
)");
  const Instruction& c = ins(m, "c");
  CHECK_FALSE(c.cost.unknown);
  CHECK(c.cost.flops == 256);
  // reads 24 + 36 f64, writes the 64 f64 of dx
  CHECK(c.cost.bytes_read == 480);
  CHECK(c.cost.bytes_written == 512);
}

TEST_CASE("cuDNN backward-filter call: dim_labels read against operand 1 and the result as XLA does", "[hlo][cost]") {
  // The call of XLA's cudnn_support_utils_test.cc. For a backward-filter call dim_labels give
  // the cuDNN view (conv_rewriter.cc, MatchBackwardFilter): 01io is the result (dw), b01f
  // after '->' operand 1 (dy); XLA reads operand 1 as kernel and the result as output:
  //   input features = operand 0 dim 3 = 41, batch = operand 0 dim 0 = 10,
  //   output features = result dim 3 = 40,
  //   spatial 0: kernel extent 10 (operand 1 dim 0), 2 outputs (result dim 1), input 20:
  //     o + k < 20 always: 20 pairs,
  //   spatial 1: kernel extent 20 (operand 1 dim 1), 41 outputs (result dim 2), input 30:
  //     tap k meets outputs o < 30 - k: sum over k < 20 of (30 - k) = 410 pairs,
  //   2 x 41 x 40 x 10 x (20 x 410) = 268,960,000 FLOPs.
  Module m = run(R"(  x = f16[10,20,30,41] parameter(0)
  dy = f16[10,20,30,40] parameter(1)
  c = (f16[2,2,41,40], u8[0]) custom-call(x, dy), window={size=2x2}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convBackwardFilter"
  ROOT g = f16[2,2,41,40] get-tuple-element(c), index=0
)");
  const Instruction& c = ins(m, "c");
  CHECK(c.cost.flops == 268960000);
  // reads 246,000 + 240,000 f16, writes the 6,560 f16 of dw
  CHECK(c.cost.bytes_read == 2 * (246000 + 240000));
  CHECK(c.cost.bytes_written == 2 * 6560);
}

TEST_CASE("cuDNN forward call with feature groups, written over several lines", "[hlo][cost]") {
  // The call of XLA's cudnn_pad_for_convolutions_test.cc (its continuation-line form):
  //   input fb01 f16[704,48,1,49]: features 704 / 16 groups = 44, batch 48,
  //   kernel io01 f16[44,768,1,50], output 01bf f16[1,128,48,768]: output features 768,
  //   spatial 0: 1 pair; spatial 1: 50 taps, 128 outputs, input 49, pad 64 each side:
  //     tap k meets outputs 64 - k .. 112 - k, 49 each: 2450 pairs,
  //   2 x 44 x 768 x 48 x 2450 = 7,947,878,400 FLOPs.
  Module m = analyze_hlo(R"(HloModule TestModule

ENTRY TestComputation {
  input = f16[704,48,1,49]{3,2,1,0} parameter(0)
  filter = f16[44,768,1,50]{3,2,1,0} parameter(1)
  ROOT result = (f16[1,128,48,768]{3,2,1,0}, u8[0]{0})
    custom-call(input, filter)
    , window={size=1x50 pad=0_0x64_64}
    , dim_labels=fb01_io01->01bf
    , feature_group_count=16
    , custom_call_target="__cudnn$convForward"
}
)");
  const Instruction& c = ins(m, "result");
  CHECK(c.cost.flops == 7947878400.0);
  // reads 704*48*49 + 44*768*50 f16, writes 128*48*768 f16
  CHECK(c.cost.bytes_read == 2.0 * (704 * 48 * 49 + 44 * 768 * 50));
  CHECK(c.cost.bytes_written == 2.0 * 128 * 48 * 768);
}

TEST_CASE("cuDNN graph convolution: scale operands read, only the convolution result written", "[hlo][cost]") {
  // The call of XLA's conv_layout_normalization_test.cc: an f8 convolution with scales whose
  // result tuple also holds an f32[] amax and the scratch; XLA counts its element 0.
  //   input b01f f8[2,1,378,128], kernel o01i f8[128,1,5,128], output features 128,
  //   spatial 1: 5 taps, 378 outputs, input 378, pad 2: 376+377+378+377+376 = 1884 pairs,
  //   2 x 128 x 128 x 2 x 1884 = 123,469,824 FLOPs.
  Module m = run(R"(  x = f8e4m3fn[2,1,378,128]{3,2,1,0} parameter(0)
  w = f8e4m3fn[128,1,5,128]{1,0,2,3} parameter(1)
  s0 = f32[] parameter(2)
  s1 = f32[] parameter(3)
  s2 = f32[] parameter(4)
  ROOT c = (f8e4m3fn[2,1,378,128]{3,2,1,0}, f32[], u8[0]{0}) custom-call(x, w, s0, s1, s2), window={size=1x5 pad=0_0x2_2}, dim_labels=b01f_o01i->b01f, custom_call_target="__cudnn$convForwardGraph", backend_config={"cudnn_conv_backend_config":{"conv_result_scale":1,"serialized_graph":"28:[f32]conv();30:[f32]scale(28);"}}
)");
  const Instruction& c = ins(m, "c");
  CHECK(c.cost.flops == 123469824);
  // reads 96,768 + 81,920 one-byte elements and three f32 scales, writes the 96,768 B result
  CHECK(c.cost.bytes_read == 96768 + 81920 + 12);
  CHECK(c.cost.bytes_written == 96768);
  CHECK(c.cost.output_bytes == 96768);
}

TEST_CASE("cuDNN calls XLA does not cost stay unknown: filter reorder, no dim_labels", "[hlo][cost]") {
  Module m = run(R"(  w = s8[32,32,3,3]{3,2,1,0} parameter(0)
  r = s8[32,32,3,3]{3,2,1,0} custom-call(w), custom_call_target="__cudnn$convReorderFilter"
  x = f32[1,8,8,4]{3,2,1,0} parameter(1)
  ROOT c = (f32[1,8,8,4]{3,2,1,0}, u8[0]{0}) custom-call(x, x), custom_call_target="__cudnn$convForward"
)");
  CHECK(ins(m, "r").cost.unknown);
  CHECK(ins(m, "r").pattern == AccessPattern::kDataMovement);
  // operands and result as a lower bound: 9216 B each way
  CHECK(ins(m, "r").cost.bytes_read == 9216);
  CHECK(ins(m, "c").cost.unknown);
  CHECK(ins(m, "c").pattern == AccessPattern::kConvolution);
  CHECK(m.unknown_cost_instructions == 2);
}

TEST_CASE("Mosaic GPU custom call: no cost rule, its kernel name read from the module", "[hlo][cost]") {
  // The form JAX 0.10.2 lowers a Pallas Mosaic GPU kernel to (tests/python/
  // test_mosaic_gpu_kernels.py lowers real ones): a typed-FFI call whose backend_config holds
  // the kernel's MLIR bytecode, printed with \XX escapes; in its string table the dialect
  // "stable_mosaic_gpu" and the host function "<name>_mosaic_gpu", NUL-terminated.
  const std::string module_bytes =
      R"(ML\EFR\01MLIR23.0.0git\00\01\9D\11builtin\00stable_mosaic_gpu\00llvm\00gpu\00)"
      R"(sym_name\00mosaic_gpu_init_tma_desc\00llvm.emit_c_interface\00scaled_add_mosaic_gpu\00ordering\00)";
  auto module_with = [](const std::string& bytes, const std::string& target) {
    return analyze_hlo(
        "HloModule jit_f\n\nENTRY main.1 {\n  x.1 = f32[4096]{0} parameter(0)\n"
        "  y.1 = f32[4096]{0} parameter(1)\n"
        "  ROOT pallas_call.1 = f32[4096]{0} custom-call(x.1, y.1), custom_call_target=\"" +
        target +
        "\", api_version=API_VERSION_TYPED_FFI, backend_config={kernel_hash = \"\\C2Fj\\1B\", "
        "module = \"" +
        bytes + "\", use_custom_barrier = false}\n}\n");
  };
  Module m = module_with(module_bytes, "mosaic_gpu_v2");
  const Instruction& c = ins(m, "pallas_call.1");
  CHECK(is_mosaic_gpu_custom_call(c));
  CHECK_FALSE(is_triton_custom_call(c));
  // JAX drops cost_estimate and metadata: no rule, the operands and result as a lower bound
  CHECK(c.cost.unknown);
  CHECK_FALSE(c.cost.from_author);
  CHECK(c.cost.flops == 0);
  CHECK(c.cost.bytes_read == 2 * 4096 * 4);
  CHECK(c.cost.bytes_written == 4096 * 4);
  CHECK(c.pattern == AccessPattern::kLibraryCall);
  // gpu-kernel-outlining names the kernel after the host function: <name>_mosaic_gpu_kernel
  CHECK(custom_kernel_name(c) == "scaled_add_mosaic_gpu_kernel");
  // two candidate host functions: not knowable; none: none
  CHECK(custom_kernel_name(ins(module_with(module_bytes + R"(other_mosaic_gpu\00)", "mosaic_gpu_v2"), "pallas_call.1"))
            .empty());
  CHECK(custom_kernel_name(ins(module_with(R"(ML\EFR\00stable_mosaic_gpu\00)", "mosaic_gpu_v2"), "pallas_call.1"))
            .empty());
  // the older target keeps hash and module in one string: no name read
  CHECK(custom_kernel_name(ins(module_with(module_bytes, "mosaic_gpu"), "pallas_call.1")).empty());
}

TEST_CASE("An uninitialised output buffer (AllocateBuffer) is not read and costs nothing", "[hlo][cost]") {
  // plgpu.kernel as JAX 0.10.1 lowers it (tests/python/test_mosaic_gpu_kernels.py lowers the
  // real one): the output buffer comes from XLA's AllocateBuffer and is passed as a third
  // operand aliased to the result.
  Module m = analyze_hlo(
      "HloModule jit_f\n\nENTRY main.1 {\n  x.1 = f32[256]{0} parameter(0)\n"
      "  y.1 = f32[256]{0} parameter(1)\n"
      "  empty.1 = f32[256]{0} custom-call(), custom_call_target=\"AllocateBuffer\"\n"
      "  ROOT mpmd_map.1 = f32[256]{0} custom-call(x.1, y.1, empty.1), custom_call_target=\"mosaic_gpu_v2\", "
      "output_to_operand_aliasing={{}: (2, {})}, api_version=API_VERSION_TYPED_FFI, "
      "backend_config={kernel_hash = \"\\C2\", module = \"ML\\EFR\\00\"}\n}\n");
  const Instruction& e = ins(m, "empty.1");
  CHECK_FALSE(e.cost.unknown);
  CHECK(e.cost.bytes_read == 0);
  CHECK(e.cost.bytes_written == 0);
  CHECK(e.pattern == AccessPattern::kControl);
  const Instruction& c = ins(m, "mpmd_map.1");
  CHECK(c.cost.unknown);
  CHECK(c.cost.bytes_read == 2 * 256 * 4);  // x and y; the aliased buffer holds nothing to read
  CHECK(c.cost.bytes_written == 256 * 4);
  CHECK(m.unknown_cost_instructions == 1);  // the kernel only
  CHECK(m.total.bytes_read + m.total.bytes_written == 3 * 256 * 4);
}

namespace {

// XLA's HLO test corpus (docs/cost-model.md): FPGAPROF_XLA_HLO_CORPUS, else the workspace's copy.
std::string xla_hlo_corpus_dir() {
  const char* env = std::getenv("FPGAPROF_XLA_HLO_CORPUS");
  return env != nullptr && *env != '\0' ? env : "/work/shared/corpora/xla-hlo";
}

bool is_gpu_library_conv_or_gemm(const std::string& t) {
  return t.rfind("__cudnn$conv", 0) == 0 || t.rfind("__cublas$", 0) == 0;
}

}  // namespace

TEST_CASE("every XLA corpus module with a cuDNN convolution or cuBLAS GEMM parses and costs them",
          "[hlo][cost][corpus]") {
  namespace fs = std::filesystem;
  const fs::path dir = xla_hlo_corpus_dir();
  if (!fs::is_directory(dir)) {
    WARN("XLA HLO corpus not found at " << dir.string() << " (set FPGAPROF_XLA_HLO_CORPUS): not checked");
    return;
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".hlo") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  int modules = 0, convs = 0, gemms = 0;
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find("\"__cudnn$conv") == std::string::npos && text.find("\"__cublas$") == std::string::npos) continue;
    INFO(f.filename().string());
    ++modules;
    Module m = analyze_hlo(text);  // a parse error fails the test
    for (const Computation& c : m.computations) {
      for (const Instruction& i : c.instructions) {
        if (i.opcode != "custom-call" || !is_gpu_library_conv_or_gemm(i.custom_call_target())) continue;
        INFO(i.name << " " << i.custom_call_target());
        const bool conv = i.custom_call_target().rfind("__cudnn$conv", 0) == 0;
        (conv ? convs : gemms) += 1;
        CHECK_FALSE(i.cost.unknown);
        CHECK(i.cost.flops > 0);
        CHECK(i.cost.bytes_written > 0);
        CHECK(i.pattern == (conv ? AccessPattern::kConvolution : AccessPattern::kDot));
      }
    }
  }
  // The corpus of 2025-10-31 (SOURCE.md there): 59 convolution calls in 59 modules, 166 GEMM
  // calls (162 __cublas$gemm, 3 __cublas$lt$matmul$f8, 1 __cublas$lt$matmul).
  CHECK(modules > 0);
  CHECK(convs >= 59);
  CHECK(gemms >= 166);
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
  CHECK(g1->attributes().at("index") == "1");
  CHECK(g1->shape.dims == std::vector<int64_t>{1024});
  CHECK(g1->line == 0);  // no text of its own
  const Instruction& f = ins(s, "f");
  REQUIRE(f.operand_shapes().size() == 2);
  CHECK(f.operand_shapes()[0].dims == std::vector<int64_t>{1024});
  CHECK(body->instructions[f.operand_indices()[1]].name == "arg#2");
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
  const std::string head =
      "HloModule m\nENTRY e {\n  p = (f32[2]{0}, f32[3]{0}) parameter(0)\n  q = f32[2]{0} parameter(1)\n";
  auto message = [&](const std::string& line) -> std::string {
    try {
      parse_hlo_module(head + line + "}\n");
    } catch (const HloParseError& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK_THAT(message("  ROOT n = f32[2]{0} negate(p#2)\n"),
             Catch::Contains("line 5") &&
                 Catch::Contains("'p#2' to name an element of a tuple-shaped instruction ('p' has 2 elements)"));
  CHECK_THAT(message("  ROOT n = f32[2]{0} negate(q#0)\n"), Catch::Contains("('q' has no tuple shape)"));
  CHECK_THAT(message("  ROOT n = f32[2]{0} negate(r#0)\n"),
             Catch::Contains("operand 'r' (of 'r#0') defined in computation 'e'"));
  CHECK_THAT(message("  ROOT n = f32[2]{0} negate(p#)\n"),
             Catch::Contains("expected a tuple index after '#' in operand 'p'"));
  CHECK(message("  ROOT n = f32[3]{0} negate(p#1)\n") == "no error");
}

// The rules below were measured against XLA's HloCostAnalysis as jaxlib 0.10.2 runs it on a CPU
// client (hlo_module_from_text + hlo_module_cost_analysis): each module's XLA total is in the
// comment, worked out instruction by instruction.

TEST_CASE("default bytes: a tuple operand is its pointer table, a tuple result its arrays", "[hlo][cost]") {
  // XLA: 2488 B = tuple 16 + opt-barrier (16 + 800) + recv 404 + recv-done (24 + 400)
  //      + send (400 + 404) + send-done (24 + 0)
  Module m = run(R"(  x = f32[100]{0} parameter(0)
  y = s32[100]{0} parameter(1)
  t = (f32[100]{0}, s32[100]{0}) tuple(x, y)
  b = (f32[100]{0}, s32[100]{0}) opt-barrier(t)
  tok = token[] after-all()
  r = (f32[100]{0}, u32[], token[]) recv(tok), channel_id=1
  rd = (f32[100]{0}, token[]) recv-done(r), channel_id=1
  s = (f32[100]{0}, u32[], token[]) send(x, tok), channel_id=2
  ROOT sd = token[] send-done(s), channel_id=2
)");
  CHECK(ins(m, "t").cost.bytes_written == 16);
  CHECK(ins(m, "b").cost.bytes_read == 16);
  CHECK(ins(m, "b").cost.bytes_written == 800);
  CHECK(ins(m, "r").cost.bytes_accessed() == 404);
  CHECK(ins(m, "rd").cost.bytes_read == 24);
  CHECK(ins(m, "rd").cost.bytes_written == 400);
  CHECK(ins(m, "s").cost.bytes_accessed() == 804);
  CHECK(ins(m, "sd").cost.bytes_accessed() == 24);
  CHECK(m.total.bytes_accessed() == 2488);
}

TEST_CASE("infeed, outfeed, all-reduce, bitcast-convert, rng-bit-generator", "[hlo][cost]") {
  // XLA: 32 FLOPs, 34 transcendentals, 496 B:
  //   infeed writes every leaf (32 + 8), reads nothing; outfeed reads every leaf (40);
  //   bitcast-convert is elementwise: 8 FLOPs, 64 B each; all-reduce: 16 FLOPs (2 replicas
  //   assumed), its arrays written (64) and operands read (64); rng-bit-generator: 2 + 32
  //   transcendentals, 16 read, 16 + 128 written.
  Module m = run(R"(  tok = token[] after-all()
  in = ((f32[8]{0}, s32[2]{0}), token[]) infeed(tok)
  d = (f32[8]{0}, s32[2]{0}) get-tuple-element(in), index=0
  out = token[] outfeed(d, tok), outfeed_shape=(f32[8]{0}, s32[2]{0})
  f = f32[8]{0} get-tuple-element(d), index=0
  bc = s32[8]{0} bitcast-convert(f)
  fc = f32[8]{0} bitcast-convert(bc)
  ar = (f32[8]{0}, f32[8]{0}) all-reduce(f, fc), to_apply=add
  st = u64[2]{0} parameter(0)
  ROOT rng = (u64[2]{0}, u32[4,8]{1,0}) rng-bit-generator(st), algorithm=rng_default
)",
                 kAdd);
  CHECK(ins(m, "in").cost.bytes_read == 0);
  CHECK(ins(m, "in").cost.bytes_written == 40);
  CHECK(ins(m, "out").cost.bytes_read == 40);
  CHECK(ins(m, "out").cost.bytes_written == 0);
  CHECK(ins(m, "bc").cost.flops == 8);
  CHECK(ins(m, "ar").cost.flops == 16);
  CHECK(ins(m, "ar").cost.bytes_accessed() == 128);
  CHECK(ins(m, "rng").cost.transcendentals == 34);
  CHECK(ins(m, "rng").cost.bytes_accessed() == 160);
  CHECK(m.total.flops == 32);
  CHECK(m.total.transcendentals == 34);
  CHECK(m.total.bytes_accessed() == 496);
}

TEST_CASE("async: a wrapped <op>-start costs the op, -update and -done their operand and result", "[hlo][cost]") {
  // add-start: XLA's async wrapper of add(a, b): 64 FLOPs, 3 x 256 B; add-done: the context
  // tuple's pointer table (3 x 8) + its result 256. XLA: 64 FLOPs, 1048 B.
  Module m = run(R"(  a = f32[64]{0} parameter(0)
  b = f32[64]{0} parameter(1)
  s = ((f32[64]{0}, f32[64]{0}), f32[64]{0}, u32[]) add-start(a, b)
  ROOT d = f32[64]{0} add-done(s)
)");
  CHECK(ins(m, "s").cost.flops == 64);
  CHECK(ins(m, "s").cost.bytes_accessed() == 768);
  CHECK(ins(m, "d").cost.bytes_accessed() == 280);
  CHECK(m.total.bytes_accessed() == 1048);
  // async-start with its computation: that computation's cost; async-update writes the
  // arrays of its result (256 + 256 + 4) after reading the context (24). XLA: 64 FLOPs, 1332 B.
  Module m2 = run(R"(  a = f32[64]{0} parameter(0)
  s = ((f32[64]{0}), f32[64]{0}, s32[]) async-start(a), calls=wrapped
  u = ((f32[64]{0}), f32[64]{0}, s32[]) async-update(s)
  ROOT d = f32[64]{0} async-done(u)
)",
                  "wrapped {\n  p = f32[64]{0} parameter(0)\n  ROOT n = f32[64]{0} negate(p)\n}\n");
  CHECK(ins(m2, "s").cost.bytes_accessed() == 512);
  CHECK(ins(m2, "u").cost.bytes_accessed() == 540);
  CHECK(m2.total.flops == 64);
  CHECK(m2.total.bytes_accessed() == 1332);
}

TEST_CASE("ragged-dot and scaled-dot FLOPs", "[hlo][cost]") {
  // ragged-dot: XLA drops result dimension 0 (one rhs group dimension) before 2 x elements x
  // contracted: 2 x (8 x 32) x 16 = 8192. scaled-dot: 2 x 16 x 32 x 64 = 65536.
  Module m = run(R"(  lhs = f32[4,8,16]{2,1,0} parameter(0)
  rhs = f32[2,4,16,32]{3,2,1,0} parameter(1)
  g = s64[4,2]{1,0} parameter(2)
  r = f32[4,8,32]{2,1,0} ragged-dot(lhs, rhs, g), lhs_batch_dims={0}, rhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_contracting_dims={2}, lhs_ragged_dims={1}, rhs_group_dims={0}
  l8 = f8e4m3fn[16,64]{1,0} parameter(3)
  ls = f8e8m0fnu[16,2]{1,0} parameter(4)
  r8 = f8e4m3fn[64,32]{1,0} parameter(5)
  rs = f8e8m0fnu[2,32]{1,0} parameter(6)
  ROOT sd = bf16[16,32]{1,0} scaled-dot(l8, ls, r8, rs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)");
  CHECK(ins(m, "r").cost.flops == 8192);
  CHECK(ins(m, "r").cost.bytes_accessed() == 22592);
  CHECK(ins(m, "sd").cost.flops == 65536);
  CHECK(ins(m, "sd").pattern == AccessPattern::kDot);
}

TEST_CASE("nested fusions: a dynamic-slice of a nested fusion reads its slice, a nested root nothing", "[hlo][cost]") {
  // XLA's FusionParameterReadBytes: p0 feeds the nested fusion f directly into its root, and
  // f's only user is a dynamic-slice of it: p0 reads the slice (8 x 32 = 256 B), p1 (an index)
  // 4 B, the result 256 B. XLA: 516 B.
  Module m = run(R"(  a = s8[64,32]{1,0} parameter(0)
  i = s32[] parameter(1)
  ROOT r = s8[8,32]{1,0} fusion(a, i), kind=kLoop, calls=outer
)",
                 R"(inner {
  p = s8[64,32]{1,0} parameter(0)
  ROOT c = s8[64,32]{1,0} copy(p)
}
outer {
  p0 = s8[64,32]{1,0} parameter(0)
  f = s8[64,32]{1,0} fusion(p0), kind=kLoop, calls=inner
  z = s32[] constant(0)
  p1 = s32[] parameter(1)
  ROOT ds = s8[8,32]{1,0} dynamic-slice(f, p1, z), dynamic_slice_sizes={8,32}
}
)");
  CHECK(ins(m, "r").cost.bytes_read == 260);
  CHECK(ins(m, "r").cost.bytes_written == 256);
  // A nested fusion at the root has no users: XLA counts no read of what feeds it (256 B of
  // result only).
  Module m2 = run(R"(  a = f32[64]{0} parameter(0)
  ROOT r = f32[64]{0} fusion(a), kind=kLoop, calls=outer
)",
                  R"(inner {
  p = f32[64]{0} parameter(0)
  ROOT n = f32[64]{0} negate(p)
}
outer {
  p0 = f32[64]{0} parameter(0)
  ROOT f = f32[64]{0} fusion(p0), kind=kLoop, calls=inner
}
)");
  CHECK(ins(m2, "r").cost.flops == 64);
  CHECK(ins(m2, "r").cost.bytes_read == 0);
  CHECK(ins(m2, "r").cost.bytes_written == 256);
}

TEST_CASE("conditional: bytes of the branch that accesses most, transpose bitcasts on default layouts", "[hlo][cost]") {
  // big_read: add 768 + slice 8 = 776 B, 64 FLOPs; big_write: slice 8 B. XLA: tuple 16 +
  // conditional 776 = 792 B.
  Module m = run(R"(  c = pred[] parameter(0)
  x = f32[64]{0} parameter(1)
  t = (f32[64]{0}, f32[64]{0}) tuple(x, x)
  ROOT r = f32[1]{0} conditional(c, t, t), true_computation=big_read, false_computation=big_write
)",
                 R"(big_read {
  p = (f32[64]{0}, f32[64]{0}) parameter(0)
  x = f32[64]{0} get-tuple-element(p), index=0
  y = f32[64]{0} get-tuple-element(p), index=1
  a = f32[64]{0} add(x, y)
  ROOT s = f32[1]{0} slice(a), slice={[0:1]}
}
big_write {
  p = (f32[64]{0}, f32[64]{0}) parameter(0)
  x = f32[64]{0} get-tuple-element(p), index=0
  ROOT b = f32[1]{0} slice(x), slice={[0:1]}
}
)");
  CHECK(ins(m, "r").cost.flops == 64);
  CHECK(ins(m, "r").cost.bytes_accessed() == 776);
  CHECK(m.total.bytes_accessed() == 792);
  // No layout printed: XLA's default (major to minor). [1,64,1] -> [64,1,1] swapping
  // dimensions 0 and 1 moves no element, but XLA's TransposeIsBitcast compares layouts only:
  // not a bitcast, 2 x 256 B.
  Module t = run("  a = f32[1,64,1] parameter(0)\n  ROOT t = f32[64,1,1] transpose(a), dimensions={1,0,2}\n");
  CHECK(ins(t, "t").cost.bytes_accessed() == 512);
  // Layouts that keep the physical order: a bitcast, free.
  Module b = run("  a = f32[8,4]{1,0} parameter(0)\n  ROOT t = f32[4,8]{0,1} transpose(a), dimensions={1,0}\n");
  CHECK(ins(b, "t").cost.bytes_accessed() == 0);
}

TEST_CASE("dynamic shapes: a size per dimension, an unbounded dimension counts no elements", "[hlo][cost]") {
  // f32[<=100]: 400 B of elements + 4 B of size each way; XLA: 100 FLOPs, 808 B.
  Module m = run("  x = f32[<=100]{0} parameter(0)\n  ROOT n = f32[<=100]{0} negate(x)\n");
  CHECK(ins(m, "n").cost.flops == 100);
  CHECK(ins(m, "n").cost.bytes_accessed() == 808);
  // f32[64,?]: no elements, 2 x 4 B of sizes each way. XLA: 0 FLOPs, 16 B (its element count
  // overflows to 0 here; to INT64_MIN for an odd number of other elements, fpgaprof's 0 then).
  Module u = run("  x = f32[64,?]{1,0} parameter(0)\n  ROOT n = f32[64,?]{1,0} negate(x)\n");
  CHECK(ins(u, "n").cost.flops == 0);
  CHECK(ins(u, "n").cost.bytes_accessed() == 16);
}

TEST_CASE("absurd dimension sizes saturate instead of overflowing", "[hlo][cost]") {
  // Found by the fuzzer: a kernel of 10^16 x 11 x 11 x ... elements. Sizes saturate at
  // INT64_MAX, a convolution too large to enumerate counts the upper bound; nothing overflows.
  Module m = run(R"(  lhs = f32[3,3,7,7] parameter(0)
  rhs = f32[9999999999999995,11,11,2,7] parameter(1)
  big = f32[4611686018427387904,4] parameter(2)
  n = f32[4611686018427387904,4] negate(big)
  ROOT c = f32[3,3,7,7] convolution(lhs, rhs), window={size=11811 pad=3_26x3_6 stride=2x1}, dim_labels=01bf_o01i->f01b
)");
  CHECK(ins(m, "n").cost.flops == static_cast<double>(INT64_MAX));
  CHECK(ins(m, "n").cost.bytes_written == static_cast<double>(INT64_MAX));
  CHECK(ins(m, "c").cost.flops >= 0);
}

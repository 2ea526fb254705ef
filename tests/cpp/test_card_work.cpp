// CardWork (card_work.hpp): what one execution of an HLO instruction asks of an FPGA card, read
// from hand-written HLO costed by hlo::analyze_hlo. Every expected number is worked out by hand
// in the comments: first the cost model's count (docs/cost-model.md), then the card's split of
// it (docs/fpga-model-cases.md, "What an op asks of the card").
#include <catch2/catch.hpp>

#include <string>

#include "fpgaprof/analysis/card_work.hpp"
#include "fpgaprof/analysis/op_inputs.hpp"
#include "fpgaprof/hlo/cost_model.hpp"

using namespace fpgaprof;
using namespace fpgaprof::analysis;

namespace {

hlo::Module module(const std::string& entry_body, const std::string& computations = "") {
  return hlo::analyze_hlo("HloModule t\n" + computations + "\nENTRY e {\n" + entry_body + "}\n");
}

const hlo::Instruction& ins(const hlo::Module& m, const char* name) {
  const hlo::Instruction* i = m.find_instruction(name);
  REQUIRE(i != nullptr);
  return *i;
}

CardWork work(const hlo::Module& m, const char* name) { return card_work(m, ins(m, name)); }

const char* kAdd = R"(add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

}  // namespace

TEST_CASE("card_work: a plain gather reads its table at random, indices and result stream",
          "[analysis][fpga][card_work]") {
  const hlo::Module m = module(R"(  t = f32[1000]{0} parameter(0)
  i = s32[5,1]{1,0} parameter(1)
  t2 = f32[1000,8]{1,0} parameter(2)
  g = f32[5]{0} gather(t, i), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
  r = f32[5,8]{1,0} gather(t2, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
  ROOT o = (f32[5]{0}, f32[5,8]{1,0}) tuple(g, r)
)");
  // Element gather g: the cost model reads the 5 gathered f32 (20 B) + 5 s32 indices (20 B)
  // and writes 20 B: 60 B, no FLOPs.
  const CardWork g = work(m, "g");
  CHECK(g.known);
  CHECK(g.flops == 0);
  CHECK(g.bytes == 60);
  // One random traffic: the 20 gathered bytes, each access one f32 (slice {1} of a 1-D table:
  // run 1 element x 4 B = 4 B), 20 / 4 = 5 accesses, into the 4000 B table.
  REQUIRE(g.random.size() == 1);
  CHECK(g.random[0].bytes == 20);
  CHECK(g.random[0].run_bytes == 4);
  CHECK(g.random[0].accesses == 5);
  CHECK(g.random[0].source_bytes == 4000);
  CHECK_FALSE(g.random[0].read_modify_write);
  CHECK(g.random_bytes() == 20);
  // Streamed: 60 - 20 = 40 B (indices read, result written).
  CHECK(g.stream_bytes == 40);
  // Compulsory: the distinct inputs, table 4000 + indices 20 = 4020 B (2 arrays), and the
  // output 20 B (1 array): 4040 B. A gather has random traffic, so it is not capped by bytes.
  CHECK(g.input_bytes == 4020);
  CHECK(g.input_buffers == 2);
  CHECK(g.output_bytes == 20);
  CHECK(g.output_buffers == 1);
  CHECK(g.compulsory_bytes == 4040);
  CHECK(g.working_set_bytes == 20);

  // Row gather r: slice {1,8} of f32[1000,8]{1,0}: the minor dimension (8) is spanned whole,
  // so the run goes on into dimension 0 (extent 1): 8 x 1 elements x 4 B = 32 B per access.
  // Cost: 160 B gathered + 20 B indices read, 160 B written = 340 B.
  const CardWork r = work(m, "r");
  CHECK(r.bytes == 340);
  REQUIRE(r.random.size() == 1);
  CHECK(r.random[0].bytes == 160);
  CHECK(r.random[0].run_bytes == 32);
  CHECK(r.random[0].accesses == 5);          // 160 / 32
  CHECK(r.random[0].source_bytes == 32000);  // 1000 x 8 x 4
  CHECK(r.stream_bytes == 180);              // 340 - 160
  CHECK(r.compulsory_bytes == 32000 + 20 + 160);
}

TEST_CASE("card_work: an array and a bitcast of it are one source", "[analysis][fpga][card_work]") {
  // g1 gathers from t, g2 from a bitcast of t (the same bytes, another shape), and the fusion
  // from a bitcast of the bitcast: one array on chip, one source_id; a copy of t is a new array.
  const hlo::Module m = module(R"(  t = f32[1000]{0} parameter(0)
  i = s32[5,1]{1,0} parameter(1)
  g1 = f32[5]{0} gather(t, i), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
  tb = f32[1000,1]{1,0} bitcast(t)
  g2 = f32[5]{0} gather(tb, i), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,1}
  tbb = f32[1,1000]{1,0} bitcast(tb)
  f = f32[5]{0} fusion(tbb, i), kind=kLoop, calls=fg
  tc = f32[1000]{0} copy(t)
  g3 = f32[5]{0} gather(tc, i), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
  ROOT o = (f32[5]{0}, f32[5]{0}, f32[5]{0}, f32[5]{0}) tuple(g1, g2, f, g3)
)",
                               R"(fg {
  p0 = f32[1,1000]{1,0} parameter(0)
  p1 = s32[5,1]{1,0} parameter(1)
  ROOT g = f32[5]{0} gather(p0, p1), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={1}, index_vector_dim=1, slice_sizes={1,1}
}
)");
  const CardWork g1 = work(m, "g1"), g2 = work(m, "g2"), f = work(m, "f"), g3 = work(m, "g3");
  REQUIRE(g1.random.size() == 1);
  REQUIRE(g2.random.size() == 1);
  REQUIRE(f.random.size() == 1);
  REQUIRE(g3.random.size() == 1);
  CHECK(g1.random[0].source_id != 0);
  CHECK(g2.random[0].source_id == g1.random[0].source_id);
  CHECK(f.random[0].source_id == g1.random[0].source_id);
  CHECK(g3.random[0].source_id != g1.random[0].source_id);
}

TEST_CASE("card_work: an array a while loop carries unchanged is its caller's array", "[analysis][fpga][card_work]") {
  // The entry gathers from t (g0) and runs a loop whose state carries t unchanged (element 1):
  // the outer body gathers from it (go), through a fusion too (fo), and runs an inner loop
  // that carries it on unchanged, whose body gathers from it (gi): one array on chip, the
  // entry's t. The outer state's element 2 starts as t but the body returns a negated copy
  // (gc: another array each trip after the first), and a body that two whiles run (shared:
  // whose operand is not known) keeps its own names.
  const hlo::Module m = module(R"(  t = f32[1000]{0} parameter(0)
  i = s32[5,1]{1,0} parameter(1)
  g0 = f32[5]{0} gather(t, i), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
  s = (f32[1000]{0}, f32[1000]{0}, f32[1000]{0}, s32[5,1]{1,0}) tuple(t, t, t, i)
  w = (f32[1000]{0}, f32[1000]{0}, f32[1000]{0}, s32[5,1]{1,0}) while(s), condition=cond, body=outer, backend_config={"known_trip_count":{"n":"3"}}
  s2 = (f32[1000]{0}, s32[5,1]{1,0}) tuple(t, i)
  w2 = (f32[1000]{0}, s32[5,1]{1,0}) while(s2), condition=cond2, body=shared, backend_config={"known_trip_count":{"n":"2"}}
  w3 = (f32[1000]{0}, s32[5,1]{1,0}) while(s2), condition=cond2, body=shared, backend_config={"known_trip_count":{"n":"2"}}
  ROOT o = f32[5]{0} copy(g0)
)",
                               R"(fg {
  p0 = f32[1000]{0} parameter(0)
  p1 = s32[5,1]{1,0} parameter(1)
  ROOT g = f32[5]{0} gather(p0, p1), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
}
inner {
  ip = (f32[1000]{0}, s32[5,1]{1,0}) parameter(0)
  it = f32[1000]{0} get-tuple-element(ip), index=0
  ii = s32[5,1]{1,0} get-tuple-element(ip), index=1
  gi = f32[5]{0} gather(it, ii), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
  ROOT ir = (f32[1000]{0}, s32[5,1]{1,0}) tuple(it, ii)
}
cond2 {
  cp = (f32[1000]{0}, s32[5,1]{1,0}) parameter(0)
  ROOT cc = pred[] constant(true)
}
outer {
  p = (f32[1000]{0}, f32[1000]{0}, f32[1000]{0}, s32[5,1]{1,0}) parameter(0)
  a = f32[1000]{0} get-tuple-element(p), index=0
  ot = f32[1000]{0} get-tuple-element(p), index=1
  c = f32[1000]{0} get-tuple-element(p), index=2
  oi = s32[5,1]{1,0} get-tuple-element(p), index=3
  go = f32[5]{0} gather(ot, oi), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
  fo = f32[5]{0} fusion(ot, oi), kind=kLoop, calls=fg
  gc = f32[5]{0} gather(c, oi), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
  nc = f32[1000]{0} negate(c)
  is = (f32[1000]{0}, s32[5,1]{1,0}) tuple(ot, oi)
  iw = (f32[1000]{0}, s32[5,1]{1,0}) while(is), condition=cond2, body=inner, backend_config={"known_trip_count":{"n":"4"}}
  ROOT r = (f32[1000]{0}, f32[1000]{0}, f32[1000]{0}, s32[5,1]{1,0}) tuple(a, ot, nc, oi)
}
cond {
  q = (f32[1000]{0}, f32[1000]{0}, f32[1000]{0}, s32[5,1]{1,0}) parameter(0)
  ROOT qc = pred[] constant(true)
}
shared {
  sp = (f32[1000]{0}, s32[5,1]{1,0}) parameter(0)
  st = f32[1000]{0} get-tuple-element(sp), index=0
  si = s32[5,1]{1,0} get-tuple-element(sp), index=1
  gs = f32[5]{0} gather(st, si), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
  ROOT sr = (f32[1000]{0}, s32[5,1]{1,0}) tuple(st, si)
}
)");
  const CardWork g0 = work(m, "g0"), go = work(m, "go"), fo = work(m, "fo"), gi = work(m, "gi");
  const CardWork gc = work(m, "gc"), gs = work(m, "gs");
  for (const CardWork* w : {&g0, &go, &fo, &gi, &gc, &gs}) REQUIRE(w->random.size() == 1);
  CHECK(g0.random[0].source_id != 0);
  CHECK(go.random[0].source_id == g0.random[0].source_id);
  CHECK(fo.random[0].source_id == g0.random[0].source_id);
  CHECK(gi.random[0].source_id == g0.random[0].source_id);
  CHECK(gc.random[0].source_id != g0.random[0].source_id);
  CHECK(gs.random[0].source_id != g0.random[0].source_id);
}

TEST_CASE("card_work: following a loop's state out is bounded", "[analysis][fpga][card_work]") {
  // Hand-written text XLA never writes: two bodies whose loops run each other in a ring, each
  // passing the array it carries on unchanged. The walk out of the loops goes round the ring
  // and stops (at most 8 loops out) with an id of its own.
  const std::string gather =
      "gather(x, xi), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, "
      "index_vector_dim=1, slice_sizes={1}";
  const std::string body = R"( {
  p = (f32[1000]{0}, s32[5,1]{1,0}) parameter(0)
  x = f32[1000]{0} get-tuple-element(p), index=0
  xi = s32[5,1]{1,0} get-tuple-element(p), index=1
  g = f32[5]{0} )";
  const hlo::Module ring =
      module(R"(  t = f32[1000]{0} parameter(0)
  i = s32[5,1]{1,0} parameter(1)
  ROOT s = (f32[1000]{0}, s32[5,1]{1,0}) tuple(t, i)
)",
             "cond {\n  q = (f32[1000]{0}, s32[5,1]{1,0}) parameter(0)\n  ROOT qc = pred[] constant(true)\n}\n"
             "ba" +
                 body + gather +
                 "\n  st = (f32[1000]{0}, s32[5,1]{1,0}) tuple(x, xi)\n"
                 "  w = (f32[1000]{0}, s32[5,1]{1,0}) while(st), condition=cond, body=bb\n"
                 "  ROOT r = (f32[1000]{0}, s32[5,1]{1,0}) tuple(x, xi)\n}\n"
                 "bb" +
                 body + gather +
                 "\n  st = (f32[1000]{0}, s32[5,1]{1,0}) tuple(x, xi)\n"
                 "  w = (f32[1000]{0}, s32[5,1]{1,0}) while(st), condition=cond, body=ba\n"
                 "  ROOT r = (f32[1000]{0}, s32[5,1]{1,0}) tuple(x, xi)\n}\n");
  const hlo::Instruction* g = nullptr;
  for (const hlo::Computation& c : ring.computations)
    if (c.name == "ba")
      for (const hlo::Instruction& ins : c.instructions)
        if (ins.name == "g") g = &ins;
  REQUIRE(g != nullptr);
  const CardWork w = card_work(ring, *g);
  REQUIRE(w.random.size() == 1);
  CHECK(w.random[0].source_id != 0);

  // In a module of more than 8,192 instructions the caller is not looked for: the body's
  // array counts as one of its own (errs slow).
  std::string pad;
  for (int k = 0; k < 8200; ++k) pad += "  n" + std::to_string(k) + " = f32[1000]{0} negate(t)\n";
  const hlo::Module big =
      module("  t = f32[1000]{0} parameter(0)\n  i = s32[5,1]{1,0} parameter(1)\n" + pad +
                 "  g0 = f32[5]{0} gather(t, i), offset_dims={}, collapsed_slice_dims={0}, "
                 "start_index_map={0}, index_vector_dim=1, slice_sizes={1}\n"
                 "  s = (f32[1000]{0}, s32[5,1]{1,0}) tuple(t, i)\n"
                 "  w = (f32[1000]{0}, s32[5,1]{1,0}) while(s), condition=cond, body=ba\n"
                 "  ROOT o = f32[5]{0} copy(g0)\n",
             "cond {\n  q = (f32[1000]{0}, s32[5,1]{1,0}) parameter(0)\n  ROOT qc = pred[] constant(true)\n}\n"
             "ba" +
                 body + gather + "\n  ROOT r = (f32[1000]{0}, s32[5,1]{1,0}) tuple(x, xi)\n}\n");
  const CardWork g0 = work(big, "g0"), gb = work(big, "g");
  REQUIRE(g0.random.size() == 1);
  REQUIRE(gb.random.size() == 1);
  CHECK(gb.random[0].source_id != g0.random[0].source_id);
}

TEST_CASE("gather_run_bytes: contiguous bytes per access follow the operand's layout", "[analysis][fpga][card_work]") {
  const hlo::Module m = module(R"(  v = f32[32,32,32]{2,1,0} parameter(0)
  w = f32[32,32,32]{1,2,0} parameter(1)
  n = f32[32,32,32] parameter(2)
  d = f64[16,16]{1,0} parameter(3)
  i = s32[10,3]{1,0} parameter(4)
  j = s32[10,1]{1,0} parameter(5)
  a = f32[10,32]{1,0} gather(v, i), offset_dims={1}, collapsed_slice_dims={0,2}, start_index_map={0,1,2}, index_vector_dim=1, slice_sizes={1,32,1}
  b = f32[10,32]{1,0} gather(v, i), offset_dims={1}, collapsed_slice_dims={0,1}, start_index_map={0,1,2}, index_vector_dim=1, slice_sizes={1,1,32}
  c = f32[10,32]{1,0} gather(w, i), offset_dims={1}, collapsed_slice_dims={0,2}, start_index_map={0,1,2}, index_vector_dim=1, slice_sizes={1,32,1}
  e = f32[10,32]{1,0} gather(w, i), offset_dims={1}, collapsed_slice_dims={0,1}, start_index_map={0,1,2}, index_vector_dim=1, slice_sizes={1,1,32}
  f = f32[10,32,32]{2,1,0} gather(v, i), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0,1,2}, index_vector_dim=1, slice_sizes={1,32,32}
  g = f32[10,32]{1,0} gather(n, i), offset_dims={1}, collapsed_slice_dims={0,1}, start_index_map={0,1,2}, index_vector_dim=1, slice_sizes={1,1,32}
  h = f32[10]{0} gather(v, i), offset_dims={}, collapsed_slice_dims={0,1,2}, start_index_map={0,1,2}, index_vector_dim=1, slice_sizes={1,1}
  k = f64[10,16]{1,0} gather(d, j), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}
  ROOT o = (f32[10,32]{1,0}, f32[10,32]{1,0}) tuple(a, b)
)");
  // v: layout {2,1,0}, minor-to-major 2, 1, 0.
  //   a, slice {1,32,1}: dimension 2 (extent 1 of 32) ends the run at once: 1 x 4 B = 4 B
  //     (the 32 elements along dimension 1 lie 32 elements apart: one f32 per access).
  CHECK(gather_run_bytes(ins(m, "a")) == 4);
  //   b, slice {1,1,32}: dimension 2 whole (32), then dimension 1 (extent 1): 32 x 4 = 128 B.
  CHECK(gather_run_bytes(ins(m, "b")) == 128);
  //   f, slice {1,32,32}: dimensions 2 and 1 whole, then dimension 0 (1): 1024 x 4 = 4096 B.
  CHECK(gather_run_bytes(ins(m, "f")) == 4096);
  // w: layout {1,2,0}: dimension 1 is the most minor, then 2.
  //   c, slice {1,32,1}: dimension 1 whole (32), then dimension 2 (extent 1): 128 B.
  CHECK(gather_run_bytes(ins(m, "c")) == 128);
  //   e, slice {1,1,32}: dimension 1 (extent 1 of 32) ends it: 4 B.
  CHECK(gather_run_bytes(ins(m, "e")) == 4);
  // n: no layout printed: XLA's default, minor-to-major 2, 1, 0 -> as b: 128 B.
  CHECK(gather_run_bytes(ins(m, "g")) == 128);
  // h: slice_sizes of the wrong rank (2 for a rank-3 operand) are read as all ones: 4 B.
  CHECK(gather_run_bytes(ins(m, "h")) == 4);
  // k: f64 rows of 16: 16 x 8 B = 128 B.
  CHECK(gather_run_bytes(ins(m, "k")) == 128);
  // The run sets the accesses: b gathers 10 x 32 x 4 = 1280 B in 1280 / 128 = 10 accesses,
  // a the same bytes in 1280 / 4 = 320.
  CHECK(work(m, "b").random.at(0).accesses == 10);
  CHECK(work(m, "a").random.at(0).accesses == 320);
}

TEST_CASE("card_work: a scatter-add reads and writes each target at random", "[analysis][fpga][card_work]") {
  const hlo::Module m = module(R"(  x = f32[1000,8]{1,0} parameter(0)
  i = s32[5,1]{1,0} parameter(1)
  u = f32[5,8]{1,0} parameter(2)
  i2 = s32[5,2]{1,0} parameter(3)
  u2 = f32[5]{0} parameter(4)
  u3 = f32[5,4]{1,0} parameter(5)
  sc = f32[1000,8]{1,0} scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  se = f32[1000,8]{1,0} scatter(x, i2, u2), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=add
  sw = f32[1000,8]{1,0} scatter(x, i, u3), update_window_dims={1}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, index_vector_dim=1, to_apply=add
  ROOT o = (f32[1000,8]{1,0}, f32[1000,8]{1,0}, f32[1000,8]{1,0}) tuple(sc, se, sw)
)",
                               kAdd);
  // sc: cost model 2 x 160 B (target part read, updates read) + 20 B indices read, 160 B
  // written = 500 B; 40 adds.
  const CardWork sc = work(m, "sc");
  CHECK(sc.bytes == 500);
  CHECK(sc.flops == 40);
  REQUIRE(sc.random.size() == 1);
  const RandomTraffic& t = sc.random[0];
  CHECK(t.read_modify_write);
  // Every update reads and writes its target: 2 x 160 = 320 B.
  CHECK(t.bytes == 320);
  // Window: operand dimension 0 is inserted (extent 1), dimension 1 takes update window
  // dimension 1 (8): box {1,8} of f32[1000,8]{1,0} -> 8 whole, then 1: 32 B per access.
  CHECK(t.run_bytes == 32);
  CHECK(scatter_run_bytes(ins(m, "sc")) == 32);
  CHECK(t.accesses == 10);  // 320 / 32: 5 updates, each a read and a write
  CHECK(t.source_bytes == 32000);
  // Streamed: 500 - 320 = 180 B (updates read 160 + indices 20).
  CHECK(sc.stream_bytes == 180);
  // Compulsory: inputs x 32000 + i 20 + u 160 = 32180 B (3 arrays), output 32000 B (1).
  CHECK(sc.input_bytes == 32180);
  CHECK(sc.input_buffers == 3);
  CHECK(sc.output_bytes == 32000);
  CHECK(sc.compulsory_bytes == 64180);

  // se: element updates (both target dimensions inserted): box {1,1}: 4 B per access;
  // 2 x 20 B = 40 B in 10 accesses.
  CHECK(scatter_run_bytes(ins(m, "se")) == 4);
  CHECK(work(m, "se").random.at(0).bytes == 40);
  CHECK(work(m, "se").random.at(0).accesses == 10);
  // sw: dimension 1 inserted, dimension 0 takes update dimension 1 (4): box {4,1} of
  // f32[1000,8]{1,0}: the minor dimension has extent 1 of 8, so the run stops there: 4 B.
  CHECK(scatter_run_bytes(ins(m, "sw")) == 4);
  CHECK(work(m, "sw").random.at(0).accesses == 2 * 80 / 4);  // 2 x (5 x 4 x 4 B) / 4 B = 40
}

TEST_CASE("card_work: fusions read through their fused computation", "[analysis][fpga][card_work]") {
  const hlo::Module m = module(R"(  x = f32[1000,8]{1,0} parameter(0)
  i = s32[5,1]{1,0} parameter(1)
  u = f32[5,8]{1,0} parameter(2)
  fb = f32[5,8]{1,0} fusion(x, i), kind=kLoop, calls=gather_bitcast
  fe = (f32[5,8]{1,0}, f32[1000,8]{1,0}) fusion(x, i), kind=kLoop, calls=gather_and_multiply
  fc = f32[5,8]{1,0} fusion(x, i), kind=kCustom, calls=wrapped_gather
  fs = f32[1000,8]{1,0} fusion(x, i, u), kind=kLoop, calls=scatter_root
  fx = f32[1000,8]{1,0} fusion(x, i, u), kind=kCustom, calls=wrapped_scatter
  fi = f32[5,8]{1,0} fusion(i), kind=kLoop, calls=gather_iota
  ROOT o = (f32[5,8]{1,0}, f32[1000,8]{1,0}) tuple(fb, fs)
)",
                               std::string(kAdd) + R"(gather_bitcast {
  p0 = f32[1000,8]{1,0} parameter(0)
  p1 = s32[5,1]{1,0} parameter(1)
  b = f32[8000]{0} bitcast(p0)
  g = f32[5,8]{1,0} gather(b, p1), offset_dims={1}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={8}
  ROOT n = f32[5,8]{1,0} negate(g)
}
gather_and_multiply {
  q0 = f32[1000,8]{1,0} parameter(0)
  q1 = s32[5,1]{1,0} parameter(1)
  qb = f32[8000]{0} bitcast(q0)
  qg = f32[5,8]{1,0} gather(qb, q1), offset_dims={1}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={8}
  qn = f32[5,8]{1,0} negate(qg)
  qm = f32[1000,8]{1,0} multiply(q0, q0)
  ROOT qt = (f32[5,8]{1,0}, f32[1000,8]{1,0}) tuple(qn, qm)
}
wrapped_gather {
  w0 = f32[1000,8]{1,0} parameter(0)
  w1 = s32[5,1]{1,0} parameter(1)
  ROOT wg = f32[5,8]{1,0} gather(w0, w1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
}
scatter_root {
  s0 = f32[1000,8]{1,0} parameter(0)
  s1 = s32[5,1]{1,0} parameter(1)
  s2 = f32[5,8]{1,0} parameter(2)
  sn = f32[5,8]{1,0} negate(s2)
  ROOT ss = f32[1000,8]{1,0} scatter(s0, s1, sn), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
wrapped_scatter {
  v0 = f32[1000,8]{1,0} parameter(0)
  v1 = s32[5,1]{1,0} parameter(1)
  v2 = f32[5,8]{1,0} parameter(2)
  ROOT vs = f32[1000,8]{1,0} scatter(v0, v1, v2), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
gather_iota {
  j1 = s32[5,1]{1,0} parameter(0)
  io = f32[1000,8]{1,0} iota(), iota_dimension=0
  jg = f32[5,8]{1,0} gather(io, j1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
  ROOT jn = f32[5,8]{1,0} negate(jg)
}
)");
  SECTION("kLoop: a gather reading a fused parameter through a bitcast") {
    // Cost: the bitcast user of p0 reads it whole, 32000 B; p1 20 B; written 160 B:
    // 32180 B; 40 FLOPs (negate).
    const CardWork w = work(m, "fb");
    CHECK(w.bytes == 32180);
    CHECK(w.flops == 40);
    REQUIRE(w.random.size() == 1);
    // Slice {8} of the bitcast f32[8000]: 8 x 4 = 32 B per access, 160 B in 5 accesses, into
    // the array behind the bitcast (the fused parameter, 32000 B).
    CHECK(w.random[0].bytes == 160);
    CHECK(w.random[0].run_bytes == 32);
    CHECK(w.random[0].accesses == 5);
    CHECK(w.random[0].source_bytes == 32000);
    // p0 is read only through the gather: its counted read (32000 B) is not streamed:
    // 32180 - 32000 = 180 B (indices 20 + result 160).
    CHECK(w.stream_bytes == 180);
    CHECK(w.input_bytes == 32020);
    CHECK(w.output_bytes == 160);
    CHECK(w.compulsory_bytes == 32180);
  }
  SECTION("kLoop: the gathered parameter also has an elementwise user: it stays streamed") {
    // Cost: q0 read once (32000 B, shared by the bitcast and the multiply) + q1 20 B;
    // written 160 + 32000 B (tuple of two arrays): 64180 B; 40 + 8000 FLOPs.
    const CardWork w = work(m, "fe");
    CHECK(w.bytes == 64180);
    CHECK(w.flops == 8040);
    REQUIRE(w.random.size() == 1);
    CHECK(w.random[0].bytes == 160);
    CHECK(w.stream_bytes == 64180);  // nothing taken out: the multiply streams q0
    CHECK(w.output_bytes == 32160);
    CHECK(w.output_buffers == 2);
    CHECK(w.input_buffers == 2);
  }
  SECTION("kCustom fusion wrapping a gather: costed and split as the gather") {
    // Cost = the gather's: 160 + 20 read, 160 written = 340 B; random 160 B; stream 180 B.
    const CardWork w = work(m, "fc");
    CHECK(w.bytes == 340);
    REQUIRE(w.random.size() == 1);
    CHECK(w.random[0].bytes == 160);
    CHECK(w.random[0].run_bytes == 32);
    CHECK(w.random[0].source_bytes == 32000);
    CHECK(w.stream_bytes == 180);
    CHECK(w.compulsory_bytes == 32020 + 160);
  }
  SECTION("kLoop fusion whose root scatters into a fused parameter: updated in place") {
    // Cost: s0 read whole 32000 B (the scatter), s1 20 B, s2 160 B (negate); written the whole
    // result 32000 B: 64180 B. FLOPs: negate 40 + 40 adds = 80.
    const CardWork w = work(m, "fs");
    CHECK(w.bytes == 64180);
    CHECK(w.flops == 80);
    REQUIRE(w.random.size() == 1);
    CHECK(w.random[0].read_modify_write);
    CHECK(w.random[0].bytes == 320);  // 2 x 160
    CHECK(w.random[0].run_bytes == 32);
    CHECK(w.random[0].accesses == 10);
    CHECK(w.random[0].source_bytes == 32000);
    // Stream: 64180 - 32000 (s0 read only by the scatter) - 32000 (the result, written in
    // place) = 180 B: indices 20 + updates 160.
    CHECK(w.stream_bytes == 180);
    CHECK(w.input_bytes == 32180);
    CHECK(w.input_buffers == 3);
    CHECK(w.output_bytes == 32000);
    CHECK(w.compulsory_bytes == 64180);
  }
  SECTION("kCustom fusion wrapping a scatter: as the scatter") {
    // Cost = the scatter's 500 B; random 320 B; stream 180 B.
    const CardWork w = work(m, "fx");
    CHECK(w.bytes == 500);
    REQUIRE(w.random.size() == 1);
    CHECK(w.random[0].read_modify_write);
    CHECK(w.random[0].bytes == 320);
    CHECK(w.stream_bytes == 180);
  }
  SECTION("a gather from an array computed inside the fusion stays on chip") {
    // Cost: j1 20 B read, 160 B written, 40 FLOPs (the iota is data movement): 180 B.
    const CardWork w = work(m, "fi");
    CHECK(w.bytes == 180);
    CHECK(w.random.empty());
    CHECK(w.stream_bytes == 180);
    CHECK(w.compulsory_bytes == 180);  // min(inputs 20 + output 160, bytes 180)
  }
}

TEST_CASE("card_work: sort facts", "[analysis][fpga][card_work]") {
  const hlo::Module m = module(R"(  k = f32[8,1000]{1,0} parameter(0)
  v = s32[8,1000]{1,0} parameter(1)
  k2 = f32[1000,8]{1,0} parameter(2)
  s = (f32[8,1000]{1,0}, s32[8,1000]{1,0}) sort(k, v), dimensions={1}, to_apply=lt
  s2 = f32[1000,8]{1,0} sort(k2), dimensions={0}, to_apply=lt1
  ROOT o = f32[1000,8]{1,0} negate(s2)
)",
                               R"(lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT
}
lt1 {
  a1 = f32[] parameter(0)
  b1 = f32[] parameter(1)
  ROOT r1 = pred[] compare(a1, b1), direction=LT
}
)");
  // Key + value sort along dimension 1 of [8,1000]: 1000 keys per sort, 8000 / 1000 = 8
  // sorts, each element moves 4 B key + 4 B value = 8 B.
  const CardWork s = work(m, "s");
  CHECK(s.sort_length == 1000);
  CHECK(s.sort_count == 8);
  CHECK(s.sort_element_bytes == 8);
  // Cost: 8000 x ceil(log2 8000) = 8000 x 13 = 104000 FLOPs; read 32000 + 32000, written both
  // arrays 64000: 128000 B, all streamed; compulsory min(64000 + 64000, 128000) = 128000.
  CHECK(s.flops == 104000);
  CHECK(s.bytes == 128000);
  CHECK(s.stream_bytes == 128000);
  CHECK(s.random.empty());
  CHECK(s.compulsory_bytes == 128000);
  CHECK(s.input_buffers == 2);
  CHECK(s.output_buffers == 2);
  CHECK(s.fft_length == 0);
  // Key-only sort along dimension 0 of [1000,8]: 1000 keys, 8 sorts, 4 B per element.
  const CardWork s2 = work(m, "s2");
  CHECK(s2.sort_length == 1000);
  CHECK(s2.sort_count == 8);
  CHECK(s2.sort_element_bytes == 4);
}

TEST_CASE("card_work: FFT facts and the card's 5 N log2 N FLOPs", "[analysis][fpga][card_work]") {
  const hlo::Module m = module(R"(  c = c64[4,256]{1,0} parameter(0)
  x = f32[4,256]{1,0} parameter(1)
  c2 = c64[4,16,16]{2,1,0} parameter(2)
  h = c64[4,129]{1,0} parameter(3)
  f = c64[4,256]{1,0} fft(c), fft_type=FFT, fft_length={256}
  r = c64[4,129]{1,0} fft(x), fft_type=RFFT, fft_length={256}
  f2 = c64[4,16,16]{2,1,0} fft(c2), fft_type=FFT, fft_length={16,16}
  ir = f32[4,256]{1,0} fft(h), fft_type=IRFFT, fft_length={256}
  ROOT o = (c64[4,256]{1,0}, c64[4,129]{1,0}) tuple(f, r)
)");
  // Complex FFT of 256 points, 4 transforms (1024 points / 256), 8 B per c64 point.
  // XLA counts 2 x 4 x log2(256) x 1024 = 65536 FLOPs; the card 5 N log2 N per transform:
  // 5 x 256 x 8 x 4 = 40960.
  CHECK(ins(m, "f").cost.flops == 65536);
  const CardWork f = work(m, "f");
  CHECK(f.fft_length == 256);
  CHECK(f.fft_count == 4);
  CHECK(f.fft_point_bytes == 8);
  CHECK(f.flops == 40960);
  // Bytes unchanged: 8192 read + 8192 written, streamed.
  CHECK(f.bytes == 16384);
  CHECK(f.stream_bytes == 16384);
  CHECK(f.sort_length == 0);
  // Real-input FFT: half the FLOPs, 0.5 x 40960 = 20480; 1024 input points (the result has
  // 4 x 129 = 516), 4 transforms, 8 B per point (the larger of f32 4 B and c64 8 B).
  const CardWork r = work(m, "r");
  CHECK(r.fft_length == 256);
  CHECK(r.fft_count == 4);
  CHECK(r.fft_point_bytes == 8);
  CHECK(r.flops == 20480);
  // 2-D FFT of 16 x 16 = 256 points: XLA 2 x 4 x (4 x 4) x 1024 = 131072; card 40960.
  CHECK(ins(m, "f2").cost.flops == 131072);
  CHECK(work(m, "f2").fft_length == 256);
  CHECK(work(m, "f2").flops == 40960);
  // Inverse real FFT: 1024 output points (516 input), 4 transforms: 20480; XLA counted
  // 2 x 4 x 8 x 516 = 33024.
  CHECK(ins(m, "ir").cost.flops == 33024);
  CHECK(work(m, "ir").fft_count == 4);
  CHECK(work(m, "ir").flops == 20480);
}

TEST_CASE("card_work: compulsory bytes, inputs and outputs", "[analysis][fpga][card_work]") {
  const hlo::Module m = module(R"(  x = f32[64,32]{1,0} parameter(0)
  y = f32[1000]{0} parameter(1)
  z = f32[100,10]{1,0} parameter(2)
  i = s32[] parameter(3)
  j = s32[] parameter(4)
  q = f32[4]{0} parameter(5)
  s = f32[8,32]{1,0} slice(x), slice={[0:8], [0:32]}
  mul = f32[1000]{0} multiply(y, y)
  add2 = f32[1000]{0} add(mul, y)
  d = f32[4,10]{1,0} slice(z), slice={[0:4], [0:10]}
  u = f32[100,10]{1,0} dynamic-update-slice(z, d, i, j)
  bc = f32[32,64]{1,0} bitcast(x)
  fk = f32[4]{0} fusion(q), kind=kLoop, calls=with_constant
  ROOT o = (f32[8,32]{1,0}, f32[1000]{0}) tuple(s, add2)
)",
                               R"(with_constant {
  p = f32[4]{0} parameter(0)
  k = f32[4]{0} constant({1, 2, 3, 4})
  ROOT a = f32[4]{0} add(p, k)
}
)");
  // Slice: moves 1024 B in and 1024 B out (2048 B); inputs + output = 8192 + 1024 = 9216 B,
  // but without random traffic the compulsory bytes are at most what it moves: 2048 B.
  const CardWork s = work(m, "s");
  CHECK(s.bytes == 2048);
  CHECK(s.input_bytes == 8192);
  CHECK(s.output_bytes == 1024);
  CHECK(s.compulsory_bytes == 2048);
  // multiply(y, y): the cost model reads y twice (8000 B) and writes 4000 B: 12000 B; the
  // distinct input y once: 4000 B (1 array) + output 4000 B = 8000 B.
  const CardWork mul = work(m, "mul");
  CHECK(mul.bytes == 12000);
  CHECK(mul.input_bytes == 4000);
  CHECK(mul.input_buffers == 1);
  CHECK(mul.compulsory_bytes == 8000);
  CHECK(mul.stream_bytes == 12000);
  // add(mul, y): two distinct arrays, 8000 B in + 4000 B out = 12000 B = what it moves.
  CHECK(work(m, "add2").compulsory_bytes == 12000);
  CHECK(work(m, "add2").input_buffers == 2);
  // In-place dynamic-update-slice: moves the 160 B update + 4 B index in, 160 B out = 324 B;
  // its inputs are z 4000 + d 160 + i 4 + j 4 = 4168 B in 4 arrays: compulsory min(4168 +
  // 4000, 324) = 324 B.
  const CardWork u = work(m, "u");
  CHECK(u.bytes == 324);
  CHECK(u.input_bytes == 4168);
  CHECK(u.input_buffers == 4);
  CHECK(u.compulsory_bytes == 324);
  // A bitcast moves nothing: compulsory 0.
  CHECK(work(m, "bc").bytes == 0);
  CHECK(work(m, "bc").compulsory_bytes == 0);
  // A fusion with a 4-element constant inside: the constant is read (16 B) though not an
  // operand, so it counts in the compulsory traffic, but it is part of the design, not data the
  // host sends: inputs 16 B (q) in 1 array, constants 16 B; cost 16 + 16 read + 16 written =
  // 48 B; compulsory inputs 16 + constants 16 + output 16 = 48 B.
  const CardWork fk = work(m, "fk");
  CHECK(fk.bytes == 48);
  CHECK(fk.input_bytes == 16);
  CHECK(fk.constant_bytes == 16);
  CHECK(fk.input_buffers == 1);
  CHECK(fk.compulsory_bytes == 48);
}

TEST_CASE("card_work: unknown cost, totals only, module inputs and outputs", "[analysis][fpga][card_work]") {
  const hlo::Module m = module(R"(  x = f32[1000]{0} parameter(0)
  pt = (f32[10]{0}, s32[5]{0}) parameter(1)
  u = f32[8]{0} custom-call(x), custom_call_target="my_kernel"
  ROOT o = (f32[1000]{0}, f32[8]{0}) tuple(x, u)
)");
  // A custom call without a cost rule: unknown.
  CHECK_FALSE(work(m, "u").known);
  // Module: parameters 4000 B (1 array) + a tuple of 40 + 20 B (2 arrays); result a tuple of
  // 4000 + 32 B (2 arrays): 8092 B in 5 buffers.
  CHECK(module_io_bytes(m) == 8092);
  CHECK(module_io_buffers(m) == 5);

  // An op known by its totals only: every byte streams, one buffer each way.
  const CardWork w = card_work_from_totals(1e6, 8e6, 4e6);
  CHECK(w.known);
  CHECK(w.flops == 1e6);
  CHECK(w.bytes == 12e6);
  CHECK(w.stream_bytes == 12e6);
  CHECK(w.random.empty());
  CHECK(w.random_bytes() == 0);
  CHECK(w.compulsory_bytes == 12e6);
  CHECK(w.input_bytes == 8e6);
  CHECK(w.output_bytes == 4e6);
  CHECK(w.working_set_bytes == 4e6);
  CHECK(w.input_buffers == 1);
  CHECK(w.output_buffers == 1);
  CHECK(w.sort_length == 0);
  CHECK(w.fft_length == 0);
}

TEST_CASE("card_work: a library call's scratch buffer is not an output", "[analysis][fpga][card_work]") {
  // cuBLAS GEMM as XLA:GPU prints it: (result, workspace). a f32[64,32] x b f32[32,64]: 2 x 64 x
  // 64 x 32 = 262,144 FLOPs; inputs 8192 + 8192 B; the result 64 x 64 x 4 = 16,384 B. The
  // 1024 B workspace is the GPU library's: outputs 16,384 B in 1 array, compulsory 32,768 B.
  const hlo::Module m = module(R"(  a = f32[64,32]{1,0} parameter(0)
  b = f32[32,64]{1,0} parameter(1)
  g = (f32[64,64]{1,0}, s8[1024]{0}) custom-call(a, b), custom_call_target="__cublas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]}}}
  ROOT r = f32[64,64]{1,0} get-tuple-element(g), index=0
)");
  const CardWork g = work(m, "g");
  CHECK(g.known);
  CHECK(g.flops == 262144);
  CHECK(g.input_bytes == 16384);
  CHECK(g.input_buffers == 2);
  CHECK(g.output_bytes == 16384);
  CHECK(g.output_buffers == 1);
  CHECK(g.compulsory_bytes == 32768);
  // A custom call without a rule keeps every leaf of its result (nothing says which is scratch).
  const hlo::Module u = module(R"(  x = f32[100]{0} parameter(0)
  k = (f32[100]{0}, s8[64]{0}) custom-call(x), custom_call_target="my_kernel"
  ROOT o = f32[100]{0} get-tuple-element(k), index=0
)");
  CHECK(work(u, "k").output_bytes == 464);
  CHECK(work(u, "k").output_buffers == 2);
}

TEST_CASE("card_work: a gather reading a slice of a fused parameter is random traffic", "[analysis][fpga][card_work]") {
  const hlo::Module m = module(R"(  x = f32[1000,8]{1,0} parameter(0)
  i = s32[5,1]{1,0} parameter(1)
  ROOT f = f32[5,8]{1,0} fusion(x, i), kind=kLoop, calls=gather_slice
)",
                               R"(gather_slice {
  p0 = f32[1000,8]{1,0} parameter(0)
  p1 = s32[5,1]{1,0} parameter(1)
  sl = f32[500,8]{1,0} slice(p0), slice={[500:1000], [0:8]}
  g = f32[5,8]{1,0} gather(sl, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
  ROOT n = f32[5,8]{1,0} negate(g)
}
)");
  const CardWork w = work(m, "f");
  // The slice is part of p0 in card memory, not an array computed on chip: 5 accesses of one
  // 8-float row (32 B), 160 B, into the 16000 B slice. The cost model counted only the slice's
  // read of p0, so p0 stays streamed (nothing taken out of stream_bytes).
  REQUIRE(w.random.size() == 1);
  CHECK(w.random[0].bytes == 160);
  CHECK(w.random[0].run_bytes == 32);
  CHECK(w.random[0].accesses == 5);
  CHECK(w.random[0].source_bytes == 16000);
  CHECK(w.stream_bytes == w.bytes);
}

TEST_CASE("card_work: a gather reading a concatenation of fused parameters is random traffic",
          "[analysis][fpga][card_work]") {
  // 5 accesses of one 8-float row (32 B) into the 12000 B concatenation of a 4000 B and an
  // 8000 B parameter; both parameters keep their counted (streamed) read.
  const hlo::Module m = module(R"(  x = f32[125,8]{1,0} parameter(0)
  y = f32[250,8]{1,0} parameter(1)
  i = s32[5,1]{1,0} parameter(2)
  ROOT f = f32[5,8]{1,0} fusion(x, y, i), kind=kLoop, calls=gather_concat
)",
                               R"(gather_concat {
  p0 = f32[125,8]{1,0} parameter(0)
  p1 = f32[250,8]{1,0} parameter(1)
  p2 = s32[5,1]{1,0} parameter(2)
  c = f32[375,8]{1,0} concatenate(p0, p1), dimensions={0}
  ROOT g = f32[5,8]{1,0} gather(c, p2), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
}
)");
  const CardWork w = work(m, "f");
  REQUIRE(w.random.size() == 1);
  CHECK(w.random[0].bytes == 160);
  CHECK(w.random[0].accesses == 5);
  CHECK(w.random[0].source_bytes == 12000);
}

TEST_CASE("card_work: a gather from a broadcast of a fused parameter stays on chip", "[analysis][fpga][card_work]") {
  const hlo::Module m = module(R"(  x = f32[8]{0} parameter(0)
  i = s32[5,1]{1,0} parameter(1)
  ROOT f = f32[5,8]{1,0} fusion(x, i), kind=kLoop, calls=gather_bcast
)",
                               R"(gather_bcast {
  p0 = f32[8]{0} parameter(0)
  p1 = s32[5,1]{1,0} parameter(1)
  b = f32[1000,8]{1,0} broadcast(p0), dimensions={1}
  ROOT g = f32[5,8]{1,0} gather(b, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
}
)");
  CHECK(work(m, "f").random.empty());
}

TEST_CASE("card_work: a gather through a broadcast reads the table where its indices land on kept dimensions",
          "[analysis][fpga][card_work]") {
  // MBIRJAX 0.7's loop_gather_select_fusion in small: a table t[4,10] broadcast to [4,3,10]
  // (dimensions {0,2} kept), combined per element with a scaled copy, viewed as [4,30] and
  // gathered at 6 (row, column) pairs of one float. The column index covers the kept
  // dimension 2: each of the 6 floats reads t at random, 6 accesses of 4 B = 24 B from an
  // array of 4 x 10 x 4 = 160 B (t, not the 480 B broadcast). The scale vector s[4] is
  // broadcast along dimension 0, which the row index covers too: it is also read per access,
  // so the array read is t and s together, 176 B.
  const hlo::Module m = module(R"(  x = f32[4,10]{1,0} parameter(0)
  v = f32[4]{0} parameter(1)
  i = s32[6,2]{1,0} parameter(2)
  ROOT f = f32[6,1,1]{2,1,0} fusion(x, v, i), kind=kLoop, calls=gather_table
)",
                               R"(gather_table {
  t = f32[4,10]{1,0} parameter(0)
  s = f32[4]{0} parameter(1)
  idx = s32[6,2]{1,0} parameter(2)
  bt = f32[4,3,10]{2,1,0} broadcast(t), dimensions={0,2}
  bs = f32[4,3,10]{2,1,0} broadcast(s), dimensions={0}
  prod = f32[4,3,10]{2,1,0} multiply(bt, bs)
  flat = f32[4,30]{1,0} bitcast(prod)
  ROOT g = f32[6,1,1]{2,1,0} gather(flat, idx), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1}
}
)");
  const CardWork w = work(m, "f");
  REQUIRE(w.random.size() == 1);
  CHECK(w.random[0].accesses == 6);
  CHECK(w.random[0].bytes == 24);
  CHECK(w.random[0].run_bytes == 4);
  CHECK(w.random[0].source_bytes == 176);

  // The row numbers from an iota, concatenated to the data-dependent columns (as MBIRJAX
  // builds its indices): the rows are walked in order, so s, broadcast along the rows only,
  // is not read at random; t is, at the columns. 6 accesses of 4 B into t's 160 B.
  const hlo::Module mi = module(R"(  x = f32[4,10]{1,0} parameter(0)
  v = f32[4]{0} parameter(1)
  c = s32[6,1]{1,0} parameter(2)
  ROOT f = f32[6,1,1]{2,1,0} fusion(x, v, c), kind=kLoop, calls=gather_rows
)",
                                R"(gather_rows {
  t = f32[4,10]{1,0} parameter(0)
  s = f32[4]{0} parameter(1)
  col = s32[6,1]{1,0} parameter(2)
  row = s32[6,1]{1,0} iota(), iota_dimension=0
  idx = s32[6,2]{1,0} concatenate(row, col), dimensions={1}
  bt = f32[4,3,10]{2,1,0} broadcast(t), dimensions={0,2}
  bs = f32[4,3,10]{2,1,0} broadcast(s), dimensions={0}
  prod = f32[4,3,10]{2,1,0} multiply(bt, bs)
  flat = f32[4,30]{1,0} bitcast(prod)
  ROOT g = f32[6,1,1]{2,1,0} gather(flat, idx), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1}
}
)");
  const CardWork wi = work(mi, "f");
  REQUIRE(wi.random.size() == 1);
  CHECK(wi.random[0].accesses == 6);
  CHECK(wi.random[0].source_bytes == 160);
  // With the columns from an iota too, nothing is read at random.
  std::string fixed = R"(gather_fixed {
  t = f32[4,10]{1,0} parameter(0)
  row = s32[6,1]{1,0} iota(), iota_dimension=0
  col = s32[6,1]{1,0} iota(), iota_dimension=0
  idx = s32[6,2]{1,0} concatenate(row, col), dimensions={1}
  bt = f32[4,3,10]{2,1,0} broadcast(t), dimensions={0,2}
  flat = f32[4,30]{1,0} bitcast(bt)
  ROOT g = f32[6,1,1]{2,1,0} gather(flat, idx), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1}
}
)";
  CHECK(work(module(R"(  x = f32[4,10]{1,0} parameter(0)
  ROOT f = f32[6,1,1]{2,1,0} fusion(x), kind=kLoop, calls=gather_fixed
)",
                    fixed),
             "f")
            .random.empty());

  // Through a transpose: the broadcast keeps v's one dimension as its dimension 1, which the
  // transpose makes dimension 0. Indices on dimension 0 read v at random (5 floats); indices
  // on dimension 1 (the one the broadcast adds) take whole copies of v, which stay on chip.
  const std::string through_transpose = R"(gather_transposed {
  p0 = f32[8]{0} parameter(0)
  p1 = s32[5,1]{1,0} parameter(1)
  b = f32[1000,8]{1,0} broadcast(p0), dimensions={1}
  tr = f32[8,1000]{1,0} transpose(b), dimensions={1,0}
  ROOT g = f32[5,1,1]{2,1,0} gather(tr, p1), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={DIM}, index_vector_dim=1, slice_sizes={1,1}
}
)";
  const std::string entry = R"(  x = f32[8]{0} parameter(0)
  i = s32[5,1]{1,0} parameter(1)
  ROOT f = f32[5,1,1]{2,1,0} fusion(x, i), kind=kLoop, calls=gather_transposed
)";
  std::string kept = through_transpose, added = through_transpose;
  kept.replace(kept.find("DIM"), 3, "0");
  added.replace(added.find("DIM"), 3, "1");
  const CardWork wk = work(module(entry, kept), "f");
  REQUIRE(wk.random.size() == 1);
  CHECK(wk.random[0].accesses == 5);
  CHECK(wk.random[0].source_bytes == 32);
  CHECK(work(module(entry, added), "f").random.empty());

  // Through a reshape that merges the kept and the added dimension: [1000,8] -> [8000]. An
  // index into the merged dimension lands on both, so it reads p0 at random.
  const hlo::Module r = module(R"(  x = f32[8]{0} parameter(0)
  i = s32[5,1]{1,0} parameter(1)
  ROOT f = f32[5,1]{1,0} fusion(x, i), kind=kLoop, calls=gather_reshaped
)",
                               R"(gather_reshaped {
  p0 = f32[8]{0} parameter(0)
  p1 = s32[5,1]{1,0} parameter(1)
  b = f32[1000,8]{1,0} broadcast(p0), dimensions={1}
  flat = f32[8000]{0} reshape(b)
  ROOT g = f32[5,1]{1,0} gather(flat, p1), offset_dims={1}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
}
)");
  const CardWork wr = work(r, "f");
  REQUIRE(wr.random.size() == 1);
  CHECK(wr.random[0].accesses == 5);
  CHECK(wr.random[0].source_bytes == 32);
}

TEST_CASE("card_work: shapes from hostile text do not overflow the dimension walk", "[analysis][fpga][card_work]") {
  // 2^40 x 2^40 elements: the running products of the reshape's dimension groups (2^80) are no
  // int64; the walk still finds the kept dimension 1 behind the reshape and charges 5 reads.
  const hlo::Module m = module(R"(  x = f32[1099511627776]{0} parameter(0)
  i = s32[5,2]{1,0} parameter(1)
  ROOT f = f32[5,1,1]{2,1,0} fusion(x, i), kind=kLoop, calls=huge
)",
                               R"(huge {
  p0 = f32[1099511627776]{0} parameter(0)
  p1 = s32[5,2]{1,0} parameter(1)
  b = f32[1099511627776,1099511627776]{1,0} broadcast(p0), dimensions={1}
  r = f32[1099511627776,1099511627776]{1,0} reshape(b)
  ROOT g = f32[5,1,1]{2,1,0} gather(r, p1), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1}
}
)");
  const CardWork w = work(m, "f");
  REQUIRE(w.random.size() == 1);
  CHECK(w.random[0].accesses == 5);
  CHECK(w.random[0].source_bytes == 4.0 * 1099511627776.0);
}

TEST_CASE("card_work: a gather of what inner gathers compute evaluates them per element it takes",
          "[analysis][fpga][card_work]") {
  // Fused, the inner gather g is not materialized: each of the 40 floats h takes (5 rows of 8)
  // evaluates negate(g) there, an access of one float (4 B) of x each: 40 accesses, 160 B,
  // not g's 50 rows. h itself reads no card memory (what it gathers is computed on chip).
  // Restructured: g read once (its 50 rows of 32 B) and h's 40 floats served on chip: 90.
  const hlo::Module m = module(R"(  x = f32[1000,8]{1,0} parameter(0)
  i = s32[50,1]{1,0} parameter(1)
  j = s32[5,1]{1,0} parameter(2)
  ROOT f = f32[5,8]{1,0} fusion(x, i, j), kind=kLoop, calls=gather_gather
)",
                               R"(gather_gather {
  p0 = f32[1000,8]{1,0} parameter(0)
  p1 = s32[50,1]{1,0} parameter(1)
  p2 = s32[5,1]{1,0} parameter(2)
  g = f32[50,8]{1,0} gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
  n = f32[50,8]{1,0} negate(g)
  ROOT h = f32[5,8]{1,0} gather(n, p2), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
}
)");
  const CardWork w = work(m, "f");
  REQUIRE(w.random.size() == 1);
  CHECK(w.random[0].accesses == 40);
  CHECK(w.random[0].bytes == 160);
  CHECK(w.random[0].run_bytes == 4);
  CHECK(w.random[0].source_bytes == 32000);
  CHECK(w.random[0].restructured_accesses == 90);

  // MBIRJAX's cone back projection (fused_cosine_transpose): three outer gathers each take 6
  // single floats of a sum of two inner gathers of the volume, so each inner gather is
  // evaluated at 3 x 6 = 18 floats, 4 B each. The sum is also the fusion's fourth output,
  // computed whole: each inner gather's own 3 rows of 32 B once more. 21 accesses, 96 + 72 =
  // 168 B. Restructured: each read once (3 rows) and the outer gathers' 18 floats served on
  // chip, split between the two: 3 + 9 each.
  const hlo::Module c = module(R"(  x = f32[1000,8]{1,0} parameter(0)
  i = s32[3,1]{1,0} parameter(1)
  k = s32[6,2]{1,0} parameter(2)
  ROOT f = (f32[6]{0}, f32[6]{0}, f32[6]{0}, f32[3,8]{1,0}) fusion(x, i, k), kind=kLoop, calls=sum_gathers
)",
                               R"(sum_gathers {
  p0 = f32[1000,8]{1,0} parameter(0)
  p1 = s32[3,1]{1,0} parameter(1)
  p2 = s32[6,2]{1,0} parameter(2)
  g1 = f32[3,8]{1,0} gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
  g2 = f32[3,8]{1,0} gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
  s = f32[3,8]{1,0} add(g1, g2)
  o1 = f32[6]{0} gather(s, p2), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1}
  o2 = f32[6]{0} gather(s, p2), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1}
  o3 = f32[6]{0} gather(s, p2), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1}
  ROOT t = (f32[6]{0}, f32[6]{0}, f32[6]{0}, f32[3,8]{1,0}) tuple(o1, o2, o3, s)
}
)");
  const CardWork cw = work(c, "f");
  REQUIRE(cw.random.size() == 2);  // g1 and g2; the outer gathers read what is computed on chip
  for (const RandomTraffic& t : cw.random) {
    CHECK(t.accesses == 21);
    CHECK(t.bytes == 168);
    CHECK(t.restructured_accesses == 12);
  }

  // A chain g3(g2(g1(x))): g3 takes 4 single floats of g2, which takes rows of g1: each float g3
  // takes evaluates g2 there, and g1 there: 4 accesses of 4 B of x, however long g2's rows.
  // A second use of g1 through a reduction computes it whole (its 2 rows of 32 B) besides.
  const hlo::Module ch = module(R"(  x = f32[1000,8]{1,0} parameter(0)
  i = s32[2,1]{1,0} parameter(1)
  j = s32[3,1]{1,0} parameter(2)
  k = s32[4,2]{1,0} parameter(3)
  ROOT f = (f32[4]{0}, f32[2]{0}) fusion(x, i, j, k), kind=kLoop, calls=chain
)",
                                R"(add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

chain {
  p0 = f32[1000,8]{1,0} parameter(0)
  p1 = s32[2,1]{1,0} parameter(1)
  p2 = s32[3,1]{1,0} parameter(2)
  p3 = s32[4,2]{1,0} parameter(3)
  g1 = f32[2,8]{1,0} gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
  g2 = f32[3,8]{1,0} gather(g1, p2), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
  g3 = f32[4]{0} gather(g2, p3), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1}
  zero = f32[] constant(0)
  r = f32[2]{0} reduce(g1, zero), dimensions={1}, to_apply=add_f32
  ROOT t = (f32[4]{0}, f32[2]{0}) tuple(g3, r)
}
)");
  const CardWork chw = work(ch, "f");
  REQUIRE(chw.random.size() == 1);  // g1: g2 and g3 gather what is computed on chip
  CHECK(chw.random[0].accesses == 2 + 4);
  CHECK(chw.random[0].bytes == 64 + 16);
}

TEST_CASE("module_handoff: ops without a cost inside a while body hand their arrays to the card's ops",
          "[analysis][fpga][handoff]") {
  // A loop body (its custom calls have no cost: they stay on the GPU, the rest goes to the
  // card), per trip:
  //   cc reads sq (4,096 B, a card fusion's) and gives 4,096 B to af (card):    8,192 B, 2 arrays
  //   cu reads state element 2 (1,024 B), which nu (card) computed on the previous trip, and
  //      gives nu its result (1,024 B):                                          2,048 B, 2 arrays
  //   ck reads tm (512 B, card) and returns its result as state element 3, which tm (card)
  //      reads on the next trip (512 B):                                         1,024 B, 2 arrays
  //   ci reads state element 4, the entry's argument carried unchanged, and gives nothing to
  //      a card op: it hands nothing (whatever the caller holds is not known here).
  const hlo::Module m = hlo::analyze_hlo(R"(HloModule loopmixed
fsq {
  a = f32[1024]{0} parameter(0)
  ROOT m = f32[1024]{0} multiply(a, a)
}
fadd {
  b = f32[1024]{0} parameter(0)
  ROOT s = f32[1024]{0} add(b, b)
}
body {
  p = (s32[], f32[1024]{0}, f32[256]{0}, f32[128]{0}, f32[64]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[1024]{0} get-tuple-element(p), index=1
  u = f32[256]{0} get-tuple-element(p), index=2
  t = f32[128]{0} get-tuple-element(p), index=3
  x = f32[64]{0} get-tuple-element(p), index=4
  sq = f32[1024]{0} fusion(v), kind=kLoop, calls=fsq
  cc = f32[1024]{0} custom-call(sq), custom_call_target="my_gpu_kernel"
  af = f32[1024]{0} fusion(cc), kind=kLoop, calls=fadd
  cu = f32[256]{0} custom-call(u), custom_call_target="my_gpu_kernel"
  nu = f32[256]{0} negate(cu)
  tm = f32[128]{0} multiply(t, t)
  ck = f32[128]{0} custom-call(tm), custom_call_target="my_gpu_kernel"
  ci = f32[64]{0} custom-call(x), custom_call_target="my_gpu_kernel"
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT r = (s32[], f32[1024]{0}, f32[256]{0}, f32[128]{0}, f32[64]{0}) tuple(j, af, nu, ck, x)
}
cond {
  q = (s32[], f32[1024]{0}, f32[256]{0}, f32[128]{0}, f32[64]{0}) parameter(0)
  qi = s32[] get-tuple-element(q), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(qi, n), direction=LT
}
ENTRY e {
  a0 = f32[1024]{0} parameter(0)
  b0 = f32[256]{0} parameter(1)
  c0 = f32[128]{0} parameter(2)
  d0 = f32[64]{0} parameter(3)
  z = s32[] constant(0)
  st = (s32[], f32[1024]{0}, f32[256]{0}, f32[128]{0}, f32[64]{0}) tuple(z, a0, b0, c0, d0)
  w = (s32[], f32[1024]{0}, f32[256]{0}, f32[128]{0}, f32[64]{0}) while(st), condition=cond, body=body, backend_config={"known_trip_count":{"n":"3"}}
  ROOT y = f32[1024]{0} get-tuple-element(w), index=1
}
)");
  const auto h = module_handoff(m);
  REQUIRE(h.count("cc") == 1);
  CHECK(h.at("cc").bytes == 8192);
  CHECK(h.at("cc").arrays == 2);
  REQUIRE(h.count("cu") == 1);
  CHECK(h.at("cu").bytes == 2048);
  CHECK(h.at("cu").arrays == 2);
  REQUIRE(h.count("ck") == 1);
  CHECK(h.at("ck").bytes == 1024);
  CHECK(h.at("ck").arrays == 2);
  CHECK(h.count("ci") == 0);
  for (const char* op : {"cc", "cu", "ck"}) {
    CHECK(h.at(op).resident_bytes == 0);
    CHECK(h.at(op).resident_arrays == 0);
  }
}

TEST_CASE("module_handoff: a loop's state from its caller's card ops and its results to them",
          "[analysis][fpga][handoff]") {
  // 4 trips; before the loop the card computes n1 (1,024 B), n2 (256 B) and n3 (512 B), the
  // loop's initial state elements 1, 2 and 3. In the body (custom calls stay on the GPU):
  //   ci reads element 1, which the body passes on unchanged: n1 crosses once per loop, on the
  //      first trip (the GPU keeps it for the others): 1,024 B / 4 trips = 256 B and 1/4 array
  //      per execution of ci.
  //   ck reads element 2 and gives it the next trip's value: the first trip reads n2 (256 B,
  //      once per loop); the others read what ck computed, on the GPU. After the loop ex (card)
  //      reads ck's last result (256 B, once per loop): 512 B / 4 = 128 B and 1/2 array.
  //   cu reads element 3 and gives the next trip's value, which nu (card) reads each trip: its
  //      result crosses each trip (512 B, the last trip's for ey after the loop, so that read adds
  //      nothing); n3 crosses on the first trip: 512 + 512 / 4 = 640 B and 1 + 1/4 array.
  const std::string text = R"(HloModule loopedges
body {
  p = (s32[], f32[256]{0}, f32[64]{0}, f32[128]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[256]{0} get-tuple-element(p), index=1
  y = f32[64]{0} get-tuple-element(p), index=2
  u = f32[128]{0} get-tuple-element(p), index=3
  ci = f32[256]{0} custom-call(x), custom_call_target="my_gpu_kernel"
  ck = f32[64]{0} custom-call(y), custom_call_target="my_gpu_kernel"
  cu = f32[128]{0} custom-call(u), custom_call_target="my_gpu_kernel"
  nu = f32[128]{0} negate(u)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT r = (s32[], f32[256]{0}, f32[64]{0}, f32[128]{0}) tuple(j, x, ck, cu)
}
cond {
  q = (s32[], f32[256]{0}, f32[64]{0}, f32[128]{0}) parameter(0)
  qi = s32[] get-tuple-element(q), index=0
  n = s32[] constant(4)
  ROOT c = pred[] compare(qi, n), direction=LT
}
ENTRY e {
  a1 = f32[256]{0} parameter(0)
  a2 = f32[64]{0} parameter(1)
  a3 = f32[128]{0} parameter(2)
  n1 = f32[256]{0} negate(a1)
  n2 = f32[64]{0} negate(a2)
  n3 = f32[128]{0} negate(a3)
  z = s32[] constant(0)
  st = (s32[], f32[256]{0}, f32[64]{0}, f32[128]{0}) tuple(z, n1, n2, n3)
  w = (s32[], f32[256]{0}, f32[64]{0}, f32[128]{0}) while(st), condition=cond, body=body, backend_config={"known_trip_count":{"n":"4"}}
  g2 = f32[64]{0} get-tuple-element(w), index=2
  g3 = f32[128]{0} get-tuple-element(w), index=3
  ex = f32[64]{0} exponential(g2)
  ey = f32[128]{0} exponential(g3)
  ROOT o = (f32[64]{0}, f32[128]{0}) tuple(ex, ey)
}
)";
  const auto h = module_handoff(hlo::analyze_hlo(text));
  REQUIRE(h.count("ci") == 1);
  CHECK(h.at("ci").bytes == 256);
  CHECK(h.at("ci").arrays == 0.25);
  REQUIRE(h.count("ck") == 1);
  CHECK(h.at("ck").bytes == 128);
  CHECK(h.at("ck").arrays == 0.5);
  REQUIRE(h.count("cu") == 1);
  CHECK(h.at("cu").bytes == 640);
  CHECK(h.at("cu").arrays == 1.25);
  for (const char* op : {"ci", "ck", "cu"}) CHECK(h.at(op).resident_bytes == 0);
  // Without a known trip count each execution counts them in full (at least as much as crosses).
  std::string unknown = text;
  unknown.replace(unknown.find(", backend_config="),
                  std::string(R"(, backend_config={"known_trip_count":{"n":"4"}})").size(), "");
  const auto hu = module_handoff(hlo::analyze_hlo(unknown));
  REQUIRE(hu.count("ci") == 1);
  CHECK(hu.at("ci").bytes == 1024);
  CHECK(hu.at("ck").bytes == 512);
  CHECK(hu.at("cu").bytes == 1024);
}

TEST_CASE("module_handoff: the arguments and results of a call and a conditional branch", "[analysis][fpga][handoff]") {
  // cc (in a call) reads the call's argument n0 (1,024 B) a card op computed in the caller, and
  // gives its result (1,024 B) to e0 (card) there: 2,048 B, 2 arrays a call. tk (a branch's
  // root) reads the branch's argument n2 (512 B, card) and its result goes to e2 (card): 1,024
  // B, 2 arrays each time the branch runs. The call's second argument (a1) nobody reads.
  const hlo::Module m = hlo::analyze_hlo(R"(HloModule callbranch
callee {
  cp0 = f32[256]{0} parameter(0)
  cp1 = f32[64]{0} parameter(1)
  cc = f32[256]{0} custom-call(cp0), custom_call_target="my_gpu_kernel"
  ROOT ct = (f32[256]{0}, f32[64]{0}) tuple(cc, cp1)
}
br_true {
  tp = (f32[128]{0}) parameter(0)
  tx = f32[128]{0} get-tuple-element(tp), index=0
  ROOT tk = f32[128]{0} custom-call(tx), custom_call_target="my_gpu_kernel"
}
br_false {
  fp = (f32[128]{0}) parameter(0)
  fx = f32[128]{0} get-tuple-element(fp), index=0
  ROOT fn = f32[128]{0} negate(fx)
}
ENTRY e {
  a0 = f32[256]{0} parameter(0)
  a1 = f32[64]{0} parameter(1)
  a2 = f32[128]{0} parameter(2)
  pr = pred[] parameter(3)
  n0 = f32[256]{0} negate(a0)
  c = (f32[256]{0}, f32[64]{0}) call(n0, a1), to_apply=callee
  r0 = f32[256]{0} get-tuple-element(c), index=0
  e0 = f32[256]{0} exponential(r0)
  n2 = f32[128]{0} negate(a2)
  bt = (f32[128]{0}) tuple(n2)
  k = f32[128]{0} conditional(pr, bt, bt), true_computation=br_true, false_computation=br_false
  e2 = f32[128]{0} exponential(k)
  ROOT out = (f32[256]{0}, f32[128]{0}) tuple(e0, e2)
}
)");
  const auto h = module_handoff(m);
  REQUIRE(h.count("cc") == 1);
  CHECK(h.at("cc").bytes == 2048);
  CHECK(h.at("cc").arrays == 2);
  CHECK(h.at("cc").resident_bytes == 0);
  REQUIRE(h.count("tk") == 1);
  CHECK(h.at("tk").bytes == 1024);
  CHECK(h.at("tk").arrays == 2);
  CHECK(h.at("tk").resident_bytes == 0);
  // ce (entry) takes n0 (1,024 B) over already and gives e0 (card) its result (1,024 B); the call's
  // root cc, a custom call giving a tuple, reads n0 on the GPU, and of its result e1 (card) reads
  // element 1 (256 B): nothing else crosses.
  const auto h2 = module_handoff(hlo::analyze_hlo(R"(HloModule callroot
callee {
  cp0 = f32[256]{0} parameter(0)
  ROOT cc = (f32[256]{0}, f32[64]{0}) custom-call(cp0), custom_call_target="my_gpu_kernel"
}
ENTRY e {
  a0 = f32[256]{0} parameter(0)
  n0 = f32[256]{0} negate(a0)
  ce = f32[256]{0} custom-call(n0), custom_call_target="my_gpu_kernel"
  c = (f32[256]{0}, f32[64]{0}) call(n0), to_apply=callee
  r1 = f32[64]{0} get-tuple-element(c), index=1
  e1 = f32[64]{0} exponential(r1)
  e0 = f32[256]{0} add(ce, n0)
  ROOT out = (f32[256]{0}, f32[64]{0}) tuple(e0, e1)
}
)"));
  REQUIRE(h2.count("ce") == 1);
  CHECK(h2.at("ce").bytes == 2048);
  REQUIRE(h2.count("cc") == 1);
  CHECK(h2.at("cc").bytes == 256);
  CHECK(h2.at("cc").arrays == 1);
  CHECK(h2.at("cc").resident_bytes == 0);
  // A branch may not run: n0 (1,024 B) crosses for bk when it runs, and for ck in every call.
  const auto h3 = module_handoff(hlo::analyze_hlo(R"(HloModule branchfirst
bt {
  tp = (f32[256]{0}) parameter(0)
  tx = f32[256]{0} get-tuple-element(tp), index=0
  bk = f32[256]{0} custom-call(tx), custom_call_target="my_gpu_kernel"
  ROOT tr = f32[] constant(0)
}
bf {
  fp = (f32[256]{0}) parameter(0)
  ROOT fr = f32[] constant(1)
}
callee {
  cp0 = f32[256]{0} parameter(0)
  ROOT ck = f32[256]{0} custom-call(cp0), custom_call_target="my_gpu_kernel"
}
ENTRY e {
  a0 = f32[256]{0} parameter(0)
  pr = pred[] parameter(1)
  n0 = f32[256]{0} negate(a0)
  t = (f32[256]{0}) tuple(n0)
  k = f32[] conditional(pr, t, t), true_computation=bt, false_computation=bf
  c = f32[256]{0} call(n0), to_apply=callee
  ROOT out = (f32[], f32[256]{0}) tuple(k, c)
}
)"));
  REQUIRE(h3.count("bk") == 1);
  CHECK(h3.at("bk").bytes == 1024);
  REQUIRE(h3.count("ck") == 1);
  CHECK(h3.at("ck").bytes == 1024);
  CHECK(h3.at("ck").resident_bytes == 1024);  // with the data on the card, the module's result
}

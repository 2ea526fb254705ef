// HLO text parser: syntax forms XLA prints, stack-frame resolution, errors.
#include <catch2/catch.hpp>

#include "fpgaprof/hlo/hlo_parser.hpp"

using namespace fpgaprof::hlo;

namespace {

// Newer XLA form (JAX 0.10 on CPU): stack-frame tables in the header, stack_frame_id in metadata.
const char* kNewForm =
    R"(HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[8]{0})->f32[8]{0}}, frontend_attributes={fingerprint="abc,{}"}

FileNames
1 "/home/u/prog.py"

FunctionNames
1 "<module>"
2 "f"
3 "g"

FileLocations
1 {file_name_id=1 function_name_id=1 line=12 end_line=12 column=4 end_column=23}
2 {file_name_id=1 function_name_id=2 line=9 end_line=9 column=11 end_column=15}
3 {file_name_id=1 function_name_id=3 line=3 end_line=3 column=11 end_column=21}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=2}
3 {file_location_id=3 parent_frame_id=3}


%fused_computation (param_0.1: f32[8]) -> f32[8] {
  %param_0.1 = f32[8]{0} parameter(0)
  %cos.0 = f32[8]{0} cosine(%param_0.1), metadata={op_name="jit(f)/cos" stack_frame_id=3}
  ROOT %add.0 = f32[8]{0} add(%cos.0, %param_0.1), metadata={op_name="jit(f)/add" stack_frame_id=2}
}

ENTRY %main.1 (x.1: f32[8]) -> f32[8] {
  %x.1 = f32[8]{0} parameter(0), metadata={op_name="x"}
  ROOT %f = f32[8]{0} fusion(%x.1), kind=kLoop, calls=%fused_computation, metadata={op_name="jit(f)/add" stack_frame_id=2}
}
)";

}  // namespace

TEST_CASE("parses module header, computations and instructions", "[hlo][parser]") {
  Module m = parse_hlo_module(kNewForm);
  CHECK(m.name == "jit_f");
  CHECK(m.attributes.at("is_scheduled") == "true");
  CHECK(m.attributes.at("entry_computation_layout") == "{(f32[8]{0})->f32[8]{0}}");
  REQUIRE(m.computations.size() == 2);
  const Computation* e = m.entry();
  REQUIRE(e != nullptr);
  CHECK(e->name == "main.1");
  CHECK(m.find("fused_computation")->is_fusion);
  const Instruction* f = e->root();
  REQUIRE(f != nullptr);
  CHECK(f->name == "f");
  CHECK(f->opcode == "fusion");
  CHECK(f->fusion_kind() == "kLoop");
  REQUIRE(f->called_computations().size() == 1);
  CHECK(f->called_computations()[0] == "fused_computation");
  REQUIRE(f->operand_shapes().size() == 1);
  CHECK(f->operand_shapes()[0].dims == std::vector<int64_t>{8});
  CHECK(f->line == 30);
  CHECK(e->find("x.1")->parameter_number == 0);
}

TEST_CASE("mesh-axes replica groups and a byte-order mark", "[hlo][parser]") {
  // XLA's mesh form of replica groups (what a sharded jax.jit program prints): the mesh, a blank,
  // the axes; one attribute value. A UTF-8 byte-order mark before the header is skipped.
  const std::string text =
      "\xEF\xBB\xBFHloModule sharded\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\n\nENTRY main {\n  p = f32[8]{0} parameter(0)\n"
      "  ROOT r = f32[8]{0} all-reduce(p), channel_id=1, replica_groups=mesh['axis_0'=4,'axis_1'=1] {'axis_0'}, "
      "use_global_device_ids=true, to_apply=add\n}\n";
  const Module m = parse_hlo_module(text);
  CHECK(m.name == "sharded");
  const Instruction* r = m.entry()->root();
  REQUIRE(r != nullptr);
  CHECK(r->opcode == "all-reduce");
  CHECK(r->attributes().at("replica_groups") == "mesh['axis_0'=4,'axis_1'=1] {'axis_0'}");
  CHECK(r->attributes().at("use_global_device_ids") == "true");
  REQUIRE(r->called_computations().size() == 1);
  CHECK(r->called_computations()[0] == "add");
  // A value that only looks like it (not a mesh) still ends at the blank.
  CHECK_THROWS_AS(
      parse_hlo_module("ENTRY main {\n  ROOT p = f32[8]{0} parameter(0), frontend_attributes=x[1] {y}\n}\n"),
      HloParseError);
}

TEST_CASE("stack_frame_id resolves to the innermost frame, parents are printed id + 1", "[hlo][parser]") {
  Module m = parse_hlo_module(kNewForm);
  const Instruction* cos = m.find_instruction("cos.0");
  REQUIRE(cos != nullptr);
  CHECK(cos->metadata().source_file == "/home/u/prog.py");
  CHECK(cos->metadata().source_line == 3);
  CHECK(cos->metadata().function_name == "g");
  CHECK(cos->metadata().source_column == 11);
  // frame 3 (g) <- frame 2 (f) <- frame 1 (<module>) <- none
  REQUIRE(m.stack_frames.size() == 3);
  CHECK(m.stack_frames[2].parent_id == 2);
  CHECK(m.stack_frames[1].parent_id == 1);
  CHECK(m.stack_frames[0].parent_id == 0);
  CHECK(m.find_instruction("x.1")->metadata().source_line == -1);
  CHECK(m.find_instruction("x.1")->metadata().op_name == "x");
}

TEST_CASE("older form: inline operand shapes, no %, source_file/source_line metadata", "[hlo][parser]") {
  const char* text = R"(HloModule m

add_F32.v3 {
  lhs = f32[] parameter(0)
  rhs = f32[] parameter(1)
  ROOT add = f32[] add(f32[] lhs, f32[] rhs)
}

ENTRY e {
  p = bf16[4,<=16]{1,0:T(8,128)(2,1)S(1)} parameter(0)
  c = f32[] constant(0)
  t = (f32[2]{0}, /*index=1*/s32[], token[]) parameter(1)
  cv = f32[4,16]{1,0} convert(bf16[4,16]{1,0} p), metadata={op_type="Cast" op_name="a/b" source_file="x.py" source_line=7}
  ROOT r = f32[4]{0} reduce(cv, c), dimensions={1}, to_apply=add_F32.v3, backend_config="{\"k\":\"v}\"}"
}
)";
  Module m = parse_hlo_module(text);
  const Computation* e = m.entry();
  REQUIRE(e != nullptr);
  const Instruction* p = e->find("p");
  CHECK(p->shape.type == PrimitiveType::kBF16);
  CHECK(p->shape.dims == std::vector<int64_t>{4, 16});
  REQUIRE(p->shape.dynamic_dims.size() == 2);
  CHECK(p->shape.dynamic_dims[1]);
  CHECK(p->shape.layout == std::vector<int64_t>{1, 0});
  CHECK(p->shape.memory_space == 1);
  // a dynamic array also holds its dimension sizes, an s32 each (XLA's shape size)
  CHECK(p->shape.byte_size() == 4 * 16 * 2 + 2 * 4);
  CHECK(p->shape.is_dynamic());
  const Instruction* t = e->find("t");
  REQUIRE(t->shape.tuple.size() == 3);
  CHECK(t->shape.tuple[2].type == PrimitiveType::kToken);
  CHECK(t->shape.byte_size() == 2 * 4 + 4);
  const Instruction* cv = e->find("cv");
  CHECK(cv->metadata().source_file == "x.py");
  CHECK(cv->metadata().source_line == 7);
  CHECK(cv->metadata().op_type == "Cast");
  const Instruction* r = e->root();
  CHECK(r->backend_config() == "{\"k\":\"v}\"}");
  CHECK(r->attributes().at("dimensions") == "{1}");
  CHECK(r->called_computations() == std::vector<std::string>{"add_F32.v3"});
}

TEST_CASE("element types and packed sub-byte sizes", "[hlo][parser]") {
  const char* text = R"(HloModule m
ENTRY e {
  a = f8e4m3fn[10]{0} parameter(0)
  b = s4[10]{0:E(4)} parameter(1)
  c = s4[10]{0} parameter(2)
  d = c128[3]{0} parameter(3)
  ROOT t = (f8e4m3fn[10]{0}, s4[10]{0:E(4)}, s4[10]{0}, c128[3]{0}) tuple(a, b, c, d)
}
)";
  Module m = parse_hlo_module(text);
  const Computation* e = m.entry();
  CHECK(e->find("a")->shape.byte_size() == 10);
  CHECK(e->find("b")->shape.byte_size() == 5);   // packed: ceil(10*4/8)
  CHECK(e->find("c")->shape.byte_size() == 10);  // unpacked: one byte each
  CHECK(e->find("d")->shape.byte_size() == 48);
}

TEST_CASE("parse errors carry line, column and the text found", "[hlo][parser]") {
  SECTION("bad element type") {
    try {
      parse_hlo_module("HloModule m\nENTRY e {\n  a = q32[2] parameter(0)\n}\n");
      FAIL("no error");
    } catch (const HloParseError& err) {
      CHECK(err.line() == 3);
      CHECK(err.column() == 7);
      CHECK(err.found().rfind("q32[2]", 0) == 0);
      CHECK(err.kind() == fpgaprof::ErrorKind::kHloParse);
      CHECK(std::string(err.what()).rfind("line 3, column 7: expected a shape", 0) == 0);
    }
  }
  SECTION("undefined operand") {
    CHECK_THROWS_AS(parse_hlo_module("HloModule m\nENTRY e {\n  ROOT a = f32[] negate(b)\n}\n"), HloParseError);
  }
  SECTION("unknown called computation") {
    CHECK_THROWS_AS(
        parse_hlo_module(
            "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT a = f32[] call(p), to_apply=nope\n}\n"),
        HloParseError);
  }
  SECTION("truncated input") {
    CHECK_THROWS_AS(parse_hlo_module("HloModule m\nENTRY e {\n  p = f32[2]{0} parameter(0)"), HloParseError);
    CHECK_THROWS_AS(parse_hlo_module(""), HloParseError);
    CHECK_THROWS_AS(parse_hlo_module("HloModule m, a={{{"), HloParseError);
  }
}

TEST_CASE("stack-frame tables after the computations, execution_thread, /*index*/ comments", "[hlo][parser]") {
  const char* text = R"(HloModule m

%comp (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%p), metadata={op_name="neg" stack_frame_id=2}
}, execution_thread="main"

ENTRY %e (a: f32[4]) -> (f32[4], f32[4]) {
  %a = f32[4]{0} parameter(0)
  %c = f32[4]{0} call(%a), to_apply=%comp
  ROOT %t = (f32[4]{0}, /*index=1*/f32[4]{0}) tuple(%c, /*index=1*/%a), control-predecessors={%c}
}

FileNames
1 "/a.py"
2 "/usr/lib/python3/site-packages/jax/_src/numpy/lax_numpy.py"

FunctionNames
1 "main"
2 "negative"

FileLocations
1 {file_name_id=1 function_name_id=1 line=5 end_line=5 column=1 end_column=9}
2 {file_name_id=2 function_name_id=2 line=900 end_line=900 column=1 end_column=9}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=2}
)";
  Module m = parse_hlo_module(text);
  const Instruction* n = m.find_instruction("n");
  REQUIRE(n != nullptr);
  // frame 2 is framework code (jax/_src): the user's frame is its parent, frame 1
  CHECK(n->metadata().source_file == "/a.py");
  CHECK(n->metadata().source_line == 5);
  const Instruction* t = m.entry()->root();
  CHECK(t->operands == std::vector<std::string>{"c", "a"});
  CHECK(t->attributes().at("control-predecessors") == "{%c}");
  CHECK(m.find_instruction("c")->called_computations() == std::vector<std::string>{"comp"});
  CHECK_FALSE(m.find("comp")->is_fusion);
}

TEST_CASE("XLA test syntax: shapes left to the parser, operands written in place, split lines", "[hlo][parser]") {
  // The form of XLA's own GPU tests (xla/service/gpu/transforms/*_test.cc): some instructions
  // without a shape, operands written as instructions in place, the opcode and attributes on
  // continuation lines.
  const Module m = parse_hlo_module(R"(HloModule t

ENTRY e {
  w = pad(s8[3,3,10,10] parameter(0), s8[] constant(0)), padding=0_0x0_0x0_0x1_4_2
  conv = (s8[10,10,10,10], u8[0])
    custom-call(s8[10,10,10,10] parameter(1), w)
    , window={size=3x3}, dim_labels=b01f_01io->b01f
    , custom_call_target="__cudnn$convForward"
  r = get-tuple-element(conv), index=0
  n = negate(r)
  c = compare(n, r), direction=GT
  s = select(c, n, r)
  ROOT t = tuple(s, c)
}
)");
  const Computation* e = m.entry();
  REQUIRE(e != nullptr);
  // Operands written in place become instructions of their own, before their user, named
  // "<user>/<operand position>".
  const Instruction* p0 = e->find("w/0");
  const Instruction* zero = e->find("w/1");
  const Instruction* p1 = e->find("conv/0");
  REQUIRE(p0 != nullptr);
  REQUIRE(zero != nullptr);
  REQUIRE(p1 != nullptr);
  CHECK(p0->opcode == "parameter");
  CHECK(p0->parameter_number == 0);
  CHECK(p0->shape.dims == std::vector<int64_t>{3, 3, 10, 10});
  CHECK(zero->opcode == "constant");
  CHECK(p1->parameter_number == 1);
  CHECK(e->find("w")->operands == std::vector<std::string>{"w/0", "w/1"});
  CHECK(e->position("w/0") < e->position("w"));
  CHECK(e->position("conv/0") < e->position("conv"));
  // pad: 10 + 1 + 4 + 9 x 2 interior = 33 in the last dimension
  CHECK(e->find("w")->shape.dims == std::vector<int64_t>{3, 3, 10, 33});
  CHECK(e->find("w")->shape.type == PrimitiveType::kS8);
  // the split custom call: all its attributes
  const Instruction* conv = e->find("conv");
  CHECK(conv->opcode == "custom-call");
  CHECK(conv->custom_call_target() == "__cudnn$convForward");
  CHECK(conv->attributes().at("dim_labels") == "b01f_01io->b01f");
  CHECK(conv->operand_shapes()[1].dims == std::vector<int64_t>{3, 3, 10, 33});
  // inferred: get-tuple-element, elementwise, compare, select, tuple
  CHECK(e->find("r")->shape.dims == std::vector<int64_t>{10, 10, 10, 10});
  CHECK(e->find("n")->shape.type == PrimitiveType::kS8);
  CHECK(e->find("c")->shape.type == PrimitiveType::kPred);
  CHECK(e->find("s")->shape.type == PrimitiveType::kS8);
  const Instruction* t = e->find("t");
  REQUIRE(t->shape.is_tuple());
  REQUIRE(t->shape.tuple.size() == 2);
  CHECK(t->shape.tuple[1].type == PrimitiveType::kPred);
  CHECK(e->root() == t);
  // A shape XLA does not infer (slice, iota, ...) is an error naming the instruction.
  try {
    parse_hlo_module("HloModule m\nENTRY e {\n  p = f32[4]{0} parameter(0)\n  ROOT b = slice(p), slice={[0:2]}\n}\n");
    FAIL("no error");
  } catch (const HloParseError& err) {
    CHECK(err.line() == 4);
    CHECK_THAT(err.what(), Catch::Contains("a shape before the opcode of 'b'"));
  }
}

namespace {

std::vector<int64_t> dims_of(const Module& m, const char* name) {
  const Instruction* i = m.find_instruction(name);
  REQUIRE(i != nullptr);
  return i->shape.dims;
}

}  // namespace

TEST_CASE("XLA's lexical rules: line breaks between any two tokens, comments, two instructions on a line",
          "[hlo][parser]") {
  // Forms from XLA's tests: the header continued, the opcode and its operands on other lines
  // than the shape, a value after a line break, `s32 [4]`, two instructions on one line, and
  // `//` comments after an instruction.
  const Module m = parse_hlo_module(R"(HloModule m,
  entry_computation_layout={(s32[4]{0})
  ->f32[]}

add {                         // the reducer
  x = f32[] parameter(0) y = f32[] parameter(1)
  ROOT
    s =
    f32[]
    add(x,
        /*index=1*/ y) // two instructions above share a line
}

ENTRY e {
  p = s32 [4] parameter(0)
  q = f32[4]{0} convert(p), metadata={op_name="a"
    source_line=3}
  r = f32[] constant(0)
  ROOT red = f32[] reduce(q, r), dimensions={0}, to_apply=
    add
}
)");
  CHECK(m.name == "m");
  CHECK(m.attributes.at("entry_computation_layout") == "{(s32[4]{0})->f32[]}");
  const Computation* add = m.find("add");
  REQUIRE(add != nullptr);
  REQUIRE(add->instructions.size() == 3);
  CHECK(add->root()->name == "s");
  CHECK(add->root()->operands == std::vector<std::string>{"x", "y"});
  CHECK(add->root()->line == 7);
  CHECK(dims_of(m, "p") == std::vector<int64_t>{4});
  CHECK(m.find_instruction("q")->metadata().source_line == 3);
  CHECK(m.find_instruction("red")->called_computations() == std::vector<std::string>{"add"});
  CHECK(m.entry()->root()->name == "red");
}

TEST_CASE("text without the HloModule line, and the older header form", "[hlo][parser]") {
  // A lit test split: computations only; XLA names the module after the entry, the last
  // computation when none is marked ENTRY.
  const Module f = parse_hlo_module("fusion {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n");
  CHECK(f.name == "module_fusion");
  CHECK(f.entry()->name == "fusion");
  const Module e = parse_hlo_module(
      "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = add(a, b)\n}\n\n"
      "ENTRY %main (x: f32[8]) -> f32[] {\n  x = f32[8] parameter(0)\n  z = f32[] constant(0)\n"
      "  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add\n}\n");
  CHECK(e.name == "module_main");
  CHECK(e.entry()->name == "main");
  CHECK(e.find("add")->root()->shape.type == PrimitiveType::kF32);
  const Module o = parse_hlo_module("HloModule convolution.167:\n\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n");
  CHECK(o.name == "convolution.167");
}

TEST_CASE("operands and computations written in place", "[hlo][parser]") {
  // cudnn_fused_conv_rewriter_test's form: nested instructions without shapes; a fusion whose
  // computation is written in its calls= attribute (XLA's nested computations).
  const Module m = parse_hlo_module(R"(HloModule t
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  s = add(maximum(a, b), multiply(a, f32[4] constant({1, 2, 3, 4})))
  ROOT f = f32[4] fusion(s), kind=kLoop, calls={
    x = f32[4] parameter(0)
    ROOT y = f32[4] negate(x)
  }
}
)");
  const Computation* e = m.entry();
  REQUIRE(e != nullptr);
  CHECK(e->find("s")->operands == std::vector<std::string>{"s/0", "s/1"});
  CHECK(e->find("s/0")->opcode == "maximum");
  CHECK(e->find("s/1")->operands == std::vector<std::string>{"a", "s/1/1"});
  CHECK(e->find("s/1/1")->opcode == "constant");
  CHECK(e->position("s/1/1") < e->position("s/1"));
  CHECK(e->find("s")->shape.dims == std::vector<int64_t>{4});
  const Instruction* f = e->find("f");
  REQUIRE(f->called_computations() == std::vector<std::string>{"f.calls"});
  const Computation* fc = m.find("f.calls");
  REQUIRE(fc != nullptr);
  CHECK(fc->is_fusion);
  CHECK(fc->root()->opcode == "negate");
  CHECK_FALSE(fc->is_entry);
}

TEST_CASE("shapes left out are XLA's inferred shapes", "[hlo][parser]") {
  // Each expected shape is the one XLA's parser infers (jaxlib 0.10.2, hlo_module_from_text).
  const Module m = parse_hlo_module(R"(HloModule m
add {
  a0 = f32[] parameter(0)
  a1 = f32[] parameter(1)
  ROOT a2 = add(a0, a1)
}
ENTRY e {
  x = f32[2,8,16] parameter(0)
  w = f32[3,3,16,32] parameter(1)
  i = f32[1,10,10,16] parameter(2)
  d = dot(x, x), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
  c = convolution(i, w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  zero = f32[] constant(0)
  r = reduce(x, zero), dimensions={1}, to_apply=add
  rw = reduce-window(i, zero), window={size=1x3x3x1 stride=1x2x2x1}, to_apply=add
  b = broadcast(zero), dimensions={4,5}
  t = transpose(x), dimensions={2,0,1}
  cc = concatenate(x, x), dimensions={1}
  idx = s32[5,1] parameter(3)
  g = gather(x, idx), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8,16}
  rf = f32[4,8] parameter(4)
  ff = fft(rf), fft_type=RFFT, fft_length={8}
  tk = topk(rf), k=3, largest=true
  cmp = compare(x, x), direction=LT
  cx = complex(rf, rf)
  ab = abs(cx)
  ROOT out = tuple(d, c, r, rw, b, t, cc, g, ff, tk, cmp, ab)
}
)");
  CHECK(dims_of(m, "d") == std::vector<int64_t>{2, 8, 8});
  CHECK(dims_of(m, "c") == std::vector<int64_t>{1, 5, 5, 32});
  CHECK(dims_of(m, "r") == std::vector<int64_t>{2, 16});
  CHECK(dims_of(m, "rw") == std::vector<int64_t>{1, 4, 4, 16});
  CHECK(dims_of(m, "b") == std::vector<int64_t>{4, 5});  // the old broadcast: new major sizes
  CHECK(dims_of(m, "t") == std::vector<int64_t>{16, 2, 8});
  // XLA permutes the layout with the dimensions: the transpose is a bitcast
  CHECK(m.find_instruction("t")->shape.layout == std::vector<int64_t>{0, 2, 1});
  CHECK(dims_of(m, "cc") == std::vector<int64_t>{2, 16, 16});
  CHECK(dims_of(m, "g") == std::vector<int64_t>{5, 8, 16});
  CHECK(dims_of(m, "ff") == std::vector<int64_t>{4, 5});
  CHECK(m.find_instruction("ff")->shape.type == PrimitiveType::kC64);
  const Shape& tk = m.find_instruction("tk")->shape;
  REQUIRE(tk.tuple.size() == 2);
  CHECK(tk.tuple[0].dims == std::vector<int64_t>{4, 3});
  CHECK(tk.tuple[1].type == PrimitiveType::kS32);
  CHECK(m.find_instruction("cmp")->shape.type == PrimitiveType::kPred);
  CHECK(m.find_instruction("cx")->shape.type == PrimitiveType::kC64);
  CHECK(m.find_instruction("ab")->shape.type == PrimitiveType::kF32);
  CHECK(m.entry()->root()->shape.tuple.size() == 12);
}

TEST_CASE("shapes XLA builds from the operands, buffers, literals, names like element types", "[hlo][parser]") {
  const Module m = parse_hlo_module(R"(HloModule m
ENTRY e {
  p = f32[3]{0} parameter(0)
  t = (f32[3]{0}, f32[2]{0}) tuple(p, p)
  tok = token[] after-all()
  r = (f32[128,32], u32[], token[]) recv(tok), channel_id=5
  rd = (f32[128,21], token[]) recv-done(r), channel_id=5
  s2 = b(f32[3]) custom-call(p), custom_call_target="Pin", literal=s32[2]{0} {1, 2}
  k = s4[4]{0:E(4)} constant({1, 2, 3, 4})
  ROOT c = f32[3]{0} custom-call(s2), custom_call_target="Unpin", literal=( s32[1]{0} {4}, pred[] true )
}
)");
  // XLA's CreateTuple and CreateRecvDone use the operands' shapes, not the text's
  const Shape& t = m.find_instruction("t")->shape;
  REQUIRE(t.tuple.size() == 2);
  CHECK(t.tuple[1].dims == std::vector<int64_t>{3});
  CHECK(m.find_instruction("rd")->shape.tuple[0].dims == std::vector<int64_t>{128, 32});
  // a buffer is sized as its array; an instruction may be named like an element type
  const Instruction* s2 = m.find_instruction("s2");
  CHECK(s2->shape.type == PrimitiveType::kF32);
  CHECK(s2->attributes().at("literal") == "s32[2]{0} {1, 2}");
  CHECK(m.entry()->root()->operands == std::vector<std::string>{"s2"});
  // a literal keeps no packed element size: 4 x 1 byte
  CHECK(m.find_instruction("k")->shape.byte_size() == 4);
}

TEST_CASE("an unknown opcode's shape, unbalanced text and deep nesting are parse errors", "[hlo][parser]") {
  CHECK_THROWS_AS(parse_hlo_module("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT q = frobnicate(p)\n}\n"),
                  HloParseError);
  CHECK_THROWS_AS(parse_hlo_module("fusion {\n  p = f32[2] parameter(0)\n"), HloParseError);
  std::string deep = "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = ";
  for (int k = 0; k < 40; ++k) deep += "negate(";
  deep += "p";
  for (int k = 0; k < 40; ++k) deep += ")";
  deep += "\n}\n";
  CHECK_THROWS_AS(parse_hlo_module(deep), HloParseError);
  std::string shallow = "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = ";
  for (int k = 0; k < 20; ++k) shallow += "negate(";
  shallow += "p";
  for (int k = 0; k < 20; ++k) shallow += ")";
  shallow += "\n}\n";
  const Module m = parse_hlo_module(shallow);
  CHECK(m.entry()->instructions.size() == 21);  // p and 20 negates (r the outermost)
}

TEST_CASE("a DimList holds two values in place and more on the heap as a vector would", "[hlo][module]") {
  DimList d;
  CHECK(d.empty());
  d.push_back(4);
  d.push_back(5);
  CHECK(d == std::vector<int64_t>{4, 5});
  for (int64_t k = 6; k < 70; ++k) d.push_back(k);  // beyond the two in place: grows on the heap
  REQUIRE(d.size() == 66);
  CHECK(d.front() == 4);
  CHECK(d.back() == 69);
  CHECK(d[10] == 14);  // 4, 5, 6, ...: d[k] = k + 4
  DimList copy = d;
  copy.erase(copy.begin());
  CHECK(copy.size() == 65);
  CHECK(copy.front() == 5);
  CHECK(d.front() == 4);  // the copy is its own
  DimList moved = std::move(copy);
  CHECK(moved.size() == 65);
  CHECK(moved.back() == 69);
  moved = DimList{1, 2};  // back in place from the heap
  CHECK(moved == std::vector<int64_t>{1, 2});
  moved.resize(4, 7);
  CHECK(moved == std::vector<int64_t>{1, 2, 7, 7});
  const std::vector<int64_t> as_vector = moved;
  CHECK(as_vector == std::vector<int64_t>{1, 2, 7, 7});
  moved.clear();
  CHECK(moved.empty());
  CHECK(!(DimList{1} == DimList{1, 0}));
}

TEST_CASE("a computation's name index finds every instruction by name across rehashes", "[hlo][module]") {
  Computation c;
  for (int k = 0; k < 5000; ++k) {
    Instruction i;
    i.name = "n." + std::to_string(k);
    c.instructions.push_back(std::move(i));
    REQUIRE(c.index.insert(c.instructions.size() - 1, c.instructions));
  }
  CHECK(c.index.size() == 5000);
  CHECK(c.position("n.0") == 0);
  CHECK(c.position("n.4999") == 4999);
  CHECK(c.position("n.2500") == 2500);
  CHECK(c.position("n.5000") == NameIndex::npos);
  CHECK(c.position("") == NameIndex::npos);
  CHECK(c.find("n.17")->name == "n.17");
  Instruction dup;
  dup.name = "n.17";
  c.instructions.push_back(dup);
  CHECK(!c.index.insert(c.instructions.size() - 1, c.instructions));  // a name already there
  CHECK(c.position("n.17") == 17);
}

TEST_CASE("operands defined below their user or elsewhere or in place keep their names and shapes and positions",
          "[hlo][parser]") {
  // `b` is used before the line that defines it; `q` is defined in no computation of the
  // module: it is read from its inline shape; the negate is written in place.
  const Module m = parse_hlo_module(
      "HloModule m\n"
      "ENTRY e {\n"
      "  p = f32[4]{0} parameter(0)\n"
      "  a = f32[4]{0} add(p, b)\n"
      "  b = f32[4]{0} negate(p)\n"
      "  ROOT r = f32[4]{0} multiply(f32[4]{0} q, f32[4]{0} negate(a))\n"
      "}\n");
  const Computation* e = m.entry();
  const Instruction* a = e->find("a");
  REQUIRE(a != nullptr);
  CHECK(a->operands == std::vector<std::string>{"p", "b"});
  CHECK(a->operand_indices()[0] == e->position("p"));
  CHECK(a->operand_indices()[1] == e->position("b"));
  CHECK(a->operand_shapes()[1].dims == std::vector<int64_t>{4});
  const Instruction* r = e->root();
  CHECK(r->operands == std::vector<std::string>{"q", "r/1"});
  CHECK(r->operand_indices()[0] == Operands::kNoPosition);
  CHECK(r->operand_shapes()[0].type == PrimitiveType::kF32);
  CHECK(r->operand_indices()[1] == e->position("r/1"));
  CHECK(e->find("r/1")->operands == std::vector<std::string>{"a"});
  // A copy out of the computation, detached: its own names and shapes, no positions.
  Instruction copy = *a;
  copy.operands.detach();
  CHECK(copy.operands == std::vector<std::string>{"p", "b"});
  CHECK(copy.operand_indices()[1] == Operands::kNoPosition);
  CHECK(copy.operand_shapes()[1].dims == std::vector<int64_t>{4});
  // A copy of the computation reads its own instructions.
  const Computation c2 = *e;
  CHECK(c2.find("a")->operand_shapes()[0].dims == std::vector<int64_t>{4});
  CHECK(&c2.find("a")->operand_shapes()[0] == &c2.find("p")->shape);
}

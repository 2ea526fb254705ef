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
  CHECK(f->fusion_kind == "kLoop");
  REQUIRE(f->called_computations.size() == 1);
  CHECK(f->called_computations[0] == "fused_computation");
  REQUIRE(f->operand_shapes.size() == 1);
  CHECK(f->operand_shapes[0].dims == std::vector<int64_t>{8});
  CHECK(f->line == 30);
  CHECK(e->find("x.1")->parameter_number == 0);
}

TEST_CASE("stack_frame_id resolves to the innermost frame, parents are printed id + 1", "[hlo][parser]") {
  Module m = parse_hlo_module(kNewForm);
  const Instruction* cos = m.find_instruction("cos.0");
  REQUIRE(cos != nullptr);
  CHECK(cos->metadata.source_file == "/home/u/prog.py");
  CHECK(cos->metadata.source_line == 3);
  CHECK(cos->metadata.function_name == "g");
  CHECK(cos->metadata.source_column == 11);
  // frame 3 (g) <- frame 2 (f) <- frame 1 (<module>) <- none
  REQUIRE(m.stack_frames.size() == 3);
  CHECK(m.stack_frames[2].parent_id == 2);
  CHECK(m.stack_frames[1].parent_id == 1);
  CHECK(m.stack_frames[0].parent_id == 0);
  CHECK(m.find_instruction("x.1")->metadata.source_line == -1);
  CHECK(m.find_instruction("x.1")->metadata.op_name == "x");
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
  CHECK(p->shape.byte_size() == 4 * 16 * 2);
  const Instruction* t = e->find("t");
  REQUIRE(t->shape.tuple.size() == 3);
  CHECK(t->shape.tuple[2].type == PrimitiveType::kToken);
  CHECK(t->shape.byte_size() == 2 * 4 + 4);
  const Instruction* cv = e->find("cv");
  CHECK(cv->metadata.source_file == "x.py");
  CHECK(cv->metadata.source_line == 7);
  CHECK(cv->metadata.op_type == "Cast");
  const Instruction* r = e->root();
  CHECK(r->backend_config == "{\"k\":\"v}\"}");
  CHECK(r->attributes.at("dimensions") == "{1}");
  CHECK(r->called_computations == std::vector<std::string>{"add_F32.v3"});
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
  CHECK(n->metadata.source_file == "/a.py");
  CHECK(n->metadata.source_line == 5);
  const Instruction* t = m.entry()->root();
  CHECK(t->operands == std::vector<std::string>{"c", "a"});
  CHECK(t->attributes.at("control-predecessors") == "{%c}");
  CHECK(m.find_instruction("c")->called_computations == std::vector<std::string>{"comp"});
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
  CHECK(e->index.at("w/0") < e->index.at("w"));
  CHECK(e->index.at("conv/0") < e->index.at("conv"));
  // pad: 10 + 1 + 4 + 9 x 2 interior = 33 in the last dimension
  CHECK(e->find("w")->shape.dims == std::vector<int64_t>{3, 3, 10, 33});
  CHECK(e->find("w")->shape.type == PrimitiveType::kS8);
  // the split custom call: all its attributes
  const Instruction* conv = e->find("conv");
  CHECK(conv->opcode == "custom-call");
  CHECK(conv->custom_call_target == "__cudnn$convForward");
  CHECK(conv->attributes.at("dim_labels") == "b01f_01io->b01f");
  CHECK(conv->operand_shapes[1].dims == std::vector<int64_t>{3, 3, 10, 33});
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
  // A shape fpgaprof cannot infer is an error naming the instruction.
  try {
    parse_hlo_module(
        "HloModule m\nENTRY e {\n  p = f32[4]{0} parameter(0)\n  ROOT b = broadcast(p), dimensions={0}\n}\n");
    FAIL("no error");
  } catch (const HloParseError& err) {
    CHECK(err.line() == 4);
    CHECK_THAT(err.what(), Catch::Contains("a shape before the opcode of 'b'"));
  }
}

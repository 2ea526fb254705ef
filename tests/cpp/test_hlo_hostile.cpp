// HLO text from a hostile trace (issue #21): row ids of the stack-frame tables may not size the
// tables beyond the rows written, and shape sizes beyond int64 saturate instead of wrapping.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>

#include "fpgaprof/hlo/cost_model.hpp"
#include "fpgaprof/hlo/hlo_parser.hpp"

using namespace fpgaprof::hlo;

namespace {

std::string module_with_table(const std::string& table) {
  return "HloModule m\n\n" + table +
         "\nENTRY e {\n  ROOT p = f32[4]{0} parameter(0), metadata={op_name=\"x\" stack_frame_id=1}\n}\n";
}

std::string module_with_parameter(const std::string& shape) {
  return "HloModule m\n\nENTRY e {\n  p = " + shape + " parameter(0)\n  ROOT n = " + shape + " negate(p)\n}\n";
}

}  // namespace

TEST_CASE("a stack-frame row id far beyond the rows written is refused", "[hlo][parser][hostile]") {
  for (const char* table : {"FileNames\n10000000 \"a.py\"\n", "FunctionNames\n2000 \"f\"\n",
                            "FileLocations\n5000 {file_name_id=1 line=1}\n",
                            "StackFrames\n1 {file_location_id=1 parent_frame_id=1}\n9999999 {file_location_id=1}\n"}) {
    INFO(table);
    REQUIRE_THROWS_AS(parse_hlo_module(module_with_table(table)), HloParseError);
    try {
      (void)parse_hlo_module(module_with_table(table));
    } catch (const HloParseError& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains("a row id between 1 and"));
    }
  }
  // XLA's numbering (1, 2, 3, ...) and small gaps still parse.
  const Module m = parse_hlo_module(
      module_with_table("FileNames\n1 \"a.py\"\n3 \"b.py\"\n\nFileLocations\n1 {file_name_id=2 line=7}\n\nStackFrames\n"
                        "1 {file_location_id=1 parent_frame_id=1}\n"));
  REQUIRE(m.stack_frames.size() == 1);
  CHECK(m.find_instruction("p")->metadata().source_line == 7);
}

TEST_CASE("shape sizes beyond int64 saturate, never wrap negative", "[hlo][parser][hostile]") {
  SECTION("one huge dimension") {
    const Module m = analyze_hlo(module_with_parameter("f32[9223372036854775807]{0}"));
    const Instruction* p = m.find_instruction("p");
    CHECK(p->shape.element_count() == INT64_MAX);
    CHECK(p->shape.byte_size() == INT64_MAX);
    CHECK(m.find_instruction("n")->cost.bytes_read > 0);
    CHECK(m.total.bytes_accessed() > 0);
  }
  SECTION("a product of dimensions") {
    const Module m = analyze_hlo(module_with_parameter("f32[4294967296,4294967296,3]{2,1,0}"));
    CHECK(m.find_instruction("p")->shape.element_count() == INT64_MAX);
    CHECK(m.find_instruction("p")->shape.byte_size() == INT64_MAX);
  }
  SECTION("packed sub-byte elements and tuples") {
    const Module m = analyze_hlo(
        "HloModule m\n\nENTRY e {\n  p = (s4[9223372036854775807]{0:E(4)}, f64[9223372036854775807]{0}) "
        "parameter(0)\n  ROOT g = s4[9223372036854775807]{0:E(4)} get-tuple-element(p), index=0\n}\n");
    CHECK(m.find_instruction("p")->shape.byte_size() == INT64_MAX);
    CHECK(m.find_instruction("g")->shape.byte_size() > 0);
  }
  SECTION("a zero dimension still gives zero") {
    const Module m = analyze_hlo(module_with_parameter("f32[0,9223372036854775807]{1,0}"));
    CHECK(m.find_instruction("p")->shape.element_count() == 0);
    CHECK(m.find_instruction("p")->shape.byte_size() == 0);
  }
}

TEST_CASE("numbers in attribute lists beyond int64 do not overflow", "[hlo][cost][hostile]") {
  // Found by hlo_parser_fuzzer under UBSan: fft_length={3244444444444444444x} overflowed int64
  // while it was read. A number is now read until it passes 2^40: 3,244,444,444,444, whose
  // floor(log2) is 41, so an FFT over the 8 elements of c64[8] costs 2 * 4 * 41 * 8 = 2624
  // FLOPs (the model's 8 n log2(len)).
  const Module m = analyze_hlo(
      "HloModule m\n\nENTRY e {\n  p = c64[8]{0} parameter(0)\n"
      "  ROOT f = c64[8]{0} fft(p), fft_type=FFT, fft_length={32444444444444444444444}\n}\n");
  CHECK(m.find_instruction("f")->cost.flops == 2624.0);
  const Module neg = analyze_hlo(
      "HloModule m\n\nENTRY e {\n  p = f32[2,3]{1,0} parameter(0)\n"
      "  ROOT t = f32[3,2]{1,0} transpose(p), dimensions={-99999999999999999999,1}\n}\n");
  CHECK(neg.find_instruction("t")->cost.bytes_read >= 0);
}

TEST_CASE("known_trip_count is read only as XLA writes it", "[hlo][parser][hostile]") {
  // XLA prints the proto's JSON: "n":"5" (int64 as a string); "n":5 is read too. Anything else
  // is an unknown count (-1), never the digits found somewhere in it.
  const auto trips = [](const std::string& n) {
    const Module m = parse_hlo_module(
        "HloModule m\n\ncond {\n  p = s32[] parameter(0)\n  ROOT c = pred[] constant(true)\n}\n\n"
        "body {\n  p = s32[] parameter(0)\n  ROOT a = s32[] add(p, p)\n}\n\n"
        "ENTRY e {\n  p = s32[] parameter(0)\n  ROOT w = s32[] while(p), condition=cond, body=body, "
        "backend_config={\"known_trip_count\":{\"n\":" +
        n + "}}\n}\n");
    return m.entry()->instructions.back().known_trip_count;
  };
  CHECK(trips("\"5\"") == 5);
  CHECK(trips("5") == 5);
  CHECK(trips(" \"12\" ") == 12);
  CHECK(trips("\"-5\"") == -1);
  CHECK(trips("-5") == -1);
  CHECK(trips("\"1e308\"") == -1);
  CHECK(trips("1e308") == -1);
  CHECK(trips("\"5x\"") == -1);
  CHECK(trips("\"99999999999999999999\"") == -1);  // beyond int64
  CHECK(trips("\"\"") == -1);
}

TEST_CASE("a while body that is its own computation costs once, finitely", "[hlo][cost][hostile]") {
  // The cost model's walk (hlo::CallPath): body's cost does not include itself again, so its
  // two whiles add body's cost so far (nothing) and the module costs body's one add: 1 flop.
  const Module m = analyze_hlo(R"(HloModule rec

cond {
  p = s32[] parameter(0)
  ROOT c = pred[] constant(true)
}

body {
  p = s32[] parameter(0)
  a = s32[] add(p, p)
  w1 = s32[] while(a), condition=cond, body=body
  ROOT w2 = s32[] while(w1), condition=cond, body=body
}

ENTRY e {
  p = s32[] parameter(0)
  ROOT w = s32[] while(p), condition=cond, body=body
}
)");
  CHECK(std::isfinite(m.total.flops));
  CHECK(m.find("body")->instructions[1].cost.flops == 1);
}

TEST_CASE("CallPath refuses a computation already on the path", "[hlo][hostile]") {
  CallPath path(3);
  CHECK(path.enter(1));
  CHECK(path.enter(2));
  CHECK_FALSE(path.enter(1));  // 1 -> 2 -> 1: a recursion
  path.leave(2);
  CHECK(path.enter(2));        // 2 again after leaving it: a second call site, not a recursion
  CHECK_FALSE(path.enter(7));  // no such computation
}

TEST_CASE("a long chain of calls to computations defined later costs without deep recursion", "[hlo][cost][hostile]") {
  // ENTRY -> c0 -> c1 -> ... -> c29999 in text order (fpgaprof takes forward references; XLA
  // writes callees first). Costed in text order this recursed 30,000 computations deep and
  // overflowed the stack (SIGSEGV at 20,000). Callees first: one negate, one f32 in and out.
  constexpr int n = 30'000;
  std::string text = "HloModule chain\nENTRY e {\n a = f32[] parameter(0)\n ROOT r = f32[] call(a), to_apply=c0\n}\n";
  for (int i = 0; i < n; ++i) {
    text += "c" + std::to_string(i) + " {\n a = f32[] parameter(0)\n";
    text += i + 1 < n ? " ROOT r = f32[] call(a), to_apply=c" + std::to_string(i + 1) + "\n}\n"
                      : " ROOT r = f32[] negate(a)\n}\n";
  }
  const Module m = analyze_hlo(text);
  CHECK(m.total.flops == 1);
  CHECK(m.total.bytes_read + m.total.bytes_written == 8);
}

TEST_CASE("one-line computations do not each reserve to the end of the file", "[hlo][parser][hostile]") {
  // 2,000 reducers written `{ ... }` on one line each, then an entry of 20,000 lines: the
  // reservation scan of each reducer found no line starting with '}' and counted (and
  // reserved) to the end of the file, 2,000 x 20,000 instructions. The module's
  // reservations now stay within its line count; what is parsed is the same.
  std::string text = "HloModule oneline\n";
  for (int i = 0; i < 2000; ++i) {
    text += "add" + std::to_string(i) + " { a = f32[] parameter(0) b = f32[] parameter(1) ROOT c = f32[] add(a, b) }\n";
  }
  text += "ENTRY e {\n p = f32[] parameter(0)\n";
  for (int i = 0; i < 20'000; ++i) {
    text += " n" + std::to_string(i) + " = f32[] negate(" + (i == 0 ? std::string("p") : "n" + std::to_string(i - 1)) +
            ")\n";
  }
  text += " ROOT r = f32[] negate(n19999)\n}\n";
  const Module m = analyze_hlo(text);
  REQUIRE(m.computations.size() == 2001);
  std::size_t reserved = 0;
  for (const Computation& c : m.computations) reserved += c.instructions.capacity();
  CHECK(m.entry()->instructions.size() == 20'002);
  // the reservations within the file's line count, plus the entry's own growth (before: 2,000
  // reducers x 22,000 lines, 44 million)
  const std::size_t lines = 1 + static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  CHECK(reserved <= 4 * lines);
  CHECK(m.total.flops == 20'001);
}

TEST_CASE("a convolution window with a zero dilation or an extreme padding costs an upper bound",
          "[hlo][cost][hostile]") {
  // rhs_dilate=0 (XLA refuses it; the text may say it): every (tap, output) pair, 3 x 5 = 15
  // multiply-adds, 30 flops, and no arithmetic on the zero (UBSan watches the CI build).
  const Module m = analyze_hlo(R"(HloModule c
ENTRY e {
  x = f32[1,1,5]{2,1,0} parameter(0)
  k = f32[3,1,1]{2,1,0} parameter(1)
  ROOT c = f32[1,1,5]{2,1,0} convolution(x, k), window={size=3 rhs_dilate=0}, dim_labels=bf0_0io->bf0
})");
  CHECK(m.total.flops == 30);
  const Module far = analyze_hlo(R"(HloModule c
ENTRY e {
  x = f32[1,1,5]{2,1,0} parameter(0)
  k = f32[3,1,1]{2,1,0} parameter(1)
  ROOT c = f32[1,1,5]{2,1,0} convolution(x, k), window={size=3 pad=-9223372036854775807_0}, dim_labels=bf0_0io->bf0
})");
  CHECK(far.total.flops == 30);
}

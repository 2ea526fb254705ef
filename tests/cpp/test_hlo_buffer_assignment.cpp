// XLA's buffer assignment and live ranges: the parser (real CPU dump, errors with line numbers,
// hostile input), the module's memory over its schedule, each op's on-chip need, and the sizes
// reaching the FPGA model through analyze_trace. Every expected number is worked out by hand
// from the shapes (tests/data/buffer_assignment/README.md): f32[256,256] = 262,144 bytes,
// f32[256] = 1,024 bytes, f32[] = 4 bytes.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "analysis_fixture.hpp"
#include "fpgaprof/analysis/module_memory.hpp"
#include "fpgaprof/analysis/trace_analysis.hpp"
#include "fpgaprof/hlo/buffer_assignment.hpp"
#include "fpgaprof/hlo/hlo_parser.hpp"

using namespace fpgaprof;
using namespace fpgaprof::hlo;
using fpgaprof::analysis::module_memory;
using fpgaprof::analysis::ModuleMemory;
using fpgaprof::analysis::onchip_need;
using fpgaprof::analysis::OnChipNeed;

namespace {

std::string data(const std::string& name) {
  std::ifstream f(std::string(FPGAPROF_TEST_DATA_DIR) + "/buffer_assignment/" + name, std::ios::binary);
  REQUIRE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

const std::string kStem = "jit_f_cpu_after_optimizations";

// The line the parser must name: throws, with "line N:" first and the line number kept.
void require_error_at(const std::string& text, int line, bool live_ranges = false) {
  try {
    if (live_ranges)
      (void)parse_live_ranges(text);
    else
      (void)parse_buffer_assignment(text);
    FAIL("no error for: " << text);
  } catch (const BufferAssignmentParseError& e) {
    INFO(e.what());
    CHECK(e.line() == line);
    CHECK(std::string(e.what()).rfind("line " + std::to_string(line) + ": ", 0) == 0);
    CHECK(e.kind() == ErrorKind::kHloParse);
  }
}

}  // namespace

TEST_CASE("the buffer assignment of a real CPU dump parses", "[buffer_assignment]") {
  const BufferAssignment a = parse_buffer_assignment(data(kStem + "-buffer-assignment.txt"));
  REQUIRE(a.allocations.size() == 8);
  // allocation 0: the dot's result, updated in place by tanh: one buffer, two values.
  const BufferAllocation& out0 = a.allocations[0];
  CHECK(out0.size_bytes == 262144);
  CHECK(out0.kind == AllocationKind::kOutput);
  CHECK(out0.maybe_live_out);
  REQUIRE(out0.values.size() == 2);
  CHECK(out0.values[0].instruction == "ynn_fusion.1");
  CHECK(out0.values[0].shape_index == "{}");
  CHECK(out0.values[0].id == 18);
  CHECK(out0.values[1].key() == "wrapped_tanh{}");
  CHECK(out0.values[1].shape == "f32[256,256]{1,0}");
  // allocations 1 and 2: the parameters a and b.
  CHECK(a.allocations[1].kind == AllocationKind::kParameter);
  CHECK(a.allocations[1].parameter_number == 0);
  CHECK(a.allocations[2].parameter_number == 1);
  CHECK(a.allocations[2].values[0].instruction == "b.1");
  // allocation 3: the f32[256] sum; 4: the output tuple's index table (2 pointers + ... = 16).
  CHECK(a.allocations[3].size_bytes == 1024);
  CHECK(a.allocations[4].kind == AllocationKind::kOutput);
  CHECK(a.allocations[4].values[0].is_tuple_table());
  // 5..7: the reducer's f32[] scalars, thread-local.
  for (int i = 5; i <= 7; ++i) {
    CHECK(a.allocations[i].kind == AllocationKind::kThreadLocal);
    CHECK(a.allocations[i].size_bytes == 4);
  }
  CHECK(a.total_bytes() == 3 * 262144 + 1024 + 16 + 3 * 4);  // XLA's memory-usage report: 787484
  CHECK(a.allocations[1].line > a.allocations[0].line);
}

TEST_CASE("the live ranges of a real CPU dump parse", "[buffer_assignment]") {
  const LiveRanges r = parse_live_ranges(data(kStem + "-live-range.txt"));
  CHECK(r.max_time == 6);
  CHECK(r.sequence == std::vector<std::string>{"a.1", "b.1", "ynn_fusion.1", "wrapped_tanh", "ynn_fusion", "tuple.1"});
  REQUIRE(r.ranges.size() == 6);
  CHECK(r.ranges[2].value == "ynn_fusion.1{}");
  CHECK(r.ranges[2].start == 2);
  CHECK(r.ranges[2].end == 3);
  CHECK(r.xla_peak_time == 4);
  CHECK(r.xla_peak_bytes == 787456);  // a + b + tanh + sum, as XLA lists them
}

TEST_CASE("the module's peak over its schedule, by hand", "[buffer_assignment]") {
  const BufferAssignment a = parse_buffer_assignment(data(kStem + "-buffer-assignment.txt"));
  const LiveRanges r = parse_live_ranges(data(kStem + "-live-range.txt"));
  const Module m = parse_hlo_module(data(kStem + ".txt"));
  const ModuleMemory mm = module_memory("jit_f", a, &r, &m);
  CHECK(mm.peak_source == "xla live ranges");
  // 0-1: a, b = 524,288; 2-3: + the dot / tanh buffer = 786,432; 4 on: + the f32[256] sum.
  CHECK(mm.live_bytes == std::vector<uint64_t>{524288, 524288, 786432, 786432, 787456, 787456, 787456});
  CHECK(mm.peak_bytes == 787456);
  CHECK(mm.peak_position == 4);
  CHECK(mm.peak_instruction == "ynn_fusion");
  CHECK(mm.xla_peak_bytes == mm.peak_bytes);
  CHECK(mm.parameter_bytes == 2 * 262144);
  CHECK(mm.output_bytes == 262144 + 1024);
  CHECK(mm.temporary_bytes == 0);
  CHECK(mm.thread_local_bytes == 12);
  CHECK(mm.tuple_table_bytes == 16);
  CHECK(mm.allocation_bytes == 787484);
  REQUIRE(mm.live_at_peak.size() == 4);
  // Largest first, ties by allocation: the tanh buffer (allocation 0) named by its live value.
  CHECK(mm.live_at_peak[0].allocation == 0);
  CHECK(mm.live_at_peak[0].producer == "wrapped_tanh");
  CHECK(mm.live_at_peak[0].op_name == "jit(f)/tanh");
  CHECK(mm.live_at_peak[0].source == "<string>:4");  // the dump's stack frame 5: line 4
  CHECK(mm.live_at_peak[0].values == std::vector<std::string>{"ynn_fusion.1{}", "wrapped_tanh{}"});
  CHECK(mm.live_at_peak[0].start == 2);
  CHECK(mm.live_at_peak[0].end == 6);
  CHECK(mm.live_at_peak[3].size_bytes == 1024);
  CHECK(mm.live_at_peak[3].producer == "ynn_fusion");
  CHECK(mm.live_at_peak[3].source == "<string>:5");

  // Without live ranges: every counted buffer at once.
  const ModuleMemory upper = module_memory("jit_f", a, nullptr, nullptr);
  CHECK(upper.peak_source == "allocation sizes");
  CHECK(upper.peak_bytes == 3 * 262144 + 1024);
  CHECK(upper.peak_position == -1);
  CHECK(upper.live_at_peak[0].source.empty());
}

TEST_CASE("an op's on-chip need from the buffer assignment, by hand", "[buffer_assignment]") {
  const BufferAssignment a = parse_buffer_assignment(data(kStem + "-buffer-assignment.txt"));
  const Module m = parse_hlo_module(data(kStem + ".txt"));
  // The reduce fusion: reads a and tanh's result, writes f32[256]; its reducer's three f32[]
  // scalars are thread-local temporaries of what it calls.
  const OnChipNeed sum = onchip_need(m, a, "ynn_fusion");
  CHECK(sum.known);
  CHECK(sum.input_bytes == 2 * 262144);
  CHECK(sum.output_bytes == 1024);
  CHECK(sum.temporary_bytes == 12);
  CHECK(sum.total_bytes() == 525324);
  // The dot: a and b in, one f32[256,256] out.
  const OnChipNeed dot = onchip_need(m, a, "ynn_fusion.1");
  CHECK(dot.input_bytes == 2 * 262144);
  CHECK(dot.output_bytes == 262144);
  CHECK(dot.temporary_bytes == 0);
  CHECK_FALSE(onchip_need(m, a, "no_such_op").known);
}

TEST_CASE("analyze_trace gives the FPGA model XLA's sizes and says so", "[buffer_assignment]") {
  TraceStore s;
  s.devices.push_back(fpgaprof::testing::sm80_device());
  s.hlo_modules.push_back(
      {"jit_f", 4, data(kStem + ".txt"), data(kStem + "-buffer-assignment.txt"), data(kStem + "-live-range.txt")});
  s.hlo_modules.push_back({"jit_g", 5,
                           "HloModule jit_g\n\nENTRY %e (p: f32[8]) -> f32[8] {\n  %p = f32[8]{0} "
                           "parameter(0)\n  ROOT %n = f32[8]{0} negate(%p)\n}\n"});
  auto marker = [&](const std::string& name, uint64_t start, uint64_t end, uint32_t parent) {
    MarkerRecord mk;
    mk.name = s.strings.intern(name);
    mk.domain = s.strings.intern("TSL");
    mk.start_ns = start;
    mk.end_ns = end;
    mk.thread_id = 1;
    mk.parent = parent;
    s.markers.push_back(mk);
    return static_cast<uint32_t>(s.markers.size() - 1);
  };
  auto kernel = [&](const std::string& name, uint64_t start, uint32_t m) {
    KernelRecord k = fpgaprof::testing::kernel(s, start, 1000, m, kNone32, 1, s.strings.intern(name));
    s.kernels.push_back(k);
  };
  const uint32_t mf = marker("XlaModule:#hlo_module=jit_f,program_id=4#", 0, 10000, kNone32);
  kernel("ynn_fusion", 100, marker("Thunk:#hlo_op=ynn_fusion#", 50, 2000, mf));
  const uint32_t mg = marker("XlaModule:#hlo_module=jit_g,program_id=5#", 20000, 30000, kNone32);
  kernel("n", 20100, marker("Thunk:#hlo_op=n#", 20050, 22000, mg));
  s.meta.start_ns = 0;
  s.meta.end_ns = 30000;

  const analysis::TraceAnalysis r = analysis::analyze_trace(s);
  CHECK(r.warnings.empty());
  REQUIRE(r.module_memory.size() == 1);
  CHECK(r.module_memory[0].module == "jit_f");
  CHECK(r.module_memory[0].module_index == 0);
  CHECK(r.module_memory[0].program_id == 4);
  CHECK(r.module_memory[0].peak_bytes == 787456);
  const analysis::FpgaCandidate* f = nullptr;
  const analysis::FpgaCandidate* g = nullptr;
  for (const auto& c : r.fpga.candidates) {
    if (c.name == "ynn_fusion") f = &c;
    if (c.name == "n") g = &c;
  }
  REQUIRE(f != nullptr);
  REQUIRE(g != nullptr);
  CHECK(f->onchip_source == "xla buffer assignment");
  CHECK(f->working_set_bytes == 525324.0);
  CHECK(f->fits_on_chip);  // far below any card's on-chip RAM
  CHECK(g->onchip_source == "cost model");
  CHECK(g->working_set_bytes == 32.0);  // the cost model: its f32[8] result
}

TEST_CASE("a damaged buffer assignment is an error on its line", "[buffer_assignment]") {
  require_error_at("", 1);
  require_error_at("HloModule m\nno allocations here\n", 3);
  require_error_at("BufferAssignment:\nallocation x: size 4:\n", 2);
  require_error_at("BufferAssignment:\nallocation 0: size 4\n", 2);                              // no ':'
  require_error_at("BufferAssignment:\nallocation 0: size 4, parameter 0, shape |f32[]:\n", 2);  // open '|'
  require_error_at("BufferAssignment:\n value: <0 p @0> (size=4,offset=0): f32[]\n", 2);         // no header
  require_error_at("BufferAssignment:\nallocation 0: size 4:\n value: <0 p @0> (size=8,offset=0): f32[2]\n", 3);
  require_error_at("BufferAssignment:\nallocation 0: size 4:\n value: <0 p @0> (size=4,offset=1): f32[]\n", 3);
  require_error_at("BufferAssignment:\nallocation 0: size 99999999999999999999:\n", 2);  // overflow
  require_error_at("BufferAssignment:\nallocation 0: size 4:\n value: <0 p{0 @0> (size=4,offset=0): f32[]\n", 3);
  // Sizes up to 2^62: offset + size cannot wrap around.
  require_error_at("BufferAssignment:\nallocation 0: size 4611686018427387905:\n", 2);
  require_error_at(
      "BufferAssignment:\nallocation 0: size 4611686018427387904:\n value: <0 p @0> "
      "(size=4611686018427387904,offset=4611686018427387904): f32[]\n",
      3);
}

TEST_CASE("a damaged live-range dump is an error on its line", "[buffer_assignment]") {
  require_error_at("", 1, true);
  require_error_at("HloLiveRange max 3:\n", 1, true);
  require_error_at("HloLiveRange (max 2):\n  InstructionSequence:\n    1:a\n", 3, true);  // position 0 missing
  require_error_at("HloLiveRange (max 2):\n  InstructionSequence:\n    0:a\n  BufferLiveRange:\n    a{}:2-1\n", 5,
                   true);
  require_error_at("HloLiveRange (max 2):\n  InstructionSequence:\n    0:a\n  BufferLiveRange:\n    a{}:0-3\n", 5,
                   true);
  require_error_at("HloLiveRange (max 2):\n  BufferLiveRange:\n    a{}\n", 3, true);
  // A max far beyond the schedule would size the timeline by the header alone: refused.
  require_error_at("HloLiveRange (max 1000000000):\n  InstructionSequence:\n    0:a\n", 3, true);
}

TEST_CASE("the allocations part of a dump is what a trace keeps", "[buffer_assignment]") {
  const std::string full = data(kStem + "-buffer-assignment.txt");
  const std::string_view kept = buffer_assignment_allocations_text(full);
  CHECK(kept.substr(0, 17) == "BufferAssignment:");
  CHECK(kept.find("HloModule") == std::string_view::npos);
  CHECK(parse_buffer_assignment(kept).allocations.size() == 8);
  const std::string tail = std::string(kept) + "\nTotal bytes used: 787484 (769.0KiB)\n\nUsed values:\n<0 x @0>\n";
  CHECK(buffer_assignment_allocations_text(tail) == std::string(kept) + "\n");
  CHECK(parse_buffer_assignment(tail).allocations.size() == 8);
}

TEST_CASE("GPU-style allocations: one preallocated temp buffer at offsets, by hand", "[buffer_assignment]") {
  // Written in the format of XLA's BufferAllocation::ToString for a GPU module (no GPU dump is
  // committed): the temporaries share one preallocated buffer at offsets, a while loop's phi
  // reuses the fusion's slice, a constant, a colored output tuple table.
  std::ifstream f(std::string(FPGAPROF_TEST_DATA_DIR) + "/../fuzz/corpus/buffer_assignment_fuzzer/gpu_kinds.txt");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  const std::size_t cut = text.find("\n====\n");
  REQUIRE(cut != std::string::npos);
  const BufferAssignment a = parse_buffer_assignment(text.substr(0, cut));
  const LiveRanges r = parse_live_ranges(text.substr(cut + 6));
  REQUIRE(a.allocations.size() == 4);
  CHECK(a.allocations[1].preallocated_temp);
  CHECK(a.allocations[1].kind == AllocationKind::kTemporary);
  CHECK(a.allocations[1].values[1].shape_index == "{1}");
  CHECK(a.allocations[1].values[2].is_phi);
  CHECK(a.allocations[2].kind == AllocationKind::kConstant);
  CHECK(a.allocations[3].color == 1);
  CHECK(a.allocations[3].kind == AllocationKind::kOutput);
  CHECK(r.xla_peak_time == 2);
  const ModuleMemory mm = module_memory("gpu", a, &r, nullptr);
  // Slices: p0 4 B [0,4]; temp@0 1,024 B: fusion.1 [1,2] and the phi while.3{0} [3,4], one
  // buffer over [1,4]; temp@1024 1,024 B: the custom call's workspace {1} at [2,2]; the
  // constant 4 B without a live range: the whole schedule. The tuple table is left out.
  CHECK(mm.live_bytes == std::vector<uint64_t>{8, 1032, 2056, 1032, 1032});
  CHECK(mm.peak_bytes == 2056);
  CHECK(mm.peak_position == 2);
  CHECK(mm.peak_instruction == "custom-call.2");
  CHECK(mm.temporary_bytes == 2048);
  CHECK(mm.constant_bytes == 4);
  CHECK(mm.parameter_bytes == 4);
  CHECK(mm.tuple_table_bytes == 16);
  CHECK(mm.unplaced_values == 0);
  REQUIRE(mm.live_at_peak.size() == 4);
  CHECK(mm.live_at_peak[0].producer == "fusion.1");  // the value live at 2 in the shared slice
  CHECK(mm.live_at_peak[1].producer == "custom-call.2");
}

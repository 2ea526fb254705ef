// Parse + cost throughput of HLO text on one core. Input: an HLO file given on the command line
// (e.g. an XLA dump), a directory of .hlo files (e.g. the XLA test corpus: every file that
// parses, in name order), or the built-in module below; it is repeated (as distinct modules)
// until the input is about 64 MB, then parsed and costed module by module.
// Usage: hlo_parse_benchmark [file.hlo | directory] [target_mb]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fpgaprof/hlo/cost_model.hpp"

namespace {

const char* kBuiltin =
    R"(HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[64,32]{1,0}, f32[64,32]{1,0})->f32[64]{0}}

FileNames
1 "/home/user/prog.py"

FunctionNames
1 "<module>"
2 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=6 end_line=6 column=4 end_column=25}
2 {file_name_id=1 function_name_id=2 line=4 end_line=4 column=11 end_column=35}
3 {file_name_id=1 function_name_id=2 line=3 end_line=3 column=8 end_column=28}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=2}
3 {file_location_id=3 parent_frame_id=2}


%region_0.1 (reduce_sum.3: f32[], reduce_sum.4: f32[]) -> f32[] {
  %reduce_sum.3 = f32[] parameter(0), metadata={op_name="reduce_sum"}
  %reduce_sum.4 = f32[] parameter(1), metadata={op_name="reduce_sum"}
  ROOT %reduce_sum.5 = f32[] add(%reduce_sum.3, %reduce_sum.4), metadata={op_name="jit(f)/reduce_sum" stack_frame_id=2}
}

%fused_computation (param_0.2: f32[64,32], param_1.2: f32[64,32]) -> f32[64] {
  %param_0.2 = f32[64,32]{1,0} parameter(0)
  %param_1.2 = f32[64,32]{1,0} parameter(1)
  %dot_general.0 = f32[64,64]{1,0} dot(%param_0.2, %param_1.2), lhs_contracting_dims={1}, rhs_contracting_dims={1}, metadata={op_name="jit(f)/dot_general" stack_frame_id=3}
  %constant.0 = f32[] constant(0)
  ROOT %reduce_sum.0 = f32[64]{0} reduce(%dot_general.0, %constant.0), dimensions={0}, to_apply=%region_0.1, metadata={op_name="jit(f)/reduce_sum" stack_frame_id=2}
}

%fused_computation.1 (param_0.5: f32[64,32], param_1.6: f32[64,32]) -> f32[64,32] {
  %param_1.6 = f32[64,32]{1,0} parameter(1)
  %sin.0 = f32[64,32]{1,0} sine(%param_1.6), metadata={op_name="jit(f)/sin" stack_frame_id=3}
  %param_0.5 = f32[64,32]{1,0} parameter(0)
  %mul.0 = f32[64,32]{1,0} multiply(%sin.0, %param_0.5), metadata={op_name="jit(f)/mul" stack_frame_id=3}
  %constant.1 = f32[] constant(2)
  %add.1 = f32[64,32]{1,0} broadcast(%constant.1), dimensions={}, metadata={op_name="jit(f)/add" stack_frame_id=3}
  ROOT %add.0 = f32[64,32]{1,0} add(%mul.0, %add.1), metadata={op_name="jit(f)/add" stack_frame_id=3}
}

ENTRY %main.2 (x.1: f32[64,32], y.1: f32[64,32]) -> f32[64] {
  %x.1 = f32[64,32]{1,0} parameter(0), metadata={op_name="x"}
  %y.1 = f32[64,32]{1,0} parameter(1), metadata={op_name="y"}
  %broadcast_add_fusion = f32[64,32]{1,0} fusion(%y.1, %x.1), kind=kLoop, calls=%fused_computation.1, metadata={op_name="jit(f)/add" stack_frame_id=3}
  ROOT %ynn_fusion = f32[64]{0} fusion(%broadcast_add_fusion, %y.1), kind=kCustom, calls=%fused_computation, metadata={op_name="jit(f)/reduce_sum" stack_frame_id=2}, backend_config={"fusion_config":{"kind":"__ynn_fusion"},"outer_dimension_partitions":[]}
}
)";

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> modules{kBuiltin};
  std::size_t skipped = 0;
  if (argc > 1 && std::filesystem::is_directory(argv[1])) {
    std::vector<std::string> paths;
    for (const auto& e : std::filesystem::directory_iterator(argv[1])) {
      if (e.path().extension() == ".hlo") paths.push_back(e.path().string());
    }
    std::sort(paths.begin(), paths.end());
    modules.clear();
    for (const std::string& p : paths) {
      std::string text;
      if (!read_file(p, text)) continue;
      try {
        fpgaprof::hlo::analyze_hlo(text);
        modules.push_back(std::move(text));
      } catch (const std::exception&) {
        ++skipped;  // not parsed: left out of the timing
      }
    }
    if (modules.empty()) {
      std::fprintf(stderr, "no module of %s parses\n", argv[1]);
      return 1;
    }
  } else if (argc > 1) {
    if (!read_file(argv[1], modules[0])) {
      std::fprintf(stderr, "cannot read %s\n", argv[1]);
      return 1;
    }
  }
  const double target_mb = argc > 2 ? std::stod(argv[2]) : 64.0;
  std::vector<std::string> inputs;
  std::size_t total = 0;
  for (std::size_t k = 0; static_cast<double>(total) < target_mb * 1e6; k = (k + 1) % modules.size()) {
    inputs.push_back(modules[k]);
    total += modules[k].size();
  }
  if (skipped > 0) std::printf("%zu modules left out (parse error)\n", skipped);
  double flops = 0;
  std::size_t instructions = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  for (const std::string& text : inputs) {
    fpgaprof::hlo::Module m = fpgaprof::hlo::analyze_hlo(text);
    flops += m.total.flops;
    for (const auto& c : m.computations) instructions += c.instructions.size();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // CPU time of this (single-threaded) process: the one-core figure even on a busy machine.
  const double cpu_s = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  const double mb = static_cast<double>(total) / 1e6;
  std::printf(
      "parsed+costed %.1f MB (%zu modules of %zu B on average, %zu instructions): wall %.3f s = %.1f MB/s; "
      "cpu %.3f s = %.1f MB/s, %.2f M instructions/s (checksum %.0f)\n",
      mb, inputs.size(), total / inputs.size(), instructions, s, mb / s, cpu_s, mb / cpu_s,
      static_cast<double>(instructions) / 1e6 / cpu_s, flops);
  return 0;
}

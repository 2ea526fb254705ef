// Whole analysis (transfers, device memory, roofline per kernel/op/region/name, FPGA ranking of ops and regions)
// of a synthetic 10-million-kernel trace on one core. Prints time per stage and peak RSS
// (getrusage ru_maxrss).
// Usage: analysis_benchmark [kernel_count] [--no-per-kernel] [--attribution]
//   --attribution  the trace also holds what XLA emits around each kernel (an XlaModule NVTX
//                  range per step, a Thunk range per kernel) and the optimized HLO module, and
//                  the benchmark runs analyze_trace (trace_analysis.hpp), the pipeline that
//                  fpgaprof._core.analysis.analyze converts (the Python path): HLO parse + cost,
//                  attribution, op inputs, then the rest, each stage timed from its on_stage call.
//                  Without it the benchmark supplies the kernel -> op mapping itself and calls
//                  the stages one by one.
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>

#include "fpgaprof/analysis/attribution.hpp"
#include "fpgaprof/analysis/device_analysis.hpp"
#include "fpgaprof/analysis/fpga_model.hpp"
#include "fpgaprof/analysis/memory_analysis.hpp"
#include "fpgaprof/analysis/op_inputs.hpp"
#include "fpgaprof/analysis/region_paths.hpp"
#include "fpgaprof/analysis/roofline.hpp"
#include "fpgaprof/analysis/trace_analysis.hpp"
#include "fpgaprof/analysis/transfer_analysis.hpp"
#include "fpgaprof/hlo/cost_model.hpp"

using namespace fpgaprof;
using namespace fpgaprof::analysis;

namespace {
double max_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // KiB on Linux
}
double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  std::size_t n_kernels = 10'000'000;
  bool per_kernel = true;
  bool with_attribution = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--no-per-kernel")
      per_kernel = false;
    else if (std::string(argv[i]) == "--attribution")
      with_attribution = true;
    else
      n_kernels = std::strtoull(argv[i], nullptr, 10);
  }
  const std::size_t n_ops = 500, n_names = 600, n_regions = 2000;
  const std::size_t n_copies = n_kernels / 100, n_allocs = n_kernels / 200, n_syncs = n_kernels / 1000;
  std::mt19937_64 rng(42);

  auto t0 = std::chrono::steady_clock::now();
  TraceStore s;
  DeviceInfo d;
  d.name = "synthetic H100";
  d.compute_capability_major = 9;
  d.sm_count = 132;
  d.core_clock_khz = 1980000;
  d.memory_clock_khz = 2619000;
  d.memory_bus_width_bits = 5120;
  d.pcie_generation = 5;
  d.pcie_link_width = 16;
  s.devices = {d};
  std::vector<StringId> names;
  for (std::size_t i = 0; i < n_names; ++i) names.push_back(s.strings.intern("loop_fusion_" + std::to_string(i)));
  ApiFunction launch_fn;
  launch_fn.name = s.strings.intern("cuLaunchKernelEx");
  launch_fn.callback_id = 652;
  const uint32_t launch = s.intern_api_function(launch_fn);
  // Regions: 1000 outer "step" regions each with one nested region, on thread 1, covering the run.
  const uint64_t span_ns = n_kernels * 4000;  // 4 us per kernel on average (2 streams)
  for (std::size_t r = 0; r < n_regions / 2; ++r) {
    RegionRecord outer;
    outer.start_ns = r * (span_ns / (n_regions / 2));
    outer.end_ns = outer.start_ns + span_ns / (n_regions / 2) - 1;
    outer.thread_id = 1;
    outer.name = s.strings.intern("step");
    RegionRecord inner = outer;
    inner.start_ns += 10;
    inner.end_ns -= 10;
    inner.parent = static_cast<uint32_t>(s.regions.size());
    inner.depth = 1;
    inner.name = s.strings.intern("inner");
    s.regions.push_back(outer);
    s.regions.push_back(inner);
  }
  s.kernels.resize(n_kernels);
  s.api_calls.resize(n_kernels);
  std::vector<uint32_t> op_of_kernel(n_kernels);
  std::uniform_int_distribution<uint32_t> dur(1000, 12000);
  for (std::size_t i = 0; i < n_kernels; ++i) {
    KernelRecord& k = s.kernels[i];
    const uint64_t start = i * 4000 + (i & 1) * 500;
    k.start_ns = start;
    k.end_ns = start + dur(rng);
    k.launch_ns = start - 3000;
    k.correlation_id = static_cast<uint32_t>(i + 1);
    k.thread_id = 1;
    const uint32_t op = static_cast<uint32_t>((i * 2654435761u) % n_ops);
    op_of_kernel[i] = (i % 50 == 0) ? kNone32 : op;  // 2 % unattributed
    k.name = names[op % n_names];
    k.stream_id = static_cast<uint32_t>(i & 1);
    LaunchConfig lc;
    lc.grid_x = 256 + (op % 4) * 512;
    lc.grid_y = 1;
    lc.grid_z = 1;
    lc.block_x = 256;
    lc.block_y = 1;
    lc.block_z = 1;
    k.launch_config = s.intern_launch_config(lc);
    k.api_index = static_cast<uint32_t>(i);
    k.region_index =
        static_cast<uint32_t>(std::min<uint64_t>(start / (span_ns / (n_regions / 2)), n_regions / 2 - 1) * 2 + 1);
    k.marker_index = with_attribution ? static_cast<uint32_t>(i) : kNone32;
    ApiRecord& a = s.api_calls[i];
    a.start_ns = k.launch_ns;
    a.end_ns = k.launch_ns + 2500;
    a.correlation_id = k.correlation_id;
    a.thread_id = 1;
    a.function = launch;
  }
  for (std::size_t i = 0; i < n_copies; ++i) {
    MemcpyRecord c;
    c.start_ns = i * 400000 + 100;
    c.end_ns = c.start_ns + 20000;
    c.bytes = (i % 3 == 0) ? 4096 : (1u << 22);
    c.copy_kind = (i % 2) ? CopyKind::kHtoD : CopyKind::kDtoH;
    c.src_kind = (i % 2) ? MemoryKind::kPinned : MemoryKind::kDevice;
    c.dst_kind = (i % 2) ? MemoryKind::kDevice : MemoryKind::kPageable;
    c.thread_id = 1;
    c.region_index =
        static_cast<uint32_t>(std::min<uint64_t>(c.start_ns / (span_ns / (n_regions / 2)), n_regions / 2 - 1) * 2 + 1);
    s.memcpys.push_back(c);
  }
  for (std::size_t i = 0; i < n_allocs; ++i) {
    AllocationRecord a;
    a.timestamp_ns = i * 800000;
    a.address = 0x10000000ull + (i % 4096) * 0x100000ull;
    a.bytes = 1u << 20;
    a.is_alloc = (i / 4096) % 2 == 0;
    a.region_index = kNone32;
    s.allocations.push_back(a);
  }
  for (std::size_t i = 0; i < n_syncs; ++i) {
    SyncRecord w;
    w.start_ns = i * 4000000 + 50;
    w.end_ns = w.start_ns + 30000;
    w.thread_id = 1;
    s.syncs.push_back(w);
  }
  if (with_attribution) {
    // Markers 0 .. n-1: kernel i's Thunk range (hlo_op = its op); then one XlaModule range per
    // step, the parent of the Thunk ranges in it. One HLO module: a chain of n_ops loop fusions.
    const std::size_t steps = n_regions / 2;
    std::vector<StringId> thunk_names(n_ops);
    for (std::size_t o = 0; o < n_ops; ++o)
      thunk_names[o] = s.strings.intern("Thunk:#hlo_op=fusion." + std::to_string(o) + "#");
    const StringId module_range = s.strings.intern("XlaModule:#hlo_module=jit_step,program_id=1#");
    const StringId tsl = s.strings.intern("TSL");
    s.markers.resize(n_kernels + steps);
    for (std::size_t r = 0; r < steps; ++r) {
      MarkerRecord& m = s.markers[n_kernels + r];
      m.start_ns = s.regions[2 * r].start_ns + 20;
      m.end_ns = s.regions[2 * r].end_ns - 20;
      m.thread_id = 1;
      m.domain = tsl;
      m.name = module_range;
      m.depth = 0;
    }
    for (std::size_t i = 0; i < n_kernels; ++i) {
      MarkerRecord& m = s.markers[i];
      const KernelRecord& k = s.kernels[i];
      m.start_ns = k.launch_ns - 100;
      m.end_ns = k.launch_ns + 2600;
      m.thread_id = 1;
      m.domain = tsl;
      m.depth = 1;
      const uint32_t op =
          op_of_kernel[i] == kNone32 ? static_cast<uint32_t>((i * 2654435761u) % n_ops) : op_of_kernel[i];
      m.name = thunk_names[op];
      m.parent = static_cast<uint32_t>(n_kernels + (s.kernels[i].region_index - 1) / 2);
    }
    std::string text = "HloModule jit_step\n\n";
    for (std::size_t o = 0; o < n_ops; ++o) {
      text +=
          "fused_" + std::to_string(o) + " {\n  p0 = f32[262144]{0} parameter(0)\n" +
          "  ROOT m = f32[262144]{0} multiply(p0, p0), metadata={op_name=\"jit(step)/mul\" source_file=\"/work/step.py\" source_line=" +
          std::to_string(10 + o) + "}\n}\n\n";
    }
    text += "ENTRY main {\n  fusion.x = f32[262144]{0} parameter(0)\n";
    std::string prev = "fusion.x";
    for (std::size_t o = 0; o < n_ops; ++o) {
      const std::string name = "fusion." + std::to_string(o);
      text += "  " + std::string(o + 1 == n_ops ? "ROOT " : "") + name + " = f32[262144]{0} fusion(" + prev +
              "), kind=kLoop, calls=fused_" + std::to_string(o) + "\n";
      prev = name;
    }
    text += "}\n";
    s.hlo_modules.push_back({"jit_step", 1, std::move(text)});
    // The mapping used to build the ranges is the attribution's to find: drop it (40 MB at
    // 10 M kernels that are not part of the trace).
    std::vector<uint32_t>().swap(op_of_kernel);
  }
  std::vector<OpCost> ops(n_ops);
  for (std::size_t o = 0; o < n_ops; ++o) {
    ops[o].name = "fusion." + std::to_string(o);
    ops[o].flops = 1e6 * static_cast<double>(o % 17 + 1);
    ops[o].bytes_read = 4e6;
    ops[o].bytes_written = 2e6;
    ops[o].working_set_bytes = 2e6 * static_cast<double>(o % 40 + 1);
    ops[o].pattern = static_cast<hlo::AccessPattern>(1 + o % 9);
    ops[o].precision = (o % 5 == 0) ? Precision::kTf32Tensor : Precision::kFp32;
  }
  const double build_s = seconds_since(t0);
  const double trace_rss = max_rss_mib();
  std::printf("trace: %zu kernels, %zu API calls, %zu copies, %zu allocation records, %zu syncs, %zu regions\n",
              s.kernels.size(), s.api_calls.size(), s.memcpys.size(), s.allocations.size(), s.syncs.size(),
              s.regions.size());
  std::printf(
      "record sizes: KernelRecord %zu B, ApiRecord %zu B, %zu launch configurations; built in %.2f s, "
      "RSS after building %.0f MiB\n",
      sizeof(KernelRecord), sizeof(ApiRecord), s.launch_configs.size(), build_s, trace_rss);

  if (with_attribution) {
    // The Python path: analyze_trace, each stage timed from its start to the next one's.
    AnalysisOptions o;
    o.per_kernel = per_kernel;
    o.workload_ns = static_cast<double>(span_ns);
    o.keep_record_attribution = false;  // as the bindings' analyze by default
    std::map<std::string, double> stage_s;
    std::string current;
    auto t = std::chrono::steady_clock::now();
    o.on_stage = [&](std::string_view name) {
      if (!current.empty()) stage_s[current] += seconds_since(t);
      current = name;
      t = std::chrono::steady_clock::now();
    };
    const auto t_all = std::chrono::steady_clock::now();
    const double cpu0 = thread_cpu_s();
    const TraceAnalysis a = analyze_trace(s, o);
    stage_s[current] += seconds_since(t);
    const double total_s = seconds_since(t_all);
    const double total_cpu_s = thread_cpu_s() - cpu0;
    const double peak_rss = max_rss_mib();
    std::printf("HLO parse + attribution + op inputs: %.3f s (%zu markers, %zu attribution sites, %zu ops)\n",
                stage_s["hlo"] + stage_s["attribution"] + stage_s["op inputs"], s.markers.size(),
                a.attribution.op_of_site.size(), a.attribution.ops.size());
    std::printf("region paths + busy unions: %.3f s (kernels %.1f ms busy of %.1f ms, GPU %.1f ms)\n",
                stage_s["region paths"] + stage_s["busy"], static_cast<double>(a.busy.kernel_busy_ns) / 1e6,
                static_cast<double>(span_ns) / 1e6, static_cast<double>(a.busy.busy_ns) / 1e6);
    std::printf("transfers: %.3f s (%zu groups, %zu flags)\n", stage_s["transfers"], a.transfers.groups.size(),
                a.transfers.flags.size());
    std::printf("memory: %.3f s (peak %.1f MB)\n", stage_s["memory"],
                static_cast<double>(a.memory.peak_in_use_bytes) / 1e6);
    std::printf("devices: %.3f s (%zu devices, busiest/mean busy %.3f)\n", stage_s["devices"], a.devices.devices.size(),
                a.devices.balance.imbalance);
    std::printf("roofline: %.3f s (%zu ops, %zu region paths, %zu kernel names, %zu per-kernel rows)\n",
                stage_s["roofline"], a.roofline.ops.size(), a.roofline.region_paths.size(),
                a.roofline.kernel_names.size(), a.roofline.kernels.size());
    std::printf("fpga ranking: %.4f s (%zu candidates, best score %.4f)\n", stage_s["fpga ops"],
                a.fpga.candidates.size(), a.fpga.candidates.empty() ? 0.0 : a.fpga.candidates[0].score);
    std::printf("fpga region ranking: %.3f s (%zu region paths, best %s, %.0f module calls counted)\n",
                stage_s["fpga regions"], a.fpga_regions.size(),
                a.fpga_regions.empty() ? "-" : a.fpga_regions[0].path.c_str(),
                a.fpga_regions.empty() ? 0.0 : a.fpga_regions[0].module_calls);
    std::printf("region GPU time + kernels by name: %.3f s (%zu region paths, %zu kernel names)\n",
                stage_s["region gpu time"] + stage_s["kernels by name"], a.region_path_gpu.size(),
                a.kernels_by_name.size());
    std::printf(
        "TOTAL analysis (analyze_trace): %.3f s wall, %.3f s CPU on one thread; peak RSS %.0f MiB (trace "
        "alone %.0f MiB, analysis adds %.0f MiB)\n",
        total_s, total_cpu_s, peak_rss, trace_rss, peak_rss - trace_rss);
    return 0;
  }

  const auto t_all = std::chrono::steady_clock::now();
  const double cpu0 = thread_cpu_s();
  auto t = std::chrono::steady_clock::now();
  const std::vector<uint32_t> op_of_memcpy;
  const std::vector<double> host_bytes;
  const Ceilings c = table_ceilings(s.devices[0]);
  // Region paths once for every per-path table, as analyze_trace does.
  const RegionPaths paths(s);
  const IntervalSet busy = kernel_busy_intervals(s);
  const double busy_s = seconds_since(t);
  t = std::chrono::steady_clock::now();
  TransferOptions to;
  to.region_paths = &paths;
  const TransferReport tr = analyze_transfers(s, to, op_of_memcpy, &busy);
  const double transfer_s = seconds_since(t);
  t = std::chrono::steady_clock::now();
  const MemoryReport mr = analyze_memory(s, 20, {}, RegionRows::kPaths, &paths);
  const double memory_s = seconds_since(t);
  t = std::chrono::steady_clock::now();
  const DeviceReport dr = analyze_devices(s, {}, &mr);
  const double devices_s = seconds_since(t);
  t = std::chrono::steady_clock::now();
  RooflineOptions ro;
  ro.per_kernel = per_kernel;
  ro.region_paths = &paths;
  const RooflineReport rr = analyze_roofline(s, c, ops, op_of_kernel, ro);
  const double roofline_s = seconds_since(t);
  t = std::chrono::steady_clock::now();
  FpgaOptions fo;
  fo.workload_ns = static_cast<double>(span_ns);
  fo.region_paths = &paths;
  const FpgaReport fr = rank_fpga_candidates(ops, rr, fpga_preset("alveo-u55c"), fo, host_bytes);
  const double fpga_s = seconds_since(t);
  t = std::chrono::steady_clock::now();
  const std::vector<FpgaRegionCandidate> fregions =
      rank_fpga_regions(s, ops, op_of_kernel, rr, fpga_preset("alveo-u55c"), fo);
  const double fpga_regions_s = seconds_since(t);
  const double total_s = seconds_since(t_all);
  const double total_cpu_s = thread_cpu_s() - cpu0;
  const double peak_rss = max_rss_mib();

  std::printf("kernel busy union: %.3f s (%.1f ms busy of %.1f ms)\n", busy_s,
              static_cast<double>(busy.total_ns()) / 1e6, static_cast<double>(span_ns) / 1e6);
  std::printf("transfers: %.3f s (%zu groups, %zu flags)\n", transfer_s, tr.groups.size(), tr.flags.size());
  std::printf("memory: %.3f s (peak %.1f MB)\n", memory_s, static_cast<double>(mr.peak_in_use_bytes) / 1e6);
  std::printf("devices: %.3f s (%zu devices, busiest/mean busy %.3f)\n", devices_s, dr.devices.size(),
              dr.balance.imbalance);
  std::printf("roofline: %.3f s (%zu ops, %zu region paths, %zu kernel names, %zu per-kernel rows)\n", roofline_s,
              rr.ops.size(), rr.region_paths.size(), rr.kernel_names.size(), rr.kernels.size());
  std::printf("fpga ranking: %.4f s (%zu candidates, best score %.4f)\n", fpga_s, fr.candidates.size(),
              fr.candidates.empty() ? 0.0 : fr.candidates[0].score);
  std::printf("fpga region ranking: %.3f s (%zu region paths, best %s, %.0f module calls counted)\n", fpga_regions_s,
              fregions.size(), fregions.empty() ? "-" : fregions[0].path.c_str(),
              fregions.empty() ? 0.0 : fregions[0].module_calls);
  std::printf(
      "TOTAL analysis: %.3f s wall, %.3f s CPU on one thread; peak RSS %.0f MiB (trace alone %.0f MiB, "
      "analysis adds %.0f MiB)\n",
      total_s, total_cpu_s, peak_rss, trace_rss, peak_rss - trace_rss);
  return 0;
}

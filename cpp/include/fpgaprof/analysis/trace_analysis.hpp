// TraceAnalysis: the whole analysis of one correlated trace in one call, as the Python API and
// the reports use it (fpgaprof._core.analysis.analyze only converts its result). In order: the
// HLO modules of the store parsed and costed once; attribution once (kernel/copy -> HLO op);
// op inputs; the busy-time unions; transfers; device memory; per-device rows and load balance;
// roofline; GPU energy; the FPGA rankings of ops and of region paths (with the GPU energy beside
// the card's); GPU time per region path; kernels by
// name. One RegionPaths grouping serves every per-path table.
//
// Units: times in ns (uint64_t, CUPTI's clock), bytes in bytes, rates in bytes or FLOP per
// second. Pure function of the store; thread-safe for concurrent calls on a store nobody
// mutates. The result owns all its data and keeps no reference to the store, except that the
// StringIds in it (KernelNameStats::name, RooflineReport::kernel_names) name strings of
// store.strings.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fpgaprof/analysis/attribution.hpp"
#include "fpgaprof/analysis/ceilings.hpp"
#include "fpgaprof/analysis/collectives.hpp"
#include "fpgaprof/analysis/device_analysis.hpp"
#include "fpgaprof/analysis/energy_analysis.hpp"
#include "fpgaprof/analysis/fpga_model.hpp"
#include "fpgaprof/analysis/memory_analysis.hpp"
#include "fpgaprof/analysis/module_memory.hpp"
#include "fpgaprof/analysis/op_inputs.hpp"
#include "fpgaprof/analysis/region_paths.hpp"
#include "fpgaprof/analysis/roofline.hpp"
#include "fpgaprof/analysis/transfer_analysis.hpp"
#include "fpgaprof/records.hpp"
#include "fpgaprof/trace_store.hpp"

namespace fpgaprof::analysis {

struct AnalysisOptions {
  // Ceilings of the roofline: a measured table merged with the device's, or the user's. nullopt:
  // table_ceilings() of the store's first device (every value unknown without a device).
  // A link peak whose source is not kTable (measured, user) replaces every device's own link
  // peak in the transfers and the per-device rows; a table one stays per device (its record).
  std::optional<Ceilings> ceilings;
  // The card of the FPGA what-if: a preset (fpga_preset) or a user card (validate_fpga_target
  // is applied; an invalid one throws Error(kInvalidArgument)).
  FpgaTarget fpga_target = fpga_preset("alveo-u55c");
  // More cards to rank the same ops and regions on (TraceAnalysis::other_fpga, in this order),
  // so that a report compares cards from one analysis; each validated like fpga_target.
  std::vector<FpgaTarget> other_fpga_targets;
  // End-to-end time of the traced workload, ns, for the FPGA Amdahl speedups; 0: the trace's
  // span (TraceMeta end - start), or 0 when that is not positive.
  double workload_ns = 0;
  // FpgaOptions::inputs_cross_link: each offloaded execution's inputs and outputs cross the
  // card's host link (true) or already live on the card (false).
  bool inputs_cross_link = true;
  // FpgaOptions::row_imbalance: the user's HiSpMV delta for restructured scatters (0: not known).
  double row_imbalance = 0;
  uint64_t tiny_bytes = 64 * 1024;    // TransferOptions::tiny_bytes
  uint64_t tiny_flood_count = 1000;   // TransferOptions::tiny_flood_count
  uint64_t latency_kernel_ns = 5000;  // RooflineOptions::latency_kernel_ns
  bool per_kernel = false;            // RooflineOptions::per_kernel (24 bytes per kernel)
  std::size_t top_buffers = 20;       // MemoryReport::largest keeps this many buffers
  // false: TraceAnalysis::attribution drops its per-record lists (kernels, memcpys, memsets:
  // 4 bytes per record) once the op inputs are built; its ops, sites and totals stay. For a
  // caller that needs only the tables (the bindings' analyze unless asked for the attribution).
  bool keep_record_attribution = true;
  // One transfer group, memory row and roofline point per region path (instances summed) or
  // per region record. The FPGA region ranking and TraceAnalysis::region_path_gpu are per path
  // either way.
  RegionRows region_rows = RegionRows::kPaths;
  // Called on the calling thread as each stage begins, with its name ("region paths", "hlo",
  // "attribution", "op inputs", "module memory", "busy", "transfers", "memory", "devices", "roofline",
  // "energy", "fpga ops", "fpga regions", "region gpu time", "kernels by name", "collectives",
  // in this order); for
  // benchmarks and progress displays. May be empty. What it throws propagates.
  std::function<void(std::string_view stage)> on_stage;
};

// Union of the GPU activity intervals of the whole trace (every device together; per device:
// DeviceRow::kernel_busy_ns, copy_busy_ns, busy_ns). An interval with end <= start is empty.
struct GpuBusyTime {
  uint64_t kernel_busy_ns = 0;  // union of the kernels' [start_ns, end_ns)
  uint64_t copy_busy_ns = 0;    // union of the copies' (TraceStore::memcpys)
  uint64_t memset_busy_ns = 0;  // union of the memsets'
  uint64_t busy_ns = 0;         // union of kernels, copies and memsets together
  uint64_t kernel_count = 0;    // records in each table
  uint64_t kernel_time_ns = 0;  // sum of kernel durations (end - start, 0 when end <= start)
  uint64_t copy_count = 0;
  uint64_t copy_bytes = 0;  // sum of MemcpyRecord::bytes
  uint64_t memset_count = 0;
};

// GPU time of one region path, inclusive: the kernels, copies and memsets launched inside any
// instance of the path or of a path nested in it (KernelRecord::region_index etc.), each
// counted once per enclosing path. Durations are end - start (0 when end <= start), summed
// (not a union: activities that overlap in time count twice).
struct RegionPathGpuTime {
  uint64_t kernel_count = 0;
  uint64_t kernel_ns = 0;
  uint64_t copy_count = 0;
  uint64_t copy_ns = 0;
  uint64_t memset_count = 0;
  uint64_t memset_ns = 0;
  uint64_t gpu_ns() const { return kernel_ns + copy_ns + memset_ns; }
};

// The kernels of one name (KernelRecord::name). Durations as above. A counter replay can leave
// kernels without timestamps (start = end = 0): their 0 ns is no duration, so they count in
// count but not in timed_count, and min_ns/max_ns/mean_ns() are over the timed ones (0 when
// none is timed, with timed_count 0 saying so).
// One XLA module's launches of a kernel name (KernelNameStats::modules).
struct KernelNameModule {
  std::string module;  // the attribution's module name; empty: launched in no module
  uint64_t count = 0;  // launches
};

struct KernelNameStats {
  StringId name = 0;  // into the store's strings
  uint64_t count = 0;
  uint64_t timed_count = 0;
  uint64_t total_ns = 0;
  uint64_t min_ns = 0;
  uint64_t max_ns = 0;
  double mean_ns() const {
    return timed_count ? static_cast<double>(total_ns) / static_cast<double>(timed_count) : 0.0;
  }
  // The modules whose ops launched kernels of this name (XLA names a kernel after its fusion,
  // so one name is often several modules' kernels), most launches first (ties: by module name,
  // no module last); empty when the kernels' attribution was not given.
  std::vector<KernelNameModule> modules;
};

struct TraceAnalysis {
  Ceilings ceilings;  // the roofline's (AnalysisOptions::ceilings or the table's)
  RegionRows region_rows = RegionRows::kPaths;
  // HLO modules that could not be parsed, one line each ("HLO module 'NAME': why"): their
  // kernels still get op names from XLA's ranges, without costs (hlo.module_unparsed); buffer
  // assignments that could not be read; region records nested too deep.
  Diagnostics warnings;
  RegionPaths region_paths;  // the grouping of every per-path table below
  // Computed once; equal to attribute(store) (its warnings included), but for the per-record
  // lists when AnalysisOptions::keep_record_attribution is false (then empty).
  AttributionResult attribution;
  // Ops in attribution.ops order. Where the op's module has XLA's buffer assignment in the
  // store, working_set_bytes is its on-chip need from it (OpCost::working_set_source).
  OpInputs op_inputs;
  // One per store.hlo_modules entry that has a buffer assignment which parses, in store order.
  std::vector<ModuleMemory> module_memory;
  GpuBusyTime busy;
  TransferReport transfers;
  MemoryReport memory;
  DeviceReport devices;
  // Per devices.devices row: its table ceilings with the overrides of AnalysisOptions::ceilings
  // applied: a measured or user link peak on every row; on the row of the store's first device,
  // also every FLOP/s, DRAM and link value that `ceilings` gives (they describe that device).
  std::vector<Ceilings> device_ceilings;
  // Per TraceStore::devices entry: DeviceInfo::peak_dram_bandwidth_bytes_per_s()
  // (2 x memory clock x bus width / 8), bytes per second; 0 unknown.
  std::vector<double> device_dram_bytes_per_s;
  RooflineReport roofline;  // ops in op_inputs.ops order
  FpgaReport fpga;          // op candidates
  std::vector<FpgaRegionCandidate> fpga_regions;
  // The same rankings on each of AnalysisOptions::other_fpga_targets, in its order.
  struct OtherFpgaTarget {
    FpgaReport ops;
    std::vector<FpgaRegionCandidate> regions;
  };
  std::vector<OtherFpgaTarget> other_fpga;
  std::vector<RegionPathGpuTime> region_path_gpu;  // one per region path, in RegionPaths order
  // Every distinct kernel name, most total time first (ties: by name, byte order).
  std::vector<KernelNameStats> kernels_by_name;
  CollectiveReport collectives;  // NCCL and XLA collective kernels, their overlap with compute
  EnergyReport energy;           // from the NVML power samples (measured false without them)
};

// Runs every analysis on `store` (processed by correlate()). An HLO module that fails to parse
// is a warning, not an error. Throws Error(kInvalidArgument) for an invalid FPGA target.
TraceAnalysis analyze_trace(const TraceStore& store, const AnalysisOptions& options = {});

// The parts of analyze_trace that reports also need alone (each a pure function of the store):
GpuBusyTime gpu_busy_time(const TraceStore& store);
// One entry per path of `paths` (built from `store`; else Error(kInvalidArgument)).
std::vector<RegionPathGpuTime> region_path_gpu_time(const TraceStore& store, const RegionPaths& paths);
// `kernels`: the store's kernels' attribution (AttributionResult::kernels), for each name's
// modules; nullptr or of another length: none.
std::vector<KernelNameStats> kernels_by_name(const TraceStore& store, const AttributionList* kernels = nullptr);

}  // namespace fpgaprof::analysis

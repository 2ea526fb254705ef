// Roofline: arithmetic intensity (FLOP/byte), achieved FLOP/s and bandwidth, percent of the
// applicable roof and the bound (memory | compute | latency) per kernel, per kernel name, per
// HLO op and per user region path or region instance (inclusive; RooflineOptions::region_rows). Static FLOPs/bytes come
// from the HLO cost model (OpCost, supplied by the caller with a kernel -> op mapping); measured ones from
// TraceStore::counters when counters were collected; both are kept when both exist.
// Rules (latency threshold, cost sharing between an op's kernels): docs/roofline.md.
// Pure function; thread-safe for concurrent calls on a store nobody mutates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fpgaprof/analysis/card_work.hpp"
#include "fpgaprof/analysis/ceilings.hpp"
#include "fpgaprof/analysis/region_paths.hpp"
#include "fpgaprof/hlo/hlo_module.hpp"
#include "fpgaprof/trace_store.hpp"

namespace fpgaprof::analysis {

enum class Bound : uint8_t { kUnknown = 0, kMemory = 1, kCompute = 2, kLatency = 3 };
const char* bound_name(Bound b);

// What an op without a cost (it stays on the GPU) hands to and takes from its module's ops with
// one (the card's), per execution (op_inputs.hpp, module_handoff): the bytes and arrays of its
// operands they compute and of its results they read; with the module's arguments and results
// on the card as well (a region's data on the card), in a module with ops on the card, also the
// arguments it reads and the results it gives the module's caller (`resident_*`).
struct Handoff {
  double bytes = 0;
  double arrays = 0;
  double resident_bytes = 0;
  double resident_arrays = 0;
};

// Static cost of one execution of an HLO op (fusion, custom call, ...), from the cost model.
struct OpCost {
  std::string name;    // instruction name
  std::string module;  // HLO module name
  double flops = 0;
  double bytes_read = 0;
  double bytes_written = 0;
  // What one execution needs on chip: "xla buffer assignment" (module_memory.hpp onchip_need:
  // its operands, results and the temporaries of what it calls, as XLA assigned them) where the
  // trace has the module's buffer assignment, else "cost model" (the largest live intermediate
  // the static cost model finds, or the bytes it writes).
  double working_set_bytes = 0;
  std::string working_set_source = "cost model";
  // Its parts with the buffer assignment (0 otherwise): operands, results, temporaries.
  double onchip_input_bytes = 0, onchip_output_bytes = 0, onchip_temporary_bytes = 0;
  hlo::AccessPattern pattern = hlo::AccessPattern::kUnknown;
  Precision precision = Precision::kFp32;
  bool cost_known = true;           // false: custom call without a cost rule, or no HLO
  bool cost_from_author = false;    // a custom kernel's own figures (its metadata), not a rule
  std::string cost_unknown_reason;  // why cost_known is false ("custom call 'x' has no cost rule")
  // Times the op ran in the trace; 0: derived (distinct NVTX thunk ranges among its kernels,
  // else its kernel count).
  uint64_t executions = 0;
  // The op's module: index into TraceStore::hlo_modules (kNone32 unknown) and the bytes one
  // call of it takes in and gives back (entry parameters + entry root; 0 unknown). Used by the
  // region what-if (rank_fpga_regions), where data crosses the host link at module calls.
  uint32_t module_index = kNone32;
  double module_io_bytes = 0;
  double module_io_buffers = 0;  // entry parameters + root arrays (0 unknown)
  bool in_entry = false;         // an op of its module's entry computation (runs once a call)
  // The entry parameters one call reads again after an op summarized them (module_reread_bytes):
  // a region's dataflow design adds those larger than its on-chip room to its io.
  std::vector<double> module_reread_bytes;
  // Without a cost (kept on the GPU), what one execution hands to and takes from its module's
  // ops with one: over the host link when those run on the card.
  Handoff handoff;
  // What one execution asks of an FPGA card (card_work.hpp), from the op's HLO instruction;
  // work.known false when the HLO was not at hand (the FPGA model then streams bytes()).
  CardWork work;
  double bytes() const { return bytes_read + bytes_written; }
};

struct RooflineOptions {
  uint64_t latency_kernel_ns = 5000;            // mean kernel duration below this: latency-bound
  double tiny_grid_fraction = 0.5;              // grid with fewer blocks than this x SMs ...
  double tiny_grid_percent = 10.0;              // ... and under this % of its roof: latency-bound
  bool per_kernel = false;                      // fill RooflineReport::kernels (one entry per kernel)
  RegionRows region_rows = RegionRows::kPaths;  // fill region_paths or regions
  // The store's region paths when the caller has them (not owned; built from the same store);
  // nullptr: built here when region_rows is kPaths.
  const RegionPaths* region_paths = nullptr;
};

struct RooflinePoint {
  uint64_t kernel_count = 0;
  uint64_t executions = 0;
  uint64_t time_ns = 0;      // sum of kernel durations
  uint64_t mean_blocks = 0;  // mean grid size (blocks) of its kernels
  double flops = 0;          // static, whole trace
  double bytes = 0;          // static, whole trace
  double cost_coverage = 0;  // share of time_ns spent in kernels with a known cost
  // Kernels of ops without a static cost (a custom call without a rule): the bytes their
  // operands and results alone take (a lower bound; FLOPs unknown) and the rate that gives over
  // those kernels' time (a lower bound of the bandwidth they reached). 0 when none.
  double lower_bound_bytes = 0;
  double lower_bound_bytes_per_s = 0;
  double intensity = 0;  // FLOP/byte (static)
  double achieved_flops_per_s = 0;
  double achieved_bytes_per_s = 0;
  Precision precision = Precision::kFp32;  // roof used (after Ceilings::effective_precision)
  double roof_flops_per_s = 0;             // min(peak FLOP/s, intensity x DRAM bandwidth)
  double ridge_flops_per_byte = 0;
  double percent_of_roof = 0;  // achieved / roof (bandwidth / DRAM peak when flops = 0)
  Bound bound = Bound::kUnknown;
  // Hardware counters (TraceStore::counters). They may cover only some of the point's kernels
  // (kernels past the counter image or in a paused stretch have none): the measured_* values
  // are over the covered kernels only, so the measured rates and percent are theirs and
  // measured_coverage says how much of the point they stand for.
  bool has_measured = false;           // counters covered at least one of these kernels
  uint64_t measured_kernel_count = 0;  // kernels with counters
  uint64_t measured_time_ns = 0;       // sum of their durations (kernel records)
  double measured_coverage = 0;        // measured_time_ns / time_ns (0..1)
  double measured_flops = 0;           // of the covered kernels
  double measured_bytes = 0;           // DRAM read + write of the covered kernels
  double measured_intensity = 0;
  double measured_percent_of_roof = 0;     // rate over measured_time_ns against the roof
  Bound measured_bound = Bound::kUnknown;  // from the covered kernels' sums, mean duration and grid
  // Kernels that have a duration (a counter replay can leave some with start = end = 0: their
  // 0 ns is no duration, so the mean leaves them out, as the rates leave out their cost).
  // 0 when the point was built without counting them: the mean is then over kernel_count.
  uint64_t timed_kernel_count = 0;
  double mean_kernel_ns() const {
    const uint64_t n = timed_kernel_count ? timed_kernel_count : kernel_count;
    return n ? static_cast<double>(time_ns) / static_cast<double>(n) : 0.0;
  }
};

// Compact per-kernel result (RooflineOptions::per_kernel), 24 bytes.
struct KernelRoofline {
  float flops = 0;
  float bytes = 0;
  float achieved_flops_per_s = 0;
  float achieved_bytes_per_s = 0;
  float percent_of_roof = 0;
  Bound bound = Bound::kUnknown;
  Precision precision = Precision::kFp32;
};

struct RooflineReport {
  Ceilings ceilings;
  RooflinePoint trace;             // every kernel
  std::vector<RooflinePoint> ops;  // one per OpCost, same order
  // RegionRows::kInstances: one per TraceStore::regions entry (inclusive); kPaths: empty.
  std::vector<RooflinePoint> regions;
  // RegionRows::kPaths: one per region path in RegionPaths order (inclusive, every instance's
  // kernels summed, bound from the sums like any point); kInstances: empty.
  std::vector<RooflinePoint> region_paths;
  std::vector<StringId> kernel_names;         // distinct kernel names, by time descending ...
  std::vector<RooflinePoint> by_kernel_name;  // ... and their points
  std::vector<KernelRoofline> kernels;        // per kernel when requested
  uint64_t unattributed_kernels = 0;          // kernels with no op (time counted, cost unknown)
  uint64_t unattributed_ns = 0;
};

// Measured per-kernel values decoded from TraceStore::counters (FP32 FLOPs = fadd + fmul +
// 2 ffma, likewise fp64/fp16; DRAM bytes = read + write). Kernels without counters: has = false.
struct MeasuredKernel {
  bool has = false;
  double flops = 0;
  double dram_bytes = 0;
  double duration_ns = 0;  // gpu__time_duration.sum when collected
};
std::vector<MeasuredKernel> measured_kernels(const TraceStore& store);

// `op_of_kernel`: empty (nothing attributed) or one op index (or kNone32) per kernel.
// Throws Error(kInvalidArgument) on a mapping of the wrong size, an op index out of range or
// options.region_paths built from another store.
RooflineReport analyze_roofline(const TraceStore& store, const Ceilings& ceilings, const std::vector<OpCost>& ops,
                                const std::vector<uint32_t>& op_of_kernel, const RooflineOptions& options = {});

// Where an op's FLOPs and bytes come from: "author" (a custom kernel's own figures), "static"
// (the cost rules), "measured" (no rule; the counters measured its kernels: `point`'s measured_*
// values), else "lower bound" (its operands and results only; FLOPs unknown).
const char* cost_basis_name(const OpCost& op, const RooflinePoint& point);

// Bound of one point under `ceilings` (used by analyze_roofline; exposed for tests).
Bound classify(const RooflinePoint& p, const Ceilings& ceilings, uint32_t sm_count, const RooflineOptions& options);

}  // namespace fpgaprof::analysis

// FPGA offload model: ranks HLO ops by a documented score and estimates, for one FPGA card,
// each op's time on the card (card roofline), the cost of moving its inputs/outputs over the
// host link, and the end-to-end speedup of the traced workload (Amdahl). Formulas, presets and
// worked examples (cases A-D): docs/fpga-model.md. Pure functions; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "fpgaprof/analysis/ceilings.hpp"
#include "fpgaprof/analysis/region_paths.hpp"
#include "fpgaprof/analysis/roofline.hpp"

namespace fpgaprof::analysis {

// One FPGA card. Compute rate per precision = dsp_count x dsp_utilization / dsps_per_fma x 2 x
// clock_hz; memory = hbm_bytes_per_s x hbm_efficiency for streamed bytes, hbm_bytes_per_s x
// random_access_efficiency for the bytes of ops whose pattern is random (is_random_access);
// link = link_bytes_per_s x link_efficiency. A default-constructed target is not valid (no
// bandwidths): start from a preset or fill every rate; validate_fpga_target states the rules.
struct FpgaTarget {
  std::string name;                      // "alveo-u55c"
  std::string description;
  double hbm_bytes_per_s = 0;            // datasheet peak of the card's HBM
  double hbm_efficiency = 0.85;          // share of the peak a streaming kernel sustains
  // Share of the peak that element-granular random accesses (gather/scatter) get: each access
  // moves a whole 32-byte HBM burst for one element and mostly misses the open DRAM row.
  // Derivation from published measurements: docs/fpga-model.md, "Random access".
  // = hbm_efficiency gives the single-efficiency model of earlier versions.
  double random_access_efficiency = 0.16;
  double sram_bytes = 0;                 // on-chip BRAM + URAM
  uint32_t dsp_count = 0;
  double clock_hz = 300e6;               // kernel clock
  double dsp_utilization = 0.7;          // share of DSPs a real design can use
  double dsps_per_fma_fp64 = 0;          // DSP slices one pipelined FMA of that type needs
  double dsps_per_fma_fp32 = 0;
  double dsps_per_fma_fp16 = 0;
  // Sustained FLOP/s per precision when known (a vendor figure, an HLS report, a measurement):
  // > 0 replaces the DSP estimate of that precision; 0 (default) derives it from the DSPs.
  double fp64_flops_per_s = 0;
  double fp32_flops_per_s = 0;
  double fp16_flops_per_s = 0;
  double link_bytes_per_s = 0;           // host link peak, one direction
  double link_efficiency = 0.8;
  double call_latency_s = 10e-6;         // host -> card kernel start per op execution
  double transfer_latency_s = 5e-6;      // per DMA transfer (one in, one out per execution)

  // Peak FLOP/s the card sustains for `p` (tensor precisions map to their element type:
  // fp64_tensor -> fp64, tf32_tensor -> fp32, fp16/fp8_tensor -> fp16): the given
  // <type>_flops_per_s when > 0, else dsp_count x dsp_utilization / dsps_per_fma x 2 x clock_hz.
  // 0 if unsupported.
  double flops_per_s(Precision p) const;
  // True when some precision takes its rate from the DSP fields (no FLOP/s given for it).
  bool uses_dsp_model() const;
  double memory_bytes_per_s() const { return hbm_bytes_per_s * hbm_efficiency; }
  // The share of the peak an op of pattern `p` gets: random_access_efficiency for
  // is_random_access(p), else hbm_efficiency.
  double memory_efficiency(hlo::AccessPattern p) const;
  double memory_bytes_per_s(hlo::AccessPattern p) const { return hbm_bytes_per_s * memory_efficiency(p); }
  double host_link_bytes_per_s() const { return link_bytes_per_s * link_efficiency; }
};

// True for the patterns whose device-memory traffic is element-granular and random on a card:
// gather/scatter only. Sort (merge passes stream) and data movement (transposes go through
// on-chip tiles in full bursts) keep hbm_efficiency; docs/fpga-model.md gives the reasons.
bool is_random_access(hlo::AccessPattern p);

// Presets: "alveo-u55c", "alveo-u280", "versal-v80" (figures and sources in docs/fpga-model.md).
const std::vector<FpgaTarget>& fpga_presets();
// Throws Error(kInvalidArgument) naming the presets when `name` is unknown.
const FpgaTarget& fpga_preset(const std::string& name);
// The presets' names, comma-separated ("alveo-u55c, alveo-u280, versal-v80").
std::string fpga_preset_names();

// Throws Error(kInvalidArgument) naming the first bad field and the fix when `t` cannot be
// modelled: a non-empty name; hbm_bytes_per_s, sram_bytes and link_bytes_per_s positive and
// finite; hbm_efficiency, random_access_efficiency and link_efficiency in (0, 1];
// dsps_per_fma_* and *_flops_per_s finite and >= 0 (both 0: the card does not run that
// precision), at least one precision with a rate; dsp_count, clock_hz (positive) and
// dsp_utilization (0, 1] only when uses_dsp_model(); call_latency_s and transfer_latency_s
// finite and >= 0.
void validate_fpga_target(const FpgaTarget& t);

struct FpgaOptions {
  // true: each execution's inputs and outputs cross the host link (the rest of the program
  // stays on the GPU); false: data already lives on the card.
  bool inputs_cross_link = true;
  double gpu_link_bytes_per_s = 0;       // the GPU's host link (one direction), 0 unknown
  double workload_ns = 0;                // end-to-end time of the traced workload; 0: trace span
  double min_time_share = 0.0;           // drop ops below this share of GPU time from the table
  // rank_fpga_regions: the store's region paths when the caller already has them (not owned;
  // must be built from the same store); nullptr: built there.
  const RegionPaths* region_paths = nullptr;
};

// One candidate with every input of its score and every intermediate of its what-if.
// Ops whose static cost is unknown (OpCost::cost_known false: a custom call without a cost rule,
// or HLO that was not captured) get no estimate: every field derived from FLOPs or bytes (flops,
// bytes, intensity, memory_boundness, working set and on-chip factor, link_factor, score and the
// whole what-if) is NaN, `estimate_note` says why, and they rank after every scored op.
struct FpgaCandidate {
  uint32_t op_index = 0;
  std::string name;
  std::string module;
  hlo::AccessPattern pattern = hlo::AccessPattern::kUnknown;
  Precision precision = Precision::kFp32;
  uint64_t executions = 0;
  uint64_t kernel_count = 0;
  bool cost_known = true;                // OpCost::cost_known
  std::string estimate_note;             // empty, or why the score / what-if is not estimated
  // score inputs
  double gpu_time_ns = 0;
  double time_share = 0;                 // gpu_time / all kernels' time
  double intensity = 0;                  // FLOP/byte (static)
  double ridge = 0;                      // GPU ridge point for its precision
  double memory_boundness = 0;           // clamp(1 - intensity / ridge, 0, 1); 0.5 if ridge unknown
  double pattern_affinity = 0;           // table in docs/fpga-model.md
  double working_set_bytes = 0;
  double sram_bytes = 0;                 // the card's on-chip memory
  bool fits_on_chip = false;
  double onchip_factor = 0;              // 1 if it fits, else 0.5 + 0.5 x sram / working set
  double host_bytes_per_call = 0;        // HtoD + DtoH bytes the op already moves per execution
  // gpu_time / (gpu_time + transfer_s), 1 when nothing crosses the link: what the host link
  // costs against what the op costs on the GPU today. Independent of the card's compute and
  // memory model, so a slower card never raises it (nor the score); more bytes lower it.
  double link_factor = 0;
  double score = 0;                      // time_share x (0.25 + 0.75 boundness) x affinity x onchip x link
  // what-if on the card (whole trace, seconds)
  double flops = 0, bytes = 0;           // whole trace
  double memory_efficiency = 0;          // share of hbm_bytes_per_s its bytes get (by pattern)
  double card_compute_s = 0, card_memory_s = 0, card_latency_s = 0, card_time_s = 0;
  double transfer_bytes = 0, transfer_s = 0;
  double fpga_total_s = 0;               // card_time + transfer
  double op_speedup = 0;                 // gpu_time / fpga_total
  double workload_speedup = 0;           // Amdahl: T / (T - min(gpu_time, T) + fpga_total)
};

struct FpgaReport {
  FpgaTarget target;
  std::vector<FpgaCandidate> candidates; // ranked by score, best first; not estimated ones last
  double workload_ns = 0;
  double gpu_kernel_ns = 0;
  // Every estimated candidate with op_speedup > 1 offloaded together (their savings add).
  double combined_speedup = 1.0;
  uint32_t combined_count = 0;
  // Candidates without an estimate (unknown static cost) and their GPU time: not in the
  // combined speedup, which therefore covers only the rest of the GPU time.
  uint32_t not_estimated_count = 0;
  double not_estimated_gpu_ns = 0;
};

// A user region (fpgaprof.region) as an offload unit: every instance of one region path
// ("outer > inner", inclusive of nested regions) moved to the card together. Its ops run on
// the card one after another, each at the card's roofline; data crosses the host link at the
// jitted calls (HLO module executions) inside it: each call's parameters in, its results out.
// Kernels of ops without a static cost (or without an op, or in a precision the card cannot
// run) are not modelled: they are assumed to take their GPU time on the card, and
// `estimated_share` says how much of the region that is. docs/fpga-model.md, "Regions".
struct FpgaRegionCandidate {
  std::string path;                      // region names from the outermost, joined by " > "
  std::string name;                      // the innermost name
  uint32_t depth = 0;                    // 0: outermost
  uint64_t instances = 0;                // region records with this path
  uint64_t kernel_count = 0;             // kernels launched inside (nested regions included)
  uint32_t op_count = 0;                 // distinct HLO ops among them
  std::string top_op;                    // the op with the most GPU time inside ("" none)
  bool estimated = false;                // at least one op inside can be modelled on the card
  std::string estimate_note;             // empty, or what is not estimated and why
  // score inputs
  double gpu_time_ns = 0;
  double time_share = 0;                 // gpu_time / all kernels' time
  double estimated_share = 0;            // share of gpu_time in ops the model can put on the card
  double intensity = 0;                  // estimated ops' FLOPs / bytes
  double memory_boundness = 0;           // estimated ops' memory_boundness, GPU-time weighted
  double pattern_affinity = 0;           // estimated ops' pattern_affinity, GPU-time weighted
  double working_set_bytes = 0;          // the largest working set among its estimated ops
  double sram_bytes = 0;
  bool fits_on_chip = false;
  double onchip_factor = 0;
  double host_bytes_per_instance = 0;    // HtoD + DtoH bytes copied inside, per instance (shown)
  double link_factor = 0;                // gpu_time / (gpu_time + transfer_s); 1 without transfer
  double score = 0;                      // time_share x estimated_share x (0.25 + 0.75 boundness)
                                         //   x affinity x onchip x link
  // what-if (whole trace, seconds)
  double module_calls = 0;               // jitted calls inside (card invocations)
  bool module_calls_counted = false;     // true: counted from XlaModule ranges; false: estimated
  double flops = 0, bytes = 0;           // estimated ops, whole trace
  double card_compute_s = 0;             // sum over estimated ops
  double card_memory_s = 0;              // sum over estimated ops
  double random_access_bytes = 0;        // estimated ops' bytes at random_access_efficiency
  double memory_efficiency = 0;          // bytes / (card_memory_s x hbm_bytes_per_s): the
                                         //   efficiencies of its ops, weighted by their bytes
  double card_latency_s = 0;             // module_calls x call latency
  double kept_gpu_s = 0;                 // GPU time of the kernels not estimated (kept as is)
  double card_time_s = 0;                // sum of per-op max(compute, memory) + latency + kept
  double transfer_bytes = 0;             // module_calls x module parameters + results
  double transfer_s = 0;
  double fpga_total_s = 0;
  double region_speedup = 0;             // gpu_time / fpga_total
  double workload_speedup = 0;           // Amdahl over the traced workload (GPU time counted up to T)
};

// Pattern affinity used in the score (documented table).
double pattern_affinity(hlo::AccessPattern p);

// `ops` and `roofline` as given to / returned by analyze_roofline (same order);
// `host_bytes_per_op`: empty or, per op, HtoD+DtoH bytes attributed to it over the trace.
// Throws Error(kInvalidArgument) on mismatched sizes or a target validate_fpga_target rejects.
FpgaReport rank_fpga_candidates(const std::vector<OpCost>& ops, const RooflineReport& roofline,
                                const FpgaTarget& target, const FpgaOptions& options,
                                const std::vector<double>& host_bytes_per_op = {});

// Every region path with kernels inside, ranked like the ops (scored by score; regions without
// any estimated op (estimated false: every derived field NaN) after them by GPU time). Region
// paths are keyed by (enclosing path, name); a name containing " > " is shown in quotes. Nested paths
// are ranked side by side, so their savings overlap and are not added up. `ops`, `roofline`
// and `op_of_kernel` as given to analyze_roofline; options.min_time_share applies. Paths are
// RegionPaths' (options.region_paths when given). Throws Error(kInvalidArgument) on mismatched
// sizes (a region_paths of another store included) or an invalid target.
std::vector<FpgaRegionCandidate> rank_fpga_regions(const TraceStore& store, const std::vector<OpCost>& ops,
                                                   const std::vector<uint32_t>& op_of_kernel,
                                                   const RooflineReport& roofline, const FpgaTarget& target,
                                                   const FpgaOptions& options);

}  // namespace fpgaprof::analysis

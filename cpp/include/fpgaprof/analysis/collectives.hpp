#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fpgaprof/trace_store.hpp"

namespace fpgaprof::analysis {

// The collective a kernel runs, from its name (NCCL's "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
// "ncclKernel_AllGather_RING_LL_Sum_int8_t") or, failing that, from the HLO op it is attributed
// to (XLA's collectives: "all-reduce.3", "all-gather-start.1", "reduce-scatter",
// "collective-permute-done.2", "all-to-all"). Returns the XLA opcode ("all-reduce",
// "all-gather", "reduce-scatter", "collective-permute", "all-to-all", "collective-broadcast")
// or "send-recv" / "nccl" for NCCL kernels of another or unknown kind; "" when it is no collective.
std::string_view collective_kind(std::string_view kernel_name, std::string_view op_name);

struct CollectiveKindStats {
  std::string kind;  // collective_kind()
  uint64_t count = 0;
  uint64_t total_ns = 0;  // sum of durations
};

// Collective kernels of one trace and their overlap with the other kernels (compute), all
// devices together. Durations are end - start (0 when end <= start).
struct CollectiveReport {
  uint64_t kernel_count = 0;                 // collective kernels
  uint64_t kernel_ns = 0;                    // their summed durations
  uint64_t busy_ns = 0;                      // union of their intervals
  uint64_t compute_busy_ns = 0;              // union of the other kernels' intervals
  uint64_t overlap_ns = 0;                   // time covered by both unions (communication hidden by compute)
  std::vector<CollectiveKindStats> by_kind;  // most total time first (ties by kind)
  // End times of the first collective kernels in start order (at most first_ends_kept, ties by
  // end): the anchors the clock alignment of a job's hosts uses (docs/reports.md).
  std::vector<uint64_t> first_end_ns;
};

// `op_of_kernel[i]`: index into `op_names` of store.kernels[i]'s HLO op (kNone32 none); either
// may be empty (no attribution: kernel names only).
CollectiveReport analyze_collectives(const TraceStore& store, const std::vector<uint32_t>& op_of_kernel,
                                     const std::vector<std::string_view>& op_names, std::size_t first_ends_kept = 64);

}  // namespace fpgaprof::analysis

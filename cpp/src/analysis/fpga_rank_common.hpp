// Internal to the FPGA model's source files (fpga_ranking.cpp, fpga_regions.cpp): the pieces the
// op and region rankings share. Not part of the public API (fpga_model.hpp).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "fpgaprof/analysis/fpga_model.hpp"

namespace fpgaprof::analysis::fpga_detail {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The ranking: what offloading could change first, then GPU time, then score (NaN: lowest).
bool ranks_before(double save_a, double gpu_a, double score_a, double save_b, double gpu_b, double score_b);
// clamp(1 - intensity / ridge, 0, 1); 0.5 when the ridge is unknown.
double memory_boundness(double intensity, double ridge);
// Amdahl: the workload's time T with the GPU time replaced by the card's. Kernels on several
// streams can sum to more than T; at most T of the workload can be saved.
double amdahl_speedup(double total_s, double gpu_s, double fpga_total_s);
// Throws Error(kInvalidArgument) unless `roofline` has one row per op.
void require_same_ops(const std::vector<OpCost>& ops, const RooflineReport& roofline);
// 1 when the working set fits on chip, else 0.5 + 0.5 x sram / working set.
double onchip_factor(double working_set_bytes, double sram_bytes);
// The host link's cost against what the op (or region) costs on the GPU today. It must not use
// the card's time: card_time / (card_time + transfer) grew when the card got slower.
double link_factor(double gpu_s, double transfer_s);
// What one execution of an op asks of the card: from its HLO when the trace has it, else from
// the cost totals (every byte streamed).
CardWork work_of(const OpCost& op);
double safe_ratio(double a, double b);
// The fields of a row that have no value when it is not estimated.
std::vector<double*> not_estimated_fields(FpgaCandidate& c);
std::vector<double*> not_estimated_fields(FpgaRegionCandidate& c);
void set_nan(const std::vector<double*>& fields);
// The note of a row whose kernels have no GPU time.
std::string no_gpu_time_note(uint64_t kernels);

}  // namespace fpgaprof::analysis::fpga_detail

// Energy analysis: joules, mean and peak watts per device, per region path and per region
// instance, idle watts per device, and an attribution of the energy to HLO ops, from the NVML
// power samples of a trace (TraceStore::power_samples; docs/energy.md).
//
// Per device the samples give a cumulative energy curve C(t), in joules:
//   - from the total-energy counter where the device has one: linear between the readings at
//     which the counter changed (the counter moves in steps of its update period; between two
//     steps it is interpolated, so a region boundary between samples gets its share);
//   - from the power readings where it has none, where it never changed while it was read (a
//     trace shorter than its update period, or a stuck counter: flat_counter), and for an
//     interval in which the counter went
//     backwards (a driver reload or a wrap): the power of a reading holds until the next one
//     (the sampler keeps a reading only when a value changed), so the interval's energy is
//     that power times its length.
// Energy in [a, b] = C(b) - C(a), with [a, b] clipped to the sampled span (coverage_ns says how
// much of it was sampled). Mean watts = joules / covered seconds; peak watts = the highest power
// reading in force during [a, b].
//
// Idle watts: the median over time of the power in force while nothing runs on the device (no
// kernel, copy or memset; a copy counts on its device_id), weighted by that idle time. Only the
// intervals that start at a reading with a power value count: where the power reads failed, or
// stopped after repeated failures (no_power_ns), nothing says what the idle power was, so
// idle_w rests on the rest of the readings, and idle_ns says how much idle time that is.
//
// Op attribution (labelled an attribution, not a measurement): each interval between two
// consecutive knots of C(t) splits its energy by time. The share of the interval in which the
// device was busy (union of kernels, copies, memsets) goes to the activities running in it, in
// proportion to each one's time inside the interval (overlapping activities share); a kernel's
// part goes to its HLO op (OpInputs::op_of_kernel), a kernel without an op to `unattributed`, a
// copy or memset to `copies`. The rest of the interval (not busy) is `idle_joules`. Every
// interval's energy is so divided completely: ops + unattributed + copies + idle = total.
// A kernel's part is also summed per (region path, op) (path_op_kernels).
//
// Pure function of its inputs; thread-safe on a store nobody mutates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fpgaprof/analysis/region_paths.hpp"
#include "fpgaprof/trace_store.hpp"

namespace fpgaprof::analysis {

// Energy over one time window on one device. A window with no sampled time (coverage_ns 0:
// it lies outside the device's sampled span) measured nothing: its joules, mean_w and peak_w
// are 0 here and null in the analysis result (result_schema), never a measured 0 J.
struct EnergyWindow {
  uint32_t device_id = 0;
  double joules = 0;
  double mean_w = 0;         // joules / covered seconds; 0 when nothing covered (unknown)
  double peak_w = 0;         // highest power reading in force in the window; 0 unknown
  uint64_t duration_ns = 0;  // the window (summed over instances for a path)
  uint64_t coverage_ns = 0;  // the part of it within the device's sampled span
  bool from_counter = true;  // false: some of it integrates power readings (no counter, or a bad interval)
};

struct DeviceEnergy {
  uint32_t device_id = 0;
  uint64_t samples = 0;   // power sample records of the device
  uint64_t first_ns = 0;  // sampled span
  uint64_t last_ns = 0;
  double joules = 0;                 // over the sampled span (0 and unknown when the span is empty)
  double mean_w = 0;                 // joules / span
  double peak_w = 0;                 // highest power reading; 0 unknown: none, or the sampler stopped reading power
  double idle_w = -1;                // median idle power (see above); -1 unknown (never idle, or no power readings)
  uint64_t idle_ns = 0;              // idle time (nothing running on the device) outside no_power_ns: idle_w's basis
  uint64_t no_power_ns = 0;          // time from a reading without power to the next (NVML's power read failed)
  bool has_counter = false;          // the device has total-energy readings
  bool flat_counter = false;         // ... that never changed while read: energy from the power readings
  uint64_t backwards_intervals = 0;  // counter went backwards: those intervals integrate power
};

// The energy of one HLO op (op index into OpInputs::ops / AttributionResult::ops).
struct OpEnergy {
  uint32_t op = 0;
  double joules = 0;
  uint64_t busy_ns = 0;  // the op's kernel time within sampled intervals (overlaps counted per kernel)
};

// The attributed energy of the kernels of one HLO op (kNone32: kernels without an op) launched
// in one region path (the innermost path a kernel ran in; a consumer adds each row to the path's
// ancestors, as the FPGA region rows count kernels): the same attribution as OpEnergy, so a
// region's kernels weigh what its ops weigh; unlike the path's measured window (region_paths)
// it leaves out idle gaps, host work and GPUs that ran none of its kernels.
struct PathOpEnergy {
  uint32_t path = 0;  // RegionPaths id
  uint32_t op = 0;    // op index; kNone32 for kernels without an op
  double joules = 0;
  uint64_t busy_ns = 0;  // the kernels' time within sampled intervals (overlaps counted per kernel)
};

struct EnergyReport {
  bool measured = false;              // the trace has power samples of at least one of its devices
  uint64_t sample_period_ns = 0;      // TraceMeta::power_sample_period_ns
  uint64_t update_period_ns = 0;      // TraceMeta::energy_update_period_ns
  std::vector<DeviceEnergy> devices;  // one per device with samples, by device id
  double total_joules = 0;            // sum of devices[].joules
  // One row per (region path, device with samples), paths in RegionPaths order: the instances
  // summed (joules, duration, coverage; mean = joules / coverage; peak = the highest).
  std::vector<std::pair<uint32_t, EnergyWindow>> region_paths;
  // One row per (region record, device with samples), records in TraceStore::regions order.
  std::vector<std::pair<uint32_t, EnergyWindow>> regions;
  std::vector<PathOpEnergy> path_op_kernels;  // by (innermost path, op), both ascending
  std::vector<OpEnergy> ops;                  // ops with energy, most joules first (ties: op index)
  double unattributed_joules = 0;             // kernels without an HLO op
  double copies_joules = 0;                   // copies and memsets
  double idle_joules = 0;                     // the not-busy part of each interval
};

// op_of_kernel: per TraceStore::kernels entry, its op index (kNone32 none); may be empty (every
// kernel unattributed).
EnergyReport analyze_energy(const TraceStore& store, const RegionPaths& paths,
                            const std::vector<uint32_t>& op_of_kernel);

}  // namespace fpgaprof::analysis

// The round-figure FPGA card of the FPGA model tests (docs/fpga-model-cases.md, "The round
// card"): every calibrated constant has round ends, so each expected number can be worked out
// by hand from the formulas. Derived rates at the three corners (fast / nominal / slow):
//
//   fp32 FLOP/s      = 1000 DSP x dsp_utilization / 1 DSP per FMA x 2 x clock
//                    = 1000 x 1.0 x 2 x 400e6 = 800e9  /  1000 x 0.5 x 2 x 200e6 = 200e9  /
//                      1000 x 0.25 x 2 x 100e6 = 50e9      (no fp64: dsps_per_fma_fp64 = 0)
//   streaming B/s    = 4 channels x channel_share x 10e9 x stream_efficiency
//                    = 4 x 1 x 10e9 x 1 = 40e9  /  4 x 0.5 x 10e9 x 0.8 = 16e9  /  4 x 0.25 x 10e9 x 0.5 = 5e9
//   one channel B/s  = 10e9 x stream_efficiency = 10e9 / 8e9 / 5e9
//   on-chip room     = onchip_share x 4,608,000 B = 4,608,000 / 2,304,000 / 1,152,000
//                      (4,608,000 B = 1000 BRAM36 blocks of 36 x 1024 / 8 = 4608 B)
//   host link B/s    = 10e9 x link_efficiency = 10e9 / 8e9 / 5e9
//   channel capacity = 4e9 B / 4 channels = 1e9 B
#pragma once

#include "fpgaprof/analysis/fpga_model.hpp"

namespace fpgaprof::testing {

inline analysis::FpgaTarget round_card() {
  analysis::FpgaTarget t;
  t.name = "round";
  t.description = "round-figure test card";
  t.memory_type = "hbm2";
  t.memory_channels = 4;
  t.memory_channel_bytes_per_s = 10e9;
  t.memory_capacity_bytes = 4e9;
  t.sram_bytes = 4608000;
  t.dsp_count = 1000;
  t.dsps_per_fma_fp64 = 0;  // no fp64
  t.dsps_per_fma_fp32 = 1;
  t.dsps_per_fma_fp16 = 1;
  t.link_bytes_per_s = 10e9;
  t.random_granule_bytes = 32;
  // Calibrated {nominal, low, high}
  t.clock_hz = {200e6, 100e6, 400e6};
  t.dsp_utilization = {0.5, 0.25, 1.0};
  t.stream_efficiency = {0.8, 0.5, 1.0};
  t.channel_share = {0.5, 0.25, 1.0};
  t.random_reads_per_s = {100e6, 50e6, 200e6};
  t.rmw_updates_per_s = {10e6, 5e6, 20e6};
  t.cross_channel_factor = {0.5, 0.25, 1.0};
  t.onchip_share = {0.5, 0.25, 1.0};
  t.onchip_lanes = {16, 8, 32};
  t.sort_bytes_per_s = {1e9, 0.5e9, 2e9};
  t.link_efficiency = {0.8, 0.5, 1.0};
  t.transfer_latency_s = {10e-6, 5e-6, 20e-6};
  t.call_latency_s = {20e-6, 10e-6, 40e-6};
  t.loaded_w = {50, 25, 100};  // card energy = card time x {50, 25, 100} W
  return t;
}

// The round card with 64 channels (capacity 64e9 B, still 1e9 B per channel): streaming
// 64 x 1 x 10e9 x 1 = 640e9 / 64 x 0.5 x 10e9 x 0.8 = 256e9 / 64 x 0.25 x 10e9 x 0.5 = 80e9 B/s.
inline analysis::FpgaTarget wide_round_card() {
  analysis::FpgaTarget t = round_card();
  t.name = "round-64";
  t.memory_channels = 64;
  t.memory_capacity_bytes = 64e9;
  return t;
}

}  // namespace fpgaprof::testing

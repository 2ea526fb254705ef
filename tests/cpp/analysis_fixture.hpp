// Building blocks shared by the analysis tests: the fictional GPU their hand-worked numbers use
// and a kernel-record builder.
#pragma once

#include <cstdint>

#include "fpgaprof/records.hpp"
#include "fpgaprof/trace_store.hpp"

namespace fpgaprof::testing {

// A fictional sm_80 device: 100 SMs at 1 GHz, 1 GHz memory clock on a 4096-bit bus.
//   fp32 = 100 x 128 x 1e9 = 12.8e12 FLOP/s; tf32 tensor = 100 x 1024 x 1e9 = 102.4e12;
//   DRAM = 2 x 1e9 x 4096 / 8 = 1.024e12 B/s; ridge fp32 = 12.5, tf32 = 100 FLOP/B.
inline DeviceInfo sm80_device() {
  DeviceInfo d;
  d.compute_capability_major = 8;
  d.sm_count = 100;
  d.core_clock_khz = 1000000;
  d.memory_clock_khz = 1000000;
  d.memory_bus_width_bits = 4096;
  return d;
}

// A kernel of `blocks` x 1 x 1 thread blocks (its launch configuration interned in `store`).
inline KernelRecord kernel(TraceStore& store, uint64_t s, uint64_t ns, uint32_t marker, uint32_t region,
                           uint32_t blocks, StringId name) {
  KernelRecord k;
  k.start_ns = s;
  k.end_ns = s + ns;
  k.marker_index = marker;
  k.region_index = region;
  LaunchConfig c;
  c.grid_x = blocks;
  c.grid_y = 1;
  c.grid_z = 1;
  k.launch_config = store.intern_launch_config(c);
  k.name = name;
  return k;
}

}  // namespace fpgaprof::testing

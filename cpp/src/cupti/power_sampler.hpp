// PowerSampler: reads every GPU's power (nvmlDeviceGetPowerUsage, mW) and total-energy counter
// (nvmlDeviceGetTotalEnergyConsumption, mJ, Volta and later) through NVML at a fixed period on a
// thread of its own while a CaptureSession runs (docs/capture.md, "GPU power and energy").
// Nothing here can fail a trace: when NVML is missing, too old or refuses, a read fails, a counter
// goes backwards or the thread itself fails (out of memory), the trace goes on without those
// samples (or with the bad interval marked by the counter itself) and one warning names the cause.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fpgaprof/trace_store.hpp"

namespace fpgaprof::cupti {

class PowerSampler {
 public:
  // Loads NVML and starts the sampling thread, which initializes NVML and finds the devices
  // itself (nvmlInit_v2 can be slow: the caller never waits for it; its failures are in
  // finish()'s warning); never throws. period_ns: time between two readings of each device (the
  // thread skips ticks it is late for, never bursts).
  // cuda_uuids: the UUIDs of the devices the process sees through CUDA ("GPU-..."); NVML
  // devices not among them are not read. Empty: every NVML device is read and the ones the trace
  // does not name are dropped at finish(). Returns nullptr when NVML cannot be used, with the
  // reason (one line) in *warning; with quiet_if_absent, a libnvidia-ml.so.1 that is not
  // installed at all leaves *warning empty (no driver: nothing to say about its NVML).
  static std::unique_ptr<PowerSampler> start(uint64_t period_ns, const std::vector<std::string>& cuda_uuids,
                                             bool quiet_if_absent, std::string* warning);
  ~PowerSampler();
  PowerSampler(const PowerSampler&) = delete;
  PowerSampler& operator=(const PowerSampler&) = delete;

  // Stops the thread after one last reading. Waits for it at most `wait_ms` (an NVML call that
  // hangs must not hang the user's program): a thread that does not end in time is left to end
  // on its own and its samples are not used (said in finish()'s warning). In a process forked
  // from the one that started the sampler (where the thread does not exist, and its lock may
  // have been copied held) it neither locks nor waits.
  void halt(uint64_t wait_ms = 2000);

  // Moves the samples into store.power_samples (device ids from store.devices, matched by UUID;
  // sorted by device then time), sets meta.power_sample_period_ns and
  // meta.energy_update_period_ns, and returns at most one warning ("" none). Call after halt()
  // and after store.devices is complete. Once only. In a forked child: no samples, and a warning
  // that says so.
  std::string finish(TraceStore& store);

  struct Shared;  // state shared with the thread (outlives this object if the thread hangs)

 private:
  explicit PowerSampler(std::shared_ptr<Shared> shared);
  std::shared_ptr<Shared> shared_;
  pid_t pid_ = 0;  // the process that started the thread
  bool halted_ = false;
  bool finished_ = false;
  bool timed_out_ = false;
  bool forked_ = false;  // halt() ran in a forked child
  uint64_t waited_ms_ = 0;
};

// The times at which one device's energy counter was seen to change, for the update period: the
// first kMaxTimes of them only. The update period is the driver's and the same all trace long,
// so the first thousands of changes tell it as well as all of them, and the memory stays
// 8 B x kMaxTimes per GPU however long the trace (docs/performance.md, "GPU power sampling (memory)").
class CounterChanges {
 public:
  static constexpr std::size_t kMaxTimes = 4097;  // 4096 intervals
  void add(uint64_t time_ns) {
    if (times_.size() < kMaxTimes) times_.push_back(time_ns);
  }
  const std::vector<uint64_t>& times() const { return times_; }

 private:
  std::vector<uint64_t> times_;
};

// The median of the intervals between consecutive times at which an energy counter was seen to
// change (each list: one device's change times, ascending); 0 when no device changed twice.
// The median, not the smallest: a reading taken late makes the next interval look short.
uint64_t median_update_period_ns(const std::vector<std::vector<uint64_t>>& change_times_ns);

}  // namespace fpgaprof::cupti

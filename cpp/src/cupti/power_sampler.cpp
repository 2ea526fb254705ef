#include "cupti/power_sampler.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>

#include "cupti/nvml_api.hpp"
#include "fpgaprof/cupti/capture.hpp"

namespace fpgaprof::cupti {

struct PowerSampler::Shared {
  struct Device {
    NvmlApi::Device handle = nullptr;
    std::string uuid;
    unsigned nvml_index = 0;
    bool energy_ok = true;
    bool power_ok = true;
    bool have_read = false;
    PowerSampleRecord last_read;  // the latest reading
    bool last_read_kept = false;
    bool went_backwards = false;             // said once per device
    std::vector<PowerSampleRecord> samples;  // device_id: not yet known (set at finish)
    std::vector<uint64_t> change_times_ns;   // readings at which the energy value differed
  };

  const NvmlApi* api = nullptr;
  uint64_t period_ns = 0;
  std::vector<std::string> cuda_uuids;  // empty: every NVML device
  std::vector<Device> devices;

  std::mutex mutex;
  std::condition_variable cv;
  bool stop = false;             // guarded by mutex
  bool finished = false;         // guarded by mutex: the thread is done with everything below
  std::set<std::string> causes;  // written by the thread only; read after finished

  void read(Device& d);
  bool init();  // nvmlInit_v2 and the devices; false (cause recorded, NVML shut down) when none
  void run();
};

namespace {

std::string short_uuid(const std::string& uuid) { return uuid.empty() ? std::string("(no UUID)") : uuid; }

}  // namespace

void PowerSampler::Shared::read(Device& d) {
  if (!d.energy_ok && !d.power_ok) return;
  // The reading's time is the middle of the energy call (of the power call without one): the
  // energy value must be placed where it was read, even if the thread is preempted between the
  // two calls.
  uint64_t t0 = trace_clock_ns();
  uint64_t t1 = t0;
  unsigned long long energy = 0;
  unsigned power = 0;
  PowerSampleRecord r;
  r.energy_mj = kNoEnergy;
  r.power_mw = kNoPower;
  if (d.energy_ok) {
    if (api->DeviceGetTotalEnergyConsumption == nullptr) {
      d.energy_ok = false;
    } else if (const NvmlApi::Return rc = api->DeviceGetTotalEnergyConsumption(d.handle, &energy);
               rc == NvmlApi::kSuccess) {
      r.energy_mj = energy;
    } else {
      d.energy_ok = false;
      causes.insert(
          rc == NvmlApi::kNotSupported
              ? "GPU " + short_uuid(d.uuid) +
                    " has no total-energy counter (nvmlDeviceGetTotalEnergyConsumption: " + api->result_string(rc) +
                    "; Volta and later have one): its energy is the integral of its "
                    "power samples"
              : "nvmlDeviceGetTotalEnergyConsumption failed on GPU " + short_uuid(d.uuid) + " (" +
                    api->result_string(rc) + "): its energy is the integral of its power samples from then on");
    }
    t1 = trace_clock_ns();
  }
  if (d.power_ok) {
    const bool timed = r.energy_mj == kNoEnergy;
    if (timed) t0 = trace_clock_ns();
    const NvmlApi::Return rc = api->DeviceGetPowerUsage(d.handle, &power);
    if (timed) t1 = trace_clock_ns();
    if (rc == NvmlApi::kSuccess) {
      r.power_mw = power;
    } else {
      d.power_ok = false;
      causes.insert("nvmlDeviceGetPowerUsage failed on GPU " + short_uuid(d.uuid) + " (" + api->result_string(rc) +
                    (rc == NvmlApi::kNoPermission ? "; run as a user allowed to read the GPU's power" : "") +
                    "): no power samples from then on");
    }
  }
  if (r.energy_mj == kNoEnergy && r.power_mw == kNoPower) return;
  r.time_ns = t0 + (t1 >= t0 ? (t1 - t0) / 2 : 0);
  if (d.have_read && r.energy_mj != kNoEnergy && d.last_read.energy_mj != kNoEnergy) {
    if (r.energy_mj != d.last_read.energy_mj) d.change_times_ns.push_back(r.time_ns);
    if (r.energy_mj < d.last_read.energy_mj && !d.went_backwards) {
      d.went_backwards = true;
      causes.insert(
          "the energy counter of GPU " + short_uuid(d.uuid) + " went backwards (from " +
          std::to_string(d.last_read.energy_mj) + " to " + std::to_string(r.energy_mj) +
          " mJ: a driver reload or a wrap): the energy of such an interval is the integral of its power samples");
    }
  }
  const PowerSampleRecord* kept = d.samples.empty() ? nullptr : &d.samples.back();
  if (kept == nullptr || kept->energy_mj != r.energy_mj || kept->power_mw != r.power_mw) {
    d.samples.push_back(r);
    d.last_read_kept = true;
  } else {
    d.last_read_kept = false;
  }
  d.last_read = r;
  d.have_read = true;
}

bool PowerSampler::Shared::init() {
  if (const NvmlApi::Return rc = api->Init(); rc != NvmlApi::kSuccess) {
    causes.insert("not measured: nvmlInit_v2 failed (" + api->result_string(rc) + ")" +
                  (rc == NvmlApi::kNoPermission ? ": run as a user allowed to use the GPU's management library"
                                                : ": check the NVIDIA driver (nvidia-smi)"));
    return false;
  }
  unsigned count = 0;
  if (const NvmlApi::Return rc = api->DeviceGetCount(&count); rc != NvmlApi::kSuccess) {
    causes.insert("not measured: nvmlDeviceGetCount_v2 failed (" + api->result_string(rc) + ")");
    api->Shutdown();
    return false;
  }
  std::string first_failure;
  for (unsigned i = 0; i < count; ++i) {
    Device d;
    d.nvml_index = i;
    if (const NvmlApi::Return rc = api->DeviceGetHandleByIndex(i, &d.handle); rc != NvmlApi::kSuccess) {
      if (first_failure.empty())
        first_failure =
            "nvmlDeviceGetHandleByIndex_v2(" + std::to_string(i) + ") failed (" + api->result_string(rc) + ")";
      continue;
    }
    char uuid[NvmlApi::kUuidBufferSize] = {};
    if (const NvmlApi::Return rc = api->DeviceGetUUID(d.handle, uuid, sizeof uuid); rc != NvmlApi::kSuccess) {
      if (first_failure.empty())
        first_failure =
            "nvmlDeviceGetUUID of NVML device " + std::to_string(i) + " failed (" + api->result_string(rc) + ")";
      continue;
    }
    uuid[sizeof uuid - 1] = '\0';
    d.uuid = uuid;
    if (!cuda_uuids.empty() && std::find(cuda_uuids.begin(), cuda_uuids.end(), d.uuid) == cuda_uuids.end()) continue;
    devices.push_back(std::move(d));
  }
  if (devices.empty()) {
    causes.insert("not measured: " + (first_failure.empty()
                                          ? std::string("NVML lists none of the traced GPUs (by UUID)")
                                          : first_failure));
    api->Shutdown();
    return false;
  }
  if (!first_failure.empty()) causes.insert(first_failure + ": that GPU is not sampled");
  if (api->DeviceGetTotalEnergyConsumption == nullptr) {
    causes.insert("NVML at " + api->path +
                  " lacks nvmlDeviceGetTotalEnergyConsumption (a driver older than the energy counter): "
                  "energy is the integral of the power samples; update the NVIDIA driver to measure it");
  }
  return true;
}

void PowerSampler::Shared::run() {
  // NVML's initialization can take a while (a driver without persistence mode): done here, on
  // the sampling thread, never on the thread that starts the trace.
  if (init()) {
    using Clock = std::chrono::steady_clock;
    const auto period = std::chrono::nanoseconds(period_ns);
    auto next = Clock::now();
    for (;;) {
      for (Device& d : devices) read(d);
      next += period;
      const auto now = Clock::now();
      if (next < now) next = now + period;  // late: skip the missed ticks instead of bursting
      std::unique_lock<std::mutex> lock(mutex);
      if (cv.wait_until(lock, next, [this] { return stop; })) break;
    }
    for (Device& d : devices) {
      read(d);  // the last reading, at stop
      if (d.have_read && !d.last_read_kept) d.samples.push_back(d.last_read);
    }
    api->Shutdown();
  }
  std::lock_guard<std::mutex> lock(mutex);
  finished = true;
  cv.notify_all();
}

PowerSampler::PowerSampler(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}

PowerSampler::~PowerSampler() { halt(); }

std::unique_ptr<PowerSampler> PowerSampler::start(uint64_t period_ns, const std::vector<std::string>& cuda_uuids,
                                                  bool quiet_if_absent, std::string* warning) {
  auto say = [&](std::string w) {
    if (warning) *warning = "GPU energy not measured: " + std::move(w);
    return nullptr;
  };
  try {
    std::string error;
    bool absent = false;
    const NvmlApi* api = NvmlApi::load(&error, &absent);
    if (api == nullptr) {
      if (absent && quiet_if_absent) return nullptr;
      return say(error);
    }
    auto shared = std::make_shared<Shared>();
    shared->api = api;
    shared->period_ns = period_ns;
    shared->cuda_uuids = cuda_uuids;
    std::unique_ptr<PowerSampler> sampler(new PowerSampler(shared));
    sampler->halted_ = true;  // no thread to stop (and wait for) should starting it fail
    std::thread([shared] { shared->run(); }).detach();
    sampler->halted_ = false;
    return sampler;
  } catch (const std::exception& e) {
    return say(std::string("the sampling thread could not start (") + e.what() + ")");
  }
}

void PowerSampler::halt(uint64_t wait_ms) {
  if (halted_) return;
  halted_ = true;
  std::unique_lock<std::mutex> lock(shared_->mutex);
  shared_->stop = true;
  shared_->cv.notify_all();
  timed_out_ = !shared_->cv.wait_for(lock, std::chrono::milliseconds(wait_ms), [this] { return shared_->finished; });
}

std::string PowerSampler::finish(TraceStore& store) {
  if (finished_) return {};
  finished_ = true;
  halt();
  if (timed_out_) {
    return "GPU energy not measured: NVML did not answer within 2 s when the trace stopped: this trace has no power "
           "samples";
  }
  std::unordered_map<std::string, uint32_t> id_of;
  for (const DeviceInfo& d : store.devices) {
    if (!d.uuid.empty()) id_of.emplace(d.uuid, d.id);
  }
  std::set<std::string> causes = std::move(shared_->causes);
  std::vector<std::vector<uint64_t>> changes;
  std::size_t matched = 0;
  for (Shared::Device& d : shared_->devices) {
    const auto it = id_of.find(d.uuid);
    if (it == id_of.end()) continue;  // a GPU of the machine the process does not use
    ++matched;
    for (PowerSampleRecord& r : d.samples) {
      r.device_id = it->second;
      store.power_samples.push_back(r);
    }
    changes.push_back(std::move(d.change_times_ns));
  }
  if (matched == 0 && !shared_->devices.empty() && !store.devices.empty()) {
    causes.insert("none of NVML's " + std::to_string(shared_->devices.size()) +
                  " GPUs has the UUID of a traced GPU: no power samples");
  }
  std::stable_sort(store.power_samples.begin(), store.power_samples.end(),
                   [](const PowerSampleRecord& a, const PowerSampleRecord& b) {
                     return a.device_id != b.device_id ? a.device_id < b.device_id : a.time_ns < b.time_ns;
                   });
  if (!store.power_samples.empty()) store.meta.power_sample_period_ns = shared_->period_ns;
  store.meta.energy_update_period_ns = median_update_period_ns(changes);
  if (causes.empty()) return {};
  std::string w = "GPU energy: ";
  bool first = true;
  for (const std::string& c : causes) {
    if (!first) w += "; ";
    w += c;
    first = false;
  }
  return w;
}

uint64_t median_update_period_ns(const std::vector<std::vector<uint64_t>>& change_times_ns) {
  std::vector<uint64_t> gaps;
  for (const auto& times : change_times_ns) {
    for (std::size_t i = 1; i < times.size(); ++i) {
      if (times[i] > times[i - 1]) gaps.push_back(times[i] - times[i - 1]);
    }
  }
  if (gaps.empty()) return 0;
  const std::size_t mid = gaps.size() / 2;
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(mid), gaps.end());
  uint64_t m = gaps[mid];
  if (gaps.size() % 2 == 0) {
    const uint64_t below = *std::max_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(mid));
    m = below + (m - below) / 2;
  }
  return m;
}

}  // namespace fpgaprof::cupti

#include "cupti/power_sampler.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>

#include <unistd.h>

#include "cupti/nvml_api.hpp"
#include "fpgaprof/cupti/capture.hpp"

namespace fpgaprof::cupti {

struct PowerSampler::Shared {
  // One of a device's two reads (the energy counter, the power).
  struct Query {
    bool ok = true;                  // still read
    uint32_t failures_in_row = 0;    // consecutive failed calls, 0 after a success
    uint64_t skipped = 0;            // readings skipped because this call failed
    NvmlApi::Return last_error = 0;  // the last failure's code (0 none)
    bool gave_up = false;            // turned off by a failure (last_error says which)
  };
  struct Device {
    NvmlApi::Device handle = nullptr;
    std::string uuid;
    unsigned nvml_index = 0;
    Query energy;
    Query power;
    bool have_read = false;
    PowerSampleRecord last_read;  // the latest reading
    bool last_read_kept = false;
    bool went_backwards = false;  // the first decrease only
    uint64_t backwards_from_mj = 0;
    uint64_t backwards_to_mj = 0;
    std::vector<PowerSampleRecord> samples;  // device_id: not yet known (set at finish)
    CounterChanges changes;                  // readings at which the energy value differed
  };

  const NvmlApi* api = nullptr;
  uint64_t period_ns = 0;
  std::vector<std::string> cuda_uuids;  // empty: every NVML device
  std::vector<Device> devices;
  unsigned nvml_devices = 0;  // NVML's device count
  unsigned mig_enabled = 0;   // NVML devices in MIG mode (nvmlDeviceGetMigMode, where it exists)
  bool mig_visible = false;   // CUDA_VISIBLE_DEVICES names MIG instances ("MIG-...")
  bool nvml_open = false;     // nvmlInit_v2 succeeded and nvmlShutdown is still owed

  std::mutex mutex;
  std::condition_variable cv;
  bool stop = false;             // guarded by mutex
  bool finished = false;         // guarded by mutex: the thread is done with everything below
  std::set<std::string> causes;  // written by the thread only; read after finished
  // The thread stopped on an exception (out of memory): what() as far as it fits. Written
  // without allocating, since allocating is what failed.
  bool thread_failed = false;
  char failure[128] = {};

  // Whether the reading goes on after call `q` failed with `rc`: a code that will not change
  // (the call is not supported, not permitted, not in this library, the GPU is gone) turns the
  // call off at once; any other is skipped, and kMaxFailuresInRow of them in a row turn it off.
  static bool keep_reading(Query& q, NvmlApi::Return rc);
  void read(Device& d);
  bool init();  // nvmlInit_v2 and the devices; false (cause recorded, NVML shut down) when none
  void sample();
  void run() noexcept;
};

namespace {

std::string short_uuid(const std::string& uuid) { return uuid.empty() ? std::string("(no UUID)") : uuid; }

// Consecutive failures of one call after which a code that may be transient turns it off.
constexpr uint32_t kMaxFailuresInRow = 10;

bool permanent(NvmlApi::Return rc) {
  return rc == NvmlApi::kNotSupported || rc == NvmlApi::kNoPermission || rc == NvmlApi::kFunctionNotFound ||
         rc == NvmlApi::kGpuIsLost;
}

std::string plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Why NVML may list none of the traced GPUs, when MIG is the likely cause ("" otherwise).
std::string mig_hint(unsigned mig_enabled, bool mig_visible) {
  if (mig_enabled == 0 && !mig_visible) return {};
  return std::string(" (") +
         (mig_enabled > 0 ? plural(mig_enabled, "NVML GPU is", "NVML GPUs are") + " in MIG mode"
                          : std::string("CUDA_VISIBLE_DEVICES names MIG instances")) +
         ": the process runs on a MIG instance, whose UUID is not its GPU's, and NVML has no power or energy "
         "per MIG instance; trace on a whole GPU to measure energy)";
}

}  // namespace

bool PowerSampler::Shared::keep_reading(Query& q, NvmlApi::Return rc) {
  q.last_error = rc;
  if (permanent(rc) || ++q.failures_in_row >= kMaxFailuresInRow) {
    q.ok = false;
    q.gave_up = true;
    return false;
  }
  ++q.skipped;
  return true;
}

void PowerSampler::Shared::read(Device& d) {
  if (!d.energy.ok && !d.power.ok) return;
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
  if (d.energy.ok) {
    const NvmlApi::Return rc = api->DeviceGetTotalEnergyConsumption(d.handle, &energy);
    t1 = trace_clock_ns();
    if (rc == NvmlApi::kSuccess) {
      r.energy_mj = energy;
      d.energy.failures_in_row = 0;
    } else if (keep_reading(d.energy, rc)) {
      // Skipped whole: a reading without its counter value would make the analysis take the
      // intervals on both sides of it from the power readings instead of the counter.
      return;
    }
  }
  if (d.power.ok) {
    const bool timed = r.energy_mj == kNoEnergy;
    if (timed) t0 = trace_clock_ns();
    const NvmlApi::Return rc = api->DeviceGetPowerUsage(d.handle, &power);
    if (timed) t1 = trace_clock_ns();
    if (rc == NvmlApi::kSuccess) {
      r.power_mw = power;
      d.power.failures_in_row = 0;
    } else {
      // Skipped or off, the counter's value (if any) is kept: the analysis holds the power of
      // the reading before.
      keep_reading(d.power, rc);
    }
  }
  if (r.energy_mj == kNoEnergy && r.power_mw == kNoPower) return;
  r.time_ns = t0 + (t1 >= t0 ? (t1 - t0) / 2 : 0);
  if (d.have_read && r.energy_mj != kNoEnergy && d.last_read.energy_mj != kNoEnergy) {
    if (r.energy_mj != d.last_read.energy_mj) d.changes.add(r.time_ns);
    if (r.energy_mj < d.last_read.energy_mj && !d.went_backwards) {
      d.went_backwards = true;
      d.backwards_from_mj = d.last_read.energy_mj;
      d.backwards_to_mj = r.energy_mj;
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
  nvml_open = true;
  unsigned count = 0;
  if (const NvmlApi::Return rc = api->DeviceGetCount(&count); rc != NvmlApi::kSuccess) {
    causes.insert("not measured: nvmlDeviceGetCount_v2 failed (" + api->result_string(rc) + ")");
    return false;
  }
  nvml_devices = count;
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
    if (api->DeviceGetMigMode != nullptr) {
      unsigned current = 0;
      unsigned pending = 0;
      if (api->DeviceGetMigMode(d.handle, &current, &pending) == NvmlApi::kSuccess && current == NvmlApi::kMigEnabled)
        ++mig_enabled;
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
    // A driver without the counter's entry point: energy from the power readings (said below).
    d.energy.ok = api->DeviceGetTotalEnergyConsumption != nullptr;
    devices.push_back(std::move(d));
  }
  if (devices.empty()) {
    causes.insert("not measured: " + (first_failure.empty() ? "NVML lists none of the traced GPUs (by UUID)" +
                                                                  mig_hint(mig_enabled, mig_visible)
                                                            : first_failure));
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

void PowerSampler::Shared::sample() {
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
}

void PowerSampler::Shared::run() noexcept {
  // NVML's initialization can take a while (a driver without persistence mode): done here, on
  // the sampling thread, never on the thread that starts the trace. An exception here (an
  // allocation that fails: the samples grow with the trace) would end the user's process on
  // this detached thread: it stops the sampling instead, the samples taken so far are kept (a
  // failed push_back leaves its vector as it was), and finish() says why.
  try {
    if (init()) sample();
  } catch (const std::exception& e) {
    thread_failed = true;
    std::strncpy(failure, e.what(), sizeof failure - 1);
  } catch (...) {
    thread_failed = true;
    std::strncpy(failure, "unknown exception", sizeof failure - 1);
  }
  if (nvml_open) {
    api->Shutdown();
    nvml_open = false;
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
    // Read here, on the caller's thread (the environment is not the sampling thread's to read).
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    shared->mig_visible = visible != nullptr && std::strstr(visible, "MIG-") != nullptr;
    std::unique_ptr<PowerSampler> sampler(new PowerSampler(shared));
    sampler->pid_ = ::getpid();
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
  if (::getpid() != pid_) {
    // A forked child: the thread is the parent's, and a fork while it held the mutex left the
    // child's copy locked for good. Nothing to stop, lock or wait for; the shared state is
    // never freed here (its lock and condition variable may be in any state).
    forked_ = true;
    new std::shared_ptr<Shared>(std::move(shared_));  // NOLINT: left to the process's end
    return;
  }
  waited_ms_ = wait_ms;
  std::unique_lock<std::mutex> lock(shared_->mutex);
  shared_->stop = true;
  shared_->cv.notify_all();
  timed_out_ = !shared_->cv.wait_for(lock, std::chrono::milliseconds(wait_ms), [this] { return shared_->finished; });
}

std::string PowerSampler::finish(TraceStore& store) {
  if (finished_) return {};
  finished_ = true;
  halt();
  if (forked_) {
    return "GPU energy not measured in a forked child: NVML is read by the process that started the trace, "
           "whose trace has the power samples";
  }
  if (timed_out_) {
    const std::string waited =
        waited_ms_ % 1000 == 0 ? std::to_string(waited_ms_ / 1000) + " s" : std::to_string(waited_ms_) + " ms";
    return "GPU energy not measured: NVML did not answer within " + waited +
           " when the trace stopped: this trace has no power samples";
  }
  std::unordered_map<std::string, uint32_t> id_of;
  for (const DeviceInfo& d : store.devices) {
    if (!d.uuid.empty()) id_of.emplace(d.uuid, d.id);
  }
  std::set<std::string> causes = std::move(shared_->causes);
  if (shared_->thread_failed) {
    causes.insert(std::string("the sampling thread stopped early (") + shared_->failure +
                  "): the samples read until then are kept");
  }
  std::vector<std::vector<uint64_t>> changes;
  std::size_t matched = 0;
  std::size_t kept = 0;
  for (const Shared::Device& d : shared_->devices) {
    if (id_of.count(d.uuid) != 0) kept += d.samples.size();
  }
  store.power_samples.reserve(store.power_samples.size() + kept);
  for (Shared::Device& d : shared_->devices) {
    const auto it = id_of.find(d.uuid);
    if (it == id_of.end()) continue;  // a GPU of the machine the process does not use
    ++matched;
    for (PowerSampleRecord& r : d.samples) {
      r.device_id = it->second;
      store.power_samples.push_back(r);
    }
    std::vector<PowerSampleRecord>().swap(d.samples);
    changes.push_back(d.changes.times());
    const std::string gpu = "GPU " + short_uuid(d.uuid);
    const NvmlApi* api = shared_->api;
    // Each call's failures: turned off (at once for a code that will not change, else after
    // kMaxFailuresInRow in a row), or skipped readings only.
    auto failures = [&](const Shared::Query& q, const char* call, const std::string& off, const std::string& fix) {
      if (q.last_error == 0) return;
      const std::string code = api->result_string(q.last_error);
      if (!q.gave_up) {
        causes.insert(std::string(call) + " failed on " + gpu + " " + plural(q.skipped, "time", "times") +
                      " (the last: " + code + "): " + plural(q.skipped, "reading", "readings") + " skipped");
        return;
      }
      std::string why = std::string(call) + " failed on " + gpu + " (" + code + fix + ")";
      if (!permanent(q.last_error)) why += " " + std::to_string(kMaxFailuresInRow) + " times in a row";
      if (q.skipped > 0) why += " after " + plural(q.skipped, "skipped reading", "skipped readings");
      causes.insert(why + ": " + off);
    };
    // Where the power reads were turned off too, no samples stand in for the counter.
    const std::string from_power = d.power.gave_up ? "no energy is measured for it from then on (its power "
                                                     "reads failed too)"
                                                   : "its energy is the integral of its power samples";
    if (d.energy.gave_up && d.energy.last_error == NvmlApi::kNotSupported) {
      causes.insert(gpu + " has no total-energy counter (nvmlDeviceGetTotalEnergyConsumption: " +
                    api->result_string(NvmlApi::kNotSupported) + "; Volta and later have one): " + from_power);
    } else {
      failures(d.energy, "nvmlDeviceGetTotalEnergyConsumption",
               d.power.gave_up ? from_power : from_power + " from then on", "");
    }
    failures(d.power, "nvmlDeviceGetPowerUsage", "no power samples from then on",
             d.power.last_error == NvmlApi::kNoPermission ? "; run as a user allowed to read the GPU's power" : "");
    if (d.went_backwards) {
      causes.insert("the energy counter of " + gpu + " went backwards (from " + std::to_string(d.backwards_from_mj) +
                    " to " + std::to_string(d.backwards_to_mj) +
                    " mJ: a driver reload or a wrap): the energy of such an interval is the integral of its power "
                    "samples");
    }
  }
  if (matched > 0) {
    // A traced GPU that NVML does not list (or whose handle or UUID it could not give, said
    // above by NVML index): its energy is in no table; say which one, once.
    std::set<std::string> sampled;
    for (const Shared::Device& d : shared_->devices) sampled.insert(d.uuid);
    for (const DeviceInfo& d : store.devices) {
      if (d.uuid.empty() || sampled.count(d.uuid) != 0) continue;
      causes.insert("GPU " + std::to_string(d.id) + " (" + d.uuid +
                    ") is not among NVML's GPUs (by UUID): it is not sampled, and the energy of the "
                    "regions and ops leaves it out");
    }
  }
  if (matched == 0 && !shared_->devices.empty() && !store.devices.empty()) {
    causes.insert("none of NVML's " + std::to_string(shared_->devices.size()) +
                  " GPUs has the UUID of a traced GPU: no power samples" +
                  mig_hint(shared_->mig_enabled, shared_->mig_visible));
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

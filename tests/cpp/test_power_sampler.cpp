// GPU power sampling through NVML, end to end: CaptureSession over the libcupti test double
// (two GPUs, scenario "devices") with the NVML test double (tests/fake_nvml) and its scripted
// power curve. Expected values are worked out from the curve by hand.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "cupti/power_sampler.hpp"
#include "fake_cupti_access.hpp"
#include "fpgaprof/cupti/capture.hpp"

using namespace fpgaprof;
using namespace fpgaprof::fake_access;

namespace {

void clear_nvml_env() {
  for (const char* k :
       {"FAKE_NVML_POWER_W", "FAKE_NVML_DEVICES", "FAKE_NVML_SCALE_0", "FAKE_NVML_SCALE_1",
        "FAKE_NVML_ENERGY_UPDATE_MS", "FAKE_NVML_SCENARIO", "FAKE_NVML_BACKWARDS_MS", "FAKE_NVML_FAIL_MS",
        "FAKE_NVML_FAIL_READS", "FAKE_NVML_FAIL_CALL", "FAKE_NVML_FAIL_CODE", "FAKE_NVML_HANG_MS", "FAKE_NVML_MIG"}) {
    ::unsetenv(k);
  }
}

// A counter of the NVML test double (fake_nvml_open_inits: nvmlInit_v2 calls not yet balanced by
// nvmlShutdown; fake_nvml_shutdowns); -1 when the double is not loaded.
long long fake_nvml_count(const char* name) {
  void* h = ::dlopen(FPGAPROF_FAKE_NVML_PATH, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return -1;
  long long n = -1;
  if (std::string(name) == "fake_nvml_open_inits") {
    if (auto fn = reinterpret_cast<int (*)()>(::dlsym(h, name))) n = fn();
  } else if (auto fn = reinterpret_cast<uint64_t (*)()>(::dlsym(h, name))) {
    n = static_cast<long long>(fn());
  }
  ::dlclose(h);
  return n;
}
int open_nvml_inits() { return static_cast<int>(fake_nvml_count("fake_nvml_open_inits")); }

// Waits (up to 5 s) until a sampling thread left running has shut NVML down, so that the next
// test's nvmlInit_v2 reads its own curve.
bool nvml_closed() {
  for (int i = 0; i < 500; ++i) {
    if (open_nvml_inits() <= 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// A sampler started on the NVML test double (FPGAPROF_NVML_LIBRARY set only while it starts),
// reading every 1 ms; `cuda`: the CUDA UUIDs of the process's GPUs.
std::unique_ptr<cupti::PowerSampler> start_on_fake_nvml(std::string* warning,
                                                        const std::vector<std::string>& cuda = {}) {
  ::setenv("FPGAPROF_NVML_LIBRARY", FPGAPROF_FAKE_NVML_PATH, 1);
  auto sampler = cupti::PowerSampler::start(1'000'000, cuda, false, warning);
  ::unsetenv("FPGAPROF_NVML_LIBRARY");
  return sampler;
}

// A store naming the test double's GPU 0 (UUID bytes 0..15, as its DEVICE record 0 has).
TraceStore store_with_gpu0() {
  TraceStore s;
  DeviceInfo d;
  d.id = 0;
  d.uuid = "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f";
  s.devices.push_back(d);
  return s;
}

// A trace of `ms` milliseconds over the fake libcupti (two DEVICE records, ids 0 and 1) with
// FPGAPROF_NVML_LIBRARY = nvml.
TraceStore trace_with_nvml(const std::string& nvml, int ms, uint64_t period_ns = 1'000'000) {
  ::setenv("FPGAPROF_NVML_LIBRARY", nvml.c_str(), 1);
  CaptureOptions options;
  options.power_sample_period_ns = period_ns;
  auto session = CaptureSession::start(options);
  fake_emit();
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  TraceStore store = session->stop();
  ::unsetenv("FPGAPROF_NVML_LIBRARY");
  return store;
}

std::vector<std::string> energy_warnings(const TraceStore& s) {
  std::vector<std::string> out;
  for (const auto& w : s.meta.warnings) {
    if (w.message.find("GPU energy") != std::string::npos) out.push_back(w.message);
  }
  return out;
}

std::map<uint32_t, std::vector<PowerSampleRecord>> by_device(const TraceStore& s) {
  std::map<uint32_t, std::vector<PowerSampleRecord>> out;
  for (const auto& r : s.power_samples) out[r.device_id].push_back(r);
  return out;
}

}  // namespace

TEST_CASE("the update period is the median interval between counter changes", "[power]") {
  // Changes at 0, 10, 20, 31 ms on one device (gaps 10, 10, 11) and 5, 25 on another (gap 20):
  // gaps sorted 10 10 11 20 -> median (10 + 11) / 2 = 10.5 ms.
  const uint64_t ms = 1'000'000;
  CHECK(cupti::median_update_period_ns({{0, 10 * ms, 20 * ms, 31 * ms}, {5 * ms, 25 * ms}}) == 10'500'000);
  CHECK(cupti::median_update_period_ns({{0, 7 * ms}}) == 7 * ms);
  CHECK(cupti::median_update_period_ns({{3 * ms}, {}}) == 0);  // never changed twice: unknown
}

TEST_CASE("NVML samples are matched to the trace's GPUs by UUID", "[power][session]") {
  if (load_fake("devices", 1, 1) == nullptr) return;
  clear_nvml_env();
  // NVML lists the trace's GPU 1 first (at twice the power), then GPU 0, then a GPU 2 that the
  // trace does not have. Power: 250 W throughout.
  ::setenv("FAKE_NVML_DEVICES", "1,0,2", 1);
  ::setenv("FAKE_NVML_SCALE_0", "2", 1);
  ::setenv("FAKE_NVML_POWER_W", "250", 1);
  const TraceStore s = trace_with_nvml(FPGAPROF_FAKE_NVML_PATH, 60);
  clear_nvml_env();
  CHECK(energy_warnings(s).empty());
  const auto dev = by_device(s);
  REQUIRE(dev.size() == 2);  // GPU 2 dropped
  REQUIRE(dev.count(0) == 1);
  REQUIRE(dev.count(1) == 1);
  CHECK(s.meta.power_sample_period_ns == 1'000'000);
  // The counter changes at every reading (no update period set): the median gap between changes
  // is about the sampling period; a loaded machine can only stretch it.
  CHECK(s.meta.energy_update_period_ns >= 500'000);
  CHECK(s.meta.energy_update_period_ns < 50'000'000);
  for (const auto& [id, samples] : dev) {
    const uint32_t want_mw = id == 1 ? 500'000 : 250'000;
    REQUIRE(samples.size() >= 5);  // 60 ms at 1 ms: dozens; a few even on a loaded machine
    for (std::size_t i = 0; i < samples.size(); ++i) {
      CHECK(samples[i].power_mw == want_mw);
      CHECK(samples[i].energy_mj != kNoEnergy);
      if (i > 0) {
        CHECK(samples[i].time_ns > samples[i - 1].time_ns);
        CHECK(samples[i].energy_mj >= samples[i - 1].energy_mj);
      }
    }
    // Constant power: the energy between the first and the last reading is P x time, to the
    // counter's 1 mJ steps and the half-call time spread of each reading (at most a few us: 2.5
    // mJ at 500 W per 5 us), so within 2 + 5 mJ.
    const double dt_s = static_cast<double>(samples.back().time_ns - samples.front().time_ns) / 1e9;
    const double dj_mj = static_cast<double>(samples.back().energy_mj - samples.front().energy_mj);
    CHECK(std::abs(dj_mj - want_mw * dt_s) < 7.0);
    // The samples span the trace.
    CHECK(samples.front().time_ns >= s.meta.start_ns);
    CHECK(samples.back().time_ns <= s.meta.end_ns);
    CHECK(samples.back().time_ns - samples.front().time_ns > 40'000'000);
  }
}

TEST_CASE("the energy counter's own update period is measured", "[power][session]") {
  if (load_fake("devices", 1, 1) == nullptr) return;
  clear_nvml_env();
  ::setenv("FAKE_NVML_ENERGY_UPDATE_MS", "10", 1);
  const TraceStore s = trace_with_nvml(FPGAPROF_FAKE_NVML_PATH, 200);
  clear_nvml_env();
  // The counter changes every 10 ms; readings every 1 ms see each change within 1 ms (later on a
  // loaded machine, which the median absorbs).
  CHECK(s.meta.energy_update_period_ns >= 7'000'000);
  CHECK(s.meta.energy_update_period_ns <= 14'000'000);
  // Only readings in which a value changed are kept: the power is constant, so about one sample
  // per counter step (20 in 200 ms), far fewer than the ~200 readings.
  const auto dev = by_device(s);
  REQUIRE(dev.count(0) == 1);
  CHECK(dev.at(0).size() <= 40);
  CHECK(dev.at(0).size() >= 10);
}

TEST_CASE("NVML faults leave the trace intact with one warning naming the cause", "[power][session]") {
  if (load_fake("devices", 1, 1) == nullptr) return;
  struct Case {
    const char* scenario;
    std::string library;
    const char* needle;
    bool samples;  // power samples expected
  };
  const std::string fifo = std::string("/tmp/fpgaprof_nvml_fifo_") + std::to_string(::getpid());
  ::unlink(fifo.c_str());
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const Case cases[] = {
      {"init_fails", FPGAPROF_FAKE_NVML_PATH, "nvmlInit_v2 failed (NVML_ERROR_DRIVER_NOT_LOADED (9))", false},
      {"no_permission", FPGAPROF_FAKE_NVML_PATH, "NVML_ERROR_NO_PERMISSION (4)", false},
      {"pre_volta", FPGAPROF_FAKE_NVML_PATH, "has no total-energy counter", true},
      {"backwards", FPGAPROF_FAKE_NVML_PATH, "went backwards", true},
      {"", FPGAPROF_FAKE_NVML_OLD_PATH, "lacks nvmlDeviceGetTotalEnergyConsumption", true},
      {"", FPGAPROF_FAKE_CUPTI_PATH, "lacks nvmlInit_v2", false},
      {"", fifo, "is a FIFO, not a library file", false},
      {"", "/nonexistent/libnvidia-ml.so.1", "could not be loaded", false},
  };
  for (const Case& c : cases) {
    INFO("scenario '" << c.scenario << "' library " << c.library);
    clear_nvml_env();
    ::setenv("FAKE_NVML_SCENARIO", c.scenario, 1);
    ::setenv("FAKE_NVML_BACKWARDS_MS", "30", 1);
    const auto t0 = std::chrono::steady_clock::now();
    const TraceStore s = trace_with_nvml(c.library, 60);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));  // a FIFO does not hang
    CHECK(s.meta.gpu_available);
    CHECK(s.devices.size() == 2);
    const auto w = energy_warnings(s);
    REQUIRE(w.size() == 1);
    CHECK_THAT(w[0], Catch::Contains(c.needle));
    CHECK(s.power_samples.empty() != c.samples);
    if (std::string(c.scenario) == "pre_volta" || c.library == FPGAPROF_FAKE_NVML_OLD_PATH) {
      for (const auto& r : s.power_samples) {
        CHECK(r.energy_mj == kNoEnergy);
        CHECK(r.power_mw == 100'000);
      }
    }
    if (std::string(c.scenario) == "backwards") {
      // Exactly one decrease: the driver reload the fake simulates 30 ms after NVML started.
      int decreases = 0;
      const auto devices = by_device(s);
      const auto& d0 = devices.at(0);
      for (std::size_t i = 1; i < d0.size(); ++i) decreases += d0[i].energy_mj < d0[i - 1].energy_mj;
      CHECK(decreases == 1);
    }
  }
  ::unlink(fifo.c_str());
  clear_nvml_env();
}

TEST_CASE("power sampling off: no NVML, no samples, no warning", "[power][session]") {
  if (load_fake("devices", 1, 1) == nullptr) return;
  clear_nvml_env();
  const TraceStore s = trace_with_nvml("/nonexistent/libnvidia-ml.so.1", 10, 0);
  CHECK(s.power_samples.empty());
  CHECK(energy_warnings(s).empty());
  CHECK(s.meta.power_sample_period_ns == 0);
}

TEST_CASE("the counter's change times are kept for the first 4096 intervals only", "[power]") {
  // Changes every 10 ms for 100 000 changes (about 17 minutes of a counter updated at 100 Hz):
  // the first 4097 times are kept, the memory does not grow with the trace, and the update
  // period from them is still 10 ms.
  cupti::CounterChanges c;
  for (uint64_t i = 0; i < 100'000; ++i) c.add(i * 10'000'000);
  REQUIRE(c.times().size() == 4097);
  CHECK(c.times().back() == 4096 * 10'000'000ull);
  CHECK(cupti::median_update_period_ns({c.times()}) == 10'000'000);
}

TEST_CASE("an NVML read that fails now and then is skipped, not turned off", "[power][session]") {
  if (load_fake("devices", 1, 1) == nullptr) return;
  struct Case {
    const char* call;
    const char* code;
    const char* reads;
    const char* needle;
    bool energy_to_the_end;  // the last reading still has the counter's value
    bool power_to_the_end;
  };
  const Case cases[] = {
      // 3 failures of a code that may be transient: those readings skipped, the counter read on.
      {"energy", "999", "3",
       "nvmlDeviceGetTotalEnergyConsumption failed on GPU GPU-00010203-0405-0607-0809-0a0b0c0d0e0f 3 times (the "
       "last: NVML_ERROR_UNKNOWN (999)): 3 readings skipped",
       true, true},
      {"energy", "10", "1",
       "failed on GPU GPU-00010203-0405-0607-0809-0a0b0c0d0e0f 1 time (the last: "
       "NVML_ERROR_TIMEOUT (10)): 1 reading skipped",
       true, true},
      {"power", "999", "3", "nvmlDeviceGetPowerUsage failed on GPU GPU-00010203-0405-0607-0809-0a0b0c0d0e0f 3 times",
       true, true},
      // Failing on and on: turned off after 10 in a row (9 skipped first), the power read on.
      {"energy", "999", "1000000",
       "(NVML_ERROR_UNKNOWN (999)) 10 times in a row after 9 skipped readings: its energy is the integral of its "
       "power samples from then on",
       false, true},
      // A code that will not change: off at the first failure, though the next call would answer.
      {"energy", "15", "1",
       "nvmlDeviceGetTotalEnergyConsumption failed on GPU GPU-00010203-0405-0607-0809-0a0b0c0d0e0f "
       "(NVML_ERROR_GPU_IS_LOST (15)): its energy is the integral",
       false, true},
      {"power", "13", "1", "(NVML_ERROR_FUNCTION_NOT_FOUND (13)): no power samples from then on", true, false},
  };
  for (const Case& c : cases) {
    INFO("call " << c.call << " code " << c.code << " failures " << c.reads);
    clear_nvml_env();
    ::setenv("FAKE_NVML_SCENARIO", "transient", 1);
    ::setenv("FAKE_NVML_FAIL_CALL", c.call, 1);
    ::setenv("FAKE_NVML_FAIL_CODE", c.code, 1);
    ::setenv("FAKE_NVML_FAIL_READS", c.reads, 1);
    ::setenv("FAKE_NVML_FAIL_MS", "10", 1);
    const TraceStore s = trace_with_nvml(FPGAPROF_FAKE_NVML_PATH, 150);
    const auto w = energy_warnings(s);
    REQUIRE(w.size() == 1);
    CHECK_THAT(w[0], Catch::Contains(c.needle));
    const auto dev = by_device(s);
    REQUIRE(dev.count(0) == 1);
    const auto& d0 = dev.at(0);
    REQUIRE(d0.size() >= 2);
    // Readings before the failures have both values; the last one has what was still read.
    CHECK(d0.front().energy_mj != kNoEnergy);
    CHECK(d0.front().power_mw == 100'000);
    CHECK((d0.back().energy_mj != kNoEnergy) == c.energy_to_the_end);
    CHECK((d0.back().power_mw != kNoPower) == c.power_to_the_end);
    if (c.energy_to_the_end) {
      // A skipped energy reading is skipped whole: no reading without the counter's value,
      // which would cut the counter's curve there.
      for (const auto& r : d0) CHECK(r.energy_mj != kNoEnergy);
    }
  }
  clear_nvml_env();
}

TEST_CASE("an exception on the sampling thread stops the sampling, not the process", "[power]") {
  clear_nvml_env();
  // The energy read throws std::bad_alloc 40 ms after NVML started (an allocation failing on the
  // sampling thread): the thread ends, NVML is shut down, the readings before are kept.
  ::setenv("FAKE_NVML_SCENARIO", "throw", 1);
  ::setenv("FAKE_NVML_FAIL_MS", "40", 1);
  const long long shutdowns = std::max(0LL, fake_nvml_count("fake_nvml_shutdowns"));
  std::string warning;
  auto sampler = start_on_fake_nvml(&warning);
  REQUIRE(sampler != nullptr);
  CHECK(warning.empty());
  // The thread ends and shuts NVML down on its own (before anything asks it to stop).
  bool shut = false;
  for (int i = 0; i < 500 && !shut; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    shut = fake_nvml_count("fake_nvml_shutdowns") > shutdowns;
  }
  CHECK(shut);
  CHECK(open_nvml_inits() == 0);
  TraceStore store = store_with_gpu0();
  const std::string w = sampler->finish(store);
  clear_nvml_env();
  CHECK_THAT(w, Catch::Contains("the sampling thread stopped early (std::bad_alloc): the samples read until then "
                                "are kept"));
  REQUIRE(!store.power_samples.empty());
  CHECK(store.power_samples.front().power_mw == 100'000);
  CHECK(store.meta.power_sample_period_ns == 1'000'000);
}

TEST_CASE("a forked child neither waits for nor locks the parent's sampling thread", "[power]") {
  clear_nvml_env();
  std::string warning;
  auto sampler = start_on_fake_nvml(&warning);
  REQUIRE(sampler != nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The child leaves the trace: no thread to wait for there (the parent's would make it wait
    // the whole 2 s and blame NVML). Exit 0: the right warning, at once.
    ::alarm(10);  // a hang (a lock copied held) ends the child, which the parent sees
    const auto t0 = std::chrono::steady_clock::now();
    TraceStore store = store_with_gpu0();
    const std::string w = sampler->finish(store);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const bool ok = w.find("GPU energy not measured in a forked child") != std::string::npos &&
                    store.power_samples.empty() && s < 0.5;
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // The parent's sampling went on.
  TraceStore store = store_with_gpu0();
  CHECK(sampler->finish(store).empty());
  CHECK(store.power_samples.size() >= 2);
  clear_nvml_env();
}

TEST_CASE("an NVML call that hangs at stop: the warning gives the time waited", "[power]") {
  clear_nvml_env();
  // The first power read 20 ms after NVML started takes 1 s; stop waits 100 ms.
  ::setenv("FAKE_NVML_SCENARIO", "hang", 1);
  ::setenv("FAKE_NVML_HANG_MS", "1000", 1);
  std::string warning;
  auto sampler = start_on_fake_nvml(&warning);
  REQUIRE(sampler != nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  const auto t0 = std::chrono::steady_clock::now();
  sampler->halt(100);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(800));
  TraceStore store = store_with_gpu0();
  const std::string w = sampler->finish(store);
  CHECK(w ==
        "GPU energy not measured: NVML did not answer within 100 ms when the trace stopped: this trace has no "
        "power samples");
  CHECK(store.power_samples.empty());
  sampler.reset();
  CHECK(nvml_closed());  // the thread ends on its own once the call returns
  clear_nvml_env();
}

TEST_CASE("NVML GPUs in MIG mode: the warning names MIG", "[power]") {
  clear_nvml_env();
  // The process sees a GPU (by CUDA's UUID) that NVML does not list: a MIG instance's UUID is
  // not its GPU's.
  const std::vector<std::string> cuda = {"GPU-ffffffff-0405-0607-0809-0a0b0c0d0e0f"};
  for (const bool mig : {true, false}) {
    INFO("MIG " << mig);
    ::setenv("FAKE_NVML_MIG", mig ? "1" : "0", 1);
    std::string warning;
    auto sampler = start_on_fake_nvml(&warning, cuda);
    REQUIRE(sampler != nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    TraceStore store = store_with_gpu0();
    const std::string w = sampler->finish(store);
    CHECK_THAT(w, Catch::Contains("not measured: NVML lists none of the traced GPUs (by UUID)"));
    CHECK((w.find("1 NVML GPU is in MIG mode: the process runs on a MIG instance, whose UUID is not its GPU's, "
                  "and NVML has no power or energy per MIG instance") != std::string::npos) == mig);
    CHECK(store.power_samples.empty());
  }
  {
    // No MIG mode seen through NVML, but CUDA_VISIBLE_DEVICES selects a MIG instance by UUID.
    ::setenv("FAKE_NVML_MIG", "0", 1);
    ::setenv("CUDA_VISIBLE_DEVICES", "MIG-5c6a4e2d-0a5f-5e1c-9b3e-1f2a3b4c5d6e", 1);
    std::string warning;
    auto sampler = start_on_fake_nvml(&warning, cuda);
    ::unsetenv("CUDA_VISIBLE_DEVICES");
    REQUIRE(sampler != nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    TraceStore store = store_with_gpu0();
    CHECK_THAT(sampler->finish(store), Catch::Contains("(by UUID) (CUDA_VISIBLE_DEVICES names MIG instances: the "
                                                       "process runs on a MIG instance"));
  }
  // Without a driver (no CUDA UUIDs), the trace's GPUs are matched at finish.
  ::setenv("FAKE_NVML_MIG", "1", 1);
  ::setenv("FAKE_NVML_DEVICES", "5", 1);
  std::string warning;
  auto sampler = start_on_fake_nvml(&warning);
  REQUIRE(sampler != nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  TraceStore store = store_with_gpu0();
  CHECK_THAT(sampler->finish(store), Catch::Contains("none of NVML's 1 GPUs has the UUID of a traced GPU: no power "
                                                     "samples (1 NVML GPU is in MIG mode"));
  clear_nvml_env();
}

// GPU power sampling through NVML, end to end: CaptureSession over the libcupti test double
// (two GPUs, scenario "devices") with the NVML test double (tests/fake_nvml) and its scripted
// power curve. Expected values are worked out from the curve by hand.
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <sys/stat.h>
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
  for (const char* k : {"FAKE_NVML_POWER_W", "FAKE_NVML_DEVICES", "FAKE_NVML_SCALE_0", "FAKE_NVML_SCALE_1",
                        "FAKE_NVML_ENERGY_UPDATE_MS", "FAKE_NVML_SCENARIO", "FAKE_NVML_BACKWARDS_MS"}) {
    ::unsetenv(k);
  }
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

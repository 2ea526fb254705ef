// Test double of libnvidia-ml (NVML), loaded through FPGAPROF_NVML_LIBRARY. It exports the NVML
// entry points the power sampler uses and answers them from a scripted power curve, so tests
// can work out by hand what each reading must be.
//
// The curve (read by every nvmlInit_v2 that finds no other initialization open, so each trace
// starts afresh; the time base T0 is the CLOCK_REALTIME ns of that call, fake_nvml_base_ns()
// returns it):
//   FAKE_NVML_POWER_W    "W0,MS1:W1,MS2:W2,...": W0 watts before T0 + MS1 ms, W1 from then
//                        until T0 + MS2 ms, ... (piecewise constant; default "100").
//   FAKE_NVML_DEVICES    comma-separated CUDA device ids whose UUIDs the NVML devices have, in
//                        NVML's order (default "0"); the UUID of id k is the one the libcupti test
//                        double gives its DEVICE record k (bytes i + 16 k), so "1,0,2" lists the
//                        trace's GPU 1 first and a GPU 2 that the trace does not have.
//   FAKE_NVML_SCALE_<n>  NVML device n's power is the curve times this (default 1).
//   FAKE_NVML_ENERGY_UPDATE_MS  the energy counter changes only every this many ms (the integral
//                        up to the last multiple of it after T0); 0 (default): at every reading.
//   FAKE_NVML_SCENARIO   "" (default) as above;
//                        "init_fails": nvmlInit_v2 returns NVML_ERROR_DRIVER_NOT_LOADED (9);
//                        "no_permission": the power and energy reads return
//                          NVML_ERROR_NO_PERMISSION (4);
//                        "pre_volta": the energy read returns NVML_ERROR_NOT_SUPPORTED (3);
//                        "backwards": from T0 + FAKE_NVML_BACKWARDS_MS (default 50) ms on, the
//                          energy counter reads 1 000 000 mJ less (a driver reload);
//                        "transient": from T0 + FAKE_NVML_FAIL_MS (default 20) ms on, the next
//                          FAKE_NVML_FAIL_READS (default 3) calls of FAKE_NVML_FAIL_CALL ("energy",
//                          the default, or "power") return FAKE_NVML_FAIL_CODE (default 999,
//                          NVML_ERROR_UNKNOWN); the calls after them answer again;
//                        "throw": the first energy read from T0 + FAKE_NVML_FAIL_MS ms on throws
//                          std::bad_alloc (an allocation failing on the sampling thread);
//                        "hang": the first power read from T0 + FAKE_NVML_FAIL_MS ms on takes
//                          FAKE_NVML_HANG_MS (default 500) ms to answer.
//   FAKE_NVML_MIG        "1": nvmlDeviceGetMigMode says every device is in MIG mode (default: none).
// The energy counter is E(t) = 5 000 000 mJ + the integral of the power from T0 to t, rounded down
// to whole mJ (negative before T0). Readings are counted (fake_nvml_reads), and so are the
// nvmlShutdown calls (fake_nvml_shutdowns).
// Built without nvmlDeviceGetTotalEnergyConsumption when FAKE_NVML_NO_ENERGY is defined
// (libfake_nvml_old.so: a driver older than the energy counter).
#include <time.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct Step {
  double from_ms;
  double watts;
};

struct State {
  std::mutex mutex;
  uint64_t base_ns = 0;
  std::vector<Step> curve;  // ascending from_ms; the first one from -infinity
  std::vector<uint32_t> cuda_ids;
  std::vector<double> scale;
  double energy_update_ms = 0;
  std::string scenario;
  double backwards_ms = 50;
  double fail_ms = 20;
  std::string fail_call;
  int fail_code = 999;
  std::atomic<int64_t> fail_left{0};  // failures ("transient") or throws/hangs ("throw", "hang") left
  double hang_ms = 500;
  bool mig = false;
  std::atomic<uint64_t> reads{0};
  int inits = 0;
  std::atomic<uint64_t> shutdowns{0};
};

State& state() {
  static State* s = new State();
  return *s;
}

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::string env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : std::string(fallback);
}

void configure() {
  State& s = state();
  s.curve.clear();
  s.cuda_ids.clear();
  s.scale.clear();
  s.base_ns = now_ns();
  const std::string curve = env("FAKE_NVML_POWER_W", "100");
  std::size_t pos = 0;
  bool first = true;
  while (pos <= curve.size()) {
    const std::size_t comma = curve.find(',', pos);
    const std::string item = curve.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (first) {
      s.curve.push_back({-1e300, std::strtod(item.c_str(), nullptr)});
      first = false;
    } else {
      const std::size_t colon = item.find(':');
      s.curve.push_back(
          {std::strtod(item.substr(0, colon).c_str(), nullptr), std::strtod(item.substr(colon + 1).c_str(), nullptr)});
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  const std::string ids = env("FAKE_NVML_DEVICES", "0");
  pos = 0;
  while (pos <= ids.size()) {
    const std::size_t comma = ids.find(',', pos);
    s.cuda_ids.push_back(static_cast<uint32_t>(std::strtoul(ids.substr(pos, comma - pos).c_str(), nullptr, 10)));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  for (std::size_t n = 0; n < s.cuda_ids.size(); ++n) {
    const std::string key = "FAKE_NVML_SCALE_" + std::to_string(n);
    s.scale.push_back(std::strtod(env(key.c_str(), "1").c_str(), nullptr));
  }
  s.energy_update_ms = std::strtod(env("FAKE_NVML_ENERGY_UPDATE_MS", "0").c_str(), nullptr);
  s.scenario = env("FAKE_NVML_SCENARIO", "");
  s.backwards_ms = std::strtod(env("FAKE_NVML_BACKWARDS_MS", "50").c_str(), nullptr);
  s.fail_ms = std::strtod(env("FAKE_NVML_FAIL_MS", "20").c_str(), nullptr);
  s.fail_call = env("FAKE_NVML_FAIL_CALL", "energy");
  s.fail_code = static_cast<int>(std::strtol(env("FAKE_NVML_FAIL_CODE", "999").c_str(), nullptr, 10));
  s.fail_left = s.scenario == "transient" ? std::strtoll(env("FAKE_NVML_FAIL_READS", "3").c_str(), nullptr, 10) : 1;
  s.hang_ms = std::strtod(env("FAKE_NVML_HANG_MS", "500").c_str(), nullptr);
  s.mig = env("FAKE_NVML_MIG", "0") == "1";
}

// Watts at ms after T0.
double watts_at(double ms) {
  const State& s = state();
  double w = s.curve.front().watts;
  for (const Step& st : s.curve) {
    if (ms >= st.from_ms) w = st.watts;
  }
  return w;
}

// Integral of the curve from T0 to ms after T0, in joules (negative before T0).
double joules_to(double ms) {
  const State& s = state();
  const double lo = std::min(0.0, ms);
  const double hi = std::max(0.0, ms);
  double j = 0;
  for (std::size_t i = 0; i < s.curve.size(); ++i) {
    const double a = std::max(lo, s.curve[i].from_ms);
    const double b = std::min(hi, i + 1 < s.curve.size() ? s.curve[i + 1].from_ms : 1e300);
    if (b > a) j += s.curve[i].watts * (b - a) / 1000.0;
  }
  return ms >= 0 ? j : -j;
}

struct Device {
  uint32_t index;
};
Device g_devices[16];

int device_index(void* handle) {
  const State& s = state();
  for (std::size_t i = 0; i < s.cuda_ids.size() && i < 16; ++i) {
    if (handle == &g_devices[i]) return static_cast<int>(i);
  }
  return -1;
}

double elapsed_ms() { return static_cast<double>(static_cast<int64_t>(now_ns() - state().base_ns)) / 1e6; }

// Whether this call of `call` ("energy" or "power") is one the scenario `scenario` acts on: from
// T0 + FAKE_NVML_FAIL_MS on, while failures are left (each call acted on uses one).
bool scripted(const char* scenario, const char* call) {
  State& s = state();
  if (s.scenario != scenario || (s.scenario == "transient" && s.fail_call != call)) return false;
  if (elapsed_ms() < s.fail_ms) return false;
  return s.fail_left.fetch_sub(1) > 0;
}

}  // namespace

FAKE_EXPORT int nvmlInit_v2() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.inits == 0) configure();
  if (s.scenario == "init_fails") return 9;  // NVML_ERROR_DRIVER_NOT_LOADED
  ++s.inits;
  return 0;
}

FAKE_EXPORT int nvmlShutdown() {
  std::lock_guard<std::mutex> lock(state().mutex);
  --state().inits;
  state().shutdowns.fetch_add(1);
  return 0;
}

FAKE_EXPORT int nvmlDeviceGetCount_v2(unsigned* count) {
  if (count == nullptr) return 2;
  *count = static_cast<unsigned>(std::min<std::size_t>(state().cuda_ids.size(), 16));
  return 0;
}

FAKE_EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
  if (device == nullptr || index >= state().cuda_ids.size() || index >= 16) return 2;
  g_devices[index].index = index;
  *device = &g_devices[index];
  return 0;
}

FAKE_EXPORT int nvmlDeviceGetUUID(void* device, char* uuid, unsigned length) {
  const int i = device_index(device);
  if (i < 0 || uuid == nullptr) return 2;
  unsigned char b[16];
  for (int k = 0; k < 16; ++k)
    b[k] = static_cast<unsigned char>(k + 16 * state().cuda_ids[static_cast<std::size_t>(i)]);
  char text[64];
  std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  if (std::strlen(text) + 1 > length) return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  std::memcpy(uuid, text, std::strlen(text) + 1);
  return 0;
}

FAKE_EXPORT int nvmlDeviceGetPowerUsage(void* device, unsigned* power) {
  const int i = device_index(device);
  if (i < 0 || power == nullptr) return 2;
  if (state().scenario == "no_permission") return 4;
  if (scripted("transient", "power")) return state().fail_code;
  if (scripted("hang", "power")) {
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(state().hang_ms * 1000)));
  }
  state().reads.fetch_add(1);
  *power =
      static_cast<unsigned>(std::llround(watts_at(elapsed_ms()) * state().scale[static_cast<std::size_t>(i)] * 1000));
  return 0;
}

#ifndef FAKE_NVML_NO_ENERGY
FAKE_EXPORT int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* energy) {
  const int i = device_index(device);
  if (i < 0 || energy == nullptr) return 2;
  const State& s = state();
  if (s.scenario == "no_permission") return 4;
  if (s.scenario == "pre_volta") return 3;  // NVML_ERROR_NOT_SUPPORTED
  if (scripted("transient", "energy")) return s.fail_code;
  if (scripted("throw", "energy")) throw std::bad_alloc();
  state().reads.fetch_add(1);
  double ms = elapsed_ms();
  const bool reloaded = s.scenario == "backwards" && ms >= s.backwards_ms;
  if (s.energy_update_ms > 0) ms = std::floor(ms / s.energy_update_ms) * s.energy_update_ms;
  const double mj = 5e6 + joules_to(ms) * 1000 * s.scale[static_cast<std::size_t>(i)] - (reloaded ? 1e6 : 0);
  *energy = static_cast<unsigned long long>(std::floor(mj));
  return 0;
}
#endif

FAKE_EXPORT int nvmlDeviceGetMigMode(void* device, unsigned* current, unsigned* pending) {
  if (device_index(device) < 0 || current == nullptr || pending == nullptr) return 2;
  *current = *pending = state().mig ? 1 : 0;  // NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE
  return 0;
}

FAKE_EXPORT const char* nvmlErrorString(int rc) { return rc == 0 ? "Success" : "fake NVML error"; }

// Test control.
FAKE_EXPORT uint64_t fake_nvml_base_ns() { return state().base_ns; }
FAKE_EXPORT uint64_t fake_nvml_reads() { return state().reads.load(); }
FAKE_EXPORT int fake_nvml_open_inits() { return state().inits; }
FAKE_EXPORT uint64_t fake_nvml_shutdowns() { return state().shutdowns.load(); }

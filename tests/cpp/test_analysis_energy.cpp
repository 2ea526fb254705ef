// Energy analysis (analysis/energy_analysis.hpp) on hand-built power samples; every expected
// value is worked out by hand in the comments.
#include <catch2/catch.hpp>

#include <variant>

#include "fpgaprof/analysis/energy_analysis.hpp"
#include "fpgaprof/analysis/region_paths.hpp"
#include "fpgaprof/analysis/result_schema.hpp"
#include "fpgaprof/analysis/trace_analysis.hpp"

using namespace fpgaprof;
using namespace fpgaprof::analysis;

namespace {

constexpr uint64_t T = 1'000'000'000;  // time base, ns
constexpr uint64_t ms = 1'000'000;

void sample(TraceStore& s, uint32_t device, uint64_t t_ms, uint64_t energy_mj, uint32_t power_mw) {
  PowerSampleRecord r;
  r.time_ns = T + t_ms * ms;
  r.device_id = device;
  r.energy_mj = energy_mj;
  r.power_mw = power_mw;
  s.power_samples.push_back(r);
}

uint32_t region(TraceStore& s, const char* name, uint64_t start_ms, uint64_t end_ms) {
  RegionRecord r;
  r.start_ns = T + start_ms * ms;
  r.end_ns = T + end_ms * ms;
  r.thread_id = 1;
  r.name = s.strings.intern(name);
  s.regions.push_back(r);
  return static_cast<uint32_t>(s.regions.size() - 1);
}

void kernel(TraceStore& s, uint32_t device, uint64_t start_ms, uint64_t end_ms) {
  KernelRecord k;
  k.start_ns = T + start_ms * ms;
  k.end_ns = T + end_ms * ms;
  k.device_id = device;
  s.kernels.push_back(k);
}

EnergyReport run(const TraceStore& s, const std::vector<uint32_t>& op_of_kernel = {}) {
  const RegionPaths paths(s);
  return analyze_energy(s, paths, op_of_kernel);
}

const EnergyWindow& region_row(const EnergyReport& r, uint32_t region_index, uint32_t device = 0) {
  for (const auto& [i, w] : r.regions) {
    if (i == region_index && w.device_id == device) return w;
  }
  FAIL("no row for region " << region_index << " on device " << device);
  static EnergyWindow none;
  return none;
}

// The value the analysis result writes for field `name` of `row` (table: the schema's fields).
template <class Row>
FieldValue written(const ResultTable<Row, NoContext>& table, const Row& row, const std::string& name) {
  for (const auto& f : table)
    if (f.info.name == name) return f.get(row, NoContext{});
  FAIL("no field " << name);
  return {};
}

bool is_null(const FieldValue& v) { return std::holds_alternative<std::monostate>(v); }

// Constant 250 W, readings every 10 ms from 0 to 40 ms, counter from 1000 mJ: 250 W x 10 ms =
// 2500 mJ per interval.
TraceStore constant_250w() {
  TraceStore s;
  for (uint64_t i = 0; i <= 4; ++i) sample(s, 0, 10 * i, 1000 + 2500 * i, 250'000);
  return s;
}

}  // namespace

TEST_CASE("a constant 250 W for 40 ms is 10 J", "[analysis][energy]") {
  TraceStore s = constant_250w();
  const uint32_t whole = region(s, "whole", 0, 40);
  const uint32_t straddle = region(s, "straddle", 5, 25);  // between readings at both ends
  const EnergyReport r = run(s);
  REQUIRE(r.measured);
  REQUIRE(r.devices.size() == 1);
  CHECK(r.devices[0].joules == Approx(10.0));  // 250 W x 0.040 s
  CHECK(r.devices[0].mean_w == Approx(250.0));
  CHECK(r.devices[0].peak_w == Approx(250.0));
  CHECK(r.devices[0].has_counter);
  CHECK(r.total_joules == Approx(10.0));
  const EnergyWindow& w = region_row(r, whole);
  CHECK(w.joules == Approx(10.0));
  CHECK(w.mean_w == Approx(250.0));
  CHECK(w.peak_w == Approx(250.0));
  CHECK(w.coverage_ns == 40 * ms);
  CHECK(w.from_counter);
  // 20 ms of 250 W, interpolated inside the first and third intervals: 5 J.
  CHECK(region_row(r, straddle).joules == Approx(5.0));
  // Nothing ran on the device: all of it is idle energy, idle power 250 W.
  CHECK(r.idle_joules == Approx(10.0));
  CHECK(r.devices[0].idle_w == Approx(250.0));
  CHECK(r.devices[0].idle_ns == 40 * ms);
}

TEST_CASE("a power ramp: the counter's steps are interpolated linearly", "[analysis][energy]") {
  // P(t) = 100 + 5000 t W (100 W at 0, 300 W at 40 ms), E(t) = 100 t + 2500 t^2 J:
  // at 0, 10, 20, 30, 40 ms: 0, 1.25, 3.0, 5.25, 8.0 J (counter from 500 mJ).
  TraceStore s;
  const uint64_t e[] = {0, 1250, 3000, 5250, 8000};
  for (uint64_t i = 0; i <= 4; ++i) sample(s, 0, 10 * i, 500 + e[i], static_cast<uint32_t>(100'000 + 50'000 * i));
  const uint32_t whole = region(s, "whole", 0, 40);
  const uint32_t mid = region(s, "mid", 15, 25);
  const EnergyReport r = run(s);
  CHECK(region_row(r, whole).joules == Approx(8.0));
  CHECK(region_row(r, whole).mean_w == Approx(200.0));  // 8 J / 40 ms
  // The readings in force during [0, 40): up to 250 W (from 30 ms); the 300 W read at 40 ms is
  // in force after the window.
  CHECK(region_row(r, whole).peak_w == Approx(250.0));
  // C(15) = 1.25 + 0.5 x 1.75 = 2.125, C(25) = 3.0 + 0.5 x 2.25 = 4.125: 2.0 J, which is also
  // the ramp's true integral E(25) - E(15) = 4.0625 - 2.0625.
  CHECK(region_row(r, mid).joules == Approx(2.0));
  CHECK(region_row(r, mid).mean_w == Approx(200.0));
  // Readings in force during [15, 25]: 150 W (from 10 ms) and 200 W (from 20 ms).
  CHECK(region_row(r, mid).peak_w == Approx(200.0));
}

TEST_CASE("a counter that steps every 20 ms between 5 ms readings is interpolated between its steps",
          "[analysis][energy]") {
  // 250 W; readings every 5 ms; the counter changes only at 20 and 40 ms (by 5 J each).
  TraceStore s;
  for (uint64_t t = 0; t <= 40; t += 5) sample(s, 0, t, t < 20 ? 1000 : t < 40 ? 6000 : 11000, 250'000);
  const uint32_t early = region(s, "early", 5, 15);
  const EnergyReport r = run(s);
  // Knots at 0, 20 and 40 ms: 10 ms inside the first step is 2.5 J (a staircase would say 0).
  CHECK(region_row(r, early).joules == Approx(2.5));
  CHECK(r.devices[0].joules == Approx(10.0));
}

TEST_CASE("a counter read more often than it steps: the curve spans its first step to its last", "[analysis][energy]") {
  // 100 W; the counter adds 2 J every 20 ms (at 20, 40, 60, 80 ms); readings every 5 ms from 19
  // to 99 ms. The first rise is seen at 24 ms, 5 ms after the first reading, well under the
  // 20 ms between rises: that step's 2 J accrued mostly before the trace, so the curve starts
  // at 24 ms; it ends at the last rise, 84 ms (the readings after it saw energy not yet added).
  // Knots 24, 44, 64, 84 ms at 0, 2, 4, 6 J: 6 J over 60 ms = 100 W.
  TraceStore s;
  for (uint64_t t = 19; t <= 99; t += 5) sample(s, 0, t, 1000 + 2000 * (t / 20), 100'000);
  const uint32_t head = region(s, "head", 19, 20);
  const uint32_t mid = region(s, "mid", 30, 40);
  const uint32_t tail = region(s, "tail", 85, 99);
  const EnergyReport r = run(s);
  CHECK(r.devices[0].joules == Approx(6.0));
  CHECK(r.devices[0].mean_w == Approx(100.0));
  CHECK(r.devices[0].first_ns == T + 24 * ms);
  CHECK(r.devices[0].last_ns == T + 84 * ms);
  // Inside the curve: 10 ms of 100 W = 1 J (the truth).
  CHECK(region_row(r, mid).joules == Approx(1.0));
  CHECK(region_row(r, mid).coverage_ns == 10 * ms);
  // Outside it: not sampled (coverage 0), where the first step read 0.4 J for 1 ms (400 W) and
  // the flat end 0 J with full coverage.
  CHECK(region_row(r, head).coverage_ns == 0);
  CHECK(region_row(r, tail).coverage_ns == 0);
}

TEST_CASE("without an energy counter the power readings are integrated", "[analysis][energy]") {
  // 100 W from 0, 300 W from 10 ms, 100 W from 30 ms, last reading at 40 ms:
  // 100 x 0.01 + 300 x 0.02 + 100 x 0.01 = 8 J.
  TraceStore s;
  sample(s, 0, 0, kNoEnergy, 100'000);
  sample(s, 0, 10, kNoEnergy, 300'000);
  sample(s, 0, 30, kNoEnergy, 100'000);
  sample(s, 0, 40, kNoEnergy, 100'000);
  const uint32_t whole = region(s, "whole", 0, 40);
  const uint32_t edge = region(s, "edge", 5, 15);  // 5 ms at 100 W + 5 ms at 300 W = 2 J
  const EnergyReport r = run(s);
  CHECK_FALSE(r.devices[0].has_counter);
  CHECK(r.devices[0].joules == Approx(8.0));
  CHECK(region_row(r, whole).joules == Approx(8.0));
  CHECK_FALSE(region_row(r, whole).from_counter);
  CHECK(region_row(r, edge).joules == Approx(2.0));
  CHECK(region_row(r, edge).peak_w == Approx(300.0));
}

TEST_CASE("an interval whose counter went backwards takes the power readings instead", "[analysis][energy]") {
  // 200 W; counter 10000 -> 12000 (2 J), reload to 500 at 20 ms, then 2500 (2 J). The middle
  // interval: 200 W x 10 ms = 2 J from the power. Total 6 J.
  TraceStore s;
  sample(s, 0, 0, 10000, 200'000);
  sample(s, 0, 10, 12000, 200'000);
  sample(s, 0, 20, 500, 200'000);
  sample(s, 0, 30, 2500, 200'000);
  const uint32_t first = region(s, "first", 0, 10);
  const uint32_t bad = region(s, "bad", 12, 18);
  const EnergyReport r = run(s);
  CHECK(r.devices[0].backwards_intervals == 1);
  CHECK(r.devices[0].joules == Approx(6.0));
  CHECK(region_row(r, first).from_counter);
  CHECK(region_row(r, first).joules == Approx(2.0));
  CHECK_FALSE(region_row(r, bad).from_counter);
  CHECK(region_row(r, bad).joules == Approx(1.2));  // 6 ms at 200 W
}

TEST_CASE("a counter that never changes while read gives way to the power readings, with a warning",
          "[analysis][energy]") {
  // 250 W read every 10 ms from 0 to 40 ms while the counter stays at 1000 mJ (its update period
  // longer than the trace): 250 W x 40 ms = 10 J from the power, not 0 J from the counter.
  TraceStore s;
  for (uint64_t i = 0; i <= 4; ++i) sample(s, 0, 10 * i, 1000, 250'000);
  const uint32_t r0 = region(s, "solve", 5, 25);
  s.meta.power_sample_period_ns = 10 * ms;
  const EnergyReport r = run(s);
  REQUIRE(r.devices.size() == 1);
  CHECK(r.devices[0].has_counter);
  CHECK(r.devices[0].flat_counter);
  CHECK(r.devices[0].joules == Approx(10.0));
  CHECK(r.devices[0].mean_w == Approx(250.0));
  const EnergyWindow& w = region_row(r, r0);
  CHECK(w.joules == Approx(5.0));  // 250 W x 20 ms
  CHECK(w.mean_w == Approx(250.0));
  CHECK_FALSE(w.from_counter);
  const TraceAnalysis a = analyze_trace(s);
  bool warned = false;
  for (const Diagnostic& d : a.warnings.items()) warned |= d.code() == "energy.counter_flat";
  CHECK(warned);
  // One step anywhere and the counter is trusted again (the constant 250 W case: 10 J).
  TraceStore t = constant_250w();
  CHECK_FALSE(run(t).devices[0].flat_counter);
}

TEST_CASE("a reading without power is no reading: the power before it holds", "[analysis][energy]") {
  // Counter 10000 -> 12000 (2 J over [0,10] at 200 W), reload to 500 at 20 ms with its power
  // unread, then 2500 (2 J). The backwards interval [10,20] takes the power in force: the
  // 200 W read at 10 ms (not 0 W for the unread one at 20 ms, which begins no interval here):
  // 2 J. And [20,30] is from the counter. Total 6 J, as if every power had been read.
  TraceStore s;
  sample(s, 0, 0, 10000, 200'000);
  sample(s, 0, 10, 12000, kNoPower);
  sample(s, 0, 20, 500, kNoPower);
  sample(s, 0, 30, 2500, 200'000);
  const uint32_t bad = region(s, "bad", 12, 18);
  const EnergyReport r = run(s);
  CHECK(r.devices[0].backwards_intervals == 1);
  CHECK(r.devices[0].joules == Approx(6.0));
  CHECK(region_row(r, bad).joules == Approx(1.2));    // 6 ms at 200 W
  CHECK(region_row(r, bad).peak_w == Approx(200.0));  // the power in force, not 0 W
  CHECK_FALSE(region_row(r, bad).from_counter);

  // Without a counter: 100 W read at 0 ms, unread at 10 and 20 ms, 300 W at 30 ms, end at 40 ms:
  // 100 W holds over [0,30] (3 J), 300 W over [30,40] (3 J): 6 J. Leading readings without
  // power take the first known one: unread at 0, 50 W at 10, end at 20: 50 W x 20 ms = 1 J.
  TraceStore n;
  sample(n, 0, 0, kNoEnergy, 100'000);
  sample(n, 0, 10, kNoEnergy, kNoPower);
  sample(n, 0, 20, kNoEnergy, kNoPower);
  sample(n, 0, 30, kNoEnergy, 300'000);
  sample(n, 0, 40, kNoEnergy, 300'000);
  sample(n, 1, 0, kNoEnergy, kNoPower);
  sample(n, 1, 10, kNoEnergy, 50'000);
  sample(n, 1, 20, kNoEnergy, 50'000);
  const EnergyReport rn = run(n);
  REQUIRE(rn.devices.size() == 2);
  CHECK(rn.devices[0].joules == Approx(6.0));
  CHECK(rn.devices[1].joules == Approx(1.0));
}

TEST_CASE("power unread twice in a row (the sampler gave up reading it): the peak is unknown", "[analysis][energy]") {
  // 50 W read at 0 and 10 ms; power unread from 20 ms on while the counter goes on at 300 W
  // (3000 mJ per 10 ms). [22,28) is in force of the first unread reading: the 50 W before it
  // holds (a read that failed once). [32,38) is in force of the second in a row: no power is
  // known there, so no peak (0), rather than the 50 W of 20 ms before under its 300 W mean.
  TraceStore s;
  sample(s, 0, 0, 0, 50'000);
  sample(s, 0, 10, 500, 50'000);
  sample(s, 0, 20, 3500, kNoPower);
  sample(s, 0, 30, 6500, kNoPower);
  sample(s, 0, 40, 9500, kNoPower);
  const uint32_t once = region(s, "once", 22, 28);
  const uint32_t after = region(s, "after", 32, 38);
  const EnergyReport r = run(s);
  CHECK(region_row(r, once).peak_w == Approx(50.0));
  CHECK(region_row(r, after).mean_w == Approx(300.0));
  CHECK(region_row(r, after).peak_w == 0.0);
  CHECK(region_row(r, after).joules == Approx(1.8));  // the counter's: 6 ms at 300 W
  // The device: its peak by the same rule (the 50 W read before the failures is no peak of a
  // GPU that drew 300 W after them): unknown, null in the result. Idle power rests on the
  // readings with power: [0,20) ms at 50 W, nothing running: idle_w 50 W over idle_ns 20 ms;
  // the readings without power, [20,40) ms, are no_power_ns 20 ms.
  const DeviceEnergy& d = r.devices[0];
  CHECK(d.peak_w == 0.0);
  CHECK(is_null(written(energy_device_row_fields(), d, "peak_w")));
  CHECK(d.idle_w == Approx(50.0));
  CHECK(d.idle_ns == 20 * ms);
  CHECK(d.no_power_ns == 20 * ms);
  CHECK(d.mean_w == Approx(237.5));  // 9.5 J over 40 ms
}

TEST_CASE("a device without any power reading has no peak and no idle power", "[analysis][energy]") {
  // Counter only (every power read refused): 10 J over 40 ms from the counter, peak and idle
  // power unknown (null), not 0 W; the whole record is no_power_ns.
  TraceStore s;
  for (uint64_t i = 0; i <= 4; ++i) sample(s, 0, 10 * i, 1000 + 2500 * i, kNoPower);
  const EnergyReport r = run(s);
  const DeviceEnergy& d = r.devices[0];
  CHECK(d.joules == Approx(10.0));
  CHECK(is_null(written(energy_device_row_fields(), d, "peak_w")));
  CHECK(is_null(written(energy_device_row_fields(), d, "idle_w")));
  CHECK(d.idle_ns == 0);
  CHECK(d.no_power_ns == 40 * ms);
}

TEST_CASE("ops get the busy part of each interval by their share of the busy time", "[analysis][energy]") {
  // Readings every 10 ms from 0 to 100 ms; power 50 W, 300 W from 30 ms, 50 W from 80 ms; the
  // counter adds power x 10 ms per interval: 0.5 J (x3), 3 J (x5), 0.5 J (x2) = 17.5 J.
  TraceStore s;
  uint64_t e = 0;
  for (uint64_t t = 0; t <= 100; t += 10) {
    const uint32_t mw = t < 30 ? 50'000 : t < 80 ? 300'000 : 50'000;
    sample(s, 0, t, e, mw);
    e += mw / 100;  // mW x 10 ms = mW / 100 mJ
  }
  kernel(s, 0, 30, 50);  // op 0 (A)
  kernel(s, 0, 50, 70);  // op 1 (B)
  kernel(s, 0, 35, 45);  // no op, overlapping A
  MemcpyRecord c;
  c.start_ns = T + 85 * ms;
  c.end_ns = T + 90 * ms;
  c.device_id = 0;
  s.memcpys.push_back(c);
  const EnergyReport r = run(s, {0, 1, kNone32});
  CHECK(r.devices[0].joules == Approx(17.5));
  // [30,40] and [40,50]: 3 J each, all busy; A ran 10 ms and the unattributed kernel 5 ms of
  // the 15 ms of activity: A 2 J + 2 J = 4 J, unattributed 1 J + 1 J = 2 J. B: [50,70] 6 J.
  REQUIRE(r.ops.size() == 2);
  CHECK(r.ops[0].op == 1);
  CHECK(r.ops[0].joules == Approx(6.0));
  CHECK(r.ops[0].busy_ns == 20 * ms);
  CHECK(r.ops[1].op == 0);
  CHECK(r.ops[1].joules == Approx(4.0));
  CHECK(r.unattributed_joules == Approx(2.0));
  // [80,90]: 0.5 J, busy 5 of 10 ms: the copy 0.25 J, idle 0.25 J.
  CHECK(r.copies_joules == Approx(0.25));
  // Idle: [0,30] 1.5 J + [70,80] 3 J + 0.25 J + [90,100] 0.5 J = 5.25 J; everything adds up.
  CHECK(r.idle_joules == Approx(5.25));
  CHECK(r.ops[0].joules + r.ops[1].joules + r.unattributed_joules + r.copies_joules + r.idle_joules ==
        Approx(r.total_joules));
  // Idle power: 50 W in force for 45 ms of idle time (0-30, 80-85, 90-100), 300 W for 10 ms
  // (70-80): the time-weighted median is 50 W.
  CHECK(r.devices[0].idle_w == Approx(50.0));
  CHECK(r.devices[0].idle_ns == 55 * ms);
  CHECK(r.devices[0].peak_w == Approx(300.0));
  CHECK(r.devices[0].mean_w == Approx(175.0));  // 17.5 J / 100 ms
}

TEST_CASE("kernels get their attributed joules per region path and op, no idle or other GPU's", "[analysis][energy]") {
  // The 17.5 J device of the case above, with regions: "solve" [0, 100] ms around "step"
  // [25, 60] ms; A [30, 50] and the unattributed kernel [35, 45] launched in step, B [50, 70] in
  // solve. A second GPU (device 1) idles at 100 W through it all with no kernel.
  TraceStore s;
  uint64_t e = 0;
  for (uint64_t t = 0; t <= 100; t += 10) {
    const uint32_t mw = t < 30 ? 50'000 : t < 80 ? 300'000 : 50'000;
    sample(s, 0, t, e, mw);
    sample(s, 1, t, 1000 * t / 10, 100'000);
    e += mw / 100;
  }
  const uint32_t solve = region(s, "solve", 0, 100);
  const uint32_t step = region(s, "step", 25, 60);
  s.regions[step].parent = solve;
  s.regions[step].depth = 1;
  kernel(s, 0, 30, 50);
  kernel(s, 0, 50, 70);
  kernel(s, 0, 35, 45);
  s.kernels[0].region_index = step;
  s.kernels[1].region_index = solve;
  s.kernels[2].region_index = step;
  const RegionPaths paths(s);
  const EnergyReport r = analyze_energy(s, paths, {0, 1, kNone32});
  const uint32_t step_path = paths.path_of(step), solve_path = paths.path_of(solve);
  REQUIRE(step_path != solve_path);
  const auto kernels_of = [&](uint32_t p, uint32_t op) -> PathOpEnergy {
    for (const PathOpEnergy& k : r.path_op_kernels)
      if (k.path == p && k.op == op) return k;
    FAIL("no kernel energy for path " << p << ", op " << op);
    return {};
  };
  // step: A 4 J over 20 ms, the unattributed kernel 2 J over 10 ms; solve (its own kernels):
  // B 6 J over 20 ms. Per innermost path: the FPGA region rows add a sub-path's to its parent.
  CHECK(kernels_of(step_path, 0).joules == Approx(4.0));
  CHECK(kernels_of(step_path, 0).busy_ns == 20 * ms);
  CHECK(kernels_of(step_path, kNone32).joules == Approx(2.0));
  CHECK(kernels_of(step_path, kNone32).busy_ns == 10 * ms);
  CHECK(kernels_of(solve_path, 1).joules == Approx(6.0));
  CHECK(kernels_of(solve_path, 1).busy_ns == 20 * ms);
  CHECK(r.path_op_kernels.size() == 3);
  // Its window on device 0 holds all 17.5 J and on device 1 another 10 J, none of which the
  // kernels' rows take.
  CHECK(region_row(r, solve, 0).joules == Approx(17.5));
  CHECK(region_row(r, solve, 1).joules == Approx(10.0));
}

TEST_CASE("several GPUs: per device totals and one region row per device", "[analysis][energy]") {
  TraceStore s = constant_250w();                                             // device 0: 10 J
  for (uint64_t i = 0; i <= 4; ++i) sample(s, 3, 10 * i, 1000 * i, 100'000);  // device 3: 100 W, 1 J per 10 ms
  const uint32_t whole = region(s, "whole", 0, 40);
  const EnergyReport r = run(s);
  REQUIRE(r.devices.size() == 2);
  CHECK(r.devices[0].device_id == 0);
  CHECK(r.devices[1].device_id == 3);
  CHECK(r.devices[0].joules == Approx(10.0));
  CHECK(r.devices[1].joules == Approx(4.0));
  CHECK(r.total_joules == Approx(14.0));
  CHECK(region_row(r, whole, 0).joules == Approx(10.0));
  CHECK(region_row(r, whole, 3).joules == Approx(4.0));
  CHECK(region_row(r, whole, 3).mean_w == Approx(100.0));
}

TEST_CASE("a region path sums its instances, and a window past the samples counts what was sampled",
          "[analysis][energy]") {
  TraceStore s = constant_250w();
  const uint32_t a = region(s, "step", 0, 10);
  const uint32_t b = region(s, "step", 20, 30);
  const uint32_t late = region(s, "late", 30, 60);  // samples end at 40 ms
  const EnergyReport r = run(s);
  const RegionPaths paths(s);
  const uint32_t step = paths.path_of(a);
  REQUIRE(paths.path_of(b) == step);
  bool found = false;
  for (const auto& [p, w] : r.region_paths) {
    if (p != step) continue;
    found = true;
    CHECK(w.joules == Approx(5.0));  // 2.5 J + 2.5 J
    CHECK(w.duration_ns == 20 * ms);
    CHECK(w.mean_w == Approx(250.0));
  }
  CHECK(found);
  const EnergyWindow& w = region_row(r, late);
  CHECK(w.duration_ns == 30 * ms);
  CHECK(w.coverage_ns == 10 * ms);
  CHECK(w.joules == Approx(2.5));
  CHECK(w.mean_w == Approx(250.0));  // over the covered 10 ms
}

TEST_CASE("a window with no sampled time measured nothing: null, not 0 J", "[analysis][energy]") {
  // Samples from 0 to 40 ms; "after" [50,60) and "before" [-) lie wholly outside them: no
  // sampled time, so their joules, mean and peak are unknown (null in the result), where the
  // window [30,60) that is sampled for 10 ms keeps its 2.5 J. A path of such windows only is
  // unknown too; one instance sampled makes its path's joules those of the sampled instance.
  TraceStore s = constant_250w();
  const uint32_t after = region(s, "after", 50, 60);
  const uint32_t part = region(s, "part", 30, 60);
  RegionRecord before;
  before.start_ns = T - 20 * ms;
  before.end_ns = T - 10 * ms;
  before.thread_id = 1;
  before.name = s.strings.intern("before");
  s.regions.push_back(before);
  const uint32_t before_i = static_cast<uint32_t>(s.regions.size() - 1);
  const EnergyReport r = run(s);
  const auto& fields = energy_window_fields();
  for (const uint32_t i : {after, before_i}) {
    const EnergyWindow& w = region_row(r, i);
    INFO("region " << i);
    CHECK(w.coverage_ns == 0);
    CHECK(w.duration_ns == 10 * ms);
    CHECK(is_null(written(fields, w, "joules")));
    CHECK(is_null(written(fields, w, "mean_w")));
    CHECK(is_null(written(fields, w, "peak_w")));
  }
  const EnergyWindow& p = region_row(r, part);
  CHECK(std::get<double>(written(fields, p, "joules")) == Approx(2.5));
  CHECK(std::get<double>(written(fields, p, "peak_w")) == Approx(250.0));
  const RegionPaths paths(s);
  for (const auto& [path, w] : r.region_paths) {
    if (path != paths.path_of(after)) continue;
    CHECK(w.coverage_ns == 0);
    CHECK(is_null(written(fields, w, "joules")));
  }
}

TEST_CASE("a trace without power samples has no energy, and analyze_trace carries it", "[analysis][energy]") {
  TraceStore s;
  region(s, "r", 0, 10);
  CHECK_FALSE(run(s).measured);
  TraceStore t = constant_250w();
  t.meta.power_sample_period_ns = ms;
  t.meta.energy_update_period_ns = 10 * ms;
  const TraceAnalysis a = analyze_trace(t);
  CHECK(a.energy.measured);
  CHECK(a.energy.total_joules == Approx(10.0));
  CHECK(a.energy.sample_period_ns == ms);
  CHECK(a.energy.update_period_ns == 10 * ms);
}

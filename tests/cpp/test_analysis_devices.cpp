// Several GPUs in one process: per-device rows and load balance (analyze_devices), and regions
// and ops attributed across per-device host threads (correlate + the per-path analyses). Every
// expected number is worked out by hand in the comments.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "analysis_fixture.hpp"
#include "transfer_fixture.hpp"

#include "fpgaprof/analysis/device_analysis.hpp"
#include "fpgaprof/analysis/interval_set.hpp"
#include "fpgaprof/analysis/memory_analysis.hpp"
#include "fpgaprof/analysis/region_paths.hpp"
#include "fpgaprof/analysis/roofline.hpp"
#include "fpgaprof/analysis/transfer_analysis.hpp"
#include "fpgaprof/correlate.hpp"

using namespace fpgaprof;
using namespace fpgaprof::analysis;
using fpgaprof::testing::dir;
using fpgaprof::testing::group;
using fpgaprof::testing::sm80_device;

namespace {

KernelRecord kernel(uint32_t device, uint32_t thread, uint64_t s, uint64_t e) {
  KernelRecord k;
  k.device_id = device;
  k.thread_id = thread;
  k.start_ns = s;
  k.end_ns = e;
  return k;
}

MemcpyRecord copy(uint32_t device, CopyKind kind, uint64_t bytes, uint64_t s, uint64_t e) {
  MemcpyRecord c;
  c.device_id = device;
  c.copy_kind = kind;
  c.bytes = bytes;
  c.start_ns = s;
  c.end_ns = e;
  return c;
}

AllocationRecord alloc(uint32_t device, uint64_t address, uint64_t bytes, uint64_t at, bool is_alloc) {
  AllocationRecord a;
  a.device_id = device;
  a.address = address;
  a.bytes = bytes;
  a.timestamp_ns = at;
  a.is_alloc = is_alloc;
  return a;
}

const DeviceRow& row(const DeviceReport& r, uint32_t id) {
  for (const DeviceRow& d : r.devices)
    if (d.device_id == id) return d;
  FAIL("no row for device " << id);
  return r.devices.front();
}

const DeviceCopyStats& dstat(const DeviceRow& r, Direction d) { return r.by_direction[static_cast<std::size_t>(d)]; }

// Two devices, wall [0, 10000).
//   device 0: sm80 fixture (fp32 12.8e12 FLOP/s, DRAM 1.024e12 B/s), PCIe gen2 x16 =
//             16 x 5e9 x 8/10 / 8 = 8e9 B/s; kernels from thread 100.
//   device 1: sm80 with 50 SMs (fp32 50 x 128 x 1e9 = 6.4e12), PCIe gen1 x16 =
//             16 x 2.5e9 x 8/10 / 8 = 4e9 B/s; kernels from threads 200 and 300.
// Records are listed out of start order on purpose (the analysis sorts).
TraceStore two_devices() {
  TraceStore s;
  s.meta.start_ns = 0;
  s.meta.end_ns = 10000;
  DeviceInfo d0 = sm80_device();
  d0.id = 0;
  d0.name = "GPU zero";
  d0.pcie_generation = 2;
  d0.pcie_link_width = 16;
  DeviceInfo d1 = sm80_device();
  d1.id = 1;
  d1.name = "GPU one";
  d1.sm_count = 50;
  d1.pcie_generation = 1;
  d1.pcie_link_width = 16;
  s.devices = {d0, d1};
  s.kernels = {
      kernel(0, 100, 6000, 7000),  // K2
      kernel(0, 100, 1000, 3000),  // K0
      kernel(1, 200, 1000, 2000),  // K3
      kernel(0, 100, 2000, 4000),  // K1 (another stream: overlaps K0)
      kernel(1, 200, 2000, 2500),  // K4 (touches K3)
      kernel(1, 300, 5000, 5500),  // K5
  };
  s.memcpys = {
      copy(0, CopyKind::kHtoD, 8000, 0, 1500),     // C0
      copy(1, CopyKind::kHtoD, 3000, 500, 1500),   // C2
      copy(0, CopyKind::kDtoH, 4000, 7000, 7500),  // C1
      copy(1, CopyKind::kDtoD, 1000, 5200, 5300),  // C3
      copy(0, CopyKind::kHtoD, 500, 8000, 8000),   // C4: no duration
  };
  MemsetRecord m;
  m.device_id = 0;
  m.start_ns = 3500;
  m.end_ns = 4500;
  m.bytes = 256;
  s.memsets = {m};
  s.allocations = {
      alloc(0, 0x1000, 1000, 100, true), alloc(0, 0x2000, 3000, 200, true), alloc(0, 0x1000, 1000, 300, false),
      alloc(1, 0x1000, 5000, 400, true),  // never freed
  };
  return s;
}

}  // namespace

TEST_CASE("Per-device rows: kernels, busy and idle time, copies, link, memory, ceilings, threads",
          "[analysis][devices]") {
  const TraceStore s = two_devices();
  const DeviceReport r = analyze_devices(s);
  CHECK(r.wall_ns == 10000);
  REQUIRE(r.devices.size() == 2);
  CHECK(r.devices[0].device_id == 0);  // by id
  CHECK(r.devices[1].device_id == 1);

  const DeviceRow& a = row(r, 0);
  CHECK(a.has_record);
  CHECK(a.ceilings.device_name == "GPU zero");
  CHECK(a.ceilings.peak_flops_per_s[static_cast<std::size_t>(Precision::kFp32)] == Approx(12.8e12));
  CHECK(a.ceilings.dram_bytes_per_s == Approx(1.024e12));
  CHECK(a.ceilings.link_bytes_per_s == Approx(8e9));
  // Kernels K0 [1000,3000) K1 [2000,4000) K2 [6000,7000): 3, summed 2000 + 2000 + 1000 = 5000,
  // union [1000,4000) + [6000,7000) = 4000.
  CHECK(a.kernel_count == 3);
  CHECK(a.kernel_time_ns == 5000);
  CHECK(a.kernel_busy_ns == 4000);
  // Copies C0 [0,1500) 8000 B, C1 [7000,7500) 4000 B, C4 500 B without duration: 3 copies,
  // 12500 B, union 1500 + 500 = 2000.
  CHECK(a.copy_count == 3);
  CHECK(a.copy_bytes == 12500);
  CHECK(a.copy_busy_ns == 2000);
  CHECK(a.memset_count == 1);
  CHECK(a.memset_bytes == 256);
  // Busy: kernels [1000,4000) [6000,7000) u copies [0,1500) [7000,7500) u memset [3500,4500)
  //   = [0,4500) 4500 + [6000,7500) 1500 = 6000 (also 4000 + 3000 - overlap 1000).
  CHECK(a.busy_ns == 6000);
  CHECK(a.idle_ns == 4000);
  CHECK(a.busy_fraction == Approx(0.6));
  CHECK(a.idle_fraction == Approx(0.4));
  CHECK(a.first_start_ns == 0);
  CHECK(a.last_end_ns == 7500);  // C4 has no duration: no span
  // HtoD: C0 + C4 = 2 copies, 8500 B, busy 1500; the rate over the timed copy's 8000 B (C4 has
  // no duration: its 500 B moved in no time) / 1500 ns = 5.3333e9 B/s; link bytes 8000 over
  // 1500 ns x 8e9 B/s = 12000 B of capacity -> 66.667 % (= the rate over the peak).
  const DeviceCopyStats& ah = dstat(a, Direction::kHtoD);
  CHECK(ah.count == 2);
  CHECK(ah.bytes == 8500);
  CHECK(ah.busy_ns == 1500);
  CHECK(ah.link_bytes == 8000);
  CHECK(ah.link_bytes_per_s == Approx(8e9));
  CHECK(ah.timed_bytes == 8000);
  CHECK(ah.achieved_bytes_per_s() == Approx(8000.0 / 1500e-9));
  CHECK(ah.link_percent() == Approx(100.0 * 8000.0 / 12000.0));
  // DtoH: C1 4000 B in 500 ns = 8e9 B/s = 100 % of 8e9.
  CHECK(dstat(a, Direction::kDtoH).link_percent() == Approx(100.0));
  // Memory: +1000 @100, +3000 @200 -> 4000 (peak @200), -1000 @300 -> 3000 at the end.
  CHECK(a.has_memory);
  CHECK(a.memory_peak_bytes == 4000);
  CHECK(a.memory_peak_ns == 200);
  CHECK(a.memory_final_bytes == 3000);
  REQUIRE(a.threads.size() == 1);
  CHECK(a.threads[0].thread_id == 100);
  CHECK(a.threads[0].kernel_count == 3);
  CHECK(a.threads[0].kernel_time_ns == 5000);

  const DeviceRow& b = row(r, 1);
  CHECK(b.ceilings.peak_flops_per_s[static_cast<std::size_t>(Precision::kFp32)] == Approx(6.4e12));
  CHECK(b.ceilings.link_bytes_per_s == Approx(4e9));
  // Kernels K3 [1000,2000) K4 [2000,2500) K5 [5000,5500): summed 1000 + 500 + 500 = 2000,
  // union [1000,2500) + [5000,5500) = 2000.
  CHECK(b.kernel_count == 3);
  CHECK(b.kernel_time_ns == 2000);
  CHECK(b.kernel_busy_ns == 2000);
  // Busy: [1000,2500) [5000,5500) u C2 [500,1500) u C3 [5200,5300) = [500,2500) + [5000,5500)
  //   = 2500; idle 7500.
  CHECK(b.busy_ns == 2500);
  CHECK(b.idle_ns == 7500);
  CHECK(b.idle_fraction == Approx(0.75));
  CHECK(b.copy_busy_ns == 1100);
  // HtoD C2: 3000 B / 1000 ns = 3e9 B/s = 75 % of its own link (4e9), not of device 0's.
  CHECK(dstat(b, Direction::kHtoD).link_percent() == Approx(75.0));
  // DtoD does not cross the host link: no peak, no %.
  CHECK(dstat(b, Direction::kDtoD).count == 1);
  CHECK(dstat(b, Direction::kDtoD).busy_ns == 100);
  CHECK(dstat(b, Direction::kDtoD).link_bytes_per_s == 0);
  CHECK(dstat(b, Direction::kDtoD).link_percent() == 0);
  CHECK(b.memory_peak_bytes == 5000);
  CHECK(b.memory_final_bytes == 5000);
  // Threads: 200 launched K3 + K4 (1500 ns), 300 launched K5 (500 ns); most kernels first.
  REQUIRE(b.threads.size() == 2);
  CHECK(b.threads[0].thread_id == 200);
  CHECK(b.threads[0].kernel_count == 2);
  CHECK(b.threads[0].kernel_time_ns == 1500);
  CHECK(b.threads[1].thread_id == 300);
  CHECK(b.threads[1].kernel_count == 1);

  // Balance: busy 6000 and 2500, mean 4250, max / mean = 1.41176; device 0 is the slowest;
  // spread 3500 = 58.33 % of the max.
  const LoadBalance& lb = r.balance;
  CHECK(lb.device_count == 2);
  CHECK(lb.active_devices == 2);
  CHECK(lb.max_busy_ns == 6000);
  CHECK(lb.min_busy_ns == 2500);
  CHECK(lb.mean_busy_ns == Approx(4250.0));
  CHECK(lb.imbalance == Approx(6000.0 / 4250.0));
  CHECK(lb.slowest_device == 0);
  CHECK(lb.least_busy_device == 1);
  CHECK(lb.spread_ns == 3500);
  CHECK(lb.spread_fraction == Approx(3500.0 / 6000.0));
}

TEST_CASE("Per-device link use against one given peak, and the trace-level link use it composes",
          "[analysis][devices]") {
  const TraceStore s = two_devices();
  DeviceOptions o;
  o.link_bytes_per_s = 16e9;  // measured: every link alike
  const DeviceReport r = analyze_devices(s, o);
  // Device 0 HtoD: 8000 B over 1500 ns x 16e9 = 24000 B -> 33.33 %; device 1: 3000 / 16000 = 18.75 %.
  CHECK(dstat(row(r, 0), Direction::kHtoD).link_percent() == Approx(100.0 / 3.0));
  CHECK(dstat(row(r, 1), Direction::kHtoD).link_percent() == Approx(18.75));
  // The transfer analysis weighs the table peaks by each device's busy time:
  // (8000 + 3000) / (1500e-9 x 8e9 + 1000e-9 x 4e9) = 11000 / 16000 = 68.75 %, i.e. the
  // per-device rows' link bytes over their capacities summed.
  const TransferReport tr = analyze_transfers(s);
  const TransferGroup& t = group(tr, GroupKind::kTrace, kNone32);
  CHECK(tr.link_percent(t, Direction::kHtoD) == Approx(68.75));
  const DeviceReport table = analyze_devices(s);
  const DeviceCopyStats& h0 = dstat(row(table, 0), Direction::kHtoD);
  const DeviceCopyStats& h1 = dstat(row(table, 1), Direction::kHtoD);
  const double capacity = h0.busy_ns * 1e-9 * h0.link_bytes_per_s + h1.busy_ns * 1e-9 * h1.link_bytes_per_s;
  CHECK(100.0 * static_cast<double>(h0.link_bytes + h1.link_bytes) / capacity == Approx(68.75));
}

TEST_CASE("An idle GPU and a device without a record count in the load balance", "[analysis][devices]") {
  TraceStore s;  // no start/end: the wall is the span of the activity, [0, 3000)
  DeviceInfo d0 = sm80_device();
  d0.id = 0;
  DeviceInfo d2 = sm80_device();
  d2.id = 2;  // recorded, ran nothing
  s.devices = {d0, d2};
  s.kernels = {kernel(0, 7, 0, 1000), kernel(3, 0, 0, 3000)};  // device 3: no DeviceInfo, thread unknown
  const DeviceReport r = analyze_devices(s);
  CHECK(r.wall_ns == 3000);
  REQUIRE(r.devices.size() == 3);
  CHECK(row(r, 0).idle_ns == 2000);
  CHECK(row(r, 0).idle_fraction == Approx(2.0 / 3.0));
  const DeviceRow& idle = row(r, 2);
  CHECK(idle.has_record);
  CHECK(idle.busy_ns == 0);
  CHECK(idle.idle_fraction == Approx(1.0));
  CHECK(idle.first_start_ns == 0);
  CHECK(idle.last_end_ns == 0);
  CHECK_FALSE(idle.has_memory);
  const DeviceRow& unknown = row(r, 3);
  CHECK_FALSE(unknown.has_record);
  CHECK(unknown.ceilings.dram_bytes_per_s == 0);
  CHECK(dstat(unknown, Direction::kHtoD).link_bytes_per_s == 0);
  REQUIRE(unknown.threads.size() == 1);
  CHECK(unknown.threads[0].thread_id == 0);
  // Busy 1000, 0, 3000: mean 4000 / 3 = 1333.3, max / mean = 2.25; 2 of 3 active; the slowest
  // is device 3, the least busy device 2; spread 3000 = 100 % of the max.
  const LoadBalance& b = r.balance;
  CHECK(b.device_count == 3);
  CHECK(b.active_devices == 2);
  CHECK(b.mean_busy_ns == Approx(4000.0 / 3.0));
  CHECK(b.imbalance == Approx(2.25));
  CHECK(b.slowest_device == 3);
  CHECK(b.least_busy_device == 2);
  CHECK(b.spread_ns == 3000);
  CHECK(b.spread_fraction == Approx(1.0));
}

TEST_CASE("Even devices balance at 1 and ties go to the lowest id", "[analysis][devices]") {
  TraceStore s;
  s.meta.start_ns = 100;
  s.meta.end_ns = 2100;  // wall 2000
  s.kernels = {kernel(1, 1, 100, 600), kernel(0, 2, 1100, 1600)};
  const DeviceReport r = analyze_devices(s);
  CHECK(r.wall_ns == 2000);
  CHECK(r.balance.imbalance == Approx(1.0));
  CHECK(r.balance.slowest_device == 0);
  CHECK(r.balance.least_busy_device == 0);
  CHECK(r.balance.spread_ns == 0);
  CHECK(row(r, 1).busy_fraction == Approx(0.25));
}

TEST_CASE("No device at all: no rows and an empty balance", "[analysis][devices]") {
  const TraceStore s;
  const DeviceReport r = analyze_devices(s);
  CHECK(r.devices.empty());
  CHECK(r.wall_ns == 0);
  CHECK(r.balance.device_count == 0);
  CHECK(r.balance.imbalance == 0);
  CHECK(r.balance.slowest_device == kNone32);
  CHECK(r.balance.least_busy_device == kNone32);
}

namespace {

uint32_t next_correlation = 1;

// A kernel on `device` launched by `thread` at `launch` (an API record joins them), running
// [start, start + ns). In an NVTX thunk range `marker` when given.
void launch(TraceStore& s, uint32_t device, uint32_t thread, uint64_t launch_ns, uint64_t start, uint64_t ns) {
  ApiRecord a;
  a.start_ns = launch_ns;
  a.end_ns = launch_ns + 10;
  a.thread_id = thread;
  a.correlation_id = next_correlation++;
  s.api_calls.push_back(a);
  KernelRecord k = kernel(device, 0, start, start + ns);
  k.correlation_id = a.correlation_id;
  LaunchConfig c;
  c.grid_x = 1000;
  c.grid_y = 1;
  c.grid_z = 1;
  k.launch_config = s.intern_launch_config(c);
  k.name = s.strings.intern("loop_fusion");
  s.kernels.push_back(k);
}

void copy_from(TraceStore& s, uint32_t device, uint32_t thread, uint64_t launch_ns, uint64_t start, uint64_t ns,
               uint64_t bytes) {
  ApiRecord a;
  a.start_ns = launch_ns;
  a.end_ns = launch_ns + 10;
  a.thread_id = thread;
  a.correlation_id = next_correlation++;
  s.api_calls.push_back(a);
  MemcpyRecord c = copy(device, CopyKind::kHtoD, bytes, start, start + ns);
  c.correlation_id = a.correlation_id;
  s.memcpys.push_back(c);
}

void region(TraceStore& s, const char* name, uint32_t thread, uint64_t start, uint64_t end) {
  RegionRecord r;
  r.name = s.strings.intern(name);
  r.thread_id = thread;
  r.start_ns = start;
  r.end_ns = end;
  s.regions.push_back(r);
}

uint32_t path_id(const RegionPaths& paths, const std::string& path) {
  for (uint32_t p = 0; p < paths.size(); ++p)
    if (paths.path(p) == path) return p;
  FAIL("no region path " << path);
  return kNone32;
}

}  // namespace

TEST_CASE("Two device threads, each in its own region, each launching on its own device",
          "[analysis][devices][regions]") {
  // Main thread 1: "sweep" [0, 20000). Thread 100: "gpu" [100, 19000) > "step" [200, 9000) and
  // a second "step" [9000, 18000). Thread 200 alike with "gpu" [150, 19500) > "step" [300, 9500)
  // and [9500, 18500): both device threads run the same code, so their regions share paths.
  TraceStore s;
  s.meta.start_ns = 0;
  s.meta.end_ns = 20000;
  region(s, "sweep", 1, 0, 20000);      // R0
  region(s, "gpu", 100, 100, 19000);    // R1
  region(s, "step", 100, 200, 9000);    // R2
  region(s, "step", 100, 9000, 18000);  // R3
  region(s, "gpu", 200, 150, 19500);    // R4
  region(s, "step", 200, 300, 9500);    // R5
  region(s, "step", 200, 9500, 18500);  // R6
  // Thread 100 -> device 0: kernels launched at 1000 (R2) and 10000 (R3), 4000 ns each;
  // a copy at 1500 (R2), 2000 B in 1000 ns. Thread 200 -> device 1: kernels at 1100 (R5) and
  // 11000 (R6), 2000 ns each. A kernel launched by thread 100 at 18500, after its second step
  // closed (in R1 only), on device 0, 500 ns.
  launch(s, 0, 100, 1000, 2000, 4000);           // K0
  launch(s, 0, 100, 10000, 10000, 4000);         // K1
  launch(s, 1, 200, 1100, 2000, 2000);           // K2
  launch(s, 1, 200, 11000, 11000, 2000);         // K3
  launch(s, 0, 100, 18500, 18600, 500);          // K4
  copy_from(s, 0, 100, 1500, 1500, 1000, 2000);  // C0
  const CorrelationStats cs = correlate(s);
  CHECK(cs.regions_by_time == 0);  // both device threads opened regions: no time fallback
  CHECK(cs.unattributed_to_region == 0);
  // Each activity is in the innermost region of its own thread.
  CHECK(s.kernels[0].region_index == 2);
  CHECK(s.kernels[1].region_index == 3);
  CHECK(s.kernels[2].region_index == 5);
  CHECK(s.kernels[3].region_index == 6);
  CHECK(s.kernels[4].region_index == 1);
  CHECK(s.memcpys[0].region_index == 2);
  CHECK(s.kernels[0].thread_id == 100);
  CHECK(s.kernels[2].thread_id == 200);

  // Paths: sweep, gpu, gpu > step; "gpu" has 2 instances (one per thread), "gpu > step" 4.
  const RegionPaths paths(s);
  const uint32_t gpu = path_id(paths, "gpu");
  const uint32_t step = path_id(paths, "gpu > step");
  const uint32_t sweep = path_id(paths, "sweep");
  CHECK(paths.instances(gpu) == 2);
  CHECK(paths.instances(step) == 4);

  // Roofline per path (inclusive, instances summed): "gpu > step" K0..K3 = 4 kernels,
  // 4000 + 4000 + 2000 + 2000 = 12000 ns; "gpu" adds K4: 5 kernels, 12500 ns. "sweep" is on the
  // main thread, which launched nothing, and regions nest per thread: no kernel.
  RooflineOptions ro;
  ro.region_paths = &paths;
  const RooflineReport rr = analyze_roofline(s, Ceilings{}, {}, {}, ro);
  CHECK(rr.region_paths[step].kernel_count == 4);
  CHECK(rr.region_paths[step].time_ns == 12000);
  CHECK(rr.region_paths[gpu].kernel_count == 5);
  CHECK(rr.region_paths[gpu].time_ns == 12500);
  CHECK(rr.region_paths[sweep].kernel_count == 0);

  // Transfers per path: C0 counts for "gpu > step" and "gpu".
  TransferOptions to;
  to.region_paths = &paths;
  const TransferReport tr = analyze_transfers(s, to);
  CHECK(dir(group(tr, GroupKind::kRegionPath, step), Direction::kHtoD).bytes == 2000);
  CHECK(dir(group(tr, GroupKind::kRegionPath, gpu), Direction::kHtoD).busy_ns == 1000);

  // Per device: device 0 from thread 100 (K0 [2000,6000) K1 [10000,14000) K4 [18600,19100)
  // + C0 [1500,2500) -> busy [1500,6000) 4500 + 4000 + 500 = 9000); device 1 from thread 200
  // (K2 [2000,4000) K3 [11000,13000) -> 4000). Balance: mean 6500, 9000 / 6500 = 1.3846.
  const DeviceReport dr = analyze_devices(s);
  REQUIRE(dr.devices.size() == 2);
  CHECK(row(dr, 0).busy_ns == 9000);
  CHECK(row(dr, 1).busy_ns == 4000);
  REQUIRE(row(dr, 0).threads.size() == 1);
  CHECK(row(dr, 0).threads[0].thread_id == 100);
  CHECK(row(dr, 0).threads[0].kernel_count == 3);
  REQUIRE(row(dr, 1).threads.size() == 1);
  CHECK(row(dr, 1).threads[0].thread_id == 200);
  CHECK(dr.balance.imbalance == Approx(9000.0 / 6500.0));
  CHECK(dr.balance.slowest_device == 0);
}

TEST_CASE("Pool threads without regions launch on two devices: the main thread's region gets both",
          "[analysis][devices][regions]") {
  // As MBIRJAX's run_per_device: the main thread opens "recon" [0, 10000) > "iteration"
  // [100, 9000) and waits; pool threads 300 and 400 (no region of their own) launch on devices 0
  // and 1, and thread 300 later on device 1 too (a pool thread has no device of its own).
  TraceStore s;
  region(s, "recon", 1, 0, 10000);       // R0
  region(s, "iteration", 1, 100, 9000);  // R1
  launch(s, 0, 300, 1000, 1000, 3000);   // K0: in R1 by time
  launch(s, 1, 400, 1000, 1200, 1000);   // K1: in R1 by time
  launch(s, 1, 300, 5000, 5000, 1000);   // K2: in R1 by time
  launch(s, 0, 400, 9500, 9500, 200);    // K3: R1 closed at 9000: in R0 by time
  launch(s, 0, 300, 10500, 10500, 100);  // K4: after every region: none
  const CorrelationStats cs = correlate(s);
  CHECK(cs.regions_by_time == 4);
  CHECK(cs.unattributed_to_region == 1);
  CHECK(s.kernels[0].region_index == 1);
  CHECK(s.kernels[1].region_index == 1);
  CHECK(s.kernels[2].region_index == 1);
  CHECK(s.kernels[3].region_index == 0);
  CHECK(s.kernels[4].region_index == kNone32);
  const RegionPaths paths(s);
  RooflineOptions ro;
  ro.region_paths = &paths;
  const RooflineReport rr = analyze_roofline(s, Ceilings{}, {}, {}, ro);
  // "recon > iteration": K0 + K1 + K2 = 3000 + 1000 + 1000 = 5000 ns over both devices;
  // "recon" adds K3: 5200 ns.
  CHECK(rr.region_paths[path_id(paths, "recon > iteration")].kernel_count == 3);
  CHECK(rr.region_paths[path_id(paths, "recon > iteration")].time_ns == 5000);
  CHECK(rr.region_paths[path_id(paths, "recon")].time_ns == 5200);
  // Device 1 was launched on by both pool threads: 400 (K1) and 300 (K2), one kernel each,
  // ties by thread id. Device 0: 300 launched K0 and K4, 400 launched K3.
  const DeviceReport dr = analyze_devices(s);
  const DeviceRow& d1 = row(dr, 1);
  REQUIRE(d1.threads.size() == 2);
  CHECK(d1.threads[0].thread_id == 300);
  CHECK(d1.threads[1].thread_id == 400);
  const DeviceRow& d0 = row(dr, 0);
  REQUIRE(d0.threads.size() == 2);
  CHECK(d0.threads[0].thread_id == 300);
  CHECK(d0.threads[0].kernel_count == 2);
  CHECK(d0.threads[1].thread_id == 400);
}

TEST_CASE("Per-device unions match a brute-force union on shuffled random records", "[analysis][devices]") {
  // 3 devices, 2000 kernels, 300 copies, 100 memsets at random times (a fixed LCG, so the test
  // is the same every run), stored out of start order: each device's busy, kernel busy, copy
  // busy and per-direction busy equal IntervalSet's union of that device's own intervals.
  uint64_t seed = 12345;
  const auto rnd = [&](uint64_t n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % n;
  };
  TraceStore s;
  for (int i = 0; i < 2000; ++i) {
    const uint64_t t = rnd(1000000);
    s.kernels.push_back(kernel(static_cast<uint32_t>(rnd(3)), 1, t, t + rnd(2000)));
  }
  for (int i = 0; i < 300; ++i) {
    const uint64_t t = rnd(1000000);
    s.memcpys.push_back(
        copy(static_cast<uint32_t>(rnd(3)), rnd(2) == 0 ? CopyKind::kHtoD : CopyKind::kDtoH, 1000, t, t + rnd(5000)));
  }
  for (int i = 0; i < 100; ++i) {
    MemsetRecord m;
    m.device_id = static_cast<uint32_t>(rnd(3));
    m.start_ns = rnd(1000000);
    m.end_ns = m.start_ns + rnd(3000);
    s.memsets.push_back(m);
  }
  const DeviceReport r = analyze_devices(s);
  REQUIRE(r.devices.size() == 3);
  for (uint32_t d = 0; d < 3; ++d) {
    std::vector<std::pair<uint64_t, uint64_t>> all, ks, cs, htod;
    for (const auto& k : s.kernels)
      if (k.device_id == d) {
        ks.emplace_back(k.start_ns, k.end_ns);
        all.emplace_back(k.start_ns, k.end_ns);
      }
    for (const auto& c : s.memcpys)
      if (c.device_id == d) {
        cs.emplace_back(c.start_ns, c.end_ns);
        all.emplace_back(c.start_ns, c.end_ns);
        if (c.copy_kind == CopyKind::kHtoD) htod.emplace_back(c.start_ns, c.end_ns);
      }
    for (const auto& m : s.memsets)
      if (m.device_id == d) all.emplace_back(m.start_ns, m.end_ns);
    const DeviceRow& row_d = row(r, d);
    CHECK(row_d.busy_ns == IntervalSet::from(all).total_ns());
    CHECK(row_d.kernel_busy_ns == IntervalSet::from(ks).total_ns());
    CHECK(row_d.copy_busy_ns == IntervalSet::from(cs).total_ns());
    CHECK(dstat(row_d, Direction::kHtoD).busy_ns == IntervalSet::from(htod).total_ns());
    // the random records do overlap: the union is shorter than the summed durations
    uint64_t summed = 0;
    for (const auto& [b, e] : all) summed += e - b;
    CHECK(row_d.busy_ns < summed);
  }
}

// Transfer accounting and device-memory timeline on small constructed traces. Every expected
// number is worked out by hand in the comments.
#include <catch2/catch.hpp>

#include "transfer_fixture.hpp"

#include "fpgaprof/analysis/interval_set.hpp"
#include "fpgaprof/analysis/memory_analysis.hpp"
#include "fpgaprof/analysis/transfer_analysis.hpp"
#include "fpgaprof/error.hpp"

using namespace fpgaprof;
using namespace fpgaprof::analysis;
using fpgaprof::testing::dir;
using fpgaprof::testing::group;

namespace {

KernelRecord kernel(uint64_t s, uint64_t e) {
  KernelRecord k;
  k.start_ns = s;
  k.end_ns = e;
  return k;
}

MemcpyRecord copy(CopyKind kind, uint64_t bytes, uint64_t s, uint64_t e, MemoryKind host, bool async, uint32_t region) {
  MemcpyRecord c;
  c.copy_kind = kind;
  c.bytes = bytes;
  c.start_ns = s;
  c.end_ns = e;
  c.is_async = async;
  c.region_index = region;
  c.thread_id = 7;
  if (kind == CopyKind::kHtoD) {
    c.src_kind = host;
    c.dst_kind = MemoryKind::kDevice;
  } else if (kind == CopyKind::kDtoH) {
    c.src_kind = MemoryKind::kDevice;
    c.dst_kind = host;
  } else {
    c.src_kind = c.dst_kind = MemoryKind::kDevice;
  }
  return c;
}

// Kernels: [100,200) [150,300) [1000,1100)  -> busy union [100,300) + [1000,1100).
// Regions on thread 7: R0 "outer" [0,2000], R1 "inner" [100,1500] inside R0.
TraceStore transfer_trace() {
  TraceStore s;
  s.kernels = {kernel(100, 200), kernel(150, 300), kernel(1000, 1100)};
  s.memcpys = {
      copy(CopyKind::kHtoD, 1000, 50, 150, MemoryKind::kPinned, true, 0),         // C0
      copy(CopyKind::kHtoD, 3000, 120, 220, MemoryKind::kPageable, false, 1),     // C1
      copy(CopyKind::kDtoH, 500, 400, 500, MemoryKind::kPinned, false, kNone32),  // C2
      copy(CopyKind::kDtoD, 10000, 1050, 1250, MemoryKind::kDevice, true, 1),     // C3
  };
  RegionRecord r0;
  r0.start_ns = 0;
  r0.end_ns = 2000;
  r0.thread_id = 7;
  r0.name = s.strings.intern("outer");
  RegionRecord r1;
  r1.start_ns = 100;
  r1.end_ns = 1500;
  r1.thread_id = 7;
  r1.name = s.strings.intern("inner");
  r1.parent = 0;
  r1.depth = 1;
  s.regions = {r0, r1};
  SyncRecord w0;
  w0.start_ns = 600;
  w0.end_ns = 700;
  w0.thread_id = 7;  // inside R1 (and R0)
  SyncRecord w1;
  w1.start_ns = 1600;
  w1.end_ns = 1900;
  w1.thread_id = 7;  // R1 closed: R0 only
  SyncRecord w2;
  w2.start_ns = 650;
  w2.end_ns = 750;
  w2.thread_id = 9;  // other thread: no region
  s.syncs = {w0, w1, w2};
  DeviceInfo d;
  d.pcie_generation = 4;
  d.pcie_link_width = 16;
  s.devices = {d};
  return s;
}

}  // namespace

TEST_CASE("IntervalSet union and overlap", "[analysis][transfers]") {
  const IntervalSet s = IntervalSet::from({{150, 300}, {100, 200}, {1000, 1100}, {5, 5}});
  REQUIRE(s.intervals().size() == 2);
  CHECK(s.total_ns() == 300);             // 200 + 100
  CHECK(s.overlap_ns(50, 220) == 120);    // [100,220)
  CHECK(s.overlap_ns(250, 1050) == 100);  // [250,300) + [1000,1050)
  CHECK(s.overlap_ns(300, 1000) == 0);
  const IntervalSet t = IntervalSet::from({{0, 120}, {290, 1010}});
  CHECK(s.intersection_ns(t) == 20 + 10 + 10);  // [100,120) [290,300) [1000,1010)
}

TEST_CASE("Transfer accounting per trace, region and direction", "[analysis][transfers]") {
  const TraceStore s = transfer_trace();
  TransferOptions per_instance;
  per_instance.region_rows = RegionRows::kInstances;  // region groups per record (R0, R1)
  const TransferReport r = analyze_transfers(s, per_instance);
  const TransferGroup& t = group(r, GroupKind::kTrace, kNone32);

  // HtoD: C0 + C1 = 4000 B; busy = union [50,150)+[120,220) = [50,220) = 170 ns;
  // kernels cover [100,220) of it = 120 ns; C0 pinned/async, C1 pageable/sync.
  const TransferStats& h = dir(t, Direction::kHtoD);
  CHECK(h.count == 2);
  CHECK(h.bytes == 4000);
  CHECK(h.busy_ns == 170);
  CHECK(h.duration_sum_ns == 200);
  CHECK(h.kernel_overlap_ns == 120);
  CHECK(h.pinned_count == 1);
  CHECK(h.pageable_count == 1);
  CHECK(h.pageable_bytes == 3000);
  CHECK(h.sync_count == 1);
  CHECK(h.async_count == 1);
  // 4000 B / 170 ns = 23.529 GB/s; PCIe gen4 x16 = 16e9 x 128/130 / 8 x 16 = 31.508 GB/s -> 74.68 %.
  CHECK(h.achieved_bytes_per_s() == Approx(23.529e9).epsilon(1e-4));
  CHECK(r.link_bytes_per_s == Approx(31.508e9).epsilon(1e-4));
  CHECK(r.link_source == "table");
  CHECK(r.link_percent(t, Direction::kHtoD) == Approx(74.68).epsilon(1e-3));

  CHECK(dir(t, Direction::kDtoH).busy_ns == 100);
  CHECK(dir(t, Direction::kDtoH).kernel_overlap_ns == 0);
  CHECK(dir(t, Direction::kDtoD).bytes == 10000);
  CHECK(dir(t, Direction::kDtoD).kernel_overlap_ns == 50);  // [1050,1100)
  // All: [50,220) + [400,500) + [1050,1250) = 170 + 100 + 200 = 470 ns; overlap 120 + 0 + 50.
  CHECK(t.all.count == 4);
  CHECK(t.all.bytes == 14500);
  CHECK(t.all.busy_ns == 470);
  CHECK(t.all.kernel_overlap_ns == 170);
  // Host waits: [600,700) u [650,750) u [1600,1900) = 150 + 300 = 450 ns.
  CHECK(t.host_wait_ns == 450);
  CHECK(t.sync_calls == 3);

  // R0 (inclusive of R1): C0, C1, C3 -> busy 170 + 200; waits w0 + w1 = 100 + 300.
  const TransferGroup& r0 = group(r, GroupKind::kRegion, 0);
  CHECK(r0.all.count == 3);
  CHECK(r0.all.bytes == 14000);
  CHECK(r0.all.busy_ns == 370);
  CHECK(r0.all.kernel_overlap_ns == 170);
  CHECK(r0.host_wait_ns == 400);
  CHECK(r0.sync_calls == 2);
  // R1: C1 [120,220) all under kernel [100,300); C3; wait w0 only.
  const TransferGroup& r1 = group(r, GroupKind::kRegion, 1);
  CHECK(dir(r1, Direction::kHtoD).busy_ns == 100);
  CHECK(dir(r1, Direction::kHtoD).kernel_overlap_ns == 100);
  CHECK(r1.all.busy_ns == 300);
  CHECK(r1.host_wait_ns == 100);
  CHECK(r1.sync_calls == 1);

  // Pageable flagged where C1 is counted: trace, R0, R1. No tiny flood under the defaults.
  int pageable = 0, tiny = 0;
  for (const auto& f : r.flags) {
    pageable += f.kind == "pageable";
    tiny += f.kind == "tiny_transfers";
  }
  CHECK(pageable == 3);
  CHECK(tiny == 0);
  CHECK(r.flags.front().message.find("pinned") != std::string::npos);
}

TEST_CASE("Tiny-transfer floods, per-op groups and a user link peak", "[analysis][transfers]") {
  const TraceStore s = transfer_trace();
  TransferOptions o;
  o.tiny_flood_count = 3;  // all 4 copies are < 64 KiB
  o.link_bytes_per_s = 20e9;
  o.link_source = "measured";
  o.region_rows = RegionRows::kInstances;
  // C0 and C1 belong to op 2, C3 to op 0, C2 to none.
  const TransferReport r = analyze_transfers(s, o, {2, 2, kNone32, 0});
  int tiny = 0;
  for (const auto& f : r.flags) tiny += f.kind == "tiny_transfers";
  CHECK(tiny == 2);  // trace (4 of 4) and R0 (3 of 3); R1 has only 2 copies < 3
  CHECK(r.link_source == "measured");
  // 23.529 GB/s of 20 GB/s.
  CHECK(r.link_percent(group(r, GroupKind::kTrace, kNone32), Direction::kHtoD) == Approx(117.65).epsilon(1e-3));
  const TransferGroup& op2 = group(r, GroupKind::kOp, 2);
  CHECK(op2.all.bytes == 4000);
  CHECK(op2.all.busy_ns == 170);
  CHECK(op2.host_wait_ns == 0);
  CHECK(group(r, GroupKind::kOp, 0).all.bytes == 10000);
  CHECK_THROWS_AS(analyze_transfers(s, o, {1, 2}), Error);
  // Only the worst region per flag kind when capped at 1: pageable R0 and R1 hold the same
  // 3000 B, the first in group order (R0, created by C0) is kept; tiny: R0 (3) beats R1 (not a flood).
  o.max_region_flags = 1;
  const TransferReport capped = analyze_transfers(s, o);
  int region_flags = 0;
  for (const auto& f : capped.flags) region_flags += f.group_kind == GroupKind::kRegion;
  CHECK(region_flags == 2);
  CHECK(capped.flags_left_out == 1);
}

namespace {

MemcpyRecord copy_on(uint32_t device, CopyKind kind, uint64_t bytes, uint64_t s, uint64_t e, MemoryKind src,
                     MemoryKind dst, bool async) {
  MemcpyRecord c;
  c.device_id = device;
  c.copy_kind = kind;
  c.bytes = bytes;
  c.start_ns = s;
  c.end_ns = e;
  c.src_kind = src;
  c.dst_kind = dst;
  c.is_async = async;
  c.thread_id = 7;
  return c;
}

DeviceInfo pcie_device(uint32_t id, uint32_t generation) {
  DeviceInfo d;
  d.id = id;
  d.pcie_generation = generation;
  d.pcie_link_width = 16;
  return d;
}

}  // namespace

TEST_CASE("Every copy kind: its direction and host memory", "[analysis][transfers]") {
  // One copy of each kind the converter produces besides plain HtoD/DtoD, 100 ns each, apart:
  //   A PtoP  8000 B [0,100)      device -> device (dev 0 to dev 1)  async
  //   B HtoH  1500 B [200,300)    pageable -> pinned                 sync
  //   C DtoH  2000 B [400,500)    device -> pageable                 sync
  //   D HtoA  1000 B [600,700)    pinned -> array                    async
  //   E AtoH  3000 B [800,900)    array -> pinned                    async
  //   F AtoD  5000 B [1000,1100)  array -> device                    async
  // Directions (direction_of): A PtoP, B HtoH, C and E DtoH, D HtoD, F DtoD.
  TraceStore s;
  s.devices = {pcie_device(0, 4)};
  s.memcpys = {copy_on(0, CopyKind::kPtoP, 8000, 0, 100, MemoryKind::kDevice, MemoryKind::kDevice, true),
               copy_on(0, CopyKind::kHtoH, 1500, 200, 300, MemoryKind::kPageable, MemoryKind::kPinned, false),
               copy_on(0, CopyKind::kDtoH, 2000, 400, 500, MemoryKind::kDevice, MemoryKind::kPageable, false),
               copy_on(0, CopyKind::kHtoA, 1000, 600, 700, MemoryKind::kPinned, MemoryKind::kArray, true),
               copy_on(0, CopyKind::kAtoH, 3000, 800, 900, MemoryKind::kArray, MemoryKind::kPinned, true),
               copy_on(0, CopyKind::kAtoD, 5000, 1000, 1100, MemoryKind::kArray, MemoryKind::kDevice, true)};
  s.memcpys[0].src_device_id = 0;
  s.memcpys[0].dst_device_id = 1;
  CHECK(direction_of(CopyKind::kHtoA) == Direction::kHtoD);
  CHECK(direction_of(CopyKind::kAtoH) == Direction::kDtoH);
  CHECK(direction_of(CopyKind::kAtoD) == Direction::kDtoD);
  CHECK(direction_of(CopyKind::kDtoA) == Direction::kDtoD);
  CHECK(direction_of(CopyKind::kAtoA) == Direction::kDtoD);
  CHECK(direction_of(CopyKind::kPtoP) == Direction::kPtoP);
  CHECK(direction_of(CopyKind::kUnknown) == Direction::kOther);
  const TransferReport r = analyze_transfers(s);
  const TransferGroup& t = group(r, GroupKind::kTrace, kNone32);

  // PtoP: A alone, between devices: not DtoD, no host side.
  const TransferStats& p2p = dir(t, Direction::kPtoP);
  CHECK(p2p.count == 1);
  CHECK(p2p.bytes == 8000);
  CHECK(p2p.pinned_count + p2p.pageable_count == 0);
  // DtoD: F only (5000 B); an array on the device is device memory: no host side either.
  const TransferStats& d2d = dir(t, Direction::kDtoD);
  CHECK(d2d.count == 1);
  CHECK(d2d.bytes == 5000);
  CHECK(d2d.pinned_count + d2d.pageable_count == 0);
  // HtoH: B, pageable -> pinned: a copy between host buffers crosses no link and is not staged
  // by the driver: neither pinned nor pageable.
  const TransferStats& h2h = dir(t, Direction::kHtoH);
  CHECK(h2h.count == 1);
  CHECK(h2h.pageable_count == 0);
  CHECK(h2h.pageable_bytes == 0);
  CHECK(h2h.pinned_count == 0);
  CHECK(h2h.sync_count == 1);
  // DtoH: C (into pageable: pageable, 2000 B) and E (array -> pinned: pinned); 5000 B in
  // [400,500) + [800,900) = 200 ns.
  const TransferStats& d2h = dir(t, Direction::kDtoH);
  CHECK(d2h.count == 2);
  CHECK(d2h.bytes == 5000);
  CHECK(d2h.busy_ns == 200);
  CHECK(d2h.pageable_count == 1);
  CHECK(d2h.pageable_bytes == 2000);
  CHECK(d2h.pinned_count == 1);
  CHECK(d2h.sync_count == 1);
  CHECK(d2h.async_count == 1);
  // HtoD: D (pinned -> array), 1000 B in 100 ns = 10 GB/s of PCIe gen4 x16 (16e9 x 128/130 / 8
  // x 16 = 31.508 GB/s) = 31.74 %. DtoH: 5000 B / 200 ns = 25 GB/s = 79.35 %.
  const TransferStats& h2d = dir(t, Direction::kHtoD);
  CHECK(h2d.count == 1);
  CHECK(h2d.bytes == 1000);
  CHECK(h2d.pinned_count == 1);
  CHECK(h2d.pageable_count == 0);
  CHECK(r.link_percent(t, Direction::kHtoD) == Approx(100.0 * 10e9 / 31.50769e9).epsilon(1e-4));
  CHECK(r.link_percent(t, Direction::kDtoH) == Approx(100.0 * 25e9 / 31.50769e9).epsilon(1e-4));
  // All: 6 copies, 20500 B; pageable C = 1 copy, 2000 B; pinned D + E = 2; sync B, C.
  CHECK(t.all.count == 6);
  CHECK(t.all.bytes == 20500);
  CHECK(t.all.pageable_count == 1);
  CHECK(t.all.pageable_bytes == 2000);
  CHECK(t.all.pinned_count == 2);
  CHECK(t.all.sync_count == 2);
  CHECK(t.all.busy_ns == 600);
  // One pageable flag for the trace, for C alone; no tiny flood (6 copies < 1000).
  REQUIRE(r.flags.size() == 1);
  CHECK(r.flags[0].kind == "pageable");
  CHECK(r.flags[0].count == 1);
  CHECK(r.flags[0].bytes == 2000);
  CHECK(r.flags[0].message.rfind("1 copy (2.0 kB) in the trace uses pageable host memory: it is staged", 0) == 0);
}

TEST_CASE("Transfers: a copy without timestamps adds bytes, not rate", "[analysis][transfers]") {
  // HtoD 1 MB in [0, 40 us) and 1 MB with start = end (a counter replay left it no duration) on a
  // PCIe gen4 x16 device (31.508 GB/s): 2 MB copied, the rate 1e6 B / 40 us = 25 GB/s (not 50),
  // link % 79.35 = the rate over the peak.
  TraceStore s;
  s.devices = {pcie_device(0, 4)};
  s.memcpys = {copy_on(0, CopyKind::kHtoD, 1000000, 0, 40000, MemoryKind::kPinned, MemoryKind::kDevice, true),
               copy_on(0, CopyKind::kHtoD, 1000000, 50000, 50000, MemoryKind::kPinned, MemoryKind::kDevice, true)};
  const TransferReport r = analyze_transfers(s);
  const TransferGroup& t = group(r, GroupKind::kTrace, kNone32);
  const TransferStats& h2d = dir(t, Direction::kHtoD);
  CHECK(h2d.count == 2);
  CHECK(h2d.bytes == 2000000);
  CHECK(h2d.timed_bytes == 1000000);
  CHECK(h2d.busy_ns == 40000);
  CHECK(h2d.achieved_bytes_per_s() == Approx(25e9));
  CHECK(t.all.achieved_bytes_per_s() == Approx(25e9));
  CHECK(r.link_percent(t, Direction::kHtoD) == Approx(100.0 * 25e9 / 31.50769e9).epsilon(1e-4));
}

TEST_CASE("Transfer flag texts: one copy, the tiny threshold in bytes and decimal kB", "[analysis][transfers]") {
  // One pageable DtoH copy of 4096 B: "1 copy ... uses ... it is"; with tiny_flood_count = 1
  // it is also a flood of 1 tiny copy of 1: "1 of 1 copy ... moves less than 65,536 B
  // (65.5 kB)" (the default tiny_bytes = 64 x 1024 = 65,536 B; reports state sizes in decimal kB).
  TraceStore s;
  s.memcpys = {copy_on(0, CopyKind::kDtoH, 4096, 0, 100, MemoryKind::kDevice, MemoryKind::kPageable, false)};
  TransferOptions o;
  o.tiny_flood_count = 1;
  const TransferReport r = analyze_transfers(s, o);
  REQUIRE(r.flags.size() == 2);
  CHECK(r.flags[0].message ==
        "1 copy (4.1 kB) in the trace uses pageable host memory: it is staged by the driver and cannot overlap "
        "kernels; use pinned (page-locked) host buffers");
  CHECK(r.flags[1].message ==
        "1 of 1 copy in the trace moves less than 65,536 B (65.5 kB): per-copy latency dominates; batch them into "
        "fewer, larger transfers");
  // Two tiny copies of three, threshold 1,000,000 B: plural, "each".
  s.memcpys.push_back(copy_on(0, CopyKind::kHtoD, 200, 200, 300, MemoryKind::kPinned, MemoryKind::kDevice, true));
  s.memcpys.push_back(copy_on(0, CopyKind::kHtoD, 2000000, 400, 500, MemoryKind::kPinned, MemoryKind::kDevice, true));
  o.tiny_bytes = 1000000;
  o.tiny_flood_count = 2;
  const TransferReport r2 = analyze_transfers(s, o);
  REQUIRE(r2.flags.size() == 2);
  CHECK(r2.flags[1].message.rfind("2 of 3 copies in the trace move less than 1,000,000 B (1.00 MB) each: ", 0) == 0);
}

TEST_CASE("Transfers: link percent per device", "[analysis][transfers]") {
  // Device 0 on PCIe gen4 x16: P0 = 16e9 x 128/130 / 8 x 16 = 31.50769 GB/s; device 1 on gen3
  // x16: P1 = 15.75385 GB/s; device 2 has no device record (peak unknown).
  //   HtoD  dev0 [0,1000)     30000 B  (30 GB/s, 95.2 % of P0)
  //   HtoD  dev1 [0,1000)     15000 B  (15 GB/s, 95.2 % of P1), at the same time
  //   DtoH  dev0 [2000,3000)  15000 B  (47.6 % of P0)
  //   DtoH  dev1 [4000,5000)  15000 B  (95.2 % of P1), in region 0 [3500,6000)
  //   DtoH  dev2 [6000,7000)  10000 B  (no known link: left out of the link percent)
  TraceStore s;
  s.devices = {pcie_device(0, 4), pcie_device(1, 3)};
  s.memcpys = {copy_on(0, CopyKind::kHtoD, 30000, 0, 1000, MemoryKind::kPinned, MemoryKind::kDevice, true),
               copy_on(1, CopyKind::kHtoD, 15000, 0, 1000, MemoryKind::kPinned, MemoryKind::kDevice, true),
               copy_on(0, CopyKind::kDtoH, 15000, 2000, 3000, MemoryKind::kDevice, MemoryKind::kPinned, true),
               copy_on(1, CopyKind::kDtoH, 15000, 4000, 5000, MemoryKind::kDevice, MemoryKind::kPinned, true),
               copy_on(2, CopyKind::kDtoH, 10000, 6000, 7000, MemoryKind::kDevice, MemoryKind::kPinned, true)};
  s.memcpys[3].region_index = 0;
  RegionRecord reg;
  reg.start_ns = 3500;
  reg.end_ns = 6000;
  reg.thread_id = 7;
  reg.name = s.strings.intern("copy_back");
  s.regions = {reg};
  TransferOptions o;
  o.region_rows = RegionRows::kInstances;
  const TransferReport r = analyze_transfers(s, o);
  const TransferGroup& t = group(r, GroupKind::kTrace, kNone32);
  const double p0 = 31.50769e9, p1 = 15.75385e9;
  // HtoD: 45000 B in the union [0,1000) = 45 GB/s, more than either link; the two links
  // could move 1e-6 x (P0 + P1) = 31507.7 + 15753.8 = 47261.5 B then: 45000 / 47261.5 = 95.21 %
  // (against device 0's peak alone: 142.8 %).
  const TransferStats& h2d = dir(t, Direction::kHtoD);
  CHECK(h2d.achieved_bytes_per_s() == Approx(45e9));
  CHECK(h2d.link_bytes == 45000);
  CHECK(h2d.link_capacity_bytes == Approx(1e-6 * (p0 + p1)).epsilon(1e-5));
  CHECK(r.link_percent(t, Direction::kHtoD) == Approx(100.0 * 45000 / (1e-6 * (p0 + p1))).epsilon(1e-5));
  CHECK(r.link_percent(t, Direction::kHtoD) == Approx(95.215).epsilon(1e-4));
  // DtoH: 40000 B, busy 3000 ns; the link part: 30000 B of devices 0 and 1, each busy 1 us:
  // 30000 / (31507.7 + 15753.8) = 63.48 % (device 2's 10000 B have no known link).
  const TransferStats& d2h = dir(t, Direction::kDtoH);
  CHECK(d2h.bytes == 40000);
  CHECK(d2h.busy_ns == 3000);
  CHECK(d2h.link_bytes == 30000);
  CHECK(r.link_percent(t, Direction::kDtoH) == Approx(100.0 * 30000 / (1e-6 * (p0 + p1))).epsilon(1e-5));
  // The region holds device 1's DtoH copy only: 15 GB/s of its own P1 = 95.21 % (against
  // device 0's link it would read 47.6 %).
  const TransferGroup& g = group(r, GroupKind::kRegion, 0);
  CHECK(r.link_percent(g, Direction::kDtoH) == Approx(100.0 * 15e9 / p1).epsilon(1e-5));
  // No HtoD in the region, and no link for DtoD: 0.
  CHECK(r.link_percent(g, Direction::kHtoD) == 0.0);
  CHECK(dir(t, Direction::kDtoD).link_capacity_bytes == 0.0);

  // A user or measured peak applies to every link, device 2's too: 20 GB/s each.
  // HtoD 45000 / (1e-6 x 2 x 20e9 = 40000) = 112.5 %; DtoH 40000 / (3 x 20000) = 66.67 %.
  o.link_bytes_per_s = 20e9;
  const TransferReport u = analyze_transfers(s, o);
  const TransferGroup& ut = group(u, GroupKind::kTrace, kNone32);
  CHECK(u.link_percent(ut, Direction::kHtoD) == Approx(112.5));
  CHECK(u.link_percent(ut, Direction::kDtoH) == Approx(200.0 / 3.0));
}

TEST_CASE("Device memory timeline, peaks, regions, largest buffers", "[analysis][memory]") {
  TraceStore s;
  const auto a = [](uint64_t t, uint64_t addr, uint64_t bytes, bool alloc, uint32_t region) {
    AllocationRecord r;
    r.timestamp_ns = t;
    r.address = addr;
    r.bytes = bytes;
    r.is_alloc = alloc;
    r.region_index = region;
    r.thread_id = 7;
    return r;
  };
  s.allocations = {
      a(10, 0x1000, 100, true, 0),        // in use 100
      a(20, 0x2000, 300, true, 1),        // 400
      a(30, 0x1000, 100, false, 0),       // 300
      a(40, 0x3000, 50, true, 1),         // 350
      a(45, 0x9999, 77, false, kNone32),  // unknown address: unmatched, not in the timeline
      a(60, 0x2000, 300, false, 1),       // 50
      a(70, 0x4000, 1000, true, kNone32)  // 1050 (never freed)
  };
  RegionRecord r0;
  r0.start_ns = 5;
  r0.end_ns = 50;
  r0.thread_id = 7;
  RegionRecord r1;
  r1.start_ns = 15;
  r1.end_ns = 65;
  r1.thread_id = 7;
  r1.parent = 0;
  r1.depth = 1;
  s.regions = {r0, r1};
  const MemoryReport m = analyze_memory(s, 2, {}, RegionRows::kInstances);
  REQUIRE(m.timeline.size() == 6);
  CHECK(m.timeline[1].in_use_bytes == 400);
  CHECK(m.timeline[4].in_use_bytes == 50);
  CHECK(m.peak_in_use_bytes == 1050);
  CHECK(m.peak_ns == 70);
  REQUIRE(m.devices.size() == 1);
  CHECK(m.devices[0].peak_in_use_bytes == 1050);
  CHECK(m.devices[0].final_in_use_bytes == 1050);  // 0x3000 (50) + 0x4000 (1000)
  CHECK(m.unmatched_frees == 1);
  CHECK(m.unmatched_free_bytes == 77);
  CHECK(m.never_freed_count == 2);
  CHECK(m.never_freed_bytes == 1050);
  REQUIRE(m.largest.size() == 2);
  CHECK(m.largest[0].bytes == 1000);
  CHECK(m.largest[0].free_ns == kNone64);
  CHECK(m.largest[1].bytes == 300);
  CHECK(m.largest[1].alloc_ns == 20);
  CHECK(m.largest[1].free_ns == 60);
  CHECK(m.largest[1].region_index == 1);
  // R0 [5,50]: level 0 at start; events at 10..40 reach 100, 400, 300, 350 -> peak 400.
  // Allocated inside (inclusive of R1): 100 + 300 + 50 = 450; freed: 100 (t=30) + 300 (t=60, R1).
  CHECK(m.regions[0].in_use_at_start_bytes == 0);
  CHECK(m.regions[0].peak_in_use_bytes == 400);
  CHECK(m.regions[0].allocated_bytes == 450);
  CHECK(m.regions[0].allocations == 3);
  CHECK(m.regions[0].freed_bytes == 400);
  // R1 [15,65]: level 100 at start (after t=10); events 20..60: 400, 300, 350, 50 -> peak 400.
  CHECK(m.regions[1].in_use_at_start_bytes == 100);
  CHECK(m.regions[1].peak_in_use_bytes == 400);
  CHECK(m.regions[1].allocated_bytes == 350);
}

TEST_CASE("Memory: each timeline point also gives its device's own bytes in use", "[analysis][memory]") {
  // dev0 +100 @1, dev1 +100 @2 (same address), dev0 -100 @3, dev1 +70 @5, dev0 +30 @6.
  TraceStore s;
  const auto a = [](uint64_t t, uint32_t dev, uint64_t addr, uint64_t bytes, bool alloc) {
    AllocationRecord r;
    r.timestamp_ns = t;
    r.device_id = dev;
    r.address = addr;
    r.bytes = bytes;
    r.is_alloc = alloc;
    return r;
  };
  s.allocations = {a(1, 0, 0x10, 100, true), a(2, 1, 0x10, 100, true), a(3, 0, 0x10, 100, false),
                   a(5, 1, 0x30, 70, true), a(6, 0, 0x40, 30, true)};
  const MemoryReport m = analyze_memory(s);
  REQUIRE(m.timeline.size() == 5);
  // all devices: 100, 200, 100, 170, 200; the event's device: 100 (0), 100 (1), 0 (0), 170 (1), 30 (0).
  const uint64_t total[] = {100, 200, 100, 170, 200}, own[] = {100, 100, 0, 170, 30};
  for (std::size_t k = 0; k < 5; ++k) {
    CHECK(m.timeline[k].in_use_bytes == total[k]);
    CHECK(m.timeline[k].device_in_use_bytes == own[k]);
  }
}

TEST_CASE("Memory: address reused without a release is counted", "[analysis][memory]") {
  TraceStore s;
  AllocationRecord x;
  x.timestamp_ns = 1;
  x.address = 0x10;
  x.bytes = 64;
  AllocationRecord y = x;
  y.timestamp_ns = 2;
  y.bytes = 32;
  s.allocations = {x, y};
  const MemoryReport m = analyze_memory(s);
  CHECK(m.reallocated_live == 1);
  CHECK(m.peak_in_use_bytes == 64);
  CHECK(m.timeline.back().in_use_bytes == 32);
}

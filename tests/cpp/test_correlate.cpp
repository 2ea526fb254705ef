// correlate(): API joins, nesting and attribution on hand-built stores whose expected links
// are worked out by hand in the comments, plus a randomized check against a brute-force
// search on properly nested intervals.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <random>

#include "fpgaprof/correlate.hpp"

using namespace fpgaprof;

namespace {

ApiRecord api(uint32_t corr, uint32_t thread, uint64_t start, uint64_t end) {
  ApiRecord a;
  a.correlation_id = corr;
  a.thread_id = thread;
  a.start_ns = start;
  a.end_ns = end;
  return a;
}
KernelRecord kernel(uint32_t corr, uint64_t start) {
  KernelRecord k;
  k.correlation_id = corr;
  k.start_ns = start;
  k.end_ns = start + 100;
  return k;
}
RegionRecord region(uint32_t thread, uint64_t start, uint64_t end) {
  RegionRecord r;
  r.thread_id = thread;
  r.start_ns = start;
  r.end_ns = end;
  return r;
}
MarkerRecord marker(uint32_t thread, uint64_t start, uint64_t end, bool is_range = true, bool closed = true) {
  MarkerRecord m;
  m.thread_id = thread;
  m.start_ns = start;
  m.end_ns = end;
  m.is_range = is_range;
  m.is_closed = closed;
  return m;
}

// Two threads (100 and 200), records deliberately out of order in every table.
TraceStore hand_store() {
  TraceStore s;
  s.api_calls = {
      api(11, 200, 1000, 1100),  // 0
      api(10, 100, 500, 600),    // 1
      api(12, 100, 2000, 2100),  // 2 runtime call (outer) ...
      api(12, 100, 2010, 2090),  // 3 ... and the driver call under it: same correlation id
      api(13, 100, 3000, 3050),  // 4 memcpy
      api(14, 200, 4000, 4010),  // 5 allocation
      api(15, 100, 5000, 5500),  // 6 sync
      api(16, 200, 1200, 1250),  // 7 memset
  };
  s.kernels = {kernel(12, 9000), kernel(10, 8000), kernel(11, 8500), kernel(99, 9500)};
  MemcpyRecord m;
  m.correlation_id = 13;
  s.memcpys = {m};
  MemsetRecord ms;
  ms.correlation_id = 16;
  s.memsets = {ms};
  AllocationRecord al;
  al.correlation_id = 14;
  al.timestamp_ns = 4005;
  s.allocations = {al};
  SyncRecord sy;
  sy.correlation_id = 15;
  SyncRecord unmatched_sync;
  unmatched_sync.correlation_id = 77;
  unmatched_sync.thread_id = 5;
  s.syncs = {sy, unmatched_sync};
  s.regions = {
      region(100, 1500, 2200),  // 0 inner, listed before its parent
      region(100, 400, 2500),   // 1 outer
      region(200, 900, 5000),   // 2 only region of thread 200
      region(100, 2600, 2700),  // 3 after the outer one closed
  };
  s.markers = {
      marker(100, 1990, 2150),             // 0 Thunk
      marker(100, 450, 2400),              // 1 XlaModule
      marker(100, 490, 550),               // 2 Thunk
      marker(100, 2000, 2000, false),      // 3 instantaneous
      marker(200, 950, 960, true, false),  // 4 still open at stop
  };
  return s;
}

}  // namespace

TEST_CASE("correlate joins API calls, nests ranges and attributes activities", "[correlate]") {
  TraceStore s = hand_store();
  const CorrelationStats st = correlate(s);

  // Kernels: corr 12 -> API 2 (the outer of the two corr-12 calls: it starts first), thread
  // 100, launch 2000; corr 10 -> API 1; corr 11 -> API 0 on thread 200; corr 99 has no API call.
  REQUIRE(s.kernels[0].api_index == 2);
  REQUIRE(s.kernels[0].thread_id == 100);
  REQUIRE(s.kernels[0].launch_ns == 2000);
  REQUIRE(s.kernels[1].api_index == 1);
  REQUIRE(s.kernels[1].launch_ns == 500);
  REQUIRE(s.kernels[2].api_index == 0);
  REQUIRE(s.kernels[2].thread_id == 200);
  REQUIRE(s.kernels[3].api_index == kNone32);
  REQUIRE(s.kernels[3].launch_ns == 0);
  REQUIRE(s.kernels[3].thread_id == 0);

  // Region nesting on thread 100: [400,2500) contains [1500,2200); [2600,2700) is top level.
  REQUIRE(s.regions[1].parent == kNone32);
  REQUIRE(s.regions[1].depth == 0);
  REQUIRE(s.regions[0].parent == 1);
  REQUIRE(s.regions[0].depth == 1);
  REQUIRE(s.regions[2].parent == kNone32);
  REQUIRE(s.regions[3].parent == kNone32);
  REQUIRE(s.regions[3].depth == 0);

  // Marker nesting on thread 100: XlaModule [450,2400) holds Thunks [1990,2150) and
  // [490,550); the instantaneous marker at 2000 sits inside the Thunk [1990,2150).
  REQUIRE(s.markers[1].parent == kNone32);
  REQUIRE(s.markers[0].parent == 1);
  REQUIRE(s.markers[0].depth == 1);
  REQUIRE(s.markers[2].parent == 1);
  REQUIRE(s.markers[3].parent == 0);
  REQUIRE(s.markers[3].depth == 2);
  REQUIRE(s.markers[4].parent == kNone32);

  // Regions at launch: kernel 0 launched at 2000 on thread 100 is inside both [400,2500)
  // and [1500,2200): innermost is region 0. Kernel 1 at 500: only region 1. Kernel 2 at 1000
  // on thread 200: region 2. Unmatched kernel 3: none.
  REQUIRE(s.kernels[0].region_index == 0);
  REQUIRE(s.kernels[1].region_index == 1);
  REQUIRE(s.kernels[2].region_index == 2);
  REQUIRE(s.kernels[3].region_index == kNone32);
  // Markers at launch: 2000 -> Thunk 0 (the instantaneous marker 3 never contains anything);
  // 500 -> Thunk 2; thread 200 at 1000 -> marker 4, open because it was never closed.
  REQUIRE(s.kernels[0].marker_index == 0);
  REQUIRE(s.kernels[1].marker_index == 2);
  REQUIRE(s.kernels[2].marker_index == 4);
  REQUIRE(s.kernels[3].marker_index == kNone32);

  // Memcpy: API 4, thread 100, launch 3000: region [2600,2700) and everything else closed.
  REQUIRE(s.memcpys[0].api_index == 4);
  REQUIRE(s.memcpys[0].thread_id == 100);
  REQUIRE(s.memcpys[0].launch_ns == 3000);
  REQUIRE(s.memcpys[0].region_index == kNone32);
  REQUIRE(s.memcpys[0].marker_index == kNone32);
  // Memset: API 7, thread 200 at 1200: region 2 [900,5000), marker 4 (open).
  REQUIRE(s.memsets[0].api_index == 7);
  REQUIRE(s.memsets[0].region_index == 2);
  REQUIRE(s.memsets[0].marker_index == 4);
  // Allocation: API 5, thread 200, at 4005: region 2.
  REQUIRE(s.allocations[0].api_index == 5);
  REQUIRE(s.allocations[0].thread_id == 200);
  REQUIRE(s.allocations[0].region_index == 2);
  // Syncs: corr 15 -> thread 100; corr 77 unmatched keeps its thread.
  REQUIRE(s.syncs[0].thread_id == 100);
  REQUIRE(s.syncs[1].thread_id == 5);

  REQUIRE(st.unmatched_kernels == 1);
  REQUIRE(st.unmatched_memcpys == 0);
  REQUIRE(st.unmatched_memsets == 0);
  REQUIRE(st.unmatched_allocations == 0);
  REQUIRE(st.unmatched_syncs == 1);
  // Kernels 3 (unmatched) and the memcpy are outside every region.
  REQUIRE(st.unattributed_to_region == 2);
  REQUIRE(s.meta.warnings.size() == 2);
  REQUIRE(s.meta.warnings[0].message ==
          "correlate: 1 kernels have no matching API record (their API records were "
          "dropped or not captured): launching thread, launch time and region are "
          "unknown for them");
  CHECK(s.meta.warnings[0].code() == "correlate.unmatched_records");
  CHECK(s.meta.warnings[0].numbers == std::vector<double>{1});
  REQUIRE(s.meta.warnings[1].message.find("1 syncs") != std::string::npos);
}

TEST_CASE("correlate is idempotent and keeps other warnings", "[correlate]") {
  TraceStore s = hand_store();
  s.meta.warnings.add("capture.flush_failed", "from capture");
  // a trace of an older writer: its correlate warning is prose, replaced like a record
  s.meta.warnings.add(kOlderTraceCode, "correlate: 9 kernels have no matching API record");
  correlate(s);
  const TraceStore once = s;
  correlate(s);
  REQUIRE(s.meta.warnings == once.meta.warnings);
  REQUIRE(s.meta.warnings.size() == 3);
  REQUIRE(s.meta.warnings[0].message == "from capture");
  REQUIRE(s.meta.warnings[1].code() == "correlate.unmatched_records");
  for (std::size_t i = 0; i < s.kernels.size(); ++i) {
    REQUIRE(s.kernels[i].api_index == once.kernels[i].api_index);
    REQUIRE(s.kernels[i].region_index == once.kernels[i].region_index);
    REQUIRE(s.kernels[i].marker_index == once.kernels[i].marker_index);
  }
  // Stale links from an earlier join are cleared when the API record is gone.
  s.api_calls.clear();
  const CorrelationStats st = correlate(s);
  REQUIRE(st.unmatched_kernels == 4);
  for (const KernelRecord& k : s.kernels) {
    REQUIRE(k.api_index == kNone32);
    REQUIRE(k.region_index == kNone32);
    REQUIRE(k.launch_ns == 0);
  }
}

TEST_CASE("kernels launched from worker threads get the region open at launch time", "[correlate]") {
  // The Python thread 1 opens R0 [100,1000) and inside it R1 [200,300); thread 2 opens
  // R2 [700,900). Thread 7 (a JAX worker: it never opens a region) launches everything else.
  TraceStore s;
  s.regions = {region(1, 100, 1000), region(1, 200, 300), region(2, 700, 900)};
  s.api_calls = {
      api(1, 7, 500, 510),    // A: only R0 is open at 500 -> R0
      api(2, 7, 250, 260),    // B: R0 and R1 open at 250; innermost (latest start) R1
      api(3, 1, 1500, 1510),  // C: thread 1 has regions of its own, outside them -> none
      api(4, 7, 1200, 1210),  // D: nothing open at 1200 -> none
      api(6, 7, 800, 810),    // F: R0 [100,1000) and R2 [700,900) open; R2 started later -> R2
  };
  // E has no API record: its GPU start 600 is used -> R0.
  s.kernels = {kernel(1, 5000), kernel(2, 5100), kernel(3, 5200), kernel(4, 5300), kernel(5, 600), kernel(6, 5400)};
  const CorrelationStats st = correlate(s);
  REQUIRE(s.kernels[0].region_index == 0);
  REQUIRE(s.kernels[1].region_index == 1);
  REQUIRE(s.kernels[2].region_index == kNone32);
  REQUIRE(s.kernels[3].region_index == kNone32);
  REQUIRE(s.kernels[4].region_index == 0);
  REQUIRE(s.kernels[5].region_index == 2);
  REQUIRE(st.regions_by_time == 4);         // A, B, E, F
  REQUIRE(st.unattributed_to_region == 2);  // C, D
}

TEST_CASE("range boundaries: start is inside, end is outside", "[correlate]") {
  TraceStore s;
  s.api_calls = {api(1, 7, 100, 110), api(2, 7, 200, 210), api(3, 7, 199, 205)};
  s.kernels = {kernel(1, 1000), kernel(2, 1000), kernel(3, 1000)};
  s.regions = {region(7, 100, 200)};
  correlate(s);
  REQUIRE(s.kernels[0].region_index == 0);        // launch == start
  REQUIRE(s.kernels[1].region_index == kNone32);  // launch == end
  REQUIRE(s.kernels[2].region_index == 0);        // last ns inside
}

TEST_CASE("same-start ranges nest longer-first, equal ranges nest in listed order", "[correlate]") {
  TraceStore s;
  s.regions = {region(1, 10, 20), region(1, 10, 50), region(1, 10, 20)};
  correlate(s);
  // [10,50) is outermost; the first [10,20) is inside it; the second [10,20) inside the first.
  REQUIRE(s.regions[1].parent == kNone32);
  REQUIRE(s.regions[0].parent == 1);
  REQUIRE(s.regions[2].parent == 0);
  REQUIRE(s.regions[2].depth == 2);
}

namespace {

// Properly nested random intervals on `thread` inside [lo, hi).
void nested(std::mt19937& rng, std::vector<RegionRecord>& out, uint32_t thread, uint64_t lo, uint64_t hi, int depth) {
  std::uniform_int_distribution<int> count(0, depth > 3 ? 0 : 3);
  const int n = count(rng);
  if (n == 0 || hi - lo < 4 * static_cast<uint64_t>(n)) return;
  const uint64_t slot = (hi - lo) / static_cast<uint64_t>(n);
  for (int i = 0; i < n; ++i) {
    std::uniform_int_distribution<uint64_t> a(lo + slot * i, lo + slot * i + slot / 2);
    std::uniform_int_distribution<uint64_t> b(lo + slot * i + slot / 2 + 1, lo + slot * (i + 1));
    const uint64_t s = a(rng), e = b(rng);
    out.push_back(region(thread, s, e));
    nested(rng, out, thread, s + 1, e, depth + 1);  // children start strictly later
  }
}

}  // namespace

TEST_CASE("attribution matches a brute-force search", "[correlate]") {
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    TraceStore s;
    for (uint32_t t = 1; t <= 3; ++t) nested(rng, s.regions, t, 0, 100000, 0);
    std::shuffle(s.regions.begin(), s.regions.end(), rng);
    std::uniform_int_distribution<uint64_t> when(0, 100000);
    std::uniform_int_distribution<uint32_t> thread(1, 3);
    for (uint32_t c = 1; c <= 300; ++c) {
      s.api_calls.push_back(api(c, thread(rng), when(rng), 0));
      s.kernels.push_back(kernel(c, 0));
    }
    std::shuffle(s.api_calls.begin(), s.api_calls.end(), rng);
    std::shuffle(s.kernels.begin(), s.kernels.end(), rng);
    correlate(s);
    for (const KernelRecord& k : s.kernels) {
      // Innermost = latest start among the containing ranges (they nest properly).
      // A thread that opened no region at all falls back to any thread's regions.
      const bool own = std::any_of(s.regions.begin(), s.regions.end(),
                                   [&](const RegionRecord& r) { return r.thread_id == k.thread_id; });
      uint32_t best = kNone32;
      for (uint32_t i = 0; i < s.regions.size(); ++i) {
        const RegionRecord& r = s.regions[i];
        if ((own && r.thread_id != k.thread_id) || r.start_ns > k.launch_ns || k.launch_ns >= r.end_ns) continue;
        if (best == kNone32 || r.start_ns > s.regions[best].start_ns) best = i;
      }
      REQUIRE(k.region_index == best);
    }
    for (uint32_t i = 0; i < s.regions.size(); ++i) {
      // Parent = the containing range with the latest start (other than itself).
      const RegionRecord& r = s.regions[i];
      uint32_t best = kNone32;
      for (uint32_t j = 0; j < s.regions.size(); ++j) {
        const RegionRecord& p = s.regions[j];
        if (j == i || p.thread_id != r.thread_id || p.start_ns > r.start_ns || p.end_ns < r.end_ns) continue;
        if (best == kNone32 || p.start_ns > s.regions[best].start_ns) best = j;
      }
      REQUIRE(r.parent == best);
    }
  }
}

TEST_CASE("correlate scales as n log n", "[correlate]") {
  // 1M kernels and API records in random order with 100k regions on 4 threads; a quadratic
  // join would take hours.
  std::mt19937_64 rng(3);
  TraceStore s;
  const uint32_t n = 1'000'000;
  std::uniform_int_distribution<uint32_t> thread(1, 4);
  for (uint32_t c = 1; c <= n; ++c) {
    s.api_calls.push_back(api(c, thread(rng), uint64_t{c} * 100, uint64_t{c} * 100 + 50));
    s.kernels.push_back(kernel(c, uint64_t{c} * 100 + 70));
  }
  for (uint32_t r = 0; r < 100'000; ++r)
    s.regions.push_back(region(1 + r % 4, uint64_t{r} * 1000, uint64_t{r} * 1000 + 900));
  std::shuffle(s.api_calls.begin(), s.api_calls.end(), rng);
  std::shuffle(s.kernels.begin(), s.kernels.end(), rng);
  const auto t0 = std::chrono::steady_clock::now();
  const CorrelationStats st = correlate(s);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(st.unmatched_kernels == 0);
  // Not a speed target (bench/ measures those): a guard against a quadratic join, which takes
  // hours here. ~1 s optimized; the sanitizer build on a loaded 2-core machine took 30.4 s.
  REQUIRE(seconds < 600.0);
  // Kernel with correlation c launched at 100c; region r covers [1000r, 1000r+900) on thread
  // 1 + r%4, so a kernel is in region c/10 exactly when its thread matches and 100c%1000 < 900.
  for (const KernelRecord& k : s.kernels) {
    const uint32_t c = k.correlation_id;
    const uint32_t r = c / 10;
    const bool inside = (c % 10) < 9 && k.thread_id == 1 + r % 4 && r < 100'000;
    REQUIRE(k.region_index == (inside ? r : kNone32));
  }
}

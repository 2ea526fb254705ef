// Counter metric choice, range -> kernel matching and value mapping into the roofline; the
// CUPTI session itself needs a GPU (not available here): only its no-GPU error is checked.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "fpgaprof/analysis/roofline.hpp"
#include "fpgaprof/cupti/counters.hpp"
#include "fpgaprof/error.hpp"

#include <limits>

using namespace fpgaprof;

TEST_CASE("Counter metrics per chip: preferred names, alternatives, missing roles", "[analysis][counters]") {
  // A GH100-like list: everything but the fp16 instruction counters.
  std::vector<std::string> gh100 = {"dram__bytes_read", "dram__bytes_write", "gpu__time_duration",
                                    "sm__inst_executed_pipe_tensor"};
  for (const char* op : {"fadd", "fmul", "ffma", "dadd", "dmul", "dfma"})
    gh100.push_back(std::string("sm__sass_thread_inst_executed_op_") + op + "_pred_on");
  const MetricSelection a = select_counter_metrics(gh100);
  CHECK(a.metrics.size() == 10);  // 14 roles - 3 fp16 ones - the thread-block count
  CHECK(a.metrics[0] == "dram__bytes_read.sum");
  REQUIRE(a.missing.size() == 4);
  CHECK(a.missing[0].find("fp16_add") == 0);
  CHECK(a.missing[0].find("hadd") != std::string::npos);
  // A GB202-like chip names DRAM bytes dram__bytes_op_read/_write.
  const MetricSelection b = select_counter_metrics({"dram__bytes_op_read", "dram__bytes_op_write"});
  REQUIRE(b.metrics.size() == 2);
  CHECK(b.metrics[0] == "dram__bytes_op_read.sum");
  CHECK(b.metrics[1] == "dram__bytes_op_write.sum");
  CHECK(b.missing.size() == 12);
  // sm__ctas_launched, where the chip has it, comes last (its values pair ranges with launches)
  const MetricSelection c = select_counter_metrics({"gpu__time_duration", "sm__ctas_launched"});
  REQUIRE(c.metrics.size() == 2);
  CHECK(c.metrics[1] == "sm__ctas_launched.sum");
  CHECK(counter_role_name(c.roles[1]) == std::string("ctas_launched"));
}

namespace {

// The launching API call of correlation id `corr`: [start_ns, start_ns + duration_ns].
void add_launch_call(TraceStore& s, uint32_t corr, uint64_t start_ns, uint64_t duration_ns) {
  ApiRecord a;
  a.correlation_id = corr;
  a.start_ns = start_ns;
  a.end_ns = start_ns + duration_ns;
  s.api_calls.push_back(a);
}

// A trace with kernels (name, correlation id, GPU start, device) and one launch API call per
// correlation id starting `launch_ns` before... given explicitly per kernel.
struct Kernels {
  TraceStore s;
  void add(const char* name, uint32_t corr, uint64_t start_ns, uint64_t launch_ns, uint32_t device = 0) {
    KernelRecord r;
    r.name = s.strings.intern(name);
    r.correlation_id = corr;
    r.start_ns = start_ns;
    r.end_ns = start_ns + 1000;
    r.device_id = device;
    s.kernels.push_back(r);
    if (launch_ns != 0) add_launch_call(s, corr, launch_ns, 500);
  }
  // A kernel launched with `blocks` thread blocks (grid blocks x 1 x 1).
  void add_grid(const char* name, uint32_t corr, uint64_t start_ns, uint64_t launch_ns, uint32_t blocks) {
    add(name, corr, start_ns, launch_ns);
    LaunchConfig c;
    c.grid_x = blocks;
    c.grid_y = c.grid_z = 1;
    c.block_x = 128;
    c.block_y = c.block_z = 1;
    s.kernels.back().launch_config = s.intern_launch_config(c);
  }
};

CounterWindow window(uint64_t start_ns, uint64_t end_ns, std::size_t capacity, std::vector<CounterRange> ranges,
                     uint32_t device = 0) {
  CounterWindow w;
  w.start_ns = start_ns;
  w.end_ns = end_ns;
  w.device_id = device;
  w.capacity = capacity;
  w.ranges = std::move(ranges);
  return w;
}

const std::vector<std::string> kMetrics = {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "dram__bytes_read.sum"};

}  // namespace

TEST_CASE("Counter windows pair ranges with kernels in execution order", "[analysis][counters]") {
  Kernels t;
  // Auto range names ranges "0", "1", ... by execution order. Store order is not execution order:
  // B ran first (GPU start 100), then A (start 500), then A again (start 900). Correlation ids
  // are given out of order too (a graph launch / several launching threads).
  t.add("A", 7, 500, 450);
  t.add("A", 3, 900, 850);
  t.add("B", 9, 100, 50);
  t.add("C", 4, 2000, 1900, /*device=*/1);  // another device: not profiled by this context
  t.add("D", 5, 5000, 4900);                // launched after the window closed
  const std::vector<CounterWindow> w = {
      window(10, 1000, 2048, {{"0", {100, 1e6}}, {"1", {0, 2e6}}, {"2", {300, 3e6}}})};
  const CounterMatch m = add_counter_windows(t.s, kMetrics, w);
  CHECK(m.matched == 3);
  CHECK(m.unmatched_ranges == 0);
  CHECK(m.unprofiled_kernels == 0);  // D is after the last window: not counting any more
  CHECK(m.ambiguous_windows == 0);
  REQUIRE(t.s.counters.size() == 6);
  CHECK(t.s.counters[0].kernel_index == 2);  // range 0 -> B (ran first)
  CHECK(t.s.counters[2].kernel_index == 0);  // range 1 -> A at 500
  CHECK(t.s.counters[4].kernel_index == 1);  // range 2 -> A at 900
  CHECK(t.s.counters[5].range_index == 2);
  CHECK(t.s.strings.get(t.s.counters[0].range_name) == "0");
  // Value mapping: ffma counts 2 FLOPs each, DRAM read is bytes.
  const auto measured = analysis::measured_kernels(t.s);
  REQUIRE(measured.size() == 5);            // one per kernel
  CHECK(measured[2].flops == Approx(200));  // B: 100 ffma
  CHECK(measured[2].dram_bytes == Approx(1e6));
  CHECK(measured[1].flops == Approx(600));  // second A: 300 ffma
}

TEST_CASE("Counter windows: membership by launch time, capacity, gaps and disagreements", "[analysis][counters]") {
  SECTION("the launch API call decides the window, not the GPU start") {
    Kernels t;
    t.add("A", 1, 1500, 900);  // launched inside [0, 1000], ran after the window's end
    t.add("B", 2, 800, 0);     // no API record: its own start (800) is used
    const CounterMatch m = add_counter_windows(t.s, kMetrics, {window(0, 1000, 16, {{"0", {1, 1}}, {"1", {2, 2}}})});
    CHECK(m.matched == 2);
    CHECK(t.s.counters[0].kernel_index == 1);  // B started first on the GPU
    CHECK(t.s.counters[2].kernel_index == 0);
  }
  SECTION("a full window pairs the first `capacity` kernels and counts the rest") {
    Kernels t;
    for (uint32_t i = 0; i < 5; ++i) t.add("K", i + 1, 100 * (i + 1), 100 * (i + 1) - 10);
    const CounterMatch m =
        add_counter_windows(t.s, kMetrics, {window(0, 1000, 3, {{"0", {1, 0}}, {"1", {2, 0}}, {"2", {3, 0}}})});
    CHECK(m.matched == 3);
    CHECK(m.unprofiled_kernels == 2);  // 5 kernels launched, capacity 3
    CHECK(m.ambiguous_windows == 0);
    CHECK(t.s.counters[4].kernel_index == 2);
  }
  SECTION("kernel and range counts that disagree below capacity are not guessed") {
    Kernels t;
    t.add("A", 1, 100, 90);
    t.add("B", 2, 200, 190);
    t.add("C", 3, 300, 290);
    const CounterMatch m = add_counter_windows(t.s, kMetrics, {window(0, 1000, 16, {{"0", {1, 0}}, {"1", {2, 0}}})});
    CHECK(m.matched == 0);
    CHECK(m.unmatched_ranges == 2);
    CHECK(m.unpaired_kernels == 3);
    CHECK(m.ambiguous_windows == 1);
    REQUIRE(t.s.counters.size() == 4);  // kept, unpaired
    for (const CounterRecord& c : t.s.counters) CHECK(c.kernel_index == kNone32);
  }
  SECTION("a window in which CUPTI profiled nothing counts its kernels") {
    Kernels t;
    t.add("A", 1, 100, 90);
    t.add("B", 2, 200, 190);
    const CounterMatch m = add_counter_windows(t.s, kMetrics, {window(0, 1000, 16, {})});
    CHECK(m.matched == 0);
    CHECK(m.unmatched_ranges == 0);
    CHECK(m.unpaired_kernels == 2);
    CHECK(m.ambiguous_windows == 1);
    CHECK(t.s.counters.empty());
  }
  SECTION("a range named otherwise than by number must carry its kernel's name") {
    Kernels t;
    t.add("A", 1, 100, 90);
    t.add("B", 2, 200, 190);
    CHECK(add_counter_windows(t.s, kMetrics, {window(0, 1000, 16, {{"A", {1, 0}}, {"B", {2, 0}}})}).matched == 2);
    Kernels u;
    u.add("A", 1, 100, 90);
    u.add("B", 2, 200, 190);
    const CounterMatch m = add_counter_windows(u.s, kMetrics, {window(0, 1000, 16, {{"B", {1, 0}}, {"A", {2, 0}}})});
    CHECK(m.matched == 0);
    CHECK(m.ambiguous_windows == 1);
  }
  SECTION("two windows; kernels launched between them and after a failed restart are counted") {
    Kernels t;
    t.add("A", 1, 100, 90);     // window 1
    t.add("G", 2, 1100, 1050);  // the checkpoint gap (1000, 1200)
    t.add("B", 3, 1300, 1250);  // window 2
    t.add("C", 4, 1400, 1350);  // window 2
    t.add("E", 5, 2500, 2450);  // counting off (failed restart at 2000)
    t.add("F", 6, 9000, 8900);  // after the trace's counting ended
    CounterWindow off = window(2000, 3000, 0, {});
    const CounterMatch m = add_counter_windows(
        t.s, kMetrics,
        {window(0, 1000, 16, {{"0", {1, 0}}}), window(1200, 1900, 16, {{"0", {2, 0}}, {"1", {3, 0}}}), off});
    CHECK(m.matched == 3);
    CHECK(m.unprofiled_kernels == 2);  // G (gap) and E (counting off); F is outside every window
    CHECK(m.ambiguous_windows == 0);
    CHECK(t.s.counters[0].kernel_index == 0);
    CHECK(t.s.counters[2].kernel_index == 2);  // window 2, range 0 -> B
    CHECK(t.s.counters[4].kernel_index == 3);
    CHECK(t.s.counters[4].range_index == 2);  // numbered across windows
    // A later call skips kernels that already hold counters.
    const CounterMatch again = add_counter_windows(t.s, kMetrics, {window(0, 1000, 16, {{"0", {1, 0}}})});
    CHECK(again.matched == 0);
    CHECK(again.ambiguous_windows == 1);  // one range, no free kernel left in the window
  }
}

TEST_CASE("Counter session without a GPU says so", "[analysis][counters]") {
  // No NVIDIA driver on the build machines: start() must throw our error, never crash.
  try {
    auto session = CounterSession::start({});
    SUCCEED("a GPU is present: the session started");
    TraceStore s;
    session->stop_into(s);
  } catch (const Error& e) {
    CHECK((e.kind() == ErrorKind::kCuptiUnavailable || e.kind() == ErrorKind::kCounters));
    CHECK(std::string(e.what()).size() > 10);
  }
}

TEST_CASE("Why a device refuses the Range Profiler, one clause per blocking feature", "[analysis][counters]") {
  CHECK(profiling_refusal({}).empty());  // everything supported
  ProfilingSupport s;
  s.vgpu = 2;  // disabled: can be enabled
  CHECK(profiling_refusal(s) ==
        "profiling is disabled for this vGPU: enable it in the vGPU's settings "
        "(the hypervisor's enable_profiling option)");
  s.vgpu = 1;
  s.architecture = 1;
  s.confidential_compute = 1;
  s.sli = 0;  // unknown: says nothing
  CHECK(profiling_refusal(s) ==
        "the GPU is older than Volta (compute capability 7.0); this vGPU does not "
        "support profiling; confidential computing is on: counters are not available "
        "in that mode");
}

TEST_CASE("The insufficient-privileges error names the call, the driver option and the ways out",
          "[analysis][counters]") {
  // What CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35) from cuptiProfilerHostInitialize ... becomes;
  // the clauses are the fixes NVIDIA documents for ERR_NVGPUCTRPERM / error 35.
  const std::string m = counter_privileges_message("cuptiRangeProfilerEnable");
  CHECK(m.rfind("cuptiRangeProfilerEnable returned CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: ", 0) == 0);
  CHECK(m.find("only admin users read GPU performance counters") != std::string::npos);
  CHECK(m.find("run as root") != std::string::npos);
  CHECK(m.find("--cap-add SYS_ADMIN") != std::string::npos);
  CHECK(m.find("'options nvidia NVreg_RestrictProfilingToAdminUsers=0' to a file in /etc/modprobe.d/") !=
        std::string::npos);
  CHECK(m.find("https://developer.nvidia.com/CUPTI_ERROR_INSUFFICIENT_PRIVILEGES") != std::string::npos);
  CHECK(m.substr(m.size() - 30) == "or trace without counters=True");
  CHECK(m.find('\n') == std::string::npos);  // one line
  // The call is whatever failed, not a fixed name.
  CHECK(counter_privileges_message("cuptiProfilerHostInitialize").rfind("cuptiProfilerHostInitialize returned", 0) ==
        0);
}

TEST_CASE("Insufficient privileges under WSL names the Windows Control Panel, not modprobe", "[analysis][counters]") {
  const std::string wsl2 = "Linux version 5.15.167.4-microsoft-standard-WSL2 (root@x) (gcc (GCC) 11.2.0) #1 SMP";
  const std::string m = counter_privileges_message("cuptiRangeProfilerEnable", wsl2);
  CHECK(m.rfind("cuptiRangeProfilerEnable returned CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: ", 0) == 0);
  CHECK(m.find("Manage GPU Performance Counters") != std::string::npos);
  CHECK(m.find("NVreg_RestrictProfilingToAdminUsers") == std::string::npos);
  CHECK(m.find('\n') == std::string::npos);
  const std::string native = counter_privileges_message("cuptiRangeProfilerEnable", "Linux version 6.1.0-18-amd64");
  CHECK(native.find("NVreg_RestrictProfilingToAdminUsers=0") != std::string::npos);
}

TEST_CASE("WSL: CUPTI's wsl level decides, /proc/version when CUPTI cannot say", "[analysis][counters]") {
  // /proc/version of a WSL2 kernel (Microsoft's WSL2-Linux-Kernel 5.15 as WSL 2.x ships it) and
  // of a Debian kernel.
  const std::string wsl2 =
      "Linux version 5.15.167.4-microsoft-standard-WSL2 (root@f9c826d3017f) (gcc (GCC) 11.2.0, GNU ld "
      "(GNU Binutils) 2.37) #1 SMP Tue Nov 5 00:21:55 UTC 2024\n";
  const std::string wsl1 = "Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com) (gcc version 5.4.0) #1237\n";
  const std::string debian =
      "Linux version 6.1.0-26-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) "
      "12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.1.112-1\n";
  // CUPTI answered "supported": counting goes on, also on WSL.
  CHECK(wsl_counters_refusal(3, "/proc/version", wsl2).empty());
  // CUPTI answered "unsupported" or "disabled": refused, whatever /proc/version says.
  CHECK(wsl_counters_refusal(1, "/proc/version", debian)
            .rfind("cuptiProfilerDeviceSupported reports WSL profiling as unsupported: ", 0) == 0);
  CHECK(wsl_counters_refusal(2, "/proc/version", wsl2)
            .rfind("cuptiProfilerDeviceSupported reports WSL profiling as disabled: ", 0) == 0);
  // CUPTI could not say (no such call, a failed call, level 0): /proc/version decides.
  for (int level : {kWslNotAsked, kWslQueryFailed, 0}) {
    CHECK(wsl_counters_refusal(level, "/proc/version", debian).empty());
    CHECK(wsl_counters_refusal(level, "/proc/version", "").empty());  // unreadable: not WSL
    CHECK_FALSE(wsl_counters_refusal(level, "/proc/version", wsl1).empty());
  }
  const std::string m = wsl_counters_refusal(kWslNotAsked, "/tmp/v", wsl2);
  CHECK(m.rfind("this is WSL (/tmp/v names a Microsoft kernel) and CUPTI cannot confirm that it supports "
                "hardware counters here (cuptiProfilerDeviceSupported is not in this libcupti): ",
                0) == 0);
  CHECK(wsl_counters_refusal(kWslQueryFailed, "/proc/version", wsl2).find("(cuptiProfilerDeviceSupported failed)") !=
        std::string::npos);
  CHECK(m.find("Manage GPU Performance Counters") != std::string::npos);
  CHECK(m.find("run on native Linux") != std::string::npos);
  CHECK(m.substr(m.size() - 30) == "or trace without counters=True");
  CHECK(m.find('\n') == std::string::npos);  // one line
}

TEST_CASE("The kernel version string is read from a regular file only, at most 4 KiB", "[analysis][counters]") {
  const std::string dir = "/tmp/fpgaprof_test_proc_version_" + std::to_string(::getpid());
  REQUIRE(std::system(("mkdir -p " + dir).c_str()) == 0);
  const std::string file = dir + "/version";
  {
    std::FILE* f = std::fopen(file.c_str(), "wb");
    REQUIRE(f != nullptr);
    const std::string big(10000, 'x');
    std::fputs(("Linux version 5.15.167.4-microsoft-standard-WSL2 " + big).c_str(), f);
    std::fclose(f);
  }
  const std::string text = read_proc_version(file);
  CHECK(text.size() == 4096);
  CHECK(text.rfind("Linux version 5.15.167.4-microsoft", 0) == 0);
  CHECK(read_proc_version(dir).empty());               // a folder
  CHECK(read_proc_version(dir + "/missing").empty());  // no such file
  CHECK(read_proc_version("/dev/zero").empty());       // a device: never read
  const std::string fifo = dir + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(read_proc_version(fifo).empty());  // a FIFO without a writer: returns at once, nothing read
  std::remove(fifo.c_str());
  std::remove(file.c_str());
  ::rmdir(dir.c_str());
  // The path: $FPGAPROF_PROC_VERSION when set and not empty, else /proc/version.
  ::setenv("FPGAPROF_PROC_VERSION", file.c_str(), 1);
  CHECK(proc_version_path() == file);
  ::setenv("FPGAPROF_PROC_VERSION", "", 1);
  CHECK(proc_version_path() == "/proc/version");
  ::unsetenv("FPGAPROF_PROC_VERSION");
  CHECK(proc_version_path() == "/proc/version");
}

TEST_CASE("Counter windows: device-to-device copies take ranges, replayed launches get the counter's time",
          "[analysis][counters]") {
  // The start of MBIRJAX's forward projection as an H100 traced it under counters=True (CUPTI 13,
  // 2026-11-22): kernel replay left every kernel and DtoD copy with start = end = 0, and the
  // Range Profiler made one range of each of them, in launch order. Correlation ids, copy sizes
  // and range durations (ns) are the real ones; API call starts are made up (increasing).
  TraceStore s;
  s.meta.set_incomplete_records(7);  // the 6 launches below and one HtoD copy
  REQUIRE(s.meta.warnings.messages() == std::vector<std::string>{incomplete_records_warning(7)});
  CHECK(s.meta.warnings[0].code() == "capture.records_incomplete");
  CHECK(s.meta.warnings[0].numbers == std::vector<double>{7});
  auto copy = [&](uint32_t corr, CopyKind kind, uint64_t bytes, uint64_t t) {
    MemcpyRecord m;
    m.correlation_id = corr;
    m.copy_kind = kind;
    m.bytes = bytes;
    s.memcpys.push_back(m);
    add_launch_call(s, corr, t, 100000);
  };
  auto kernel = [&](uint32_t corr, const char* name, uint64_t t) {
    KernelRecord k;
    k.correlation_id = corr;
    k.name = s.strings.intern(name);
    s.kernels.push_back(k);
    add_launch_call(s, corr, t, 100000);
  };
  copy(91, CopyKind::kHtoD, 12384, 1000000);     // HtoD: no range
  copy(107, CopyKind::kDtoD, 12384, 2000000);    // range 0: 2432 ns
  kernel(108, "sort_4_1", 3000000);              // range 1: 27776 ns
  copy(122, CopyKind::kDtoD, 12384, 4000000);    // range 2: 2400 ns
  copy(136, CopyKind::kDtoD, 12384, 5000000);    // range 3: 2496 ns
  copy(150, CopyKind::kDtoD, 1048576, 6000000);  // range 4: 2784 ns
  kernel(180, "loop_compare_fusion", 7000000);   // range 5: 2816 ns
  const std::vector<std::string> metrics = {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
                                            "gpu__time_duration.sum"};
  const CounterMatch m = add_counter_windows(s, metrics,
                                             {window(0, 9000000, 2048,
                                                     {{"0", {0, 2432}},
                                                      {"1", {5, 27776}},
                                                      {"2", {0, 2400}},
                                                      {"3", {0, 2496}},
                                                      {"4", {0, 2784}},
                                                      {"5", {7, 2816}}})});
  CHECK(m.matched == 2);         // the two kernels
  CHECK(m.matched_copies == 4);  // the four DtoD copies
  CHECK(m.unmatched_ranges == 0);
  CHECK(m.ambiguous_windows == 0);
  CHECK(m.timed_from_counters == 6);
  REQUIRE(s.counters.size() == 12);
  CHECK(s.counters[0].memcpy_index == 1);  // range 0 -> the first DtoD copy (memcpys[1])
  CHECK(s.counters[0].kernel_index == kNone32);
  CHECK(s.counters[2].kernel_index == 0);  // range 1 -> sort_4_1
  CHECK(s.counters[2].memcpy_index == kNone32);
  CHECK(s.counters[10].kernel_index == 1);  // range 5 -> loop_compare_fusion
  // Times: start = the launch call's start, end = start + the range's duration.
  CHECK(s.kernels[0].start_ns == 3000000);
  CHECK(s.kernels[0].duration_ns() == 27776);
  CHECK(s.kernels[1].duration_ns() == 2816);
  CHECK(s.memcpys[4].start_ns == 6000000);
  CHECK(s.memcpys[4].duration_ns() == 2784);
  CHECK(s.memcpys[0].duration_ns() == 0);  // the HtoD copy had no range: untouched
  CHECK(s.meta.incomplete_records == 1);
  REQUIRE(s.meta.warnings.size() == 1);
  CHECK(s.meta.warnings[0].message.rfind("1 GPU activity records have no timestamps", 0) == 0);
  // under counters the cause is kernel replay (no range timed the HtoD copy), not a full buffer
  CHECK(s.meta.warnings[0].message == incomplete_records_warning(1, true));
  CHECK(s.meta.warnings[0].message.find("trace again without counters") != std::string::npos);
  // The roofline reads the kernels' counters (ffma x 2) and their duration.
  const auto measured = analysis::measured_kernels(s);
  REQUIRE(measured.size() == 2);
  CHECK(measured[0].flops == Approx(10));
  CHECK(measured[0].duration_ns == Approx(27776));
  CHECK(measured[1].flops == Approx(14));

  SECTION("a record with GPU timestamps keeps them; a second call skips paired copies") {
    TraceStore t;
    KernelRecord k;
    k.correlation_id = 1;
    k.start_ns = 500;
    k.end_ns = 900;
    k.name = t.strings.intern("A");
    t.kernels.push_back(k);
    MemcpyRecord c;
    c.correlation_id = 2;
    c.copy_kind = CopyKind::kDtoD;
    c.start_ns = 950;
    c.end_ns = 990;
    t.memcpys.push_back(c);
    MemcpyRecord peer = c;  // a copy to another device: not profiled by this context
    peer.correlation_id = 3;
    peer.src_device_id = 0;
    peer.dst_device_id = 1;
    t.memcpys.push_back(peer);
    const CounterMatch a = add_counter_windows(t, metrics, {window(0, 1000, 16, {{"0", {1, 400}}, {"1", {0, 40}}})});
    CHECK(a.matched == 1);
    CHECK(a.matched_copies == 1);
    CHECK(a.timed_from_counters == 0);
    CHECK(t.kernels[0].start_ns == 500);
    CHECK(t.counters[2].memcpy_index == 0);
    const CounterMatch b = add_counter_windows(t, metrics, {window(0, 1000, 16, {{"0", {1, 400}}})});
    CHECK(b.matched + b.matched_copies == 0);
    CHECK(b.ambiguous_windows == 1);
  }
  SECTION("launches without timestamps keep their launch order among timed ones") {
    // K1 and K3 replayed (no timestamps), the copy C2 between them kept its GPU times: the
    // ranges follow launch order K1, C2, K3, not "untimed first".
    TraceStore t;
    KernelRecord k1;
    k1.correlation_id = 1;
    k1.name = t.strings.intern("K1");
    KernelRecord k3 = k1;
    k3.correlation_id = 3;
    k3.name = t.strings.intern("K3");
    t.kernels = {k1, k3};
    MemcpyRecord c2;
    c2.correlation_id = 2;
    c2.copy_kind = CopyKind::kDtoD;
    c2.start_ns = 250;
    c2.end_ns = 260;
    t.memcpys.push_back(c2);
    add_launch_call(t, 1, 100, 10);
    add_launch_call(t, 2, 200, 10);
    add_launch_call(t, 3, 300, 10);
    const CounterMatch a =
        add_counter_windows(t, metrics, {window(0, 1000, 16, {{"0", {1, 11}}, {"1", {0, 12}}, {"2", {3, 13}}})});
    CHECK(a.matched == 2);
    CHECK(a.matched_copies == 1);
    CHECK(t.counters[0].kernel_index == 0);  // range 0 -> K1
    CHECK(t.counters[2].memcpy_index == 0);  // range 1 -> C2
    CHECK(t.counters[4].kernel_index == 1);  // range 2 -> K3
    CHECK(t.kernels[1].start_ns == 300);
    CHECK(t.kernels[1].duration_ns() == 13);
    CHECK(t.memcpys[0].start_ns == 250);  // had GPU times: kept
  }
  SECTION("a duration that is not a finite count of nanoseconds sets no time") {
    TraceStore t;
    KernelRecord k;
    k.correlation_id = 1;
    k.name = t.strings.intern("K");
    t.kernels.push_back(k);
    add_launch_call(t, 1, 100, 0);
    const CounterMatch a =
        add_counter_windows(t, metrics, {window(0, 1000, 16, {{"0", {1, std::numeric_limits<double>::infinity()}}})});
    CHECK(a.matched == 1);
    CHECK(a.timed_from_counters == 0);
    CHECK(t.kernels[0].end_ns == 0);
  }
  SECTION("a named range cannot be a copy") {
    TraceStore t;
    MemcpyRecord c;
    c.correlation_id = 2;
    c.copy_kind = CopyKind::kDtoD;
    t.memcpys.push_back(c);
    const CounterMatch a = add_counter_windows(t, metrics, {window(0, 1000, 16, {{"memcpy", {0, 40}}})});
    CHECK(a.matched_copies == 0);
    CHECK(a.ambiguous_windows == 1);
  }
}

TEST_CASE("The incomplete-records warning follows its count", "[analysis][counters]") {
  TraceMeta m;
  m.warnings.add(kOlderTraceCode, "first");
  m.set_incomplete_records(0);  // nothing missing: no warning
  CHECK(m.warnings.messages() == std::vector<std::string>{"first"});
  m.set_incomplete_records(89);
  CHECK(m.incomplete_records == 89);
  REQUIRE(m.warnings.size() == 2);
  CHECK(m.warnings[1].message ==
        "89 GPU activity records have no timestamps (start=end=0: CUPTI's device timestamp buffer ran out); left "
        "out of times. Fix: trace again with a larger device buffer (fpgaprof.trace(device_buffer_size=...), "
        "fpgaprof run --device-buffer-size)");
  m.warnings.add(kOlderTraceCode, "last");
  m.set_incomplete_records(3);  // reworded in place
  CHECK(m.warnings.messages() == std::vector<std::string>{"first", incomplete_records_warning(3), "last"});
  CHECK(m.warnings[1].message.rfind("3 GPU activity records", 0) == 0);
  CHECK(m.warnings[1].numbers == std::vector<double>{3});
  m.set_incomplete_records(0);  // removed
  CHECK(m.warnings.messages() == std::vector<std::string>{"first", "last"});
  CHECK(m.incomplete_records == 0);
  // A trace of an older writer holds the older prose under no code: it is found and reworded.
  m.warnings.add(kOlderTraceCode, older_incomplete_records_warning(0));
  m.set_incomplete_records(5, true);
  REQUIRE(m.warnings.size() == 3);
  CHECK(m.warnings[2].code() == "capture.records_incomplete");
  CHECK(m.warnings[2].message == incomplete_records_warning(5, true));
}

TEST_CASE("Counter windows aligned by thread blocks (sm__ctas_launched)", "[analysis][counters]") {
  // Metrics: FFMA, then the thread blocks each range launched. Kernels are launched 100 ns apart
  // and run in that order; the window holds them all.
  const std::vector<std::string> metrics = {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
                                            "sm__ctas_launched.sum"};
  const auto ranges = [](std::vector<double> ctas) {
    std::vector<CounterRange> out;
    for (std::size_t i = 0; i < ctas.size(); ++i)
      out.push_back({std::to_string(i), {static_cast<double>(10 * (i + 1)), ctas[i]}});
    return out;
  };
  const auto kernel_of_range = [](const TraceStore& s, uint32_t range) {
    for (const CounterRecord& c : s.counters)
      if (c.range_index == range) return c.kernel_index;
    return kNone32;
  };
  SECTION("one range more than launches, like the H200's forward projection: only that range is left") {
    // XLA's iota (9483 blocks), an untraced launch (7 blocks: no record), six cub sort kernels
    // (128 blocks each), the gather (9483 blocks).
    Kernels t;
    t.add_grid("wrapped_iota", 1, 1000, 100, 9483);
    for (uint32_t k = 0; k < 6; ++k) t.add_grid("cub_sort", 2 + k, 2000 + 100 * k, 200 + 100 * k, 128);
    t.add_grid("loop_gather_select_fusion", 9, 3000, 900, 9483);
    const CounterMatch m = add_counter_windows(
        t.s, metrics, {window(0, 10000, 2048, ranges({9483, 7, 128, 128, 128, 128, 128, 128, 9483}))});
    CHECK(m.aligned_windows == 1);
    CHECK(m.matched == 8);
    CHECK(m.unmatched_ranges == 1);
    CHECK(m.unpaired_kernels == 0);
    CHECK(m.ambiguous_windows == 1);  // the window is reported: one range has no launch
    CHECK(kernel_of_range(t.s, 0) == 0);
    CHECK(kernel_of_range(t.s, 1) == kNone32);  // the extra range
    CHECK(kernel_of_range(t.s, 2) == 1);        // the first cub kernel
    CHECK(kernel_of_range(t.s, 8) == 7);        // the gather
  }
  SECTION("equal counts and agreeing grids pair one to one, copies fitting any count") {
    Kernels t;
    t.add_grid("A", 1, 1000, 100, 99);
    t.add_grid("B", 3, 3000, 300, 3161);
    MemcpyRecord c;  // a device-to-device copy launched between them
    c.correlation_id = 2;
    c.copy_kind = CopyKind::kDtoD;
    c.bytes = 4096;
    c.start_ns = 2000;
    c.end_ns = 2100;
    t.s.memcpys.push_back(c);
    add_launch_call(t.s, 2, 200, 10);
    const CounterMatch m = add_counter_windows(t.s, metrics, {window(0, 10000, 2048, ranges({99, 0, 3161}))});
    CHECK(m.matched == 2);
    CHECK(m.matched_copies == 1);
    CHECK(m.unmatched_ranges == 0);
    CHECK(m.ambiguous_windows == 0);
    CHECK(kernel_of_range(t.s, 2) == 1);
  }
  SECTION("equal counts whose grids disagree: only what the grids confirm is paired") {
    // In order, range 1 (30 blocks) would go to B (20 blocks) and range 2 to C: the counts alone
    // would pair both wrongly. Two alignments of least cost (2) exist, one with range 1 on C, one
    // with range 2 on B: neither pair is certain.
    Kernels t;
    t.add_grid("A", 1, 1000, 100, 10);
    t.add_grid("B", 2, 2000, 200, 20);
    t.add_grid("C", 3, 3000, 300, 30);
    const CounterMatch m = add_counter_windows(t.s, metrics, {window(0, 10000, 2048, ranges({10, 30, 20}))});
    CHECK(m.matched == 1);
    CHECK(kernel_of_range(t.s, 0) == 0);
    CHECK(kernel_of_range(t.s, 1) == kNone32);
    CHECK(kernel_of_range(t.s, 2) == kNone32);
    CHECK(m.unmatched_ranges == 2);
    CHECK(m.unpaired_kernels == 2);
  }
  SECTION("an extra range among alike launches is not guessed: none of them is paired") {
    // Three ranges of 128 blocks for two kernels of 128: which range is the extra one is unknown.
    Kernels t;
    t.add_grid("K", 1, 1000, 100, 128);
    t.add_grid("K", 2, 2000, 200, 128);
    const CounterMatch m = add_counter_windows(t.s, metrics, {window(0, 10000, 2048, ranges({128, 128, 128}))});
    CHECK(m.matched == 0);
    CHECK(m.unmatched_ranges == 3);
    CHECK(m.unpaired_kernels == 2);
    CHECK(m.ambiguous_windows == 1);
  }
  SECTION("a launch without a range, between distinct grids, leaves only that launch unpaired") {
    Kernels t;
    t.add_grid("A", 1, 1000, 100, 10);
    t.add_grid("B", 2, 2000, 200, 20);
    t.add_grid("C", 3, 3000, 300, 30);
    const CounterMatch m = add_counter_windows(t.s, metrics, {window(0, 10000, 2048, ranges({10, 30}))});
    CHECK(m.matched == 2);
    CHECK(kernel_of_range(t.s, 1) == 2);
    CHECK(m.unmatched_ranges == 0);
    CHECK(m.unpaired_kernels == 1);
  }
  SECTION("a full window keeps its rule: the first `capacity` launches, in order") {
    Kernels t;
    for (uint32_t i = 0; i < 4; ++i) t.add_grid("K", i + 1, 1000 * (i + 1), 100 * (i + 1), 5 + i);
    const CounterMatch m = add_counter_windows(t.s, metrics, {window(0, 10000, 2, ranges({5, 6}))});
    CHECK(m.matched == 2);
    CHECK(m.unprofiled_kernels == 2);
    CHECK(m.ambiguous_windows == 0);
    CHECK(m.aligned_windows == 0);
  }
}

TEST_CASE("Counter windows aligned by thread blocks never pair a range with the wrong launch", "[analysis][counters]") {
  // Random windows whose ranges are their launches' own (a kernel's grid size as its CTA count, a
  // copy's 0), with extra ranges inserted (any CTA count, also one of the window's grids) or
  // ranges of some launches dropped, never both: then the true pairing is an alignment of least
  // cost (|ranges - launches| gaps), so a range paired by every least-cost alignment is paired as
  // in truth. Grids come from a small set, so alike neighbours are common.
  std::mt19937 rng(20261126);
  const std::vector<uint32_t> grids = {1, 2, 128, 128, 9483};
  const std::vector<std::string> metrics = {"sm__ctas_launched.sum"};
  uint64_t paired = 0, ranges_total = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    Kernels t;
    const uint32_t n = 1 + rng() % 40;
    std::vector<double> truth;        // per launch, in launch order: its CTA count
    std::vector<uint32_t> kernel_of;  // per launch: kernel index, or kNone32 for a copy
    for (uint32_t i = 0; i < n; ++i) {
      const uint64_t launch = 100 * (i + 1);
      if (rng() % 5 == 0) {  // a device-to-device copy
        MemcpyRecord c;
        c.correlation_id = i + 1;
        c.copy_kind = CopyKind::kDtoD;
        c.start_ns = 10 * launch;
        c.end_ns = 10 * launch + 5;
        t.s.memcpys.push_back(c);
        add_launch_call(t.s, i + 1, launch, 10);
        truth.push_back(0);
        kernel_of.push_back(kNone32);
      } else {
        const uint32_t g = grids[rng() % grids.size()];
        t.add_grid("K", i + 1, 10 * launch, launch, g);
        truth.push_back(g);
        kernel_of.push_back(static_cast<uint32_t>(t.s.kernels.size() - 1));
      }
    }
    // ranges: (CTA count, true launch or kNone32 for an extra one)
    std::vector<std::pair<double, uint32_t>> rs;
    const bool insert = rng() % 2 == 0;
    const uint32_t changes = rng() % 4;
    std::vector<bool> dropped(n, false);
    for (uint32_t c = 0; !insert && c < changes; ++c) dropped[rng() % n] = true;
    for (uint32_t i = 0; i < n; ++i)
      if (!dropped[i]) rs.emplace_back(truth[i], i);
    for (uint32_t c = 0; insert && c < changes; ++c) {
      const double cta = rng() % 2 ? grids[rng() % grids.size()] : static_cast<double>(rng() % 50);
      rs.insert(rs.begin() + static_cast<std::ptrdiff_t>(rng() % (rs.size() + 1)), {cta, kNone32});
    }
    std::vector<CounterRange> ranges;
    for (std::size_t i = 0; i < rs.size(); ++i) ranges.push_back({std::to_string(i), {rs[i].first}});
    const CounterMatch m = add_counter_windows(t.s, metrics, {window(0, 100000, 4096, ranges)});
    ranges_total += rs.size();
    // one record per range (one metric); check each paired one against the truth
    REQUIRE(t.s.counters.size() == rs.size());
    for (std::size_t i = 0; i < rs.size(); ++i) {
      const CounterRecord& c = t.s.counters[i];
      const uint32_t want = rs[i].second;
      if (c.kernel_index != kNone32) {
        REQUIRE(want != kNone32);
        REQUIRE(c.kernel_index == kernel_of[want]);
        ++paired;
      } else if (c.memcpy_index != kNone32) {
        REQUIRE(want != kNone32);
        REQUIRE(kernel_of[want] == kNone32);
        ++paired;
      }
    }
    if (changes == 0) REQUIRE(m.ambiguous_windows == 0);  // nothing added or lost: all paired
  }
  // most ranges still find their launch (a floor, not a target: ambiguity leaves some out)
  CHECK(static_cast<double>(paired) > 0.8 * static_cast<double>(ranges_total));
}

// Counter metric choice, range -> kernel matching and value mapping into the roofline; the
// CUPTI session itself needs a GPU (not available here): only its no-GPU error is checked.
#include <catch2/catch.hpp>

#include "fpgaprof/analysis/roofline.hpp"
#include "fpgaprof/counters.hpp"
#include "fpgaprof/error.hpp"

using namespace fpgaprof;

TEST_CASE("Counter metrics per chip: preferred names, alternatives, missing roles", "[analysis][counters]") {
  // A GH100-like list: everything but the fp16 instruction counters.
  std::vector<std::string> gh100 = {"dram__bytes_read", "dram__bytes_write", "gpu__time_duration",
                                    "sm__inst_executed_pipe_tensor"};
  for (const char* op : {"fadd", "fmul", "ffma", "dadd", "dmul", "dfma"})
    gh100.push_back(std::string("sm__sass_thread_inst_executed_op_") + op + "_pred_on");
  const MetricSelection a = select_counter_metrics(gh100);
  CHECK(a.metrics.size() == 10);  // 13 roles - 3 fp16 ones
  CHECK(a.metrics[0] == "dram__bytes_read.sum");
  REQUIRE(a.missing.size() == 3);
  CHECK(a.missing[0].find("fp16_add") == 0);
  CHECK(a.missing[0].find("hadd") != std::string::npos);
  // A GB202-like chip names DRAM bytes dram__bytes_op_read/_write.
  const MetricSelection b = select_counter_metrics({"dram__bytes_op_read", "dram__bytes_op_write"});
  REQUIRE(b.metrics.size() == 2);
  CHECK(b.metrics[0] == "dram__bytes_op_read.sum");
  CHECK(b.metrics[1] == "dram__bytes_op_write.sum");
  CHECK(b.missing.size() == 11);
}

TEST_CASE("Counter ranges match kernels in launch order by name", "[analysis][counters]") {
  TraceStore s;
  const auto k = [&](const char* name, uint32_t corr, uint64_t start) {
    KernelRecord r;
    r.name = s.strings.intern(name);
    r.correlation_id = corr;
    r.start_ns = start;
    r.end_ns = start + 10000;
    return r;
  };
  // Store order differs from launch order (two streams): launch order is A(1) B(2) A(3).
  s.kernels = {k("A", 3, 500), k("B", 2, 100), k("A", 1, 0)};
  const std::vector<std::string> metrics = {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
                                            "dram__bytes_read.sum"};
  // Ranges in launch order, plus one kernel the trace never saw.
  const std::vector<CounterRange> ranges = {{"A", {100, 1e6}}, {"B", {0, 2e6}}, {"A", {300, 3e6}}, {"Z", {1, 1}}};
  const CounterMatch m = add_counter_ranges(s, metrics, ranges);
  CHECK(m.matched == 3);
  CHECK(m.unmatched_ranges == 1);
  REQUIRE(s.counters.size() == 8);
  CHECK(s.counters[0].kernel_index == 2);  // first A range -> correlation 1 = kernels[2]
  CHECK(s.counters[2].kernel_index == 1);  // B
  CHECK(s.counters[4].kernel_index == 0);  // second A -> correlation 3 = kernels[0]
  CHECK(s.counters[6].kernel_index == kNone32);
  CHECK(s.counters[7].range_index == 3);
  // Value mapping: ffma counts 2 FLOPs each, DRAM read is bytes.
  const auto measured = analysis::measured_kernels(s);
  REQUIRE(measured.size() == 3);
  CHECK(measured[2].flops == Approx(200));
  CHECK(measured[2].dram_bytes == Approx(1e6));
  CHECK(measured[0].flops == Approx(600));
  // A checkpoint's later ranges continue after the kernels already matched.
  const CounterMatch m2 = add_counter_ranges(s, metrics, {{"A", {1, 1}}}, 4);
  CHECK(m2.matched == 0);          // both A kernels already hold counters
  CHECK(m2.unmatched_ranges == 1);
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

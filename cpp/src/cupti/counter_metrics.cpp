// Pure parts of counter collection (no CUPTI): metric choice per chip and range -> kernel matching.
#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "fpgaprof/counters.hpp"

namespace fpgaprof {

const char* counter_role_name(CounterRole r) {
  switch (r) {
    case CounterRole::kDramRead: return "dram_read";
    case CounterRole::kDramWrite: return "dram_write";
    case CounterRole::kFp32Add: return "fp32_add";
    case CounterRole::kFp32Mul: return "fp32_mul";
    case CounterRole::kFp32Fma: return "fp32_fma";
    case CounterRole::kFp64Add: return "fp64_add";
    case CounterRole::kFp64Mul: return "fp64_mul";
    case CounterRole::kFp64Fma: return "fp64_fma";
    case CounterRole::kFp16Add: return "fp16_add";
    case CounterRole::kFp16Mul: return "fp16_mul";
    case CounterRole::kFp16Fma: return "fp16_fma";
    case CounterRole::kTensorInstructions: return "tensor_instructions";
    case CounterRole::kDuration: return "duration";
  }
  return "?";
}

namespace {

std::string base_of(const std::string& metric) {
  const auto dot = metric.rfind('.');
  return dot == std::string::npos ? metric : metric.substr(0, dot);
}

std::string sass(const char* op) { return std::string("sm__sass_thread_inst_executed_op_") + op + "_pred_on.sum"; }

}  // namespace

const std::vector<CounterMetric>& counter_metrics() {
  static const std::vector<CounterMetric> metrics = {
      {CounterRole::kDramRead, {"dram__bytes_read.sum", "dram__bytes_op_read.sum"}, "byte"},
      {CounterRole::kDramWrite, {"dram__bytes_write.sum", "dram__bytes_op_write.sum"}, "byte"},
      {CounterRole::kFp32Add, {sass("fadd")}, "instruction"},
      {CounterRole::kFp32Mul, {sass("fmul")}, "instruction"},
      {CounterRole::kFp32Fma, {sass("ffma")}, "instruction"},
      {CounterRole::kFp64Add, {sass("dadd")}, "instruction"},
      {CounterRole::kFp64Mul, {sass("dmul")}, "instruction"},
      {CounterRole::kFp64Fma, {sass("dfma")}, "instruction"},
      {CounterRole::kFp16Add, {sass("hadd")}, "instruction"},
      {CounterRole::kFp16Mul, {sass("hmul")}, "instruction"},
      {CounterRole::kFp16Fma, {sass("hfma")}, "instruction"},
      {CounterRole::kTensorInstructions, {"sm__inst_executed_pipe_tensor.sum"}, "instruction"},
      {CounterRole::kDuration, {"gpu__time_duration.sum"}, "nanosecond"},
  };
  return metrics;
}

MetricSelection select_counter_metrics(const std::vector<std::string>& supported_base_metrics) {
  MetricSelection sel;
  for (const CounterMetric& m : counter_metrics()) {
    bool found = false;
    for (const std::string& c : m.candidates) {
      if (std::find(supported_base_metrics.begin(), supported_base_metrics.end(), base_of(c)) !=
          supported_base_metrics.end()) {
        sel.metrics.push_back(c);
        sel.roles.push_back(m.role);
        found = true;
        break;
      }
    }
    if (!found) {
      std::string tried;
      for (const std::string& c : m.candidates) tried += (tried.empty() ? "" : ", ") + c;
      sel.missing.push_back(std::string(counter_role_name(m.role)) + " (tried " + tried + ")");
    }
  }
  return sel;
}

CounterMatch add_counter_ranges(TraceStore& store, const std::vector<std::string>& metrics,
                                const std::vector<CounterRange>& ranges, uint32_t first_range_index) {
  CounterMatch match;
  // Kernels in launch order; per name, a queue position of the next kernel not yet matched.
  std::vector<uint32_t> order(store.kernels.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return store.kernels[a].correlation_id < store.kernels[b].correlation_id;
  });
  std::unordered_map<std::string, std::vector<uint32_t>> by_name;
  for (const uint32_t k : order) by_name[store.strings.get(store.kernels[k].name)].push_back(k);
  // Kernels already holding counters (an earlier checkpoint) are skipped.
  std::vector<bool> taken(store.kernels.size(), false);
  for (const CounterRecord& c : store.counters)
    if (c.kernel_index < taken.size()) taken[c.kernel_index] = true;
  std::unordered_map<std::string, std::size_t> next;
  std::vector<StringId> metric_ids;
  for (const std::string& m : metrics) metric_ids.push_back(store.strings.intern(m));
  for (std::size_t r = 0; r < ranges.size(); ++r) {
    const CounterRange& range = ranges[r];
    uint32_t kernel = kNone32;
    auto it = by_name.find(range.name);
    if (it != by_name.end()) {
      std::size_t& pos = next[range.name];
      while (pos < it->second.size() && taken[it->second[pos]]) ++pos;
      if (pos < it->second.size()) {
        kernel = it->second[pos++];
        taken[kernel] = true;
      }
    }
    if (kernel == kNone32) match.unmatched_ranges += 1; else match.matched += 1;
    const StringId name = store.strings.intern(range.name);
    for (std::size_t m = 0; m < metric_ids.size() && m < range.values.size(); ++m) {
      CounterRecord rec;
      rec.range_index = first_range_index + static_cast<uint32_t>(r);
      rec.range_name = name;
      rec.kernel_index = kernel;
      rec.metric = metric_ids[m];
      rec.value = range.values[m];
      store.counters.push_back(rec);
    }
  }
  return match;
}

}  // namespace fpgaprof

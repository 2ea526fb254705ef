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

std::string profiling_refusal(const ProfilingSupport& s) {
  constexpr int kUnsupported = 1, kDisabled = 2;
  std::string out;
  const auto add = [&](const std::string& clause) { out += (out.empty() ? "" : "; ") + clause; };
  if (s.architecture == kUnsupported) add("the GPU is older than Volta (compute capability 7.0)");
  if (s.sli == kUnsupported) add("SLI is enabled: disable SLI");
  if (s.vgpu == kDisabled) add("profiling is disabled for this vGPU: enable it in the vGPU's settings "
                               "(the hypervisor's enable_profiling option)");
  else if (s.vgpu == kUnsupported) add("this vGPU does not support profiling");
  if (s.confidential_compute == kUnsupported) add("confidential computing is on: counters are not "
                                                  "available in that mode");
  if (s.cmp == kUnsupported) add("NVIDIA CMP (crypto mining) boards have no profiling");
  if (s.wsl == kUnsupported) add("this WSL setup does not support profiling: update the Windows "
                                 "driver or run on Linux");
  return out;
}

std::string counter_privileges_message(const std::string& call) {
  return call + " returned CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: the NVIDIA driver lets only admin "
         "users read GPU performance counters; run as root (in a container: --cap-add SYS_ADMIN), or "
         "have an admin add 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' to a file in "
         "/etc/modprobe.d/ and reload the driver or reboot "
         "(https://developer.nvidia.com/CUPTI_ERROR_INSUFFICIENT_PRIVILEGES); or trace without counters=True";
}

CounterMatch add_counter_windows(TraceStore& store, const std::vector<std::string>& metrics,
                                 const std::vector<CounterWindow>& windows, uint32_t first_range_index) {
  CounterMatch match;
  std::vector<StringId> metric_ids;
  for (const std::string& m : metrics) metric_ids.push_back(store.strings.intern(m));
  if (windows.empty()) return match;
  // When each kernel's launching API call began (else the kernel's own start), and the kernels
  // in that order: a window's kernels are one contiguous run of it.
  std::unordered_map<uint32_t, uint64_t> api_start;
  for (const ApiRecord& a : store.api_calls) {
    auto [it, fresh] = api_start.emplace(a.correlation_id, a.start_ns);
    if (!fresh && a.start_ns < it->second) it->second = a.start_ns;
  }
  std::vector<uint64_t> launch(store.kernels.size());
  for (uint32_t k = 0; k < store.kernels.size(); ++k) {
    const auto it = api_start.find(store.kernels[k].correlation_id);
    launch[k] = it != api_start.end() ? it->second : store.kernels[k].start_ns;
  }
  std::vector<uint32_t> by_launch(store.kernels.size());
  std::iota(by_launch.begin(), by_launch.end(), 0u);
  std::stable_sort(by_launch.begin(), by_launch.end(), [&](uint32_t a, uint32_t b) { return launch[a] < launch[b]; });
  // The kernels launched within [start_ns, end_ns], in launch order.
  const auto launched_within = [&](uint64_t start_ns, uint64_t end_ns) {
    const auto lo = std::lower_bound(by_launch.begin(), by_launch.end(), start_ns,
                                     [&](uint32_t k, uint64_t t) { return launch[k] < t; });
    const auto hi = std::upper_bound(lo, by_launch.end(), end_ns,
                                     [&](uint64_t t, uint32_t k) { return t < launch[k]; });
    return std::pair{lo, hi};
  };
  // Kernels already holding counters (an earlier call) are skipped.
  std::vector<bool> taken(store.kernels.size(), false);
  for (const CounterRecord& c : store.counters)
    if (c.kernel_index < taken.size()) taken[c.kernel_index] = true;

  uint32_t range_index = first_range_index;
  std::vector<uint32_t> in_window;
  std::vector<bool> seen(store.kernels.size(), false);  // launched inside some window
  for (const CounterWindow& w : windows) {
    in_window.clear();
    const auto [lo, hi] = launched_within(w.start_ns, w.end_ns);
    for (auto it = lo; it != hi; ++it) {
      const uint32_t k = *it;
      if (taken[k] || (w.device_id != kNone32 && store.kernels[k].device_id != w.device_id)) continue;
      in_window.push_back(k);
      seen[k] = true;
    }
    std::stable_sort(in_window.begin(), in_window.end(), [&](uint32_t a, uint32_t b) {
      const KernelRecord& x = store.kernels[a];
      const KernelRecord& y = store.kernels[b];
      return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : x.correlation_id < y.correlation_id;
    });
    const std::size_t n = w.ranges.size();
    if (w.capacity == 0) {  // counting was off (a failed checkpoint): nothing was profiled
      match.unprofiled_kernels += in_window.size();
      continue;
    }
    bool paired = in_window.size() == n || (in_window.size() > n && n == w.capacity && n > 0);
    for (std::size_t i = 0; paired && i < n; ++i) {
      const std::string& name = w.ranges[i].name;
      const bool numeric = !name.empty() && std::all_of(name.begin(), name.end(),
                                                        [](unsigned char c) { return c >= '0' && c <= '9'; });
      if (!numeric && name != store.strings.get(store.kernels[in_window[i]].name)) paired = false;
    }
    if (paired) {
      match.matched += n;
      match.unprofiled_kernels += in_window.size() - n;
    } else {
      match.unmatched_ranges += n;
      match.unpaired_kernels += in_window.size();
      match.ambiguous_windows += n > 0 || !in_window.empty() ? 1 : 0;
    }
    for (std::size_t i = 0; i < n; ++i) {
      const CounterRange& range = w.ranges[i];
      const uint32_t kernel = paired ? in_window[i] : kNone32;
      if (kernel != kNone32) taken[kernel] = true;
      const StringId name = store.strings.intern(range.name);
      for (std::size_t m = 0; m < metric_ids.size() && m < range.values.size(); ++m) {
        CounterRecord rec;
        rec.range_index = range_index;
        rec.range_name = name;
        rec.kernel_index = kernel;
        rec.metric = metric_ids[m];
        rec.value = range.values[m];
        store.counters.push_back(rec);
      }
      ++range_index;
    }
  }
  // Kernels launched while counting was paused between two windows (a checkpoint) have no range.
  const uint32_t device = windows.front().device_id;
  const auto [lo, hi] = launched_within(windows.front().start_ns, windows.back().end_ns);
  for (auto it = lo; it != hi; ++it)
    if (!taken[*it] && !seen[*it] && (device == kNone32 || store.kernels[*it].device_id == device))
      match.unprofiled_kernels += 1;
  return match;
}

}  // namespace fpgaprof

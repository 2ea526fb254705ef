// CUPTI-free parts of counter collection: metric choice per chip, range -> kernel matching, the
// refusal texts and the WSL check (with its bounded read of /proc/version).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "fpgaprof/cupti/counters.hpp"

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
    case CounterRole::kCtasLaunched: return "ctas_launched";
  }
  return "?";
}

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string base_of(const std::string& metric) {
  const auto dot = metric.rfind('.');
  return dot == std::string::npos ? metric : metric.substr(0, dot);
}

std::string sass(const char* op) { return std::string("sm__sass_thread_inst_executed_op_") + op + "_pred_on.sum"; }

// Alignment of a window's ranges with its launches by thread blocks (add_counter_windows).
// range_ctas[i]: range i's sm__ctas_launched; launch_ctas[j]: launch j's grid size, NaN for a
// copy (matches any count). A range or launch left out costs 1; a range is paired with launch j
// only when every least-cost alignment pairs it with j. Banded: launches further than the count
// difference + kAlignSlack from a range's position are not considered.
constexpr std::size_t kAlignSlack = 32;
constexpr std::size_t kMaxAlignGap = 256;

std::vector<uint32_t> align_by_ctas(const std::vector<double>& range_ctas, const std::vector<double>& launch_ctas) {
  const std::size_t r = range_ctas.size(), n = launch_ctas.size();
  std::vector<uint32_t> out(r, kNone32);
  const std::size_t gap = r > n ? r - n : n - r;
  if (gap > kMaxAlignGap || r == 0 || n == 0) return out;
  const auto band = static_cast<std::ptrdiff_t>(gap + kAlignSlack);
  const std::size_t width = static_cast<std::size_t>(2 * band + 1);
  const auto in_band = [&](std::size_t i, std::size_t j) {
    const std::ptrdiff_t d = static_cast<std::ptrdiff_t>(j) - static_cast<std::ptrdiff_t>(i);
    return d >= -band && d <= band;
  };
  const auto at = [&](std::size_t i, std::size_t j) {
    return i * width + static_cast<std::size_t>(static_cast<std::ptrdiff_t>(j) - static_cast<std::ptrdiff_t>(i) + band);
  };
  const auto fits = [&](std::size_t i, std::size_t j) {
    const double want = launch_ctas[j];
    return std::isfinite(range_ctas[i]) && (std::isnan(want) || std::fabs(range_ctas[i] - want) < 0.5);
  };
  constexpr uint32_t kInf = UINT32_MAX / 4;
  // Alignment counts saturate here (their products must stay finite); a window with that many
  // least-cost alignments is left unpaired.
  constexpr double kManyWays = 1e150;
  // f: least cost of ranges [0, i) with launches [0, j), nf: how many such alignments;
  // b, nb: the same for ranges [i, r) with launches [j, n).
  std::vector<uint32_t> f((r + 1) * width, kInf), b((r + 1) * width, kInf);
  std::vector<double> nf((r + 1) * width, 0.0), nb((r + 1) * width, 0.0);
  const auto take = [kManyWays](uint32_t& best, double& ways, uint32_t cost, double w) {
    if (cost < best) {
      best = cost;
      ways = w;
    } else if (cost == best) {
      ways = std::min(ways + w, kManyWays);
    }
  };
  for (std::size_t i = 0; i <= r; ++i) {
    const std::size_t j0 = i > static_cast<std::size_t>(band) ? i - static_cast<std::size_t>(band) : 0;
    const std::size_t j1 = std::min(n, i + static_cast<std::size_t>(band));
    for (std::size_t j = j0; j <= j1; ++j) {
      uint32_t best = kInf;
      double ways = 0;
      if (i == 0 && j == 0) {
        best = 0;
        ways = 1;
      }
      if (i > 0 && in_band(i - 1, j) && f[at(i - 1, j)] < kInf) take(best, ways, f[at(i - 1, j)] + 1, nf[at(i - 1, j)]);
      if (j > 0 && in_band(i, j - 1) && f[at(i, j - 1)] < kInf) take(best, ways, f[at(i, j - 1)] + 1, nf[at(i, j - 1)]);
      if (i > 0 && j > 0 && fits(i - 1, j - 1) && f[at(i - 1, j - 1)] < kInf)
        take(best, ways, f[at(i - 1, j - 1)], nf[at(i - 1, j - 1)]);
      f[at(i, j)] = best;
      nf[at(i, j)] = ways;
    }
  }
  for (std::size_t ii = r + 1; ii-- > 0;) {
    const std::size_t j0 = ii > static_cast<std::size_t>(band) ? ii - static_cast<std::size_t>(band) : 0;
    const std::size_t j1 = std::min(n, ii + static_cast<std::size_t>(band));
    for (std::size_t j = j1 + 1; j-- > j0;) {
      uint32_t best = kInf;
      double ways = 0;
      if (ii == r && j == n) {
        best = 0;
        ways = 1;
      }
      if (ii < r && in_band(ii + 1, j) && b[at(ii + 1, j)] < kInf)
        take(best, ways, b[at(ii + 1, j)] + 1, nb[at(ii + 1, j)]);
      if (j < n && in_band(ii, j + 1) && b[at(ii, j + 1)] < kInf)
        take(best, ways, b[at(ii, j + 1)] + 1, nb[at(ii, j + 1)]);
      if (ii < r && j < n && fits(ii, j) && b[at(ii + 1, j + 1)] < kInf)
        take(best, ways, b[at(ii + 1, j + 1)], nb[at(ii + 1, j + 1)]);
      b[at(ii, j)] = best;
      nb[at(ii, j)] = ways;
    }
  }
  const uint32_t least = f[at(r, n)];
  const double all = nf[at(r, n)];
  if (least >= kInf || !(all > 0) || all >= kManyWays) return out;
  for (std::size_t i = 0; i < r; ++i) {
    const std::size_t j0 = i > static_cast<std::size_t>(band) ? i - static_cast<std::size_t>(band) : 0;
    const std::size_t j1 = std::min(n - 1, i + static_cast<std::size_t>(band));
    for (std::size_t j = j0; j <= j1; ++j) {
      if (!fits(i, j) || f[at(i, j)] >= kInf || b[at(i + 1, j + 1)] >= kInf) continue;
      if (f[at(i, j)] + b[at(i + 1, j + 1)] != least) continue;
      // Every least-cost alignment pairs range i with launch j.
      if (nf[at(i, j)] * nb[at(i + 1, j + 1)] >= all * (1 - 1e-9)) out[i] = static_cast<uint32_t>(j);
      break;  // on some least-cost alignment with j: with no other j if it is on all of them
    }
  }
  return out;
}

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
      {CounterRole::kCtasLaunched, {"sm__ctas_launched.sum"}, "cta"},
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
  if (s.vgpu == kDisabled)
    add("profiling is disabled for this vGPU: enable it in the vGPU's settings "
        "(the hypervisor's enable_profiling option)");
  else if (s.vgpu == kUnsupported)
    add("this vGPU does not support profiling");
  if (s.confidential_compute == kUnsupported)
    add("confidential computing is on: counters are not "
        "available in that mode");
  if (s.cmp == kUnsupported) add("NVIDIA CMP (crypto mining) boards have no profiling");
  if (s.wsl == kUnsupported)
    add("this WSL setup does not support profiling: update the Windows "
        "driver or run on Linux");
  return out;
}

namespace {

// /proc/version's text names a Microsoft kernel (WSL2's are "...-microsoft-standard-WSL2").
bool names_microsoft_kernel(const std::string& proc_version_text) {
  std::string lower = proc_version_text;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("microsoft") != std::string::npos;
}

// Where the Windows NVIDIA driver lets every user read counters (WSL has no driver of its own).
constexpr const char* kWindowsCounterAccess =
    "'Allow access to the GPU performance counters to all users' in the NVIDIA Control Panel "
    "(Desktop > Enable Developer Settings, then Developer > Manage GPU Performance Counters)";

}  // namespace

std::string wsl_counters_refusal(int wsl_level, const std::string& proc_version_path,
                                 const std::string& proc_version_text) {
  constexpr int kUnsupported = 1, kDisabled = 2, kSupported = 3;
  const std::string fix =
      std::string("counters under WSL2 need a Windows NVIDIA driver whose CUPTI reports WSL profiling support and ") +
      kWindowsCounterAccess + "; else run on native Linux, or trace without counters=True";
  if (wsl_level == kSupported) return "";  // CUPTI's own answer: WSL (if this is WSL) supports it
  if (wsl_level == kUnsupported || wsl_level == kDisabled)
    return std::string("cuptiProfilerDeviceSupported reports WSL profiling as ") +
           (wsl_level == kUnsupported ? "unsupported" : "disabled") + ": " + fix;
  if (!names_microsoft_kernel(proc_version_text)) return "";  // not WSL: nothing to refuse
  const char* unanswered = wsl_level == kWslNotAsked      ? "is not in this libcupti"
                           : wsl_level == kWslQueryFailed ? "failed"
                                                          : "did not say (wsl level unknown)";
  return "this is WSL (" + proc_version_path +
         " names a Microsoft kernel) and CUPTI cannot confirm that it supports hardware counters "
         "here (cuptiProfilerDeviceSupported " +
         unanswered + "): " + fix;
}

std::string proc_version_path() {
  const char* env = std::getenv("FPGAPROF_PROC_VERSION");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string("/proc/version");
}

std::string read_proc_version(const std::string& path) {
  // O_NONBLOCK: a FIFO named here must not hang the caller (it is refused below anyway).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    char buf[4096];
    std::size_t have = 0;
    while (have < sizeof buf) {
      const ssize_t n = ::read(fd, buf + have, sizeof buf - have);
      if (n > 0) {
        have += static_cast<std::size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else {
        break;
      }
    }
    out.assign(buf, have);
  }
  ::close(fd);
  return out;
}

std::string counter_privileges_message(const std::string& call, const std::string& proc_version_text) {
  if (names_microsoft_kernel(proc_version_text))
    return call +
           " returned CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: this is WSL, where the Windows NVIDIA driver "
           "decides (root, --cap-add SYS_ADMIN and /etc/modprobe.d do not apply): set " +
           kWindowsCounterAccess +
           " on Windows (https://developer.nvidia.com/CUPTI_ERROR_INSUFFICIENT_PRIVILEGES); or trace without "
           "counters=True";
  return call +
         " returned CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: the NVIDIA driver lets only admin "
         "users read GPU performance counters; run as root (in a container: --cap-add SYS_ADMIN), or "
         "have an admin add 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' to a file in "
         "/etc/modprobe.d/ and reload the driver or reboot "
         "(https://developer.nvidia.com/CUPTI_ERROR_INSUFFICIENT_PRIVILEGES); or trace without counters=True";
}

CounterMatch add_counter_windows(TraceStore& store, const std::vector<std::string>& metrics,
                                 const std::vector<CounterWindow>& windows, uint32_t first_range_index) {
  CounterMatch match;
  std::vector<StringId> metric_ids;
  std::size_t duration_metric = SIZE_MAX;  // position of gpu__time_duration in `metrics`
  std::size_t cta_metric = SIZE_MAX;       // position of sm__ctas_launched.sum
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    metric_ids.push_back(store.strings.intern(metrics[m]));
    if (metrics[m].rfind("gpu__time_duration.", 0) == 0 && duration_metric == SIZE_MAX) duration_metric = m;
    if (metrics[m] == "sm__ctas_launched.sum" && cta_metric == SIZE_MAX) cta_metric = m;
  }
  if (windows.empty()) return match;
  // What the Range Profiler's auto range profiles, one launch at a time: kernels and, as seen on
  // an H100 with CUPTI 13 (MBIRJAX's XLA copies), device-to-device copies within one device.
  // Launch k < kernels.size() is kernel k; launch kernels.size() + j is store.memcpys[j].
  const uint32_t n_kernels = static_cast<uint32_t>(store.kernels.size());
  std::vector<uint32_t> copies;
  for (uint32_t j = 0; j < store.memcpys.size(); ++j) {
    const MemcpyRecord& c = store.memcpys[j];
    if (c.copy_kind == CopyKind::kDtoD && (c.src_device_id == kNone32 || c.src_device_id == c.dst_device_id))
      copies.push_back(j);
  }
  const uint32_t n = n_kernels + static_cast<uint32_t>(copies.size());
  const auto is_kernel = [&](uint32_t l) { return l < n_kernels; };
  const auto copy_of = [&](uint32_t l) -> MemcpyRecord& { return store.memcpys[copies[l - n_kernels]]; };
  const auto start_of = [&](uint32_t l) { return is_kernel(l) ? store.kernels[l].start_ns : copy_of(l).start_ns; };
  const auto corr_of = [&](uint32_t l) {
    return is_kernel(l) ? store.kernels[l].correlation_id : copy_of(l).correlation_id;
  };
  const auto device_of = [&](uint32_t l) { return is_kernel(l) ? store.kernels[l].device_id : copy_of(l).device_id; };
  // When each launch's API call began (else its own start), and the launches in that order: a
  // window's launches are one contiguous run of it.
  std::unordered_map<uint32_t, uint64_t> api_start;
  for (const ApiRecord& a : store.api_calls) {
    auto [it, fresh] = api_start.emplace(a.correlation_id, a.start_ns);
    if (!fresh && a.start_ns < it->second) it->second = a.start_ns;
  }
  std::vector<uint64_t> launch(n);
  std::vector<bool> has_api(n, false);
  for (uint32_t l = 0; l < n; ++l) {
    const auto it = api_start.find(corr_of(l));
    has_api[l] = it != api_start.end();
    launch[l] = has_api[l] ? it->second : start_of(l);
  }
  std::vector<uint32_t> by_launch(n);
  std::iota(by_launch.begin(), by_launch.end(), 0u);
  std::stable_sort(by_launch.begin(), by_launch.end(), [&](uint32_t a, uint32_t b) { return launch[a] < launch[b]; });
  // The launches within [start_ns, end_ns], in launch order.
  const auto launched_within = [&](uint64_t start_ns, uint64_t end_ns) {
    const auto lo = std::lower_bound(by_launch.begin(), by_launch.end(), start_ns,
                                     [&](uint32_t k, uint64_t t) { return launch[k] < t; });
    const auto hi =
        std::upper_bound(lo, by_launch.end(), end_ns, [&](uint64_t t, uint32_t k) { return t < launch[k]; });
    return std::pair{lo, hi};
  };
  // Launches already holding counters (an earlier call) are skipped.
  std::vector<bool> taken(n, false);
  std::unordered_map<uint32_t, uint32_t> launch_of_memcpy;
  for (uint32_t i = 0; i < copies.size(); ++i) launch_of_memcpy.emplace(copies[i], n_kernels + i);
  for (const CounterRecord& c : store.counters) {
    if (c.kernel_index < n_kernels) taken[c.kernel_index] = true;
    const auto it = launch_of_memcpy.find(c.memcpy_index);
    if (it != launch_of_memcpy.end()) taken[it->second] = true;
  }

  uint32_t range_index = first_range_index;
  std::vector<uint32_t> in_window;
  std::vector<bool> seen(n, false);  // launched inside some window
  for (const CounterWindow& w : windows) {
    in_window.clear();
    const auto [lo, hi] = launched_within(w.start_ns, w.end_ns);
    for (auto it = lo; it != hi; ++it) {
      const uint32_t l = *it;
      if (taken[l] || (w.device_id != kNone32 && device_of(l) != w.device_id)) continue;
      in_window.push_back(l);
      seen[l] = true;
    }
    // Execution order: GPU start, then correlation id. A launch without GPU timestamps (kernel
    // replay gives none; each replayed launch runs before the next is issued) is placed by its
    // API call's start instead, so that it is not put before every timed launch.
    const auto order_of = [&](uint32_t l) { return start_of(l) != 0 ? start_of(l) : launch[l]; };
    std::stable_sort(in_window.begin(), in_window.end(), [&](uint32_t a, uint32_t b) {
      return order_of(a) != order_of(b) ? order_of(a) < order_of(b) : corr_of(a) < corr_of(b);
    });
    const std::size_t kernels_in_window =
        static_cast<std::size_t>(std::count_if(in_window.begin(), in_window.end(), is_kernel));
    const std::size_t r = w.ranges.size();
    if (w.capacity == 0) {  // counting was off (a failed checkpoint): nothing was profiled
      match.unprofiled_kernels += kernels_in_window;
      continue;
    }
    const auto numeric = [](const std::string& name) {
      return !name.empty() &&
             std::all_of(name.begin(), name.end(), [](unsigned char c) { return c >= '0' && c <= '9'; });
    };
    const bool all_numeric =
        std::all_of(w.ranges.begin(), w.ranges.end(), [&](const CounterRange& c) { return numeric(c.name); });
    const bool full = in_window.size() > r && r == w.capacity && r > 0;
    // pair[i]: the position in in_window of range i's launch, or kNone32
    std::vector<uint32_t> pair(r, kNone32);
    if (cta_metric != SIZE_MAX && all_numeric && !full) {
      std::vector<double> range_ctas(r), launch_ctas(in_window.size());
      for (std::size_t i = 0; i < r; ++i)
        range_ctas[i] = cta_metric < w.ranges[i].values.size() ? w.ranges[i].values[cta_metric] : kNaN;
      for (std::size_t i = 0; i < in_window.size(); ++i) {
        const uint32_t l = in_window[i];
        // A kernel's grid size; a copy, or a kernel whose launch configuration is unknown, fits any.
        const uint32_t lc = is_kernel(l) ? store.kernels[l].launch_config : kNone32;
        const uint64_t blocks = lc < store.launch_configs.size() ? store.launch_configs[lc].blocks() : 0;
        launch_ctas[i] = blocks > 0 ? static_cast<double>(blocks) : kNaN;
      }
      pair = align_by_ctas(range_ctas, launch_ctas);
      match.aligned_windows += r > 0 ? 1 : 0;
    } else {
      bool paired = in_window.size() == r || full;
      for (std::size_t i = 0; paired && i < r; ++i) {
        if (!numeric(w.ranges[i].name) &&
            (!is_kernel(in_window[i]) || w.ranges[i].name != store.strings.get(store.kernels[in_window[i]].name)))
          paired = false;
      }
      if (paired)
        for (std::size_t i = 0; i < r; ++i) pair[i] = static_cast<uint32_t>(i);
      for (std::size_t i = r; paired && i < in_window.size(); ++i)
        match.unprofiled_kernels += is_kernel(in_window[i]) ? 1 : 0;
    }
    std::vector<bool> used(in_window.size(), false);
    std::size_t left_ranges = 0;
    for (std::size_t i = 0; i < r; ++i) {
      if (pair[i] == kNone32) {
        ++left_ranges;
        continue;
      }
      used[pair[i]] = true;
      (is_kernel(in_window[pair[i]]) ? match.matched : match.matched_copies) += 1;
    }
    // Kernels without a range: past a full window's capacity (counted above), else unpaired.
    std::size_t left_kernels = 0;
    for (std::size_t i = 0; i < in_window.size() && !(full && left_ranges == 0); ++i)
      left_kernels += !used[i] && is_kernel(in_window[i]) ? 1 : 0;
    if (left_ranges > 0 || left_kernels > 0) {
      match.unmatched_ranges += left_ranges;
      match.unpaired_kernels += left_kernels;
      match.ambiguous_windows += 1;
    }
    for (std::size_t i = 0; i < r; ++i) {
      const CounterRange& range = w.ranges[i];
      const uint32_t l = pair[i] != kNone32 ? in_window[pair[i]] : kNone32;
      const StringId name = store.strings.intern(range.name);
      CounterRecord rec;
      rec.range_index = range_index;
      rec.range_name = name;
      if (l != kNone32) {
        taken[l] = true;
        if (is_kernel(l)) {
          rec.kernel_index = l;
        } else {
          rec.memcpy_index = copies[l - n_kernels];
        }
        // Kernel replay leaves the launch without GPU timestamps: its duration is the counter's
        // and its start the launch call's (each replayed launch runs before the call returns).
        if (duration_metric < range.values.size() && std::isfinite(range.values[duration_metric]) &&
            range.values[duration_metric] > 0 && range.values[duration_metric] < 1e15 && has_api[l]) {
          uint64_t& s0 = is_kernel(l) ? store.kernels[l].start_ns : copy_of(l).start_ns;
          uint64_t& e0 = is_kernel(l) ? store.kernels[l].end_ns : copy_of(l).end_ns;
          if (s0 == 0 && e0 == 0) {
            s0 = launch[l];
            e0 = launch[l] + static_cast<uint64_t>(range.values[duration_metric] + 0.5);
            match.timed_from_counters += 1;
          }
        }
      }
      for (std::size_t m = 0; m < metric_ids.size() && m < range.values.size(); ++m) {
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
    if (is_kernel(*it) && !taken[*it] && !seen[*it] && (device == kNone32 || device_of(*it) == device))
      match.unprofiled_kernels += 1;
  // Records that got their times from the counters no longer lack timestamps; those left
  // without are launches kernel replay did not time (the warning names that cause, not a full
  // timestamp buffer).
  const uint64_t left = store.meta.incomplete_records;
  store.meta.set_incomplete_records(left - std::min<uint64_t>(left, match.timed_from_counters), true);
  return match;
}

}  // namespace fpgaprof

#include "fpgaprof/analysis/collectives.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "fpgaprof/analysis/interval_set.hpp"
#include "fpgaprof/analysis/transfer_analysis.hpp"

namespace fpgaprof::analysis {

namespace {

constexpr std::array<std::string_view, 6> kXlaCollectives = {
    "all-reduce", "all-gather", "reduce-scatter", "collective-permute", "all-to-all", "collective-broadcast"};

// NCCL's operation names as they appear in its kernel names, and the XLA opcode of each.
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kNcclOps = {{
    {"AllReduce", "all-reduce"},
    {"AllGather", "all-gather"},
    {"ReduceScatter", "reduce-scatter"},
    {"AllToAll", "all-to-all"},
    {"Broadcast", "collective-broadcast"},
    {"SendRecv", "send-recv"},
}};

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// "all-reduce.3", "all-reduce-start.1", "all-reduce-done" -> "all-reduce"; "" otherwise. The
// opcode must be followed by the end, '.', or "-start"/"-done" (so "all-reduce-scatter-like"
// names of fusions do not count).
std::string_view xla_kind(std::string_view op) {
  for (std::string_view k : kXlaCollectives) {
    if (!starts_with(op, k)) continue;
    std::string_view rest = op.substr(k.size());
    if (starts_with(rest, "-start"))
      rest.remove_prefix(6);
    else if (starts_with(rest, "-done"))
      rest.remove_prefix(5);
    if (rest.empty() || rest.front() == '.') return k;
  }
  return {};
}

uint64_t duration_ns(uint64_t start_ns, uint64_t end_ns) { return end_ns > start_ns ? end_ns - start_ns : 0; }

}  // namespace

std::string_view collective_kind(std::string_view kernel_name, std::string_view op_name) {
  if (starts_with(kernel_name, "ncclDevKernel_") || starts_with(kernel_name, "ncclKernel_")) {
    const std::string_view rest = kernel_name.substr(kernel_name.find('_') + 1);
    for (const auto& [nccl, kind] : kNcclOps)
      if (starts_with(rest, nccl)) return kind;
    return "nccl";
  }
  return xla_kind(op_name);
}

CollectiveReport analyze_collectives(const TraceStore& store, const std::vector<uint32_t>& op_of_kernel,
                                     const std::vector<std::string_view>& op_names, std::size_t first_ends_kept) {
  std::vector<std::string_view> op_kind(op_names.size());
  for (std::size_t o = 0; o < op_names.size(); ++o) op_kind[o] = xla_kind(op_names[o]);
  std::vector<std::string_view> kind_of_name(store.strings.size());  // per kernel name id, cached
  std::vector<bool> kind_known(store.strings.size(), false);
  const auto kind_of = [&](std::size_t i) {
    const KernelRecord& k = store.kernels[i];
    std::string_view kind;
    if (k.name < store.strings.size()) {
      // The name decides for NCCL kernels; otherwise the kernel's op does.
      if (!kind_known[k.name]) {
        kind_of_name[k.name] = collective_kind(store.strings.get(k.name), {});
        kind_known[k.name] = true;
      }
      kind = kind_of_name[k.name];
    }
    if (kind.empty() && i < op_of_kernel.size() && op_of_kernel[i] < op_kind.size()) kind = op_kind[op_of_kernel[i]];
    return kind;
  };

  // The collective kernels first: their intervals are held (a job has few).
  CollectiveReport r;
  std::vector<std::pair<uint64_t, uint64_t>> coll;
  for (std::size_t i = 0; i < store.kernels.size(); ++i) {
    const std::string_view kind = kind_of(i);
    if (kind.empty()) continue;
    const KernelRecord& k = store.kernels[i];
    coll.emplace_back(k.start_ns, k.end_ns);
    const uint64_t d = duration_ns(k.start_ns, k.end_ns);
    r.kernel_count += 1;
    r.kernel_ns += d;
    auto it =
        std::find_if(r.by_kind.begin(), r.by_kind.end(), [&](const CollectiveKindStats& s) { return s.kind == kind; });
    if (it == r.by_kind.end()) {
      r.by_kind.push_back({std::string(kind), 0, 0});
      it = r.by_kind.end() - 1;
    }
    it->count += 1;
    it->total_ns += d;
  }
  std::sort(r.by_kind.begin(), r.by_kind.end(), [](const CollectiveKindStats& a, const CollectiveKindStats& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.kind < b.kind;
  });
  std::vector<std::pair<uint64_t, uint64_t>> firsts = coll;
  std::sort(firsts.begin(), firsts.end());
  for (std::size_t i = 0; i < firsts.size() && i < first_ends_kept; ++i) r.first_end_ns.push_back(firsts[i].second);
  const IntervalSet c = IntervalSet::from(std::move(coll));
  r.busy_ns = c.total_ns();

  // Then the other kernels' union, and its overlap with the collectives' block by block. In
  // start order (as kernels usually arrive) it is merged while reading, never holding one pair
  // per kernel (10^7 kernels: 160 MB and more while the vector grows).
  const auto& ks = store.kernels;
  if (!kernels_in_start_order(store)) {
    std::vector<std::pair<uint64_t, uint64_t>> compute;
    compute.reserve(ks.size() - r.kernel_count);
    for (std::size_t i = 0; i < ks.size(); ++i)
      if (kind_of(i).empty()) compute.emplace_back(ks[i].start_ns, ks[i].end_ns);
    const IntervalSet o = IntervalSet::from(std::move(compute));
    r.compute_busy_ns = o.total_ns();
    r.overlap_ns = c.intersection_ns(o);
    return r;
  }
  uint64_t block_start = 0, block_end = 0;
  bool open = false;
  const auto close = [&] {
    r.compute_busy_ns += block_end - block_start;
    if (!c.empty()) r.overlap_ns += c.overlap_ns(block_start, block_end);
  };
  for (std::size_t i = 0; i < ks.size(); ++i) {
    const KernelRecord& k = ks[i];
    if (k.end_ns <= k.start_ns || !kind_of(i).empty()) continue;  // empty, or a collective
    if (open && k.start_ns <= block_end) {
      block_end = std::max(block_end, k.end_ns);
      continue;
    }
    if (open) close();
    block_start = k.start_ns;
    block_end = k.end_ns;
    open = true;
  }
  if (open) close();
  return r;
}

}  // namespace fpgaprof::analysis

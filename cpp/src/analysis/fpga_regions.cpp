// The ranking of user regions as offload units (rank_fpga_regions): docs/fpga-model.md, "Regions".
// In steps: the kernel time per (region path, op) and the module calls the trace counts
// (collect_spans), the ops inside one path summed (sum_ops), its module calls and transfers
// (count_calls), its card time, transfers and speedups (what_if), then the ranking.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "fpga_rank_common.hpp"
#include "fpgaprof/analysis/attribution.hpp"
#include "fpgaprof/analysis/card_power.hpp"
#include "fpgaprof/analysis/fpga_model.hpp"
#include "fpgaprof/analysis/region_paths.hpp"
#include "fpgaprof/analysis/transfer_analysis.hpp"
#include "fpgaprof/error.hpp"

namespace fpgaprof::analysis {

using namespace fpga_detail;  // NOLINT(google-build-using-namespace)

namespace {

uint64_t pair_key(uint32_t group, uint32_t item) { return (static_cast<uint64_t>(group) << 32) | item; }

struct SpanAcc {
  uint64_t ns = 0;
  uint64_t kernels = 0;
  uint64_t timed = 0;  // kernels with a duration (a counter replay leaves some with start = end = 0)
};

// What the trace says of each region path, inclusive of the paths nested in it: kernel time
// per op inside (kNone32: kernels without an op), module calls counted from XlaModule ranges
// per (path, module), and HtoD + DtoH bytes copied inside.
struct Spans {
  std::vector<std::vector<std::pair<uint32_t, SpanAcc>>> ops_in;  // per path: (op, time) entries
  std::unordered_map<uint64_t, double> calls_in;                  // pair_key(path, module) -> calls
  std::vector<double> host_bytes;                                 // per path
};

Spans collect_spans(const TraceStore& store, const std::vector<OpCost>& ops, const std::vector<uint32_t>& op_of_kernel,
                    const RegionPaths& groups) {
  const std::size_t n_groups = groups.size();
  // Kernel time per (innermost region path, op) and the XlaModule ranges (one per module call)
  // seen per (path, module). Kernels run in a region path's order, so the last key is cached.
  std::unordered_map<uint64_t, SpanAcc> spans;
  std::unordered_map<uint64_t, double> counted_calls;
  std::unordered_set<uint32_t> module_ranges_seen;
  std::vector<int8_t> is_module_range(store.strings.size(), -1);
  const auto module_range_of = [&](uint32_t m) -> uint32_t {
    for (std::size_t steps = 0; m != kNone32 && m < store.markers.size() && steps < 64;
         m = store.markers[m].parent, ++steps) {
      const StringId name = store.markers[m].name;
      if (name >= is_module_range.size()) continue;
      if (is_module_range[name] < 0)
        is_module_range[name] = parse_xla_range_name(store.strings.get(name)).kind == XlaRangeName::Kind::kModule;
      if (is_module_range[name] == 1) return m;
    }
    return kNone32;
  };
  uint64_t last_key = ~uint64_t{0};
  SpanAcc* last = nullptr;
  for (std::size_t i = 0; i < store.kernels.size(); ++i) {
    const KernelRecord& k = store.kernels[i];
    const uint32_t g = groups.path_of(k.region_index);
    if (g == kNone32) continue;
    const uint32_t o = op_of_kernel.empty() ? kNone32 : op_of_kernel[i];
    const uint64_t key = pair_key(g, o < ops.size() ? o : kNone32);
    if (key != last_key) {
      last = &spans[key];
      last_key = key;
    }
    last->ns += k.end_ns > k.start_ns ? k.end_ns - k.start_ns : 0;
    last->kernels += 1;
    last->timed += k.end_ns > k.start_ns ? 1 : 0;
    if (o < ops.size() && ops[o].module_index != kNone32) {
      const uint32_t mr = module_range_of(k.marker_index);
      if (mr != kNone32 && module_ranges_seen.insert(mr).second) counted_calls[pair_key(g, ops[o].module_index)] += 1;
    }
  }
  // Inclusive: every entry also counts for the enclosing paths.
  const auto ancestors_inclusive = [&](uint32_t g, auto&& f) { groups.for_self_and_ancestors(g, f); };
  Spans out;
  out.host_bytes.assign(n_groups, 0.0);
  for (const MemcpyRecord& c : store.memcpys) {
    const Direction d = direction_of(c.copy_kind);
    if (d == Direction::kHtoD || d == Direction::kDtoH)
      ancestors_inclusive(groups.path_of(c.region_index),
                          [&](uint32_t g) { out.host_bytes[g] += static_cast<double>(c.bytes); });
  }
  out.ops_in.resize(n_groups);
  for (const auto& entry : spans) {
    const uint32_t op = static_cast<uint32_t>(entry.first);
    ancestors_inclusive(static_cast<uint32_t>(entry.first >> 32), [&](uint32_t g) {
      out.ops_in[g].push_back({op, entry.second});
    });
  }
  for (const auto& entry : counted_calls) {
    const uint32_t module = static_cast<uint32_t>(entry.first);
    ancestors_inclusive(static_cast<uint32_t>(entry.first >> 32),
                        [&](uint32_t g) { out.calls_in[pair_key(g, module)] += entry.second; });
  }
  return out;
}

// One estimate per op, shared by every path it appears in.
class OpEstimates {
 public:
  OpEstimates(const std::vector<OpCost>& ops, const FpgaTarget& target, double row_imbalance)
      : ops_(ops),
        target_(target),
        row_imbalance_(row_imbalance),
        as_compiled_(ops.size()),
        restructured_(ops.size()),
        works_(ops.size()),
        done_(ops.size(), 0) {}
  void estimate(uint32_t o) {
    if (done_[o] != 0) return;
    works_[o] = work_of(ops_[o]);
    as_compiled_[o] = estimate_op_on_card(works_[o], ops_[o].precision, target_, Scenario::kAsCompiled);
    restructured_[o] =
        estimate_op_on_card(works_[o], ops_[o].precision, target_, Scenario::kRestructured, row_imbalance_);
    done_[o] = 1;
  }
  const OpCardEstimate& as_compiled(uint32_t o) const { return as_compiled_[o]; }
  const OpCardEstimate& restructured(uint32_t o) const { return restructured_[o]; }
  const CardWork& work(uint32_t o) const { return works_[o]; }

 private:
  const std::vector<OpCost>& ops_;
  const FpgaTarget& target_;
  double row_imbalance_;
  std::vector<OpCardEstimate> as_compiled_, restructured_;
  std::vector<CardWork> works_;
  std::vector<int8_t> done_;
};

// The ops inside one region path, summed: what the row shows directly (GPU time, kernels, ops,
// top op, FLOPs, bytes, card compute and memory, working set) goes into the row; the rest here.
struct OpsSum {
  double est_ns = 0, kept_ns = 0, bound_w = 0, affinity_w = 0;
  double bound_n = 0, affinity_n = 0;  // unweighted sums (for zero-duration kernels)
  double card_bytes = 0;
  double timed_share = 1;  // the lowest timed_share of the ops estimated inside (their kernels here)
  TimeRange ops_time, ops_restructured;
  bool structure_dependent = false;  // an op's restructured figure the matrix's structure decides
  std::vector<DataflowStage> stages;
  std::vector<uint32_t> stage_module;
  std::unordered_set<uint32_t> estimated_modules;
  uint32_t estimated_ops = 0;
  uint64_t unattributed_kernels = 0;
  std::vector<std::string> unknown_ops, unsupported_ops;
  std::vector<uint32_t> kept_ops;  // ops whose kernels stay on the GPU (kNone32: kernels without an op)
  std::unordered_map<uint32_t, double> fallback_calls, io_of_module, buffers_of_module;
  std::unordered_map<uint32_t, double> entry_calls;  // the most executions of an entry-computation op here
  // What the ops kept on the GPU hand to and take from their modules' card ops (and, with the
  // data on the card, the module arguments they read and results they give).
  std::unordered_map<uint32_t, Handoff> handoff_of_module;                    // all their executions here
  std::unordered_map<uint32_t, const std::vector<double>*> reread_of_module;  // OpCost::module_reread_bytes
  // The arrays one call of module m moves over the link (2, an argument and a result, unknown).
  double buffers_of(uint32_t m) const {
    const auto b = buffers_of_module.find(m);
    return b != buffers_of_module.end() ? b->second : 2.0;
  }
};

void sum_ops(std::vector<std::pair<uint32_t, SpanAcc>>& entries, const std::vector<OpCost>& ops,
             const RooflineReport& roofline, OpEstimates& estimates, FpgaRegionCandidate& c, OpsSum& s) {
  // The same op may arrive from several nested paths: merge.
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  uint64_t top_ns = 0;
  for (std::size_t a = 0; a < entries.size();) {
    const uint32_t o = entries[a].first;
    SpanAcc acc;
    for (; a < entries.size() && entries[a].first == o; ++a) {
      acc.ns += entries[a].second.ns;
      acc.kernels += entries[a].second.kernels;
      acc.timed += entries[a].second.timed;
    }
    c.gpu_time_ns += static_cast<double>(acc.ns);
    c.kernel_count += acc.kernels;
    if (o == kNone32) {
      s.kept_ns += static_cast<double>(acc.ns);
      s.unattributed_kernels += acc.kernels;
      s.kept_ops.push_back(o);
      continue;
    }
    const OpCost& op = ops[o];
    const RooflinePoint& rp = roofline.ops[o];
    c.op_count += 1;
    if (c.top_op.empty() || acc.ns > top_ns) {
      top_ns = acc.ns;
      c.top_op = op.name;
    }
    // Executions inside: the op's executions in the proportion of its kernels launched here.
    const double exec = rp.kernel_count > 0 ? static_cast<double>(rp.executions) * static_cast<double>(acc.kernels) /
                                                  static_cast<double>(rp.kernel_count)
                                            : 0.0;
    if (op.module_index != kNone32) {
      // Without counted calls: the fewest executions of one of its ops here (each call runs each
      // op at least once; a loop body's run its trips more).
      const auto [at, fresh] = s.fallback_calls.try_emplace(op.module_index, exec);
      if (!fresh && exec > 0) at->second = at->second > 0 ? std::min(at->second, exec) : exec;
      // An op of the entry computation runs once a call; a conditional branch's op may not run
      // at all in a call, a loop body's runs once a trip.
      if (op.in_entry) s.entry_calls[op.module_index] = std::max(s.entry_calls[op.module_index], exec);
      if (op.module_io_bytes > 0) s.io_of_module[op.module_index] = op.module_io_bytes;
      if (op.module_io_buffers > 0) s.buffers_of_module[op.module_index] = op.module_io_buffers;
      if (!op.module_reread_bytes.empty()) s.reread_of_module[op.module_index] = &op.module_reread_bytes;
    }
    if (!op.cost_known) {
      s.kept_ns += static_cast<double>(acc.ns);
      s.kept_ops.push_back(o);
      if (op.module_index != kNone32 && (op.handoff.bytes > 0 || op.handoff.resident_bytes > 0)) {
        Handoff& h = s.handoff_of_module[op.module_index];
        h.bytes += exec * op.handoff.bytes;
        h.arrays += exec * op.handoff.arrays;
        h.resident_bytes += exec * op.handoff.resident_bytes;
        h.resident_arrays += exec * op.handoff.resident_arrays;
      }
      if (s.unknown_ops.size() < 3) s.unknown_ops.push_back(op.name);
      continue;
    }
    estimates.estimate(o);
    const OpCardEstimate& e = estimates.as_compiled(o);
    if (!e.estimated) {
      s.kept_ns += static_cast<double>(acc.ns);
      s.kept_ops.push_back(o);
      if (s.unsupported_ops.size() < 3)
        s.unsupported_ops.push_back(op.name + " (" + precision_name(op.precision) + ")");
      continue;
    }
    const CardWork& w = estimates.work(o);
    // The card runs as many of them as the GPU time inside covers: its kernels timed here, not
    // elsewhere (the H200 counters traces: an op untimed in forward_project and timed in
    // back_project is all timed in back_project).
    const double share = timed_share(rp, acc.timed, acc.kernels);
    s.timed_share = std::min(s.timed_share, share);
    const double costed = exec * share;
    s.stages.push_back({&w, op.precision, costed, 0.0});
    s.stage_module.push_back(op.module_index);
    if (op.module_index != kNone32) s.estimated_modules.insert(op.module_index);
    c.flops += op.flops * exec;
    c.bytes += op.bytes() * exec;
    c.random_access_bytes += w.random_bytes() * exec;
    s.card_bytes += e.memory_bytes * costed;
    c.card_compute_s += e.compute_s.nominal * costed;
    c.card_memory_s += e.memory_s.nominal * costed;
    s.ops_time += e.time_s.scaled(costed);
    s.ops_restructured += estimates.restructured(o).time_s.scaled(costed);
    s.structure_dependent = s.structure_dependent || estimates.restructured(o).structure_dependent;
    const double weight = static_cast<double>(acc.ns);
    const double intensity = op.bytes() > 0 ? op.flops / op.bytes() : 0.0;
    s.est_ns += weight;
    s.estimated_ops += 1;
    const double boundness = memory_boundness(intensity, rp.ridge_flops_per_byte);
    s.bound_w += weight * boundness;
    s.bound_n += boundness;
    s.affinity_w += weight * pattern_affinity(op.pattern);
    s.affinity_n += pattern_affinity(op.pattern);
    if (op.working_set_bytes > c.working_set_bytes || c.onchip_source.empty()) {
      c.working_set_bytes = std::max(c.working_set_bytes, op.working_set_bytes);
      c.onchip_source = op.working_set_source;
    }
  }
}

// The path's module calls and what they move: counted from XlaModule ranges where the trace has
// them, else the most executions inside of an op of the module's entry computation (one call
// runs each once), else the fewest of any of its ops (one call runs each op at least once).
struct Calls {
  double transfer_buffers = 0;
  std::unordered_map<uint32_t, double> of_module;
  std::unordered_map<uint32_t, DataflowIo> io_of_module;  // what each module's design reads and writes, all its calls
};

Calls count_calls(uint32_t g, const OpsSum& s, const std::unordered_map<uint64_t, double>& calls_in,
                  FpgaRegionCandidate& c) {
  Calls out;
  bool all_counted = !s.fallback_calls.empty();
  for (const auto& [m, fallback] : s.fallback_calls) {
    const auto it = calls_in.find(pair_key(g, m));
    // Without XlaModule ranges: the executions of an entry op (once per call), else the fewest of any.
    const auto entry = s.entry_calls.find(m);
    const double calls = it != calls_in.end() ? it->second : entry != s.entry_calls.end() ? entry->second : fallback;
    if (it == calls_in.end()) all_counted = false;
    c.module_calls += calls;
    const auto io = s.io_of_module.find(m);
    if (io != s.io_of_module.end()) c.transfer_bytes += calls * io->second;
    // The dataflow design reads and writes only the calls it runs: a module whose ops are all
    // kept at GPU speed is not part of it (its GPU time already holds its own traffic).
    // It also reads again, each call, an argument that an op needs after an op summarized it
    // (x / sum(x)), where it is larger than the on-chip room (dataflow_time, at each range end).
    if (io != s.io_of_module.end() && s.estimated_modules.count(m) != 0) {
      DataflowIo& design = out.io_of_module[m];
      design.bytes = calls * io->second;
      if (const auto r = s.reread_of_module.find(m); r != s.reread_of_module.end()) {
        design.rereads = r->second;
        design.reread_times = calls;
      }
    }
    out.of_module[m] = calls;
    out.transfer_buffers += calls * s.buffers_of(m);
  }
  c.module_calls_counted = all_counted;
  return out;
}

// Why some of the path's GPU time stays at GPU speed ("" when none does).
std::string kept_reason(const OpsSum& s) {
  std::string kept_why;
  const auto list = [](const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& x : v) out += (out.empty() ? "'" : ", '") + x + "'";
    return out;
  };
  if (!s.unknown_ops.empty()) kept_why += "no FLOP/byte count for " + list(s.unknown_ops);
  if (!s.unsupported_ops.empty())
    kept_why +=
        (kept_why.empty() ? "" : "; ") + std::string("the card has no DSP mapping for ") + list(s.unsupported_ops);
  if (s.unattributed_kernels > 0)
    kept_why +=
        (kept_why.empty() ? "" : "; ") + std::to_string(s.unattributed_kernels) + " kernel(s) without an HLO op";
  return kept_why;
}

// An estimated path's score and what-if: its ops one after another (and, restructured, the
// better of each op alone and each module's ops as one dataflow design), its launches, the GPU time it
// keeps, the transfers of its calls, the speedups.
void what_if(OpsSum& s, const Calls& calls, const FpgaTarget& target, const FpgaOptions& options, double total_s,
             FpgaRegionCandidate& c) {
  c.intensity = c.bytes > 0 ? c.flops / c.bytes : 0.0;
  // The efficiency its card traffic got overall: each op's own, weighted by its bytes.
  c.memory_efficiency = s.card_bytes > 0 && c.card_memory_s > 0
                            ? s.card_bytes / (c.card_memory_s * target.memory_bytes_per_s())
                            : target.stream_efficiency.nominal;
  // Weighted by GPU time; kernels of zero duration (all of them in a degenerate trace) weigh equally.
  c.memory_boundness = s.est_ns > 0 ? s.bound_w / s.est_ns : s.bound_n / s.estimated_ops;
  c.pattern_affinity = s.est_ns > 0 ? s.affinity_w / s.est_ns : s.affinity_n / s.estimated_ops;
  c.fits_on_chip = c.working_set_bytes <= target.sram_bytes;
  c.onchip_factor = onchip_factor(c.working_set_bytes, target.sram_bytes);
  const TimeRange launches =
      TimeRange{target.call_latency_s.low, target.call_latency_s.nominal, target.call_latency_s.high}.scaled(
          c.module_calls);
  c.card_latency_s = launches.nominal;
  c.kept_gpu_s = s.kept_ns * 1e-9;
  const TimeRange kept{c.kept_gpu_s, c.kept_gpu_s, c.kept_gpu_s};
  TimeRange card = s.ops_time;
  card += launches;
  // The card's joules are its own design's: the kept kernels' energy stays the GPU's
  // (compare_energy adds their attributed joules).
  c.card_energy_j = card_energy_on(card, target);
  card += kept;
  // Restructured: the better of each op restructured alone and each module's ops as one
  // dataflow design reading its calls' arguments and writing their results once. An op
  // that runs more often than its module is called repeats inside a call (a loop body).
  for (std::size_t k = 0; k < s.stages.size(); ++k) {
    const auto it = calls.of_module.find(s.stage_module[k]);
    if (it != calls.of_module.end()) s.stages[k].repeats = std::max(s.stages[k].executions - it->second, 0.0);
  }
  // Each module's calls are their own design, run in turn: a call's stages overlap one another,
  // not another module's (a call whose argument is another's result waits for all of it, and the
  // trace does not say which calls are independent).
  bool structure = false;
  std::unordered_map<uint32_t, std::vector<DataflowStage>> stages_of;
  for (std::size_t k = 0; k < s.stages.size(); ++k) stages_of[s.stage_module[k]].push_back(s.stages[k]);
  TimeRange dataflow;
  for (const auto& [module, stages] : stages_of) {
    const auto io = calls.io_of_module.find(module);
    bool marked = false;
    dataflow += dataflow_time(stages, io != calls.io_of_module.end() ? io->second : DataflowIo(), target, nullptr,
                              &marked, options.row_imbalance);
    structure = structure || marked;
  }
  TimeRange rcard{std::min(s.ops_restructured.low, dataflow.low),
                  std::min(s.ops_restructured.nominal, dataflow.nominal),
                  std::min(s.ops_restructured.high, dataflow.high)};
  // The structure decides a region that runs a gather + scatter whose figure it decides: an op
  // marked alone, a module's calls as one design, or one jitted module's ops as one design for
  // one call (as estimate() marks a function), so that a region holds the mark of every module
  // it runs.
  if (!structure && !s.structure_dependent) {
    std::unordered_map<uint32_t, std::vector<DataflowStage>> by_module;
    for (std::size_t k = 0; k < s.stages.size(); ++k) {
      if (s.stage_module[k] == kNone32) continue;
      DataflowStage one = s.stages[k];
      const auto it = calls.of_module.find(s.stage_module[k]);
      if (it != calls.of_module.end() && it->second > 0) one.executions /= it->second;
      one.repeats = 0;
      by_module[s.stage_module[k]].push_back(one);
    }
    for (const auto& [module, stages] : by_module) {
      bool marked = false;
      dataflow_time(stages, 0.0, target, nullptr, &marked);
      structure = structure || marked;
    }
  }
  c.restructured_structure_dependent = structure || s.structure_dependent;
  if (c.restructured_structure_dependent) widen_for_structure(rcard, s.ops_time);
  rcard += launches;
  c.restructured_card_energy_j = card_energy_on(rcard, target);
  rcard += kept;
  // The ops kept on the GPU inside a module whose other ops run on the card hand their data to
  // and take it from the card over the link, wherever the module's arguments live; with them on
  // the card, the arguments those ops read and the results they give cross too.
  double handoff_bytes = 0, handoff_arrays = 0;
  for (const auto& [m, h] : s.handoff_of_module)
    if (s.estimated_modules.count(m) != 0) {
      handoff_bytes += h.bytes + (options.inputs_cross_link ? 0.0 : h.resident_bytes);
      handoff_arrays += h.arrays + (options.inputs_cross_link ? 0.0 : h.resident_arrays);
    }
  // With the data on the card, a module all of whose ops stay on the GPU, in a region whose
  // other modules run on the card, takes its arguments from the card and gives its results
  // back, each call (over the link: the region's data lives on the card).
  if (!options.inputs_cross_link && !s.estimated_modules.empty())
    for (const auto& [m, calls_m] : calls.of_module) {
      if (s.estimated_modules.count(m) != 0) continue;
      const auto io = s.io_of_module.find(m);
      if (io == s.io_of_module.end()) continue;
      handoff_bytes += calls_m * io->second;
      handoff_arrays += calls_m * s.buffers_of(m);
    }
  c.handoff_bytes = handoff_bytes;
  TimeRange transfer;
  if (options.inputs_cross_link) {
    c.transfer_bytes += handoff_bytes;
    transfer =
        link_time(c.transfer_bytes, calls.transfer_buffers + handoff_arrays, target, options.gpu_link_bytes_per_s);
  } else {
    c.transfer_bytes = handoff_bytes;
    if (handoff_bytes > 0) transfer = link_time(handoff_bytes, handoff_arrays, target, options.gpu_link_bytes_per_s);
  }
  c.card_time_s = card.nominal;
  c.card_time_low_s = card.low;
  c.card_time_high_s = card.high;
  c.transfer_s = transfer.nominal;
  c.transfer_low_s = transfer.low;
  c.transfer_high_s = transfer.high;
  c.fpga_total_s = card.nominal + transfer.nominal;
  c.fpga_total_low_s = card.low + transfer.low;
  c.fpga_total_high_s = card.high + transfer.high;
  const double gpu_s = c.gpu_time_ns * 1e-9;
  c.link_factor = link_factor(gpu_s, c.transfer_s);
  c.score = c.time_share * c.estimated_share * (0.25 + 0.75 * c.memory_boundness) * c.pattern_affinity *
            c.onchip_factor * c.link_factor;
  c.region_speedup = safe_ratio(gpu_s, c.fpga_total_s);
  c.region_speedup_low = safe_ratio(gpu_s, c.fpga_total_high_s);
  c.region_speedup_high = safe_ratio(gpu_s, c.fpga_total_low_s);
  c.workload_speedup = amdahl_speedup(total_s, gpu_s, c.fpga_total_s);
  c.workload_speedup_low = amdahl_speedup(total_s, gpu_s, c.fpga_total_high_s);
  c.workload_speedup_high = amdahl_speedup(total_s, gpu_s, c.fpga_total_low_s);
  c.restructured_card_time_s = rcard.nominal;
  c.restructured_card_time_low_s = rcard.low;
  c.restructured_card_time_high_s = rcard.high;
  c.restructured_fpga_total_s = rcard.nominal + transfer.nominal;
  c.restructured_region_speedup = safe_ratio(gpu_s, c.restructured_fpga_total_s);
  c.restructured_region_speedup_low = safe_ratio(gpu_s, rcard.high + transfer.high);
  c.restructured_region_speedup_high = safe_ratio(gpu_s, rcard.low + transfer.low);
  c.scenario = offload_scenario(c.region_speedup, c.restructured_region_speedup);
}

}  // namespace

std::vector<FpgaRegionCandidate> rank_fpga_regions(const TraceStore& store, const std::vector<OpCost>& ops,
                                                   const std::vector<uint32_t>& op_of_kernel,
                                                   const RooflineReport& roofline, const FpgaTarget& target,
                                                   const FpgaOptions& options) {
  require_same_ops(ops, roofline);
  if (!op_of_kernel.empty() && op_of_kernel.size() != store.kernels.size())
    throw Error(ErrorKind::kInvalidArgument, "op_of_kernel needs one entry per kernel (or none)");
  validate_fpga_target(target);
  validate_row_imbalance(options.row_imbalance);
  std::vector<FpgaRegionCandidate> out;
  if (store.regions.empty()) return out;
  RegionPaths own_paths;
  const RegionPaths& groups =
      RegionPaths::select(store, options.region_paths, true, own_paths, "FpgaOptions::region_paths");
  Spans spans = collect_spans(store, ops, op_of_kernel, groups);

  const double total_kernel_ns = static_cast<double>(roofline.trace.time_ns);
  const double workload_ns = options.workload_ns > 0 ? options.workload_ns : total_kernel_ns;
  const double total_s = workload_ns * 1e-9;
  OpEstimates estimates(ops, target, options.row_imbalance);
  const GpuEnergyIndex gpu_energy(options.energy, 0, &groups);

  for (uint32_t g = 0; g < groups.size(); ++g) {
    if (spans.ops_in[g].empty()) continue;
    FpgaRegionCandidate c;
    c.path = groups.path(g);
    c.name = groups.name(g);
    c.depth = groups.depth(g);
    c.instances = groups.instances(g);
    c.sram_bytes = target.sram_bytes;
    OpsSum s;
    sum_ops(spans.ops_in[g], ops, roofline, estimates, c, s);
    c.time_share = total_kernel_ns > 0 ? c.gpu_time_ns / total_kernel_ns : 0.0;
    if (c.time_share < options.min_time_share) continue;
    c.host_bytes_per_instance = c.instances > 0 ? spans.host_bytes[g] / static_cast<double>(c.instances) : 0.0;
    c.estimated_share = c.gpu_time_ns > 0 ? s.est_ns / c.gpu_time_ns : 0.0;
    const Calls calls = count_calls(g, s, spans.calls_in, c);
    const std::string kept_why = kept_reason(s);
    const bool untimed = c.kernel_count > 0 && c.gpu_time_ns == 0;
    c.estimated = s.estimated_ops > 0 && !untimed;
    if (!c.estimated) {
      c.estimate_note = untimed ? no_gpu_time_note(c.kernel_count)
                                : "not estimated: nothing inside can be modelled on the card (" + kept_why + ")";
      set_nan(not_estimated_fields(c));
      compare_energy(c, gpu_energy.path(g, c.gpu_time_ns), false, kNaN, kNaN, kNaN, kNaN);
      out.push_back(std::move(c));
      continue;
    }
    what_if(s, calls, target, options, total_s, c);
    if (s.kept_ns > 0) {
      char pct[32];
      std::snprintf(pct, sizeof pct, "%.1f %%", 100.0 * s.kept_ns / c.gpu_time_ns);
      c.estimate_note = std::string(pct) + " of its GPU time kept at GPU speed (" + kept_why + ")";
    }
    if (c.handoff_bytes > 0) {
      char mb[32];
      std::snprintf(mb, sizeof mb, "%.4g MB", c.handoff_bytes / 1e6);
      c.estimate_note += std::string(c.estimate_note.empty() ? "" : "; ") + "the ops kept on the GPU hand " + mb +
                         " to and from the card's ops over the host link (handoff_bytes, in transfer_s)";
    }
    if (c.restructured_structure_dependent)
      c.estimate_note += std::string(c.estimate_note.empty() ? "" : "; ") + kStructureWidenedNote;
    if (s.timed_share < 1.0)
      c.estimate_note += std::string(c.estimate_note.empty() ? "" : "; ") + partly_timed_note(s.timed_share, true);
    const GpuJoules gpu_j = gpu_energy.path(g, c.gpu_time_ns);
    double kept_j = 0;
    uint64_t kept_busy_ns = 0;
    for (const uint32_t o : s.kept_ops) {
      kept_j += gpu_energy.path_op_joules(g, o);
      kept_busy_ns += gpu_energy.path_op_busy_ns(g, o);
    }
    c.kept_gpu_energy_j = gpu_j.known() ? kept_j : kNaN;
    // The card's joules stand for the sampled share of the work it takes, not of the region's
    // whole GPU time: the kept kernels may be sampled more or less than the rest.
    double card_coverage = kNaN;
    if (!s.kept_ops.empty()) {
      const double card_ns = c.gpu_time_ns - s.kept_ns;
      const uint64_t busy = gpu_energy.path_busy_ns(g);
      const double card_busy = busy > kept_busy_ns ? static_cast<double>(busy - kept_busy_ns) : 0.0;
      card_coverage = card_ns > 0 ? std::min(1.0, card_busy / card_ns) : 0.0;
    }
    compare_energy(c, gpu_j, true, c.region_speedup_low, c.region_speedup_high, c.restructured_region_speedup_low,
                   c.restructured_region_speedup_high, kept_j, card_coverage);
    out.push_back(std::move(c));
  }
  for (FpgaRegionCandidate& c : out) {
    c.verdict = offload_verdict(c.scenario, false);
    c.could_save_ns = could_save_ns(c.gpu_time_ns, c.region_speedup_high, c.restructured_region_speedup_high);
    c.restructured_basis = restructured_basis(true, c.random_access_bytes);
  }
  std::stable_sort(out.begin(), out.end(), [](const FpgaRegionCandidate& a, const FpgaRegionCandidate& b) {
    return ranks_before(a.could_save_ns, a.gpu_time_ns, a.score, b.could_save_ns, b.gpu_time_ns, b.score);
  });
  return out;
}

}  // namespace fpgaprof::analysis

// The static estimate of a whole HLO module on a card, no trace (estimate_module):
// docs/fpga-model.md, "Static estimate of a function or module".
#include "fpgaprof/analysis/fpga_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "fpgaprof/analysis/attribution.hpp"
#include "fpgaprof/analysis/card_power.hpp"
#include "fpgaprof/analysis/op_inputs.hpp"
#include "fpgaprof/analysis/region_paths.hpp"
#include "fpgaprof/analysis/transfer_analysis.hpp"
#include "fpgaprof/error.hpp"

namespace fpgaprof::analysis {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

// ---- static estimate of a module --------------------------------------------------------------
namespace {

hlo::PrimitiveType element_type(const hlo::Shape& s) {
  if (s.type != hlo::PrimitiveType::kTuple) return s.type;
  for (const hlo::Shape& e : s.tuple) {
    const hlo::PrimitiveType t = element_type(e);
    if (t != hlo::PrimitiveType::kInvalid && t != hlo::PrimitiveType::kToken) return t;
  }
  return hlo::PrimitiveType::kInvalid;
}

bool no_code(const std::string& op) {
  return op == "parameter" || op == "constant" || op == "get-tuple-element" || op == "bitcast" || op == "tuple" ||
         op == "after-all" || op == "add-dependency" || op == "domain" || op == "opt-barrier" || op == "async-update" ||
         op == "async-done" || op == "partition-id" || op == "replica-id";
}

double array_leaves(const hlo::Shape& s) {
  if (!s.is_tuple()) return s.is_array() ? 1.0 : 0.0;
  double n = 0;
  for (const hlo::Shape& e : s.tuple) n += array_leaves(e);
  return n;
}

class ModuleWalker {
 public:
  ModuleWalker(const hlo::Module& m, const FpgaTarget& t, ModuleEstimate& out)
      : m_(m), t_(t), out_(out), path_(m.computations.size()), row_imbalance_(out.row_imbalance) {
    std::size_t instructions = 0;
    for (const hlo::Computation& c : m.computations) instructions += c.instructions.size();
    // A computation called from several places is expanded at each; more visits than this many
    // per instruction is a call graph built to explode (2 calls per level, 40 levels deep).
    max_visits_ = kVisitsPerInstruction * instructions + kVisitsAllowance;
  }

  // The estimated ops as one dataflow design (see dataflow_time).
  // Precisions of the ops the card cannot run ("fp64", ...).
  const std::set<std::string>& unsupported() const { return unsupported_; }
  std::vector<DataflowStage> stages() const {
    std::vector<DataflowStage> out;
    // One invocation of the function: a stage inside a loop repeats (executions - 1) times.
    for (const Stage& s : stages_) out.push_back({&s.work, s.precision, s.executions, std::max(s.executions - 1, 0.0)});
    return out;
  }

  void walk(const hlo::Computation& comp, double executions, int depth) {
    if (depth > kMaxDepth) {
      note_once("calls nested more than " + std::to_string(kMaxDepth) + " deep below '" + comp.name +
                "': not expanded further (the card time is a lower bound)");
      return;
    }
    const auto index = static_cast<std::size_t>(&comp - m_.computations.data());
    if (!path_.enter(index)) {
      note_once("computation '" + comp.name +
                "' calls itself (a recursion XLA never writes): not expanded again (the card time is a "
                "lower bound)");
      return;
    }
    walk_instructions(comp, executions, depth);
    path_.leave(index);
  }

 private:
  static constexpr int kMaxDepth = 64;
  static constexpr std::size_t kVisitsPerInstruction = 16;
  static constexpr std::size_t kVisitsAllowance = 4096;

  void note_once(const std::string& note) {
    if (noted_.insert(note).second) out_.notes.push_back(note);
  }

  void walk_instructions(const hlo::Computation& comp, double executions, int depth) {
    for (const hlo::Instruction& ins : comp.instructions) {
      const std::string& op = ins.opcode;
      if (no_code(op)) continue;
      if (++visits_ > max_visits_) {
        note_once("the module's calls expand to more than " + std::to_string(max_visits_) +
                  " op executions to walk: the rest are not counted (the card time is a lower bound)");
        return;
      }
      if (op == "while") {
        const hlo::Computation* body = called(ins, "body", 1);
        const hlo::Computation* cond = called(ins, "condition", 0);
        double trips = static_cast<double>(ins.known_trip_count);
        if (ins.known_trip_count < 0) {
          trips = 1;
          note_once("while loop '" + ins.name + "': trip count unknown, its body counted once (a lower bound)");
        }
        // The condition runs once more than the body (the test that ends the loop).
        if (cond != nullptr) walk(*cond, executions * (ins.known_trip_count < 0 ? trips : trips + 1), depth + 1);
        if (body != nullptr) walk(*body, executions * trips, depth + 1);
        continue;
      }
      if (op == "conditional") {
        const hlo::Computation* heaviest = nullptr;
        double most = -1;
        for (const std::string& name : ins.called_computations()) {
          const hlo::Computation* b = m_.find(name);
          if (b == nullptr) continue;
          double cost = 0;
          for (const hlo::Instruction& i : b->instructions) cost += i.cost.flops + i.cost.bytes_accessed();
          if (cost > most) {
            most = cost;
            heaviest = b;
          }
        }
        if (heaviest != nullptr) {
          if (ins.called_computations().size() > 1)
            out_.notes.push_back("conditional '" + ins.name + "': its costliest branch '" + heaviest->name +
                                 "' counted");
          walk(*heaviest, executions, depth + 1);
        }
        continue;
      }
      if (op == "call" || op == "async-start") {
        if (const hlo::Computation* callee = called(ins, "to_apply", 0)) walk(*callee, executions, depth + 1);
        continue;
      }
      add_row(comp, ins, executions);
    }
  }

  const hlo::Computation* called(const hlo::Instruction& ins, const char* key, std::size_t fallback) const {
    auto it = ins.attributes().find(key);
    if (it != ins.attributes().end()) {
      std::string n = it->second;
      if (!n.empty() && n.front() == '%') n.erase(0, 1);
      if (const hlo::Computation* c = m_.find(n)) return c;
    }
    if (fallback < ins.called_computations().size()) return m_.find(ins.called_computations()[fallback]);
    if (!ins.called_computations().empty()) return m_.find(ins.called_computations().front());
    return nullptr;
  }

  void add_row(const hlo::Computation& comp, const hlo::Instruction& ins, double executions) {
    StaticOpEstimate r;
    r.op = ins.name;
    r.computation = comp.name;
    r.opcode = ins.opcode;
    r.pattern = ins.pattern;
    r.precision = precision_for(element_type(ins.shape), ins.pattern);
    r.executions = executions;
    if (!ins.metadata().source_file.empty())
      r.source = ins.metadata().source_file +
                 (ins.metadata().source_line >= 0 ? ":" + std::to_string(ins.metadata().source_line) : "");
    const CardWork w = card_work(m_, ins);
    r.flops = w.flops * executions;
    r.bytes = w.bytes * executions;
    r.stream_bytes = w.stream_bytes * executions;
    r.random_bytes = w.random_bytes() * executions;
    r.compulsory_bytes = w.compulsory_bytes * executions;
    const OpCardEstimate a = estimate_op_on_card(w, r.precision, t_, Scenario::kAsCompiled);
    const OpCardEstimate b = estimate_op_on_card(w, r.precision, t_, Scenario::kRestructured, row_imbalance_);
    r.estimated = a.estimated;
    if (!a.estimated) {
      r.estimate_note = !w.known && !ins.custom_call_target().empty()
                            ? "not estimated: custom call '" + ins.custom_call_target() + "' has no cost rule"
                        : !w.known ? "not estimated: it calls a custom call without a cost rule"
                                   : a.note;
      r.memory_efficiency = kNaN;
      r.card_compute_s = r.card_memory_s = r.card_time_s = r.restructured_time_s = {kNaN, kNaN, kNaN};
      r.card_energy_j = r.restructured_card_energy_j = {kNaN, kNaN, kNaN};
      if (w.known) {  // a cost, in a precision the card cannot run
        out_.unsupported_count += 1;
        unsupported_.insert(precision_name(r.precision));
      } else {
        out_.not_estimated_count += 1;
      }
      out_.ops.push_back(std::move(r));
      return;
    }
    r.memory_efficiency = a.memory_efficiency;
    r.card_limit = a.limit;
    r.card_compute_s = a.compute_s.scaled(executions);
    r.card_memory_s = a.memory_s.scaled(executions);
    r.card_time_s = a.time_s.scaled(executions);
    r.restructured_time_s = b.time_s.scaled(executions);
    r.card_energy_j = card_energy_on(r.card_time_s, t_);
    r.restructured_card_energy_j = card_energy_on(r.restructured_time_s, t_);
    r.restructured_onchip = b.onchip;
    r.restructured_structure_dependent = b.structure_dependent;
    r.restructured_basis = restructured_basis(r.restructured_onchip, r.random_bytes);
    r.estimate_note = a.note;
    stages_.push_back({w, r.precision, executions});
    out_.card_time_s += r.card_time_s;
    out_.restructured_card_time_s += r.restructured_time_s;
    out_.ops.push_back(std::move(r));
  }

  struct Stage {
    CardWork work;
    Precision precision;
    double executions;
  };
  const hlo::Module& m_;
  const FpgaTarget& t_;
  ModuleEstimate& out_;
  hlo::CallPath path_;
  double row_imbalance_ = 0;
  std::size_t max_visits_ = 0;
  std::size_t visits_ = 0;
  std::set<std::string> noted_;
  std::set<std::string> unsupported_;  // precisions of ops the card cannot run
  std::deque<Stage> stages_;           // stable addresses for DataflowStage::work
};

}  // namespace

ModuleEstimate estimate_module(const hlo::Module& module, const FpgaTarget& target, double row_imbalance) {
  validate_fpga_target(target);
  validate_row_imbalance(row_imbalance);
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr)
    throw Error(ErrorKind::kInvalidArgument, "HLO module '" + module.name +
                                                 "' has no entry computation: "
                                                 "pass a whole module (with ENTRY), as XLA prints it");
  ModuleEstimate out;
  out.module = module.name;
  out.target = target;
  out.row_imbalance = row_imbalance;
  ModuleWalker walker(module, target, out);
  walker.walk(*entry, 1.0, 0);
  for (const hlo::Instruction& ins : entry->instructions) {
    if (ins.opcode != "parameter") continue;
    out.transfer_bytes += static_cast<double>(ins.shape.byte_size());
    out.transfer_buffers += array_leaves(ins.shape);
  }
  if (const hlo::Instruction* root = entry->root()) {
    out.transfer_bytes += static_cast<double>(root->shape.byte_size());
    out.transfer_buffers += array_leaves(root->shape);
  }
  // An argument that an op needs again after an op has summarized all of it (x / sum(x): the
  // quotient needs the sum, the sum all of x) is read again by any design unless it stays on
  // chip: the io holds such a re-read once per op that needs it, where it does not fit.
  const std::vector<double> rereads = module_reread_bytes(module);
  DataflowIo io(out.transfer_bytes);
  io.rereads = &rereads;
  // Data that cannot be resident: the arguments and results beyond the card's memory.
  if (target.memory_capacity_bytes > 0 && out.transfer_bytes > target.memory_capacity_bytes) {
    const auto gb = [](double bytes) {
      char s[32];
      std::snprintf(s, sizeof s, "%.3g GB", bytes / 1e9);
      return std::string(s);
    };
    out.notes.push_back("the arguments and results (" + gb(out.transfer_bytes) + ") exceed " + target.name +
                        "'s memory (" + gb(target.memory_capacity_bytes) +
                        "): the card times assume them resident in card memory, which this card cannot hold; "
                        "the host link (total_s) bounds it");
  }
  // Restructured: the better of each op restructured on its own (already summed) and the whole
  // function as one dataflow design reading its arguments and writing its results once.
  bool dataflow_onchip = false, dataflow_structure = false;
  const TimeRange dataflow =
      dataflow_time(walker.stages(), io, target, &dataflow_onchip, &dataflow_structure, row_imbalance);
  TimeRange& r = out.restructured_card_time_s;
  out.restructured_dataflow = dataflow.nominal < r.nominal;
  out.restructured_onchip = out.restructured_dataflow
                                ? dataflow_onchip
                                : std::any_of(out.ops.begin(), out.ops.end(),
                                              [](const StaticOpEstimate& o) { return o.restructured_onchip; });
  r = {std::min(r.low, dataflow.low), std::min(r.nominal, dataflow.nominal), std::min(r.high, dataflow.high)};
  // Whichever design is given, a function that gathers from a vector and scatters into a tiled
  // or very sparse output is decided by the matrix's structure (the per-op design, each op with
  // its whole array on chip, is no better informed): its slow end is as compiled.
  const bool structure =
      dataflow_structure || std::any_of(out.ops.begin(), out.ops.end(),
                                        [](const StaticOpEstimate& o) { return o.restructured_structure_dependent; });
  if (structure) widen_for_structure(r, out.card_time_s);
  // The whole function is one design: one launch, arguments in and results out once.
  out.call_latency_s = {target.call_latency_s.low, target.call_latency_s.nominal, target.call_latency_s.high};
  out.card_time_s += out.call_latency_s;
  out.restructured_card_time_s += out.call_latency_s;
  out.transfer_s = link_time(out.transfer_bytes, out.transfer_buffers, target);
  out.total_s = out.card_time_s;
  out.total_s += out.transfer_s;
  out.restructured_total_s = out.restructured_card_time_s;
  out.restructured_total_s += out.transfer_s;
  out.card_energy_j = card_energy_on(out.card_time_s, target);
  out.restructured_card_energy_j = card_energy_on(out.restructured_card_time_s, target);
  if (structure) out.notes.push_back(row_imbalance >= 1 ? kRowImbalanceNote : kStructureDependentNote);
  if (out.not_estimated_count > 0)
    out.notes.push_back(std::to_string(out.not_estimated_count) +
                        " op(s) without a cost are in no time above: the card time is a lower bound");
  if (out.unsupported_count > 0) {
    std::string precisions;
    for (const std::string& p : walker.unsupported()) precisions += (precisions.empty() ? "" : ", ") + p;
    out.notes.push_back(std::to_string(out.unsupported_count) + " op(s) in " + precisions + ", which " + target.name +
                        " has no DSP mapping for, are in no time above: as compiled the function cannot run on "
                        "this card (a card with that precision, or the ops in another, can)");
  }
  // A lower bound of time gives no energy (as a bound's row: null, never a figure that looks
  // like an estimate).
  if (out.not_estimated_count + out.unsupported_count > 0)
    out.card_energy_j = out.restructured_card_energy_j = {kNaN, kNaN, kNaN};
  return out;
}

}  // namespace fpgaprof::analysis

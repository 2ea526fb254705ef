#include "fpgaprof/analysis/op_inputs.hpp"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "fpgaprof/analysis/transfer_analysis.hpp"

namespace fpgaprof::analysis {
namespace {

hlo::AccessPattern pattern_from_name(const std::string& name) {
  for (int i = 0; i <= static_cast<int>(hlo::AccessPattern::kLibraryCall); ++i) {
    const auto p = static_cast<hlo::AccessPattern>(i);
    if (name == hlo::access_pattern_name(p)) return p;
  }
  return hlo::AccessPattern::kUnknown;
}

hlo::PrimitiveType element_type(const hlo::Shape& s) {
  if (s.type != hlo::PrimitiveType::kTuple) return s.type;
  for (const hlo::Shape& e : s.tuple) {
    const hlo::PrimitiveType t = element_type(e);
    if (t != hlo::PrimitiveType::kInvalid && t != hlo::PrimitiveType::kToken) return t;
  }
  return hlo::PrimitiveType::kInvalid;
}

bool combines_elements(const hlo::Module& module, const hlo::Instruction& i) {
  static const std::set<std::string> kCombining{"reduce", "reduce-window", "dot",         "convolution",
                                                "sort",   "fft",           "custom-call", "select-and-scatter"};
  if (kCombining.count(i.opcode) != 0) return true;
  if (i.opcode != "fusion" || i.called_computations().empty()) return false;
  const hlo::Computation* f = module.find(i.called_computations().front());
  if (f == nullptr) return true;  // not known: a smaller result may summarize
  return std::any_of(f->instructions.begin(), f->instructions.end(),
                     [](const hlo::Instruction& u) { return kCombining.count(u.opcode) != 0; });
}

}  // namespace

double module_io_buffers(const hlo::Module& module) {
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr) return 0.0;
  const auto leaves = [](const hlo::Shape& s, auto&& self) -> double {
    if (!s.is_tuple()) return s.is_array() ? 1.0 : 0.0;
    double n = 0;
    for (const hlo::Shape& e : s.tuple) n += self(e, self);
    return n;
  };
  double n = 0;
  for (const hlo::Instruction& ins : entry->instructions)
    if (ins.opcode == "parameter") n += leaves(ins.shape, leaves);
  if (const hlo::Instruction* root = entry->root()) n += leaves(root->shape, leaves);
  return n;
}

double module_io_bytes(const hlo::Module& module) {
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr) return 0.0;
  double bytes = 0;
  for (const hlo::Instruction& ins : entry->instructions)
    if (ins.opcode == "parameter") bytes += static_cast<double>(ins.shape.byte_size());
  if (const hlo::Instruction* root = entry->root()) bytes += static_cast<double>(root->shape.byte_size());
  return bytes;
}

std::vector<double> module_reread_bytes(const hlo::Module& module) {
  std::vector<double> out;
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr) return out;
  const std::size_t n = entry->instructions.size();
  // The entry parameter an instruction is (through get-tuple-element and bitcast), or SIZE_MAX.
  std::vector<std::size_t> param(n, SIZE_MAX);
  std::vector<std::set<std::size_t>> summarized(n);  // parameters a value depends on a summary of
  for (std::size_t k = 0; k < n; ++k) {
    const hlo::Instruction& i = entry->instructions[k];
    if (i.opcode == "parameter") {
      param[k] = k;
      continue;
    }
    if ((i.opcode == "get-tuple-element" || i.opcode == "bitcast") && !i.operand_indices().empty() &&
        i.operand_indices()[0] < k) {
      param[k] = param[i.operand_indices()[0]];
      continue;
    }
    std::set<std::size_t> reads;
    for (std::size_t o : i.operand_indices()) {
      if (o >= k) continue;
      summarized[k].insert(summarized[o].begin(), summarized[o].end());
      if (param[o] != SIZE_MAX) reads.insert(param[o]);
    }
    for (std::size_t p : reads) {
      const double bytes = static_cast<double>(entry->instructions[p].shape.byte_size());
      if (summarized[k].count(p) != 0) out.push_back(bytes);  // needed again after its summary
      if (static_cast<double>(i.shape.byte_size()) < bytes && combines_elements(module, i)) summarized[k].insert(p);
    }
  }
  return out;
}

namespace {

// The loop-state element a get-tuple-element of computation `c`'s parameter takes, else -1.
int64_t state_element(const hlo::Computation& c, const hlo::Instruction& v) {
  if (v.opcode != "get-tuple-element" || v.operand_indices().empty()) return -1;
  const std::size_t p = v.operand_indices()[0];
  if (p >= c.instructions.size() || c.instructions[p].opcode != "parameter") return -1;
  const auto it = v.attributes().find("index");
  if (it == v.attributes().end() || it->second.empty() || it->second.size() > 9 ||
      it->second.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stoll(it->second);
}

// The handoff of the ops without a cost of one computation (module_handoff): `entry` for the
// module's entry computation (its parameters are the module's arguments, its root its
// results), `loop` for a while body (its parameter is what its root gave on the previous trip).
void computation_handoff(const hlo::Computation& comp, bool entry, bool loop,
                         std::unordered_map<std::string, Handoff>& out) {
  const auto& ins = comp.instructions;
  const std::size_t n = ins.size();
  const auto plumbing = [&](std::size_t k) {
    const std::string& op = ins[k].opcode;
    return op == "bitcast" || op == "get-tuple-element";
  };
  const auto free_op = [&](std::size_t k) {
    const std::string& op = ins[k].opcode;
    return plumbing(k) || op == "parameter" || op == "constant" || op == "tuple";
  };
  const auto on_card = [&](std::size_t k) { return !free_op(k) && !ins[k].cost.unknown; };
  bool any_on_card = false;
  for (std::size_t k = 0; k < n; ++k) any_on_card = any_on_card || on_card(k);
  // The module's arguments and results are the entry's alone.
  any_on_card = any_on_card && entry;
  const std::size_t root = comp.root_index;
  const bool loop_root = loop && root < n && ins[root].opcode == "tuple";
  std::vector<std::vector<std::size_t>> users(n);
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t o : ins[k].operand_indices())
      if (o < n) users[o].push_back(k);
  // The get-tuple-elements of a loop body's state, by element.
  std::unordered_map<int64_t, std::vector<std::size_t>> state;
  if (loop_root)
    for (std::size_t k = 0; k < n; ++k)
      if (const int64_t e = state_element(comp, ins[k]); e >= 0) state[e].push_back(k);
  // Whether a value reaches an op on the card (through bitcasts, and tuples: a loop's state; in
  // a loop body, through its root to the next trip's state).
  const auto read_on_card = [&](std::size_t v) {
    std::vector<std::size_t> todo{v};
    for (std::size_t steps = 0; !todo.empty() && steps < 4096; ++steps) {
      const std::size_t k = todo.back();
      todo.pop_back();
      for (std::size_t u : users[k]) {
        if (on_card(u)) return true;
        if (loop_root && u == root) {
          const auto ops = ins[root].operand_indices();
          for (std::size_t e = 0; e < ops.size(); ++e)
            if (ops[e] == k)
              if (const auto s = state.find(static_cast<int64_t>(e)); s != state.end())
                todo.insert(todo.end(), s->second.begin(), s->second.end());
          continue;
        }
        if (ins[u].opcode == "bitcast" || ins[u].opcode == "tuple") todo.push_back(u);
      }
    }
    return false;
  };
  // Whether a value is (part of) the module's result (through bitcasts and the root tuple).
  const auto module_result = [&](std::size_t v) {
    if (!entry) return false;
    for (std::size_t steps = 0; v < n && steps < 64; ++steps) {
      if (v == root) return true;
      std::size_t next = n;
      for (std::size_t u : users[v])
        if (ins[u].opcode == "bitcast" || (ins[u].opcode == "tuple" && u == root)) next = u;
      v = next;
    }
    return false;
  };
  // Each array a card op computed crosses to the GPU once a call, for the first op that needs it.
  std::set<std::size_t> sent;
  const auto strip = [&](std::size_t p, bool tuples) {
    for (int steps = 0; p < n && !ins[p].operand_indices().empty() && steps < 64; ++steps) {
      if (ins[p].opcode != "bitcast" && !(tuples && ins[p].opcode == "get-tuple-element")) break;
      p = ins[p].operand_indices()[0];
    }
    return p;
  };
  // In a loop body, the op that computed the state element `array` takes: the previous trip's
  // root's element (n: not a loop body's state, or nothing computed it there).
  const auto previous_trip = [&](std::size_t array) {
    if (!loop_root || array >= n) return n;
    const int64_t e = state_element(comp, ins[array]);
    const auto ops = ins[root].operand_indices();
    if (e < 0 || static_cast<std::size_t>(e) >= ops.size()) return n;
    return strip(strip(ops[static_cast<std::size_t>(e)], false), true);
  };
  for (std::size_t k = 0; k < n; ++k) {
    if (free_op(k) || !ins[k].cost.unknown) continue;
    Handoff h;
    // Operands a card op computed: the array (a tuple's element apart from the others) and the
    // op that computed it; in a loop body, the state a card op computed on the previous trip.
    // With the data on the card, a module argument too (once a call, for its first reader).
    for (std::size_t q = 0; q < ins[k].operand_indices().size() && q < ins[k].operand_shapes().size(); ++q) {
      const std::size_t array = strip(ins[k].operand_indices()[q], false);
      std::size_t p = strip(array, true);
      if (p >= n) continue;
      if (loop_root && ins[p].opcode == "parameter") p = previous_trip(array);
      if (p >= n) continue;
      const bool argument = any_on_card && ins[p].opcode == "parameter";
      if ((!on_card(p) && !argument) || !sent.insert(array).second) continue;
      const double bytes = static_cast<double>(ins[k].operand_shapes()[q].byte_size());
      (argument ? h.resident_bytes : h.bytes) += bytes;
      (argument ? h.resident_arrays : h.arrays) += 1;
    }
    // Results a card op reads: the op's own array, or each element of its tuple taken out; with
    // the data on the card, the module's results it computes, where no card op read them.
    const auto result = [&](std::size_t v) {
      const double bytes = static_cast<double>(ins[v].shape.byte_size());
      if (read_on_card(v)) {
        h.bytes += bytes;
        h.arrays += 1;
      } else if (any_on_card && module_result(v)) {
        h.resident_bytes += bytes;
        h.resident_arrays += 1;
      }
    };
    if (ins[k].shape.is_tuple()) {
      const double taken_bytes = h.bytes, taken_arrays = h.arrays;
      for (std::size_t u : users[k])
        if (ins[u].opcode == "get-tuple-element") result(u);
      // A tuple that is itself the module's result (the kept op is the root): all of it goes
      // to the caller, less what a card op already took of it.
      if (any_on_card && module_result(k)) {
        h.resident_bytes += std::max(0.0, static_cast<double>(ins[k].shape.byte_size()) - (h.bytes - taken_bytes));
        h.resident_arrays += std::max(0.0, static_cast<double>(ins[k].shape.tuple.size()) - (h.arrays - taken_arrays));
      }
    } else {
      result(k);
    }
    if (h.bytes > 0 || h.resident_bytes > 0) out.emplace(ins[k].name, h);
  }
}

}  // namespace

std::unordered_map<std::string, Handoff> module_handoff(const hlo::Module& module) {
  std::unordered_map<std::string, Handoff> out;
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr) return out;
  computation_handoff(*entry, true, false, out);
  // The ops of the computations the entry runs (while bodies and conditions, calls, branches),
  // each within its computation: a fusion's computation is one op, and a computation some other
  // op applies (a reduction's) holds no op without a cost. Only those holding such an op.
  const auto kept = [](const hlo::Computation& c) {
    return std::any_of(c.instructions.begin(), c.instructions.end(), [](const hlo::Instruction& i) {
      return i.cost.unknown && i.opcode != "parameter" && i.opcode != "constant" && i.opcode != "tuple" &&
             i.opcode != "bitcast" && i.opcode != "get-tuple-element";
    });
  };
  std::vector<const hlo::Computation*> todo;
  for (const hlo::Computation& c : module.computations)
    if (&c != entry && !c.is_fusion && kept(c)) todo.push_back(&c);
  if (todo.empty()) return out;
  // A while body (its parameter is the state its root gave on the previous trip) is one that
  // whiles run as their body and nothing runs otherwise.
  std::unordered_map<std::string, int> as_body, as_other;
  const auto bare = [](const std::string& n) { return !n.empty() && n.front() == '%' ? n.substr(1) : n; };
  for (const hlo::Computation& c : module.computations)
    for (const hlo::Instruction& u : c.instructions) {
      if (u.called_computations().empty()) continue;
      const auto b = u.attributes().find("body");
      const std::string body = u.opcode == "while" && b != u.attributes().end() ? bare(b->second) : std::string();
      for (const std::string& called : u.called_computations()) ++(called == body ? as_body : as_other)[called];
    }
  for (const hlo::Computation* c : todo)
    computation_handoff(*c, false, as_body.count(c->name) != 0 && as_other.count(c->name) == 0, out);
  return out;
}

OpInputs op_inputs(const TraceStore& store, const AttributionResult& attribution,
                   const std::vector<hlo::Module>& modules) {
  OpInputs in;
  in.ops.reserve(attribution.ops.size());
  // What each module's walks give, once per module (not once per op).
  struct ModuleFacts {
    double io_bytes = 0, io_buffers = 0;        // module_io_bytes, module_io_buffers
    std::unordered_set<std::string> entry_ops;  // the entry computation's instruction names
    std::vector<double> reread;
    std::unordered_map<std::string, Handoff> handoff;
  };
  std::unordered_map<uint32_t, ModuleFacts> facts_of_module;
  for (uint32_t o = 0; o < attribution.ops.size(); ++o) {
    const OpStats& st = attribution.ops[o];
    OpCost c;
    c.name = st.hlo_op;
    c.module = st.module_name;
    c.flops = st.flops;
    c.bytes_read = st.bytes_read;
    c.bytes_written = st.bytes_written;
    c.working_set_bytes = st.bytes_written;
    c.pattern = pattern_from_name(st.pattern);
    c.cost_known = st.has_cost && !st.cost_unknown;
    c.cost_from_author = st.cost_from_author;
    c.executions = st.executions;
    c.precision = Precision::kFp32;
    c.module_index = st.module_index;
    if (st.module_index < modules.size() && !modules[st.module_index].name.empty()) {
      const auto [at, fresh] = facts_of_module.try_emplace(st.module_index);
      ModuleFacts& facts = at->second;
      if (fresh) {
        facts.io_bytes = module_io_bytes(modules[st.module_index]);
        facts.io_buffers = module_io_buffers(modules[st.module_index]);
        if (const hlo::Computation* entry = modules[st.module_index].entry())
          for (const hlo::Instruction& i : entry->instructions) facts.entry_ops.insert(i.name);
        facts.reread = module_reread_bytes(modules[st.module_index]);
        facts.handoff = module_handoff(modules[st.module_index]);
      }
      c.module_io_bytes = facts.io_bytes;
      c.module_io_buffers = facts.io_buffers;
      c.in_entry = facts.entry_ops.count(st.hlo_op) != 0;
      c.module_reread_bytes = facts.reread;
      if (const auto h = facts.handoff.find(st.hlo_op); h != facts.handoff.end()) c.handoff = h->second;
      if (const hlo::Instruction* ins = modules[st.module_index].find_instruction(st.hlo_op)) {
        // Without a cost (work.known false) it still gives the op's arrays: what crosses the link.
        c.work = card_work(modules[st.module_index], *ins);

        c.precision = precision_for(element_type(ins->shape),
                                    c.pattern != hlo::AccessPattern::kUnknown ? c.pattern : ins->pattern);
        if (ins->cost.working_set_bytes > 0) c.working_set_bytes = ins->cost.working_set_bytes;
        if (ins->cost.unknown) {
          const std::string kernel = hlo::custom_kernel_name(*ins);
          if (!kernel.empty() && hlo::is_triton_custom_call(*ins))
            c.cost_unknown_reason = "Triton kernel '" + kernel + "' (" + ins->custom_call_target() +
                                    ") has no cost: give pallas_call(metadata={'flops': ..., 'bytes_accessed': ...})";
          else if (!kernel.empty() && hlo::is_mosaic_gpu_custom_call(*ins))
            c.cost_unknown_reason = "Mosaic GPU kernel '" + kernel + "' (" + ins->custom_call_target() +
                                    ") has no cost: JAX drops a Mosaic GPU kernel's cost_estimate and metadata";
          else
            c.cost_unknown_reason = !ins->custom_call_target().empty()
                                        ? "custom call '" + ins->custom_call_target() + "' has no cost rule"
                                        : "it calls a custom call without a cost rule";
        }
      }
    }
    if (!c.cost_known && c.cost_unknown_reason.empty())
      c.cost_unknown_reason = st.has_cost ? "the cost model has no rule for it"
                                          : "the HLO of module '" + st.module_name + "' was not captured or not parsed";
    in.ops.push_back(std::move(c));
    in.sources.push_back(st.source_file.empty() ? std::string()
                                                : st.source_file + ":" + std::to_string(st.source_line));
    in.categories.push_back(st.category);
  }
  // Op of each attribution site (kernels and copies share the sites); an attributed site
  // without an instruction name (a kernel name found in no instruction) has no op here.
  const std::vector<ActivityAttribution>& sites = attribution.kernels.sites();
  std::vector<uint32_t> op_of_site(sites.size(), kNone32);
  for (std::size_t s = 0; s < sites.size() && s < attribution.op_of_site.size(); ++s) {
    if (sites[s].method != MatchMethod::kUnattributed && !sites[s].hlo_op.empty() &&
        attribution.op_of_site[s] < in.ops.size())
      op_of_site[s] = attribution.op_of_site[s];
  }
  const auto lookup = [&](const AttributionList& list, std::size_t i) -> uint32_t {
    const uint32_t s = list.site(i);
    return s < op_of_site.size() ? op_of_site[s] : kNone32;
  };
  in.op_of_kernel.assign(store.kernels.size(), kNone32);
  for (std::size_t i = 0; i < attribution.kernels.size() && i < store.kernels.size(); ++i)
    in.op_of_kernel[i] = lookup(attribution.kernels, i);
  in.op_of_memcpy.assign(store.memcpys.size(), kNone32);
  in.host_bytes.assign(in.ops.size(), 0.0);
  for (std::size_t i = 0; i < attribution.memcpys.size() && i < store.memcpys.size(); ++i) {
    const uint32_t op = lookup(attribution.memcpys, i);
    in.op_of_memcpy[i] = op;
    const Direction d = direction_of(store.memcpys[i].copy_kind);
    if (op != kNone32 && (d == Direction::kHtoD || d == Direction::kDtoH))
      in.host_bytes[op] += static_cast<double>(store.memcpys[i].bytes);
  }
  return in;
}

}  // namespace fpgaprof::analysis

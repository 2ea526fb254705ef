#include "fpgaprof/analysis/op_inputs.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
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

// The element a get-tuple-element takes (its index=), else -1.
int64_t tuple_element(const hlo::Instruction& g) {
  if (g.opcode != "get-tuple-element") return -1;
  const auto it = g.attributes().find("index");
  if (it == g.attributes().end() || it->second.empty() || it->second.size() > 9 ||
      it->second.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stoll(it->second);
}

// The loop-state element a get-tuple-element of computation `c`'s parameter takes, else -1.
int64_t state_element(const hlo::Computation& c, const hlo::Instruction& v) {
  if (v.opcode != "get-tuple-element" || v.operand_indices().empty()) return -1;
  const std::size_t p = v.operand_indices()[0];
  if (p >= c.instructions.size() || c.instructions[p].opcode != "parameter") return -1;
  return tuple_element(v);
}

// What module_handoff asks of one computation: which of its ops run on the card, who reads a
// value, where a value came from. `entry` for the module's entry computation (its parameters
// are the module's arguments, its root its results), `loop` for a while body (its parameter is
// what its root gave on the previous trip).
struct Flow {
  const hlo::Computation& comp;
  const std::vector<hlo::Instruction>& ins;
  std::size_t n, root;
  bool entry, loop_root;
  bool any_on_card = false;  // the module's arguments and results live on the card (the entry's alone)
  std::vector<std::vector<std::size_t>> users;
  std::unordered_map<int64_t, std::vector<std::size_t>> state;  // a loop body's state reads, by element

  Flow(const hlo::Computation& c, bool is_entry, bool loop)
      : comp(c), ins(c.instructions), n(c.instructions.size()), root(c.root_index), entry(is_entry) {
    loop_root = loop && root < n && ins[root].opcode == "tuple";
    for (std::size_t k = 0; k < n; ++k) any_on_card = any_on_card || on_card(k);
    any_on_card = any_on_card && entry;
    users.resize(n);
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t o : ins[k].operand_indices())
        if (o < n) users[o].push_back(k);
    if (loop_root)
      for (std::size_t k = 0; k < n; ++k)
        if (const int64_t e = state_element(comp, ins[k]); e >= 0) state[e].push_back(k);
  }
  bool free_op(std::size_t k) const {
    const std::string& op = ins[k].opcode;
    return op == "bitcast" || op == "get-tuple-element" || op == "parameter" || op == "constant" || op == "tuple";
  }
  bool on_card(std::size_t k) const { return k < n && !free_op(k) && !ins[k].cost.unknown; }
  // A value through bitcasts (and get-tuple-elements: to the op whose tuple it takes apart).
  std::size_t strip(std::size_t p, bool tuples) const {
    for (int steps = 0; p < n && !ins[p].operand_indices().empty() && steps < 64; ++steps) {
      if (ins[p].opcode != "bitcast" && !(tuples && ins[p].opcode == "get-tuple-element")) break;
      p = ins[p].operand_indices()[0];
    }
    return p;
  }
  // Whether a value reaches an op on the card (through bitcasts, and tuples: a loop's state; in
  // a loop body, through its root to the next trip's state).
  bool read_on_card(std::size_t v) const {
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
  }
  // Where a value goes out of the computation: -1 it is the root (through bitcasts), e >= 0
  // element e of the root tuple, -2 neither.
  int64_t root_element(std::size_t v) const {
    for (std::size_t steps = 0; v < n && steps < 64; ++steps) {
      if (v == root) return -1;
      std::size_t next = n;
      for (std::size_t u : users[v]) {
        if (u == root && ins[u].opcode == "tuple") {
          const auto ops = ins[root].operand_indices();
          for (std::size_t e = 0; e < ops.size(); ++e)
            if (ops[e] == v) return static_cast<int64_t>(e);
        }
        if (ins[u].opcode == "bitcast") next = u;
      }
      v = next;
    }
    return -2;
  }
  // Whether a value is (part of) the module's result.
  bool module_result(std::size_t v) const { return entry && root_element(v) != -2; }
  // The value a card op reads where the computation's result (element `e` of it, -1: all of it)
  // goes on in this computation from the op `at` that called it.
  std::vector<std::size_t> results_of(std::size_t at, int64_t e) const {
    if (e < 0) return {at};
    std::vector<std::size_t> out;
    for (std::size_t u : users[at])
      if (tuple_element(ins[u]) == e) out.push_back(u);
    return out;
  }
};

// The one op that runs a computation (a while body, a call, a conditional branch), in its
// caller's Flow; none when several ops run it or one runs it in two roles.
struct Site {
  const Flow* caller = nullptr;
  std::size_t at = 0;         // the while, call or conditional in the caller
  int64_t first_operand = 0;  // the caller's operand that parameter 0 takes
  double trips = 1;           // a while body: its known trip count (1 when not known)
  bool loop = false;
  bool branch = false;  // a conditional's branch: it may not run
};

// The handoff of the ops without a cost of one computation (module_handoff), given the op that
// runs it where it has one.
// `crossed`: the arrays (computation, value) counted so far, each where it crosses; an argument
// a caller's op took over already is not counted again inside (callers come first).
void computation_handoff(const Flow& f, const Site& site,
                         std::set<std::pair<const hlo::Computation*, std::size_t>>& crossed,
                         std::unordered_map<std::string, Handoff>& out) {
  const auto& ins = f.ins;
  const std::size_t n = f.n;
  const std::size_t root = f.root;
  const Flow* cf = site.caller;
  // Each array a card op computed crosses to the GPU once a call, for the first op that needs it.
  std::set<std::size_t> sent;
  // In a loop body, the op that computed the state element `array` takes: the previous trip's
  // root's element (n: not a loop body's state, or nothing computed it there).
  const auto previous_trip = [&](std::size_t array) {
    if (!f.loop_root || array >= n) return n;
    const int64_t e = state_element(f.comp, ins[array]);
    const auto ops = ins[root].operand_indices();
    if (e < 0 || static_cast<std::size_t>(e) >= ops.size()) return n;
    return f.strip(f.strip(ops[static_cast<std::size_t>(e)], false), true);
  };
  // What the caller gives a parameter read as `array` (the parameter, or a get-tuple-element of
  // it): the array in the caller (a tuple's element apart from the others), or the caller's n.
  const auto from_caller = [&](std::size_t array) -> std::size_t {
    if (cf == nullptr) return SIZE_MAX;
    const std::size_t p = f.strip(array, true);
    if (p >= n || ins[p].opcode != "parameter" || ins[p].parameter_number < 0) return cf->n;
    const int64_t e = array == p ? -1 : state_element(f.comp, ins[array]);
    if (array != p && (e < 0 || f.strip(array, false) != array)) return cf->n;
    const auto ops = cf->ins[site.at].operand_indices();
    const int64_t q = site.first_operand + ins[p].parameter_number;
    if (q < 0 || static_cast<std::size_t>(q) >= ops.size()) return cf->n;
    std::size_t v = cf->strip(ops[static_cast<std::size_t>(q)], false);
    if (e >= 0) {
      if (v >= cf->n || cf->ins[v].opcode != "tuple" ||
          static_cast<std::size_t>(e) >= cf->ins[v].operand_indices().size())
        return cf->n;
      v = cf->ins[v].operand_indices()[static_cast<std::size_t>(e)];
    }
    return cf->strip(v, false);
  };
  for (std::size_t k = 0; k < n; ++k) {
    if (f.free_op(k) || !ins[k].cost.unknown) continue;
    // A loop, call or conditional without a cost runs no kernel of its own: the ops without a
    // cost inside (their computations' walks) exchange what crosses.
    if (ins[k].opcode == "while" || ins[k].opcode == "call" || ins[k].opcode == "conditional") continue;
    Handoff h;
    // Operands a card op computed: the array (a tuple's element apart from the others) and the
    // op that computed it; in a loop body, the state a card op computed on the previous trip.
    // With the data on the card, a module argument too (once a call, for its first reader).
    // An argument the op that runs the computation passes it, where a card op computed it in
    // the caller (or it is a module argument there, with the data on the card): once each time
    // the computation runs; in a loop body, state that no card op of the body computed is the
    // caller's on the first trip and stays on the GPU after: once a loop (a known trip count's
    // share of each trip; each trip where the count is not known).
    for (std::size_t q = 0; q < ins[k].operand_indices().size() && q < ins[k].operand_shapes().size(); ++q) {
      const std::size_t array = f.strip(ins[k].operand_indices()[q], false);
      std::size_t p = f.strip(array, true);
      if (p >= n) continue;
      const double bytes = static_cast<double>(ins[k].operand_shapes()[q].byte_size());
      if (ins[p].opcode == "parameter" && !f.entry) {
        if (f.loop_root && f.on_card(previous_trip(array)))
          p = previous_trip(array);
        else {
          if (cf == nullptr || (f.loop_root && !site.loop)) continue;
          const std::size_t a = from_caller(array);
          if (a >= cf->n) continue;
          const std::size_t c = cf->strip(a, true);
          if (c >= cf->n) continue;
          const bool argument = cf->any_on_card && cf->ins[c].opcode == "parameter";
          // A branch may not run: what it takes over does not spare the caller's other callees.
          if ((!cf->on_card(c) && !argument) || crossed.count({&cf->comp, a}) != 0 || !sent.insert(array).second)
            continue;
          if (!site.branch) crossed.emplace(&cf->comp, a);
          const double share = f.loop_root ? 1.0 / site.trips : 1.0;
          (argument ? h.resident_bytes : h.bytes) += bytes * share;
          (argument ? h.resident_arrays : h.arrays) += share;
          continue;
        }
      }
      if (p >= n) continue;
      const bool argument = f.any_on_card && ins[p].opcode == "parameter";
      if ((!f.on_card(p) && !argument) || !sent.insert(array).second) continue;
      crossed.emplace(&f.comp, array);
      (argument ? h.resident_bytes : h.bytes) += bytes;
      (argument ? h.resident_arrays : h.arrays) += 1;
    }
    // Results a card op reads: the op's own array, or each element of its tuple taken out; with
    // the data on the card, the module's results it computes, where no card op read them. Where
    // no card op of the computation reads it, the computation's result it is, where a card op of
    // the caller reads it (or it is the module's result there): once each time the computation
    // runs, a loop's after its last trip (a known trip count's share of each trip).
    const auto result = [&](std::size_t v) {
      const double bytes = static_cast<double>(ins[v].shape.byte_size());
      if (f.read_on_card(v)) {
        h.bytes += bytes;
        h.arrays += 1;
      } else if (f.any_on_card && f.module_result(v)) {
        h.resident_bytes += bytes;
        h.resident_arrays += 1;
      } else if (cf != nullptr && (!f.loop_root || site.loop)) {
        const int64_t e = f.root_element(v);
        if (e == -2 || (f.loop_root && e < 0)) return;
        const double share = f.loop_root ? 1.0 / site.trips : 1.0;
        bool card = false, resident = false;
        for (std::size_t g : cf->results_of(site.at, f.loop_root || ins[root].opcode == "tuple" ? e : -1)) {
          card = card || cf->read_on_card(g);
          resident = resident || (cf->any_on_card && cf->module_result(g));
        }
        if (card) {
          h.bytes += bytes * share;
          h.arrays += share;
        } else if (resident) {
          h.resident_bytes += bytes * share;
          h.resident_arrays += share;
        }
      }
    };
    if (ins[k].shape.is_tuple()) {
      const double taken_bytes = h.bytes, taken_arrays = h.arrays;
      for (std::size_t u : f.users[k])
        if (ins[u].opcode == "get-tuple-element") result(u);
      // A tuple that is itself the module's result (the kept op is the root): all of it goes
      // to the caller, less what a card op already took of it.
      if (f.any_on_card && f.module_result(k)) {
        h.resident_bytes += std::max(0.0, static_cast<double>(ins[k].shape.byte_size()) - (h.bytes - taken_bytes));
        h.resident_arrays += std::max(0.0, static_cast<double>(ins[k].shape.tuple.size()) - (h.arrays - taken_arrays));
      }
      // A tuple that is a called computation's result: each element no card op here took and a
      // card op of the caller reads (or the module's result there), once each time it runs.
      if (cf != nullptr && !f.loop_root && k == root) {
        for (std::size_t e = 0; e < ins[k].shape.tuple.size(); ++e) {
          bool here = false;
          for (std::size_t u : f.users[k])
            here = here || (tuple_element(ins[u]) == static_cast<int64_t>(e) && f.read_on_card(u));
          if (here) continue;
          bool card = false, resident = false;
          for (std::size_t g : cf->results_of(site.at, static_cast<int64_t>(e))) {
            card = card || cf->read_on_card(g);
            resident = resident || (cf->any_on_card && cf->module_result(g));
          }
          const double bytes = static_cast<double>(ins[k].shape.tuple[e].byte_size());
          (card ? h.bytes : h.resident_bytes) += card || resident ? bytes : 0.0;
          (card ? h.arrays : h.resident_arrays) += card || resident ? 1.0 : 0.0;
        }
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
  if (todo.empty()) {
    std::set<std::pair<const hlo::Computation*, std::size_t>> crossed;
    computation_handoff(Flow(*entry, true, false), Site{}, crossed, out);
    return out;
  }
  // A while body (its parameter is the state its root gave on the previous trip) is one that
  // whiles run as their body and nothing runs otherwise. The op that runs a computation, where
  // one op alone runs it: the while, call or conditional, its caller, and the operand that the
  // computation's parameter 0 takes.
  struct Caller {
    const hlo::Computation* comp = nullptr;
    std::size_t at = 0;
    int64_t first_operand = 0;
    int sites = 0;
  };
  std::unordered_map<std::string, int> as_body, as_other;
  std::unordered_map<std::string, Caller> caller;
  const auto bare = [](const std::string& n) { return !n.empty() && n.front() == '%' ? n.substr(1) : n; };
  for (const hlo::Computation& c : module.computations)
    for (std::size_t k = 0; k < c.instructions.size(); ++k) {
      const hlo::Instruction& u = c.instructions[k];
      if (u.called_computations().empty()) continue;
      const auto b = u.attributes().find("body");
      const std::string body = u.opcode == "while" && b != u.attributes().end() ? bare(b->second) : std::string();
      const auto& called = u.called_computations();
      for (std::size_t j = 0; j < called.size(); ++j) {
        ++(called[j] == body ? as_body : as_other)[called[j]];
        Caller& r = caller[called[j]];
        ++r.sites;
        r.comp = &c;
        r.at = k;
        r.first_operand = -1;
        if (u.opcode == "call" || called[j] == body) {
          r.first_operand = 0;
        } else if (u.opcode == "conditional") {
          // Branch b takes operand b + 1; true_computation= the first, false_computation= the second.
          const auto t = u.attributes().find("true_computation");
          const auto fl = u.attributes().find("false_computation");
          if (t != u.attributes().end() && fl != u.attributes().end())
            r.first_operand = bare(t->second) == called[j] ? 1 : bare(fl->second) == called[j] ? 2 : -1;
          else if (u.attributes().count("branch_computations") != 0)
            r.first_operand = static_cast<int64_t>(j) + 1;
          if (std::count(called.begin(), called.end(), called[j]) > 1) r.first_operand = -1;
        }
      }
    }
  const auto is_loop = [&](const hlo::Computation& c) {
    return as_body.count(c.name) != 0 && as_other.count(c.name) == 0;
  };
  std::unordered_map<const hlo::Computation*, std::unique_ptr<Flow>> flows;
  const auto flow = [&](const hlo::Computation& c) -> const Flow& {
    auto& f = flows[&c];
    if (!f) f = std::make_unique<Flow>(c, &c == entry, &c != entry && is_loop(c));
    return *f;
  };
  // Callers before the computations they run (how many callers up to the entry).
  std::unordered_map<const hlo::Computation*, int> depth;
  for (const hlo::Computation* c : todo) {
    int d = 0;
    for (const hlo::Computation* up = c; up != entry && d < 64; ++d) {
      const auto r = caller.find(up->name);
      if (r == caller.end() || r->second.sites != 1) break;
      up = r->second.comp;
    }
    depth[c] = d;
  }
  std::stable_sort(todo.begin(), todo.end(),
                   [&](const hlo::Computation* a, const hlo::Computation* b) { return depth[a] < depth[b]; });
  std::set<std::pair<const hlo::Computation*, std::size_t>> crossed;
  computation_handoff(flow(*entry), Site{}, crossed, out);
  for (const hlo::Computation* c : todo) {
    Site site;
    if (const auto r = caller.find(c->name);
        r != caller.end() && r->second.sites == 1 && r->second.first_operand >= 0 && r->second.comp != c) {
      const hlo::Instruction& at = r->second.comp->instructions[r->second.at];
      site.caller = &flow(*r->second.comp);
      site.at = r->second.at;
      site.first_operand = r->second.first_operand;
      site.loop = at.opcode == "while";
      site.branch = at.opcode == "conditional";
      site.trips = site.loop && at.known_trip_count > 0 ? static_cast<double>(at.known_trip_count) : 1.0;
    }
    computation_handoff(flow(*c), site, crossed, out);
  }
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

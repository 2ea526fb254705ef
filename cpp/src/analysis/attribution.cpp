#include "fpgaprof/analysis/attribution.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "fpgaprof/error.hpp"
#include "fpgaprof/hlo/cost_model.hpp"

namespace fpgaprof::analysis {

const char* match_method_name(MatchMethod m) {
  switch (m) {
    case MatchMethod::kNvtxThunk: return "nvtx_thunk";
    case MatchMethod::kKernelName: return "kernel_name";
    case MatchMethod::kLibrary: return "library";
    case MatchMethod::kUnattributed: break;
  }
  return "unattributed";
}

namespace {

bool is_key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Splits `k=v,k=v` at commas that are outside brackets and followed by `identifier=`; a value
// keeps every other comma (op_name paths such as `transpose[permutation=(1,0)]`).
std::vector<std::pair<std::string_view, std::string_view>> split_key_values(std::string_view body) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  auto starts_pair = [&](std::size_t pos) {
    std::size_t k = pos;
    while (k < body.size() && is_key_char(body[k])) ++k;
    return k > pos && k < body.size() && body[k] == '=';
  };
  std::size_t begin = 0;
  int depth = 0;
  for (std::size_t i = 0; i <= body.size(); ++i) {
    const bool at_end = i == body.size();
    if (!at_end) {
      const char c = body[i];
      if (c == '(' || c == '[' || c == '{')
        ++depth;
      else if ((c == ')' || c == ']' || c == '}') && depth > 0)
        --depth;
      if (c != ',' || depth != 0 || !starts_pair(i + 1)) continue;
    }
    std::string_view item = body.substr(begin, i - begin);
    const std::size_t eq = item.find('=');
    if (eq != std::string_view::npos) out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    begin = i + 1;
  }
  return out;
}

std::optional<int64_t> parse_int(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  int64_t v = 0;
  bool neg = false;
  std::size_t i = 0;
  if (s[0] == '-') {
    neg = true;
    i = 1;
  }
  if (i == s.size()) return std::nullopt;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return neg ? -v : v;
}

bool contains_ci(std::string_view hay, std::string_view needle) {
  if (needle.size() > hay.size()) return false;
  for (std::size_t i = 0; i + needle.size() <= hay.size(); ++i) {
    bool ok = true;
    for (std::size_t j = 0; j < needle.size() && ok; ++j)
      ok = std::tolower(static_cast<unsigned char>(hay[i + j])) == std::tolower(static_cast<unsigned char>(needle[j]));
    if (ok) return true;
  }
  return false;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

XlaRangeName parse_xla_range_name(std::string_view text) {
  XlaRangeName r;
  XlaRangeName::Kind kind;
  std::size_t colon;
  if (starts_with(text, "XlaModule:")) {
    kind = XlaRangeName::Kind::kModule;
    colon = 10;
  } else if (starts_with(text, "Thunk:")) {
    kind = XlaRangeName::Kind::kThunk;
    colon = 6;
  } else {
    return r;
  }
  std::string_view body = text.substr(colon);
  if (body.empty() || body.front() != '#') return r;
  body.remove_prefix(1);
  // The closing '#' is the last one: a value (op_name) may itself hold '#'.
  const std::size_t close = body.rfind('#');
  if (close != std::string_view::npos) body = body.substr(0, close);
  for (const auto& [key, value] : split_key_values(body)) {
    if (kind == XlaRangeName::Kind::kModule) {
      if (key == "hlo_module")
        r.hlo_module = value;
      else if (key == "program_id")
        r.program_id = parse_int(value).value_or(-1);
      else if (key == "prefix")
        r.prefix = value;
    } else {
      if (key == "hlo_op")
        r.hlo_op = value;
      else if (key == "name")
        r.name = value;
      else if (key == "unique_hlo_op_id")
        r.unique_hlo_op_id = parse_int(value).value_or(-1);
    }
  }
  const bool ok = kind == XlaRangeName::Kind::kModule ? !r.hlo_module.empty() : !r.hlo_op.empty();
  if (ok) r.kind = kind;
  return r;
}

std::string sanitize_kernel_name(std::string_view hlo_name) {
  std::string out(hlo_name);
  for (char& c : out) {
    const bool keep =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
    if (!keep) c = '_';
  }
  return out;
}

std::string demangle_kernel_name(std::string_view name) {
  if (name.size() < 3 || name.substr(0, 2) != "_Z") return std::string(name);
  const std::string symbol(name);
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : symbol;
}

std::string library_of_kernel(std::string_view k) {
  // Order matters: cuDNN and cuBLAS kernels are often built from CUTLASS/xmma templates.
  if (contains_ci(k, "cudnn") || contains_ci(k, "implicit_convolve") || contains_ci(k, "winograd") ||
      contains_ci(k, "convolve_") || contains_ci(k, "fprop") || contains_ci(k, "dgrad") || contains_ci(k, "wgrad"))
    return "cuDNN";
  if (contains_ci(k, "fft")) return "cuFFT";
  if (contains_ci(k, "cusolver") || contains_ci(k, "potrf") || contains_ci(k, "getrf") || contains_ci(k, "syevj") ||
      contains_ci(k, "geqrf") || contains_ci(k, "trsm"))
    return "cuSOLVER";
  if (contains_ci(k, "cublas") || contains_ci(k, "gemm") || contains_ci(k, "gemv") || contains_ci(k, "xmma") ||
      contains_ci(k, "nvjet") || contains_ci(k, "splitkreduce") || contains_ci(k, "dot_kernel") ||
      starts_with(k, "ampere_") || starts_with(k, "volta_") || starts_with(k, "turing_") || starts_with(k, "hopper_") ||
      starts_with(k, "sm90_") || starts_with(k, "sm80_") || starts_with(k, "sm100_"))
    return "cuBLAS";
  if (contains_ci(k, "cutlass")) return "CUTLASS";
  if (starts_with(k, "_ZN3cub") || contains_ci(k, "cub::") || contains_ci(k, "thrust")) return "CUB";
  return "";
}

namespace {

struct ModuleView {
  const HloModuleText* text = nullptr;
  const hlo::Module* module = nullptr;  // nullptr: not parsed
  // sanitized name -> instruction, over computations that are not fusion bodies
  std::unordered_map<std::string, const hlo::Instruction*> by_kernel_name;
};

const hlo::Instruction* find_instruction(const ModuleView& mv, const std::string& name) {
  if (!mv.module) return nullptr;
  for (const auto& comp : mv.module->computations) {
    if (const hlo::Instruction* i = comp.find(name)) return i;
  }
  return nullptr;
}

// The instruction itself or, when its metadata is empty (fusions often), the root / first
// instruction with metadata of the computation it calls.
const hlo::Metadata* best_metadata(const hlo::Module& m, const hlo::Instruction& ins, bool want_line) {
  auto good = [&](const hlo::Metadata& md) {
    return want_line ? (!md.source_file.empty() && md.source_line > 0) : !md.op_name.empty();
  };
  if (good(ins.metadata())) return &ins.metadata();
  for (const auto& callee : ins.called_computations()) {
    const hlo::Computation* c = m.find(callee);
    if (!c) continue;
    if (const hlo::Instruction* root = c->root(); root && good(root->metadata())) return &root->metadata();
    for (auto it = c->instructions.rbegin(); it != c->instructions.rend(); ++it)
      if (good(it->metadata())) return &it->metadata();
  }
  return nullptr;
}

std::string category_of(const hlo::Instruction& ins) {
  if (ins.opcode == "fusion") return ins.fusion_kind().empty() ? "fusion" : "fusion:" + ins.fusion_kind();
  if (ins.opcode == "custom-call")
    return ins.custom_call_target().empty() ? "custom-call" : "custom-call:" + ins.custom_call_target();
  return ins.opcode;
}

bool instruction_serves_library(const hlo::Instruction& ins, const std::string& lib) {
  if (lib == "cuFFT")
    return ins.opcode == "fft" || (ins.opcode == "custom-call" && contains_ci(ins.custom_call_target(), "fft"));
  if (ins.opcode != "custom-call" && !(ins.opcode == "fusion" && ins.fusion_kind() == "kCustom")) return false;
  const std::string& t = ins.opcode == "custom-call" ? ins.custom_call_target() : ins.backend_config();
  if (lib == "cuDNN") return contains_ci(t, "cudnn");
  if (lib == "cuSOLVER")
    return contains_ci(t, "cusolver") || contains_ci(t, "solver") || contains_ci(t, "potrf") || contains_ci(t, "getrf");
  if (lib == "cuBLAS" || lib == "CUTLASS")
    return contains_ci(t, "cublas") || contains_ci(t, "gemm") || contains_ci(t, "cutlass") || contains_ci(t, "matmul");
  return ins.opcode == "custom-call";
}

class Attributor {
 public:
  Attributor(const TraceStore& store, const std::vector<hlo::Module>& modules) : store_(store) {
    if (modules.size() != store.hlo_modules.size())
      throw Error(ErrorKind::kInvalidArgument,
                  "attribute(): got " + std::to_string(modules.size()) + " analysed modules for " +
                      std::to_string(store.hlo_modules.size()) +
                      " HLO module texts in the store; pass one Module per store.hlo_modules entry");
    views_.resize(modules.size());
    for (std::size_t i = 0; i < modules.size(); ++i) {
      ModuleView& v = views_[i];
      v.text = &store.hlo_modules[i];
      if (!modules[i].name.empty() || !modules[i].computations.empty()) v.module = &modules[i];
      by_name_[v.text->name].push_back(static_cast<uint32_t>(i));
      if (v.text->program_id >= 0) by_program_id_[v.text->program_id].push_back(static_cast<uint32_t>(i));
      if (!v.module) continue;
      for (const auto& comp : v.module->computations) {
        if (comp.is_fusion) continue;
        for (const auto& ins : comp.instructions) {
          // The parser's get-tuple-element for a "%t#N" operand (line 0, no text): no kernel has
          // its name, and "t#N" sanitises to "t_N", the kernel name of a real instruction "t.N".
          if (ins.line == 0 && ins.name.find('#') != std::string::npos) continue;
          std::string k = sanitize_kernel_name(ins.name);
          if (v.by_kernel_name.emplace(k, &ins).second) by_kernel_[k].push_back(static_cast<uint32_t>(i));
          // A Pallas custom call's kernel carries the kernel function's name (Triton: as
          // sanitized for PTX; Mosaic GPU: `<name>_mosaic_gpu_kernel`), not the instruction's.
          if (ins.opcode == "custom-call") {
            const std::string kernel = sanitize_kernel_name(hlo::custom_kernel_name(ins));
            if (!kernel.empty() && v.by_kernel_name.emplace(kernel, &ins).second)
              by_kernel_[kernel].push_back(static_cast<uint32_t>(i));
          }
        }
      }
    }
  }

  AttributionResult run() {
    AttributionResult res;
    const auto& kernels = store_.kernels;
    std::vector<uint32_t> site(kernels.size(), kNone32);
    std::vector<bool> in_thunk(kernels.size(), false);  // its executions are its ranges' (aggregate)
    ThunkRanges thunks(store_.markers.size());

    for (std::size_t i = 0; i < kernels.size(); ++i) {
      const KernelRecord& k = kernels[i];
      const uint8_t lib = library_id(k.name);
      const Ranges rg = ranges_of(k.marker_index);
      if (rg.thunk && store_.launch_config_of(k).graph_id != 0) {
        // A kernel of a CUDA graph (XLA command buffer): the open range is the one around the
        // whole graph launch, so the kernel's own name is the better witness when the module
        // has an instruction of that name; otherwise the range is all there is.
        const uint32_t mi = rg.module ? resolve_module(*rg.module, rg.thunk->hlo_op) : kNone32;
        const std::vector<uint32_t>* cands = candidates(str(k.name));
        if (mi != kNone32 && cands && std::find(cands->begin(), cands->end(), mi) != cands->end()) {
          site[i] = by_name_site(k.name, mi, lib);
          continue;
        }
      }
      if (rg.thunk) {
        site[i] = thunk_site(rg, lib);
        // Thunk sites are never deferred: the range's totals can be kept now, for the
        // attributed kernels only (as aggregate() counts them).
        if (sites_[site[i]].method != MatchMethod::kUnattributed) {
          in_thunk[i] = true;
          thunks.add(rg.thunk_marker, site[i], k.name, k.duration_ns());
        }
        continue;
      }
      site[i] = no_thunk(k.name, lib, rg);
    }
    resolve_deferred(site);

    const auto copies = [&](const auto& records, std::vector<uint32_t>& s) {
      s.assign(records.size(), kNone32);
      for (std::size_t i = 0; i < records.size(); ++i) {
        const Ranges rg = ranges_of(records[i].marker_index);
        if (rg.thunk) {
          s[i] = thunk_site(rg, 0);
        } else {
          if (not_in_thunk_ == kNone32) {
            ActivityAttribution a;
            a.reason = "not launched inside an XLA thunk";
            not_in_thunk_ = intern(a);
          }
          s[i] = not_in_thunk_;
        }
      }
    };
    std::vector<uint32_t> copy_site, set_site;
    copies(store_.memcpys, copy_site);
    copies(store_.memsets, set_site);

    aggregate(res, site, in_thunk, thunks, copy_site, set_site);
    auto sites = std::make_shared<const std::vector<ActivityAttribution>>(std::move(sites_));
    res.kernels = AttributionList(sites, std::move(site));
    res.memcpys = AttributionList(sites, std::move(copy_site));
    res.memsets = AttributionList(sites, std::move(set_site));
    res.warnings = std::move(warnings_);
    return res;
  }

  Diagnostics warnings_;

 private:
  // Per Thunk range (marker index): the site and name of its first attributed kernel, and
  // whether one of its kernels had no duration (a range is a timed execution when all its
  // kernels were). 4 bytes and a bit per range (a trace of 10^7 kernels holds about as many
  // ranges): the (site, kernel name) pair interned, most sites having one kernel name.
  struct ThunkRanges {
    explicit ThunkRanges(std::size_t n) : pair(n, kNone32), untimed(n, false) {}
    std::vector<uint32_t> pair;  // into pairs (kNone32: no attributed kernel)
    std::vector<bool> untimed;
    std::vector<std::pair<uint32_t, StringId>> pairs;  // (site, kernel name)
    std::unordered_map<uint64_t, uint32_t> pair_index;
    std::vector<uint32_t> last_pair_of_site;  // the pair last interned per site: no hash mostly

    void add(uint32_t m, uint32_t kernel_site, StringId name, uint64_t dur) {
      if (m >= pair.size()) return;
      if (pair[m] == kNone32) pair[m] = intern(kernel_site, name);
      if (dur == 0) untimed[m] = true;
    }
    uint32_t site(std::size_t m) const { return pairs[pair[m]].first; }
    StringId kernel(std::size_t m) const { return pairs[pair[m]].second; }

   private:
    uint32_t intern(uint32_t kernel_site, StringId name) {
      if (kernel_site >= last_pair_of_site.size()) last_pair_of_site.resize(std::size_t{kernel_site} + 1, kNone32);
      uint32_t& last = last_pair_of_site[kernel_site];
      if (last != kNone32 && pairs[last].second == name) return last;
      const auto [it, fresh] =
          pair_index.try_emplace((uint64_t{kernel_site} << 32) | name, static_cast<uint32_t>(pairs.size()));
      if (fresh) pairs.emplace_back(kernel_site, name);
      last = it->second;
      return last;
    }
  };

  struct Ranges {
    const XlaRangeName* thunk = nullptr;
    const XlaRangeName* module = nullptr;
    uint32_t thunk_marker = kNone32;
    uint32_t module_marker = kNone32;
  };

  const std::string& str(StringId id) const {
    static const std::string empty;
    return id < store_.strings.size() ? store_.strings.get(id) : empty;
  }

  // Index into libraries_ of the library a kernel name belongs to (0: "", an XLA kernel).
  uint8_t library_id(StringId name) {
    if (name >= library_of_name_.size()) library_of_name_.resize(std::size_t{name} + 1, kUnknownLibrary);
    uint8_t& id = library_of_name_[name];
    if (id == kUnknownLibrary) {
      const std::string lib = library_of_kernel(str(name));
      auto it = std::find(libraries_.begin(), libraries_.end(), lib);
      if (it == libraries_.end()) it = libraries_.insert(libraries_.end(), lib);
      id = static_cast<uint8_t>(it - libraries_.begin());
    }
    return id;
  }

  // The site index of `a`, adding it when no equal site exists yet.
  uint32_t intern(const ActivityAttribution& a) {
    std::string key;
    for (const std::string* f :
         {&a.module_name, &a.hlo_op, &a.category, &a.library, &a.op_name, &a.source_file, &a.reason}) {
      key.append(*f).push_back('\x1f');
    }
    key.append(std::to_string(static_cast<int>(a.method))).push_back('\x1f');
    key.append(std::to_string(a.module_index)).push_back('\x1f');
    key.append(std::to_string(a.program_id)).push_back('\x1f');
    key.append(std::to_string(a.source_line));
    const auto [it, fresh] = site_index_.try_emplace(std::move(key), static_cast<uint32_t>(sites_.size()));
    if (fresh) {
      sites_.push_back(a);
      site_deferred_.push_back(0);
    }
    return it->second;
  }

  const XlaRangeName& parsed(StringId name) {
    auto it = parsed_.find(name);
    if (it == parsed_.end()) it = parsed_.emplace(name, parse_xla_range_name(str(name))).first;
    return it->second;
  }

  // Innermost Thunk range and the XlaModule range around it, walking MarkerRecord::parent.
  Ranges ranges_of(uint32_t marker_index) {
    Ranges r;
    std::size_t steps = 0;
    for (uint32_t m = marker_index; m != kNone32 && m < store_.markers.size() && steps <= store_.markers.size();
         m = store_.markers[m].parent, ++steps) {
      const XlaRangeName& p = parsed(store_.markers[m].name);
      if (p.kind == XlaRangeName::Kind::kThunk && !r.thunk && !r.module) {
        r.thunk = &p;
        r.thunk_marker = m;
      } else if (p.kind == XlaRangeName::Kind::kModule) {
        r.module = &p;
        r.module_marker = m;
        break;
      }
    }
    return r;
  }

  // Module for an XlaModule range: by program id, else by name (the one holding `op` when
  // several modules share the name; the newest such).
  uint32_t resolve_module(const XlaRangeName& mr, const std::string& op) {
    if (mr.program_id >= 0) {
      auto it = by_program_id_.find(mr.program_id);
      if (it != by_program_id_.end())
        for (uint32_t idx : it->second)
          if (views_[idx].text->name == mr.hlo_module) return idx;
    }
    auto it = by_name_.find(mr.hlo_module);
    if (it == by_name_.end()) return kNone32;
    if (it->second.size() == 1) return it->second[0];
    uint32_t best = kNone32;
    for (uint32_t idx : it->second)
      if (op.empty() || find_instruction(views_[idx], op)) best = idx;
    return best;
  }

  void fill_from_instruction(uint32_t module_index, const hlo::Instruction* ins, ActivityAttribution& a) {
    a.module_index = module_index;
    const ModuleView& v = views_[module_index];
    a.module_name = v.text->name;
    a.program_id = v.text->program_id;
    if (!ins) return;
    a.hlo_op = ins->name;
    a.category = category_of(*ins);
    if (const hlo::Metadata* md = best_metadata(*v.module, *ins, false)) a.op_name = md->op_name;
    if (const hlo::Metadata* md = best_metadata(*v.module, *ins, true)) {
      a.source_file = md->source_file;
      a.source_line = md->source_line;
    }
  }

  // Thunk ranges repeat (one per execution): each (thunk name, module range name) pair is
  // resolved once, and each (that, library of the kernel) pair interned once.
  uint32_t thunk_site(const Ranges& rg, uint8_t lib) {
    const StringId thunk_name = store_.markers[rg.thunk_marker].name;
    const StringId module_name = rg.module_marker == kNone32 ? kNoString : store_.markers[rg.module_marker].name;
    const uint64_t key = (uint64_t{thunk_name} << 32) | module_name;
    auto it = thunk_proto_.find(key);
    if (it == thunk_proto_.end()) {
      ActivityAttribution proto;
      from_thunk_uncached(rg, proto);
      it = thunk_proto_.emplace(key, static_cast<uint32_t>(protos_.size())).first;
      protos_.push_back(std::move(proto));
    }
    const uint64_t site_key = (uint64_t{it->second} << 8) | lib;
    auto st = thunk_site_.find(site_key);
    if (st == thunk_site_.end()) {
      ActivityAttribution a = protos_[it->second];
      a.library = libraries_[lib];
      if (a.category.empty()) a.category = a.library;
      st = thunk_site_.emplace(site_key, intern(a)).first;
    }
    return st->second;
  }

  void from_thunk_uncached(const Ranges& rg, ActivityAttribution& a) {
    a.method = MatchMethod::kNvtxThunk;
    const std::string& op = rg.thunk->hlo_op;
    uint32_t mi = rg.module ? resolve_module(*rg.module, op) : kNone32;
    if (mi == kNone32 && rg.module && rg.module->program_id < 0 && rg.module->hlo_module == op) {
      // XLA's autotuner times a fusion by running it alone in a module named after it, which
      // XLA neither dumps nor numbers (no program_id in its XlaModule range; its timer's
      // stream_executor DelayKernel runs inside the same range). That is compile-time work,
      // not a step of the program: not an op to rank.
      a.method = MatchMethod::kUnattributed;
      a.module_name = rg.module->hlo_module;
      a.reason = "XLA autotuning: a compile-time timing run of '" + op + "' in a module of its own";
      return;
    }
    if (mi == kNone32 && !rg.module) {
      // No module range (older XLA, or it opened before the trace): the op name alone, if unique.
      uint32_t found = kNone32;
      int hits = 0;
      for (uint32_t idx = 0; idx < views_.size(); ++idx)
        if (find_instruction(views_[idx], op)) {
          found = idx;
          ++hits;
        }
      if (hits == 1) mi = found;
    }
    if (mi != kNone32) {
      const hlo::Instruction* ins = find_instruction(views_[mi], op);
      fill_from_instruction(mi, ins, a);
      if (!ins) a.reason = views_[mi].module ? "HLO op not found in its module" : "module HLO not parsed";
    } else {
      if (rg.module) {
        a.module_name = rg.module->hlo_module;
        a.program_id = rg.module->program_id;
      }
      a.reason = "HLO text of the module not in the trace";
    }
    a.hlo_op = op;
    if (a.op_name.empty() && !rg.thunk->name.empty()) {
      const std::string prefix = rg.module ? rg.module->prefix : std::string();
      a.op_name = prefix.empty() ? rg.thunk->name : prefix + "/" + rg.thunk->name;
    }
  }

  // A kernel outside any Thunk range: by kernel name in the module of the range open at
  // launch, else in the only module holding that name; ambiguous names and library kernels
  // are deferred to resolve_deferred() (their provisional site is marked in site_deferred_:
  // unattributed without a reason, it equals no final site). Depends only on (kernel name,
  // module range): cached.
  uint32_t no_thunk(StringId name, uint8_t lib, const Ranges& rg) {
    const StringId module_name = rg.module_marker == kNone32 ? kNoString : store_.markers[rg.module_marker].name;
    const uint64_t key = (uint64_t{name} << 32) | module_name;
    if (auto it = no_thunk_.find(key); it != no_thunk_.end()) return it->second;
    ActivityAttribution a;
    a.library = libraries_[lib];
    const std::string& kname = str(name);
    const uint32_t range_module = rg.module ? resolve_module(*rg.module, "") : kNone32;
    if (rg.module) {
      a.module_name = rg.module->hlo_module;
      a.program_id = rg.module->program_id;
    }
    uint8_t deferred = 0;
    const std::vector<uint32_t>* cands = candidates(kname);
    if (cands) {
      if (range_module != kNone32 && std::find(cands->begin(), cands->end(), range_module) != cands->end()) {
        by_name(kname, range_module, a);
      } else if (cands->size() == 1) {
        by_name(kname, (*cands)[0], a);
      } else {
        deferred = 1;
        a.module_index = range_module;
      }
    } else if (!a.library.empty()) {
      deferred = 2;
      a.module_index = range_module;
    } else if (const char* what = autotuning_kernel(kname)) {
      a.reason = std::string("XLA autotuning: ") + what;
    } else {
      a.reason = views_.empty() ? "no HLO modules in the trace (was fpgaprof imported before JAX started?)"
                                : "no XLA thunk range and no HLO instruction named like the kernel";
    }
    const uint32_t site = intern(a);
    if (deferred != 0) site_deferred_[site] = deferred;
    no_thunk_.emplace(key, site);
    return site;
  }

  // The kernels XLA's autotuner launches through stream_executor while it times candidate
  // fusions and GEMM configurations (compile-time work, outside any thunk): what each does, or
  // nullptr for any other kernel. Matched in the mangled or demangled name.
  static const char* autotuning_kernel(const std::string& kname) {
    if (kname.find("stream_executor") == std::string::npos) return nullptr;
    if (kname.find("RedzoneAllocatorKernel") != std::string::npos) return "redzone check of a candidate's buffers";
    if (kname.find("DelayKernel") != std::string::npos) return "the GPU timer's delay kernel";
    if (kname.find("RepeatBufferKernel") != std::string::npos) return "initialising a candidate's buffers";
    if (kname.find("xla_fp_comparison") != std::string::npos) return "comparing candidates' results";
    return nullptr;
  }

  const std::vector<uint32_t>* candidates(const std::string& kname) const {
    auto it = by_kernel_.find(kname);
    if (it != by_kernel_.end()) return &it->second;
    // XLA's clash suffix: `name__N`.
    const std::size_t pos = kname.rfind("__");
    if (pos == std::string::npos || pos == 0 || pos + 2 >= kname.size()) return nullptr;
    for (std::size_t j = pos + 2; j < kname.size(); ++j)
      if (kname[j] < '0' || kname[j] > '9') return nullptr;
    it = by_kernel_.find(kname.substr(0, pos));
    return it != by_kernel_.end() ? &it->second : nullptr;
  }

  void by_name(const std::string& kname, uint32_t mi, ActivityAttribution& a) {
    const ModuleView& v = views_[mi];
    auto it = v.by_kernel_name.find(kname);
    if (it == v.by_kernel_name.end()) it = v.by_kernel_name.find(kname.substr(0, kname.rfind("__")));
    fill_from_instruction(mi, it != v.by_kernel_name.end() ? it->second : nullptr, a);
    a.method = MatchMethod::kKernelName;
    a.reason.clear();
  }

  // The site of kernel `name` matched by name in module `mi` (cached per pair).
  uint32_t by_name_site(StringId name, uint32_t mi, uint8_t lib) {
    const uint64_t key = (uint64_t{name} << 32) | mi;
    auto it = by_name_site_.find(key);
    if (it == by_name_site_.end()) {
      ActivityAttribution a;
      a.library = libraries_[lib];
      by_name(str(name), mi, a);
      it = by_name_site_.emplace(key, intern(a)).first;
    }
    return it->second;
  }

  // The only instruction of library `lib` in module `mi` (outside fusion bodies) and how many
  // there are (cached per pair).
  std::pair<const hlo::Instruction*, int> library_call_site(uint8_t lib, uint32_t mi) {
    const uint64_t key = (uint64_t{mi} << 8) | lib;
    auto it = library_call_sites_.find(key);
    if (it == library_call_sites_.end()) {
      const hlo::Instruction* only = nullptr;
      int n = 0;
      for (const auto& comp : views_[mi].module->computations) {
        if (comp.is_fusion) continue;
        for (const auto& ins : comp.instructions)
          if (instruction_serves_library(ins, libraries_[lib])) {
            only = &ins;
            ++n;
          }
      }
      it = library_call_sites_.emplace(key, std::make_pair(only, n)).first;
    }
    return it->second;
  }

  void resolve_deferred(std::vector<uint32_t>& site) {
    const auto& kernels = store_.kernels;
    if (std::none_of(site_deferred_.begin(), site_deferred_.end(), [](uint8_t d) { return d != 0; })) return;
    // A kernel's provisional site is only replaced when that kernel is resolved, and sites
    // interned meanwhile are never deferred, so this stays right throughout.
    const auto deferred = [&](uint32_t k) -> uint8_t { return site_deferred_[site[k]]; };
    // Context: the module of the closest kernel on the same stream attributed in pass 1.
    std::vector<uint32_t> order(kernels.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
      const KernelRecord& a = kernels[x];
      const KernelRecord& b = kernels[y];
      return std::tie(a.device_id, a.context_id, a.stream_id, a.start_ns, x) <
             std::tie(b.device_id, b.context_id, b.stream_id, b.start_ns, y);
    });
    auto same_stream = [&](uint32_t x, uint32_t y) {
      return kernels[x].device_id == kernels[y].device_id && kernels[x].context_id == kernels[y].context_id &&
             kernels[x].stream_id == kernels[y].stream_id;
    };
    auto module_of = [&](uint32_t k) { return sites_[site[k]].module_index; };
    auto known = [&](uint32_t k) { return deferred(k) == 0 && module_of(k) != kNone32; };
    std::vector<uint32_t> prev(order.size(), kNone32), next(order.size(), kNone32);
    for (std::size_t p = 0; p < order.size(); ++p) {
      if (p > 0 && same_stream(order[p - 1], order[p]))
        prev[p] = known(order[p - 1]) ? module_of(order[p - 1]) : prev[p - 1];
    }
    for (std::size_t p = order.size(); p-- > 0;) {
      if (p + 1 < order.size() && same_stream(order[p + 1], order[p]))
        next[p] = known(order[p + 1]) ? module_of(order[p + 1]) : next[p + 1];
    }
    for (std::size_t p = 0; p < order.size(); ++p) {
      const uint32_t k = order[p];
      if (deferred(k) == 0) continue;
      const StringId name = kernels[k].name;
      const uint8_t lib = library_id(name);
      std::array<uint32_t, 3> ctx{};
      std::size_t nctx = 0;
      for (uint32_t c : {module_of(k), prev[p], next[p]})
        if (c != kNone32) ctx[nctx++] = c;
      if (deferred(k) == 1) {
        const std::vector<uint32_t>& cands = *candidates(str(name));
        uint32_t found = kNone32;
        for (std::size_t j = 0; j < nctx && found == kNone32; ++j)
          if (std::find(cands.begin(), cands.end(), ctx[j]) != cands.end()) found = ctx[j];
        if (found != kNone32) {
          site[k] = by_name_site(name, found, lib);
        } else {
          ActivityAttribution a = sites_[site[k]];
          a.module_index = kNone32;
          a.reason = "kernel name matches instructions in " + std::to_string(cands.size()) +
                     " modules and no neighbouring kernel tells which";
          site[k] = intern(a);
        }
        continue;
      }
      // Library kernel without a thunk range: the single instruction of that library in context.
      ActivityAttribution a = sites_[site[k]];
      bool done = false;
      std::string why = "library kernel without XLA thunk range and no attributed neighbour";
      for (std::size_t j = 0; j < nctx; ++j) {
        const uint32_t c = ctx[j];
        const ModuleView& v = views_[c];
        if (!v.module) continue;
        const auto [only, n] = library_call_site(lib, c);
        if (n == 1) {
          fill_from_instruction(c, only, a);
          a.method = MatchMethod::kLibrary;
          a.reason.clear();
          done = true;
          break;
        }
        why = std::to_string(n) + " " + a.library + " call sites in module " + v.text->name + ", cannot tell which";
      }
      if (!done) {
        a.module_index = kNone32;
        a.reason = why;
      }
      site[k] = intern(a);
    }
  }

  // Per-op totals. Everything per record goes through integer indexes (site -> op, marker,
  // kernel name id), so the cost is a few array lookups per kernel whatever the trace size.
  void aggregate(AttributionResult& res, const std::vector<uint32_t>& kernel_site, const std::vector<bool>& in_thunk,
                 ThunkRanges& thunks, const std::vector<uint32_t>& copy_site, const std::vector<uint32_t>& set_site) {
    std::unordered_map<std::string, uint32_t> slot;
    std::vector<uint32_t> op_of_site(sites_.size(), kNone32);
    std::vector<std::array<uint64_t, 4>> methods;
    std::vector<uint64_t> thunk_executions;
    std::vector<uint64_t> timed_ns;  // kernel time of each op's timed executions
    const auto op_for = [&](uint32_t site_index) -> uint32_t {
      uint32_t& op = op_of_site[site_index];
      if (op != kNone32) return op;
      const ActivityAttribution& a = sites_[site_index];
      std::string key = std::to_string(a.module_index);
      key.push_back('\x1f');
      key.append(a.module_name).push_back('\x1f');
      key.append(std::to_string(a.program_id)).push_back('\x1f');
      key.append(a.hlo_op);
      const auto [it, fresh] = slot.try_emplace(std::move(key), static_cast<uint32_t>(res.ops.size()));
      if (fresh) {
        OpStats s;
        s.module_index = a.module_index;
        s.module_name = a.module_name;
        s.program_id = a.program_id;
        s.hlo_op = a.hlo_op;
        s.category = a.category;
        s.op_name = a.op_name;
        s.source_file = a.source_file;
        s.source_line = a.source_line;
        if (a.module_index != kNone32) {
          if (const hlo::Instruction* ins = find_instruction(views_[a.module_index], a.hlo_op)) {
            s.opcode = ins->opcode;
            s.has_cost = true;
            s.flops = ins->cost.flops;
            s.transcendentals = ins->cost.transcendentals;
            s.bytes_read = ins->cost.bytes_read;
            s.bytes_written = ins->cost.bytes_written;
            s.bytes_accessed = ins->cost.bytes_accessed();
            s.cost_per_iteration = ins->cost.per_iteration;
            s.cost_unknown = ins->cost.unknown;
            s.cost_from_author = ins->cost.from_author;
            s.pattern = hlo::access_pattern_name(ins->pattern);
          }
        }
        res.ops.push_back(std::move(s));
        methods.push_back({0, 0, 0, 0});
        thunk_executions.push_back(0);
        timed_ns.push_back(0);
      }
      op = it->second;
      return op;
    };
    // Kernel names: the first op seen per name in an array, further (name, op) pairs in a set.
    std::vector<uint32_t> op_of_name(store_.strings.size(), kNone32);
    std::unordered_set<uint64_t> more_name_ops;
    std::vector<uint32_t> unattributed_of_name(store_.strings.size(), kNone32);
    const auto first_pair = [](std::vector<uint32_t>& first, std::unordered_set<uint64_t>& more, uint32_t x,
                               uint32_t op) {
      if (x >= first.size()) return more.insert((uint64_t{x} << 32) | op).second;
      if (first[x] == kNone32) {
        first[x] = op;
        return true;
      }
      if (first[x] == op) return false;
      return more.insert((uint64_t{x} << 32) | op).second;
    };

    for (std::size_t i = 0; i < kernel_site.size(); ++i) {
      const ActivityAttribution& a = sites_[kernel_site[i]];
      const KernelRecord& k = store_.kernels[i];
      const uint64_t dur = k.duration_ns();
      res.count_by_method[static_cast<std::size_t>(a.method)]++;
      if (a.method == MatchMethod::kUnattributed) {
        res.unattributed_count++;
        res.unattributed_ns += dur;
        uint32_t& u = unattributed_of_name[k.name < unattributed_of_name.size() ? k.name : 0];
        if (u == kNone32) {
          u = static_cast<uint32_t>(res.unattributed.size());
          res.unattributed.push_back(UnattributedKernel{str(k.name), 0, 0, a.reason});
        }
        res.unattributed[u].count++;
        res.unattributed[u].total_ns += dur;
        continue;
      }
      res.attributed_count++;
      res.attributed_ns += dur;
      const uint32_t op = op_for(kernel_site[i]);
      OpStats& s = res.ops[op];
      s.kernel_count++;
      s.total_ns += dur;
      if (!in_thunk[i]) {
        s.executions++;
        if (dur > 0) {
          s.timed_executions++;
          timed_ns[op] += dur;
        }
      } else {
        timed_ns[op] += dur;  // less the untimed executions' time, below
      }
      methods[op][static_cast<std::size_t>(a.method)]++;
      if (first_pair(op_of_name, more_name_ops, k.name, op)) s.kernel_names.push_back(str(k.name));
    }
    const auto add_copies = [&](const std::vector<uint32_t>& sites, const auto& records) {
      for (std::size_t i = 0; i < sites.size(); ++i) {
        if (sites_[sites[i]].method == MatchMethod::kUnattributed) continue;
        OpStats& s = res.ops[op_for(sites[i])];
        s.memcpy_count++;
        s.memcpy_ns += records[i].duration_ns();
        s.memcpy_bytes += records[i].bytes;
      }
    };
    add_copies(copy_site, store_.memcpys);
    add_copies(set_site, store_.memsets);
    // One execution per Thunk range, except that XLA runs some ops as several thunks one after
    // the other, each its own kernel (a sort's passes: sort_1, sort_1__1, sort_1__2): the next
    // range on the same thread, inside the same module range, of the same op, whose kernel
    // the execution has not run yet, continues that execution. A kernel run again (a loop's
    // next trip) or another op's range in between starts a new one. An execution is timed when
    // all its kernels were.
    struct Run {
      uint32_t marker = kNone32;      // the last range of the current execution
      std::vector<uint32_t> kernels;  // the kernel names it ran
      std::vector<uint32_t> ranges;   // its ranges
      bool untimed = false;
    };
    std::unordered_map<uint32_t, Run> run_of_thread;
    uint32_t last_thread = kNone32;
    Run* last_run = nullptr;  // run_of_thread[last_thread]: one lookup per change of thread
    // A Thunk range belongs to one op (every kernel in it gets the site of that thunk, whose op
    // does not depend on the kernel): the op of its first attributed kernel's site.
    const auto op_of_range = [&](std::size_t m) { return op_for(thunks.site(m)); };
    // An untimed execution marks all its ranges untimed: their kernels' time is taken out of
    // the op's timed time afterwards.
    bool any_untimed_run = false;
    const auto close = [&](const Run& r) {
      if (r.marker == kNone32) return;
      const uint32_t op = op_of_range(r.marker);
      thunk_executions[op]++;
      if (!r.untimed) {
        res.ops[op].timed_executions++;
        return;
      }
      any_untimed_run = true;
      for (const uint32_t m : r.ranges) thunks.untimed[m] = true;
    };
    for (std::size_t m = 0; m < thunks.pair.size(); ++m) {
      if (thunks.pair[m] == kNone32) continue;
      const MarkerRecord& mk = store_.markers[m];
      if (last_run == nullptr || mk.thread_id != last_thread) {
        last_thread = mk.thread_id;
        last_run = &run_of_thread[mk.thread_id];  // references into an unordered_map stay valid
      }
      Run& r = *last_run;
      bool continues = false;
      if (r.marker != kNone32) {
        const MarkerRecord& last = store_.markers[r.marker];
        continues = op_of_range(r.marker) == op_of_range(m) && last.parent == mk.parent && last.parent != kNone32 &&
                    mk.start_ns >= last.end_ns &&
                    std::find(r.kernels.begin(), r.kernels.end(), thunks.kernel(m)) == r.kernels.end();
      }
      if (!continues) {
        close(r);
        r.kernels.clear();
        r.ranges.clear();
        r.untimed = false;
      }
      r.marker = static_cast<uint32_t>(m);
      r.kernels.push_back(thunks.kernel(m));
      r.ranges.push_back(static_cast<uint32_t>(m));
      r.untimed = r.untimed || thunks.untimed[m];
    }
    for (const auto& [thread, r] : run_of_thread) close(r);
    if (any_untimed_run) {
      // The kernels of untimed executions (a counter replay's): their time is no timed time.
      for (std::size_t i = 0; i < kernel_site.size(); ++i) {
        if (!in_thunk[i]) continue;
        const uint32_t m = ranges_of(store_.kernels[i].marker_index).thunk_marker;
        if (m < thunks.untimed.size() && thunks.untimed[m])
          timed_ns[op_for(kernel_site[i])] -= store_.kernels[i].duration_ns();
      }
    }
    for (std::size_t o = 0; o < res.ops.size(); ++o) {
      OpStats& s = res.ops[o];
      s.executions += thunk_executions[o];
      s.mean_ns = s.timed_executions ? timed_ns[o] / s.timed_executions : 0;
      const auto& m = methods[o];
      s.method = std::all_of(m.begin(), m.end(), [](uint64_t c) { return c == 0; })
                     ? MatchMethod::kNvtxThunk  // only copies: those come from thunk ranges
                     : static_cast<MatchMethod>(std::max_element(m.begin(), m.end()) - m.begin());
    }
    // Largest first; op_of_site follows the new order.
    std::vector<uint32_t> order(res.ops.size());
    for (uint32_t o = 0; o < order.size(); ++o) order[o] = o;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
      return res.ops[x].total_ns + res.ops[x].memcpy_ns > res.ops[y].total_ns + res.ops[y].memcpy_ns;
    });
    std::vector<OpStats> sorted;
    sorted.reserve(res.ops.size());
    std::vector<uint32_t> new_index(res.ops.size());
    for (uint32_t p = 0; p < order.size(); ++p) {
      new_index[order[p]] = p;
      sorted.push_back(std::move(res.ops[order[p]]));
    }
    res.ops = std::move(sorted);
    for (uint32_t& op : op_of_site)
      if (op != kNone32) op = new_index[op];
    res.op_of_site = std::move(op_of_site);
    std::stable_sort(res.unattributed.begin(), res.unattributed.end(),
                     [](const UnattributedKernel& x, const UnattributedKernel& y) { return x.total_ns > y.total_ns; });
  }

  static constexpr uint8_t kUnknownLibrary = 0xFF;

  const TraceStore& store_;
  std::vector<ModuleView> views_;
  std::unordered_map<std::string, std::vector<uint32_t>> by_name_;
  std::unordered_map<int64_t, std::vector<uint32_t>> by_program_id_;
  std::unordered_map<std::string, std::vector<uint32_t>> by_kernel_;
  std::unordered_map<StringId, XlaRangeName> parsed_;
  std::vector<std::string> libraries_{std::string()};  // 0: no library
  std::vector<uint8_t> library_of_name_;               // kernel name id -> libraries_ index
  std::vector<ActivityAttribution> sites_;
  std::unordered_map<std::string, uint32_t> site_index_;
  std::vector<ActivityAttribution> protos_;              // thunk attributions without the library
  std::unordered_map<uint64_t, uint32_t> thunk_proto_;   // (thunk name, module range name) -> protos_
  std::unordered_map<uint64_t, uint32_t> thunk_site_;    // (proto, library) -> site
  std::vector<uint8_t> site_deferred_;                   // per site: 0, or 1 / 2 for a provisional site (see no_thunk)
  std::unordered_map<uint64_t, uint32_t> no_thunk_;      // (kernel name, module range name) -> site
  std::unordered_map<uint64_t, uint32_t> by_name_site_;  // (kernel name, module) -> site
  std::unordered_map<uint64_t, std::pair<const hlo::Instruction*, int>> library_call_sites_;
  uint32_t not_in_thunk_ = kNone32;
};

}  // namespace

AttributionResult attribute(const TraceStore& store, const std::vector<hlo::Module>& modules) {
  Attributor at(store, modules);
  return at.run();
}

std::string module_parse_warning(const HloModuleText& module, std::string_view why) {
  return "HLO module " + module.name + " (program_id " + std::to_string(module.program_id) +
         ") could not be analysed (" + std::string(why) +
         "); its kernels get op names from XLA's ranges only, without costs";
}

AttributionResult attribute(const TraceStore& store) {
  std::vector<hlo::Module> modules(store.hlo_modules.size());
  Diagnostics warnings;
  for (std::size_t i = 0; i < store.hlo_modules.size(); ++i) {
    try {
      modules[i] = hlo::analyze_hlo(store.hlo_modules[i].text);
    } catch (const std::exception& e) {
      // Error(kHloParse) normally; anything else from the parser is reported the same way
      // rather than losing the whole attribution.
      modules[i] = hlo::Module{};
      warnings.add("hlo.module_unparsed", module_parse_warning(store.hlo_modules[i], e.what()));
    }
  }
  AttributionResult res = attribute(store, modules);
  warnings.append(res.warnings);  // the parse failures first
  res.warnings = std::move(warnings);
  return res;
}

}  // namespace fpgaprof::analysis

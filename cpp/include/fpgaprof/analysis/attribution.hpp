// Attribution: every GPU kernel (and the copies/memsets launched inside an XLA thunk) -> the
// XLA module, the HLO op, its static cost and the Python source line that produced it.
//
// Matching, in order (docs/attribution.md):
//  1. nvtx_thunk: the innermost XLA NVTX range open on the launching thread at launch
//     (KernelRecord::marker_index, set by correlate()) named `Thunk:#...hlo_op=OP...#`, inside
//     `XlaModule:#[prefix=..,]hlo_module=M[,program_id=P]#`. Library kernels (cuBLAS, cuDNN,
//     cuFFT, ...) launched by a custom-call thunk are attributed this way too.
//  2. kernel_name: the kernel name equals an HLO instruction name with every character outside
//     [A-Za-z0-9_$] replaced by '_' (optionally followed by XLA's clash suffix `__N`). A name
//     found in several modules is resolved by the module range open at launch, else by the
//     module of the closest attributed kernel on the same stream.
//  3. library: a library kernel (by name) without a thunk range goes to the only custom-call /
//     fft instruction of that library in the module the context points to.
//  4. unattributed: counted and listed, never dropped.
//
// Pure computation over a TraceStore that correlate() has processed: thread-safe for
// concurrent calls on different inputs; the result owns all its data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fpgaprof/hlo/hlo_module.hpp"
#include "fpgaprof/trace_store.hpp"

namespace fpgaprof::analysis {

enum class MatchMethod : uint8_t { kUnattributed = 0, kNvtxThunk = 1, kKernelName = 2, kLibrary = 3 };
const char* match_method_name(MatchMethod m);  // "unattributed", "nvtx_thunk", "kernel_name", "library"

// A parsed XLA NVTX range name. kind is kNone for any other string.
struct XlaRangeName {
  enum class Kind : uint8_t { kNone, kModule, kThunk };
  Kind kind = Kind::kNone;
  std::string hlo_module;   // XlaModule ranges
  int64_t program_id = -1;  // XlaModule ranges, -1 when not printed
  std::string prefix;       // XlaModule: common op_name prefix of the module
  std::string hlo_op;       // Thunk ranges: the HLO instruction name
  std::string name;         // Thunk ranges: op_name below the module prefix (may hold ',' and '=')
  int64_t unique_hlo_op_id = -1;
};
// Parses `XlaModule:#k=v,...#` and `Thunk:#k=v,...#`. Values may contain commas inside (), [],
// {} and commas not followed by `key=`; unknown keys are ignored. Never throws.
XlaRangeName parse_xla_range_name(std::string_view text);

// The kernel name XLA gives an HLO instruction: each char outside [A-Za-z0-9_$] becomes '_'.
std::string sanitize_kernel_name(std::string_view hlo_name);

// A kernel name as people read it: a C++ symbol CUPTI reports mangled ("_ZN3cub...") demangled
// by the C++ runtime (the same text as c++filt, Nsight Systems and XProf show); any other name,
// and a symbol the runtime cannot demangle, unchanged. For display only: attribution and
// reports' keys use the name as recorded.
std::string demangle_kernel_name(std::string_view name);

// Library that a kernel name belongs to ("cuBLAS", "cuDNN", "cuFFT", "cuSOLVER", "CUTLASS",
// "CUB"), or "" for an XLA-generated kernel.
std::string library_of_kernel(std::string_view kernel_name);

// Where GPU activities were attributed. Many activities share one (every execution of an op's
// kernel does), so AttributionResult stores each distinct one once as a "site".
struct ActivityAttribution {
  MatchMethod method = MatchMethod::kUnattributed;
  uint32_t module_index = kNone32;  // into TraceStore::hlo_modules (kNone32: none)
  std::string module_name;          // from the module or the XlaModule range
  int64_t program_id = -1;
  std::string hlo_op;    // instruction name ("" when unattributed)
  std::string category;  // "fusion:kLoop", "custom-call:__cublas$gemm", "cuBLAS", opcode
  std::string library;   // library of the kernel, "" for XLA-generated kernels
  std::string op_name;   // JAX op path from the HLO metadata (or the thunk range's name=)
  std::string source_file;
  int64_t source_line = -1;
  std::string reason;  // unattributed (or partly): why

  bool operator==(const ActivityAttribution&) const = default;
};

// The attribution of every record of one table (kernels, copies or memsets), 4 bytes per
// record: the index of its site (a shared ActivityAttribution). Copies of the list share the
// sites of the result they belong to (a shared, immutable vector).
class AttributionList {
 public:
  AttributionList() = default;
  AttributionList(std::shared_ptr<const std::vector<ActivityAttribution>> sites, std::vector<uint32_t> site_of)
      : sites_(std::move(sites)), site_of_(std::move(site_of)) {}

  std::size_t size() const { return site_of_.size(); }
  bool empty() const { return site_of_.empty(); }
  // Record i's attribution (i < size(); not checked).
  const ActivityAttribution& operator[](std::size_t i) const { return (*sites_)[site_of_[i]]; }
  uint32_t site(std::size_t i) const { return site_of_[i]; }  // index into sites()
  const std::vector<uint32_t>& site_indices() const { return site_of_; }
  const std::vector<ActivityAttribution>& sites() const {
    static const std::vector<ActivityAttribution> kNoSites;
    return sites_ ? *sites_ : kNoSites;
  }

  class Iterator {
   public:
    using value_type = ActivityAttribution;
    using difference_type = std::ptrdiff_t;
    Iterator() = default;
    Iterator(const AttributionList* list, std::size_t i) : list_(list), i_(i) {}
    const ActivityAttribution& operator*() const { return (*list_)[i_]; }
    const ActivityAttribution* operator->() const { return &(*list_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator t = *this;
      ++i_;
      return t;
    }
    bool operator==(const Iterator& o) const { return i_ == o.i_; }

   private:
    const AttributionList* list_ = nullptr;
    std::size_t i_ = 0;
  };
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, size()}; }

 private:
  std::shared_ptr<const std::vector<ActivityAttribution>> sites_;
  std::vector<uint32_t> site_of_;
};

// Time and static cost of one HLO op over the trace.
struct OpStats {
  uint32_t module_index = kNone32;
  std::string module_name;
  int64_t program_id = -1;
  std::string hlo_op;
  std::string opcode;
  std::string category;
  std::string op_name;
  std::string source_file;
  int64_t source_line = -1;
  MatchMethod method = MatchMethod::kUnattributed;  // the method most of its kernels used
  uint64_t kernel_count = 0;                        // kernel executions attributed to the op
  uint64_t executions = 0;                          // thunk executions (distinct Thunk ranges), else kernel_count
  uint64_t total_ns = 0;                            // summed kernel duration
  // Executions whose kernels all have a duration (a counter replay leaves some kernels with
  // start = end = 0): mean_ns is over these, so that an untimed run does not count as 0 ns.
  uint64_t timed_executions = 0;
  uint64_t mean_ns = 0;       // kernel time of the timed executions / timed_executions (0: none timed)
  uint64_t memcpy_count = 0;  // copies/memsets launched inside the op's thunk
  uint64_t memcpy_ns = 0;
  uint64_t memcpy_bytes = 0;
  std::vector<std::string> kernel_names;  // distinct, in first-seen order
  bool has_cost = false;                  // false: the module's HLO was not available or not parsed
  double flops = 0;                       // static cost of ONE execution (hlo::Cost of the instruction)
  double transcendentals = 0;
  double bytes_accessed = 0;
  double bytes_read = 0;
  double bytes_written = 0;
  bool cost_per_iteration = false;
  bool cost_unknown = false;
  bool cost_from_author = false;  // a custom kernel's own figures (hlo::Cost::from_author)
  std::string pattern;            // hlo::access_pattern_name
};

// A kernel name that could not be attributed.
struct UnattributedKernel {
  std::string name;
  uint64_t count = 0;
  uint64_t total_ns = 0;
  std::string reason;
};

struct AttributionResult {
  AttributionList kernels;  // parallel to TraceStore::kernels
  AttributionList memcpys;  // parallel to TraceStore::memcpys
  AttributionList memsets;  // parallel to TraceStore::memsets
  // op_of_site[s]: index into `ops` of site s (kernels.sites()), kNone32 when unattributed.
  std::vector<uint32_t> op_of_site;
  std::vector<OpStats> ops;                      // by total_ns, largest first
  std::vector<UnattributedKernel> unattributed;  // by total_ns, largest first
  uint64_t unattributed_count = 0;               // kernels
  uint64_t unattributed_ns = 0;
  uint64_t attributed_count = 0;  // kernels
  uint64_t attributed_ns = 0;
  uint64_t count_by_method[4] = {0, 0, 0, 0};  // kernels, indexed by MatchMethod
  Diagnostics warnings;                        // modules that failed to parse (hlo.module_unparsed), ...
};

// Attributes with modules parsed (and costed) from store.hlo_modules; a module that fails to
// parse is skipped with a warning (module_parse_warning; its kernels can still get module/op
// names from ranges).
AttributionResult attribute(const TraceStore& store);

// The warning attribute(store) puts first in AttributionResult::warnings for a module of the
// store that could not be parsed or costed (`why`: the parser's message).
std::string module_parse_warning(const HloModuleText& module, std::string_view why);

// Same with already analysed modules: modules[i] belongs to store.hlo_modules[i] (a module with
// an empty name stands for one that is unavailable). Throws Error(kInvalidArgument) when the
// sizes differ.
AttributionResult attribute(const TraceStore& store, const std::vector<hlo::Module>& modules);

}  // namespace fpgaprof::analysis

// RegionPaths: the user regions (fpgaprof.region) of a store grouped by name path
// ("outer > inner"). Every region record belongs to one path; a path is keyed by (enclosing
// path, name), so a name that itself contains " > " stays one path (shown in quotes). Paths are
// numbered as TraceStore::regions first reaches them (a record's not yet numbered enclosing
// paths just before its own), so an enclosing path always has a smaller id than the paths
// inside it, and two RegionPaths built from the same store agree on every id. Nesting comes from
// RegionLocator (parent links as correlate() set them, else time containment per thread).
// Region results per path (transfers, memory, roofline, FPGA ranking) use this one grouping.
// Bounded whatever the trace holds: a name is shown in a path cut to kRegionNameMaxBytes (with
// "..." and its length in bytes), and nesting is kept to kRegionMaxDepth levels: a region nested
// deeper is no path of its own: it belongs to its enclosing region at the deepest kept level (its
// kernels, copies and memory events count there) and is not one of that path's instances.
// Read-only after build; safe to share between threads. Keeps no reference to the store.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fpgaprof/records.hpp"
#include "fpgaprof/trace_store.hpp"

namespace fpgaprof::analysis {

// Which rows a region result has: one per region path (its instances summed; the default) or
// one per region record (instance). Used by TransferOptions, RooflineOptions, analyze_memory.
enum class RegionRows : uint8_t { kPaths = 0, kInstances = 1 };

// Longest region name shown in a path (bytes, cut at a UTF-8 character boundary).
inline constexpr std::size_t kRegionNameMaxBytes = 256;
// Deepest nesting kept as paths (the outermost region is level 1).
inline constexpr uint32_t kRegionMaxDepth = 64;

// `name` as a path shows it: whole up to kRegionNameMaxBytes, else its first bytes (whole UTF-8
// characters) followed by "... (N bytes)".
std::string shown_region_name(std::string_view name);

class RegionPaths {
 public:
  RegionPaths() = default;
  explicit RegionPaths(const TraceStore& store);

  std::size_t size() const { return path_.size(); }  // number of distinct paths
  // Path of region record `region_index`; kNone32 for an index outside the store's regions.
  uint32_t path_of(uint32_t region_index) const {
    return region_index < path_of_.size() ? path_of_[region_index] : kNone32;
  }
  const std::string& path(uint32_t p) const { return path_[p]; }  // "outer > inner"
  const std::string& name(uint32_t p) const { return name_[p]; }  // innermost name, unquoted
  uint32_t parent(uint32_t p) const { return parent_[p]; }        // enclosing path, kNone32 at the top
  uint32_t depth(uint32_t p) const { return depth_[p]; }          // 0: outermost
  uint64_t instances(uint32_t p) const { return instances_[p]; }  // region records with this path
  std::size_t region_count() const { return path_of_.size(); }    // region records grouped
  // Whether region record `region_index` is an instance of its path (false for a record nested
  // deeper than kRegionMaxDepth, which only adds to its enclosing path, and for bad indices).
  bool is_instance(uint32_t region_index) const { return region_index < folded_.size() && folded_[region_index] == 0; }
  // Region records nested deeper than kRegionMaxDepth (counted in their enclosing path).
  std::size_t folded_count() const { return folded_count_; }

  // The grouping an analysis works with: `given` when set, else `own`, built here from `store`
  // when `needed`. When needed, the grouping must come from `store`: otherwise
  // Error(kInvalidArgument) naming `option` (e.g. "TransferOptions::region_paths").
  static const RegionPaths& select(const TraceStore& store, const RegionPaths* given, bool needed, RegionPaths& own,
                                   const char* option);

  // Calls f(q) for `p` and each enclosing path, innermost first (inclusive roll-ups). No-op
  // for kNone32. Bounded: ids are checked and a path's parent always has a smaller id.
  template <class F>
  void for_self_and_ancestors(uint32_t p, F&& f) const {
    for (std::size_t steps = 0; p != kNone32 && p < path_.size() && steps <= path_.size(); p = parent_[p], ++steps)
      f(p);
  }

 private:
  std::vector<uint32_t> path_of_;  // per TraceStore::regions entry
  std::vector<uint8_t> folded_;    // per TraceStore::regions entry: 1 when deeper than kRegionMaxDepth
  std::size_t folded_count_ = 0;
  std::vector<std::string> path_, name_;
  std::vector<uint32_t> parent_, depth_;
  std::vector<uint64_t> instances_;
};

}  // namespace fpgaprof::analysis

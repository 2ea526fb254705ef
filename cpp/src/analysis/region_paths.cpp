#include "fpgaprof/analysis/region_paths.hpp"

#include <algorithm>
#include <unordered_map>

#include "fpgaprof/analysis/region_locator.hpp"
#include "fpgaprof/error.hpp"

namespace fpgaprof::analysis {

std::string shown_region_name(std::string_view name) {
  if (name.size() <= kRegionNameMaxBytes) return std::string(name);
  std::size_t cut = kRegionNameMaxBytes;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;  // a character's first byte
  return std::string(name.substr(0, cut)) + "... (" + std::to_string(name.size()) + " bytes)";
}

RegionPaths::RegionPaths(const TraceStore& store) {
  const std::vector<RegionRecord>& regions = store.regions;
  const RegionLocator locator(regions);
  path_of_.assign(regions.size(), kNone32);
  folded_.assign(regions.size(), 0);
  std::unordered_map<uint64_t, uint32_t> by_parent_and_name;
  std::vector<uint32_t> chain;
  std::vector<uint32_t> on_chain(regions.size(), 0);  // r + 1 while r's chain is walked
  for (uint32_t r = 0; r < regions.size(); ++r) {
    // Up to the first ancestor already grouped (a cycle or a bad parent ends the path).
    chain.clear();
    uint32_t q = r;
    while (q != kNone32 && q < regions.size() && path_of_[q] == kNone32 && chain.size() <= regions.size()) {
      if (on_chain[q] == r + 1) break;  // a cycle (linear: no search of the chain)
      on_chain[q] = r + 1;
      chain.push_back(q);
      q = locator.parent(q);
    }
    uint32_t parent_path = q != kNone32 && q < regions.size() ? path_of_[q] : kNone32;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      if (parent_path != kNone32 && depth_[parent_path] + 1 >= kRegionMaxDepth) {
        // Nested deeper than kept: part of the enclosing path, not an instance of it.
        path_of_[*it] = parent_path;
        folded_[*it] = 1;
        ++folded_count_;
        continue;
      }
      const StringId name_id = regions[*it].name;
      auto [pos, fresh] = by_parent_and_name.try_emplace((static_cast<uint64_t>(parent_path) << 32) | name_id,
                                                         static_cast<uint32_t>(path_.size()));
      if (fresh) {
        const std::string_view full = store.strings.get(name_id);
        std::string name = shown_region_name(full);
        if (full.find(" > ") != std::string_view::npos) name = "\"" + name + "\"";
        path_.push_back(parent_path == kNone32 ? name : path_[parent_path] + " > " + name);
        name_.push_back(shown_region_name(full));
        parent_.push_back(parent_path);
        depth_.push_back(parent_path == kNone32 ? 0 : depth_[parent_path] + 1);
        instances_.push_back(0);
      }
      path_of_[*it] = pos->second;
      instances_[pos->second] += 1;
      parent_path = pos->second;
    }
  }
}

const RegionPaths& RegionPaths::select(const TraceStore& store, const RegionPaths* given, bool needed, RegionPaths& own,
                                       const char* option) {
  if (given == nullptr && needed) own = RegionPaths(store);
  const RegionPaths& paths = given != nullptr ? *given : own;
  if (needed && paths.region_count() != store.regions.size())
    throw Error(ErrorKind::kInvalidArgument,
                std::string(option) + " was built from another store: build it from this one");
  return paths;
}

}  // namespace fpgaprof::analysis

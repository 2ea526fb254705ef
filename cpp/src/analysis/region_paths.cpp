#include "fpgaprof/analysis/region_paths.hpp"

#include <algorithm>
#include <unordered_map>

#include "fpgaprof/analysis/region_locator.hpp"
#include "fpgaprof/error.hpp"

namespace fpgaprof::analysis {

RegionPaths::RegionPaths(const TraceStore& store) {
  const std::vector<RegionRecord>& regions = store.regions;
  const RegionLocator locator(regions);
  path_of_.assign(regions.size(), kNone32);
  std::unordered_map<uint64_t, uint32_t> by_parent_and_name;
  std::vector<uint32_t> chain;
  for (uint32_t r = 0; r < regions.size(); ++r) {
    // Up to the first ancestor already grouped (a cycle or a bad parent ends the path).
    chain.clear();
    uint32_t q = r;
    while (q != kNone32 && path_of_[q] == kNone32 && chain.size() <= regions.size()) {
      if (std::find(chain.begin(), chain.end(), q) != chain.end()) break;
      chain.push_back(q);
      q = locator.parent(q);
    }
    uint32_t parent_path = q != kNone32 ? path_of_[q] : kNone32;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const StringId name_id = regions[*it].name;
      auto [pos, fresh] = by_parent_and_name.try_emplace((static_cast<uint64_t>(parent_path) << 32) | name_id,
                                                         static_cast<uint32_t>(path_.size()));
      if (fresh) {
        const std::string name(store.strings.get(name_id));
        const std::string shown = name.find(" > ") == std::string::npos ? name : "\"" + name + "\"";
        path_.push_back(parent_path == kNone32 ? shown : path_[parent_path] + " > " + shown);
        name_.push_back(name);
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

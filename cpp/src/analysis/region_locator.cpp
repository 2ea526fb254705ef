#include "fpgaprof/analysis/region_locator.hpp"

#include <algorithm>

namespace fpgaprof::analysis {

RegionLocator::RegionLocator(const std::vector<RegionRecord>& regions)
    : parents_(regions.size(), kNone32), ends_ns_(regions.size(), 0) {
  for (uint32_t i = 0; i < regions.size(); ++i) {
    ends_ns_[i] = regions[i].end_ns;
    by_thread_[regions[i].thread_id].push_back({regions[i].start_ns, regions[i].end_ns, i});
  }
  for (auto& [thread, list] : by_thread_) {
    // Outer regions first when starts tie, so the stack below nests them correctly.
    std::sort(list.begin(), list.end(), [](const Entry& a, const Entry& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
    });
    std::vector<const Entry*> open;
    for (const Entry& e : list) {
      // A region that ends where the next starts does not enclose it (as correlate() decides).
      while (!open.empty() && open.back()->end_ns <= e.start_ns) open.pop_back();
      const uint32_t given = regions[e.index].parent;
      parents_[e.index] = given != kNone32 && given < regions.size() ? given
                          : open.empty()                             ? kNone32
                                                                     : open.back()->index;
      open.push_back(&e);
    }
  }
}

uint32_t RegionLocator::innermost(uint32_t thread_id, uint64_t t_ns) const {
  const auto found = by_thread_.find(thread_id);
  if (found == by_thread_.end()) return kNone32;
  const auto& list = found->second;
  auto it = std::upper_bound(list.begin(), list.end(), t_ns, [](uint64_t t, const Entry& e) { return t < e.start_ns; });
  if (it == list.begin()) return kNone32;
  --it;
  // The last region started before t may have closed; its ancestors may still be open.
  uint32_t r = it->index;
  // Bounded walk: malformed parent links from a damaged file must not loop forever.
  for (std::size_t steps = 0; r != kNone32 && steps <= parents_.size(); ++steps) {
    if (ends_ns_[r] >= t_ns) return r;
    r = parents_[r];
  }
  return kNone32;
}

}  // namespace fpgaprof::analysis

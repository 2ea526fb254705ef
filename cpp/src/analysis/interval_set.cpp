#include "fpgaprof/analysis/interval_set.hpp"

#include <algorithm>

namespace fpgaprof::analysis {

IntervalSet IntervalSet::from(std::vector<std::pair<uint64_t, uint64_t>> intervals) {
  const auto by_start = [](const auto& a, const auto& b) { return a.first < b.first; };
  if (!std::is_sorted(intervals.begin(), intervals.end(), by_start))
    std::sort(intervals.begin(), intervals.end(), by_start);
  IntervalSet set;
  // Merge in place: the input vector becomes the output, so no second buffer is needed.
  std::size_t out = 0;
  for (const auto& iv : intervals) {
    if (iv.second <= iv.first) continue;
    if (out > 0 && iv.first <= intervals[out - 1].second) {
      intervals[out - 1].second = std::max(intervals[out - 1].second, iv.second);
    } else {
      intervals[out++] = iv;
    }
  }
  intervals.resize(out);
  intervals.shrink_to_fit();
  set.merged_ = std::move(intervals);
  for (const auto& iv : set.merged_) set.total_ns_ += iv.second - iv.first;
  return set;
}

uint64_t IntervalSet::overlap_ns(uint64_t start_ns, uint64_t end_ns) const {
  if (end_ns <= start_ns || merged_.empty()) return 0;
  // First interval that ends after start_ns.
  auto it = std::upper_bound(merged_.begin(), merged_.end(), start_ns,
                             [](uint64_t t, const auto& iv) { return t < iv.second; });
  uint64_t covered = 0;
  for (; it != merged_.end() && it->first < end_ns; ++it)
    covered += std::min(end_ns, it->second) - std::max(start_ns, it->first);
  return covered;
}

uint64_t IntervalSet::intersection_ns(const IntervalSet& other) const {
  uint64_t covered = 0;
  std::size_t i = 0, j = 0;
  const auto& a = merged_;
  const auto& b = other.merged_;
  while (i < a.size() && j < b.size()) {
    const uint64_t lo = std::max(a[i].first, b[j].first);
    const uint64_t hi = std::min(a[i].second, b[j].second);
    if (hi > lo) covered += hi - lo;
    if (a[i].second < b[j].second)
      ++i;
    else
      ++j;
  }
  return covered;
}

}  // namespace fpgaprof::analysis

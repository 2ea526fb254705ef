// IntervalSet: a sorted list of disjoint half-open [start_ns, end_ns) intervals (the union of
// the intervals it was built from), with total length and intersection queries. Owns its
// data; immutable after build; safe to share read-only between threads.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace fpgaprof::analysis {

class IntervalSet {
 public:
  IntervalSet() = default;
  // Union of `intervals` (pairs start_ns, end_ns; empty or inverted ones are skipped).
  // Sorts a copy unless the input is already sorted by start. O(n log n), O(n) when sorted.
  static IntervalSet from(std::vector<std::pair<uint64_t, uint64_t>> intervals);

  const std::vector<std::pair<uint64_t, uint64_t>>& intervals() const { return merged_; }
  uint64_t total_ns() const { return total_ns_; }
  bool empty() const { return merged_.empty(); }
  // Length of [start_ns, end_ns) covered by this set. O(log n + k), k = intervals touched.
  uint64_t overlap_ns(uint64_t start_ns, uint64_t end_ns) const;
  // Length covered by both sets. O(n + m).
  uint64_t intersection_ns(const IntervalSet& other) const;

 private:
  std::vector<std::pair<uint64_t, uint64_t>> merged_;
  uint64_t total_ns_ = 0;
};

}  // namespace fpgaprof::analysis

// RegionLocator: the innermost user region open on a thread at a given time, for records
// that correlate() does not place (sync records) and for inclusive region roll-ups.
// Built from TraceStore::regions (parent/depth as set by correlate(); when parent is unset the
// locator derives nesting itself from time containment per thread). Read-only after build;
// safe to share between threads. Keeps no reference to the store.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "fpgaprof/records.hpp"

namespace fpgaprof::analysis {

class RegionLocator {
 public:
  explicit RegionLocator(const std::vector<RegionRecord>& regions);
  // Index of the innermost region on `thread_id` with start_ns <= t_ns <= end_ns, or kNone32.
  uint32_t innermost(uint32_t thread_id, uint64_t t_ns) const;
  // Enclosing region of `region_index` (kNone32 for a root or an out-of-range index).
  uint32_t parent(uint32_t region_index) const {
    return region_index < parents_.size() ? parents_[region_index] : kNone32;
  }
  std::size_t size() const { return parents_.size(); }

 private:
  struct Entry {
    uint64_t start_ns;
    uint64_t end_ns;
    uint32_t index;
  };
  std::unordered_map<uint32_t, std::vector<Entry>> by_thread_;  // sorted by start_ns
  std::vector<uint32_t> parents_;
  std::vector<uint64_t> ends_ns_;
};

}  // namespace fpgaprof::analysis

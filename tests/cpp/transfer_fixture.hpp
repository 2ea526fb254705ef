// Lookups into a TransferReport shared by the transfer and region-path tests (Catch2 needed).
#pragma once

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>

#include "fpgaprof/analysis/transfer_analysis.hpp"

namespace fpgaprof::testing {

// The group of `kind` and `index`; fails the test when there is none.
inline const analysis::TransferGroup& group(const analysis::TransferReport& r, analysis::GroupKind kind,
                                            uint32_t index) {
  for (const auto& g : r.groups)
    if (g.kind == kind && g.index == index) return g;
  FAIL("group not found");
  return r.groups.front();
}

inline const analysis::TransferStats& dir(const analysis::TransferGroup& g, analysis::Direction d) {
  return g.by_direction[static_cast<std::size_t>(d)];
}

}  // namespace fpgaprof::testing

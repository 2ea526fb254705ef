// Parser for HLO text as XLA prints it (HloModule ... ENTRY ...).
// Throws fpgaprof::Error(kHloParse, "line L, column C: <what> near '<text>'") on unknown syntax;
// never crashes on any input. Thread-safe (no shared state).
#pragma once
#include <string_view>

#include "fpgaprof/hlo/hlo_module.hpp"

namespace fpgaprof::hlo {
Module parse_hlo_module(std::string_view text);
}  // namespace fpgaprof::hlo

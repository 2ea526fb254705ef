// Static cost model: fills Instruction::cost / pattern and Module::total. Rules in docs/cost-model.md.
#pragma once
#include "fpgaprof/hlo/hlo_module.hpp"

namespace fpgaprof::hlo {
void analyze_costs(Module& module);
// parse + analyze in one call
Module analyze_hlo(std::string_view text);
}  // namespace fpgaprof::hlo

// The energy analysis (analysis/energy_analysis.hpp) as the dict `_core.analysis.analyze`
// returns under "energy" (docs/energy.md), from its field tables (analysis/result_schema.hpp).
// Converts only.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <utility>
#include <vector>

#include "fpgaprof/analysis/energy_analysis.hpp"
#include "fpgaprof/analysis/result_schema.hpp"
#include "result_convert.hpp"

namespace fpgaprof::bindings {

namespace py = pybind11;

inline py::dict energy_dict(const analysis::EnergyReport& e, const analysis::TraceContext& ctx) {
  using namespace analysis;
  auto out = fields_dict(energy_fields(), e);
  out["devices"] = rows_list(energy_device_row_fields(), e.devices);
  // A window's row: energy_window's fields, then its path's or record's keys.
  const auto rows = [&](const std::vector<std::pair<uint32_t, EnergyWindow>>& windows, const auto& keys) {
    py::list list;
    for (const auto& [k, w] : windows) {
      auto r = fields_dict(energy_window_fields(), w);
      put_fields(r, keys, k, ctx);
      list.append(r);
    }
    return list;
  };
  out["region_paths"] = rows(e.region_paths, energy_path_keys_fields());
  out["regions"] = rows(e.regions, energy_instance_keys_fields());
  out["ops"] = rows_list(energy_op_row_fields(), e.ops, ctx);
  return out;
}

}  // namespace fpgaprof::bindings

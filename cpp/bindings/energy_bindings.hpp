// The energy analysis (analysis/energy_analysis.hpp) as the dict `_core.analysis.analyze`
// returns under "energy" (docs/energy.md), from its field tables (analysis/result_schema.hpp).
// Converts only.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "fpgaprof/analysis/energy_analysis.hpp"
#include "fpgaprof/analysis/region_paths.hpp"
#include "fpgaprof/analysis/result_schema.hpp"
#include "result_convert.hpp"

namespace fpgaprof::bindings {

namespace py = pybind11;

inline py::dict energy_dict(const analysis::EnergyReport& e, const analysis::RegionPaths& paths,
                            const analysis::TraceContext& ctx) {
  using namespace analysis;
  py::dict out = fields_dict(energy_fields(), e);
  py::list devices;
  for (const DeviceEnergy& d : e.devices) devices.append(fields_dict(energy_device_row_fields(), d));
  out["devices"] = devices;
  py::list path_rows;
  for (const auto& [p, w] : e.region_paths) {
    py::dict r = fields_dict(energy_window_fields(), w);
    r["path_index"] = p;
    r["region"] = paths.path(p);
    r["instances"] = paths.instances(p);
    path_rows.append(r);
  }
  out["region_paths"] = path_rows;
  py::list instance_rows;
  for (const auto& [i, w] : e.regions) {
    py::dict r = fields_dict(energy_window_fields(), w);
    r["region_index"] = i;
    const uint32_t p = paths.path_of(i);
    r["path_index"] = p == kNone32 ? py::object(py::none()) : py::object(py::int_(p));
    r["region"] = p == kNone32 ? std::string() : paths.path(p);
    instance_rows.append(r);
  }
  out["regions"] = instance_rows;
  py::list op_rows;
  for (const OpEnergy& o : e.ops) op_rows.append(fields_dict(energy_op_row_fields(), o, ctx));
  out["ops"] = op_rows;
  return out;
}

}  // namespace fpgaprof::bindings

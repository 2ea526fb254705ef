// The energy analysis (analysis/energy_analysis.hpp) as the dict `_core.analysis.analyze`
// returns under "energy" (docs/energy.md). Converts only.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "fpgaprof/analysis/energy_analysis.hpp"
#include "fpgaprof/analysis/op_inputs.hpp"
#include "fpgaprof/analysis/region_paths.hpp"
#include "fpgaprof/trace_store.hpp"

namespace fpgaprof::bindings {

namespace py = pybind11;

inline py::dict energy_window_dict(const analysis::EnergyWindow& w) {
  py::dict d;
  d["device_id"] = w.device_id;
  d["joules"] = w.joules;
  d["mean_w"] = w.mean_w;
  d["peak_w"] = w.peak_w;
  d["duration_ns"] = w.duration_ns;
  d["coverage_ns"] = w.coverage_ns;
  d["from_counter"] = w.from_counter;
  return d;
}

inline py::dict energy_dict(const analysis::EnergyReport& e, const analysis::RegionPaths& paths,
                            const analysis::OpInputs& ops) {
  py::dict out;
  out["measured"] = e.measured;
  out["sample_period_ns"] = e.sample_period_ns;
  out["update_period_ns"] = e.update_period_ns;
  out["total_joules"] = e.total_joules;
  out["unattributed_joules"] = e.unattributed_joules;
  out["copies_joules"] = e.copies_joules;
  out["idle_joules"] = e.idle_joules;
  py::list devices;
  for (const analysis::DeviceEnergy& d : e.devices) {
    py::dict r;
    r["device_id"] = d.device_id;
    r["samples"] = d.samples;
    r["first_ns"] = d.first_ns;
    r["last_ns"] = d.last_ns;
    r["joules"] = d.joules;
    r["mean_w"] = d.mean_w;
    r["peak_w"] = d.peak_w;
    r["idle_w"] = d.idle_w < 0 ? py::object(py::none()) : py::object(py::float_(d.idle_w));
    r["idle_ns"] = d.idle_ns;
    r["has_counter"] = d.has_counter;
    r["backwards_intervals"] = d.backwards_intervals;
    devices.append(r);
  }
  out["devices"] = devices;
  py::list path_rows;
  for (const auto& [p, w] : e.region_paths) {
    py::dict r = energy_window_dict(w);
    r["path_index"] = p;
    r["region"] = paths.path(p);
    r["instances"] = paths.instances(p);
    path_rows.append(r);
  }
  out["region_paths"] = path_rows;
  py::list instance_rows;
  for (const auto& [i, w] : e.regions) {
    py::dict r = energy_window_dict(w);
    r["region_index"] = i;
    const uint32_t p = paths.path_of(i);
    r["path_index"] = p == kNone32 ? py::object(py::none()) : py::object(py::int_(p));
    r["region"] = p == kNone32 ? std::string() : paths.path(p);
    instance_rows.append(r);
  }
  out["regions"] = instance_rows;
  py::list op_rows;
  for (const analysis::OpEnergy& o : e.ops) {
    py::dict r;
    r["op_index"] = o.op;
    const bool known = o.op < ops.ops.size();
    r["hlo_op"] = known ? ops.ops[o.op].name : std::string();
    r["module"] = known ? ops.ops[o.op].module : std::string();
    r["joules"] = o.joules;
    r["busy_ns"] = o.busy_ns;
    op_rows.append(r);
  }
  out["ops"] = op_rows;
  return out;
}

}  // namespace fpgaprof::bindings

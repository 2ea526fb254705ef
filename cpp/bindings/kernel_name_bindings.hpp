// Kernels by name (analysis::kernels_by_name, trace_analysis.hpp) alone, without the rest of the
// analysis: what prof.summary() shows when the analysis gave no result. Converts only.
#pragma once

#include <pybind11/pybind11.h>

#include <vector>

#include "fpgaprof/analysis/trace_analysis.hpp"
#include "fpgaprof/trace_store.hpp"

namespace fpgaprof::bindings {

namespace py = pybind11;

// _core.analysis.kernels_by_name(store): one (kernel, count, timed_count, total_ns, min_ns, max_ns) tuple per
// distinct kernel name, most time first, ties by name; the values of analyze()'s
// "kernels_by_name".
inline void bind_kernels_by_name(py::module_& analysis_module) {
  analysis_module.def(
      "kernels_by_name",
      [](const TraceStore& store) {
        std::vector<analysis::KernelNameStats> stats;
        {
          py::gil_scoped_release nogil;
          stats = analysis::kernels_by_name(store);
        }
        py::list out;
        for (const analysis::KernelNameStats& k : stats) {
          out.append(py::make_tuple(store.strings.get(k.name), k.count, k.timed_count, k.total_ns, k.min_ns, k.max_ns));
        }
        return out;
      },
      py::arg("store"),
      "Per distinct kernel name: (kernel, count, timed_count, total_ns, min_ns, max_ns), most time first, ties by "
      "name (the values of analyze()'s kernels_by_name).");
}

}  // namespace fpgaprof::bindings

// fpgaprof._core: the one pybind11 bindings file. Thin: it converts types and errors and
// releases the GIL around long work. Sections are owned by their layer; keep them apart.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "fpgaprof/error.hpp"
#include "fpgaprof/records.hpp"
#include "fpgaprof/trace_store.hpp"
#include "fpgaprof/version.hpp"

namespace py = pybind11;
using namespace fpgaprof;

PYBIND11_MODULE(_core, m) {
  m.doc() = "fpgaprof C++ core (private; use the fpgaprof package)";
  m.attr("__version__") = version();

  // === errors ===
  // Python exception classes live in fpgaprof.errors; the package registers them here at
  // import (set_error_classes) so C++ errors surface as those types.

  // === core: records and store ===

  // === capture (cupti) ===

  // === hlo ===

  // === analysis ===
}

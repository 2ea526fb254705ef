// fpgaprof._core: the pybind11 module. Thin: it converts types and errors and releases the GIL
// around long work. Each section is owned by its layer and bound from its own file:
// core_bindings.hpp (errors, store, capture), hlo_bindings.hpp, attribution_bindings.hpp,
// analysis_bindings.hpp (results, through result_convert.hpp's field tables); the cards
// (FPGA targets to and from dicts) are bound here.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "analysis_bindings.hpp"
#include "attribution_bindings.hpp"
#include "core_bindings.hpp"  // errors, store, capture sections
#include "fpgaprof/analysis/ceilings.hpp"
#include "fpgaprof/analysis/fpga_model.hpp"
#include "fpgaprof/error.hpp"
#include "fpgaprof/version.hpp"
#include "hlo_bindings.hpp"
#include "kernel_name_bindings.hpp"

namespace py = pybind11;
using namespace fpgaprof;

namespace {

// The UTF-8 text of a Python str; one holding a lone surrogate (which UTF-8 cannot encode)
// raises InvalidArgumentError naming `what`, not pybind's UnicodeEncodeError.
std::string utf8_text(const py::handle s, const std::string& what) {
  Py_ssize_t n = 0;
  const char* p = PyUnicode_AsUTF8AndSize(s.ptr(), &n);
  if (p == nullptr) {
    PyErr_Clear();
    throw Error(ErrorKind::kInvalidArgument,
                what + " is not text UTF-8 can hold (it has a lone surrogate): give plain text");
  }
  return std::string(p, static_cast<std::size_t>(n));
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "fpgaprof C++ core (private; use the fpgaprof package)";
  m.attr("__version__") = version();

  // === errors ===
  // Python exception classes live in fpgaprof.errors; fpgaprof::Error kinds map to them
  // (core_bindings.hpp: python_error_class).
  bindings::bind_errors(m);

  // === core: records and store ===
  bindings::bind_store(m);  // TraceStore, record tables, trace file, correlate

  // === capture (cupti) ===
  bindings::bind_capture(m);  // CaptureSession, probe_cupti, regions, clocks, library_path

  // === hlo ===
  bindings::bind_hlo(m);

  // === analysis ===
  bindings::bind_attribution(m);
  // -- cards (FPGA targets as dicts), then every analysis result --
  {
    using namespace fpgaprof::analysis;
    auto r = m.def_submodule("analysis", "transfers, device memory, ceilings, roofline, FPGA model");
    bindings::bind_kernels_by_name(r);
    // A card as a dict: card_to_fields, the FPGA model's table of the card (every field, a
    // calibrated one with its ends, the derived rates), key by key.
    const auto target_dict = [](const FpgaTarget& t) {
      py::dict d;
      for (const CardOutput& f : card_to_fields(t)) {
        if (f.kind == CardFieldKind::kText)
          d[f.name.c_str()] = f.text;
        else if (f.kind == CardFieldKind::kWhole)
          d[f.name.c_str()] = f.whole;
        else
          d[f.name.c_str()] = f.number;
      }
      return d;
    };
    // A user card from a dict: its items converted to CardFields (text, a number, a number beyond
    // a double, or another type by name) for card_from_fields, which checks, completes and
    // validates the card (InvalidArgumentError naming the field).
    const auto target_from = [](const py::dict& d) {
      CardFields fields;
      for (const auto& item : d) {
        const std::string k = utf8_text(py::str(item.first), "an FPGA target field name");
        const py::handle v = item.second;
        CardValue cv;
        cv.shown = std::string(py::str(py::type::of(v).attr("__name__")));
        if (py::isinstance<py::str>(v)) {
          cv.kind = CardValue::Kind::kText;
          cv.text = utf8_text(v, "FPGA target field '" + k + "'");
        } else if (!py::isinstance<py::bool_>(v) && (py::isinstance<py::float_>(v) || py::isinstance<py::int_>(v))) {
          try {
            cv.shown = utf8_text(py::repr(v), "a value");
          } catch (const py::error_already_set&) {  // repr of an int of over 4,300 digits raises
            cv.shown = "a number too long to print";
          }
          cv.number = PyFloat_AsDouble(v.ptr());
          cv.kind = CardValue::Kind::kNumber;
          if (cv.number == -1.0 && PyErr_Occurred() != nullptr) {  // an int beyond a double (10**400)
            PyErr_Clear();
            cv.kind = CardValue::Kind::kTooLarge;
          }
        }
        fields.emplace_back(k, std::move(cv));
      }
      return card_from_fields(fields);
    };
    r.def("fpga_presets", [target_dict]() {
      py::list out;
      for (const FpgaTarget& t : fpga_presets()) out.append(target_dict(t));
      return out;
    });
    // A card as the FPGA model sees it: a preset name or a user dict, validated
    // (InvalidArgumentError naming the field), with its FLOP/s per precision.
    r.def(
        "fpga_target",
        [=](py::object target_obj) {
          const FpgaTarget t = py::isinstance<py::str>(target_obj) ? fpga_preset(target_obj.cast<std::string>())
                                                                   : target_from(target_obj.cast<py::dict>());
          validate_fpga_target(t);
          return target_dict(t);
        },
        py::arg("target"));
    bindings::bind_analysis(r, target_dict, target_from);
  }
}

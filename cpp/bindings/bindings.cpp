// fpgaprof._core: the pybind11 module. Thin: it converts types and errors and releases the GIL
// around long work. Each section is owned by its layer and bound from its own file:
// core_bindings.hpp (errors, store, capture), hlo_bindings.hpp, attribution_bindings.hpp,
// analysis_bindings.hpp (results, through result_convert.hpp's field tables); the cards (a
// card from a preset name or a dict, the card field table) are bound here.
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
    // A user card from a dict: its items converted to CardFields (text, a number, a number beyond
    // a double, or another type by name) for card_from_fields, which checks, completes and
    // validates the card (InvalidArgumentError naming the field).
    const auto target_from = [](const py::handle& d) {
      CardFields fields;
      for (const auto& item : py::reinterpret_borrow<py::dict>(d)) {
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
    // A card from Python: a preset name, else a dict (anything else: InvalidArgumentError).
    const bindings::TargetOf target_of = [target_from](const py::handle& obj) {
      if (py::isinstance<py::str>(obj)) return fpga_preset(obj.cast<std::string>());
      if (!py::isinstance<py::dict>(obj))
        throw Error(ErrorKind::kInvalidArgument, "an FPGA target is a preset name or a dict of card fields, not " +
                                                     std::string(py::str(py::type::of(obj).attr("__name__"))));
      return target_from(obj);
    };
    r.def(
        "card_fields",
        [] { return bindings::typed_list<"CardField">(bindings::rows_list(card_field_fields(), card_fields())); },
        "The card field table: every field a card has (the card_field table).");
    r.def("card_input_names", &card_input_names,
          "The names a card takes (FpgaTarget's fields): base, the fields that are not derived (a "
          "calibrated one with _low and _high), memory_bytes_per_s, the earlier names.");
    r.def("fpga_presets", [] {
      py::list out;
      for (const FpgaTarget& t : fpga_presets()) out.append(bindings::card_object(t));
      return out;
    });
    // A card as the FPGA model sees it: a preset name or a user dict, validated
    // (InvalidArgumentError naming the field), with its FLOP/s per precision.
    r.def(
        "fpga_target",
        [=](py::object target_obj) {
          const FpgaTarget t = target_of(target_obj);
          validate_fpga_target(t);
          return bindings::card_object(t);
        },
        py::arg("target"));
    bindings::bind_analysis(r, target_of);
  }
}

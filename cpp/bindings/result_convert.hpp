// The one converter of analysis result rows: a row becomes a Python dict from its field table
// (analysis/result_schema.hpp) alone, and the tables themselves are exposed to Python as
// fpgaprof._core.analysis.result_fields(<table>) / result_tables(). Converts only.
#pragma once

#include <cmath>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <variant>

#include "fpgaprof/analysis/result_schema.hpp"
#include "fpgaprof/error.hpp"

namespace fpgaprof::bindings {

namespace py = pybind11;

inline py::object field_value(const analysis::FieldValue& v) {
  // One overload per alternative (exact types: a pointer must not fall to the bool one).
  struct Visit {
    py::object operator()(std::monostate) const { return py::none(); }
    py::object operator()(bool b) const { return py::bool_(b); }
    py::object operator()(int64_t i) const { return py::int_(i); }
    py::object operator()(uint64_t u) const { return py::int_(u); }
    py::object operator()(double d) const { return py::float_(d); }
    py::object operator()(const std::string& s) const { return py::str(s); }
    py::object operator()(const std::vector<std::string>* l) const { return py::cast(*l); }
    py::object operator()(const std::vector<uint64_t>* l) const { return py::cast(*l); }
  };
  return std::visit(Visit{}, v);
}

// A field's name as a dict key: the interpreter's interned str, one object that every row's
// dict shares (a str made per row and key costs ~60 bytes each: ~2 KB a row of 35 fields).
inline py::str field_key(const std::string& name) {
  PyObject* key = PyUnicode_InternFromString(name.c_str());
  if (key == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(key);
}

// A field's value as put_fields stores it: as field_value, but a short string is the
// interpreter's interned str and 0.0 and 1.0 one shared float each (the rows of a large table,
// e.g. an estimate's 10^6 ops, repeat their computation, opcode, pattern, precision, labels
// and notes in every row: one object each, not one per row). Equal values either way.
inline py::object row_value(const analysis::FieldValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) {
    if (s->size() <= 64) {
      PyObject* o = PyUnicode_FromStringAndSize(s->data(), static_cast<Py_ssize_t>(s->size()));
      if (o == nullptr) throw py::error_already_set();
      PyUnicode_InternInPlace(&o);
      return py::reinterpret_steal<py::object>(o);
    }
  } else if (const auto* d = std::get_if<double>(&v)) {
    static PyObject* const zero = PyFloat_FromDouble(0.0);  // held for the interpreter's life
    static PyObject* const one = PyFloat_FromDouble(1.0);
    if (*d == 0.0 && !std::signbit(*d) && zero != nullptr) return py::reinterpret_borrow<py::object>(zero);
    if (*d == 1.0 && one != nullptr) return py::reinterpret_borrow<py::object>(one);
  }
  return field_value(v);
}

// Writes `row`'s fields into `d` in the table's order (a range as its nominal, low and high).
template <class Row, class Ctx>
void put_fields(py::dict& d, const analysis::ResultTable<Row, Ctx>& table, const Row& row, const Ctx& ctx = {}) {
  for (const auto& f : table) {
    if (f.present != nullptr && !f.present(row, ctx)) continue;
    if (f.info.range) {
      const analysis::TimeRange r = f.get_range(row, ctx);
      if (f.info.nullable && std::isnan(r.nominal)) {  // a nullable range without a value: null
        d[field_key(f.info.name)] = py::none();
        d[field_key(f.info.low_name)] = py::none();
        d[field_key(f.info.high_name)] = py::none();
        continue;
      }
      d[field_key(f.info.name)] = r.nominal;
      d[field_key(f.info.low_name)] = r.low;
      d[field_key(f.info.high_name)] = r.high;
    } else {
      d[field_key(f.info.name)] = row_value(f.get(row, ctx));
    }
  }
}

template <class Row, class Ctx>
py::dict fields_dict(const analysis::ResultTable<Row, Ctx>& table, const Row& row, const Ctx& ctx = {}) {
  py::dict d;
  put_fields(d, table, row, ctx);
  return d;
}

// fpgaprof._core.analysis.ResultField, result_fields(name), result_tables().
inline void bind_result_fields(py::module_& r) {
  using analysis::FieldInfo;
  py::class_<FieldInfo>(r, "ResultField", "One field of an analysis result row (analysis/result_schema.hpp)")
      .def_readonly("name", &FieldInfo::name)
      .def_readonly("low_name", &FieldInfo::low_name)
      .def_readonly("high_name", &FieldInfo::high_name)
      .def_property_readonly("type", [](const FieldInfo& f) { return std::string(analysis::value_type_name(f.type)); })
      .def_readonly("nullable", &FieldInfo::nullable)
      .def_readonly("range", &FieldInfo::range)
      .def_property_readonly("unit", [](const FieldInfo& f) { return std::string(f.unit); })
      .def_property_readonly("only_when", [](const FieldInfo& f) { return std::string(f.only_when); })
      .def_property_readonly("description", [](const FieldInfo& f) { return std::string(f.description); })
      .def_property_readonly("names",
                             [](const FieldInfo& f) {
                               return f.range ? std::vector<std::string>{f.name, f.low_name, f.high_name}
                                              : std::vector<std::string>{f.name};
                             })
      .def("__repr__", [](const FieldInfo& f) { return "<ResultField " + f.name + ">"; });
  r.def(
      "result_tables",
      [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (const analysis::ResultTableInfo& t : analysis::result_tables()) out.emplace_back(t.name, t.description);
        return out;
      },
      "(name, description) of every analysis result table, for result_fields(name).");
  r.def(
      "result_fields",
      [](const std::string& name) {
        std::string message = "unknown result table '";
        message.append(name).append("': use one of ");
        const char* sep = "";
        for (const analysis::ResultTableInfo& t : analysis::result_tables()) {
          if (name == t.name) return t.fields;
          message.append(sep).append(t.name);
          sep = ", ";
        }
        throw Error(ErrorKind::kInvalidArgument, message);
      },
      py::arg("table"), "The fields of one analysis result table, in the order its rows have them.");
}

}  // namespace fpgaprof::bindings

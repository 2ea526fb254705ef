// The one converter of analysis result rows: a row becomes a Python dict from its field table
// (analysis/result_schema.hpp) alone, and the tables themselves are exposed to Python as
// fpgaprof._core.analysis.result_fields(<table>) / result_tables(). Converts only.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/typing.h>

#include <cmath>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "capture_tables.hpp"
#include "fpgaprof/analysis/result_schema.hpp"
#include "fpgaprof/error.hpp"

namespace fpgaprof::bindings {

namespace py = pybind11;

// A dict whose type in the signatures, and so in the stubs (scripts/gen_stubs.sh), is the
// TypedDict of its table in fpgaprof.base.result_rows (generated from the same tables by
// scripts/gen_result_fields.py): TypedRow<"TraceAnalysis"> for the trace_analysis table.
template <py::typing::StringLiteral Name>
class TypedRow : public py::dict {
  PYBIND11_OBJECT_DEFAULT(TypedRow, py::dict, PyDict_Check)
};
template <py::typing::StringLiteral Name>
TypedRow<Name> typed(py::dict d) {
  return py::reinterpret_steal<TypedRow<Name>>(d.release());
}
template <py::typing::StringLiteral Name>
using TypedRows = py::typing::List<TypedRow<Name>>;
template <py::typing::StringLiteral Name>
TypedRows<Name> typed_list(py::list l) {
  return py::reinterpret_steal<TypedRows<Name>>(l.release());
}

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
    py::object operator()(const std::vector<int64_t>* l) const { return py::cast(*l); }
    py::object operator()(const std::vector<double>* l) const { return py::cast(*l); }
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

// A field's value as the writer stores it: as field_value, but a short string is the
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

// The Python side of analysis::ResultWriter: builds dicts and lists as a table's fields and
// nested values are written (into `root` when given, else into a new top-level value).
class PyWriter final : public analysis::ResultWriter {
 public:
  PyWriter() = default;
  explicit PyWriter(py::object root) { stack_.push_back({std::move(root), false}); }
  void key(const std::string& name) override { key_ = field_key(name); }
  void value(const analysis::FieldValue& v) override { put(row_value(v)); }
  void begin_object() override { open(py::dict(), false); }
  void end_object() override { stack_.pop_back(); }
  void begin_list() override { open(py::list(), true); }
  void end_list() override { stack_.pop_back(); }
  // The value written at the top level (begin_object ... end_object without a root).
  py::object result() const { return result_; }

 private:
  struct Open {
    py::object container;
    bool list;
  };
  void put(py::object o) {
    if (stack_.empty())
      result_ = std::move(o);
    else if (stack_.back().list)
      py::reinterpret_borrow<py::list>(stack_.back().container).append(std::move(o));
    else
      stack_.back().container[key_] = std::move(o);
  }
  void open(py::object container, bool list) {
    put(container);
    stack_.push_back({std::move(container), list});
  }
  std::vector<Open> stack_;
  py::str key_;
  py::object result_ = py::none();
};

// Writes `row`'s fields into `d` in the table's order (analysis::write_fields).
template <class Row, class Ctx>
void put_fields(py::dict& d, const analysis::ResultTable<Row, Ctx>& table, const Row& row, const Ctx& ctx = {}) {
  PyWriter w(d);
  analysis::write_fields(table, row, ctx, w);
}

// A row as a new dict.
template <class Row, class Ctx>
py::dict fields_dict(const analysis::ResultTable<Row, Ctx>& table, const Row& row, const Ctx& ctx = {}) {
  py::dict d;
  put_fields(d, table, row, ctx);
  return d;
}

// Rows as a list of dicts.
template <class Row, class Ctx, class Rows>
py::list rows_list(const analysis::ResultTable<Row, Ctx>& table, const Rows& rows, const Ctx& ctx = {}) {
  PyWriter w;
  analysis::write_rows(table, rows, ctx, w);
  return py::reinterpret_borrow<py::list>(w.result());
}

// What a writer function writes (analysis::write_card, ...) as a Python value.
template <class F>
py::object written(const F& write) {
  PyWriter w;
  write(w);
  return w.result();
}

// A card as a dict (analysis::write_card: card_to_fields, key by key).
inline py::dict card_object(const analysis::FpgaTarget& t) {
  return py::reinterpret_borrow<py::dict>(written([&](analysis::ResultWriter& w) { analysis::write_card(t, w); }));
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
  // The analysis' tables, then the capture layer's (capture_tables.hpp).
  static const std::vector<analysis::ResultTableInfo> tables = [] {
    std::vector<analysis::ResultTableInfo> v = analysis::result_tables();
    for (analysis::ResultTableInfo& t : capture_result_tables()) v.push_back(std::move(t));
    return v;
  }();
  r.def(
      "result_tables",
      [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (const analysis::ResultTableInfo& t : tables) out.emplace_back(t.name, t.description);
        return out;
      },
      "(name, description) of every analysis result table, for result_fields(name).");
  r.def(
      "result_fields",
      [](const std::string& name) {
        std::string message = "unknown result table '";
        message.append(name).append("': use one of ");
        const char* sep = "";
        for (const analysis::ResultTableInfo& t : tables) {
          if (name == t.name) return t.fields;
          message.append(sep).append(t.name);
          sep = ", ";
        }
        throw Error(ErrorKind::kInvalidArgument, message);
      },
      py::arg("table"), "The fields of one analysis result table, in the order its rows have them.");
}

}  // namespace fpgaprof::bindings

namespace pybind11::detail {
template <typing::StringLiteral Name>
struct handle_type_name<fpgaprof::bindings::TypedRow<Name>> {
  static constexpr auto name = const_name("fpgaprof.base.result_rows.") + const_name(Name.name);
};
}  // namespace pybind11::detail

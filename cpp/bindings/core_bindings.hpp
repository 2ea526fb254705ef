// Bindings of the errors, the trace store with its record tables, the trace file and capture
// (included once, by bindings.cpp; its sections `errors`, `core: records and store` and
// `capture (cupti)` call the three functions at the end).
//
// Record tables are driven by record_schema.hpp: every field of every record type becomes an
// attribute of the row objects and a numpy column, with string ids resolved to str and enum
// values to their names (`copy_kind` -> "HtoD"); `<field>_id` keeps a string field's raw id.
// A table holds a shared_ptr to its store, so rows and tables stay valid after the Profile
// that made them is gone.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "capture_tables.hpp"
#include "fpgaprof/correlate.hpp"
#include "fpgaprof/cupti/capture.hpp"
#include "fpgaprof/error.hpp"
#include "fpgaprof/hlo/buffer_assignment.hpp"
#include "fpgaprof/hlo/hlo_parser.hpp"
#include "fpgaprof/record_schema.hpp"
#include "fpgaprof/trace_file.hpp"
#include "fpgaprof/trace_store.hpp"
#include "result_convert.hpp"

namespace fpgaprof::bindings {

namespace py = pybind11;

// ---- errors ---------------------------------------------------------------------------

inline const char* python_error_class(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument: return "InvalidArgumentError";
    case ErrorKind::kCuptiUnavailable: return "CuptiUnavailableError";
    case ErrorKind::kProfilerConflict: return "ProfilerConflictError";
    case ErrorKind::kTraceFormat: return "TraceFormatError";
    case ErrorKind::kHloParse: return "HloParseError";
    case ErrorKind::kIo: return "FpgaprofIOError";
    case ErrorKind::kState: return "ProfilerConflictError";  // nested trace, stop twice
    case ErrorKind::kCounters: return "CountersError";
    case ErrorKind::kInternal: break;
  }
  return "FpgaprofError";
}

// Text for Python from bytes the core did not check (an error message naming a path or a name
// read from a file): what is not UTF-8 is shown as \xNN instead of failing the conversion with
// a UnicodeDecodeError in place of the real error.
inline py::str lenient_str(const std::string& text) {
  PyObject* s = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace");
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

// Raises fpgaprof.HloParseError with .line, .column and .text (the one place HLO parse
// errors cross into Python).
[[noreturn]] inline void raise_hlo_parse_error(const hlo::HloParseError& e) {
  py::object cls = py::module_::import("fpgaprof.errors").attr("HloParseError");
  py::object exc = cls(lenient_str(e.what()));
  exc.attr("line") = e.line();
  exc.attr("column") = e.column();
  exc.attr("text") = lenient_str(e.found());
  PyErr_SetObject(cls.ptr(), exc.ptr());
  throw py::error_already_set();
}

// Read options that stop a long read on Ctrl-C (or any signal whose Python handler raises):
// the handler's exception leaves the call as it would from Python code.
inline ReadOptions interruptible_read() {
  ReadOptions options;
  options.poll = [] {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  };
  return options;
}

inline void bind_errors(py::module_& m) {
  // The classes live in fpgaprof.errors (pure Python, so users can catch them without the
  // extension); looked up when an error crosses, with the GIL held.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      py::object cls;
      try {
        cls = py::module_::import("fpgaprof.errors").attr(python_error_class(e.kind()));
      } catch (py::error_already_set&) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
        return;
      }
      PyErr_SetObject(cls.ptr(), lenient_str(e.what()).ptr());
    }
  });
  m.def(
      "_raise_error",
      [](const std::string& kind, const std::string& message) {
        // For tests of the translation: raises Error(kind, message) from C++.
        static const std::pair<const char*, ErrorKind> kinds[] = {{"internal", ErrorKind::kInternal},
                                                                  {"invalid_argument", ErrorKind::kInvalidArgument},
                                                                  {"cupti_unavailable", ErrorKind::kCuptiUnavailable},
                                                                  {"profiler_conflict", ErrorKind::kProfilerConflict},
                                                                  {"trace_format", ErrorKind::kTraceFormat},
                                                                  {"hlo_parse", ErrorKind::kHloParse},
                                                                  {"io", ErrorKind::kIo},
                                                                  {"state", ErrorKind::kState},
                                                                  {"counters", ErrorKind::kCounters}};
        for (const auto& [name, k] : kinds) {
          if (kind == name) throw Error(k, message);
        }
        throw Error(ErrorKind::kInvalidArgument, "unknown error kind '" + kind + "'");
      },
      py::arg("kind"), py::arg("message"));
}

// ---- records and tables ---------------------------------------------------------------

using StorePtr = std::shared_ptr<TraceStore>;

// One record of one table: the store and an index (records are never removed).
template <class R>
struct Row {
  StorePtr store;
  std::vector<R> TraceStore::*member;
  std::size_t index;
  const R& get() const { return ((*store).*member)[index]; }
};

template <class R>
struct Table {
  StorePtr store;
  TableSpec<R> spec;
  const std::vector<R>& rows() const { return (*store).*(spec.member); }
};

template <class R>
struct TableIterator {
  Table<R> table;
  std::size_t next = 0;
};

// Fields of another table that a record reaches through an index and shows as its own: a
// kernel shows its launch configuration's grid_x ... graph_node_id, which the store keeps once
// per distinct configuration (TraceStore::launch_configs). Reading resolves the index (an
// all-zero configuration when there is none); append() interns.
template <class R>
struct Joined {
  static constexpr bool kPresent = false;
  struct Target {};
};
template <>
struct Joined<KernelRecord> {
  static constexpr bool kPresent = true;
  using Target = LaunchConfig;
  static constexpr const char* kIndexField = "launch_config";
  static std::span<const FieldSpec<LaunchConfig>> fields() { return fields_of<LaunchConfig>(); }
  static const LaunchConfig& of(const TraceStore& s, const KernelRecord& k) { return s.launch_config_of(k); }
  static void assign(TraceStore& s, KernelRecord& k, const LaunchConfig& c) {
    k.launch_config = s.intern_launch_config(c);
  }
};

template <>
struct Joined<ApiRecord> {
  static constexpr bool kPresent = true;
  using Target = ApiFunction;
  static constexpr const char* kIndexField = "function";
  static std::span<const FieldSpec<ApiFunction>> fields() { return fields_of<ApiFunction>(); }
  static const ApiFunction& of(const TraceStore& s, const ApiRecord& a) { return s.api_function_of(a); }
  static void assign(TraceStore& s, ApiRecord& a, const ApiFunction& f) { a.function = s.intern_api_function(f); }
};

template <class R>
py::object field_value(const TraceStore& s, const FieldSpec<R>& f, const R& r) {
  const uint64_t v = f.get(r);
  switch (f.type) {
    case FieldType::kString: return py::str(s.strings.get(static_cast<StringId>(v)));
    case FieldType::kEnum: return py::str(v < f.enum_names.size() ? f.enum_names[v] : "invalid");
    case FieldType::kBool: return py::bool_(v != 0);
    case FieldType::kF64: return py::float_(std::bit_cast<double>(v));
    default: return py::int_(v);
  }
}

template <class R>
py::dict row_dict(const Row<R>& row, std::span<const FieldSpec<R>> fields) {
  py::dict d;
  for (const FieldSpec<R>& f : fields) d[f.name] = field_value(*row.store, f, row.get());
  if constexpr (Joined<R>::kPresent) {
    const auto& target = Joined<R>::of(*row.store, row.get());
    for (const auto& f : Joined<R>::fields()) d[f.name] = field_value(*row.store, f, target);
  }
  return d;
}

template <class T>
py::array numeric_column(std::size_t n, const auto& fill) {
  py::array_t<T> a(static_cast<py::ssize_t>(n));
  T* out = a.mutable_data();
  for (std::size_t i = 0; i < n; ++i) out[i] = fill(i);
  return a;
}

// An object array whose entries are `values[index(i)]` (each Python string made once).
inline py::array object_column(std::size_t n, const std::vector<py::object>& values, const auto& index) {
  py::array a(py::dtype("object"), {static_cast<py::ssize_t>(n)}, {});
  auto** out = static_cast<PyObject**>(a.mutable_data());
  for (std::size_t i = 0; i < n; ++i) {
    PyObject* o = values[index(i)].ptr();
    Py_INCREF(o);
    Py_XDECREF(out[i]);
    out[i] = o;
  }
  return a;
}

// Column of field `f` over records row_at(0) .. row_at(n - 1).
template <class R, class RowAt>
py::array column_of(const TraceStore& s, std::size_t n, const RowAt& row_at, const FieldSpec<R>& f) {
  auto raw = [&](std::size_t i) { return f.get(row_at(i)); };
  switch (f.type) {
    case FieldType::kU64: return numeric_column<uint64_t>(n, raw);
    case FieldType::kU32:
      return numeric_column<uint32_t>(n, [&](std::size_t i) { return static_cast<uint32_t>(raw(i)); });
    case FieldType::kU16:
      return numeric_column<uint16_t>(n, [&](std::size_t i) { return static_cast<uint16_t>(raw(i)); });
    case FieldType::kU8: return numeric_column<uint8_t>(n, [&](std::size_t i) { return static_cast<uint8_t>(raw(i)); });
    case FieldType::kBool: return numeric_column<bool>(n, [&](std::size_t i) { return raw(i) != 0; });
    case FieldType::kF64:
      return numeric_column<double>(n, [&](std::size_t i) { return std::bit_cast<double>(raw(i)); });
    case FieldType::kEnum: {
      std::vector<py::object> names;
      for (const char* name : f.enum_names) names.push_back(py::str(name));
      names.push_back(py::str("invalid"));
      const std::size_t last = names.size() - 1;
      return object_column(n, names, [&](std::size_t i) { return std::min<std::size_t>(raw(i), last); });
    }
    case FieldType::kString: {
      // Strings used by this column only, made into Python objects once each.
      std::vector<py::object> cache(s.strings.size());
      for (std::size_t i = 0; i < n; ++i) {
        const auto id = static_cast<StringId>(raw(i));
        if (!cache[id]) cache[id] = py::str(s.strings.get(id));
      }
      return object_column(n, cache, [&](std::size_t i) { return static_cast<std::size_t>(raw(i)); });
    }
  }
  throw Error(ErrorKind::kInternal, "unknown field type");
}

template <class R>
py::array column(const TraceStore& s, const std::vector<R>& rows, const FieldSpec<R>& f) {
  return column_of(
      s, rows.size(), [&](std::size_t i) -> const R& { return rows[i]; }, f);
}

// Column of a joined field (see Joined) over every record of `rows`.
template <class R>
py::array joined_column(const TraceStore& s, const std::vector<R>& rows,
                        const FieldSpec<typename Joined<R>::Target>& f) {
  return column_of(
      s, rows.size(), [&](std::size_t i) -> const typename Joined<R>::Target& { return Joined<R>::of(s, rows[i]); }, f);
}

template <class R>
const FieldSpec<R>* find_field(std::span<const FieldSpec<R>> fields, std::string_view name) {
  for (const FieldSpec<R>& f : fields) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

// Sets one field from a Python value: ints (range-checked), bools, floats, str for string
// fields (interned) and enum fields (by name, or the int value).
template <class R>
void set_field_checked(TraceStore& s, const FieldSpec<R>& f, R& r, const py::handle& value);

template <class R>
void set_field(TraceStore& s, const FieldSpec<R>& f, R& r, const py::handle& value) {
  try {
    set_field_checked(s, f, r, value);
  } catch (const py::cast_error&) {
    throw Error(ErrorKind::kInvalidArgument, std::string(f.name) + ": cannot take a value of type " +
                                                 std::string(py::str(py::type::handle_of(value).attr("__name__"))));
  }
}

template <class R>
void set_field_checked(TraceStore& s, const FieldSpec<R>& f, R& r, const py::handle& value) {
  uint64_t v = 0;
  if (f.type == FieldType::kString) {
    if (py::isinstance<py::str>(value)) {
      v = s.strings.intern(value.cast<std::string>());
    } else {
      v = value.cast<uint64_t>();
      if (v >= s.strings.size())
        throw Error(ErrorKind::kInvalidArgument, std::string(f.name) + ": string id out of range");
    }
  } else if (f.type == FieldType::kEnum && py::isinstance<py::str>(value)) {
    const std::string name = value.cast<std::string>();
    std::size_t k = 0;
    while (k < f.enum_names.size() && name != f.enum_names[k]) ++k;
    if (k == f.enum_names.size())
      throw Error(ErrorKind::kInvalidArgument, std::string(f.name) + ": unknown value '" + name + "'");
    v = k;
  } else if (f.type == FieldType::kF64) {
    v = std::bit_cast<uint64_t>(value.cast<double>());
  } else if (f.type == FieldType::kBool) {
    v = value.cast<bool>() ? 1 : 0;
  } else {
    v = value.cast<uint64_t>();
  }
  if (v > f.max_value) {
    throw Error(ErrorKind::kInvalidArgument, std::string(f.name) + " = " + std::to_string(v) +
                                                 " is out of range (max " + std::to_string(f.max_value) + ")");
  }
  f.set(r, v);
}

template <class R>
void bind_table(py::module_& m, py::class_<TraceStore, StorePtr>& store_cls, const TableSpec<R>& spec,
                const std::string& row_name) {
  using RowT = Row<R>;
  using TableT = Table<R>;
  py::class_<RowT> row(m, row_name.c_str());
  for (const FieldSpec<R>& f : spec.fields) {
    const FieldSpec<R>* fp = &f;  // the schema is static
    row.def_property_readonly(f.name, [fp](const RowT& r) { return field_value(*r.store, *fp, r.get()); });
    if (f.type == FieldType::kString) {
      row.def_property_readonly((std::string(f.name) + "_id").c_str(),
                                [fp](const RowT& r) { return fp->get(r.get()); });
    }
  }
  if constexpr (Joined<R>::kPresent) {
    for (const auto& f : Joined<R>::fields()) {
      const auto* fp = &f;
      row.def_property_readonly(
          f.name, [fp](const RowT& r) { return field_value(*r.store, *fp, Joined<R>::of(*r.store, r.get())); });
    }
  }
  if constexpr (requires(const R& r) { r.duration_ns(); }) {
    row.def_property_readonly("duration_ns", [](const RowT& r) { return r.get().duration_ns(); });
  }
  row.def_property_readonly("index", [](const RowT& r) { return r.index; });
  row.def(
      "to_dict", [spec](const RowT& r) { return row_dict(r, spec.fields); },
      "Every field as a dict (strings resolved, enums as names).");
  row.def("__eq__",
          [spec](const RowT& a, const RowT& b) { return row_dict(a, spec.fields).equal(row_dict(b, spec.fields)); });
  row.def("__repr__", [spec, row_name](const RowT& r) {
    std::string out = row_name + "(";
    bool first = true;
    for (const auto& [key, value] : row_dict(r, spec.fields)) {
      if (!first) out.append(", ");
      out.append(std::string(py::str(key))).append("=").append(std::string(py::str(py::repr(value))));
      first = false;
    }
    return out + ")";
  });

  const std::string table_name = row_name.substr(0, row_name.size() - 6) + "Table";  // KernelRecord -> KernelTable
  py::class_<TableIterator<R>>(m, (table_name + "Iterator").c_str())
      .def("__iter__", [](TableIterator<R>& it) -> TableIterator<R>& { return it; })
      .def("__next__", [](TableIterator<R>& it) {
        if (it.next >= it.table.rows().size()) throw py::stop_iteration();
        return RowT{it.table.store, it.table.spec.member, it.next++};
      });
  py::class_<TableT>(m, table_name.c_str())
      .def("__len__", [](const TableT& t) { return t.rows().size(); })
      .def("__getitem__",
           [](const TableT& t, py::ssize_t i) {
             const auto n = static_cast<py::ssize_t>(t.rows().size());
             if (i < 0) i += n;
             if (i < 0 || i >= n) throw py::index_error("record index out of range");
             return RowT{t.store, t.spec.member, static_cast<std::size_t>(i)};
           })
      .def("__iter__",
           [](const TableT& t) {
             return TableIterator<R>{t, 0};
           })
      .def_property_readonly("name", [](const TableT& t) { return t.spec.name; })
      .def_property_readonly("field_names",
                             [](const TableT& t) {
                               std::vector<std::string> names;
                               for (const FieldSpec<R>& f : t.spec.fields) names.emplace_back(f.name);
                               if constexpr (Joined<R>::kPresent) {
                                 for (const auto& f : Joined<R>::fields()) names.emplace_back(f.name);
                               }
                               return names;
                             })
      .def(
          "columns",
          [](const TableT& t, std::vector<std::string> names) {
            // One pass per column straight into numpy memory.
            py::dict out;
            const TraceStore& s = *t.store;
            if (names.empty()) {
              for (const FieldSpec<R>& f : t.spec.fields) out[f.name] = column(s, t.rows(), f);
              if constexpr (Joined<R>::kPresent) {
                for (const auto& f : Joined<R>::fields()) out[f.name] = joined_column(s, t.rows(), f);
              }
              return out;
            }
            for (const std::string& name : names) {
              if (const FieldSpec<R>* f = find_field(t.spec.fields, name)) {
                out[f->name] = column(s, t.rows(), *f);
                continue;
              }
              if constexpr (Joined<R>::kPresent) {
                if (const auto* f = find_field(Joined<R>::fields(), name)) {
                  out[f->name] = joined_column(s, t.rows(), *f);
                  continue;
                }
              }
              throw Error(ErrorKind::kInvalidArgument, std::string(t.spec.name) + " has no field '" + name + "'");
            }
            return out;
          },
          py::arg("names") = std::vector<std::string>(),
          "Columns as numpy arrays, {field: array}: integers/floats/bools with the C++ types, string "
          "fields as str (object arrays), enums as their names. `names` picks fields.")
      .def("__repr__", [](const TableT& t) {
        return "<" + std::string(t.spec.name) + ": " + std::to_string(t.rows().size()) + " records>";
      });

  store_cls.def_property_readonly(spec.name, [spec](const StorePtr& s) { return TableT{s, spec}; });
}

// Diagnostics as Python sees them (docs/reports.md, "Warnings"): the diagnostic table's rows
// (code, severity, source, count, numbers, message), as summary.json writes them.
inline py::list diagnostics_list(const Diagnostics& ds) { return rows_list(analysis::diagnostic_fields(), ds.items()); }

// A diagnostic from Python: a dict with code and message (count, numbers optional), or a plain
// string (a warning without a code: kOlderTraceCode).
inline Diagnostic diagnostic_from(const py::handle& h) {
  if (py::isinstance<py::str>(h)) return Diagnostic{&diagnostic_code(kOlderTraceCode), 1, {}, h.cast<std::string>()};
  const auto d = h.cast<py::dict>();
  Diagnostic x{&diagnostic_code(d["code"].cast<std::string>()), 1, {}, d["message"].cast<std::string>()};
  if (d.contains("count")) x.count = d["count"].cast<uint64_t>();
  if (d.contains("numbers")) x.numbers = d["numbers"].cast<std::vector<double>>();
  return x;
}

inline py::list diagnostic_codes_list() { return rows_list(analysis::diagnostic_code_fields(), diagnostic_codes()); }

inline void set_meta(TraceMeta& m, const py::kwargs& kw) {
  for (const auto& [key, value] : kw) {
    const std::string k = py::str(key);
    if (k == "start_ns")
      m.start_ns = value.cast<uint64_t>();
    else if (k == "end_ns")
      m.end_ns = value.cast<uint64_t>();
    else if (k == "dropped_records")
      m.dropped_records = value.cast<uint64_t>();
    else if (k == "incomplete_records")
      m.incomplete_records = value.cast<uint64_t>();
    else if (k == "driver_version")
      m.driver_version = value.cast<uint32_t>();
    else if (k == "cupti_version")
      m.cupti_version = value.cast<uint32_t>();
    else if (k == "cupti_path")
      m.cupti_path = value.cast<std::string>();
    else if (k == "clock")
      m.clock = value.cast<std::string>();
    else if (k == "gpu_available")
      m.gpu_available = value.cast<bool>();
    else if (k == "unavailable_reason")
      m.unavailable_reason = value.cast<std::string>();
    else if (k == "command_buffers_disabled")
      m.command_buffers_disabled = value.cast<bool>();
    else if (k == "fpgaprof_version")
      m.fpgaprof_version = value.cast<std::string>();
    else if (k == "warnings") {
      m.warnings.clear();
      for (const py::handle& w : value.cast<py::list>()) m.warnings.add(diagnostic_from(w));
    } else if (k == "process_index")
      m.process_index = value.cast<int64_t>();
    else if (k == "process_count")
      m.process_count = value.cast<uint32_t>();
    else if (k == "process_source")
      m.process_source = value.cast<std::string>();
    else if (k == "host_name")
      m.host_name = value.cast<std::string>();
    else if (k == "global_device_ids")
      m.global_device_ids = value.cast<std::vector<int64_t>>();
    else if (k == "power_sample_period_ns")
      m.power_sample_period_ns = value.cast<uint64_t>();
    else if (k == "energy_update_period_ns")
      m.energy_update_period_ns = value.cast<uint64_t>();
    else if (k == "environment")
      m.environment = value.cast<std::map<std::string, std::string>>();
    else
      throw Error(ErrorKind::kInvalidArgument, "TraceMeta has no field '" + k + "'");
  }
}

inline void bind_device(py::module_& m) {
  py::class_<DeviceInfo> d(m, "DeviceInfo");
  d.def(py::init<>())
      .def_readwrite("id", &DeviceInfo::id)
      .def_readwrite("name", &DeviceInfo::name)
      .def_readwrite("uuid", &DeviceInfo::uuid)
      .def_readwrite("compute_capability_major", &DeviceInfo::compute_capability_major)
      .def_readwrite("compute_capability_minor", &DeviceInfo::compute_capability_minor)
      .def_readwrite("sm_count", &DeviceInfo::sm_count)
      .def_readwrite("core_clock_khz", &DeviceInfo::core_clock_khz)
      .def_readwrite("memory_clock_khz", &DeviceInfo::memory_clock_khz)
      .def_readwrite("memory_bus_width_bits", &DeviceInfo::memory_bus_width_bits)
      .def_readwrite("global_memory_bytes", &DeviceInfo::global_memory_bytes)
      .def_readwrite("l2_cache_bytes", &DeviceInfo::l2_cache_bytes)
      .def_readwrite("shared_memory_per_sm_bytes", &DeviceInfo::shared_memory_per_sm_bytes)
      .def_readwrite("max_threads_per_sm", &DeviceInfo::max_threads_per_sm)
      .def_readwrite("max_registers_per_sm", &DeviceInfo::max_registers_per_sm)
      .def_readwrite("pcie_generation", &DeviceInfo::pcie_generation)
      .def_readwrite("pcie_link_width", &DeviceInfo::pcie_link_width)
      .def("peak_dram_bandwidth_bytes_per_s", &DeviceInfo::peak_dram_bandwidth_bytes_per_s,
           "2 x memory clock x bus width / 8, bytes/s (0 when unknown)")
      .def(
          "to_dict",
          [](const DeviceInfo& x) { return typed<"DeviceInfo">(fields_dict(analysis::device_info_fields(), x)); },
          "Every field and peak_dram_bandwidth_bytes_per_s (the device_info table)")
      .def("__repr__", [](const DeviceInfo& x) {
        return "DeviceInfo(id=" + std::to_string(x.id) + ", name='" + x.name +
               "', cc=" + std::to_string(x.compute_capability_major) + "." +
               std::to_string(x.compute_capability_minor) + ", sm_count=" + std::to_string(x.sm_count) + ")";
      });
}

inline void bind_store(py::module_& m) {
  bind_device(m);
  m.def(
      "diagnostic_codes", [] { return typed_list<"DiagnosticCode">(diagnostic_codes_list()); },
      "Every diagnostic code (code, severity, source, description): the one table, diagnostics.hpp.");
  // The names of the record enums, indexed by value (record_schema.hpp; the trace file keeps the
  // values): COPY_KIND_NAMES[1] == "HtoD".
  const auto names = [](std::span<const char* const> v) {
    py::tuple t(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) t[i] = py::str(v[i]);
    return t;
  };
  m.attr("COPY_KIND_NAMES") = names(kCopyKindNames);
  m.attr("MEMORY_KIND_NAMES") = names(kMemoryKindNames);
  m.attr("API_KIND_NAMES") = names(kApiKindNames);
  m.attr("SYNC_KIND_NAMES") = names(kSyncKindNames);
  py::class_<HloModuleText>(m, "HloModuleText")
      .def(py::init([](std::string name, int64_t program_id, std::string text, std::string buffer_assignment,
                       std::string live_ranges) {
             return HloModuleText{std::move(name), program_id, std::move(text), std::move(buffer_assignment),
                                  std::move(live_ranges)};
           }),
           py::arg("name"), py::arg("program_id") = -1, py::arg("text") = "", py::arg("buffer_assignment") = "",
           py::arg("live_ranges") = "")
      .def_readonly("name", &HloModuleText::name)
      .def_readonly("program_id", &HloModuleText::program_id)
      .def_readonly("text", &HloModuleText::text)
      .def_readonly("buffer_assignment", &HloModuleText::buffer_assignment,
                    "XLA's buffer assignment (its allocations), '' when not dumped")
      .def_readonly("live_ranges", &HloModuleText::live_ranges, "XLA's live ranges, '' when not dumped")
      .def("__repr__", [](const HloModuleText& h) {
        return "HloModuleText(name='" + h.name + "', program_id=" + std::to_string(h.program_id) + ", " +
               std::to_string(h.text.size()) + " chars)";
      });

  py::class_<TraceStore, StorePtr> store(m, "TraceStore", "Every record of one trace (owned; tables share it).");
  store.def(py::init<>());
  const char* const row_names[] = {
      "KernelRecord",   "LaunchConfigRecord",        "MemcpyRecord",  "MemsetRecord",     "AllocationRecord",
      "ApiRecord",      "ApiFunctionRecord",         "SyncRecord",    "MarkerRecord",     "RegionRecord",
      "OverheadRecord", "ExternalCorrelationRecord", "CounterRecord", "PowerSampleRecord"};
  std::size_t k = 0;
  for_each_table([&](const auto& spec) { bind_table(m, store, spec, row_names[k++]); });
  store
      .def_property_readonly("table_names",
                             [](const StorePtr&) {
                               std::vector<std::string> names;
                               for_each_table([&](const auto& spec) { names.emplace_back(spec.name); });
                               return names;
                             })
      .def_property_readonly(
          "meta",
          [](const StorePtr& s) { return typed<"TraceMeta">(fields_dict(analysis::trace_meta_fields(), s->meta)); },
          "TraceMeta as a dict (a copy; the trace_meta table)")
      .def_property_readonly(
          "diagnostics", [](const StorePtr& s) { return typed_list<"Diagnostic">(diagnostics_list(s->meta.warnings)); },
          "TraceMeta::warnings as records (dicts of code, severity, source, count, numbers, message; copies)")
      .def(
          "set_meta", [](const StorePtr& s, const py::kwargs& kw) { set_meta(s->meta, kw); },
          "Sets TraceMeta fields by name (building stores in tests, adding warnings).")
      .def(
          "add_warning",
          [](const StorePtr& s, const std::string& message, const std::string& code,
             const std::vector<double>& numbers) { s->meta.warnings.add(code, message, numbers); },
          py::arg("message"), py::arg("code"), py::arg("numbers") = std::vector<double>{},
          "Adds a warning with its code (fpgaprof.base.diagnostics); a repeated one is counted.")
      .def_property_readonly(
          "devices", [](const StorePtr& s) { return s->devices; }, "DeviceInfo list (copies)")
      .def("add_device", [](const StorePtr& s, const DeviceInfo& d) { s->devices.push_back(d); })
      .def_property_readonly("strings", [](const StorePtr& s) { return s->strings.all(); })
      .def_property_readonly("hlo_modules", [](const StorePtr& s) { return s->hlo_modules; })
      .def(
          "add_hlo_module",
          [](const StorePtr& s, std::string name, int64_t program_id, std::string text, std::string buffer_assignment,
             std::string live_ranges) {
            // Only the allocations of a buffer-assignment dump are kept (XLA prints the module
            // before them and a list of every value after them).
            s->hlo_modules.push_back({std::move(name), program_id, std::move(text),
                                      std::string(hlo::buffer_assignment_allocations_text(buffer_assignment)),
                                      std::move(live_ranges)});
          },
          py::arg("name"), py::arg("program_id"), py::arg("text"), py::arg("buffer_assignment") = "",
          py::arg("live_ranges") = "")
      .def(
          "append",
          [](const StorePtr& s, const std::string& table, const py::kwargs& kw) {
            std::size_t index = 0;
            bool found = false;
            for_each_table([&](const auto& spec) {
              if (table != spec.name) return;
              found = true;
              auto& rows = (*s).*(spec.member);
              using R = typename std::remove_reference_t<decltype(rows)>::value_type;
              R rec{};
              [[maybe_unused]] bool joined_given = false;
              [[maybe_unused]] typename Joined<R>::Target joined{};
              for (const auto& [key, value] : kw) {
                const std::string k = py::str(key);
                if (const auto* f = find_field(spec.fields, k)) {
                  set_field(*s, *f, rec, value);
                  continue;
                }
                if constexpr (Joined<R>::kPresent) {
                  if (const auto* f = find_field(Joined<R>::fields(), k)) {
                    set_field(*s, *f, joined, value);
                    joined_given = true;
                    continue;
                  }
                }
                throw Error(ErrorKind::kInvalidArgument, table + " has no field '" + k + "'");
              }
              if constexpr (Joined<R>::kPresent) {
                if (joined_given) {
                  if (kw.contains(Joined<R>::kIndexField)) {
                    throw Error(ErrorKind::kInvalidArgument, table + ": give either " + Joined<R>::kIndexField +
                                                                 " (an index) or the fields it refers to, not both");
                  }
                  Joined<R>::assign(*s, rec, joined);
                }
              }
              rows.push_back(rec);
              index = rows.size() - 1;
            });
            if (!found) throw Error(ErrorKind::kInvalidArgument, "no record table named '" + table + "'");
            return index;
          },
          py::arg("table"),
          "Appends one record to a table (fields by name; str for string fields and enum names). "
          "For building stores in tests; returns the new record's index.")
      .def(
          "correlate",
          [](const StorePtr& s) {
            CorrelationStats st;
            {
              py::gil_scoped_release nogil;
              st = correlate(*s);
            }
            return typed<"CorrelationStats">(fields_dict(analysis::correlation_stats_fields(), st));
          },
          "Joins records (fpgaprof/correlate.hpp); returns the unmatched counts.")
      .def(
          "save",
          [](const StorePtr& s, const std::filesystem::path& path) {
            py::gil_scoped_release nogil;
            write_trace(*s, path.string());
          },
          py::arg("path"),
          "Writes the trace file atomically (temp file + fsync + rename). A bytes path is the system's bytes.")
      .def_static(
          "load",
          [](const std::filesystem::path& path, uint64_t max_memory_bytes) {
            ReadOptions options = interruptible_read();
            options.max_memory_bytes = max_memory_bytes;
            py::gil_scoped_release nogil;
            return std::make_shared<TraceStore>(read_trace(path.string(), options));
          },
          py::arg("path"), py::arg("max_memory_bytes") = 0,
          "Reads a trace file (a bytes path is the system's bytes: names that are not UTF-8). Ctrl-C stops it. "
          "max_memory_bytes: the memory the read may use instead of the default bound (0).")
      .def("serialize",
           [](const StorePtr& s) {
             std::string bytes;
             {
               py::gil_scoped_release nogil;
               bytes = serialize_trace(*s);
             }
             return py::bytes(bytes);
           })
      .def_static(
          "deserialize",
          [](const py::bytes& data, const std::string& origin) {
            const std::string_view view(PyBytes_AS_STRING(data.ptr()),
                                        static_cast<std::size_t>(PyBytes_GET_SIZE(data.ptr())));
            const ReadOptions options = interruptible_read();
            py::gil_scoped_release nogil;  // `data` stays alive: the caller holds it
            return std::make_shared<TraceStore>(deserialize_trace(view, origin, options));
          },
          py::arg("data"), py::arg("origin") = "<bytes>");
}

// ---- capture --------------------------------------------------------------------------

inline void bind_capture(py::module_& m) {
  py::class_<CuptiStatus>(m, "CuptiStatus")
      .def_readonly("library_found", &CuptiStatus::library_found)
      .def_readonly("library_path", &CuptiStatus::library_path)
      .def_readonly("how_found", &CuptiStatus::how_found)
      .def_readonly("cupti_version", &CuptiStatus::cupti_version)
      .def_readonly("header_cupti_version", &CuptiStatus::header_cupti_version)
      .def_readonly("min_cupti_version", &CuptiStatus::min_cupti_version)
      .def_readonly("cupti_cuda", &CuptiStatus::cupti_cuda)
      .def_readonly("header_cuda", &CuptiStatus::header_cuda)
      .def_readonly("min_cuda", &CuptiStatus::min_cuda)
      .def_readonly("driver_version", &CuptiStatus::driver_version)
      .def_readonly("devices", &CuptiStatus::devices)
      .def_readonly("problem", &CuptiStatus::problem)
      .def("__repr__", [](const CuptiStatus& s) {
        return "CuptiStatus(library_found=" + std::string(s.library_found ? "True" : "False") + ", library_path='" +
               s.library_path + "', devices=" + std::to_string(s.devices.size()) + ", problem='" + s.problem + "')";
      });
  m.def(
      "probe_cupti",
      [] {
        py::gil_scoped_release nogil;
        return probe_cupti();
      },
      "What fpgaprof sees of CUPTI, the driver and the GPUs (never raises).");

  py::class_<CaptureSession>(m, "CaptureSession")
      .def_static(
          "start",
          [](std::size_t buffer_bytes, std::size_t max_buffers, std::size_t device_buffer_bytes, bool require_gpu,
             uint64_t power_sample_period_ns) {
            CaptureOptions o;
            o.power_sample_period_ns = power_sample_period_ns;
            o.buffer_bytes = buffer_bytes;
            o.max_buffers = max_buffers;
            o.device_buffer_bytes = device_buffer_bytes;
            o.require_gpu = require_gpu;
            py::gil_scoped_release nogil;
            return CaptureSession::start(o);
          },
          py::arg("buffer_bytes") = std::size_t{8} << 20, py::arg("max_buffers") = 0,
          py::arg("device_buffer_bytes") = 0, py::arg("require_gpu") = false,
          py::arg("power_sample_period_ns") = uint64_t{1'000'000})
      .def(
          "stop",
          [](CaptureSession& s) {
            py::gil_scoped_release nogil;
            return std::make_shared<TraceStore>(s.stop());
          },
          "Synchronizes, flushes and returns the (uncorrelated) TraceStore. Once only.")
      .def_property_readonly("gpu_active", &CaptureSession::gpu_active)
      .def_property_readonly("unavailable_reason", &CaptureSession::unavailable_reason);

  m.def(
      "region_push", [](const std::string& name) { region_push(name); }, py::arg("name"));
  m.def("region_pop", [] { region_pop(); });
  m.def("trace_clock_ns", &trace_clock_ns, "Trace clock now (CLOCK_REALTIME ns).");
  m.def("current_thread_id", &current_thread_id, "gettid() of the calling thread.");
  m.def("library_path", &library_path, "Absolute path of libfpgaprof.so.");
  m.def(
      "nvtx_injection_status",
      [] { return typed<"NvtxInjection">(fields_dict(nvtx_injection_fields(), nvtx_injection_status())); },
      "What NVTX's injection hook (libfpgaprof.so's InitializeInjectionNvtx2) did in this process: "
      "calls, last_result (-1 never called), succeeded, detail.");
}

}  // namespace fpgaprof::bindings

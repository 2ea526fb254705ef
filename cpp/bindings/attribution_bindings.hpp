// The attribution submodule of fpgaprof._core: kernel -> XLA HLO op -> source line. Converts only.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "core_bindings.hpp"
#include "fpgaprof/analysis/attribution.hpp"
#include "fpgaprof/analysis/result_schema.hpp"
#include "result_convert.hpp"

namespace fpgaprof::bindings {

inline void bind_attribution(py::module_& m) {
  using namespace fpgaprof::analysis;
  auto a = m.def_submodule("attribution", "kernel -> XLA HLO op -> source line attribution");
  py::class_<ActivityAttribution>(a, "ActivityAttribution")
      .def_property_readonly("method", [](const ActivityAttribution& x) { return match_method_name(x.method); })
      .def_property_readonly("module_index",
                             [](const ActivityAttribution& x) -> py::object {
                               return x.module_index == kNone32 ? py::none() : py::cast(x.module_index);
                             })
      .def_readonly("module_name", &ActivityAttribution::module_name)
      .def_readonly("program_id", &ActivityAttribution::program_id)
      .def_readonly("hlo_op", &ActivityAttribution::hlo_op)
      .def_readonly("category", &ActivityAttribution::category)
      .def_readonly("library", &ActivityAttribution::library)
      .def_readonly("op_name", &ActivityAttribution::op_name)
      .def_readonly("source_file", &ActivityAttribution::source_file)
      .def_readonly("source_line", &ActivityAttribution::source_line)
      .def_readonly("reason", &ActivityAttribution::reason);
  py::class_<OpStats>(a, "OpStats")
      .def_property_readonly("module_index",
                             [](const OpStats& x) -> py::object {
                               return x.module_index == kNone32 ? py::none() : py::cast(x.module_index);
                             })
      .def_readonly("module_name", &OpStats::module_name)
      .def_readonly("program_id", &OpStats::program_id)
      .def_readonly("hlo_op", &OpStats::hlo_op)
      .def_readonly("opcode", &OpStats::opcode)
      .def_readonly("category", &OpStats::category)
      .def_readonly("op_name", &OpStats::op_name)
      .def_readonly("source_file", &OpStats::source_file)
      .def_readonly("source_line", &OpStats::source_line)
      .def_property_readonly("method", [](const OpStats& x) { return match_method_name(x.method); })
      .def_readonly("kernel_count", &OpStats::kernel_count)
      .def_readonly("executions", &OpStats::executions)
      .def_readonly("total_ns", &OpStats::total_ns)
      .def_readonly("timed_executions", &OpStats::timed_executions)
      .def_readonly("mean_ns", &OpStats::mean_ns)
      .def_readonly("memcpy_count", &OpStats::memcpy_count)
      .def_readonly("memcpy_ns", &OpStats::memcpy_ns)
      .def_readonly("memcpy_bytes", &OpStats::memcpy_bytes)
      .def_readonly("kernel_names", &OpStats::kernel_names)
      .def_readonly("has_cost", &OpStats::has_cost)
      .def_readonly("flops", &OpStats::flops)
      .def_readonly("transcendentals", &OpStats::transcendentals)
      .def_readonly("bytes_accessed", &OpStats::bytes_accessed)
      .def_readonly("bytes_read", &OpStats::bytes_read)
      .def_readonly("bytes_written", &OpStats::bytes_written)
      .def_readonly("cost_per_iteration", &OpStats::cost_per_iteration)
      .def_readonly("cost_unknown", &OpStats::cost_unknown)
      .def_readonly("pattern", &OpStats::pattern);
  py::class_<UnattributedKernel>(a, "UnattributedKernel")
      .def_readonly("name", &UnattributedKernel::name)
      .def_readonly("count", &UnattributedKernel::count)
      .def_readonly("total_ns", &UnattributedKernel::total_ns)
      .def_readonly("reason", &UnattributedKernel::reason);
  // A sequence of ActivityAttribution (one per record; each row a copy of its shared site),
  // plus the compact form for bulk use: `sites` (distinct attributions) and `site_index`
  // (numpy uint32, one per record) so that columns are sites[site_index].
  py::class_<AttributionList>(a, "AttributionList")
      .def("__len__", &AttributionList::size)
      .def("__getitem__",
           [](const AttributionList& l, py::ssize_t i) {
             const auto n = static_cast<py::ssize_t>(l.size());
             if (i < 0) i += n;
             if (i < 0 || i >= n) throw py::index_error("attribution index out of range");
             return l[static_cast<std::size_t>(i)];
           })
      .def(
          "__iter__", [](const AttributionList& l) { return py::make_iterator(l.begin(), l.end()); },
          py::keep_alive<0, 1>())
      .def_property_readonly("sites", [](const AttributionList& l) { return l.sites(); })
      .def_property_readonly("site_index", [](const AttributionList& l) {
        const std::vector<uint32_t>& v = l.site_indices();
        py::array_t<uint32_t> out(static_cast<py::ssize_t>(v.size()));
        std::copy(v.begin(), v.end(), out.mutable_data());
        return out;
      });
  py::class_<AttributionResult, std::shared_ptr<AttributionResult>>(a, "AttributionResult")
      .def_readonly("kernels", &AttributionResult::kernels)
      .def_readonly("memcpys", &AttributionResult::memcpys)
      .def_readonly("memsets", &AttributionResult::memsets)
      .def_readonly("ops", &AttributionResult::ops)
      .def_readonly("op_of_site", &AttributionResult::op_of_site)
      .def_readonly("unattributed", &AttributionResult::unattributed)
      .def_readonly("unattributed_count", &AttributionResult::unattributed_count)
      .def_readonly("unattributed_ns", &AttributionResult::unattributed_ns)
      .def_readonly("attributed_count", &AttributionResult::attributed_count)
      .def_readonly("attributed_ns", &AttributionResult::attributed_ns)
      .def_property_readonly(
          "count_by_method",
          [](const AttributionResult& r) {
            return typed<"AttributionMethodCounts">(fields_dict(attribution_method_counts_fields(), r));
          })
      .def_property_readonly("warnings", [](const AttributionResult& r) { return r.warnings.messages(); });
  a.def(
      "attribute",
      [](const TraceStore& store) {
        py::gil_scoped_release nogil;
        return std::make_shared<AttributionResult>(attribute(store));
      },
      py::arg("store"), "Attributes every kernel/copy of a correlated store (parses store.hlo_modules).");
  a.def(
      "parse_xla_range_name", [](const std::string& text) -> std::optional<TypedRow<"XlaRangeName">> {
        const XlaRangeName r = parse_xla_range_name(text);
        if (r.kind == XlaRangeName::Kind::kNone) return std::nullopt;
        return typed<"XlaRangeName">(fields_dict(xla_range_name_fields(), r));
      },
      py::arg("text"));
  a.def(
      "sanitize_kernel_name", [](const std::string& s) { return sanitize_kernel_name(s); }, py::arg("hlo_name"),
      "The kernel name XLA gives an HLO instruction: each character outside [A-Za-z0-9_$] becomes '_'.");
  a.def(
      "library_of_kernel", [](const std::string& s) { return library_of_kernel(s); }, py::arg("kernel_name"));
  a.def(
      "demangle_kernel_name", [](const std::string& s) { return demangle_kernel_name(s); }, py::arg("name"),
      "A mangled C++ kernel name demangled (as c++filt prints it); any other name unchanged.");
}

}  // namespace fpgaprof::bindings

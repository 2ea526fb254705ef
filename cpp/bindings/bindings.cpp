// fpgaprof._core: the one pybind11 bindings file. Thin: it converts types and errors and
// releases the GIL around long work. Sections are owned by their layer; keep them apart.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>

#include "fpgaprof/analysis/attribution.hpp"
#include "fpgaprof/error.hpp"
#include "fpgaprof/hlo/cost_model.hpp"
#include "fpgaprof/hlo/hlo_parser.hpp"
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
  {
    using namespace fpgaprof::hlo;
    auto h = m.def_submodule("hlo", "HLO parser and static cost model");
    py::class_<Cost>(h, "Cost")
        .def_readonly("flops", &Cost::flops)
        .def_readonly("transcendentals", &Cost::transcendentals)
        .def_readonly("bytes_read", &Cost::bytes_read)
        .def_readonly("bytes_written", &Cost::bytes_written)
        .def_readonly("output_bytes", &Cost::output_bytes)
        .def_readonly("working_set_bytes", &Cost::working_set_bytes)
        .def_readonly("per_iteration", &Cost::per_iteration)
        .def_readonly("unknown", &Cost::unknown)
        .def_property_readonly("bytes_accessed", &Cost::bytes_accessed);
    py::class_<Shape>(h, "Shape")
        .def_property_readonly("dtype", [](const Shape& s) { return std::string(primitive_name(s.type)); })
        .def_readonly("dims", &Shape::dims)
        .def_readonly("layout", &Shape::layout)
        .def_readonly("tuple", &Shape::tuple)
        .def_property_readonly("byte_size", &Shape::byte_size)
        .def_property_readonly("element_count", &Shape::element_count);
    py::class_<StackFrame>(h, "StackFrame")
        .def_readonly("file", &StackFrame::file)
        .def_readonly("function", &StackFrame::function)
        .def_readonly("line", &StackFrame::line)
        .def_readonly("column", &StackFrame::column)
        .def_readonly("parent_id", &StackFrame::parent_id);
    py::class_<Instruction>(h, "Instruction")
        .def_readonly("name", &Instruction::name)
        .def_readonly("opcode", &Instruction::opcode)
        .def_readonly("shape", &Instruction::shape)
        .def_readonly("operands", &Instruction::operands)
        .def_readonly("operand_shapes", &Instruction::operand_shapes)
        .def_readonly("attributes", &Instruction::attributes)
        .def_readonly("fusion_kind", &Instruction::fusion_kind)
        .def_readonly("called_computations", &Instruction::called_computations)
        .def_readonly("custom_call_target", &Instruction::custom_call_target)
        .def_readonly("backend_config", &Instruction::backend_config)
        .def_readonly("is_root", &Instruction::is_root)
        .def_readonly("line", &Instruction::line)
        .def_readonly("computation_index", &Instruction::computation_index)
        .def_readonly("known_trip_count", &Instruction::known_trip_count)
        .def_readonly("cost", &Instruction::cost)
        .def_property_readonly("pattern", [](const Instruction& i) { return std::string(access_pattern_name(i.pattern)); })
        .def_property_readonly("op_type", [](const Instruction& i) { return i.metadata.op_type; })
        .def_property_readonly("op_name", [](const Instruction& i) { return i.metadata.op_name; })
        .def_property_readonly("source_file", [](const Instruction& i) { return i.metadata.source_file; })
        .def_property_readonly("source_line", [](const Instruction& i) { return i.metadata.source_line; })
        .def_property_readonly("source_column", [](const Instruction& i) { return i.metadata.source_column; })
        .def_property_readonly("function_name", [](const Instruction& i) { return i.metadata.function_name; })
        .def_property_readonly("stack_frame_id", [](const Instruction& i) { return i.metadata.stack_frame_id; });
    py::class_<Computation>(h, "Computation")
        .def_readonly("name", &Computation::name)
        .def_readonly("is_entry", &Computation::is_entry)
        .def_readonly("is_fusion", &Computation::is_fusion)
        .def_readonly("instructions", &Computation::instructions, py::return_value_policy::reference_internal);
    py::class_<Module, std::shared_ptr<Module>>(h, "Module")
        .def_readonly("name", &Module::name)
        .def_readonly("computations", &Module::computations, py::return_value_policy::reference_internal)
        .def_readonly("attributes", &Module::attributes)
        .def_readonly("stack_frames", &Module::stack_frames)
        .def_readonly("total", &Module::total)
        .def_readonly("unknown_cost_instructions", &Module::unknown_cost_instructions)
        .def_property_readonly("entry_index", [](const Module& mod) -> py::object {
          return mod.has_entry ? py::object(py::int_(mod.entry_index)) : py::object(py::none());
        });
    // Parse + cost without the GIL; a parse error becomes fpgaprof.HloParseError with
    // .line, .column and .text.
    h.def("analyze", [](const std::string& text) {
      std::shared_ptr<Module> mod;
      try {
        py::gil_scoped_release nogil;
        mod = std::make_shared<Module>(analyze_hlo(text));
      } catch (const HloParseError& e) {
        py::object cls = py::module_::import("fpgaprof.errors").attr("HloParseError");
        py::object exc = cls(e.what());
        exc.attr("line") = e.line();
        exc.attr("column") = e.column();
        exc.attr("text") = e.found();
        PyErr_SetObject(cls.ptr(), exc.ptr());
        throw py::error_already_set();
      }
      return mod;
    }, py::arg("hlo_text"));
  }

  // === analysis ===
  // -- attribution --
  {
    using namespace fpgaprof::analysis;
    auto a = m.def_submodule("attribution", "kernel -> XLA HLO op -> source line attribution");
    py::class_<ActivityAttribution>(a, "ActivityAttribution")
        .def_property_readonly("method", [](const ActivityAttribution& x) { return match_method_name(x.method); })
        .def_property_readonly("module_index", [](const ActivityAttribution& x) -> py::object {
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
        .def_property_readonly("module_index", [](const OpStats& x) -> py::object {
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
    py::class_<AttributionResult, std::shared_ptr<AttributionResult>>(a, "AttributionResult")
        .def_readonly("kernels", &AttributionResult::kernels)
        .def_readonly("memcpys", &AttributionResult::memcpys)
        .def_readonly("memsets", &AttributionResult::memsets)
        .def_readonly("ops", &AttributionResult::ops)
        .def_readonly("unattributed", &AttributionResult::unattributed)
        .def_readonly("unattributed_count", &AttributionResult::unattributed_count)
        .def_readonly("unattributed_ns", &AttributionResult::unattributed_ns)
        .def_readonly("attributed_count", &AttributionResult::attributed_count)
        .def_readonly("attributed_ns", &AttributionResult::attributed_ns)
        .def_property_readonly("count_by_method", [](const AttributionResult& r) {
          py::dict d;
          for (int i = 0; i < 4; ++i) d[match_method_name(static_cast<MatchMethod>(i))] = r.count_by_method[i];
          return d;
        })
        .def_readonly("warnings", &AttributionResult::warnings);
    a.def("attribute", [](const TraceStore& store) {
      py::gil_scoped_release nogil;
      return std::make_shared<AttributionResult>(attribute(store));
    }, py::arg("store"), "Attributes every kernel/copy of a correlated store (parses store.hlo_modules).");
    a.def("parse_xla_range_name", [](const std::string& text) -> py::object {
      const XlaRangeName r = parse_xla_range_name(text);
      if (r.kind == XlaRangeName::Kind::kNone) return py::none();
      py::dict d;
      d["kind"] = r.kind == XlaRangeName::Kind::kModule ? "module" : "thunk";
      d["hlo_module"] = r.hlo_module;
      d["program_id"] = r.program_id;
      d["prefix"] = r.prefix;
      d["hlo_op"] = r.hlo_op;
      d["name"] = r.name;
      d["unique_hlo_op_id"] = r.unique_hlo_op_id;
      return d;
    }, py::arg("text"));
    a.def("sanitize_kernel_name", [](const std::string& s) { return sanitize_kernel_name(s); });
    a.def("library_of_kernel", [](const std::string& s) { return library_of_kernel(s); });
  }
}

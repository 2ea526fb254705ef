// The hlo submodule of fpgaprof._core: the HLO parser's module, computations and instructions
// and the static cost model. Converts only.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string_view>

#include "core_bindings.hpp"
#include "fpgaprof/hlo/cost_model.hpp"
#include "fpgaprof/hlo/hlo_parser.hpp"

namespace fpgaprof::bindings {

inline void bind_hlo(py::module_& m) {
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
      .def_readonly("from_author", &Cost::from_author)
      .def_property_readonly("bytes_accessed", &Cost::bytes_accessed);
  py::class_<Shape>(h, "Shape")
      .def_property_readonly("dtype", [](const Shape& s) { return std::string(primitive_name(s.type)); })
      .def_property_readonly("dims", [](const Shape& s) { return std::vector<int64_t>(s.dims); })
      .def_property_readonly("layout", [](const Shape& s) { return std::vector<int64_t>(s.layout); })
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
      .def_property_readonly("operands", [](const Instruction& i) { return i.operands.names(); })
      .def_property_readonly("operand_shapes", [](const Instruction& i) { return i.operand_shapes().to_vector(); })
      .def_property_readonly("attributes", [](const Instruction& i) { return i.attributes(); })
      .def_property_readonly("fusion_kind", [](const Instruction& i) { return i.fusion_kind(); })
      .def_property_readonly("called_computations", [](const Instruction& i) { return i.called_computations(); })
      .def_property_readonly("custom_call_target", [](const Instruction& i) { return i.custom_call_target(); })
      .def_property_readonly("backend_config", [](const Instruction& i) { return i.backend_config(); })
      .def_readonly("is_root", &Instruction::is_root)
      .def_readonly("line", &Instruction::line)
      .def_readonly("computation_index", &Instruction::computation_index)
      .def_readonly("known_trip_count", &Instruction::known_trip_count)
      .def_readonly("parameter_number", &Instruction::parameter_number)
      .def_readonly("cost", &Instruction::cost)
      .def_property_readonly("pattern",
                             [](const Instruction& i) { return std::string(access_pattern_name(i.pattern)); })
      .def_property_readonly("op_type", [](const Instruction& i) { return i.metadata().op_type; })
      .def_property_readonly("op_name", [](const Instruction& i) { return i.metadata().op_name; })
      .def_property_readonly("source_file", [](const Instruction& i) { return i.metadata().source_file; })
      .def_property_readonly("source_line", [](const Instruction& i) { return i.metadata().source_line; })
      .def_property_readonly("source_column", [](const Instruction& i) { return i.metadata().source_column; })
      .def_property_readonly("function_name", [](const Instruction& i) { return i.metadata().function_name; })
      .def_property_readonly("stack_frame_id", [](const Instruction& i) { return i.metadata().stack_frame_id; });
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
  h.def(
      "analyze",
      [](std::string_view text) {  // the str's own UTF-8 buffer: the text is not copied
        std::shared_ptr<Module> mod;
        try {
          py::gil_scoped_release nogil;
          mod = std::make_shared<Module>(analyze_hlo(text));
        } catch (const HloParseError& e) {
          bindings::raise_hlo_parse_error(e);
        }
        return mod;
      },
      py::arg("hlo_text"));
}

}  // namespace fpgaprof::bindings

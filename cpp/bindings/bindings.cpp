// fpgaprof._core: the one pybind11 bindings file. Thin: it converts types and errors and
// releases the GIL around long work. Sections are owned by their layer; keep them apart.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>

#include "core_bindings.hpp"  // errors, store, capture sections
#include "energy_bindings.hpp"
#include "fpgaprof/analysis/attribution.hpp"
#include "fpgaprof/analysis/ceilings.hpp"
#include "fpgaprof/analysis/device_analysis.hpp"
#include "fpgaprof/analysis/fpga_model.hpp"
#include "fpgaprof/analysis/memory_analysis.hpp"
#include "fpgaprof/analysis/module_memory.hpp"
#include "fpgaprof/analysis/op_inputs.hpp"
#include "fpgaprof/analysis/region_paths.hpp"
#include "fpgaprof/analysis/roofline.hpp"
#include "fpgaprof/analysis/trace_analysis.hpp"
#include "fpgaprof/analysis/transfer_analysis.hpp"
#include "fpgaprof/cupti/counters.hpp"
#include "fpgaprof/error.hpp"
#include "fpgaprof/hlo/buffer_assignment.hpp"
#include "fpgaprof/hlo/cost_model.hpp"
#include "fpgaprof/hlo/hlo_parser.hpp"
#include "fpgaprof/records.hpp"
#include "fpgaprof/trace_store.hpp"
#include "fpgaprof/version.hpp"

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

py::dict module_buffer_dict(const fpgaprof::analysis::ModuleBuffer& b) {
  py::dict d;
  d["allocation"] = b.allocation;
  d["offset_bytes"] = b.offset_bytes;
  d["size_bytes"] = b.size_bytes;
  d["kind"] = std::string(fpgaprof::hlo::allocation_kind_name(b.kind));
  d["producer"] = b.producer;
  d["values"] = b.values;
  d["shape"] = b.shape;
  d["op_name"] = b.op_name;
  d["source"] = b.source;
  d["start"] = b.start;
  d["end"] = b.end;
  return d;
}

py::dict module_memory_dict(const fpgaprof::analysis::ModuleMemory& m) {
  py::dict d;
  d["module"] = m.module;
  d["module_index"] = m.module_index;
  d["program_id"] = m.program_id;
  d["peak_source"] = m.peak_source;
  d["peak_bytes"] = m.peak_bytes;
  d["peak_position"] = m.peak_position;
  d["peak_instruction"] = m.peak_instruction;
  d["xla_peak_bytes"] = m.xla_peak_bytes;
  d["parameter_bytes"] = m.parameter_bytes;
  d["output_bytes"] = m.output_bytes;
  d["temporary_bytes"] = m.temporary_bytes;
  d["constant_bytes"] = m.constant_bytes;
  d["thread_local_bytes"] = m.thread_local_bytes;
  d["tuple_table_bytes"] = m.tuple_table_bytes;
  d["allocation_bytes"] = m.allocation_bytes;
  d["allocation_count"] = m.allocation_count;
  d["unplaced_values"] = m.unplaced_values;
  py::list live, all;
  for (const auto& b : m.live_at_peak) live.append(module_buffer_dict(b));
  for (const auto& b : m.buffers) all.append(module_buffer_dict(b));
  d["live_at_peak"] = live;
  d["buffers"] = all;
  d["sequence"] = m.sequence;
  d["live_bytes"] = m.live_bytes;
  return d;
}

// A buffer-assignment or live-range dump that does not parse: fpgaprof.HloParseError with .line.
[[noreturn]] void raise_buffer_parse_error(const fpgaprof::hlo::BufferAssignmentParseError& e) {
  py::object cls = py::module_::import("fpgaprof.errors").attr("HloParseError");
  py::object exc = cls(e.what());
  exc.attr("line") = e.line();
  exc.attr("column") = 0;
  exc.attr("text") = "";
  PyErr_SetObject(cls.ptr(), exc.ptr());
  throw py::error_already_set();
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
        .def_readonly("from_author", &Cost::from_author)
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
        .def_readonly("parameter_number", &Instruction::parameter_number)
        .def_readonly("cost", &Instruction::cost)
        .def_property_readonly("pattern",
                               [](const Instruction& i) { return std::string(access_pattern_name(i.pattern)); })
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
    h.def(
        "analyze",
        [](const std::string& text) {
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

  // === analysis ===
  // -- attribution --
  {
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
        .def_property_readonly("count_by_method",
                               [](const AttributionResult& r) {
                                 py::dict d;
                                 for (int i = 0; i < 4; ++i)
                                   d[match_method_name(static_cast<MatchMethod>(i))] = r.count_by_method[i];
                                 return d;
                               })
        .def_readonly("warnings", &AttributionResult::warnings);
    a.def(
        "attribute",
        [](const TraceStore& store) {
          py::gil_scoped_release nogil;
          return std::make_shared<AttributionResult>(attribute(store));
        },
        py::arg("store"), "Attributes every kernel/copy of a correlated store (parses store.hlo_modules).");
    a.def(
        "parse_xla_range_name",
        [](const std::string& text) -> py::object {
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
  // -- roofline/fpga --
  {
    using namespace fpgaprof::analysis;
    auto r = m.def_submodule("analysis", "transfers, device memory, ceilings, roofline, FPGA model");
    // Test and tooling helper: a TraceStore built from plain Python lists (used by the tests of
    // the analysis; the api section owns the real store bindings). Registers a minimal
    // TraceStore type only when the core section has not.
    if (py::detail::get_type_info(typeid(TraceStore)) == nullptr)
      py::class_<TraceStore, std::shared_ptr<TraceStore>>(r, "TraceStore").def(py::init<>());
    r.def(
        "_store_from_lists",
        [](const py::dict& spec) {
          auto s = std::make_shared<TraceStore>();
          const auto rows = [&](const char* k) { return spec.contains(k) ? spec[k].cast<py::list>() : py::list(); };
          const auto u64 = [](const py::dict& d, const char* k, uint64_t def) {
            return d.contains(k) ? d[k].cast<uint64_t>() : def;
          };
          const auto u32 = [](const py::dict& d, const char* k, uint32_t def) {
            return d.contains(k) ? d[k].cast<uint32_t>() : def;
          };
          for (auto h : rows("devices")) {
            auto d = h.cast<py::dict>();
            DeviceInfo x;
            x.name = d.contains("name") ? d["name"].cast<std::string>() : "";
            x.uuid = d.contains("uuid") ? d["uuid"].cast<std::string>() : "";
            x.compute_capability_major = u32(d, "cc_major", 0);
            x.compute_capability_minor = u32(d, "cc_minor", 0);
            x.sm_count = u32(d, "sm_count", 0);
            x.core_clock_khz = u64(d, "core_clock_khz", 0);
            x.memory_clock_khz = u64(d, "memory_clock_khz", 0);
            x.memory_bus_width_bits = u32(d, "memory_bus_width_bits", 0);
            x.pcie_generation = u32(d, "pcie_generation", 0);
            x.pcie_link_width = u32(d, "pcie_link_width", 0);
            x.id = u32(d, "id", static_cast<uint32_t>(s->devices.size()));
            s->devices.push_back(x);
          }
          for (auto h : rows("kernels")) {
            auto d = h.cast<py::dict>();
            KernelRecord k;
            k.start_ns = u64(d, "start_ns", 0);
            k.end_ns = u64(d, "end_ns", 0);
            k.name = s->strings.intern(d.contains("name") ? d["name"].cast<std::string>() : "");
            LaunchConfig c;
            c.grid_x = u32(d, "grid", 1);
            c.grid_y = 1;
            c.grid_z = 1;
            k.launch_config = s->intern_launch_config(c);
            k.region_index = u32(d, "region", kNone32);
            k.marker_index = u32(d, "marker", kNone32);
            k.device_id = u32(d, "device", 0);
            k.thread_id = u32(d, "thread_id", 0);
            s->kernels.push_back(k);
          }
          for (auto h : rows("memcpys")) {
            auto d = h.cast<py::dict>();
            MemcpyRecord c;
            c.start_ns = u64(d, "start_ns", 0);
            c.end_ns = u64(d, "end_ns", 0);
            c.bytes = u64(d, "bytes", 0);
            c.copy_kind = static_cast<CopyKind>(u32(d, "copy_kind", 0));
            c.src_kind = static_cast<MemoryKind>(u32(d, "src_kind", 0));
            c.dst_kind = static_cast<MemoryKind>(u32(d, "dst_kind", 0));
            c.is_async = d.contains("async") && d["async"].cast<bool>();
            c.region_index = u32(d, "region", kNone32);
            c.device_id = u32(d, "device", 0);
            c.thread_id = u32(d, "thread_id", 0);
            s->memcpys.push_back(c);
          }
          for (auto h : rows("memsets")) {
            auto d = h.cast<py::dict>();
            MemsetRecord m;
            m.start_ns = u64(d, "start_ns", 0);
            m.end_ns = u64(d, "end_ns", 0);
            m.bytes = u64(d, "bytes", 0);
            m.device_id = u32(d, "device", 0);
            m.thread_id = u32(d, "thread_id", 0);
            m.region_index = u32(d, "region", kNone32);
            s->memsets.push_back(m);
          }
          for (auto h : rows("allocations")) {
            auto d = h.cast<py::dict>();
            AllocationRecord a;
            a.timestamp_ns = u64(d, "timestamp_ns", 0);
            a.address = u64(d, "address", 0);
            a.bytes = u64(d, "bytes", 0);
            a.is_alloc = !d.contains("alloc") || d["alloc"].cast<bool>();
            a.region_index = u32(d, "region", kNone32);
            a.device_id = u32(d, "device", 0);
            s->allocations.push_back(a);
          }
          for (auto h : rows("regions")) {
            auto d = h.cast<py::dict>();
            RegionRecord g;
            g.start_ns = u64(d, "start_ns", 0);
            g.end_ns = u64(d, "end_ns", 0);
            g.thread_id = u32(d, "thread_id", 0);
            g.name = s->strings.intern(d.contains("name") ? d["name"].cast<std::string>() : "");
            g.parent = u32(d, "parent", kNone32);
            g.depth = u32(d, "depth", 0);
            s->regions.push_back(g);
          }
          for (auto h : rows("syncs")) {
            auto d = h.cast<py::dict>();
            SyncRecord w;
            w.start_ns = u64(d, "start_ns", 0);
            w.end_ns = u64(d, "end_ns", 0);
            w.thread_id = u32(d, "thread_id", 0);
            s->syncs.push_back(w);
          }
          for (auto h : rows("hlo_modules")) {
            auto d = h.cast<py::dict>();
            HloModuleText t;
            t.name = d["name"].cast<std::string>();
            t.text = d["text"].cast<std::string>();
            s->hlo_modules.push_back(t);
          }
          s->meta.start_ns = spec.contains("start_ns") ? spec["start_ns"].cast<uint64_t>() : 0;
          s->meta.end_ns = spec.contains("end_ns") ? spec["end_ns"].cast<uint64_t>() : 0;
          return s;
        },
        py::arg("spec"));

    const auto ceilings_dict = [](const Ceilings& c) {
      py::dict d, peaks, sources;
      for (std::size_t i = 0; i < kPrecisionCount; ++i) {
        peaks[precision_name(static_cast<Precision>(i))] = c.peak_flops_per_s[i];
        sources[precision_name(static_cast<Precision>(i))] = ceiling_source_name(c.flops_source[i]);
      }
      d["device_name"] = c.device_name;
      d["architecture"] = c.architecture;
      d["architecture_exact"] = c.architecture_exact;
      d["peak_flops_per_s"] = peaks;
      d["flops_source"] = sources;
      d["dram_bytes_per_s"] = c.dram_bytes_per_s;
      d["dram_source"] = ceiling_source_name(c.dram_source);
      d["link_bytes_per_s"] = c.link_bytes_per_s;
      d["link_source"] = ceiling_source_name(c.link_source);
      d["link_description"] = c.link_description;
      return d;
    };
    // Ceilings from a dict as ceilings_dict writes it (sources given per value).
    const auto ceilings_from = [](const py::dict& d) {
      Ceilings c;
      const auto src = [](const std::string& s) {
        return s == "measured" ? CeilingSource::kMeasured
               : s == "table"  ? CeilingSource::kTable
               : s == "user"   ? CeilingSource::kUser
                               : CeilingSource::kUnknown;
      };
      if (d.contains("device_name")) c.device_name = d["device_name"].cast<std::string>();
      if (d.contains("architecture")) c.architecture = d["architecture"].cast<std::string>();
      const py::dict peaks = d.contains("peak_flops_per_s") ? d["peak_flops_per_s"].cast<py::dict>() : py::dict();
      const py::dict srcs = d.contains("flops_source") ? d["flops_source"].cast<py::dict>() : py::dict();
      for (std::size_t i = 0; i < kPrecisionCount; ++i) {
        const char* n = precision_name(static_cast<Precision>(i));
        if (peaks.contains(n)) c.peak_flops_per_s[i] = peaks[n].cast<double>();
        c.flops_source[i] = srcs.contains(n) ? src(srcs[n].cast<std::string>()) : CeilingSource::kUser;
      }
      if (d.contains("dram_bytes_per_s")) c.dram_bytes_per_s = d["dram_bytes_per_s"].cast<double>();
      c.dram_source = d.contains("dram_source") ? src(d["dram_source"].cast<std::string>()) : CeilingSource::kUser;
      if (d.contains("link_bytes_per_s")) c.link_bytes_per_s = d["link_bytes_per_s"].cast<double>();
      c.link_source = d.contains("link_source") ? src(d["link_source"].cast<std::string>()) : CeilingSource::kUser;
      if (d.contains("link_description")) c.link_description = d["link_description"].cast<std::string>();
      return c;
    };
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
    const auto point_dict = [](const RooflinePoint& p, py::dict d) {
      d["kernel_count"] = p.kernel_count;
      d["executions"] = p.executions;
      d["time_ns"] = p.time_ns;
      d["time_s"] = static_cast<double>(p.time_ns) * 1e-9;
      d["mean_kernel_ns"] = p.mean_kernel_ns();
      d["mean_blocks"] = p.mean_blocks;
      d["flops"] = p.flops;
      d["bytes"] = p.bytes;
      d["cost_coverage"] = p.cost_coverage;
      d["intensity"] = p.intensity;
      d["achieved_flops_per_s"] = p.achieved_flops_per_s;
      d["lower_bound_bytes"] = p.lower_bound_bytes;
      d["lower_bound_bytes_per_s"] =
          p.lower_bound_bytes_per_s > 0 ? py::object(py::float_(p.lower_bound_bytes_per_s)) : py::object(py::none());
      d["achieved_bytes_per_s"] = p.achieved_bytes_per_s;
      d["precision"] = precision_name(p.precision);
      d["roof_flops_per_s"] = p.roof_flops_per_s;
      d["ridge_flops_per_byte"] = p.ridge_flops_per_byte;
      d["percent_of_roof"] = p.percent_of_roof;
      d["bound"] = bound_name(p.bound);
      d["has_measured"] = p.has_measured;
      if (p.has_measured) {
        d["measured_kernel_count"] = p.measured_kernel_count;
        d["measured_time_ns"] = p.measured_time_ns;
        d["measured_coverage"] = p.measured_coverage;
        d["measured_flops"] = p.measured_flops;
        d["measured_bytes"] = p.measured_bytes;
        d["measured_intensity"] = p.measured_intensity;
        d["measured_percent_of_roof"] = p.measured_percent_of_roof;
        d["measured_bound"] = bound_name(p.measured_bound);
      }
      return d;
    };
    const auto stats_dict = [](const TransferStats& s) {
      py::dict d;
      d["count"] = s.count;
      d["bytes"] = s.bytes;
      d["busy_ns"] = s.busy_ns;
      d["duration_sum_ns"] = s.duration_sum_ns;
      d["kernel_overlap_ns"] = s.kernel_overlap_ns;
      d["pinned_count"] = s.pinned_count;
      d["pageable_count"] = s.pageable_count;
      d["pageable_bytes"] = s.pageable_bytes;
      d["sync_count"] = s.sync_count;
      d["async_count"] = s.async_count;
      d["tiny_count"] = s.tiny_count;
      d["achieved_bytes_per_s"] = s.achieved_bytes_per_s();
      d["link_bytes"] = s.link_bytes;
      d["link_capacity_bytes"] = s.link_capacity_bytes;
      return d;
    };

    // Hardware counters (cpp/src/cupti/counters.cpp); fpgaprof.trace(counters=True) drives it.
    py::class_<CounterSession>(r, "CounterSession")
        .def_static(
            "start",
            [](std::size_t max_ranges, int device) {
              CounterOptions o;
              o.max_ranges = max_ranges;
              o.device = device;
              return CounterSession::start(o);
            },
            py::arg("max_ranges") = 2048, py::arg("device") = 0)
        .def("checkpoint",
             [](CounterSession& c) {
               py::gil_scoped_release nogil;
               c.checkpoint();
             })
        .def("finish",
             [](CounterSession& c) {
               py::gil_scoped_release nogil;
               c.finish();
             })
        .def(
            "stop_into",
            [](CounterSession& c, TraceStore& store) {
              CounterMatch m;
              {
                py::gil_scoped_release nogil;
                m = c.stop_into(store);
              }
              py::dict d;
              d["matched"] = m.matched;
              d["unmatched_ranges"] = m.unmatched_ranges;
              d["dropped_ranges"] = m.dropped_ranges;
              d["unprofiled_kernels"] = m.unprofiled_kernels;
              d["ambiguous_windows"] = m.ambiguous_windows;
              d["unpaired_kernels"] = m.unpaired_kernels;
              d["matched_copies"] = m.matched_copies;
              d["timed_from_counters"] = m.timed_from_counters;
              return d;
            },
            py::arg("store"))
        .def_property_readonly("metrics", &CounterSession::metrics)
        .def_property_readonly("warnings", &CounterSession::warnings);
    r.def(
        "counter_plan",
        [](const std::string& chip, const std::vector<std::string>& metrics, int device) {
          CounterPlan p;
          {
            py::gil_scoped_release nogil;
            p = plan_counters(chip, metrics, device);
          }
          py::list ms;
          for (const CounterMetricInfo& m : p.metrics) {
            py::dict d;
            d["role"] = m.role;
            d["name"] = m.name;
            d["description"] = m.description;
            d["hw_unit"] = m.hw_unit;
            d["unit"] = m.unit;
            ms.append(d);
          }
          py::dict d;
          d["chip"] = p.chip;
          d["chip_from_device"] = p.chip_from_device;
          d["cupti_path"] = p.cupti_path;
          d["metrics"] = ms;
          d["missing"] = p.missing;
          d["passes"] = p.passes;
          d["config_image_bytes"] = p.config_image_bytes;
          return d;
        },
        py::arg("chip") = "", py::arg("metrics") = std::vector<std::string>{}, py::arg("device") = 0);
    r.def("counter_chips", [] { return counter_chips(); });
    r.def(
        "hlo_module_texts",
        [](const TraceStore& store) {
          py::list out;
          for (const HloModuleText& t : store.hlo_modules) out.append(py::make_tuple(t.name, t.program_id, t.text));
          return out;
        },
        py::arg("store"));
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
    // XLA's buffer assignment of one module (and its live ranges, its HLO text when given):
    // the module's memory over its schedule (module_memory.hpp) as a dict. A dump that does not
    // parse raises fpgaprof.HloParseError (.line); bad HLO text too (.line, .column).
    r.def(
        "module_memory",
        [](const std::string& buffer_assignment, const std::string& live_ranges, const std::string& hlo_text,
           const std::string& name) {
          ModuleMemory mm;
          try {
            py::gil_scoped_release nogil;
            const hlo::BufferAssignment a = hlo::parse_buffer_assignment(buffer_assignment);
            std::optional<hlo::LiveRanges> ranges;
            if (!live_ranges.empty()) ranges = hlo::parse_live_ranges(live_ranges);
            std::optional<hlo::Module> mod;
            if (!hlo_text.empty()) mod = hlo::parse_hlo_module(hlo_text);
            mm = module_memory(name.empty() && mod ? mod->name : name, a, ranges ? &*ranges : nullptr,
                               mod ? &*mod : nullptr);
          } catch (const hlo::BufferAssignmentParseError& e) {
            raise_buffer_parse_error(e);
          }
          return module_memory_dict(mm);
        },
        py::arg("buffer_assignment"), py::arg("live_ranges") = "", py::arg("hlo_text") = "", py::arg("name") = "");
    // What one instruction needs on chip (module_memory.hpp onchip_need): a dict of input_bytes,
    // output_bytes, temporary_bytes, total_bytes; None when the module has no such instruction.
    r.def(
        "onchip_need",
        [](const std::string& hlo_text, const std::string& buffer_assignment, const std::string& instruction) {
          OnChipNeed need;
          try {
            py::gil_scoped_release nogil;
            const hlo::Module mod = hlo::parse_hlo_module(hlo_text);
            need = onchip_need(mod, hlo::parse_buffer_assignment(buffer_assignment), instruction);
          } catch (const hlo::BufferAssignmentParseError& e) {
            raise_buffer_parse_error(e);
          }
          if (!need.known) return py::object(py::none());
          py::dict d;
          d["input_bytes"] = need.input_bytes;
          d["output_bytes"] = need.output_bytes;
          d["temporary_bytes"] = need.temporary_bytes;
          d["total_bytes"] = need.total_bytes();
          return py::object(d);
        },
        py::arg("hlo_text"), py::arg("buffer_assignment"), py::arg("instruction"));
    // The static what-if of a whole HLO module on a card (no trace): one row per op, the
    // function's card time, transfers and total, each as nominal with its range.
    r.def(
        "estimate_hlo",
        [=](const std::string& text, py::object target_obj) {
          const FpgaTarget target = py::isinstance<py::str>(target_obj) ? fpga_preset(target_obj.cast<std::string>())
                                                                        : target_from(target_obj.cast<py::dict>());
          ModuleEstimate est;
          {
            std::shared_ptr<hlo::Module> mod;
            try {
              py::gil_scoped_release nogil;
              mod = std::make_shared<hlo::Module>(hlo::analyze_hlo(text));
              est = estimate_module(*mod, target);
            } catch (const hlo::HloParseError& e) {
              bindings::raise_hlo_parse_error(e);
            }
          }
          const auto range = [](py::dict& d, const std::string& key, const TimeRange& r) {
            d[key.c_str()] = r.nominal;
            const std::string stem =
                key.size() > 2 && key.compare(key.size() - 2, 2, "_s") == 0 ? key.substr(0, key.size() - 2) : key;
            d[(stem + "_low_s").c_str()] = r.low;
            d[(stem + "_high_s").c_str()] = r.high;
          };
          py::dict out;
          out["module"] = est.module;
          out["target"] = target_dict(est.target);
          range(out, "card_time_s", est.card_time_s);
          range(out, "restructured_card_time_s", est.restructured_card_time_s);
          range(out, "call_latency_s", est.call_latency_s);
          out["transfer_bytes"] = est.transfer_bytes;
          out["transfer_buffers"] = est.transfer_buffers;
          range(out, "transfer_s", est.transfer_s);
          range(out, "total_s", est.total_s);
          range(out, "restructured_total_s", est.restructured_total_s);
          out["not_estimated_count"] = est.not_estimated_count;
          out["notes"] = est.notes;
          py::list rows;
          for (const StaticOpEstimate& o : est.ops) {
            py::dict d;
            d["op"] = o.op;
            d["computation"] = o.computation;
            d["opcode"] = o.opcode;
            d["pattern"] = hlo::access_pattern_name(o.pattern);
            d["precision"] = precision_name(o.precision);
            d["source"] = o.source;
            d["executions"] = o.executions;
            d["estimated"] = o.estimated;
            d["flops"] = o.flops;
            d["bytes"] = o.bytes;
            d["stream_bytes"] = o.stream_bytes;
            d["random_bytes"] = o.random_bytes;
            d["compulsory_bytes"] = o.compulsory_bytes;
            d["memory_efficiency"] = o.memory_efficiency;
            d["card_limit"] = o.card_limit;
            range(d, "card_compute_s", o.card_compute_s);
            range(d, "card_memory_s", o.card_memory_s);
            d["card_latency_s"] = 0.0;
            range(d, "card_time_s", o.card_time_s);
            range(d, "restructured_card_time_s", o.restructured_time_s);
            d["restructured_onchip"] =
                o.estimated ? py::object(py::bool_(o.restructured_onchip)) : py::object(py::none());
            d["estimate_note"] = o.estimate_note;
            d["restructured_basis"] = o.restructured_basis;
            rows.append(d);
          }
          out["ops"] = rows;
          return out;
        },
        py::arg("hlo_text"), py::arg("target") = "alveo-u55c");
    r.def(
        "table_ceilings",
        [ceilings_dict](const TraceStore& store, std::size_t device) -> py::object {
          if (device >= store.devices.size()) return py::none();
          return ceilings_dict(table_ceilings(store.devices[device]));
        },
        py::arg("store"), py::arg("device") = 0);

    // The whole analysis in one call: analyze_trace (GIL released), its result converted.
    // `ceilings`: a dict as table_ceilings returns (e.g. merged with measured values) or None for
    // the table. `region_rows`: "path" (one row per region path, instances summed) or "instance"
    // (one row per region record) for the transfer groups, memory regions and roofline regions.
    // `with_attribution`: also return the analysis' AttributionResult under "attribution" (equal
    // to attribution.attribute(store); not kept otherwise, 4 bytes per kernel). `other_targets`:
    // more cards (preset names or dicts) whose op and region rankings come back, in that order,
    // under "fpga_other_targets", each shaped as "fpga".
    r.def(
        "analyze",
        [=](const TraceStore& store, py::object ceilings_obj, py::object target_obj, double workload_ns,
            bool inputs_cross_link, uint64_t tiny_bytes, uint64_t tiny_flood_count, uint64_t latency_kernel_ns,
            std::size_t top_buffers, const std::string& region_rows_name, bool with_attribution,
            const py::list& other_targets) {
          if (region_rows_name != "path" && region_rows_name != "instance")
            throw Error(ErrorKind::kInvalidArgument,
                        "region_rows='" + region_rows_name + "': use 'path' (one row per region path) or 'instance'");
          AnalysisOptions o;
          o.region_rows = region_rows_name == "path" ? RegionRows::kPaths : RegionRows::kInstances;
          if (!ceilings_obj.is_none()) o.ceilings = ceilings_from(ceilings_obj.cast<py::dict>());
          o.fpga_target = py::isinstance<py::str>(target_obj) ? fpga_preset(target_obj.cast<std::string>())
                                                              : target_from(target_obj.cast<py::dict>());
          for (const py::handle t : other_targets)
            o.other_fpga_targets.push_back(py::isinstance<py::str>(t) ? fpga_preset(t.cast<std::string>())
                                                                      : target_from(t.cast<py::dict>()));
          o.workload_ns = workload_ns;
          o.inputs_cross_link = inputs_cross_link;
          o.tiny_bytes = tiny_bytes;
          o.tiny_flood_count = tiny_flood_count;
          o.latency_kernel_ns = latency_kernel_ns;
          o.top_buffers = top_buffers;
          o.keep_record_attribution = with_attribution;
          TraceAnalysis a;
          {
            py::gil_scoped_release nogil;
            a = analyze_trace(store, o);
          }
          const Ceilings& c = a.ceilings;
          const RegionPaths& paths = a.region_paths;
          const OpInputs& in = a.op_inputs;
          const TransferReport& tr = a.transfers;
          const MemoryReport& mr = a.memory;
          const DeviceReport& dvr = a.devices;
          const RooflineReport& rr = a.roofline;
          const std::vector<std::string>& warnings = a.warnings;
          py::dict out;
          out["ceilings"] = ceilings_dict(c);
          out["warnings"] = warnings;
          out["region_rows"] = region_rows_name;
          // Per-path rows: "region" is the path (as in the FPGA region candidates), "name" the
          // innermost name. Per-instance rows keep "region" = the record's name and add its "path".
          const auto path_keys = [&paths](py::dict& d, uint32_t p) {
            d["region"] = paths.path(p);
            d["name"] = paths.name(p);
            d["depth"] = paths.depth(p);
            d["instances"] = paths.instances(p);
          };
          const auto instance_path = [&paths](uint32_t r) { return paths.path(paths.path_of(r)); };
          // Transfers
          py::list groups;
          for (const TransferGroup& g : tr.groups) {
            py::dict d, dirs;
            d["kind"] = group_kind_name(g.kind);
            d["index"] = g.index == kNone32 ? py::object(py::none()) : py::object(py::int_(g.index));
            d["name"] = g.kind == GroupKind::kRegion
                            ? py::object(py::str(store.strings.get(store.regions[g.index].name)))
                        : g.kind == GroupKind::kOp ? py::object(py::str(in.ops[g.index].name))
                                                   : py::object(py::str("trace"));
            if (g.kind == GroupKind::kRegionPath) path_keys(d, g.index);
            if (g.kind == GroupKind::kRegion) d["path"] = instance_path(g.index);
            for (std::size_t k = 0; k < kDirectionCount; ++k) {
              if (g.by_direction[k].count == 0) continue;
              py::dict sd = stats_dict(g.by_direction[k]);
              const auto dir = static_cast<Direction>(k);
              // None when no copy's link peak is known (0 would read as an idle link); per device
              // link, TransferReport::link_percent.
              if (dir == Direction::kHtoD || dir == Direction::kDtoH)
                sd["link_percent"] = g.by_direction[k].link_capacity_bytes > 0
                                         ? py::object(py::float_(tr.link_percent(g, dir)))
                                         : py::object(py::none());
              dirs[direction_name(dir)] = sd;
            }
            d["directions"] = dirs;
            d["all"] = stats_dict(g.all);
            d["host_wait_ns"] = g.host_wait_ns;
            d["sync_calls"] = g.sync_calls;
            groups.append(d);
          }
          py::list flags;
          for (const TransferFlag& f : tr.flags) {
            py::dict d;
            d["kind"] = f.kind;
            d["group_kind"] = group_kind_name(f.group_kind);
            d["index"] = f.index == kNone32 ? py::object(py::none()) : py::object(py::int_(f.index));
            d["count"] = f.count;
            d["bytes"] = f.bytes;
            d["message"] = f.message;
            if (f.group_kind == GroupKind::kRegionPath) d["region"] = paths.path(f.index);
            flags.append(d);
          }
          py::dict td;
          td["groups"] = groups;
          td["flags"] = flags;
          td["flags_left_out"] = tr.flags_left_out;
          td["link_bytes_per_s"] = tr.link_bytes_per_s;
          td["link_source"] = tr.link_source;
          td["link_description"] = tr.link_description;
          out["transfers"] = td;
          // Memory
          py::dict md;
          md["peak_in_use_bytes"] = mr.peak_in_use_bytes;
          md["peak_ns"] = mr.peak_ns;
          md["allocation_count"] = mr.allocation_count;
          md["free_count"] = mr.free_count;
          md["unmatched_frees"] = mr.unmatched_frees;
          md["unmatched_free_bytes"] = mr.unmatched_free_bytes;
          md["reallocated_live"] = mr.reallocated_live;
          md["never_freed_count"] = mr.never_freed_count;
          md["never_freed_bytes"] = mr.never_freed_bytes;
          py::list ts, tb, tdev, tdb;
          for (const MemoryPoint& p : mr.timeline) {
            ts.append(p.timestamp_ns);
            tb.append(p.in_use_bytes);
            tdev.append(store.allocations[p.allocation_index].device_id);
            tdb.append(p.device_in_use_bytes);
          }
          md["timeline_ns"] = ts;
          md["timeline_in_use_bytes"] = tb;
          md["timeline_device_id"] = tdev;
          md["timeline_device_in_use_bytes"] = tdb;
          py::list devs;
          for (const DeviceMemory& dm : mr.devices) {
            py::dict d;
            d["device_id"] = dm.device_id;
            d["peak_in_use_bytes"] = dm.peak_in_use_bytes;
            d["peak_ns"] = dm.peak_ns;
            d["final_in_use_bytes"] = dm.final_in_use_bytes;
            devs.append(d);
          }
          md["devices"] = devs;
          py::list largest;
          for (const BufferInfo& b : mr.largest) {
            py::dict d;
            d["bytes"] = b.bytes;
            d["address"] = b.address;
            d["alloc_ns"] = b.alloc_ns;
            d["free_ns"] = b.free_ns == kNone64 ? py::object(py::none()) : py::object(py::int_(b.free_ns));
            d["device_id"] = b.device_id;
            d["thread_id"] = b.thread_id;
            // The region path ("outer > inner"), as the per-region rows name it.
            const uint32_t bp = paths.path_of(b.region_index);
            d["region"] = bp != kNone32 ? py::object(py::str(paths.path(bp))) : py::object(py::none());
            d["api_call"] =
                b.api_index < store.api_calls.size()
                    ? py::object(py::str(store.strings.get(store.api_function_of(store.api_calls[b.api_index]).name)))
                    : py::object(py::none());
            largest.append(d);
          }
          md["largest"] = largest;
          py::list regs;
          for (const RegionMemory& rm : mr.regions) {
            py::dict d;
            d["region"] = store.strings.get(store.regions[rm.region_index].name);
            d["index"] = rm.region_index;
            d["path"] = instance_path(rm.region_index);
            d["in_use_at_start_bytes"] = rm.in_use_at_start_bytes;
            d["peak_in_use_bytes"] = rm.peak_in_use_bytes;
            d["allocated_bytes"] = rm.allocated_bytes;
            d["freed_bytes"] = rm.freed_bytes;
            d["allocations"] = rm.allocations;
            d["frees"] = rm.frees;
            regs.append(d);
          }
          for (const RegionPathMemory& pm : mr.region_paths) {
            py::dict d;
            path_keys(d, pm.path);
            d["path_index"] = pm.path;
            d["peak_in_use_bytes"] = pm.peak_in_use_bytes;
            d["peak_region_index"] = pm.peak_region_index;
            d["in_use_at_start_bytes"] = pm.in_use_at_start_bytes;
            d["allocated_bytes"] = pm.allocated_bytes;
            d["freed_bytes"] = pm.freed_bytes;
            d["allocations"] = pm.allocations;
            d["frees"] = pm.frees;
            regs.append(d);
          }
          md["regions"] = regs;
          out["memory"] = md;
          // Devices: one row per device and the load balance (docs/roofline.md, "Several GPUs").
          // Each row's ceilings are its device's table ceilings; a measured or user link peak
          // replaces every device's (as for the transfers), and the first device also takes every
          // value the roofline's ceilings `c` give (measured where calibrated, or the user's).
          {
            py::dict dd, bal;
            py::list drows;
            for (std::size_t i = 0; i < dvr.devices.size(); ++i) {
              const DeviceRow& r = dvr.devices[i];
              py::dict d, dirs, mem;
              d["device_id"] = r.device_id;
              d["has_record"] = r.has_record;
              d["name"] = r.ceilings.device_name;
              d["ceilings"] = ceilings_dict(a.device_ceilings[i]);
              d["kernel_count"] = r.kernel_count;
              d["kernel_time_ns"] = r.kernel_time_ns;
              d["kernel_busy_ns"] = r.kernel_busy_ns;
              d["copy_count"] = r.copy_count;
              d["copy_bytes"] = r.copy_bytes;
              d["copy_busy_ns"] = r.copy_busy_ns;
              d["memset_count"] = r.memset_count;
              d["memset_bytes"] = r.memset_bytes;
              d["busy_ns"] = r.busy_ns;
              d["idle_ns"] = r.idle_ns;
              d["busy_fraction"] = r.busy_fraction;
              d["idle_fraction"] = r.idle_fraction;
              const bool active = r.last_end_ns > r.first_start_ns;
              d["first_start_ns"] = active ? py::object(py::int_(r.first_start_ns)) : py::object(py::none());
              d["last_end_ns"] = active ? py::object(py::int_(r.last_end_ns)) : py::object(py::none());
              for (std::size_t k = 0; k < kDirectionCount; ++k) {
                const DeviceCopyStats& st = r.by_direction[k];
                if (st.count == 0) continue;
                const auto dir = static_cast<Direction>(k);
                const bool link_dir = dir == Direction::kHtoD || dir == Direction::kDtoH;
                py::dict sd;
                sd["count"] = st.count;
                sd["bytes"] = st.bytes;
                sd["busy_ns"] = st.busy_ns;
                sd["achieved_bytes_per_s"] = st.achieved_bytes_per_s();
                sd["link_bytes"] = st.link_bytes;
                // None when the direction does not cross the host link or the link's peak is unknown
                sd["link_bytes_per_s"] = link_dir && st.link_bytes_per_s > 0
                                             ? py::object(py::float_(st.link_bytes_per_s))
                                             : py::object(py::none());
                sd["link_percent"] = link_dir && st.link_bytes_per_s > 0 && st.busy_ns > 0
                                         ? py::object(py::float_(st.link_percent()))
                                         : py::object(py::none());
                dirs[direction_name(dir)] = sd;
              }
              d["directions"] = dirs;
              if (r.has_memory) {
                mem["peak_in_use_bytes"] = r.memory_peak_bytes;
                mem["peak_ns"] = r.memory_peak_ns;
                mem["final_in_use_bytes"] = r.memory_final_bytes;
                d["memory"] = mem;
              } else {
                d["memory"] = py::none();
              }
              py::list threads;
              for (const DeviceThread& t : r.threads) {
                py::dict td2;
                td2["thread_id"] = t.thread_id;
                td2["kernel_count"] = t.kernel_count;
                td2["kernel_time_ns"] = t.kernel_time_ns;
                threads.append(td2);
              }
              d["threads"] = threads;
              drows.append(d);
            }
            const LoadBalance& b = dvr.balance;
            bal["device_count"] = b.device_count;
            bal["active_devices"] = b.active_devices;
            bal["max_busy_ns"] = b.max_busy_ns;
            bal["min_busy_ns"] = b.min_busy_ns;
            bal["mean_busy_ns"] = b.mean_busy_ns;
            bal["imbalance"] = b.mean_busy_ns > 0 ? py::object(py::float_(b.imbalance)) : py::object(py::none());
            bal["slowest_device"] =
                b.slowest_device == kNone32 ? py::object(py::none()) : py::object(py::int_(b.slowest_device));
            bal["least_busy_device"] =
                b.least_busy_device == kNone32 ? py::object(py::none()) : py::object(py::int_(b.least_busy_device));
            bal["spread_ns"] = b.spread_ns;
            bal["spread_fraction"] = b.spread_fraction;
            dd["wall_ns"] = dvr.wall_ns;
            dd["rows"] = drows;
            dd["balance"] = bal;
            out["devices"] = dd;
          }
          // Roofline
          py::dict rd;
          rd["trace"] = point_dict(rr.trace, py::dict());
          py::list ops, regions, names;
          for (std::size_t o = 0; o < rr.ops.size(); ++o) {
            py::dict d;
            d["op"] = in.ops[o].name;
            d["module"] = in.ops[o].module;
            d["pattern"] = hlo::access_pattern_name(in.ops[o].pattern);
            d["source"] = in.sources[o];
            d["category"] = in.categories[o];
            d["cost_known"] = in.ops[o].cost_known;
            // Where its FLOPs and bytes come from: the cost rules, the custom kernel's own metadata,
            // or (no rule) the counters where they measured it (its measured_* columns), else its
            // operands and results only: a lower bound of the bytes, FLOPs unknown.
            d["cost_basis"] = cost_basis_name(in.ops[o], rr.ops[o]);
            ops.append(point_dict(rr.ops[o], d));
          }
          for (std::size_t g = 0; g < rr.regions.size(); ++g) {
            py::dict d;
            d["region"] = store.strings.get(store.regions[g].name);
            d["index"] = g;
            d["path"] = instance_path(static_cast<uint32_t>(g));
            regions.append(point_dict(rr.regions[g], d));
          }
          for (uint32_t p = 0; p < rr.region_paths.size(); ++p) {
            py::dict d;
            path_keys(d, p);
            d["path_index"] = p;
            regions.append(point_dict(rr.region_paths[p], d));
          }
          for (std::size_t k = 0; k < rr.kernel_names.size(); ++k) {
            py::dict d;
            d["kernel"] = store.strings.get(rr.kernel_names[k]);
            names.append(point_dict(rr.by_kernel_name[k], d));
          }
          rd["ops"] = ops;
          rd["regions"] = regions;
          rd["kernels"] = names;
          rd["unattributed_kernels"] = rr.unattributed_kernels;
          rd["unattributed_ns"] = rr.unattributed_ns;
          out["roofline"] = rd;
          // FPGA: the chosen card's rankings, and the same on each other card asked for
          const auto fpga_dict = [&](const FpgaReport& fr, const std::vector<FpgaRegionCandidate>& fregions) {
            py::dict fd;
            fd["target"] = target_dict(fr.target);
            fd["workload_ns"] = fr.workload_ns;
            fd["gpu_kernel_ns"] = fr.gpu_kernel_ns;
            fd["combined_speedup"] = fr.combined_speedup;
            fd["combined_count"] = fr.combined_count;
            fd["combined_speedup_low"] = fr.combined_speedup_low;
            fd["combined_speedup_high"] = fr.combined_speedup_high;
            fd["restructured_combined_speedup"] = fr.restructured_combined_speedup;
            fd["restructured_combined_count"] = fr.restructured_combined_count;
            fd["not_estimated_count"] = fr.not_estimated_count;
            fd["not_estimated_gpu_ns"] = fr.not_estimated_gpu_ns;
            fd["bounded_count"] = fr.bounded_count;
            fd["ruled_out_count"] = fr.ruled_out_count;
            fd["ruled_out_gpu_ns"] = fr.ruled_out_gpu_ns;
            py::list cands;
            uint32_t rank = 0;
            for (const FpgaCandidate& cd : fr.candidates) {
              py::dict d;
              d["rank"] = ++rank;
              d["op"] = cd.name;
              d["module"] = cd.module;
              d["source"] = in.sources[cd.op_index];
              d["pattern"] = hlo::access_pattern_name(cd.pattern);
              d["precision"] = precision_name(cd.precision);
              d["executions"] = cd.executions;
              d["kernel_count"] = cd.kernel_count;
              d["cost_known"] = cd.cost_known;
              d["estimate_note"] = cd.estimate_note;
              d["estimate_basis"] =
                  cd.estimate_basis.empty() ? py::object(py::none()) : py::object(py::str(cd.estimate_basis));
              d["measured_coverage"] = cd.estimate_basis == "measured bound"
                                           ? py::object(py::float_(cd.measured_coverage))
                                           : py::object(py::none());
              d["measured_traffic_ratio"] = cd.measured_traffic_ratio > 0
                                                ? py::object(py::float_(cd.measured_traffic_ratio))
                                                : py::object(py::none());
              d["gpu_time_ns"] = cd.gpu_time_ns;
              d["time_share"] = cd.time_share;
              d["intensity"] = cd.intensity;
              d["ridge"] = cd.ridge;
              d["memory_boundness"] = cd.memory_boundness;
              d["pattern_affinity"] = cd.pattern_affinity;
              d["working_set_bytes"] = cd.working_set_bytes;
              d["onchip_source"] = cd.cost_known ? py::object(py::str(cd.onchip_source)) : py::object(py::none());
              {
                const OpCost& oc = a.op_inputs.ops[cd.op_index];
                const bool xla = oc.working_set_source == "xla buffer assignment";
                d["onchip_input_bytes"] = xla ? py::object(py::float_(oc.onchip_input_bytes)) : py::object(py::none());
                d["onchip_output_bytes"] =
                    xla ? py::object(py::float_(oc.onchip_output_bytes)) : py::object(py::none());
                d["onchip_temporary_bytes"] =
                    xla ? py::object(py::float_(oc.onchip_temporary_bytes)) : py::object(py::none());
              }
              d["sram_bytes"] = cd.sram_bytes;
              d["fits_on_chip"] = cd.cost_known ? py::object(py::bool_(cd.fits_on_chip)) : py::object(py::none());
              d["onchip_factor"] = cd.onchip_factor;
              d["host_bytes_per_call"] = cd.host_bytes_per_call;
              d["link_factor"] = cd.link_factor;
              d["score"] = cd.score;
              d["flops"] = cd.flops;
              d["bytes"] = cd.bytes;
              d["stream_bytes"] = cd.stream_bytes;
              d["random_bytes"] = cd.random_bytes;
              d["memory_efficiency"] = cd.memory_efficiency;
              d["card_limit"] = cd.card_limit;
              d["card_compute_s"] = cd.card_compute_s;
              d["card_memory_s"] = cd.card_memory_s;
              d["card_latency_s"] = cd.card_latency_s;
              d["card_time_s"] = cd.card_time_s;
              d["card_time_low_s"] = cd.card_time_low_s;
              d["card_time_high_s"] = cd.card_time_high_s;
              d["transfer_bytes"] = cd.transfer_bytes;
              d["transfer_s"] = cd.transfer_s;
              d["transfer_low_s"] = cd.transfer_low_s;
              d["transfer_high_s"] = cd.transfer_high_s;
              d["fpga_total_s"] = cd.fpga_total_s;
              d["fpga_total_low_s"] = cd.fpga_total_low_s;
              d["fpga_total_high_s"] = cd.fpga_total_high_s;
              d["op_speedup"] = cd.op_speedup;
              d["op_speedup_low"] = cd.op_speedup_low;
              d["op_speedup_high"] = cd.op_speedup_high;
              d["workload_speedup"] = cd.workload_speedup;
              d["workload_speedup_low"] = cd.workload_speedup_low;
              d["workload_speedup_high"] = cd.workload_speedup_high;
              d["restructured_bytes"] = cd.restructured_bytes;
              d["restructured_onchip"] =
                  cd.cost_known ? py::object(py::bool_(cd.restructured_onchip)) : py::object(py::none());
              d["restructured_card_time_s"] = cd.restructured_card_time_s;
              d["restructured_card_time_low_s"] = cd.restructured_card_time_low_s;
              d["restructured_card_time_high_s"] = cd.restructured_card_time_high_s;
              d["restructured_fpga_total_s"] = cd.restructured_fpga_total_s;
              d["restructured_op_speedup"] = cd.restructured_op_speedup;
              d["restructured_op_speedup_low"] = cd.restructured_op_speedup_low;
              d["restructured_op_speedup_high"] = cd.restructured_op_speedup_high;
              d["restructured_workload_speedup"] = cd.restructured_workload_speedup;
              d["scenario"] = cd.scenario;
              d["verdict"] = cd.verdict;
              d["could_save_ns"] = cd.could_save_ns;
              d["restructured_basis"] = cd.restructured_basis;
              cands.append(d);
            }
            fd["candidates"] = cands;
            py::list rcands;
            rank = 0;
            for (const FpgaRegionCandidate& cd : fregions) {
              const bool estimated = cd.estimated;
              py::dict d;
              d["rank"] = ++rank;
              d["region"] = cd.path;
              d["name"] = cd.name;
              d["depth"] = cd.depth;
              d["estimated"] = cd.estimated;
              d["instances"] = cd.instances;
              d["kernel_count"] = cd.kernel_count;
              d["op_count"] = cd.op_count;
              d["top_op"] = cd.top_op;
              d["estimate_note"] = cd.estimate_note;
              d["gpu_time_ns"] = cd.gpu_time_ns;
              d["time_share"] = cd.time_share;
              d["estimated_share"] = cd.estimated_share;
              d["intensity"] = cd.intensity;
              d["memory_boundness"] = cd.memory_boundness;
              d["pattern_affinity"] = cd.pattern_affinity;
              d["working_set_bytes"] = cd.working_set_bytes;
              d["onchip_source"] = estimated ? py::object(py::str(cd.onchip_source)) : py::object(py::none());
              d["sram_bytes"] = cd.sram_bytes;
              d["fits_on_chip"] = estimated ? py::object(py::bool_(cd.fits_on_chip)) : py::object(py::none());
              d["onchip_factor"] = cd.onchip_factor;
              d["host_bytes_per_instance"] = cd.host_bytes_per_instance;
              d["link_factor"] = cd.link_factor;
              d["score"] = cd.score;
              d["module_calls"] = cd.module_calls;
              d["module_calls_counted"] = cd.module_calls_counted;
              d["flops"] = cd.flops;
              d["bytes"] = cd.bytes;
              d["random_access_bytes"] = cd.random_access_bytes;
              d["memory_efficiency"] = cd.memory_efficiency;
              d["card_compute_s"] = cd.card_compute_s;
              d["card_memory_s"] = cd.card_memory_s;
              d["card_latency_s"] = cd.card_latency_s;
              d["kept_gpu_s"] = cd.kept_gpu_s;
              d["card_time_s"] = cd.card_time_s;
              d["card_time_low_s"] = cd.card_time_low_s;
              d["card_time_high_s"] = cd.card_time_high_s;
              d["transfer_bytes"] = cd.transfer_bytes;
              d["transfer_s"] = cd.transfer_s;
              d["transfer_low_s"] = cd.transfer_low_s;
              d["transfer_high_s"] = cd.transfer_high_s;
              d["fpga_total_s"] = cd.fpga_total_s;
              d["fpga_total_low_s"] = cd.fpga_total_low_s;
              d["fpga_total_high_s"] = cd.fpga_total_high_s;
              d["region_speedup"] = cd.region_speedup;
              d["region_speedup_low"] = cd.region_speedup_low;
              d["region_speedup_high"] = cd.region_speedup_high;
              d["workload_speedup"] = cd.workload_speedup;
              d["workload_speedup_low"] = cd.workload_speedup_low;
              d["workload_speedup_high"] = cd.workload_speedup_high;
              d["restructured_card_time_s"] = cd.restructured_card_time_s;
              d["restructured_card_time_low_s"] = cd.restructured_card_time_low_s;
              d["restructured_card_time_high_s"] = cd.restructured_card_time_high_s;
              d["restructured_fpga_total_s"] = cd.restructured_fpga_total_s;
              d["restructured_region_speedup"] = cd.restructured_region_speedup;
              d["restructured_region_speedup_low"] = cd.restructured_region_speedup_low;
              d["restructured_region_speedup_high"] = cd.restructured_region_speedup_high;
              d["scenario"] = cd.scenario;
              d["verdict"] = cd.verdict;
              d["could_save_ns"] = cd.could_save_ns;
              d["restructured_basis"] = cd.restructured_basis;
              rcands.append(d);
            }
            fd["regions"] = rcands;
            return fd;
          };
          out["fpga"] = fpga_dict(a.fpga, a.fpga_regions);
          py::list other_fpga;
          for (const TraceAnalysis::OtherFpgaTarget& t : a.other_fpga) other_fpga.append(fpga_dict(t.ops, t.regions));
          out["fpga_other_targets"] = other_fpga;
          // Trace totals the reports show (docs/architecture.md, "The analysis result"): busy-time
          // unions, per region path GPU time, kernels by name, per-device DRAM peaks.
          const GpuBusyTime& b = a.busy;
          py::dict totals;
          totals["kernel_count"] = b.kernel_count;
          totals["kernel_time_ns"] = b.kernel_time_ns;
          totals["kernel_busy_ns"] = b.kernel_busy_ns;
          totals["copy_count"] = b.copy_count;
          totals["copy_bytes"] = b.copy_bytes;
          totals["copy_busy_ns"] = b.copy_busy_ns;
          totals["memset_count"] = b.memset_count;
          totals["memset_busy_ns"] = b.memset_busy_ns;
          totals["gpu_busy_ns"] = b.busy_ns;
          out["totals"] = totals;
          py::list prows;
          for (uint32_t p = 0; p < paths.size(); ++p) {
            const RegionPathGpuTime& g = a.region_path_gpu[p];
            py::dict d;
            d["path_index"] = p;
            path_keys(d, p);
            d["parent"] = paths.parent(p) == kNone32 ? py::object(py::none()) : py::object(py::int_(paths.parent(p)));
            d["kernel_count"] = g.kernel_count;
            d["kernel_ns"] = g.kernel_ns;
            d["copy_count"] = g.copy_count;
            d["copy_ns"] = g.copy_ns;
            d["memset_count"] = g.memset_count;
            d["memset_ns"] = g.memset_ns;
            d["gpu_ns"] = g.gpu_ns();
            prows.append(d);
          }
          out["region_paths"] = prows;
          py::list path_of;
          for (uint32_t i = 0; i < paths.region_count(); ++i) path_of.append(paths.path_of(i));
          out["region_path_of"] = path_of;
          py::list knames;
          for (const KernelNameStats& k : a.kernels_by_name) {
            py::dict d;
            d["kernel"] = store.strings.get(k.name);
            d["count"] = k.count;
            d["total_ns"] = k.total_ns;
            d["min_ns"] = k.min_ns;
            d["max_ns"] = k.max_ns;
            knames.append(d);
          }
          out["kernels_by_name"] = knames;
          out["device_dram_bytes_per_s"] = a.device_dram_bytes_per_s;
          py::list mems;
          for (const ModuleMemory& mm : a.module_memory) mems.append(module_memory_dict(mm));
          out["module_memory"] = mems;
          py::dict coll;
          coll["kernel_count"] = a.collectives.kernel_count;
          coll["kernel_ns"] = a.collectives.kernel_ns;
          coll["busy_ns"] = a.collectives.busy_ns;
          coll["compute_busy_ns"] = a.collectives.compute_busy_ns;
          coll["overlap_ns"] = a.collectives.overlap_ns;
          py::list kinds;
          for (const CollectiveKindStats& k : a.collectives.by_kind) {
            py::dict d;
            d["kind"] = k.kind;
            d["count"] = k.count;
            d["total_ns"] = k.total_ns;
            kinds.append(d);
          }
          coll["by_kind"] = kinds;
          coll["first_end_ns"] = a.collectives.first_end_ns;
          out["collectives"] = coll;
          out["energy"] = bindings::energy_dict(a.energy, paths, a.op_inputs);
          if (with_attribution) out["attribution"] = std::make_shared<AttributionResult>(std::move(a.attribution));
          return out;
        },
        py::arg("store"), py::arg("ceilings") = py::none(), py::arg("target") = "alveo-u55c",
        py::arg("workload_ns") = 0.0, py::arg("inputs_cross_link") = true, py::arg("tiny_bytes") = 64 * 1024,
        py::arg("tiny_flood_count") = 1000, py::arg("latency_kernel_ns") = 5000, py::arg("top_buffers") = 20,
        py::arg("region_rows") = "path", py::arg("with_attribution") = false, py::arg("other_targets") = py::list());
  }
}

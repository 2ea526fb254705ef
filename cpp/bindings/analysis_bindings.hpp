// The analysis submodule of fpgaprof._core, apart from the cards (bindings.cpp): hardware
// counters, module memory, the static module estimate, the table ceilings and the whole
// analysis (analyze). Converts only: result rows go through their field tables
// (result_convert.hpp, analysis/result_schema.hpp).
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core_bindings.hpp"
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
#include "fpgaprof/trace_store.hpp"
#include "result_convert.hpp"

namespace fpgaprof::bindings {

// A card from Python (a preset name or a dict), which lives with the card bindings (bindings.cpp).
using TargetOf = std::function<analysis::FpgaTarget(const py::handle&)>;

// A buffer-assignment or live-range dump that does not parse: fpgaprof.HloParseError with .line.
[[noreturn]] inline void raise_buffer_parse_error(const fpgaprof::hlo::BufferAssignmentParseError& e) {
  py::object cls = py::module_::import("fpgaprof.errors").attr("HloParseError");
  py::object exc = cls(e.what());
  exc.attr("line") = e.line();
  exc.attr("column") = 0;
  exc.attr("text") = "";
  PyErr_SetObject(cls.ptr(), exc.ptr());
  throw py::error_already_set();
}

inline void bind_analysis(py::module_& r, const TargetOf& target_of) {
  using namespace fpgaprof::analysis;
  bind_result_fields(r);
  // Ceilings from a dict as table_ceilings writes it (the `ceilings` table; sources given per
  // value, a value not given is the user's).
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
            return typed<"CounterMatch">(fields_dict(counter_match_fields(), m));
          },
          py::arg("store"))
      .def_property_readonly("metrics", &CounterSession::metrics)
      .def_property_readonly("warnings", [](const CounterSession& c) { return c.warnings().messages(); });
  r.def(
      "counter_plan",
      [](const std::string& chip, const std::vector<std::string>& metrics, int device) {
        CounterPlan p;
        {
          py::gil_scoped_release nogil;
          p = plan_counters(chip, metrics, device);
        }
        return typed<"CounterPlan">(fields_dict(counter_plan_fields(), p));
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
        return typed<"ModuleMemory">(fields_dict(module_memory_fields(), mm));
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
        if (!need.known) return std::optional<TypedRow<"OnchipNeed">>();
        return std::optional(typed<"OnchipNeed">(fields_dict(onchip_need_fields(), need)));
      },
      py::arg("hlo_text"), py::arg("buffer_assignment"), py::arg("instruction"));
  // A row imbalance ratio as every FPGA estimate takes it (0: not known), checked before an
  // analysis runs: InvalidArgumentError naming the value and the fix.
  r.def(
      "validate_row_imbalance", [](double row_imbalance) { validate_row_imbalance(row_imbalance); },
      py::arg("row_imbalance"));
  // The static what-if of a whole HLO module on a card (no trace): one row per op, the
  // function's card time, transfers and total, each as nominal with its range.
  r.def(
      "estimate_hlo",
      // the str's own UTF-8 buffer, not a copy
      [=](std::string_view text, py::object target_obj, double row_imbalance) {
        const FpgaTarget target = target_of(target_obj);
        validate_row_imbalance(row_imbalance);
        ModuleEstimate est;
        {
          std::shared_ptr<hlo::Module> mod;
          try {
            py::gil_scoped_release nogil;
            mod = std::make_shared<hlo::Module>(hlo::analyze_hlo(text));
            est = estimate_module(*mod, target, row_imbalance);
          } catch (const hlo::HloParseError& e) {
            bindings::raise_hlo_parse_error(e);
          }
        }
        // The ops are converted apart, from the last row to the first, each C++ row released once
        // converted (the vector shrunk as it halves): the C++ rows and the Python rows are not
        // all held at once. The table writes "ops" (empty here) at its place; the list replaces it.
        std::vector<StaticOpEstimate> ops = std::move(est.ops);
        est.ops = {};
        py::dict out = fields_dict(module_estimate_fields(), est);
        const std::size_t n = ops.size();
        py::list rows(n);
        for (std::size_t k = n; k-- > 0;) {
          rows[k] = fields_dict(module_estimate_op_fields(), ops.back());
          ops.pop_back();
          if (ops.size() < ops.capacity() / 2) ops.shrink_to_fit();
        }
        out["ops"] = rows;
        return typed<"ModuleEstimate">(out);
      },
      py::arg("hlo_text"), py::arg("target") = "alveo-u55c", py::arg("row_imbalance") = 0.0);
  r.def(
      "table_ceilings", [](const TraceStore& store, std::size_t device) -> std::optional<TypedRow<"Ceilings">> {
        if (device >= store.devices.size()) return std::nullopt;
        return typed<"Ceilings">(fields_dict(ceilings_fields(), table_ceilings(store.devices[device])));
      },
      py::arg("store"), py::arg("device") = 0);

  // The whole analysis in one call: analyze_trace (GIL released), its result converted.
  // `ceilings`: a dict as table_ceilings returns (e.g. merged with measured values) or None for
  // the table. `region_rows`: "path" (one row per region path, instances summed) or "instance"
  // (one row per region record) for the transfer groups, memory regions and roofline regions.
  // `with_attribution`: also return the analysis' AttributionResult under "attribution" (equal
  // to attribution.attribute(store); not kept otherwise, 4 bytes per kernel). `other_targets`:
  // more cards (preset names or dicts) whose op and region rankings come back, in that order,
  // under "fpga_other_targets", each shaped as "fpga". `row_imbalance`: the user's HiSpMV delta
  // for the restructured scatters of both rankings (0: not known; checked by the core).
  r.def(
      "analyze",
      [=](const TraceStore& store, py::object ceilings_obj, py::object target_obj, double workload_ns,
          bool inputs_cross_link, uint64_t tiny_bytes, uint64_t tiny_flood_count, uint64_t latency_kernel_ns,
          std::size_t top_buffers, const std::string& region_rows_name, bool with_attribution,
          const py::list& other_targets, double row_imbalance) {
        if (region_rows_name != "path" && region_rows_name != "instance")
          throw Error(ErrorKind::kInvalidArgument,
                      "region_rows='" + region_rows_name + "': use 'path' (one row per region path) or 'instance'");
        AnalysisOptions o;
        o.region_rows = region_rows_name == "path" ? RegionRows::kPaths : RegionRows::kInstances;
        if (!ceilings_obj.is_none()) o.ceilings = ceilings_from(ceilings_obj.cast<py::dict>());
        o.fpga_target = target_of(target_obj);
        for (const py::handle t : other_targets) o.other_fpga_targets.push_back(target_of(t));
        o.workload_ns = workload_ns;
        o.inputs_cross_link = inputs_cross_link;
        o.row_imbalance = row_imbalance;
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
        // The result from its table (analysis/result_schema.hpp), every nested value but the
        // FPGA rankings and the attribution written by the tables themselves.
        auto out = fields_dict(trace_analysis_fields(), a, AnalyzeContext{with_attribution, &store});
        // FPGA: the chosen card's rankings, and the same on each other card asked for
        const auto fpga_dict = [&](const FpgaReport& fr, const std::vector<FpgaRegionCandidate>& fregions) {
          auto fd = fields_dict(fpga_report_fields(), fr);
          py::list cands;
          FpgaOpRowContext op_ctx{&a.op_inputs, 0};
          for (const FpgaCandidate& cd : fr.candidates) {
            ++op_ctx.rank;
            cands.append(fields_dict(fpga_op_row_fields(), cd, op_ctx));
          }
          fd["candidates"] = cands;
          py::list rcands;
          RankContext region_ctx;
          for (const FpgaRegionCandidate& cd : fregions) {
            ++region_ctx.rank;
            rcands.append(fields_dict(fpga_region_row_fields(), cd, region_ctx));
          }
          fd["regions"] = rcands;
          return fd;
        };
        out["fpga"] = fpga_dict(a.fpga, a.fpga_regions);
        py::list other_fpga;
        for (const TraceAnalysis::OtherFpgaTarget& t : a.other_fpga) other_fpga.append(fpga_dict(t.ops, t.regions));
        out["fpga_other_targets"] = other_fpga;
        if (with_attribution) out["attribution"] = std::make_shared<AttributionResult>(std::move(a.attribution));
        return typed<"TraceAnalysis">(std::move(out));
      },
      py::arg("store"), py::arg("ceilings") = py::none(), py::arg("target") = "alveo-u55c",
      py::arg("workload_ns") = 0.0, py::arg("inputs_cross_link") = true, py::arg("tiny_bytes") = 64 * 1024,
      py::arg("tiny_flood_count") = 1000, py::arg("latency_kernel_ns") = 5000, py::arg("top_buffers") = 20,
      py::arg("region_rows") = "path", py::arg("with_attribution") = false, py::arg("other_targets") = py::list(),
      py::arg("row_imbalance") = 0.0);
}

}  // namespace fpgaprof::bindings

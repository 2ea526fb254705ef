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
    // The card's fields as plain numbers, and its calibrated ones as <field>, <field>_low,
    // <field>_high (nominal and the ends of the measured spread).
    static const std::pair<const char*, double FpgaTarget::*> kTargetNumbers[] = {
        {"memory_channel_bytes_per_s", &FpgaTarget::memory_channel_bytes_per_s},
        {"memory_capacity_bytes", &FpgaTarget::memory_capacity_bytes},
        {"sram_bytes", &FpgaTarget::sram_bytes},
        {"dsps_per_fma_fp64", &FpgaTarget::dsps_per_fma_fp64},
        {"dsps_per_fma_fp32", &FpgaTarget::dsps_per_fma_fp32},
        {"dsps_per_fma_fp16", &FpgaTarget::dsps_per_fma_fp16},
        {"fp64_flops_per_s", &FpgaTarget::fp64_flops_per_s},
        {"fp32_flops_per_s", &FpgaTarget::fp32_flops_per_s},
        {"fp16_flops_per_s", &FpgaTarget::fp16_flops_per_s},
        {"link_bytes_per_s", &FpgaTarget::link_bytes_per_s},
        {"random_granule_bytes", &FpgaTarget::random_granule_bytes}};
    static const std::pair<const char*, Calibrated FpgaTarget::*> kTargetCalibrated[] = {
        {"clock_hz", &FpgaTarget::clock_hz},
        {"dsp_utilization", &FpgaTarget::dsp_utilization},
        {"stream_efficiency", &FpgaTarget::stream_efficiency},
        {"channel_share", &FpgaTarget::channel_share},
        {"random_reads_per_s", &FpgaTarget::random_reads_per_s},
        {"rmw_updates_per_s", &FpgaTarget::rmw_updates_per_s},
        {"cross_channel_factor", &FpgaTarget::cross_channel_factor},
        {"onchip_share", &FpgaTarget::onchip_share},
        {"onchip_lanes", &FpgaTarget::onchip_lanes},
        {"sort_bytes_per_s", &FpgaTarget::sort_bytes_per_s},
        {"link_efficiency", &FpgaTarget::link_efficiency},
        {"transfer_latency_s", &FpgaTarget::transfer_latency_s},
        {"call_latency_s", &FpgaTarget::call_latency_s}};
    const auto target_dict = [](const FpgaTarget& t) {
      py::dict d;
      d["name"] = t.name;
      d["description"] = t.description;
      d["memory_type"] = t.memory_type;
      d["memory_channels"] = t.memory_channels;
      d["dsp_count"] = t.dsp_count;
      for (const auto& [k, member] : kTargetNumbers) d[k] = t.*member;
      for (const auto& [k, member] : kTargetCalibrated) {
        const Calibrated& c = t.*member;
        d[k] = c.nominal;
        d[(std::string(k) + "_low").c_str()] = c.low;
        d[(std::string(k) + "_high").c_str()] = c.high;
      }
      // Outputs (the rates the model derives); a dict of them goes back in unchanged and an
      // edited clock or DSP count still counts: they are worked out again.
      d["memory_bytes_per_s"] = t.memory_bytes_per_s();
      const auto prec = [&](const char* key, Precision p) {
        d[(std::string("card_") + key + "_flops_per_s").c_str()] = t.flops_per_s(p);
        d[(std::string("card_") + key + "_flops_per_s_low").c_str()] =
            t.flops_per_s(p, t.clock_hz.low, t.dsp_utilization.low);
        d[(std::string("card_") + key + "_flops_per_s_high").c_str()] =
            t.flops_per_s(p, t.clock_hz.high, t.dsp_utilization.high);
      };
      prec("fp64", Precision::kFp64);
      prec("fp32", Precision::kFp32);
      prec("fp16", Precision::kFp16);
      d["stream_bytes_per_s"] = static_cast<double>(t.memory_channels) * t.channel_share.nominal *
                                t.memory_channel_bytes_per_s * t.stream_efficiency.nominal;
      return d;
    };
    // A user card from a dict: unknown keys, non-numbers and values validate_fpga_target rejects
    // raise InvalidArgumentError naming the field. With `base`, the preset's name is kept
    // ("versal-v80 (modified)") unless `name` is given. A calibrated field given alone is exact
    // (its range collapses to it) unless its _low/_high are given too.
    const auto target_from = [](const py::dict& d) {
      std::string valid = "base, name, description, memory_type, memory_channels, memory_bytes_per_s, dsp_count";
      for (const auto& [k, _] : kTargetNumbers) valid += std::string(", ") + k;
      for (const auto& [k, _] : kTargetCalibrated) valid += std::string(", ") + k + " (+ _low, _high)";
      const auto text = [&](const std::string& k) {
        if (!py::isinstance<py::str>(d[k.c_str()]))
          throw Error(ErrorKind::kInvalidArgument, "FPGA target field '" + k + "' must be a string");
        return utf8_text(d[k.c_str()], "FPGA target field '" + k + "'");
      };
      // A value as a message quotes it: at most 40 characters (a 401-digit integer is not
      // repeated whole).
      const auto shown = [](const py::handle v) {
        std::string r;
        try {
          r = utf8_text(py::repr(v), "a value");
        } catch (const py::error_already_set&) {  // repr of an int of over 4,300 digits raises
          return std::string("a number too long to print");
        }
        return r.size() <= 40 ? r : r.substr(0, 37) + "... (" + std::to_string(r.size()) + " characters)";
      };
      const auto number = [&](const std::string& k) {
        const py::handle v = d[k.c_str()];
        if (py::isinstance<py::bool_>(v) || !(py::isinstance<py::float_>(v) || py::isinstance<py::int_>(v)))
          throw Error(ErrorKind::kInvalidArgument, "FPGA target field '" + k + "' must be a number, not " +
                                                       std::string(py::str(py::type::of(v).attr("__name__"))));
        // An int beyond a double (10**400) raises OverflowError in the conversion: say which field.
        const double x = PyFloat_AsDouble(v.ptr());
        if (x == -1.0 && PyErr_Occurred() != nullptr) {
          PyErr_Clear();
          throw Error(ErrorKind::kInvalidArgument,
                      "FPGA target field '" + k + "' = " + shown(v) + " is beyond the range of a number (1.8e308)");
        }
        return x;
      };
      const auto whole = [&](const std::string& k, const char* what) {
        const double v = number(k);
        if (!(v >= 1 && v <= 4294967295.0 && v == static_cast<double>(static_cast<uint32_t>(v))))
          throw Error(ErrorKind::kInvalidArgument, "FPGA target field '" + k + "' = " + shown(d[k.c_str()]) +
                                                       " must be a positive whole number of " + what);
        return static_cast<uint32_t>(v);
      };
      FpgaTarget t;
      std::string changed;
      if (d.contains("base")) t = fpga_preset(text("base"));
      // The memory type first: a card without a base takes its calibration from it.
      if (d.contains("memory_type")) {
        const std::string type = text("memory_type");
        if (!d.contains("base") || type != t.memory_type) {
          const FpgaTarget cal = calibration_for(type);
          for (const auto& [k, member] : kTargetCalibrated) {
            if (std::string(k) == "clock_hz" || std::string(k) == "dsp_utilization") continue;
            t.*member = cal.*member;
          }
          t.random_granule_bytes = cal.random_granule_bytes;
          if (!d.contains("base")) t.clock_hz = cal.clock_hz, t.dsp_utilization = cal.dsp_utilization;
        }
        t.memory_type = type;
        changed += "memory_type";
      } else if (!d.contains("base")) {
        const FpgaTarget cal = calibration_for("hbm2");
        for (const auto& [k, member] : kTargetCalibrated) t.*member = cal.*member;
        t.random_granule_bytes = cal.random_granule_bytes;
      }
      double total_bandwidth = 0;
      std::string total_key;
      for (const auto& item : d) {
        const std::string k = utf8_text(py::str(item.first), "an FPGA target field name");
        if (k == "base" || k == "name" || k == "description" || k == "memory_type") continue;
        // Outputs (the rates the model derives): a dict of a card, as presets() gives it, goes
        // back in with them; they are worked out again.
        if (k.rfind("card_", 0) == 0 || k == "stream_bytes_per_s") continue;
        if (k == "memory_bytes_per_s" && d.contains("memory_channel_bytes_per_s")) continue;
        if (k == "random_access_efficiency")
          throw Error(ErrorKind::kInvalidArgument,
                      "FPGA target field 'random_access_efficiency' is gone: the model now takes data-dependent "
                      "accesses from measured rates; give random_reads_per_s (accesses per second per memory "
                      "channel) instead (docs/fpga-model.md, \"Random access\")");
        bool found = false;
        if (k == "dsp_count") {
          t.dsp_count = whole(k, "DSP slices");
          found = true;
        } else if (k == "memory_channels") {
          t.memory_channels = whole(k, "memory channels");
          found = true;
        } else if (k == "memory_bytes_per_s" || k == "hbm_bytes_per_s") {
          // The whole memory's peak (hbm_bytes_per_s: its earlier name): split over the channels below.
          total_bandwidth = number(k);
          total_key = k;
          found = true;
        } else if (k == "hbm_efficiency") {
          t.stream_efficiency = Calibrated::exact(number(k));  // its earlier name
          found = true;
        }
        for (const auto& [name, member] : kTargetNumbers) {
          if (found || k != name) continue;
          t.*member = number(k);
          found = true;
        }
        for (const auto& [name, member] : kTargetCalibrated) {
          if (found) break;
          const std::string n = name;
          Calibrated& c = t.*member;
          if (k == n) {
            const double v = number(k);
            c.nominal = v;
            if (!d.contains((n + "_low").c_str())) c.low = v;
            if (!d.contains((n + "_high").c_str())) c.high = v;
            found = true;
          } else if (k == n + "_low") {
            c.low = number(k);
            found = true;
          } else if (k == n + "_high") {
            c.high = number(k);
            found = true;
          }
        }
        if (!found)
          throw Error(ErrorKind::kInvalidArgument, "unknown FPGA target field '" + k + "': valid fields are " + valid);
        changed += (changed.empty() ? "" : ", ") + k;
      }
      if (!total_key.empty()) {
        if (t.memory_channels == 0)
          throw Error(ErrorKind::kInvalidArgument,
                      "FPGA target field '" + total_key +
                          "' needs memory_channels (HBM pseudo-channels or DDR "
                          "banks, e.g. 32 on an Alveo U55C, 4 on a U250): the bandwidth is split over them");
        t.memory_channel_bytes_per_s = total_bandwidth / static_cast<double>(t.memory_channels);
      }
      if (d.contains("description"))
        t.description = text("description");
      else if (d.contains("base") && !changed.empty())
        t.description += " (modified: " + changed + ")";
      if (d.contains("name"))
        t.name = text("name");
      else if (d.contains("base"))
        t.name += changed.empty() ? "" : " (modified)";
      else
        t.name = "user";
      validate_fpga_target(t);
      return t;
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

// Field tables of the capture layer's results that reach Python (counter sessions and plans,
// NVTX injection). The analysis layer may not include the capture layer's headers
// (cmake/CheckLayers.cmake), so these tables sit here, built with the same entries as
// analysis/result_schema.hpp and converted by the same converter (result_convert.hpp); the
// registry fpgaprof._core.analysis.result_fields() lists them with the analysis' tables.
#pragma once

#include <vector>

#include "fpgaprof/analysis/result_schema.hpp"
#include "fpgaprof/cupti/capture.hpp"
#include "fpgaprof/cupti/counters.hpp"

namespace fpgaprof::bindings {

// CounterSession.stop_into(store): how the counter ranges paired with the traced launches.
inline const analysis::ResultTable<CounterMatch, analysis::NoContext>& counter_match_fields() {
  using namespace analysis;
  using R = CounterMatch;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::matched, C>("matched", "", "ranges paired with a traced kernel"));
    v.push_back(member<&R::unmatched_ranges, C>("unmatched_ranges", "", "ranges left without a kernel"));
    v.push_back(member<&R::dropped_ranges, C>("dropped_ranges", "", "ranges CUPTI could not store"));
    v.push_back(member<&R::unprofiled_kernels, C>("unprofiled_kernels", "", "kernels on the device without a range"));
    v.push_back(
        member<&R::ambiguous_windows, C>("ambiguous_windows", "", "windows with ranges or kernels left unpaired"));
    v.push_back(member<&R::unpaired_kernels, C>("unpaired_kernels", "", "kernels in those windows without a range"));
    v.push_back(member<&R::matched_copies, C>("matched_copies", "", "ranges paired with a device-to-device copy"));
    v.push_back(member<&R::timed_from_counters, C>("timed_from_counters", "",
                                                   "launches without GPU timestamps timed by their range"));
    return v;
  }();
  return t;
}

// counter_plan(...).metrics[]: one metric of the plan.
inline const analysis::ResultTable<CounterMetricInfo, analysis::NoContext>& counter_metric_fields() {
  using namespace analysis;
  using R = CounterMetricInfo;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::role, C>("role", "", "what the roofline uses it for ('' a metric the caller named)"));
    v.push_back(member<&R::name, C>("name", "", "with its rollup: dram__bytes_read.sum"));
    v.push_back(member<&R::description, C>("description", "", "CUPTI's one-line description"));
    v.push_back(member<&R::hw_unit, C>("hw_unit", "", "the hardware unit counted: dram, sm, gpu"));
    v.push_back(member<&R::unit, C>("unit", "", "the dimension of its values: byte, instruction, nanosecond"));
    return v;
  }();
  return t;
}

// counter_plan(...): what trace(counters=True) collects on a chip.
inline const analysis::ResultTable<CounterPlan, analysis::NoContext>& counter_plan_fields() {
  using namespace analysis;
  using R = CounterPlan;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::chip, C>("chip", "", "CUPTI's chip name, e.g. GH100"));
    v.push_back(member<&R::chip_from_device, C>("chip_from_device", "", "read from the GPU (else named)"));
    v.push_back(member<&R::cupti_path, C>("cupti_path", "", "the libcupti that made the plan"));
    v.push_back(nested_rows<R, C>(
        "metrics", ValueType::kObjectList, false, "the metric per role (counter_metric)",
        [](const R& p, const C& c, ResultWriter& w) { write_rows(counter_metric_fields(), p.metrics, c, w); }));
    v.push_back(member<&R::missing, C>("missing", "", "roles the chip cannot give, with the reason"));
    v.push_back(member<&R::passes, C>("passes", "", "replay passes per kernel"));
    v.push_back(member<&R::config_image_bytes, C>("config_image_bytes", "bytes", "the counter configuration's size"));
    return v;
  }();
  return t;
}

// nvtx_injection_status(): what NVTX's injection hook did in this process.
inline const analysis::ResultTable<NvtxInjectionStatus, analysis::NoContext>& nvtx_injection_fields() {
  using namespace analysis;
  using R = NvtxInjectionStatus;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::calls, C>("calls", "", "times InitializeInjectionNvtx2 was called"));
    v.push_back(member<&R::last_result, C>("last_result", "", "the last call's result (1 success; -1 never called)"));
    v.push_back(member<&R::succeeded, C>("succeeded", "", "some call returned non-zero"));
    v.push_back(member<&R::detail, C>("detail", "", "which libcupti entry point answered what, or why none did"));
    return v;
  }();
  return t;
}

// The capture layer's tables for the registry (name, description, fields).
inline std::vector<analysis::ResultTableInfo> capture_result_tables() {
  const auto infos = [](const auto& table) {
    std::vector<analysis::FieldInfo> out;
    for (const auto& f : table) out.push_back(f.info);
    return out;
  };
  return {
      {"counter_match", "CounterSession.stop_into(store): ranges paired with launches", infos(counter_match_fields())},
      {"counter_plan", "counter_plan(...): what trace(counters=True) collects on a chip", infos(counter_plan_fields())},
      {"counter_metric", "counter_plan(...).metrics[]: one metric", infos(counter_metric_fields())},
      {"nvtx_injection", "nvtx_injection_status(): NVTX's injection hook in this process",
       infos(nvtx_injection_fields())},
  };
}

}  // namespace fpgaprof::bindings

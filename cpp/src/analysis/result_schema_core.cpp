// The result tables of result_schema.hpp for what is not an analysis row: the trace's meta, a
// device, correlation's counts, the diagnostics and their codes, an XLA range name, the
// attribution's counts per method, the ceilings and the card (result_schema.cpp has the FPGA
// rankings and the registry of every table; result_schema_trace.cpp the trace-wide results).
#include <array>
#include <cstddef>
#include <string>
#include <utility>

#include "fpgaprof/analysis/result_schema.hpp"

namespace fpgaprof::analysis {

namespace {

using VT = ValueType;

// Fields named by an enum's values (a precision, a match method), one per value, each reading
// entry I of the row: build<I>() makes the field of value I.
template <class R, class C, std::size_t N, class Build>
ResultTable<R, C> one_per_value(const Build& build) {
  ResultTable<R, C> v;
  [&]<std::size_t... I>(std::index_sequence<I...>) { (v.push_back(build.template operator()<I>()), ...); }
  (std::make_index_sequence<N>{});
  return v;
}

}  // namespace

const ResultTable<Ceilings, NoContext>& ceiling_peak_fields() {
  using R = Ceilings;
  using C = NoContext;
  static const ResultTable<R, C> t = one_per_value<R, C, kPrecisionCount>([]<std::size_t I>() {
    return computed<R, C>(precision_name(static_cast<Precision>(I)), VT::kFloat, false, "FLOP/s",
                          "the pipe's peak (0: no such pipe, or unknown)",
                          [](const R& c, const C&) { return FieldValue{c.peak_flops_per_s[I]}; });
  });
  return t;
}

const ResultTable<Ceilings, NoContext>& ceiling_source_fields() {
  using R = Ceilings;
  using C = NoContext;
  static const ResultTable<R, C> t = one_per_value<R, C, kPrecisionCount>([]<std::size_t I>() {
    return computed<R, C>(precision_name(static_cast<Precision>(I)), VT::kString, false, "",
                          "where its peak comes from: table, measured, user or unknown", [](const R& c, const C&) {
                            return FieldValue{std::string(ceiling_source_name(c.flops_source[I]))};
                          });
  });
  return t;
}

const ResultTable<TraceMeta, NoContext>& trace_meta_fields() {
  using R = TraceMeta;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::start_ns, C>("start_ns", "ns", "trace clock when tracing started"));
    v.push_back(member<&R::end_ns, C>("end_ns", "ns", "trace clock when tracing stopped"));
    v.push_back(member<&R::dropped_records, C>("dropped_records", "", "CUPTI records lost"));
    v.push_back(member<&R::incomplete_records, C>("incomplete_records", "",
                                                  "records without timestamps (device timestamp buffer full)"));
    v.push_back(member<&R::driver_version, C>("driver_version", "", "CUDA driver version, e.g. 13000"));
    v.push_back(member<&R::cupti_version, C>("cupti_version", "", "CUPTI API version"));
    v.push_back(member<&R::cupti_path, C>("cupti_path", "", "the libcupti the collector used"));
    v.push_back(member<&R::clock, C>("clock", "", "the trace clock"));
    v.push_back(member<&R::gpu_available, C>("gpu_available", "", "false: only host-side data"));
    v.push_back(member<&R::unavailable_reason, C>("unavailable_reason", "", "why, when gpu_available is false"));
    v.push_back(member<&R::command_buffers_disabled, C>("command_buffers_disabled", "",
                                                        "XLA command buffers were off while tracing"));
    v.push_back(member<&R::fpgaprof_version, C>("fpgaprof_version", "", "the writer's version"));
    v.push_back(nested_rows<R, C>("warnings", VT::kStringList, false,
                                  "each warning's message once, in order (the records: TraceStore.diagnostics)",
                                  [](const R& m, const C&, ResultWriter& w) {
                                    const std::vector<std::string> messages = m.warnings.messages();
                                    w.begin_list();
                                    for (const std::string& s : messages) w.value(FieldValue{s});
                                    w.end_list();
                                  }));
    v.push_back(member<&R::process_index, C>("process_index", "", "rank in the job; -1: not known (one process)"));
    v.push_back(member<&R::process_count, C>("process_count", "", "processes in the job; 0: not known"));
    v.push_back(member<&R::process_source, C>("process_source", "", "where they came from: jax, SLURM, OMPI, ..."));
    v.push_back(member<&R::host_name, C>("host_name", "", "the host the process ran on"));
    v.push_back(
        member<&R::global_device_ids, C>("global_device_ids", "", "JAX's global id of each local device (-1 unknown)"));
    v.push_back(member<&R::power_sample_period_ns, C>("power_sample_period_ns", "ns",
                                                      "the power sampling thread's period (0: not sampled)"));
    v.push_back(member<&R::energy_update_period_ns, C>(
        "energy_update_period_ns", "ns", "median interval between changes of the energy counter (0 unknown)"));
    v.push_back(nested_rows<R, C>("environment", VT::kObject, false,
                                  "the traced process's software: name -> version or value (jax_version, ...)",
                                  [](const R& m, const C&, ResultWriter& w) {
                                    w.begin_object();
                                    for (const auto& [k, value] : m.environment) {
                                      w.key(k);
                                      w.value(FieldValue{value});
                                    }
                                    w.end_object();
                                  }));
    return v;
  }();
  return t;
}

const ResultTable<DeviceInfo, NoContext>& device_info_fields() {
  using R = DeviceInfo;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::id, C>("id", "", "the CUDA device ordinal"));
    v.push_back(member<&R::name, C>("name", "", "the device's name"));
    v.push_back(member<&R::uuid, C>("uuid", "", "its UUID"));
    v.push_back(member<&R::compute_capability_major, C>("compute_capability_major", "", "compute capability"));
    v.push_back(member<&R::compute_capability_minor, C>("compute_capability_minor", "", "compute capability"));
    v.push_back(member<&R::sm_count, C>("sm_count", "", "streaming multiprocessors"));
    v.push_back(member<&R::core_clock_khz, C>("core_clock_khz", "kHz", "max SM clock"));
    v.push_back(member<&R::memory_clock_khz, C>("memory_clock_khz", "kHz", "max memory clock"));
    v.push_back(member<&R::memory_bus_width_bits, C>("memory_bus_width_bits", "bits", "memory bus width"));
    v.push_back(member<&R::global_memory_bytes, C>("global_memory_bytes", "bytes", "device memory"));
    v.push_back(member<&R::l2_cache_bytes, C>("l2_cache_bytes", "bytes", "L2 cache"));
    v.push_back(member<&R::shared_memory_per_sm_bytes, C>("shared_memory_per_sm_bytes", "bytes", "per SM"));
    v.push_back(member<&R::max_threads_per_sm, C>("max_threads_per_sm", "", "per SM"));
    v.push_back(member<&R::max_registers_per_sm, C>("max_registers_per_sm", "", "per SM"));
    v.push_back(member<&R::pcie_generation, C>("pcie_generation", "", "0 unknown"));
    v.push_back(member<&R::pcie_link_width, C>("pcie_link_width", "", "lanes; 0 unknown"));
    v.push_back(computed<R, C>("peak_dram_bandwidth_bytes_per_s", VT::kFloat, false, "bytes/s",
                               "2 x memory clock x bus width / 8 (0 unknown)",
                               [](const R& d, const C&) { return FieldValue{d.peak_dram_bandwidth_bytes_per_s()}; }));
    return v;
  }();
  return t;
}

const ResultTable<CorrelationStats, NoContext>& correlation_stats_fields() {
  using R = CorrelationStats;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::unmatched_kernels, C>("unmatched_kernels", "", "kernels without their launch call"));
    v.push_back(member<&R::unmatched_memcpys, C>("unmatched_memcpys", "", "copies without their call"));
    v.push_back(member<&R::unmatched_memsets, C>("unmatched_memsets", "", "memsets without their call"));
    v.push_back(member<&R::unmatched_allocations, C>("unmatched_allocations", "", "allocations without their call"));
    v.push_back(member<&R::unmatched_syncs, C>("unmatched_syncs", "", "syncs without their call"));
    v.push_back(member<&R::unattributed_to_region, C>("unattributed_to_region", "",
                                                      "GPU activities launched outside every region"));
    v.push_back(
        member<&R::regions_by_time, C>("regions_by_time", "", "region assigned by the any-thread time fallback"));
    return v;
  }();
  return t;
}

const ResultTable<Diagnostic, NoContext>& diagnostic_fields() {
  using R = Diagnostic;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("code", VT::kString, false, "", "source.kind (diagnostic_codes)",
                               [](const R& x, const C&) { return FieldValue{std::string(x.code())}; }));
    v.push_back(computed<R, C>("severity", VT::kString, false, "", "info, warning or error", [](const R& x, const C&) {
      return FieldValue{std::string(severity_name(x.severity()))};
    }));
    v.push_back(computed<R, C>("source", VT::kString, false, "", "capture, correlate, attribution, fpga, ...",
                               [](const R& x, const C&) { return FieldValue{std::string(x.source())}; }));
    v.push_back(member<&R::count, C>("count", "", "occurrences with this message"));
    v.push_back(member<&R::numbers, C>("numbers", "", "the figures the message quotes, in its order"));
    v.push_back(member<&R::message, C>("message", "", "one line: cause, effect and fix"));
    return v;
  }();
  return t;
}

const ResultTable<DiagnosticCode, NoContext>& diagnostic_code_fields() {
  using R = DiagnosticCode;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("code", VT::kString, false, "", "source.kind",
                               [](const R& c, const C&) { return FieldValue{std::string(c.code)}; }));
    v.push_back(computed<R, C>("severity", VT::kString, false, "", "info, warning or error", [](const R& c, const C&) {
      return FieldValue{std::string(severity_name(c.severity))};
    }));
    v.push_back(computed<R, C>("source", VT::kString, false, "", "the producer",
                               [](const R& c, const C&) { return FieldValue{std::string(c.source)}; }));
    v.push_back(computed<R, C>("description", VT::kString, false, "", "what it means and the fix",
                               [](const R& c, const C&) { return FieldValue{std::string(c.description)}; }));
    return v;
  }();
  return t;
}

const ResultTable<XlaRangeName, NoContext>& xla_range_name_fields() {
  using R = XlaRangeName;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>(
        "kind", VT::kString, false, "", "module (XlaModule:#...#) or thunk (Thunk:#...#)", [](const R& r, const C&) {
          return FieldValue{std::string(r.kind == XlaRangeName::Kind::kModule ? "module" : "thunk")};
        }));
    v.push_back(member<&R::hlo_module, C>("hlo_module", "", "an XlaModule range's module"));
    v.push_back(member<&R::program_id, C>("program_id", "", "an XlaModule range's program id (-1: not printed)"));
    v.push_back(member<&R::prefix, C>("prefix", "", "an XlaModule range's common op_name prefix"));
    v.push_back(member<&R::hlo_op, C>("hlo_op", "", "a Thunk range's HLO instruction"));
    v.push_back(member<&R::name, C>("name", "", "a Thunk range's op_name below the module prefix"));
    v.push_back(member<&R::unique_hlo_op_id, C>("unique_hlo_op_id", "", "a Thunk range's op id (-1: none)"));
    return v;
  }();
  return t;
}

const ResultTable<AttributionResult, NoContext>& attribution_method_counts_fields() {
  using R = AttributionResult;
  using C = NoContext;
  static const ResultTable<R, C> t = one_per_value<R, C, 4>([]<std::size_t I>() {
    return computed<R, C>(match_method_name(static_cast<MatchMethod>(I)), VT::kInt, false, "",
                          "kernels attributed by this method",
                          [](const R& r, const C&) { return FieldValue{uint64_t{r.count_by_method[I]}}; });
  });
  return t;
}

const ResultTable<Ceilings, NoContext>& ceilings_fields() {
  using R = Ceilings;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::device_name, C>("device_name", "", "the device"));
    v.push_back(member<&R::architecture, C>("architecture", "", "the table row used ('' unknown)"));
    v.push_back(member<&R::architecture_exact, C>("architecture_exact", "",
                                                  "false: the nearest row of the same major was used"));
    v.push_back(nested_rows<R, C>(
        "peak_flops_per_s", VT::kObject, false, "FLOP/s per precision (fp64, fp64_tensor, ...; 0: no such pipe)",
        [](const R& c, const C& x, ResultWriter& w) { write_row(ceiling_peak_fields(), c, x, w); }));
    v.push_back(nested_rows<R, C>(
        "flops_source", VT::kObject, false, "per precision: table, measured, user or unknown",
        [](const R& c, const C& x, ResultWriter& w) { write_row(ceiling_source_fields(), c, x, w); }));
    v.push_back(member<&R::dram_bytes_per_s, C>("dram_bytes_per_s", "bytes/s", "DRAM peak (0 unknown)"));
    v.push_back(computed<R, C>(
        "dram_source", VT::kString, false, "", "table, measured, user or unknown",
        [](const R& c, const C&) { return FieldValue{std::string(ceiling_source_name(c.dram_source))}; }));
    v.push_back(member<&R::link_bytes_per_s, C>("link_bytes_per_s", "bytes/s", "host link peak, one direction"));
    v.push_back(computed<R, C>(
        "link_source", VT::kString, false, "", "table, measured, user or unknown",
        [](const R& c, const C&) { return FieldValue{std::string(ceiling_source_name(c.link_source))}; }));
    v.push_back(member<&R::link_description, C>("link_description", "", "the link, e.g. \"PCIe gen5 x16\""));
    return v;
  }();
  return t;
}

const ResultTable<CardField, NoContext>& card_field_fields() {
  using R = CardField;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("name", VT::kString, false, "", "the field",
                               [](const R& f, const C&) { return FieldValue{std::string(f.name)}; }));
    v.push_back(computed<R, C>(
        "kind", VT::kString, false, "", "text, whole, number, calibrated (with _low and _high) or derived (an output)",
        [](const R& f, const C&) { return FieldValue{std::string(card_field_kind_name(f.kind))}; }));
    v.push_back(computed<R, C>("unit", VT::kString, false, "", "its unit ('' none)",
                               [](const R& f, const C&) { return FieldValue{std::string(f.unit)}; }));
    v.push_back(computed<R, C>("default", VT::kString, false, "", "its default, in words",
                               [](const R& f, const C&) { return FieldValue{std::string(f.default_value)}; }));
    v.push_back(computed<R, C>("valid", VT::kString, false, "", "its valid range, in words",
                               [](const R& f, const C&) { return FieldValue{std::string(f.valid)}; }));
    v.push_back(computed<R, C>("description", VT::kString, false, "", "what it is",
                               [](const R& f, const C&) { return FieldValue{std::string(f.description)}; }));
    return v;
  }();
  return t;
}

void write_card(const FpgaTarget& t, ResultWriter& w) {
  w.begin_object();
  for (const CardOutput& f : card_to_fields(t)) {
    w.key(f.name);
    if (f.kind == CardFieldKind::kText)
      w.value(FieldValue{f.text});
    else if (f.kind == CardFieldKind::kWhole)
      w.value(FieldValue{uint64_t{f.whole}});
    else
      w.value(FieldValue{f.number});
  }
  w.end_object();
}

}  // namespace fpgaprof::analysis

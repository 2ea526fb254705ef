// The result tables of result_schema.hpp for analyze()'s envelope and the reports it nests
// whole: the analysis itself, transfers, memory, devices, roofline and energy (their rows'
// tables are in result_schema_trace.cpp; the FPGA rankings and the registry in
// result_schema.cpp).
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "fpgaprof/analysis/result_schema.hpp"

namespace fpgaprof::analysis {

namespace {

using VT = ValueType;

// One memory-timeline list: `value` of each point.
template <class Value>
void timeline(const MemoryReport& m, const TraceContext& c, ResultWriter& w, const Value& value) {
  w.begin_list();
  for (const MemoryPoint& p : m.timeline) w.value(FieldValue{uint64_t{value(p, c)}});
  w.end_list();
}

// Energy windows as rows: energy_window's fields, then the window's path or record keys.
void windows(const std::vector<std::pair<uint32_t, EnergyWindow>>& rows,
             const ResultTable<uint32_t, TraceContext>& keys, const TraceContext& c, ResultWriter& w) {
  w.begin_list();
  for (const auto& [k, win] : rows) {
    w.begin_object();
    write_fields(energy_window_fields(), win, NoContext{}, w);
    write_fields(keys, k, c, w);
    w.end_object();
  }
  w.end_list();
}

// A roofline row: its keys' table, then the point's measures.
template <class Key>
void point(const ResultTable<Key, IndexContext>& keys, const Key& key, const RooflinePoint& p, const IndexContext& c,
           ResultWriter& w) {
  w.begin_object();
  write_fields(keys, key, c, w);
  write_fields(roofline_point_fields(), p, NoContext{}, w);
  w.end_object();
}

// What the rows of one analysis need: its store, region paths, ops and reports.
TraceContext trace_of(const TraceAnalysis& a, const AnalyzeContext& c) {
  return TraceContext{c.store, &a.region_paths, &a.op_inputs};
}
IndexContext index_of(const TraceAnalysis& a, const AnalyzeContext& c) {
  return IndexContext{c.store, &a.region_paths, &a.op_inputs, &a.roofline, &a.transfers};
}

}  // namespace

const ResultTable<MemoryReport, TraceContext>& memory_fields() {
  using R = MemoryReport;
  using C = TraceContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::peak_in_use_bytes, C>("peak_in_use_bytes", "bytes", "all devices together"));
    v.push_back(member<&R::peak_ns, C>("peak_ns", "ns", "when that peak was reached"));
    v.push_back(member<&R::allocation_count, C>("allocation_count", "", "allocations"));
    v.push_back(member<&R::free_count, C>("free_count", "", "frees"));
    v.push_back(
        member<&R::unmatched_frees, C>("unmatched_frees", "", "releases of an address not allocated in the trace"));
    v.push_back(member<&R::unmatched_free_bytes, C>("unmatched_free_bytes", "bytes", "their bytes"));
    v.push_back(member<&R::reallocated_live, C>("reallocated_live", "",
                                                "allocations at a live address (the previous one dropped)"));
    v.push_back(member<&R::never_freed_count, C>("never_freed_count", "", "allocations still live at the end"));
    v.push_back(member<&R::never_freed_bytes, C>("never_freed_bytes", "bytes", "their bytes"));
    v.push_back(nested_rows<R, C>("timeline_ns", VT::kIntList, false, "time of each matched allocation or free",
                                  [](const R& m, const C& c, ResultWriter& w) {
                                    timeline(m, c, w, [](const MemoryPoint& p, const C&) { return p.timestamp_ns; });
                                  }));
    v.push_back(nested_rows<R, C>("timeline_in_use_bytes", VT::kIntList, false, "bytes in use after it, all devices",
                                  [](const R& m, const C& c, ResultWriter& w) {
                                    timeline(m, c, w, [](const MemoryPoint& p, const C&) { return p.in_use_bytes; });
                                  }));
    v.push_back(nested_rows<R, C>("timeline_device_id", VT::kIntList, false, "its device",
                                  [](const R& m, const C& c, ResultWriter& w) {
                                    timeline(m, c, w, [](const MemoryPoint& p, const C& x) {
                                      return uint64_t{x.store->allocations[p.allocation_index].device_id};
                                    });
                                  }));
    v.push_back(nested_rows<R, C>("timeline_device_in_use_bytes", VT::kIntList, false,
                                  "bytes in use on that device after it", [](const R& m, const C& c, ResultWriter& w) {
                                    timeline(m, c, w,
                                             [](const MemoryPoint& p, const C&) { return p.device_in_use_bytes; });
                                  }));
    v.push_back(nested_rows<R, C>("devices", VT::kObjectList, false, "one row per device (device_memory_row)",
                                  [](const R& m, const C&, ResultWriter& w) {
                                    write_rows(device_memory_row_fields(), m.devices, NoContext{}, w);
                                  }));
    v.push_back(nested_rows<R, C>(
        "largest", VT::kObjectList, false, "the largest allocations (buffer_row), largest first",
        [](const R& m, const C& c, ResultWriter& w) { write_rows(buffer_row_fields(), m.largest, c, w); }));
    v.push_back(nested_rows<R, C>("regions", VT::kObjectList, false,
                                  "per region record (region_memory_row) or per region path (region_path_memory_row)",
                                  [](const R& m, const C& c, ResultWriter& w) {
                                    w.begin_list();
                                    for (const RegionMemory& r : m.regions)
                                      write_row(region_memory_row_fields(), r, c, w);
                                    for (const RegionPathMemory& p : m.region_paths)
                                      write_row(region_path_memory_row_fields(), p, c, w);
                                    w.end_list();
                                  }));
    return v;
  }();
  return t;
}

const ResultTable<EnergyReport, TraceContext>& energy_fields() {
  using R = EnergyReport;
  using C = TraceContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::measured, C>("measured", "", "the trace has power samples of at least one device"));
    v.push_back(member<&R::sample_period_ns, C>("sample_period_ns", "ns", "power sampling period"));
    v.push_back(member<&R::update_period_ns, C>("update_period_ns", "ns", "the driver's energy update period"));
    v.push_back(member<&R::total_joules, C>("total_joules", "J", "sum over devices"));
    v.push_back(member<&R::unattributed_joules, C>("unattributed_joules", "J", "kernels without an HLO op"));
    v.push_back(member<&R::copies_joules, C>("copies_joules", "J", "copies and memsets"));
    v.push_back(member<&R::idle_joules, C>("idle_joules", "J", "the not-busy part of each interval"));
    v.push_back(nested_rows<R, C>("devices", VT::kObjectList, false,
                                  "one row per device with samples (energy_device_row)",
                                  [](const R& e, const C&, ResultWriter& w) {
                                    write_rows(energy_device_row_fields(), e.devices, NoContext{}, w);
                                  }));
    v.push_back(nested_rows<R, C>(
        "region_paths", VT::kObjectList, false,
        "one row per (region path, device): energy_window, then energy_path_keys (path_index, region, instances)",
        [](const R& e, const C& c, ResultWriter& w) { windows(e.region_paths, energy_path_keys_fields(), c, w); }));
    v.push_back(nested_rows<R, C>(
        "regions", VT::kObjectList, false,
        "one row per (region record, device): energy_window, then energy_instance_keys (region_index, path_index, "
        "region)",
        [](const R& e, const C& c, ResultWriter& w) { windows(e.regions, energy_instance_keys_fields(), c, w); }));
    v.push_back(nested_rows<R, C>(
        "ops", VT::kObjectList, false, "ops with energy, most joules first (energy_op_row)",
        [](const R& e, const C& c, ResultWriter& w) { write_rows(energy_op_row_fields(), e.ops, c, w); }));
    return v;
  }();
  return t;
}

const ResultTable<RooflineReport, IndexContext>& roofline_fields() {
  using R = RooflineReport;
  using C = IndexContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(nested_rows<R, C>(
        "trace", VT::kObject, false, "every kernel as one point (roofline_point)",
        [](const R& r, const C&, ResultWriter& w) { write_row(roofline_point_fields(), r.trace, NoContext{}, w); }));
    v.push_back(nested_rows<R, C>("ops", VT::kObjectList, false, "one per op: roofline_op_keys + roofline_point",
                                  [](const R& r, const C& c, ResultWriter& w) {
                                    w.begin_list();
                                    for (uint32_t o = 0; o < r.ops.size(); ++o)
                                      point(roofline_op_keys_fields(), o, r.ops[o], c, w);
                                    w.end_list();
                                  }));
    v.push_back(
        nested_rows<R, C>("regions", VT::kObjectList, false,
                          "one per region record (region_instance_keys) or path (region_path_keys), + roofline_point",
                          [](const R& r, const C& c, ResultWriter& w) {
                            w.begin_list();
                            for (uint32_t g = 0; g < r.regions.size(); ++g)
                              point(region_instance_keys_fields(), g, r.regions[g], c, w);
                            for (uint32_t p = 0; p < r.region_paths.size(); ++p)
                              point(region_path_keys_fields(), p, r.region_paths[p], c, w);
                            w.end_list();
                          }));
    v.push_back(nested_rows<R, C>(
        "kernels", VT::kObjectList, false, "one per kernel name: roofline_kernel_keys + roofline_point",
        [](const R& r, const C& c, ResultWriter& w) {
          w.begin_list();
          for (std::size_t k = 0; k < r.kernel_names.size(); ++k)
            point(roofline_kernel_keys_fields(), r.kernel_names[k], r.by_kernel_name[k], c, w);
          w.end_list();
        }));
    v.push_back(member<&R::unattributed_kernels, C>("unattributed_kernels", "", "kernels with no op (cost unknown)"));
    v.push_back(member<&R::unattributed_ns, C>("unattributed_ns", "ns", "their time"));
    return v;
  }();
  return t;
}

const ResultTable<TransferReport, IndexContext>& transfers_fields() {
  using R = TransferReport;
  using C = IndexContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(nested_rows<R, C>(
        "groups", VT::kObjectList, false,
        "the trace, then region paths (or records) with copies or syncs, then ops (transfer_group_row)",
        [](const R& r, const C& c, ResultWriter& w) { write_rows(transfer_group_row_fields(), r.groups, c, w); }));
    v.push_back(nested_rows<R, C>(
        "flags", VT::kObjectList, false, "problems found, trace first (transfer_flag_row)",
        [](const R& r, const C& c, ResultWriter& w) {
          write_rows(transfer_flag_row_fields(), r.flags, TraceContext{c.store, c.paths, c.inputs}, w);
        }));
    v.push_back(member<&R::flags_left_out, C>("flags_left_out", "", "region flags beyond the kept number"));
    v.push_back(
        member<&R::link_bytes_per_s, C>("link_bytes_per_s", "bytes/s", "the link peak link_percent uses (0 unknown)"));
    v.push_back(member<&R::link_source, C>("link_source", "", "table, measured, user or unknown"));
    v.push_back(member<&R::link_description, C>("link_description", "", "the link, e.g. \"PCIe gen5 x16\""));
    return v;
  }();
  return t;
}

const ResultTable<TraceAnalysis, AnalyzeContext>& trace_analysis_fields() {
  using R = TraceAnalysis;
  using C = AnalyzeContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(nested_rows<R, C>(
        "ceilings", VT::kObject, false, "the ceilings the roofline used (the ceilings table, as table_ceilings)",
        [](const R& a, const C&, ResultWriter& w) { write_row(ceilings_fields(), a.ceilings, NoContext{}, w); }));
    v.push_back(nested_rows<R, C>(
        "warnings", VT::kObjectList, false,
        "what the analysis could not do: diagnostic records (code, severity, source, count, numbers, message)",
        [](const R& a, const C&, ResultWriter& w) {
          write_rows(diagnostic_fields(), a.warnings.items(), NoContext{}, w);
        }));
    v.push_back(
        computed<R, C>("region_rows", VT::kString, false, "",
                       "path (one row per region path) or instance (one per region record)", [](const R& a, const C&) {
                         return FieldValue{std::string(a.region_rows == RegionRows::kPaths ? "path" : "instance")};
                       }));
    v.push_back(nested_rows<R, C>("transfers", VT::kObject, false, "copies by group (transfers)",
                                  [](const R& a, const C& c, ResultWriter& w) {
                                    write_row(transfers_fields(), a.transfers, index_of(a, c), w);
                                  }));
    v.push_back(nested_rows<R, C>(
        "memory", VT::kObject, false, "device memory (memory)",
        [](const R& a, const C& c, ResultWriter& w) { write_row(memory_fields(), a.memory, trace_of(a, c), w); }));
    v.push_back(nested_rows<R, C>("devices", VT::kObject, false, "per-device rows and balance (devices)",
                                  [](const R& a, const C&, ResultWriter& w) {
                                    write_row(devices_fields(), a.devices, DevicesContext{&a.device_ceilings}, w);
                                  }));
    v.push_back(nested_rows<R, C>(
        "roofline", VT::kObject, false, "roofline points (roofline)",
        [](const R& a, const C& c, ResultWriter& w) { write_row(roofline_fields(), a.roofline, index_of(a, c), w); }));
    v.push_back(nested<R, C>("fpga", VT::kObject, false,
                             "the FPGA ranking (fpga_report, candidates: fpga_op_row, regions: fpga_region_row)"));
    v.push_back(
        nested<R, C>("fpga_other_targets", VT::kObjectList, false, "the same as fpga on each other card asked for"));
    v.push_back(nested_rows<R, C>(
        "totals", VT::kObject, false, "busy-time unions and record counts (trace_totals)",
        [](const R& a, const C&, ResultWriter& w) { write_row(trace_totals_fields(), a.busy, NoContext{}, w); }));
    v.push_back(nested_rows<R, C>("region_paths", VT::kObjectList, false, "GPU time per region path (region_path_row)",
                                  [](const R& a, const C&, ResultWriter& w) {
                                    const RegionPathGpuContext path_ctx{&a.region_paths, &a.region_path_gpu};
                                    w.begin_list();
                                    for (uint32_t p = 0; p < a.region_paths.size(); ++p)
                                      write_row(region_path_row_fields(), p, path_ctx, w);
                                    w.end_list();
                                  }));
    v.push_back(nested_rows<R, C>("region_path_of", VT::kIntList, false, "the region path of each region record",
                                  [](const R& a, const C&, ResultWriter& w) {
                                    w.begin_list();
                                    for (uint32_t i = 0; i < a.region_paths.region_count(); ++i)
                                      w.value(FieldValue{uint64_t{a.region_paths.path_of(i)}});
                                    w.end_list();
                                  }));
    v.push_back(nested_rows<R, C>("kernels_by_name", VT::kObjectList, false,
                                  "per distinct kernel name (kernel_name_row)",
                                  [](const R& a, const C& c, ResultWriter& w) {
                                    write_rows(kernel_name_row_fields(), a.kernels_by_name, trace_of(a, c), w);
                                  }));
    v.push_back(member<&R::device_dram_bytes_per_s, C>("device_dram_bytes_per_s", "bytes/s",
                                                       "DRAM peak per device of the trace (0 unknown)"));
    v.push_back(nested_rows<R, C>("module_memory", VT::kObjectList, false,
                                  "per HLO module with a buffer assignment (module_memory)",
                                  [](const R& a, const C&, ResultWriter& w) {
                                    write_rows(module_memory_fields(), a.module_memory, NoContext{}, w);
                                  }));
    v.push_back(nested_rows<R, C>(
        "collectives", VT::kObject, false, "collective kernels (collectives)",
        [](const R& a, const C&, ResultWriter& w) { write_row(collectives_fields(), a.collectives, NoContext{}, w); }));
    v.push_back(nested_rows<R, C>(
        "energy", VT::kObject, false, "GPU energy from the power samples (energy)",
        [](const R& a, const C& c, ResultWriter& w) { write_row(energy_fields(), a.energy, trace_of(a, c), w); }));
    v.push_back(only_when(
        nested<R, C>("attribution", VT::kObject, false, "the AttributionResult the analysis computed"),
        "with_attribution", +[](const R&, const C& c) { return c.with_attribution; }));
    return v;
  }();
  return t;
}

const ResultTable<DeviceReport, DevicesContext>& devices_fields() {
  using R = DeviceReport;
  using C = DevicesContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::wall_ns, C>("wall_ns", "ns", "the wall time the idle shares are taken of"));
    v.push_back(nested_rows<R, C>("rows", VT::kObjectList, false, "one per device, by id (device_row)",
                                  [](const R& r, const C& c, ResultWriter& w) {
                                    w.begin_list();
                                    for (std::size_t i = 0; i < r.devices.size(); ++i)
                                      write_row(device_row_fields(), r.devices[i], DeviceRowContext{&(*c.ceilings)[i]},
                                                w);
                                    w.end_list();
                                  }));
    v.push_back(nested_rows<R, C>(
        "balance", VT::kObject, false, "load balance over the devices (load_balance)",
        [](const R& r, const C&, ResultWriter& w) { write_row(load_balance_fields(), r.balance, NoContext{}, w); }));
    return v;
  }();
  return t;
}

}  // namespace fpgaprof::analysis

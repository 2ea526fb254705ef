// The result tables of result_schema.hpp for the rows of the trace-wide results: totals, kernels
// by name, collectives, memory, module memory, devices and their copy directions, energy, region
// paths, roofline keys, transfer groups and flags (result_schema_envelope.cpp has analyze()'s
// envelope and the reports it nests whole; result_schema.cpp the FPGA rankings, the module
// estimate, the roofline point, the transfer statistics and the registry of every table;
// result_schema_core.cpp the core's own results, the ceilings and the card).
#include <cstddef>
#include <string>
#include <utility>

#include "fpgaprof/analysis/result_schema.hpp"
#include "fpgaprof/hlo/buffer_assignment.hpp"

namespace fpgaprof::analysis {

namespace {

using VT = ValueType;

FieldValue none() { return {}; }

// One nested field per copy direction (named HtoD, DtoH, ...), written only where the row has
// copies of that direction: build<I>() makes the field of direction I.
template <class R, class C, class Build>
ResultTable<R, C> one_per_direction(const Build& build) {
  ResultTable<R, C> v;
  [&]<std::size_t... I>(std::index_sequence<I...>) { (v.push_back(build.template operator()<I>()), ...); }
  (std::make_index_sequence<kDirectionCount>{});
  return v;
}

constexpr bool crosses_link(Direction d) { return d == Direction::kHtoD || d == Direction::kDtoH; }

}  // namespace

const ResultTable<DeviceRow, NoContext>& device_directions_fields() {
  using R = DeviceRow;
  using C = NoContext;
  static const ResultTable<R, C> t = one_per_direction<R, C>([]<std::size_t I>() {
    constexpr auto dir = static_cast<Direction>(I);
    return only_when(
        nested_rows<R, C>(
            direction_name(dir), VT::kObject, false, "the device's copies of this direction (device_copy_stats)",
            [](const R& r, const C&, ResultWriter& w) {
              write_row(device_copy_stats_fields(), r.by_direction[I], LinkDirectionContext{crosses_link(dir)}, w);
            }),
        "the device has copies of this direction", +[](const R& r, const C&) { return r.by_direction[I].count > 0; });
  });
  return t;
}

const ResultTable<TransferGroup, TransferDirectionContext>& transfer_direction_link_fields() {
  using R = TransferGroup;
  using C = TransferDirectionContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(only_when(
        computed<R, C>("link_percent", VT::kFloat, true, "percent",
                       "use of the device links while these copies ran (null: no copy's link peak is known)",
                       [](const R& g, const C& c) {
                         const auto k = static_cast<std::size_t>(c.direction);
                         return g.by_direction[k].link_capacity_bytes > 0
                                    ? FieldValue{c.transfers->link_percent(g, c.direction)}
                                    : none();
                       }),
        "the direction is HtoD or DtoH", +[](const R&, const C& c) { return crosses_link(c.direction); }));
    return v;
  }();
  return t;
}

const ResultTable<TransferGroup, IndexContext>& transfer_directions_fields() {
  using R = TransferGroup;
  using C = IndexContext;
  static const ResultTable<R, C> t = one_per_direction<R, C>([]<std::size_t I>() {
    constexpr auto dir = static_cast<Direction>(I);
    return only_when(
        nested_rows<R, C>(
            direction_name(dir), VT::kObject, false,
            "the group's copies of this direction: transfer_stats, then "
            "transfer_direction_link",
            [](const R& g, const C& c, ResultWriter& w) {
              w.begin_object();
              write_fields(transfer_stats_fields(), g.by_direction[I], NoContext{}, w);
              write_fields(transfer_direction_link_fields(), g, TransferDirectionContext{c.transfers, dir}, w);
              w.end_object();
            }),
        "the group has copies of this direction", +[](const R& g, const C&) { return g.by_direction[I].count > 0; });
  });
  return t;
}

const ResultTable<uint32_t, TraceContext>& energy_path_keys_fields() {
  using R = uint32_t;
  using C = TraceContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("path_index", VT::kInt, false, "", "the region path's id",
                               [](const R& p, const C&) { return FieldValue{uint64_t{p}}; }));
    v.push_back(computed<R, C>("region", VT::kString, false, "", "the path",
                               [](const R& p, const C& c) { return FieldValue{c.paths->path(p)}; }));
    v.push_back(computed<R, C>("instances", VT::kInt, false, "", "region records with this path",
                               [](const R& p, const C& c) { return FieldValue{c.paths->instances(p)}; }));
    return v;
  }();
  return t;
}

const ResultTable<uint32_t, TraceContext>& energy_instance_keys_fields() {
  using R = uint32_t;
  using C = TraceContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("region_index", VT::kInt, false, "", "the region record",
                               [](const R& i, const C&) { return FieldValue{uint64_t{i}}; }));
    v.push_back(computed<R, C>("path_index", VT::kInt, true, "", "its region path's id (null: none)",
                               [](const R& i, const C& c) {
                                 const uint32_t p = c.paths->path_of(i);
                                 return p == kNone32 ? none() : FieldValue{uint64_t{p}};
                               }));
    v.push_back(
        computed<R, C>("region", VT::kString, false, "", "its region path ('' none)", [](const R& i, const C& c) {
          const uint32_t p = c.paths->path_of(i);
          return FieldValue{p == kNone32 ? std::string() : c.paths->path(p)};
        }));
    return v;
  }();
  return t;
}

const ResultTable<GpuBusyTime, NoContext>& trace_totals_fields() {
  using R = GpuBusyTime;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::kernel_count, C>("kernel_count", "", "kernel records"));
    v.push_back(member<&R::kernel_time_ns, C>("kernel_time_ns", "ns", "sum of kernel durations"));
    v.push_back(member<&R::kernel_busy_ns, C>("kernel_busy_ns", "ns", "union of the kernels' intervals"));
    v.push_back(member<&R::copy_count, C>("copy_count", "", "copy records"));
    v.push_back(member<&R::copy_bytes, C>("copy_bytes", "bytes", "sum of the copies' bytes"));
    v.push_back(member<&R::copy_busy_ns, C>("copy_busy_ns", "ns", "union of the copies' intervals"));
    v.push_back(member<&R::memset_count, C>("memset_count", "", "memset records"));
    v.push_back(member<&R::memset_busy_ns, C>("memset_busy_ns", "ns", "union of the memsets' intervals"));
    v.push_back(member<&R::busy_ns, C>("gpu_busy_ns", "ns", "union of kernels, copies and memsets together"));
    return v;
  }();
  return t;
}

const ResultTable<KernelNameStats, TraceContext>& kernel_name_row_fields() {
  using R = KernelNameStats;
  using C = TraceContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("kernel", VT::kString, false, "", "the kernel name", [](const R& r, const C& c) {
      return FieldValue{std::string(c.store->strings.get(r.name))};
    }));
    v.push_back(member<&R::count, C>("count", "", "launches"));
    v.push_back(member<&R::timed_count, C>("timed_count", "",
                                           "launches with a duration (a counter replay can leave some without "
                                           "timestamps)"));
    v.push_back(member<&R::total_ns, C>("total_ns", "ns", "sum of durations"));
    v.push_back(member<&R::min_ns, C>("min_ns", "ns", "shortest timed launch (0 when none is timed)"));
    v.push_back(member<&R::max_ns, C>("max_ns", "ns", "longest timed launch (0 when none is timed)"));
    v.push_back(nested_rows<R, C>(
        "modules", VT::kObjectList, false,
        "the XLA modules whose ops launched this name's kernels (kernel_name_module_row), most launches first; "
        "empty without the kernels' attribution",
        [](const R& r, const C&, ResultWriter& w) { write_rows(kernel_name_module_row_fields(), r.modules, {}, w); }));
    return v;
  }();
  return t;
}

const ResultTable<KernelNameModule, NoContext>& kernel_name_module_row_fields() {
  using R = KernelNameModule;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("module", VT::kString, true, "", "the module's name (null: launched in no module)",
                               [](const R& r, const C&) { return r.module.empty() ? none() : FieldValue{r.module}; }));
    v.push_back(member<&R::count, C>("count", "", "launches"));
    return v;
  }();
  return t;
}

const ResultTable<CollectiveReport, NoContext>& collectives_fields() {
  using R = CollectiveReport;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::kernel_count, C>("kernel_count", "", "collective kernels"));
    v.push_back(member<&R::kernel_ns, C>("kernel_ns", "ns", "their summed durations"));
    v.push_back(member<&R::busy_ns, C>("busy_ns", "ns", "union of their intervals"));
    v.push_back(member<&R::compute_busy_ns, C>("compute_busy_ns", "ns", "union of the other kernels' intervals"));
    v.push_back(
        member<&R::overlap_ns, C>("overlap_ns", "ns", "time covered by both unions (communication hidden by compute)"));
    v.push_back(nested_rows<R, C>(
        "by_kind", VT::kObjectList, false, "one row per kind (collective_kind_row), most time first",
        [](const R& r, const C& c, ResultWriter& w) { write_rows(collective_kind_row_fields(), r.by_kind, c, w); }));
    v.push_back(member<&R::first_end_ns, C>("first_end_ns", "ns", "end times of the first collective kernels"));
    return v;
  }();
  return t;
}

const ResultTable<CollectiveKindStats, NoContext>& collective_kind_row_fields() {
  using R = CollectiveKindStats;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::kind, C>("kind", "", "the collective (all-reduce, all-gather, ...)"));
    v.push_back(member<&R::count, C>("count", "", "its kernels"));
    v.push_back(member<&R::total_ns, C>("total_ns", "ns", "sum of their durations"));
    return v;
  }();
  return t;
}

const ResultTable<DeviceMemory, NoContext>& device_memory_row_fields() {
  using R = DeviceMemory;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::device_id, C>("device_id", "", "the device"));
    v.push_back(member<&R::peak_in_use_bytes, C>("peak_in_use_bytes", "bytes", "its highest level"));
    v.push_back(member<&R::peak_ns, C>("peak_ns", "ns", "when"));
    v.push_back(member<&R::final_in_use_bytes, C>("final_in_use_bytes", "bytes", "its level at the end"));
    return v;
  }();
  return t;
}

const ResultTable<BufferInfo, TraceContext>& buffer_row_fields() {
  using R = BufferInfo;
  using C = TraceContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::bytes, C>("bytes", "bytes", "its size"));
    v.push_back(member<&R::address, C>("address", "", "device address"));
    v.push_back(member<&R::alloc_ns, C>("alloc_ns", "ns", "when it was allocated"));
    v.push_back(
        computed<R, C>("free_ns", VT::kInt, true, "ns", "when it was freed (null: still allocated at the end)",
                       [](const R& r, const C&) { return r.free_ns == kNone64 ? none() : FieldValue{r.free_ns}; }));
    v.push_back(member<&R::device_id, C>("device_id", "", "the device"));
    v.push_back(member<&R::thread_id, C>("thread_id", "", "the allocating thread"));
    v.push_back(computed<R, C>("region", VT::kString, true, "",
                               "the region path (\"outer > inner\") it was allocated in", [](const R& r, const C& c) {
                                 const uint32_t p = c.paths->path_of(r.region_index);
                                 return p != kNone32 ? FieldValue{c.paths->path(p)} : none();
                               }));
    v.push_back(
        computed<R, C>("api_call", VT::kString, true, "", "the allocating API function", [](const R& r, const C& c) {
          const TraceStore& s = *c.store;
          return r.api_index < s.api_calls.size()
                     ? FieldValue{std::string(s.strings.get(s.api_function_of(s.api_calls[r.api_index]).name))}
                     : none();
        }));
    return v;
  }();
  return t;
}

const ResultTable<ModuleMemory, NoContext>& module_memory_fields() {
  using R = ModuleMemory;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::module, C>("module", "", "the HLO module"));
    v.push_back(member<&R::module_index, C>("module_index", "", "into the trace's HLO modules"));
    v.push_back(member<&R::program_id, C>("program_id", "", "XLA program id (-1 unknown)"));
    v.push_back(member<&R::peak_source, C>(
        "peak_source", "", "'xla live ranges' (the peak over the schedule) or 'allocation sizes' (an upper bound)"));
    v.push_back(member<&R::peak_bytes, C>("peak_bytes", "bytes", "the module's peak"));
    v.push_back(member<&R::peak_position, C>("peak_position", "",
                                             "first schedule position at the peak (-1 without live ranges)"));
    v.push_back(
        member<&R::peak_instruction, C>("peak_instruction", "", "the instruction there ('' at the schedule's end)"));
    v.push_back(member<&R::xla_peak_bytes, C>("xla_peak_bytes", "bytes", "XLA's own live-range peak (0 absent)"));
    v.push_back(member<&R::parameter_bytes, C>("parameter_bytes", "bytes", "parameters"));
    v.push_back(member<&R::output_bytes, C>("output_bytes", "bytes", "outputs"));
    v.push_back(member<&R::temporary_bytes, C>("temporary_bytes", "bytes", "temporaries"));
    v.push_back(member<&R::constant_bytes, C>("constant_bytes", "bytes", "constants"));
    v.push_back(member<&R::thread_local_bytes, C>("thread_local_bytes", "bytes", "thread-local allocations"));
    v.push_back(member<&R::tuple_table_bytes, C>("tuple_table_bytes", "bytes", "tuple index tables"));
    v.push_back(member<&R::allocation_bytes, C>("allocation_bytes", "bytes", "every allocation's size (XLA's total)"));
    v.push_back(member<&R::allocation_count, C>("allocation_count", "", "allocations"));
    v.push_back(member<&R::unplaced_values, C>("unplaced_values", "", "values without a live range"));
    v.push_back(nested_rows<R, C>(
        "live_at_peak", VT::kObjectList, false, "buffers live at the peak (module_buffer), largest first",
        [](const R& m, const C& c, ResultWriter& w) { write_rows(module_buffer_fields(), m.live_at_peak, c, w); }));
    v.push_back(nested_rows<R, C>(
        "buffers", VT::kObjectList, false, "every counted buffer (module_buffer), largest first",
        [](const R& m, const C& c, ResultWriter& w) { write_rows(module_buffer_fields(), m.buffers, c, w); }));
    v.push_back(member<&R::sequence, C>("sequence", "", "the schedule (empty without live ranges)"));
    v.push_back(member<&R::live_bytes, C>("live_bytes", "bytes", "bytes live at each schedule position"));
    return v;
  }();
  return t;
}

const ResultTable<ModuleBuffer, NoContext>& module_buffer_fields() {
  using R = ModuleBuffer;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::allocation, C>("allocation", "", "XLA's allocation index"));
    v.push_back(member<&R::offset_bytes, C>("offset_bytes", "bytes", "offset in the allocation"));
    v.push_back(member<&R::size_bytes, C>("size_bytes", "bytes", "its size"));
    v.push_back(computed<R, C>(
        "kind", VT::kString, false, "", "parameter, output, temporary, constant, ...",
        [](const R& r, const C&) { return FieldValue{std::string(hlo::allocation_kind_name(r.kind))}; }));
    v.push_back(member<&R::producer, C>("producer", "", "the instruction of its largest value"));
    v.push_back(member<&R::values, C>("values", "", "every value's key (\"name{index}\")"));
    v.push_back(member<&R::shape, C>("shape", "", "the producer value's shape"));
    v.push_back(member<&R::op_name, C>("op_name", "", "the producer's metadata op_name"));
    v.push_back(member<&R::source, C>("source", "", "the producer's \"file:line\""));
    v.push_back(member<&R::start, C>("start", "", "first live position (-1 not placed)"));
    v.push_back(member<&R::end, C>("end", "", "last live position (-1 not placed)"));
    return v;
  }();
  return t;
}

const ResultTable<OnChipNeed, NoContext>& onchip_need_fields() {
  using R = OnChipNeed;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::input_bytes, C>("input_bytes", "bytes", "its operands' buffers"));
    v.push_back(member<&R::output_bytes, C>("output_bytes", "bytes", "its own values"));
    v.push_back(member<&R::temporary_bytes, C>("temporary_bytes", "bytes", "values of the computations it calls"));
    v.push_back(computed<R, C>("total_bytes", VT::kInt, false, "bytes", "the sum",
                               [](const R& r, const C&) { return FieldValue{r.total_bytes()}; }));
    return v;
  }();
  return t;
}

const ResultTable<LoadBalance, NoContext>& load_balance_fields() {
  using R = LoadBalance;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::device_count, C>("device_count", "", "rows compared"));
    v.push_back(member<&R::active_devices, C>("active_devices", "", "rows with busy time"));
    v.push_back(member<&R::max_busy_ns, C>("max_busy_ns", "ns", "the busiest device's busy time"));
    v.push_back(member<&R::min_busy_ns, C>("min_busy_ns", "ns", "the least busy device's"));
    v.push_back(member<&R::mean_busy_ns, C>("mean_busy_ns", "ns", "mean busy time"));
    v.push_back(
        computed<R, C>("imbalance", VT::kFloat, true, "x", "max / mean busy: 1 even (null when nothing was busy)",
                       [](const R& r, const C&) { return r.mean_busy_ns > 0 ? FieldValue{r.imbalance} : none(); }));
    v.push_back(computed<R, C>("slowest_device", VT::kInt, true, "", "the device with the most busy time",
                               [](const R& r, const C&) {
                                 return r.slowest_device == kNone32 ? none() : FieldValue{uint64_t{r.slowest_device}};
                               }));
    v.push_back(computed<R, C>(
        "least_busy_device", VT::kInt, true, "", "the device with the least busy time", [](const R& r, const C&) {
          return r.least_busy_device == kNone32 ? none() : FieldValue{uint64_t{r.least_busy_device}};
        }));
    v.push_back(member<&R::spread_ns, C>("spread_ns", "ns", "max - min busy"));
    v.push_back(member<&R::spread_fraction, C>("spread_fraction", "fraction", "spread / max busy"));
    return v;
  }();
  return t;
}

const ResultTable<DeviceEnergy, NoContext>& energy_device_row_fields() {
  using R = DeviceEnergy;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::device_id, C>("device_id", "", "the device"));
    v.push_back(member<&R::samples, C>("samples", "", "its power sample records"));
    v.push_back(member<&R::first_ns, C>("first_ns", "ns", "start of the sampled span"));
    v.push_back(member<&R::last_ns, C>("last_ns", "ns", "end of the sampled span"));
    // An empty span (one knot) measured nothing: null, not 0 J.
    v.push_back(
        computed<R, C>("joules", VT::kFloat, true, "J", "over the sampled span (null: the span is empty)",
                       [](const R& r, const C&) { return r.last_ns > r.first_ns ? FieldValue{r.joules} : none(); }));
    v.push_back(
        computed<R, C>("mean_w", VT::kFloat, true, "W", "joules / span (null: the span is empty)",
                       [](const R& r, const C&) { return r.last_ns > r.first_ns ? FieldValue{r.mean_w} : none(); }));
    v.push_back(
        computed<R, C>("peak_w", VT::kFloat, true, "W",
                       "highest power reading (null unknown: no power reading, or the sampler stopped reading power)",
                       [](const R& r, const C&) { return r.peak_w > 0 ? FieldValue{r.peak_w} : none(); }));
    v.push_back(computed<R, C>("idle_w", VT::kFloat, true, "W", "median idle power (null unknown)",
                               [](const R& r, const C&) { return r.idle_w < 0 ? none() : FieldValue{r.idle_w}; }));
    v.push_back(member<&R::idle_ns, C>("idle_ns", "ns",
                                       "time with nothing running on the device and a power reading in force: "
                                       "idle_w's basis"));
    v.push_back(member<&R::no_power_ns, C>("no_power_ns", "ns",
                                           "time from a reading whose power read failed to the next (idle_w and "
                                           "idle_ns leave it out)"));
    v.push_back(member<&R::has_counter, C>("has_counter", "", "the device has total-energy readings"));
    v.push_back(member<&R::flat_counter, C>("flat_counter", "",
                                            "its counter never changed while read: energy from the power readings"));
    v.push_back(member<&R::backwards_intervals, C>("backwards_intervals", "",
                                                   "intervals where the counter went backwards (power integrated)"));
    return v;
  }();
  return t;
}

const ResultTable<EnergyWindow, NoContext>& energy_window_fields() {
  using R = EnergyWindow;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::device_id, C>("device_id", "", "the device"));
    // A window with no sampled time measured nothing: null, not 0 J (nor 0 W).
    v.push_back(computed<R, C>("joules", VT::kFloat, true, "J", "energy in the window (null: no sampled time)",
                               [](const R& r, const C&) { return r.coverage_ns > 0 ? FieldValue{r.joules} : none(); }));
    v.push_back(computed<R, C>("mean_w", VT::kFloat, true, "W", "joules / covered seconds (null: no sampled time)",
                               [](const R& r, const C&) { return r.coverage_ns > 0 ? FieldValue{r.mean_w} : none(); }));
    v.push_back(computed<R, C>(
        "peak_w", VT::kFloat, true, "W",
        "highest power reading in force (null unknown: no sampled time, or no power reading in force)",
        [](const R& r, const C&) { return r.coverage_ns > 0 && r.peak_w > 0 ? FieldValue{r.peak_w} : none(); }));
    v.push_back(member<&R::duration_ns, C>("duration_ns", "ns", "the window (summed over instances for a path)"));
    v.push_back(member<&R::coverage_ns, C>("coverage_ns", "ns", "the part within the device's sampled span"));
    v.push_back(member<&R::from_counter, C>("from_counter", "", "false: some of it integrates power readings"));
    return v;
  }();
  return t;
}

const ResultTable<OpEnergy, TraceContext>& energy_op_row_fields() {
  using R = OpEnergy;
  using C = TraceContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::op, C>("op_index", "", "into the analysis' ops"));
    v.push_back(computed<R, C>("hlo_op", VT::kString, false, "", "the HLO op ('' unknown)", [](const R& r, const C& c) {
      return FieldValue{r.op < c.inputs->ops.size() ? c.inputs->ops[r.op].name : std::string()};
    }));
    v.push_back(computed<R, C>("module", VT::kString, false, "", "its module ('' unknown)", [](const R& r, const C& c) {
      return FieldValue{r.op < c.inputs->ops.size() ? c.inputs->ops[r.op].module : std::string()};
    }));
    v.push_back(member<&R::joules, C>("joules", "J", "its energy"));
    v.push_back(member<&R::busy_ns, C>("busy_ns", "ns", "its kernel time within sampled intervals"));
    return v;
  }();
  return t;
}

const ResultTable<uint32_t, RegionPathGpuContext>& region_path_row_fields() {
  using R = uint32_t;
  using C = RegionPathGpuContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("path_index", VT::kInt, false, "", "the region path's id",
                               [](const R& p, const C&) { return FieldValue{uint64_t{p}}; }));
    v.push_back(computed<R, C>("region", VT::kString, false, "",
                               "the path: names from the outermost, joined by \" > \"",
                               [](const R& p, const C& c) { return FieldValue{c.paths->path(p)}; }));
    v.push_back(computed<R, C>("name", VT::kString, false, "", "the innermost name",
                               [](const R& p, const C& c) { return FieldValue{c.paths->name(p)}; }));
    v.push_back(computed<R, C>("depth", VT::kInt, false, "", "0: outermost",
                               [](const R& p, const C& c) { return FieldValue{uint64_t{c.paths->depth(p)}}; }));
    v.push_back(computed<R, C>("instances", VT::kInt, false, "", "region records with this path",
                               [](const R& p, const C& c) { return FieldValue{c.paths->instances(p)}; }));
    v.push_back(computed<R, C>("parent", VT::kInt, true, "", "the enclosing path's id (null at the top)",
                               [](const R& p, const C& c) {
                                 const uint32_t q = c.paths->parent(p);
                                 return q == kNone32 ? none() : FieldValue{uint64_t{q}};
                               }));
    v.push_back(computed<R, C>("kernel_count", VT::kInt, false, "", "kernels inside (nested paths included)",
                               [](const R& p, const C& c) { return FieldValue{(*c.gpu)[p].kernel_count}; }));
    v.push_back(computed<R, C>("kernel_ns", VT::kInt, false, "ns", "their summed durations",
                               [](const R& p, const C& c) { return FieldValue{(*c.gpu)[p].kernel_ns}; }));
    v.push_back(computed<R, C>("copy_count", VT::kInt, false, "", "copies inside",
                               [](const R& p, const C& c) { return FieldValue{(*c.gpu)[p].copy_count}; }));
    v.push_back(computed<R, C>("copy_ns", VT::kInt, false, "ns", "their summed durations",
                               [](const R& p, const C& c) { return FieldValue{(*c.gpu)[p].copy_ns}; }));
    v.push_back(computed<R, C>("memset_count", VT::kInt, false, "", "memsets inside",
                               [](const R& p, const C& c) { return FieldValue{(*c.gpu)[p].memset_count}; }));
    v.push_back(computed<R, C>("memset_ns", VT::kInt, false, "ns", "their summed durations",
                               [](const R& p, const C& c) { return FieldValue{(*c.gpu)[p].memset_ns}; }));
    v.push_back(computed<R, C>("gpu_ns", VT::kInt, false, "ns", "kernel_ns + copy_ns + memset_ns",
                               [](const R& p, const C& c) { return FieldValue{(*c.gpu)[p].gpu_ns()}; }));
    return v;
  }();
  return t;
}

const ResultTable<RegionMemory, TraceContext>& region_memory_row_fields() {
  using R = RegionMemory;
  using C = TraceContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(
        computed<R, C>("region", VT::kString, false, "", "the region record's name", [](const R& r, const C& c) {
          return FieldValue{std::string(c.store->strings.get(c.store->regions[r.region_index].name))};
        }));
    v.push_back(member<&R::region_index, C>("index", "", "the region record"));
    v.push_back(computed<R, C>("path", VT::kString, false, "", "its region path", [](const R& r, const C& c) {
      return FieldValue{c.paths->path(c.paths->path_of(r.region_index))};
    }));
    v.push_back(
        member<&R::in_use_at_start_bytes, C>("in_use_at_start_bytes", "bytes", "in use at its start, all devices"));
    v.push_back(member<&R::peak_in_use_bytes, C>("peak_in_use_bytes", "bytes", "max in use while it was open"));
    v.push_back(
        member<&R::allocated_bytes, C>("allocated_bytes", "bytes", "allocated inside (nested regions included)"));
    v.push_back(member<&R::freed_bytes, C>("freed_bytes", "bytes", "freed inside"));
    v.push_back(member<&R::allocations, C>("allocations", "", "allocations inside"));
    v.push_back(member<&R::frees, C>("frees", "", "frees inside"));
    return v;
  }();
  return t;
}

const ResultTable<RegionPathMemory, TraceContext>& region_path_memory_row_fields() {
  using R = RegionPathMemory;
  using C = TraceContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("region", VT::kString, false, "",
                               "the path: names from the outermost, joined by \" > \"",
                               [](const R& r, const C& c) { return FieldValue{c.paths->path(r.path)}; }));
    v.push_back(computed<R, C>("name", VT::kString, false, "", "the innermost name",
                               [](const R& r, const C& c) { return FieldValue{c.paths->name(r.path)}; }));
    v.push_back(computed<R, C>("depth", VT::kInt, false, "", "0: outermost",
                               [](const R& r, const C& c) { return FieldValue{uint64_t{c.paths->depth(r.path)}}; }));
    v.push_back(computed<R, C>("instances", VT::kInt, false, "", "region records with this path",
                               [](const R& r, const C& c) { return FieldValue{c.paths->instances(r.path)}; }));
    v.push_back(member<&R::path, C>("path_index", "", "the region path's id"));
    v.push_back(member<&R::peak_in_use_bytes, C>("peak_in_use_bytes", "bytes", "the highest of its instances' peaks"));
    v.push_back(member<&R::peak_region_index, C>("peak_region_index", "", "the instance that reached it"));
    v.push_back(
        member<&R::in_use_at_start_bytes, C>("in_use_at_start_bytes", "bytes", "that instance's level at its start"));
    v.push_back(member<&R::allocated_bytes, C>("allocated_bytes", "bytes", "summed over instances"));
    v.push_back(member<&R::freed_bytes, C>("freed_bytes", "bytes", "summed over instances"));
    v.push_back(member<&R::allocations, C>("allocations", "", "summed over instances"));
    v.push_back(member<&R::frees, C>("frees", "", "summed over instances"));
    return v;
  }();
  return t;
}

const ResultTable<DeviceRow, DeviceRowContext>& device_row_fields() {
  using R = DeviceRow;
  using C = DeviceRowContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::device_id, C>("device_id", "", "the device"));
    v.push_back(member<&R::has_record, C>("has_record", "", "a DeviceInfo with this id is in the trace"));
    v.push_back(computed<R, C>("name", VT::kString, false, "", "the device's name",
                               [](const R& r, const C&) { return FieldValue{r.ceilings.device_name}; }));
    v.push_back(nested_rows<R, C>(
        "ceilings", VT::kObject, false, "its ceilings (the ceilings table, as table_ceilings)",
        [](const R&, const C& c, ResultWriter& w) { write_row(ceilings_fields(), *c.ceilings, NoContext{}, w); }));
    v.push_back(member<&R::kernel_count, C>("kernel_count", "", "its kernels"));
    v.push_back(member<&R::kernel_time_ns, C>("kernel_time_ns", "ns", "sum of kernel durations"));
    v.push_back(member<&R::kernel_busy_ns, C>("kernel_busy_ns", "ns", "union of kernel intervals"));
    v.push_back(member<&R::copy_count, C>("copy_count", "", "its copies"));
    v.push_back(member<&R::copy_bytes, C>("copy_bytes", "bytes", "their bytes"));
    v.push_back(member<&R::copy_busy_ns, C>("copy_busy_ns", "ns", "union of its copies' intervals"));
    v.push_back(member<&R::memset_count, C>("memset_count", "", "its memsets"));
    v.push_back(member<&R::memset_bytes, C>("memset_bytes", "bytes", "their bytes"));
    v.push_back(member<&R::busy_ns, C>("busy_ns", "ns", "union of its kernels, copies and memsets"));
    v.push_back(member<&R::idle_ns, C>("idle_ns", "ns", "wall time - busy_ns"));
    v.push_back(member<&R::busy_fraction, C>("busy_fraction", "fraction", "busy_ns / wall time"));
    v.push_back(member<&R::idle_fraction, C>("idle_fraction", "fraction", "idle_ns / wall time"));
    v.push_back(computed<R, C>(
        "first_start_ns", VT::kInt, true, "ns", "first activity start (null: none)",
        [](const R& r, const C&) { return r.last_end_ns > r.first_start_ns ? FieldValue{r.first_start_ns} : none(); }));
    v.push_back(computed<R, C>(
        "last_end_ns", VT::kInt, true, "ns", "last activity end (null: none)",
        [](const R& r, const C&) { return r.last_end_ns > r.first_start_ns ? FieldValue{r.last_end_ns} : none(); }));
    v.push_back(nested_rows<R, C>(
        "directions", VT::kObject, false, "per copy direction with copies (device_directions)",
        [](const R& r, const C&, ResultWriter& w) { write_row(device_directions_fields(), r, NoContext{}, w); }));
    v.push_back(nested_rows<R, C>("memory", VT::kObject, true, "its allocations (device_row_memory); null without any",
                                  [](const R& r, const C&, ResultWriter& w) {
                                    if (r.has_memory)
                                      write_row(device_row_memory_fields(), r, NoContext{}, w);
                                    else
                                      w.value(FieldValue{});
                                  }));
    v.push_back(nested_rows<R, C>("threads", VT::kObjectList, false,
                                  "launching threads (device_thread_row), most kernels first",
                                  [](const R& r, const C&, ResultWriter& w) {
                                    write_rows(device_thread_row_fields(), r.threads, NoContext{}, w);
                                  }));
    return v;
  }();
  return t;
}

const ResultTable<DeviceRow, NoContext>& device_row_memory_fields() {
  using R = DeviceRow;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::memory_peak_bytes, C>("peak_in_use_bytes", "bytes", "its highest level"));
    v.push_back(member<&R::memory_peak_ns, C>("peak_ns", "ns", "when"));
    v.push_back(member<&R::memory_final_bytes, C>("final_in_use_bytes", "bytes", "its level at the end"));
    return v;
  }();
  return t;
}

const ResultTable<DeviceCopyStats, LinkDirectionContext>& device_copy_stats_fields() {
  using R = DeviceCopyStats;
  using C = LinkDirectionContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::count, C>("count", "", "copies"));
    v.push_back(member<&R::bytes, C>("bytes", "bytes", "their bytes"));
    v.push_back(member<&R::busy_ns, C>("busy_ns", "ns", "union of their intervals"));
    v.push_back(member<&R::timed_bytes, C>("timed_bytes", "bytes", "bytes of the copies with a duration"));
    v.push_back(computed<R, C>("achieved_bytes_per_s", VT::kFloat, false, "bytes/s", "timed_bytes / busy time",
                               [](const R& r, const C&) { return FieldValue{r.achieved_bytes_per_s()}; }));
    v.push_back(member<&R::link_bytes, C>("link_bytes", "bytes", "bytes of the copies with a duration (HtoD, DtoH)"));
    v.push_back(computed<R, C>("link_bytes_per_s", VT::kFloat, true, "bytes/s",
                               "this device's host-link peak (null: not a link direction, or unknown)",
                               [](const R& r, const C& c) {
                                 return c.link_dir && r.link_bytes_per_s > 0 ? FieldValue{r.link_bytes_per_s} : none();
                               }));
    v.push_back(computed<R, C>(
        "link_percent", VT::kFloat, true, "percent",
        "use of the link while these copies ran (null: not a link direction, or unknown)", [](const R& r, const C& c) {
          return c.link_dir && r.link_bytes_per_s > 0 && r.busy_ns > 0 ? FieldValue{r.link_percent()} : none();
        }));
    return v;
  }();
  return t;
}

const ResultTable<DeviceThread, NoContext>& device_thread_row_fields() {
  using R = DeviceThread;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::thread_id, C>("thread_id", "", "the launching thread"));
    v.push_back(member<&R::kernel_count, C>("kernel_count", "", "kernels it launched on the device"));
    v.push_back(member<&R::kernel_time_ns, C>("kernel_time_ns", "ns", "those kernels' summed durations"));
    return v;
  }();
  return t;
}

const ResultTable<TransferFlag, TraceContext>& transfer_flag_row_fields() {
  using R = TransferFlag;
  using C = TraceContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::kind, C>("kind", "", "pageable, tiny_transfers or link_exceeded"));
    v.push_back(
        computed<R, C>("group_kind", VT::kString, false, "", "what the flagged group is",
                       [](const R& r, const C&) { return FieldValue{std::string(group_kind_name(r.group_kind))}; }));
    v.push_back(computed<R, C>(
        "index", VT::kInt, true, "", "the group's index (null: the trace)",
        [](const R& r, const C&) { return r.index == kNone32 ? none() : FieldValue{uint64_t{r.index}}; }));
    v.push_back(member<&R::count, C>("count", "", "copies concerned"));
    v.push_back(member<&R::bytes, C>("bytes", "bytes", "their bytes"));
    v.push_back(member<&R::message, C>("message", "", "cause and fix, one line"));
    v.push_back(only_when(
        computed<R, C>("region", VT::kString, false, "", "the region path flagged",
                       [](const R& r, const C& c) { return FieldValue{c.paths->path(r.index)}; }),
        "group_kind is region_path", +[](const R& r, const C&) { return r.group_kind == GroupKind::kRegionPath; }));
    return v;
  }();
  return t;
}

const ResultTable<uint32_t, IndexContext>& roofline_op_keys_fields() {
  using R = uint32_t;
  using C = IndexContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("op", VT::kString, false, "", "the HLO op",
                               [](const R& o, const C& c) { return FieldValue{c.inputs->ops[o].name}; }));
    v.push_back(computed<R, C>("module", VT::kString, false, "", "its HLO module",
                               [](const R& o, const C& c) { return FieldValue{c.inputs->ops[o].module}; }));
    v.push_back(computed<R, C>("pattern", VT::kString, false, "", "access pattern", [](const R& o, const C& c) {
      return FieldValue{std::string(hlo::access_pattern_name(c.inputs->ops[o].pattern))};
    }));
    v.push_back(computed<R, C>("source", VT::kString, false, "", "\"file:line\" ('' unknown)",
                               [](const R& o, const C& c) { return FieldValue{c.inputs->sources[o]}; }));
    v.push_back(computed<R, C>("category", VT::kString, false, "", "the attribution's category",
                               [](const R& o, const C& c) { return FieldValue{c.inputs->categories[o]}; }));
    v.push_back(computed<R, C>("cost_known", VT::kBool, false, "", "the static cost model has a rule for it",
                               [](const R& o, const C& c) { return FieldValue{c.inputs->ops[o].cost_known}; }));
    v.push_back(computed<R, C>(
        "cost_basis", VT::kString, false, "",
        "where its FLOPs and bytes come from: the cost rules, the custom kernel's own metadata, the counters "
        "(its measured_* columns), or its operands and results only (a lower bound of the bytes, FLOPs unknown)",
        [](const R& o, const C& c) {
          return FieldValue{std::string(cost_basis_name(c.inputs->ops[o], c.roofline->ops[o]))};
        }));
    return v;
  }();
  return t;
}

const ResultTable<uint32_t, IndexContext>& region_instance_keys_fields() {
  using R = uint32_t;
  using C = IndexContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(
        computed<R, C>("region", VT::kString, false, "", "the region record's name", [](const R& g, const C& c) {
          return FieldValue{std::string(c.store->strings.get(c.store->regions[g].name))};
        }));
    v.push_back(computed<R, C>("index", VT::kInt, false, "", "the region record",
                               [](const R& g, const C&) { return FieldValue{uint64_t{g}}; }));
    v.push_back(computed<R, C>("path", VT::kString, false, "", "its region path",
                               [](const R& g, const C& c) { return FieldValue{c.paths->path(c.paths->path_of(g))}; }));
    return v;
  }();
  return t;
}

const ResultTable<uint32_t, IndexContext>& region_path_keys_fields() {
  using R = uint32_t;
  using C = IndexContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("region", VT::kString, false, "",
                               "the path: names from the outermost, joined by \" > \"",
                               [](const R& p, const C& c) { return FieldValue{c.paths->path(p)}; }));
    v.push_back(computed<R, C>("name", VT::kString, false, "", "the innermost name",
                               [](const R& p, const C& c) { return FieldValue{c.paths->name(p)}; }));
    v.push_back(computed<R, C>("depth", VT::kInt, false, "", "0: outermost",
                               [](const R& p, const C& c) { return FieldValue{uint64_t{c.paths->depth(p)}}; }));
    v.push_back(computed<R, C>("instances", VT::kInt, false, "", "region records with this path",
                               [](const R& p, const C& c) { return FieldValue{c.paths->instances(p)}; }));
    v.push_back(computed<R, C>("path_index", VT::kInt, false, "", "the region path's id",
                               [](const R& p, const C&) { return FieldValue{uint64_t{p}}; }));
    return v;
  }();
  return t;
}

const ResultTable<StringId, IndexContext>& roofline_kernel_keys_fields() {
  using R = StringId;
  using C = IndexContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("kernel", VT::kString, false, "", "the kernel name", [](const R& k, const C& c) {
      return FieldValue{std::string(c.store->strings.get(k))};
    }));
    return v;
  }();
  return t;
}

const ResultTable<TransferGroup, IndexContext>& transfer_group_row_fields() {
  using R = TransferGroup;
  using C = IndexContext;
  static const ResultTable<R, C> t = [] {
    const auto is_path = +[](const R& g, const C&) { return g.kind == GroupKind::kRegionPath; };
    constexpr const char* kPath = "kind is region_path";
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("kind", VT::kString, false, "", "trace, region, region_path or op",
                               [](const R& g, const C&) { return FieldValue{std::string(group_kind_name(g.kind))}; }));
    v.push_back(computed<R, C>(
        "index", VT::kInt, true, "", "region record, op or path id (null: the trace)",
        [](const R& g, const C&) { return g.index == kNone32 ? none() : FieldValue{uint64_t{g.index}}; }));
    v.push_back(computed<R, C>("name", VT::kString, false, "", "the region's (innermost) name, the op's, or \"trace\"",
                               [](const R& g, const C& c) {
                                 switch (g.kind) {
                                   case GroupKind::kRegion:
                                     return FieldValue{
                                         std::string(c.store->strings.get(c.store->regions[g.index].name))};
                                   case GroupKind::kOp: return FieldValue{c.inputs->ops[g.index].name};
                                   case GroupKind::kRegionPath: return FieldValue{c.paths->name(g.index)};
                                   case GroupKind::kTrace: break;
                                 }
                                 return FieldValue{std::string("trace")};
                               }));
    v.push_back(only_when(computed<R, C>("region", VT::kString, false, "", "the region path",
                                         [](const R& g, const C& c) { return FieldValue{c.paths->path(g.index)}; }),
                          kPath, is_path));
    v.push_back(
        only_when(computed<R, C>("depth", VT::kInt, false, "", "0: outermost",
                                 [](const R& g, const C& c) { return FieldValue{uint64_t{c.paths->depth(g.index)}}; }),
                  kPath, is_path));
    v.push_back(
        only_when(computed<R, C>("instances", VT::kInt, false, "", "region records with this path",
                                 [](const R& g, const C& c) { return FieldValue{c.paths->instances(g.index)}; }),
                  kPath, is_path));
    v.push_back(only_when(
        computed<R, C>("path", VT::kString, false, "", "the record's region path",
                       [](const R& g, const C& c) { return FieldValue{c.paths->path(c.paths->path_of(g.index))}; }),
        "kind is region", +[](const R& g, const C&) { return g.kind == GroupKind::kRegion; }));
    v.push_back(nested_rows<R, C>(
        "directions", VT::kObject, false, "per direction with copies (transfer_directions)",
        [](const R& g, const C& c, ResultWriter& w) { write_row(transfer_directions_fields(), g, c, w); }));
    v.push_back(nested_rows<R, C>(
        "all", VT::kObject, false, "every direction together (transfer_stats)",
        [](const R& g, const C&, ResultWriter& w) { write_row(transfer_stats_fields(), g.all, NoContext{}, w); }));
    v.push_back(member<&R::host_wait_ns, C>("host_wait_ns", "ns", "union of the host's sync waits"));
    v.push_back(member<&R::sync_calls, C>("sync_calls", "", "sync calls counted in host_wait_ns"));
    return v;
  }();
  return t;
}

}  // namespace fpgaprof::analysis

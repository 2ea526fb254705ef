// Result schema: one description of every field of the analysis result rows that reach Python
// (name, unit, value type, whether it may be null, whether it is a low/nominal/high range, what
// it means, and a getter). Modelled on record_schema.hpp: the bindings turn a row into a Python
// dict from its table alone (cpp/bindings/result_convert.hpp), and the same table, exposed as
// fpgaprof._core.analysis.result_fields(<table>), is what the summary.json schema and the docs'
// field lists are checked against (tests/python/test_result_fields.py). A new column of a row is
// one entry here plus its computation.
//
// A range entry stands for three output fields: the nominal under `name` and its ends under
// range_low_name(name) / range_high_name(name) ("card_time_s" -> "card_time_low_s",
// "card_time_high_s"; "card_energy_j" -> "card_energy_low_j"; "op_speedup" -> "op_speedup_low", "op_speedup_high"),
// written in that order. An entry of type kObject / kObjectList is a nested value: a
// nested_rows entry writes it from other tables (a row, a list of rows, or an object keyed by
// names such as the copy directions) through the converter's ResultWriter; a plain nested entry
// is filled by the binding (the converter writes None in its place, so the field keeps its
// position). The tables of the capture layer's results sit in cpp/bindings/capture_tables.hpp
// (the analysis layer does not include capture headers).
//
// Header-only, no state; the tables are immutable statics (thread-safe after first use).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "fpgaprof/analysis/attribution.hpp"
#include "fpgaprof/analysis/ceilings.hpp"
#include "fpgaprof/analysis/collectives.hpp"
#include "fpgaprof/analysis/device_analysis.hpp"
#include "fpgaprof/analysis/energy_analysis.hpp"
#include "fpgaprof/analysis/fpga_model.hpp"
#include "fpgaprof/analysis/memory_analysis.hpp"
#include "fpgaprof/analysis/module_memory.hpp"
#include "fpgaprof/analysis/op_inputs.hpp"
#include "fpgaprof/analysis/region_paths.hpp"
#include "fpgaprof/analysis/roofline.hpp"
#include "fpgaprof/analysis/trace_analysis.hpp"
#include "fpgaprof/analysis/transfer_analysis.hpp"
#include "fpgaprof/correlate.hpp"
#include "fpgaprof/diagnostics.hpp"
#include "fpgaprof/hlo/hlo_module.hpp"
#include "fpgaprof/records.hpp"
#include "fpgaprof/trace_store.hpp"

namespace fpgaprof::analysis {

// The Python type of a field's value (before null).
enum class ValueType : uint8_t {
  kInt,
  kFloat,
  kBool,
  kString,
  kStringList,
  kIntList,
  kFloatList,
  kObject,
  kObjectList
};

inline const char* value_type_name(ValueType t) {
  switch (t) {
    case ValueType::kInt: return "int";
    case ValueType::kFloat: return "float";
    case ValueType::kBool: return "bool";
    case ValueType::kString: return "str";
    case ValueType::kStringList: return "list[str]";
    case ValueType::kIntList: return "list[int]";
    case ValueType::kFloatList: return "list[float]";
    case ValueType::kObject: return "dict";
    case ValueType::kObjectList: return "list[dict]";
  }
  return "?";
}

// One value as a getter returns it: null, a number, a string or a list of strings (borrowed from
// the row, which outlives the conversion).
using FieldValue =
    std::variant<std::monostate, bool, int64_t, uint64_t, double, std::string, const std::vector<std::string>*,
                 const std::vector<uint64_t>*, const std::vector<int64_t>*, const std::vector<double>*>;

// What a field is, without its getter (what Python, the schema test and the docs read).
struct FieldInfo {
  std::string name;       // the output name (a range: the nominal's)
  std::string low_name;   // a range: the fast / low end's name, else ""
  std::string high_name;  // a range: the slow / high end's name, else ""
  ValueType type = ValueType::kFloat;
  bool nullable = false;       // null where the value does not apply
  bool range = false;          // low / nominal / high
  const char* unit = "";       // "s", "ns", "bytes", "FLOP", "FLOP/byte", "FLOP/s", "bytes/s", "x", "fraction", ""
  const char* only_when = "";  // "" always present, else the condition under which it is written
  const char* description = "";
};

// What the one converter (cpp/bindings/result_convert.hpp) does with a row: a table's fields are
// written as key(name) then value(...) into the current object; a nested entry writes an object
// (begin_object ... end_object) or a list of them (begin_list ... end_list) in its place.
class ResultWriter {
 public:
  virtual ~ResultWriter() = default;
  virtual void key(const std::string& name) = 0;  // the next value's name in the current object
  virtual void value(const FieldValue& v) = 0;
  virtual void begin_object() = 0;
  virtual void end_object() = 0;
  virtual void begin_list() = 0;
  virtual void end_list() = 0;
};

template <class Row, class Ctx>
struct ResultField {
  FieldInfo info;
  FieldValue (*get)(const Row&, const Ctx&) = nullptr;       // plain fields
  TimeRange (*get_range)(const Row&, const Ctx&) = nullptr;  // range fields
  bool (*present)(const Row&, const Ctx&) = nullptr;         // null: always written
  // A nested value written from other tables (nested_rows): an object, a list or a keyed map.
  void (*write)(const Row&, const Ctx&, ResultWriter&) = nullptr;
};

template <class Row, class Ctx>
using ResultTable = std::vector<ResultField<Row, Ctx>>;

// Writes `row`'s fields into the writer's current object in the table's order (a range as its
// nominal, low and high; a nullable range without a nominal as three nulls).
template <class Row, class Ctx>
void write_fields(const ResultTable<Row, Ctx>& table, const Row& row, const Ctx& ctx, ResultWriter& w) {
  for (const auto& f : table) {
    if (f.present != nullptr && !f.present(row, ctx)) continue;
    if (f.write != nullptr) {
      w.key(f.info.name);
      f.write(row, ctx, w);
    } else if (f.info.range) {
      const TimeRange r = f.get_range(row, ctx);
      const bool null = f.info.nullable && std::isnan(r.nominal);  // no value
      w.key(f.info.name);
      w.value(null ? FieldValue{} : FieldValue{r.nominal});
      w.key(f.info.low_name);
      w.value(null ? FieldValue{} : FieldValue{r.low});
      w.key(f.info.high_name);
      w.value(null ? FieldValue{} : FieldValue{r.high});
    } else {
      w.key(f.info.name);
      w.value(f.get(row, ctx));
    }
  }
}

// One row as an object; rows as a list of objects.
template <class Row, class Ctx>
void write_row(const ResultTable<Row, Ctx>& table, const Row& row, const Ctx& ctx, ResultWriter& w) {
  w.begin_object();
  write_fields(table, row, ctx, w);
  w.end_object();
}
template <class Row, class Ctx, class Rows>
void write_rows(const ResultTable<Row, Ctx>& table, const Rows& rows, const Ctx& ctx, ResultWriter& w) {
  w.begin_list();
  for (const Row& r : rows) write_row(table, r, ctx, w);
  w.end_list();
}

// "card_time_s" -> "card_time_low_s"; "card_energy_j" -> "card_energy_low_j"; "op_speedup" ->
// "op_speedup_low".
inline std::string range_end_name(std::string_view name, std::string_view end) {
  if (name.size() > 2 && (name.substr(name.size() - 2) == "_s" || name.substr(name.size() - 2) == "_j"))
    return std::string(name.substr(0, name.size() - 2)) + "_" + std::string(end) +
           std::string(name.substr(name.size() - 2));
  return std::string(name) + "_" + std::string(end);
}

namespace result_detail {

template <class M>
struct Member;
template <class R, class T>
struct Member<T R::*> {
  using Record = R;
  using Type = T;
};
template <auto M>
using RowOf = typename Member<decltype(M)>::Record;
template <auto M>
using TypeOf = typename Member<decltype(M)>::Type;

template <class T>
constexpr ValueType value_type_of() {
  if constexpr (std::is_same_v<T, bool>)
    return ValueType::kBool;
  else if constexpr (std::is_floating_point_v<T>)
    return ValueType::kFloat;
  else if constexpr (std::is_integral_v<T>)
    return ValueType::kInt;
  else if constexpr (std::is_same_v<T, std::vector<std::string>>)
    return ValueType::kStringList;
  else if constexpr (std::is_same_v<T, std::vector<uint64_t>> || std::is_same_v<T, std::vector<int64_t>>)
    return ValueType::kIntList;
  else if constexpr (std::is_same_v<T, std::vector<double>>)
    return ValueType::kFloatList;
  else
    return ValueType::kString;
}

template <class T>
FieldValue value_of(const T& v) {
  if constexpr (std::is_same_v<T, bool>)
    return v;
  else if constexpr (std::is_floating_point_v<T>)
    return static_cast<double>(v);
  else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
    return static_cast<int64_t>(v);
  else if constexpr (std::is_integral_v<T>)
    return static_cast<uint64_t>(v);
  else if constexpr (std::is_same_v<T, std::vector<std::string>> || std::is_same_v<T, std::vector<uint64_t>> ||
                     std::is_same_v<T, std::vector<int64_t>> || std::is_same_v<T, std::vector<double>>)
    return &v;
  else
    return std::string(v);
}

inline FieldInfo info(std::string name, ValueType type, bool nullable, bool range, const char* unit,
                      const char* description, const char* only_when = "") {
  FieldInfo i;
  i.name = std::move(name);
  if (range) {
    i.low_name = range_end_name(i.name, "low");
    i.high_name = range_end_name(i.name, "high");
  }
  i.type = type;
  i.nullable = nullable;
  i.range = range;
  i.unit = unit;
  i.only_when = only_when;
  i.description = description;
  return i;
}

}  // namespace result_detail

// A member written as it is.
template <auto M, class Ctx>
ResultField<result_detail::RowOf<M>, Ctx> member(const char* name, const char* unit, const char* description) {
  using R = result_detail::RowOf<M>;
  using T = result_detail::TypeOf<M>;
  ResultField<R, Ctx> f;
  f.info = result_detail::info(name, result_detail::value_type_of<T>(), false, false, unit, description);
  f.get = [](const R& r, const Ctx&) { return result_detail::value_of(r.*M); };
  return f;
}

// A TimeRange member as a range.
template <auto M, class Ctx>
ResultField<result_detail::RowOf<M>, Ctx> range_member(const char* name, const char* unit, const char* description) {
  using R = result_detail::RowOf<M>;
  ResultField<R, Ctx> f;
  f.info = result_detail::info(name, ValueType::kFloat, false, true, unit, description);
  f.get_range = [](const R& r, const Ctx&) -> TimeRange { return r.*M; };
  return f;
}

// Three members (nominal, low, high) as a range.
template <auto Nominal, auto Low, auto High, class Ctx>
ResultField<result_detail::RowOf<Nominal>, Ctx> range_members(const char* name, const char* unit,
                                                              const char* description) {
  using R = result_detail::RowOf<Nominal>;
  ResultField<R, Ctx> f;
  f.info = result_detail::info(name, ValueType::kFloat, false, true, unit, description);
  f.get_range = [](const R& r, const Ctx&) { return TimeRange{r.*Low, r.*Nominal, r.*High}; };
  return f;
}

// An EnergyRange member (joules) as a range, null (all three) where its nominal is NaN.
template <auto M, class Ctx>
ResultField<result_detail::RowOf<M>, Ctx> energy_member(const char* name, const char* description) {
  using R = result_detail::RowOf<M>;
  ResultField<R, Ctx> f;
  f.info = result_detail::info(name, ValueType::kFloat, true, true, "J", description);
  f.get_range = [](const R& r, const Ctx&) { return TimeRange{(r.*M).low, (r.*M).nominal, (r.*M).high}; };
  return f;
}

// A value computed from the row (and its context).
template <class R, class Ctx>
ResultField<R, Ctx> computed(const char* name, ValueType type, bool nullable, const char* unit, const char* description,
                             FieldValue (*get)(const R&, const Ctx&)) {
  ResultField<R, Ctx> f;
  f.info = result_detail::info(name, type, nullable, false, unit, description);
  f.get = get;
  return f;
}

// A nested value the binding writes itself (None until it does).
template <class R, class Ctx>
ResultField<R, Ctx> nested(const char* name, ValueType type, bool nullable, const char* description) {
  ResultField<R, Ctx> f;
  f.info = result_detail::info(name, type, nullable, false, "", description);
  f.get = [](const R&, const Ctx&) { return FieldValue{}; };
  return f;
}

// A nested value the table writes itself from other tables (an object, a list of rows, or an
// object keyed by names such as the copy directions): `write` calls write_row / write_rows or
// the writer directly.
template <class R, class Ctx>
ResultField<R, Ctx> nested_rows(const char* name, ValueType type, bool nullable, const char* description,
                                void (*write)(const R&, const Ctx&, ResultWriter&)) {
  ResultField<R, Ctx> f;
  f.info = result_detail::info(name, type, nullable, false, "", description);
  f.write = write;
  return f;
}

// Written only when `present` holds (documented by `only_when`).
template <class R, class Ctx>
ResultField<R, Ctx> only_when(ResultField<R, Ctx> f, const char* condition, bool (*present)(const R&, const Ctx&)) {
  f.info.only_when = condition;
  f.present = present;
  return f;
}

// Contexts: what a row's getters need beyond the row.
struct NoContext {};
struct FpgaOpRowContext {
  const OpInputs* inputs = nullptr;  // the ops the candidates index (op_index)
  uint32_t rank = 0;                 // 1-based position in the ranking
};
struct RankContext {
  uint32_t rank = 0;  // 1-based position in the ranking
};
// Rows that name store strings, regions or ops.
struct TraceContext {
  const TraceStore* store = nullptr;
  const RegionPaths* paths = nullptr;
  const OpInputs* inputs = nullptr;
};

// ---- the tables -------------------------------------------------------------------------------

// fpga.candidates[]: one HLO op ranked as an FPGA offload candidate (docs/fpga-model.md).
const ResultTable<FpgaCandidate, FpgaOpRowContext>& fpga_op_row_fields();
// fpga.regions[]: one region path ranked as an offload unit (docs/fpga-model.md, "Regions").
const ResultTable<FpgaRegionCandidate, RankContext>& fpga_region_row_fields();
// fpga (its scalar fields; candidates and regions are the two tables above).
const ResultTable<FpgaReport, NoContext>& fpga_report_fields();
// estimate_hlo(...).ops[]: one op of a module estimated on a card without a trace.
const ResultTable<StaticOpEstimate, NoContext>& module_estimate_op_fields();
// estimate_hlo(...): the module's totals.
const ResultTable<ModuleEstimate, NoContext>& module_estimate_fields();
// roofline.{trace,ops[],regions[],kernels[]}: the measures of one roofline point.
const ResultTable<RooflinePoint, NoContext>& roofline_point_fields();
// transfers.groups[].all and .directions[*]: one group's copies in one direction (or all).
const ResultTable<TransferStats, NoContext>& transfer_stats_fields();

// totals: the trace's busy-time unions and record counts.
const ResultTable<GpuBusyTime, NoContext>& trace_totals_fields();
// kernels_by_name[]: one kernel name's durations.
const ResultTable<KernelNameStats, TraceContext>& kernel_name_row_fields();
// kernels_by_name[].modules[]: one module's launches of the name.
const ResultTable<KernelNameModule, NoContext>& kernel_name_module_row_fields();
// collectives (by_kind[] rows: collective_kind_row).
const ResultTable<CollectiveReport, NoContext>& collectives_fields();
const ResultTable<CollectiveKindStats, NoContext>& collective_kind_row_fields();
// memory: the allocation analysis' scalars (its lists and rows are nested).
const ResultTable<MemoryReport, TraceContext>& memory_fields();
// memory.devices[]
const ResultTable<DeviceMemory, NoContext>& device_memory_row_fields();
// memory.largest[]
const ResultTable<BufferInfo, TraceContext>& buffer_row_fields();
// module_memory[] / module_memory(...): one HLO module's memory over its schedule.
const ResultTable<ModuleMemory, NoContext>& module_memory_fields();
// module_memory[].buffers[] / .live_at_peak[]
const ResultTable<ModuleBuffer, NoContext>& module_buffer_fields();
// onchip_need(...)
const ResultTable<OnChipNeed, NoContext>& onchip_need_fields();
// devices.balance
const ResultTable<LoadBalance, NoContext>& load_balance_fields();
// energy: the totals (its rows are the tables below).
const ResultTable<EnergyReport, TraceContext>& energy_fields();
// energy.devices[]
const ResultTable<DeviceEnergy, NoContext>& energy_device_row_fields();
// energy.region_paths[] / regions[]: a window's energy (then its path or region keys).
const ResultTable<EnergyWindow, NoContext>& energy_window_fields();
// energy.ops[]
const ResultTable<OpEnergy, TraceContext>& energy_op_row_fields();

// Rows keyed by a region path (RegionPaths id): their path's name, depth and instances.
struct RegionPathGpuContext {
  const RegionPaths* paths = nullptr;
  const std::vector<RegionPathGpuTime>* gpu = nullptr;  // per path (region_path_gpu)
};
// A device's copies of one direction; link_dir: the direction crosses the host link.
struct LinkDirectionContext {
  bool link_dir = false;
};
// region_paths[]: one region path's GPU time (the row is the path id).
const ResultTable<uint32_t, RegionPathGpuContext>& region_path_row_fields();
// memory.regions[] by record (RegionRows "instance") and by path ("path").
const ResultTable<RegionMemory, TraceContext>& region_memory_row_fields();
const ResultTable<RegionPathMemory, TraceContext>& region_path_memory_row_fields();
// devices.rows[] (its ceilings, directions, memory and threads are the tables below); the
// context: the row's ceilings (TraceAnalysis::device_ceilings).
struct DeviceRowContext {
  const Ceilings* ceilings = nullptr;
};
const ResultTable<DeviceRow, DeviceRowContext>& device_row_fields();
const ResultTable<DeviceRow, NoContext>& device_row_memory_fields();
const ResultTable<DeviceCopyStats, LinkDirectionContext>& device_copy_stats_fields();
const ResultTable<DeviceThread, NoContext>& device_thread_row_fields();
// transfers.flags[]
const ResultTable<TransferFlag, TraceContext>& transfer_flag_row_fields();

// Rows keyed by an index into the trace (an op, a region record, a region path, a kernel name).
struct IndexContext {
  const TraceStore* store = nullptr;
  const RegionPaths* paths = nullptr;
  const OpInputs* inputs = nullptr;
  const RooflineReport* roofline = nullptr;
  const TransferReport* transfers = nullptr;  // transfer groups' link_percent
};
// One copy direction of a transfer group.
struct TransferDirectionContext {
  const TransferReport* transfers = nullptr;
  Direction direction = Direction::kHtoD;
};
// roofline.ops[]: the op's keys (then roofline_point); the row is the op index.
const ResultTable<uint32_t, IndexContext>& roofline_op_keys_fields();
// roofline.regions[] by record: the record's keys (then roofline_point); the row is its index.
const ResultTable<uint32_t, IndexContext>& region_instance_keys_fields();
// roofline.regions[] by path: the path's keys (then roofline_point); the row is the path id.
const ResultTable<uint32_t, IndexContext>& region_path_keys_fields();
// roofline.kernels[]: the kernel name (then roofline_point); the row is its string id.
const ResultTable<StringId, IndexContext>& roofline_kernel_keys_fields();
// roofline (its rows are the tables above plus roofline_point).
const ResultTable<RooflineReport, IndexContext>& roofline_fields();
// transfers.groups[].directions: one entry per direction with copies (transfer_stats, then
// transfer_direction_link).
const ResultTable<TransferGroup, IndexContext>& transfer_directions_fields();
const ResultTable<TransferGroup, TransferDirectionContext>& transfer_direction_link_fields();
// devices.rows[].directions: one entry per direction with copies (device_copy_stats).
const ResultTable<DeviceRow, NoContext>& device_directions_fields();
// energy.region_paths[] / regions[]: energy_window, then these keys (the row: path id / record).
const ResultTable<uint32_t, TraceContext>& energy_path_keys_fields();
const ResultTable<uint32_t, TraceContext>& energy_instance_keys_fields();
// transfers (groups[]: transfer_group_row; flags[]: transfer_flag_row).
const ResultTable<TransferReport, IndexContext>& transfers_fields();
// transfers.groups[]: the trace, a region (path or record) or an op, and its copies.
const ResultTable<TransferGroup, IndexContext>& transfer_group_row_fields();

// What analyze() was asked for beyond the analysis itself.
struct AnalyzeContext {
  bool with_attribution = false;      // the AttributionResult comes back too
  const TraceStore* store = nullptr;  // the store analysed (names, allocations)
};
// analyze(): the whole result, each value one of the tables above (or a list of their rows).
const ResultTable<TraceAnalysis, AnalyzeContext>& trace_analysis_fields();
// devices: the per-device rows and their balance; the context: each device's ceilings.
struct DevicesContext {
  const std::vector<Ceilings>* ceilings = nullptr;
};
const ResultTable<DeviceReport, DevicesContext>& devices_fields();

// ---- the core's own results and the small analysis results (result_schema_core.cpp) ----------

// TraceStore.meta: TraceMeta (its warnings as their messages; the records: diagnostic).
const ResultTable<TraceMeta, NoContext>& trace_meta_fields();
// DeviceInfo.to_dict()
const ResultTable<DeviceInfo, NoContext>& device_info_fields();
// TraceStore.correlate(): what correlation left unmatched.
const ResultTable<CorrelationStats, NoContext>& correlation_stats_fields();
// TraceStore.diagnostics[], analyze()'s warnings[]: one diagnostic record.
const ResultTable<Diagnostic, NoContext>& diagnostic_fields();
// diagnostic_codes()[]: one entry of the code table (diagnostics.hpp).
const ResultTable<DiagnosticCode, NoContext>& diagnostic_code_fields();
// attribution.parse_xla_range_name(text): an XlaModule or Thunk range's fields.
const ResultTable<XlaRangeName, NoContext>& xla_range_name_fields();
// AttributionResult.count_by_method: kernels per match method.
const ResultTable<AttributionResult, NoContext>& attribution_method_counts_fields();
// table_ceilings(...), analyze()'s ceilings and devices.rows[].ceilings: one device's roofs.
const ResultTable<Ceilings, NoContext>& ceilings_fields();
// ceilings.peak_flops_per_s / .flops_source: one field per precision.
const ResultTable<Ceilings, NoContext>& ceiling_peak_fields();
const ResultTable<Ceilings, NoContext>& ceiling_source_fields();
// card_fields(): one field of the card table (fpga_model.hpp), as Python's FpgaTarget takes it.
const ResultTable<CardField, NoContext>& card_field_fields();
// A card (fpga_target(...), fpga_presets()[], fpga.target): card_to_fields, key by key.
void write_card(const FpgaTarget& t, ResultWriter& w);

// Every table by the name Python asks for (fpgaprof._core.analysis.result_fields(name)), with
// its fields' descriptions (getters dropped).
struct ResultTableInfo {
  const char* name;
  const char* description;
  std::vector<FieldInfo> fields;
};
const std::vector<ResultTableInfo>& result_tables();

}  // namespace fpgaprof::analysis

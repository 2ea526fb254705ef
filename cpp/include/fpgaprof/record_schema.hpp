// Record schema: one description of every field of every record table of a TraceStore (name,
// storage type, what an index refers to, valid range, how the trace file encodes it, and a
// get/set pair that moves the value as a uint64). The trace file and the Python bindings are
// both driven by it, so a field added to records.hpp is added here once and is then saved,
// loaded, validated and exposed to Python everywhere.
//
// Header-only, no state; all functions are thread-safe (they return references to
// immutable static tables).
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "fpgaprof/records.hpp"
#include "fpgaprof/trace_store.hpp"

namespace fpgaprof {

// How a field is stored in a record struct.
enum class FieldType : uint8_t { kU64, kU32, kU16, kU8, kBool, kEnum, kString, kF64 };

// What an index field refers to; the trace reader checks each one (kNone32 is always valid
// for table references, meaning "none").
enum class FieldRef : uint8_t {
  kNone,          // plain value
  kString,        // StringId into TraceStore::strings (0 = "")
  kApi,           // index into TraceStore::api_calls
  kRegion,        // index into TraceStore::regions
  kMarker,        // index into TraceStore::markers
  kSelf,          // index into the same table (parent links)
  kKernel,        // index into TraceStore::kernels
  kLaunchConfig,  // index into TraceStore::launch_configs
  kApiFunction,   // index into TraceStore::api_functions
  kMemcpy,        // index into TraceStore::memcpys
};

// How the trace file encodes a column before compression (values are stable: they are
// written into the file).
enum class ColumnEncoding : uint8_t {
  kVarint = 0,    // unsigned LEB128 of the value
  kDelta = 1,     // zigzag LEB128 of (value - previous value in the column); first vs 0
  kRelative = 2,  // zigzag LEB128 of (value - value of another column of the same record)
  kFixed64 = 3,   // 8 bytes little endian (doubles)
};

template <class R>
struct FieldSpec {
  const char* name;  // the C++ member name
  FieldType type;
  FieldRef ref;
  uint64_t max_value;                       // largest valid raw value (enums: last enumerator)
  std::span<const char* const> enum_names;  // kEnum: name of each value (index = value)
  ColumnEncoding encoding;
  const char* base;  // kRelative: the column it is relative to (earlier in the list)
  uint64_t (*get)(const R&);
  void (*set)(R&, uint64_t);  // caller guarantees value <= max_value
};

// Names of the enum values as the Python API and the docs show them.
inline constexpr std::array<const char*, 11> kCopyKindNames = {"unknown", "HtoD", "DtoH", "DtoD", "HtoH", "PtoP",
                                                               "HtoA",    "AtoH", "AtoA", "AtoD", "DtoA"};
inline constexpr std::array<const char*, 8> kMemoryKindNames = {
    "unknown", "pageable", "pinned", "device", "array", "managed", "device_static", "managed_static"};
inline constexpr std::array<const char*, 2> kApiKindNames = {"runtime", "driver"};
inline constexpr std::array<const char*, 5> kSyncKindNames = {"unknown", "event_synchronize", "stream_wait_event",
                                                              "stream_synchronize", "context_synchronize"};

namespace schema_detail {

template <class M>
struct MemberTraits;
template <class R, class T>
struct MemberTraits<T R::*> {
  using Record = R;
  using Type = T;
};

template <auto M>
using RecordOf = typename MemberTraits<decltype(M)>::Record;
template <auto M>
using TypeOf = typename MemberTraits<decltype(M)>::Type;

template <auto M>
uint64_t get(const RecordOf<M>& r) {
  using T = TypeOf<M>;
  if constexpr (std::is_same_v<T, double>) {
    return std::bit_cast<uint64_t>(r.*M);
  } else if constexpr (std::is_enum_v<T>) {
    return static_cast<uint64_t>(static_cast<std::underlying_type_t<T>>(r.*M));
  } else {
    return static_cast<uint64_t>(r.*M);
  }
}

template <auto M>
void set(RecordOf<M>& r, uint64_t v) {
  using T = TypeOf<M>;
  if constexpr (std::is_same_v<T, double>) {
    r.*M = std::bit_cast<double>(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    r.*M = v != 0;
  } else if constexpr (std::is_enum_v<T>) {
    r.*M = static_cast<T>(static_cast<std::underlying_type_t<T>>(v));
  } else {
    r.*M = static_cast<T>(v);
  }
}

template <auto M>
constexpr FieldType type_of(FieldRef ref) {
  using T = TypeOf<M>;
  if constexpr (std::is_same_v<T, double>)
    return FieldType::kF64;
  else if constexpr (std::is_same_v<T, bool>)
    return FieldType::kBool;
  else if constexpr (std::is_enum_v<T>)
    return FieldType::kEnum;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return FieldType::kU64;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return FieldType::kU16;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return FieldType::kU8;
  else
    return ref == FieldRef::kString ? FieldType::kString : FieldType::kU32;
}

template <auto M>
constexpr uint64_t max_of() {
  using T = TypeOf<M>;
  if constexpr (std::is_same_v<T, double>)
    return std::numeric_limits<uint64_t>::max();
  else if constexpr (std::is_same_v<T, bool>)
    return 1;
  else
    return static_cast<uint64_t>(std::numeric_limits<T>::max());
}

// A plain (non-enum) field.
template <auto M>
constexpr FieldSpec<RecordOf<M>> f(const char* name, ColumnEncoding enc, FieldRef ref = FieldRef::kNone,
                                   const char* base = nullptr) {
  return {name, type_of<M>(ref), ref, max_of<M>(), {}, enc, base, &get<M>, &set<M>};
}

// An enum field whose valid values are 0 .. names.size()-1.
template <auto M, std::size_t N>
constexpr FieldSpec<RecordOf<M>> e(const char* name, const std::array<const char*, N>& names) {
  return {
      name,    FieldType::kEnum, FieldRef::kNone, N - 1, std::span<const char* const>(names), ColumnEncoding::kVarint,
      nullptr, &get<M>,          &set<M>};
}

}  // namespace schema_detail

// A record table of TraceStore: its Python/file name, its 4-byte file tag, where it lives in
// the store, and its fields.
template <class R>
struct TableSpec {
  const char* name;
  const char* tag;  // 4 characters
  std::vector<R> TraceStore::*member;
  std::span<const FieldSpec<R>> fields;
};

template <class R>
std::span<const FieldSpec<R>> fields_of();

#define FPGAPROF_F(R, m, enc, ...) schema_detail::f<&R::m>(#m, ColumnEncoding::enc __VA_OPT__(, ) __VA_ARGS__)
#define FPGAPROF_E(R, m, names) schema_detail::e<&R::m>(#m, names)

template <>
inline std::span<const FieldSpec<KernelRecord>> fields_of<KernelRecord>() {
  using R = KernelRecord;
  static const FieldSpec<R> k[] = {
      FPGAPROF_F(R, start_ns, kDelta),
      FPGAPROF_F(R, end_ns, kRelative, FieldRef::kNone, "start_ns"),
      FPGAPROF_F(R, launch_ns, kRelative, FieldRef::kNone, "start_ns"),
      FPGAPROF_F(R, correlation_id, kDelta),
      FPGAPROF_F(R, thread_id, kDelta),
      FPGAPROF_F(R, name, kVarint, FieldRef::kString),
      FPGAPROF_F(R, device_id, kVarint),
      FPGAPROF_F(R, context_id, kVarint),
      FPGAPROF_F(R, stream_id, kDelta),
      FPGAPROF_F(R, launch_config, kVarint, FieldRef::kLaunchConfig),
      FPGAPROF_F(R, api_index, kDelta, FieldRef::kApi),
      FPGAPROF_F(R, region_index, kDelta, FieldRef::kRegion),
      FPGAPROF_F(R, marker_index, kDelta, FieldRef::kMarker),
  };
  return k;
}

template <>
inline std::span<const FieldSpec<LaunchConfig>> fields_of<LaunchConfig>() {
  using R = LaunchConfig;
  static const FieldSpec<R> k[] = {
      FPGAPROF_F(R, grid_x, kVarint),
      FPGAPROF_F(R, grid_y, kVarint),
      FPGAPROF_F(R, grid_z, kVarint),
      FPGAPROF_F(R, block_x, kVarint),
      FPGAPROF_F(R, block_y, kVarint),
      FPGAPROF_F(R, block_z, kVarint),
      FPGAPROF_F(R, registers_per_thread, kVarint),
      FPGAPROF_F(R, static_shared_bytes, kVarint),
      FPGAPROF_F(R, dynamic_shared_bytes, kVarint),
      FPGAPROF_F(R, local_bytes_per_thread, kVarint),
      FPGAPROF_F(R, graph_id, kVarint),
      FPGAPROF_F(R, graph_node_id, kDelta),
  };
  return k;
}

template <>
inline std::span<const FieldSpec<MemcpyRecord>> fields_of<MemcpyRecord>() {
  using R = MemcpyRecord;
  static const FieldSpec<R> k[] = {
      FPGAPROF_F(R, start_ns, kDelta),
      FPGAPROF_F(R, end_ns, kRelative, FieldRef::kNone, "start_ns"),
      FPGAPROF_F(R, launch_ns, kRelative, FieldRef::kNone, "start_ns"),
      FPGAPROF_F(R, bytes, kVarint),
      FPGAPROF_F(R, correlation_id, kDelta),
      FPGAPROF_F(R, thread_id, kDelta),
      FPGAPROF_F(R, device_id, kVarint),
      FPGAPROF_F(R, src_device_id, kDelta),
      FPGAPROF_F(R, dst_device_id, kDelta),
      FPGAPROF_F(R, context_id, kVarint),
      FPGAPROF_F(R, stream_id, kDelta),
      FPGAPROF_E(R, copy_kind, kCopyKindNames),
      FPGAPROF_E(R, src_kind, kMemoryKindNames),
      FPGAPROF_E(R, dst_kind, kMemoryKindNames),
      FPGAPROF_F(R, is_async, kVarint),
      FPGAPROF_F(R, graph_id, kVarint),
      FPGAPROF_F(R, api_index, kDelta, FieldRef::kApi),
      FPGAPROF_F(R, region_index, kDelta, FieldRef::kRegion),
      FPGAPROF_F(R, marker_index, kDelta, FieldRef::kMarker),
  };
  return k;
}

template <>
inline std::span<const FieldSpec<MemsetRecord>> fields_of<MemsetRecord>() {
  using R = MemsetRecord;
  static const FieldSpec<R> k[] = {
      FPGAPROF_F(R, start_ns, kDelta),
      FPGAPROF_F(R, end_ns, kRelative, FieldRef::kNone, "start_ns"),
      FPGAPROF_F(R, launch_ns, kRelative, FieldRef::kNone, "start_ns"),
      FPGAPROF_F(R, bytes, kVarint),
      FPGAPROF_F(R, value, kVarint),
      FPGAPROF_F(R, correlation_id, kDelta),
      FPGAPROF_F(R, thread_id, kDelta),
      FPGAPROF_F(R, device_id, kVarint),
      FPGAPROF_F(R, context_id, kVarint),
      FPGAPROF_F(R, stream_id, kDelta),
      FPGAPROF_E(R, memory_kind, kMemoryKindNames),
      FPGAPROF_F(R, is_async, kVarint),
      FPGAPROF_F(R, graph_id, kVarint),
      FPGAPROF_F(R, api_index, kDelta, FieldRef::kApi),
      FPGAPROF_F(R, region_index, kDelta, FieldRef::kRegion),
      FPGAPROF_F(R, marker_index, kDelta, FieldRef::kMarker),
  };
  return k;
}

template <>
inline std::span<const FieldSpec<AllocationRecord>> fields_of<AllocationRecord>() {
  using R = AllocationRecord;
  static const FieldSpec<R> k[] = {
      FPGAPROF_F(R, timestamp_ns, kDelta),
      FPGAPROF_F(R, address, kDelta),
      FPGAPROF_F(R, bytes, kVarint),
      FPGAPROF_F(R, pc, kDelta),
      FPGAPROF_F(R, correlation_id, kDelta),
      FPGAPROF_F(R, thread_id, kDelta),
      FPGAPROF_F(R, device_id, kVarint),
      FPGAPROF_F(R, context_id, kVarint),
      FPGAPROF_F(R, stream_id, kDelta),
      FPGAPROF_E(R, memory_kind, kMemoryKindNames),
      FPGAPROF_F(R, is_alloc, kVarint),
      FPGAPROF_F(R, is_async, kVarint),
      FPGAPROF_F(R, source, kVarint, FieldRef::kString),
      FPGAPROF_F(R, api_index, kDelta, FieldRef::kApi),
      FPGAPROF_F(R, region_index, kDelta, FieldRef::kRegion),
  };
  return k;
}

template <>
inline std::span<const FieldSpec<ApiRecord>> fields_of<ApiRecord>() {
  using R = ApiRecord;
  static const FieldSpec<R> k[] = {
      FPGAPROF_F(R, start_ns, kDelta),
      FPGAPROF_F(R, end_ns, kRelative, FieldRef::kNone, "start_ns"),
      FPGAPROF_F(R, correlation_id, kDelta),
      FPGAPROF_F(R, thread_id, kDelta),
      FPGAPROF_F(R, function, kVarint, FieldRef::kApiFunction),
      FPGAPROF_F(R, return_value, kVarint),
  };
  return k;
}

template <>
inline std::span<const FieldSpec<ApiFunction>> fields_of<ApiFunction>() {
  using R = ApiFunction;
  static const FieldSpec<R> k[] = {
      FPGAPROF_F(R, name, kVarint, FieldRef::kString),
      FPGAPROF_F(R, callback_id, kVarint),
      FPGAPROF_E(R, kind, kApiKindNames),
  };
  return k;
}

template <>
inline std::span<const FieldSpec<SyncRecord>> fields_of<SyncRecord>() {
  using R = SyncRecord;
  static const FieldSpec<R> k[] = {
      FPGAPROF_F(R, start_ns, kDelta),       FPGAPROF_F(R, end_ns, kRelative, FieldRef::kNone, "start_ns"),
      FPGAPROF_F(R, correlation_id, kDelta), FPGAPROF_F(R, thread_id, kDelta),
      FPGAPROF_F(R, context_id, kVarint),    FPGAPROF_F(R, stream_id, kDelta),
      FPGAPROF_E(R, kind, kSyncKindNames),
  };
  return k;
}

template <>
inline std::span<const FieldSpec<MarkerRecord>> fields_of<MarkerRecord>() {
  using R = MarkerRecord;
  static const FieldSpec<R> k[] = {
      FPGAPROF_F(R, start_ns, kDelta),
      FPGAPROF_F(R, end_ns, kRelative, FieldRef::kNone, "start_ns"),
      FPGAPROF_F(R, thread_id, kDelta),
      FPGAPROF_F(R, id, kDelta),
      FPGAPROF_F(R, domain, kVarint, FieldRef::kString),
      FPGAPROF_F(R, name, kVarint, FieldRef::kString),
      FPGAPROF_F(R, parent, kDelta, FieldRef::kSelf),
      FPGAPROF_F(R, depth, kVarint),
      FPGAPROF_F(R, is_range, kVarint),
      FPGAPROF_F(R, is_closed, kVarint),
  };
  return k;
}

template <>
inline std::span<const FieldSpec<RegionRecord>> fields_of<RegionRecord>() {
  using R = RegionRecord;
  static const FieldSpec<R> k[] = {
      FPGAPROF_F(R, start_ns, kDelta),
      FPGAPROF_F(R, end_ns, kRelative, FieldRef::kNone, "start_ns"),
      FPGAPROF_F(R, thread_id, kDelta),
      FPGAPROF_F(R, name, kVarint, FieldRef::kString),
      FPGAPROF_F(R, parent, kDelta, FieldRef::kSelf),
      FPGAPROF_F(R, depth, kVarint),
  };
  return k;
}

template <>
inline std::span<const FieldSpec<OverheadRecord>> fields_of<OverheadRecord>() {
  using R = OverheadRecord;
  static const FieldSpec<R> k[] = {
      FPGAPROF_F(R, start_ns, kDelta),
      FPGAPROF_F(R, end_ns, kRelative, FieldRef::kNone, "start_ns"),
      FPGAPROF_F(R, object_id, kVarint),
      FPGAPROF_F(R, object_kind, kVarint),
      FPGAPROF_F(R, kind, kVarint, FieldRef::kString),
  };
  return k;
}

template <>
inline std::span<const FieldSpec<ExternalCorrelationRecord>> fields_of<ExternalCorrelationRecord>() {
  using R = ExternalCorrelationRecord;
  static const FieldSpec<R> k[] = {
      FPGAPROF_F(R, correlation_id, kDelta),
      FPGAPROF_F(R, external_kind, kVarint),
      FPGAPROF_F(R, external_id, kDelta),
  };
  return k;
}

template <>
inline std::span<const FieldSpec<CounterRecord>> fields_of<CounterRecord>() {
  using R = CounterRecord;
  static const FieldSpec<R> k[] = {
      FPGAPROF_F(R, range_index, kDelta),
      FPGAPROF_F(R, range_name, kVarint, FieldRef::kString),
      FPGAPROF_F(R, kernel_index, kDelta, FieldRef::kKernel),
      FPGAPROF_F(R, metric, kVarint, FieldRef::kString),
      FPGAPROF_F(R, value, kFixed64),
      FPGAPROF_F(R, memcpy_index, kDelta, FieldRef::kMemcpy),
  };
  return k;
}

template <>
inline std::span<const FieldSpec<PowerSampleRecord>> fields_of<PowerSampleRecord>() {
  using R = PowerSampleRecord;
  static const FieldSpec<R> k[] = {
      FPGAPROF_F(R, time_ns, kDelta),
      FPGAPROF_F(R, energy_mj, kDelta),
      FPGAPROF_F(R, device_id, kVarint),
      FPGAPROF_F(R, power_mw, kDelta),
  };
  return k;
}

#undef FPGAPROF_F
#undef FPGAPROF_E

// Calls fn(TableSpec<R>) for every record table of TraceStore, in file order. Tags are
// stable (written into the file).
template <class Fn>
void for_each_table(Fn&& fn) {
  fn(TableSpec<KernelRecord>{"kernels", "KERN", &TraceStore::kernels, fields_of<KernelRecord>()});
  fn(TableSpec<LaunchConfig>{"launch_configs", "LCFG", &TraceStore::launch_configs, fields_of<LaunchConfig>()});
  fn(TableSpec<MemcpyRecord>{"memcpys", "MCPY", &TraceStore::memcpys, fields_of<MemcpyRecord>()});
  fn(TableSpec<MemsetRecord>{"memsets", "MSET", &TraceStore::memsets, fields_of<MemsetRecord>()});
  fn(TableSpec<AllocationRecord>{"allocations", "ALOC", &TraceStore::allocations, fields_of<AllocationRecord>()});
  fn(TableSpec<ApiRecord>{"api_calls", "APIC", &TraceStore::api_calls, fields_of<ApiRecord>()});
  fn(TableSpec<ApiFunction>{"api_functions", "APIF", &TraceStore::api_functions, fields_of<ApiFunction>()});
  fn(TableSpec<SyncRecord>{"syncs", "SYNC", &TraceStore::syncs, fields_of<SyncRecord>()});
  fn(TableSpec<MarkerRecord>{"markers", "MARK", &TraceStore::markers, fields_of<MarkerRecord>()});
  fn(TableSpec<RegionRecord>{"regions", "REGN", &TraceStore::regions, fields_of<RegionRecord>()});
  fn(TableSpec<OverheadRecord>{"overheads", "OVHD", &TraceStore::overheads, fields_of<OverheadRecord>()});
  fn(TableSpec<ExternalCorrelationRecord>{"external_correlations", "XCOR", &TraceStore::external_correlations,
                                          fields_of<ExternalCorrelationRecord>()});
  fn(TableSpec<CounterRecord>{"counters", "CNTR", &TraceStore::counters, fields_of<CounterRecord>()});
  fn(TableSpec<PowerSampleRecord>{"power_samples", "POWR", &TraceStore::power_samples, fields_of<PowerSampleRecord>()});
}

// Size of the table a FieldRef points into (for validation); kNone/kString return 0.
template <class R>
std::size_t ref_target_size(const TraceStore& s, FieldRef ref, const std::vector<R>& self) {
  switch (ref) {
    case FieldRef::kApi: return s.api_calls.size();
    case FieldRef::kRegion: return s.regions.size();
    case FieldRef::kMarker: return s.markers.size();
    case FieldRef::kSelf: return self.size();
    case FieldRef::kKernel: return s.kernels.size();
    case FieldRef::kMemcpy: return s.memcpys.size();
    case FieldRef::kLaunchConfig: return s.launch_configs.size();
    case FieldRef::kApiFunction: return s.api_functions.size();
    case FieldRef::kString: return s.strings.size();
    case FieldRef::kNone: break;
  }
  return 0;
}

}  // namespace fpgaprof

// Trace file: round trip of every field, atomic writes, every way a file can be bad, and the
// size of a realistic million-kernel trace.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>

#include "fpgaprof/error.hpp"
#include "fpgaprof/record_schema.hpp"
#include "fpgaprof/trace_file.hpp"

using namespace fpgaprof;
namespace fs = std::filesystem;

namespace {

// Counts the members of an aggregate (so a field added to records.hpp but not to the schema
// fails the round-trip test).
struct AnyValue {
  template <class T>
  operator T() const;  // NOLINT: only used in unevaluated brace-init checks
};
template <class T, class... A>
constexpr std::size_t member_count() {
  if constexpr (requires { T{A{}..., AnyValue{}}; }) {
    return member_count<T, A..., AnyValue>();
  } else {
    return sizeof...(A);
  }
}

// Fills every field of every table with distinct, valid, non-default values: field k of record
// i gets a value derived from (i, k) that fits the field (enums in range, references pointing
// at existing records, string ids into the table).
template <class R>
void fill_table(TraceStore& s, const TableSpec<R>& t, std::size_t rows) {
  std::vector<R>& out = s.*(t.member);
  out.resize(rows);
  for (std::size_t k = 0; k < t.fields.size(); ++k) {
    const FieldSpec<R>& f = t.fields[k];
    for (std::size_t i = 0; i < rows; ++i) {
      uint64_t v = 1000003ull * (i + 1) + 7919ull * (k + 1) + (uint64_t{1} << 40) * (i % 3);
      switch (f.type) {
        case FieldType::kU64: break;
        case FieldType::kF64:
          v = std::bit_cast<uint64_t>(0.25 * static_cast<double>(i) - 3.5 * static_cast<double>(k));
          break;
        default: v &= f.max_value; break;
      }
      if (f.type == FieldType::kEnum || f.type == FieldType::kBool) v = (i + k) % (f.max_value + 1);
      if (f.ref != FieldRef::kNone) {
        const std::size_t limit = f.ref == FieldRef::kString ? s.strings.size() : rows;  // tables all have `rows`
        v = (i + k) % (limit + 1);
        if (v == limit) v = f.ref == FieldRef::kString ? 0 : kNone32;
      }
      f.set(out[i], v);
    }
  }
}

TraceStore full_store(std::size_t rows) {
  TraceStore s;
  for (int i = 0; i < 20; ++i) s.strings.intern("string number " + std::to_string(i) + (i % 2 ? " é\n\t\"" : ""));
  s.meta.start_ns = 1'700'000'000'000'000'000ull;
  s.meta.end_ns = s.meta.start_ns + 123'456'789;
  s.meta.dropped_records = 17;
  s.meta.incomplete_records = 4;
  s.meta.driver_version = 13000;
  s.meta.cupti_version = 26;
  s.meta.cupti_path = "/opt/x/libcupti.so.13";
  s.meta.clock = "CLOCK_REALTIME";
  s.meta.gpu_available = true;
  s.meta.unavailable_reason = "none";
  s.meta.command_buffers_disabled = true;
  s.meta.fpgaprof_version = "9.9.9";
  s.meta.warnings.add(kOlderTraceCode, "first warning");
  s.meta.warnings.add("capture.records_dropped", "second \"quoted\" warning", {12.5, -3});
  s.meta.warnings.add("capture.records_dropped", "second \"quoted\" warning", {12.5, -3});  // counted: 2
  s.meta.process_index = 5;
  s.meta.process_count = 8;
  s.meta.process_source = "SLURM";
  s.meta.host_name = "node-\"7\"";
  s.meta.global_device_ids = {20, 21, -1};
  s.meta.power_sample_period_ns = 1'000'000;
  s.meta.energy_update_period_ns = 20'000'000;
  s.meta.environment = {{"jax_version", "0.10.1"}, {"mbirjax_version", "0.7.3"}, {"backend", "gpu \"x\""}};
  DeviceInfo d;
  d.id = 3;
  d.name = "NVIDIA H100 80GB HBM3";
  d.uuid = "GPU-1234";
  d.compute_capability_major = 9;
  d.compute_capability_minor = 0;
  d.sm_count = 132;
  d.core_clock_khz = 1980000;
  d.memory_clock_khz = 2619000;
  d.memory_bus_width_bits = 5120;
  d.global_memory_bytes = 85'000'000'000ull;
  d.l2_cache_bytes = 52'428'800;
  d.shared_memory_per_sm_bytes = 233472;
  d.max_threads_per_sm = 2048;
  d.max_registers_per_sm = 65536;
  d.pcie_generation = 5;
  d.pcie_link_width = 16;
  s.devices.push_back(d);
  d.id = 4;
  d.name = "second";
  s.devices.push_back(d);
  for_each_table([&](const auto& t) { fill_table(s, t, rows); });
  s.hlo_modules.push_back({"jit_forward", 7, "HloModule jit_forward\nENTRY e { ROOT p = f32[] parameter(0) }\n"});
  s.hlo_modules.push_back({"jit_unknown", -1, ""});
  s.hlo_modules.push_back(
      {"jit_sized", 9, "HloModule jit_sized\nENTRY e { ROOT p = f32[] parameter(0) }\n",
       "BufferAssignment:\nallocation 0: size 4, parameter 0:\n value: <0 p @0> (size=4,offset=0): f32[]\n",
       "HloLiveRange (max 1):\n  InstructionSequence:\n    0:p\n"});
  return s;
}

template <class R>
void require_table_equal(const TraceStore& a, const TraceStore& b, const TableSpec<R>& t) {
  const std::vector<R>& x = a.*(t.member);
  const std::vector<R>& y = b.*(t.member);
  INFO("table " << t.name);
  REQUIRE(x.size() == y.size());
  for (const FieldSpec<R>& f : t.fields) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      INFO("record " << i << " field " << f.name);
      REQUIRE(f.get(x[i]) == f.get(y[i]));
    }
  }
}

void require_equal(const TraceStore& a, const TraceStore& b) {
  REQUIRE(a.strings.all() == b.strings.all());
  REQUIRE(a.meta.start_ns == b.meta.start_ns);
  REQUIRE(a.meta.end_ns == b.meta.end_ns);
  REQUIRE(a.meta.dropped_records == b.meta.dropped_records);
  REQUIRE(a.meta.incomplete_records == b.meta.incomplete_records);
  REQUIRE(a.meta.driver_version == b.meta.driver_version);
  REQUIRE(a.meta.cupti_version == b.meta.cupti_version);
  REQUIRE(a.meta.cupti_path == b.meta.cupti_path);
  REQUIRE(a.meta.clock == b.meta.clock);
  REQUIRE(a.meta.gpu_available == b.meta.gpu_available);
  REQUIRE(a.meta.unavailable_reason == b.meta.unavailable_reason);
  REQUIRE(a.meta.command_buffers_disabled == b.meta.command_buffers_disabled);
  REQUIRE(a.meta.fpgaprof_version == b.meta.fpgaprof_version);
  REQUIRE(a.meta.warnings == b.meta.warnings);  // codes, counts, figures and messages
  REQUIRE(a.meta.process_index == b.meta.process_index);
  REQUIRE(a.meta.process_count == b.meta.process_count);
  REQUIRE(a.meta.process_source == b.meta.process_source);
  REQUIRE(a.meta.host_name == b.meta.host_name);
  REQUIRE(a.meta.global_device_ids == b.meta.global_device_ids);
  REQUIRE(a.meta.power_sample_period_ns == b.meta.power_sample_period_ns);
  REQUIRE(a.meta.energy_update_period_ns == b.meta.energy_update_period_ns);
  REQUIRE(a.meta.environment == b.meta.environment);
  REQUIRE(a.devices.size() == b.devices.size());
  for (std::size_t i = 0; i < a.devices.size(); ++i) {
    const DeviceInfo& x = a.devices[i];
    const DeviceInfo& y = b.devices[i];
    REQUIRE(x.id == y.id);
    REQUIRE(x.name == y.name);
    REQUIRE(x.uuid == y.uuid);
    REQUIRE(x.compute_capability_major == y.compute_capability_major);
    REQUIRE(x.compute_capability_minor == y.compute_capability_minor);
    REQUIRE(x.sm_count == y.sm_count);
    REQUIRE(x.core_clock_khz == y.core_clock_khz);
    REQUIRE(x.memory_clock_khz == y.memory_clock_khz);
    REQUIRE(x.memory_bus_width_bits == y.memory_bus_width_bits);
    REQUIRE(x.global_memory_bytes == y.global_memory_bytes);
    REQUIRE(x.l2_cache_bytes == y.l2_cache_bytes);
    REQUIRE(x.shared_memory_per_sm_bytes == y.shared_memory_per_sm_bytes);
    REQUIRE(x.max_threads_per_sm == y.max_threads_per_sm);
    REQUIRE(x.max_registers_per_sm == y.max_registers_per_sm);
    REQUIRE(x.pcie_generation == y.pcie_generation);
    REQUIRE(x.pcie_link_width == y.pcie_link_width);
  }
  for_each_table([&](const auto& t) { require_table_equal(a, b, t); });
  REQUIRE(a.hlo_modules.size() == b.hlo_modules.size());
  for (std::size_t i = 0; i < a.hlo_modules.size(); ++i) {
    REQUIRE(a.hlo_modules[i].name == b.hlo_modules[i].name);
    REQUIRE(a.hlo_modules[i].program_id == b.hlo_modules[i].program_id);
    REQUIRE(a.hlo_modules[i].text == b.hlo_modules[i].text);
    REQUIRE(a.hlo_modules[i].buffer_assignment == b.hlo_modules[i].buffer_assignment);
    REQUIRE(a.hlo_modules[i].live_ranges == b.hlo_modules[i].live_ranges);
  }
}

// Expects deserialize_trace to throw Error(kTraceFormat) whose message starts with the origin
// and contains `needle`.
void require_format_error(const std::string& bytes, const std::string& needle) {
  try {
    (void)deserialize_trace(bytes, "/some/where/t.fpgaprof");
    FAIL("no error for a bad file (expected: " << needle << ")");
  } catch (const Error& e) {
    REQUIRE(e.kind() == ErrorKind::kTraceFormat);
    const std::string msg = e.what();
    INFO(msg);
    REQUIRE(msg.rfind("/some/where/t.fpgaprof: ", 0) == 0);
    REQUIRE(msg.find(needle) != std::string::npos);
  }
}

fs::path temp_dir() {
  fs::path dir = fs::temp_directory_path() / ("fpgaprof_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("the schema names every member of every record struct", "[trace_file]") {
  // Counted by brace-initialisation, independent of the schema: a member missing from the
  // schema would silently not be saved.
  REQUIRE(fields_of<KernelRecord>().size() == member_count<KernelRecord>());
  REQUIRE(fields_of<MemcpyRecord>().size() == member_count<MemcpyRecord>());
  REQUIRE(fields_of<MemsetRecord>().size() == member_count<MemsetRecord>());
  REQUIRE(fields_of<AllocationRecord>().size() == member_count<AllocationRecord>());
  REQUIRE(fields_of<ApiRecord>().size() == member_count<ApiRecord>());
  REQUIRE(fields_of<ApiFunction>().size() == member_count<ApiFunction>());
  REQUIRE(member_count<ApiRecord>() == 6);
  REQUIRE(fields_of<SyncRecord>().size() == member_count<SyncRecord>());
  REQUIRE(fields_of<MarkerRecord>().size() == member_count<MarkerRecord>());
  REQUIRE(fields_of<RegionRecord>().size() == member_count<RegionRecord>());
  REQUIRE(fields_of<OverheadRecord>().size() == member_count<OverheadRecord>());
  REQUIRE(fields_of<ExternalCorrelationRecord>().size() == member_count<ExternalCorrelationRecord>());
  REQUIRE(fields_of<CounterRecord>().size() == member_count<CounterRecord>());
  REQUIRE(fields_of<PowerSampleRecord>().size() == member_count<PowerSampleRecord>());
  REQUIRE(member_count<PowerSampleRecord>() == 4);  // counted by hand in records.hpp
  REQUIRE(fields_of<LaunchConfig>().size() == member_count<LaunchConfig>());
  REQUIRE(member_count<KernelRecord>() == 13);  // counted by hand in records.hpp
  REQUIRE(member_count<LaunchConfig>() == 12);
}

TEST_CASE("power samples without an energy or a power value survive a round trip", "[trace_file][power]") {
  // The "not read" values are the types' largest (kNoEnergy, kNoPower): delta-encoded next to
  // ordinary readings they wrap, and must come back exactly.
  TraceStore s;
  const uint64_t energy[] = {5'000'000, kNoEnergy, 5'000'300, kNoEnergy};
  const uint32_t power[] = {300'000, 299'000, kNoPower, 0};
  for (int i = 0; i < 4; ++i) {
    PowerSampleRecord r;
    r.time_ns = 1'700'000'000'000'000'000ull + 1'000'000ull * static_cast<uint64_t>(i);
    r.device_id = static_cast<uint32_t>(i % 2);
    r.energy_mj = energy[i];
    r.power_mw = power[i];
    s.power_samples.push_back(r);
  }
  for (const bool compress : {true, false}) {
    const TraceStore back = deserialize_trace(serialize_trace(s, compress), "mem");
    REQUIRE(back.power_samples.size() == 4);
    for (int i = 0; i < 4; ++i) {
      CHECK(back.power_samples[i].time_ns == s.power_samples[i].time_ns);
      CHECK(back.power_samples[i].device_id == s.power_samples[i].device_id);
      CHECK(back.power_samples[i].energy_mj == energy[i]);
      CHECK(back.power_samples[i].power_mw == power[i]);
    }
  }
}

TEST_CASE("every field of every record type survives a round trip", "[trace_file]") {
  const TraceStore s = full_store(37);
  const std::string bytes = serialize_trace(s);
  const TraceStore back = deserialize_trace(bytes, "mem");
  require_equal(s, back);
  // Spot-check through the struct members themselves, not the schema's accessors.
  REQUIRE(back.launch_configs[5].grid_y == s.launch_configs[5].grid_y);
  REQUIRE(back.kernels[5].launch_config == s.kernels[5].launch_config);
  REQUIRE(back.memcpys[3].copy_kind == s.memcpys[3].copy_kind);
  REQUIRE(back.counters[2].value == s.counters[2].value);
  REQUIRE(back.markers[4].is_closed == s.markers[4].is_closed);
  REQUIRE(back.allocations[6].address == s.allocations[6].address);
  REQUIRE(back.meta.warnings.size() == 2);  // the repeated warning is one record, counted
  CHECK(back.meta.warnings[0].code() == kOlderTraceCode);
  CHECK(back.meta.warnings[1].count == 2);
  CHECK(back.meta.warnings[1].code() == "capture.records_dropped");
  CHECK(back.meta.warnings[1].numbers == std::vector<double>{12.5, -3});
  CHECK(back.meta.warnings[1].message == "second \"quoted\" warning");
  // Serialization is deterministic.
  REQUIRE(serialize_trace(back) == bytes);
}

TEST_CASE("an empty store round-trips", "[trace_file]") {
  TraceStore s;
  const TraceStore back = deserialize_trace(serialize_trace(s), "mem");
  require_equal(s, back);
  REQUIRE(back.strings.size() == 1);
}

TEST_CASE("the older wording of the records-without-timestamps warning is reworded when read", "[trace_file]") {
  // A trace of the previous writer: its warning blamed a full device buffer and named a C++-only
  // option. Read back it names the cause the trace shows (kernel replay where it has counters)
  // and a fix the API offers; a warning whose count disagrees (an edited file) is left as it is.
  for (const bool counters : {false, true}) {
    TraceStore s;
    s.kernels.resize(2);  // start = end = 0
    s.meta.incomplete_records = 2;
    s.meta.warnings.add("capture.records_incomplete", older_incomplete_records_warning(2), {2});
    if (counters) s.counters.push_back(CounterRecord{});
    const TraceStore back = deserialize_trace(serialize_trace(s), "mem");
    REQUIRE(back.meta.warnings.size() == 1);
    CHECK(back.meta.warnings[0].code() == "capture.records_incomplete");
    CHECK(back.meta.warnings[0].message == incomplete_records_warning(2, counters));
    CHECK(back.meta.warnings[0].message.find("device_buffer_bytes") == std::string::npos);
    CHECK(back.meta.incomplete_records == 2);
  }
  TraceStore edited;
  edited.meta.incomplete_records = 2;
  edited.meta.warnings.add("capture.records_incomplete", older_incomplete_records_warning(3), {3});
  const TraceStore back = deserialize_trace(serialize_trace(edited), "mem");
  CHECK(back.meta.warnings[0].message == older_incomplete_records_warning(3));
}

TEST_CASE("hand-set extreme values survive", "[trace_file]") {
  TraceStore s;
  KernelRecord k;
  k.start_ns = kNone64 - 5;  // end < start as stored: the relative encoding must wrap
  k.end_ns = 3;
  k.launch_ns = 0;
  LaunchConfig c_max;
  c_max.graph_node_id = kNone64;
  c_max.grid_x = kNone32;
  k.launch_config = s.intern_launch_config(c_max);
  k.correlation_id = kNone32;
  s.kernels.push_back(k);
  k.start_ns = 0;
  k.end_ns = kNone64;
  s.kernels.push_back(k);
  CounterRecord c;
  c.value = -0.0;
  s.counters.push_back(c);
  c.value = std::numeric_limits<double>::infinity();
  s.counters.push_back(c);
  const TraceStore back = deserialize_trace(serialize_trace(s), "mem");
  require_equal(s, back);
  REQUIRE(back.kernels[0].start_ns == kNone64 - 5);
  REQUIRE(back.kernels[0].end_ns == 3);
  REQUIRE(back.kernels[1].end_ns == kNone64);
  REQUIRE(back.launch_config_of(back.kernels[0]).graph_node_id == kNone64);
  REQUIRE(back.launch_config_of(back.kernels[0]).grid_x == kNone32);
  REQUIRE(std::signbit(back.counters[0].value));
  REQUIRE(std::isinf(back.counters[1].value));
}

TEST_CASE("bad files are rejected with the path and the reason", "[trace_file]") {
  const std::string good = serialize_trace(full_store(5));
  REQUIRE_NOTHROW(deserialize_trace(good, "x"));

  SECTION("empty") { require_format_error("", "empty"); }
  SECTION("wrong magic") {
    std::string bad = good;
    bad[0] = 'X';
    require_format_error(bad, "wrong magic");
    require_format_error("{\"not\": \"a trace\"}", "wrong magic");
  }
  SECTION("future version") {
    std::string bad = good;
    bad[8] = 3;  // format version, little endian u32 after the 8-byte magic
    require_format_error(bad, "version 3");
    require_format_error(bad, "upgrade fpgaprof");
  }
  SECTION("version 1 (development builds, kernels carried their launch configuration)") {
    std::string old = good;
    old[8] = 1;
    require_format_error(old, "version 1");
    require_format_error(old, "record the trace again");
  }
  SECTION("every truncation") {
    // Every proper prefix of a valid file is a truncated file.
    for (std::size_t n = 1; n < good.size(); ++n) {
      INFO("prefix " << n);
      REQUIRE_THROWS_AS(deserialize_trace(std::string_view(good).substr(0, n), "p"), Error);
      try {
        (void)deserialize_trace(std::string_view(good).substr(0, n), "p");
      } catch (const Error& e) {
        REQUIRE(e.kind() == ErrorKind::kTraceFormat);
      }
    }
    require_format_error(good.substr(0, good.size() - 1), "truncated");
  }
  SECTION("trailing garbage") { require_format_error(good + "x", "trailing"); }
  SECTION("every corrupted payload byte is caught") {
    // Flip each byte after the file header; header fields give length/CRC errors, payload
    // bytes give CRC errors. Nothing may be accepted or crash.
    for (std::size_t i = 16; i < good.size(); ++i) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ 0x5a);
      INFO("byte " << i);
      try {
        (void)deserialize_trace(bad, "c");
        // A flipped byte in a section tag of a section the reader skips is harmless only for
        // unknown tags; every tag written here is known, so acceptance is a bug.
        FAIL("corruption at byte " << i << " accepted");
      } catch (const Error& e) {
        REQUIRE(e.kind() == ErrorKind::kTraceFormat);
      }
    }
    std::string bad = good;
    bad[good.size() / 2] = static_cast<char>(bad[good.size() / 2] ^ 1);
    require_format_error(bad, "");
  }
}

TEST_CASE("out-of-range values written by a buggy writer are rejected", "[trace_file]") {
  auto with = [](auto mutate) {
    TraceStore s = full_store(3);
    mutate(s);
    return serialize_trace(s);
  };
  require_format_error(with([](TraceStore& s) { s.kernels[1].name = static_cast<StringId>(s.strings.size()); }),
                       "string table");
  require_format_error(with([](TraceStore& s) { s.api_functions[0].name = 1u << 30; }), "string table");
  require_format_error(with([](TraceStore& s) { s.kernels[2].api_index = 3; }), "api_index");
  require_format_error(with([](TraceStore& s) { s.markers[0].parent = 99; }), "parent");
  require_format_error(with([](TraceStore& s) { s.counters[0].kernel_index = 3; }), "kernel_index");
  require_format_error(with([](TraceStore& s) { s.memcpys[0].copy_kind = static_cast<CopyKind>(11); }),
                       "copy_kind = 11 is out of range");
  require_format_error(with([](TraceStore& s) { s.api_functions[0].kind = static_cast<ApiKind>(2); }),
                       "kind = 2 is out of range");
  require_format_error(with([](TraceStore& s) { s.api_calls[1].function = 5; }), "function = 5 refers past the end");
  require_format_error(with([](TraceStore& s) { s.kernels[1].launch_config = 5; }),
                       "launch_config = 5 refers past the end");
  require_format_error(with([](TraceStore& s) { s.syncs[0].kind = static_cast<SyncKind>(200); }), "out of range");
  // Limits themselves are accepted: kNone32 means "none".
  REQUIRE_NOTHROW(deserialize_trace(with([](TraceStore& s) { s.kernels[2].api_index = kNone32; }), "x"));
  REQUIRE_NOTHROW(deserialize_trace(with([](TraceStore& s) { s.memcpys[0].copy_kind = CopyKind::kDtoA; }), "x"));
}

TEST_CASE("write_trace is atomic and read_trace reports I/O errors", "[trace_file]") {
  const fs::path dir = temp_dir();
  const std::string path = (dir / "t.fpgaprof").string();
  const TraceStore s = full_store(4);
  write_trace(s, path);
  require_equal(s, read_trace(path));
  // Overwrite in place: a reader never sees a partial file, and no temporary is left behind.
  TraceStore s2 = full_store(6);
  write_trace(s2, path);
  require_equal(s2, read_trace(path));
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  REQUIRE(entries == 1);

  try {
    write_trace(s, (dir / "no_such_dir" / "t.fpgaprof").string());
    FAIL("write into a missing directory succeeded");
  } catch (const Error& e) {
    REQUIRE(e.kind() == ErrorKind::kIo);
    REQUIRE(std::string(e.what()).find("no_such_dir") != std::string::npos);
  }
  try {
    (void)read_trace((dir / "missing.fpgaprof").string());
    FAIL("reading a missing file succeeded");
  } catch (const Error& e) {
    REQUIRE(e.kind() == ErrorKind::kIo);
  }
  { std::ofstream empty(dir / "empty.fpgaprof"); }
  try {
    (void)read_trace((dir / "empty.fpgaprof").string());
    FAIL("reading an empty file succeeded");
  } catch (const Error& e) {
    REQUIRE(e.kind() == ErrorKind::kTraceFormat);
    REQUIRE(std::string(e.what()).find("empty.fpgaprof: ") != std::string::npos);
  }
  // A folder opens (O_RDONLY) but cannot be read: a typed I/O error, not std::ios_base::failure
  // from libstdc++'s filebuf ("basic_filebuf::underflow ... Is a directory").
  try {
    (void)read_trace(dir.string());
    FAIL("reading a folder succeeded");
  } catch (const Error& e) {
    REQUIRE(e.kind() == ErrorKind::kIo);
    REQUIRE(std::string(e.what()).find("is a folder, not a trace file") != std::string::npos);
  }
  fs::remove_all(dir);
}

namespace {

// A realistic kernel stream: a training-like loop over ~200 distinct kernels (XLA fusions,
// cuBLAS/cutlass GEMMs, reductions) with fixed launch shapes per kernel, durations that vary
// around a per-kernel mean, small gaps, launches that run ahead of execution, and each kernel's
// driver API record (cuLaunchKernel).
TraceStore realistic_store(std::size_t n_kernels) {
  TraceStore s;
  std::mt19937_64 rng(12345);
  struct Kind {
    StringId name;
    uint32_t grid[3], block[3], regs, smem;
    double mean_ns;
  };
  std::vector<Kind> kinds;
  const char* families[] = {"loop_multiply_fusion_",
                            "input_reduce_fusion_",
                            "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_"
                            "segment_k_off_kernel__5x_cublas_",
                            "loop_add_fusion_",
                            "wrapped_transpose_",
                            "cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_",
                            "input_scatter_fusion_",
                            "loop_convert_fusion_"};
  std::uniform_int_distribution<uint32_t> pow2(5, 14);
  for (int i = 0; i < 200; ++i) {
    Kind k{};
    k.name = s.strings.intern(std::string(families[i % 8]) + std::to_string(i));
    k.grid[0] = 1u << pow2(rng);
    k.grid[1] = i % 5 == 0 ? 4 : 1;
    k.grid[2] = 1;
    k.block[0] = i % 3 == 0 ? 128 : 256;
    k.block[1] = 1;
    k.block[2] = 1;
    k.regs = 16 + 8 * static_cast<uint32_t>(i % 12);
    k.smem = i % 4 == 0 ? 16384 : 0;
    k.mean_ns = 2000.0 * std::pow(1.03, i % 150);  // 2 µs .. ~170 µs
    kinds.push_back(k);
  }
  const StringId launch = s.strings.intern("cuLaunchKernel");
  // The program's step: a fixed sequence of 60 kernels drawn from the set, repeated, with
  // occasional other kernels in between (data-dependent paths).
  std::vector<std::size_t> step(60);
  std::uniform_int_distribution<std::size_t> any(0, kinds.size() - 1);
  for (auto& k : step) k = any(rng);
  std::normal_distribution<double> jitter(1.0, 0.08);
  std::exponential_distribution<double> gap(1.0 / 3000.0);  // mean 3 µs between kernels
  std::uniform_int_distribution<uint32_t> coin(0, 99);
  std::uniform_int_distribution<uint64_t> api_ns(2500, 9000);
  uint64_t t = 1'763'700'000'000'000'000ull;
  uint64_t host = t - 50'000;
  uint32_t corr = 1000;
  s.kernels.reserve(n_kernels);
  s.api_calls.reserve(n_kernels);
  for (std::size_t i = 0; i < n_kernels; ++i) {
    const Kind& kd = kinds[coin(rng) < 5 ? any(rng) : step[i % step.size()]];
    ApiRecord a;
    a.start_ns = host;
    a.end_ns = host + api_ns(rng);
    corr += 1 + (coin(rng) < 20 ? 2 : 0);  // other API calls (event records, memcpys) in between
    a.correlation_id = corr;
    a.thread_id = 48211;
    ApiFunction launch_fn;
    launch_fn.callback_id = 307;
    launch_fn.name = launch;
    launch_fn.kind = ApiKind::kDriver;
    a.function = s.intern_api_function(launch_fn);
    host = a.end_ns + 200 + coin(rng) * 10;
    KernelRecord k;
    t = std::max(t + static_cast<uint64_t>(gap(rng)), a.start_ns + 4000);
    k.start_ns = t;
    k.end_ns = t + static_cast<uint64_t>(std::max(500.0, kd.mean_ns * jitter(rng)));
    t = k.end_ns;
    if (host + 20'000 < t) host = t - 20'000;  // host stays ahead of the GPU, within a queue depth
    k.launch_ns = a.start_ns;
    k.correlation_id = corr;
    k.thread_id = a.thread_id;
    k.name = kd.name;
    k.device_id = 0;
    k.context_id = 1;
    k.stream_id = 13;
    LaunchConfig c;
    c.grid_x = kd.grid[0];
    c.grid_y = kd.grid[1];
    c.grid_z = kd.grid[2];
    c.block_x = kd.block[0];
    c.block_y = kd.block[1];
    c.block_z = kd.block[2];
    c.registers_per_thread = kd.regs;
    c.static_shared_bytes = kd.smem;
    c.dynamic_shared_bytes = kd.smem / 2;
    k.launch_config = s.intern_launch_config(c);
    k.api_index = static_cast<uint32_t>(i);
    s.kernels.push_back(k);
    s.api_calls.push_back(a);
  }
  return s;
}

}  // namespace

TEST_CASE("a million realistic kernels take at most 32 bytes each on disk", "[trace_file][size]") {
  constexpr std::size_t kKernels = 1'000'000;
  const TraceStore s = realistic_store(kKernels);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string bytes = serialize_trace(s);
  const auto t1 = std::chrono::steady_clock::now();
  const TraceStore back = deserialize_trace(bytes, "mem");
  const auto t2 = std::chrono::steady_clock::now();
  const double per_kernel = static_cast<double>(bytes.size()) / kKernels;
  std::cout << "trace size: " << bytes.size() << " bytes for " << kKernels
            << " kernels + their API records = " << per_kernel << " bytes/kernel; serialize "
            << std::chrono::duration<double>(t1 - t0).count() << " s, deserialize "
            << std::chrono::duration<double>(t2 - t1).count() << " s\n";
  REQUIRE(bytes.size() <= 40'000'000);  // hard limit
  REQUIRE(per_kernel <= 32.0);          // target
  REQUIRE(back.kernels.size() == kKernels);
  REQUIRE(back.api_calls.size() == kKernels);
  for (std::size_t i = 0; i < kKernels; i += 9973) {
    INFO("kernel " << i);
    REQUIRE(back.kernels[i].start_ns == s.kernels[i].start_ns);
    REQUIRE(back.kernels[i].end_ns == s.kernels[i].end_ns);
    REQUIRE(back.kernels[i].name == s.kernels[i].name);
    REQUIRE(back.launch_config_of(back.kernels[i]) == s.launch_config_of(s.kernels[i]));
    REQUIRE(back.api_calls[i].end_ns == s.api_calls[i].end_ns);
  }
}

namespace {

// `file` without its section `tag` (the header's section count one less; every other
// section, CRC included, as it was): a file cut by a tool that knows the layout.
std::string without_section(const std::string& file, std::string_view tag) {
  constexpr std::size_t kHeader = 16, kSectionHeader = 28;
  std::size_t at = kHeader;
  while (at + kSectionHeader <= file.size()) {
    uint64_t stored = 0;
    std::memcpy(&stored, file.data() + at + 16, 8);  // after tag, codec and raw length
    const std::size_t next = at + kSectionHeader + static_cast<std::size_t>(stored);
    if (std::string_view(file).substr(at, 4) == tag) {
      std::string out = file.substr(0, at) + file.substr(next);
      uint32_t count = 0;
      std::memcpy(&count, out.data() + 12, 4);
      count -= 1;
      std::memcpy(out.data() + 12, &count, 4);
      return out;
    }
    at = next;
  }
  FAIL("no section " << tag);
  return file;
}

}  // namespace

TEST_CASE("a table section cut out of a file is refused, not read as an empty table", "[trace_file]") {
  // META's "tables" says how many records each table holds; the reader checks them.
  const TraceStore s = full_store(5);
  REQUIRE(s.kernels.size() == 5);
  const std::string good = serialize_trace(s);
  require_format_error(without_section(good, "KERN"),
                       "META says table kernels holds 5 records, but the file has no KERN section");
  require_format_error(without_section(good, "MCPY"), "the file was cut or edited");
  // A store with no memsets has an MSET section of 0 records: without it, the table is empty
  // as META says, and the file reads.
  TraceStore no_memsets = full_store(5);
  no_memsets.memsets.clear();
  const std::string plain = serialize_trace(no_memsets);
  const TraceStore back = deserialize_trace(without_section(plain, "MSET"), "x");
  CHECK(back.memsets.empty());
  CHECK(back.kernels.size() == 5);
}

TEST_CASE("uncompressed sections are read like compressed ones", "[trace_file]") {
  const TraceStore s = full_store(9);
  const std::string plain = serialize_trace(s, false);
  const std::string packed = serialize_trace(s, true);
  REQUIRE(plain != packed);
  require_equal(s, deserialize_trace(plain, "plain"));
  // A stored section whose lengths disagree is rejected.
  std::string bad = plain;
  bad[16 + 8] = static_cast<char>(bad[16 + 8] + 1);  // META raw length (after tag and codec)
  REQUIRE_THROWS_AS(deserialize_trace(bad, "x"), Error);
}

TEST_CASE("a trace written before the job META keys reads as a process of a one-process job", "[trace_file]") {
  // A copy of a seed written before process_index & co. existed: it reads with the defaults.
  const TraceStore s = read_trace(std::string(FPGAPROF_TEST_DATA_DIR) +
                                  "/../fuzz/corpus/trace_reader_fuzzer/before_job_meta_3.fpgaprof");
  CHECK(s.meta.process_index == -1);
  CHECK(s.meta.process_count == 0);
  CHECK(s.meta.process_source.empty());
  CHECK(s.meta.host_name.empty());
  CHECK(s.meta.global_device_ids.empty());
  CHECK(s.meta.environment.empty());  // written before META recorded the environment
  CHECK(s.meta.fpgaprof_version == full_store(3).meta.fpgaprof_version);
  // Nor the power samples (POWR) and their META keys: not sampled.
  CHECK(s.power_samples.empty());
  CHECK(s.meta.power_sample_period_ns == 0);
  CHECK(s.meta.energy_update_period_ns == 0);
}

namespace {

const std::string kCorpusDir = std::string(FPGAPROF_TEST_DATA_DIR) + "/../fuzz/corpus/trace_reader_fuzzer";

// The fuzz seeds: small valid traces, compressed and not.
std::vector<std::pair<std::string, std::string>> corpus_seeds() {
  std::vector<std::pair<std::string, std::string>> seeds;
  seeds.emplace_back("empty_store", serialize_trace(TraceStore{}));
  seeds.emplace_back("empty_store_plain", serialize_trace(TraceStore{}, false));
  seeds.emplace_back("every_table_3", serialize_trace(full_store(3)));
  seeds.emplace_back("every_table_3_plain", serialize_trace(full_store(3), false));
  seeds.emplace_back("every_table_1_plain", serialize_trace(full_store(1), false));
  seeds.emplace_back("kernels_40_plain", serialize_trace(realistic_store(40), false));
  seeds.emplace_back("kernels_300", serialize_trace(realistic_store(300)));
  return seeds;
}

}  // namespace

// Hidden: rewrites the committed seed corpus. Run after a format change:
//   build/<dir>/tests/fpgaprof_tests "[.corpus]"
TEST_CASE("write the trace reader fuzz corpus", "[.corpus]") {
  fs::create_directories(kCorpusDir);
  for (const auto& [name, bytes] : corpus_seeds()) {
    std::ofstream out(kCorpusDir + "/" + name + ".fpgaprof", std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
}

TEST_CASE("the committed fuzz seeds are current, valid traces", "[trace_file]") {
  std::size_t total = 0;
  for (const auto& [name, bytes] : corpus_seeds()) {
    INFO(name << ": regenerate with fpgaprof_tests \"[.corpus]\" after a format change");
    const std::string path = kCorpusDir + "/" + name + ".fpgaprof";
    REQUIRE(fs::exists(path));
    const TraceStore s = read_trace(path);
    require_equal(s, deserialize_trace(bytes, name));
    total += bytes.size();
  }
  REQUIRE(total < 100 * 1024);
}

// The trace file (format version 2). Layout, all integers little endian:
//
//   header   "FPGAPROF" | u32 format_version | u32 section_count
//   section  char tag[4] | u32 codec (0 stored, 1 zlib) | u64 raw_bytes | u64 stored_bytes |
//            u32 crc32(the 24 bytes before it + payload) | payload[stored_bytes]   (section_count times)
//
// Sections: META (JSON: TraceMeta, devices, table sizes), STRS (string table), one per record
// table (tags in record_schema.hpp; records stored column-wise, each column delta/varint
// encoded), HLOM (HLO module texts), END (empty, last). docs/trace-format.md has the details.
#include "fpgaprof/trace_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fpgaprof/error.hpp"
#include "fpgaprof/record_schema.hpp"
#include "fpgaprof/version.hpp"

namespace fpgaprof {
namespace {

constexpr char kMagic[8] = {'F', 'P', 'G', 'A', 'P', 'R', 'O', 'F'};
// 2: kernels refer to a launch_configs table (LCFG) instead of carrying grid, block and
// resource columns. Version 1 came only from development builds before the first release.
constexpr uint32_t kFormatVersion = 2;
constexpr uint32_t kOldestReadableVersion = 2;
constexpr uint32_t kCodecStored = 0;
constexpr uint32_t kCodecZlib = 1;
constexpr std::size_t kSectionHeaderBytes = 28;
// deflate never expands less than ~1:1032; a larger claimed ratio is a corrupt header, and
// refusing it keeps a forged length from allocating gigabytes.
constexpr uint64_t kMaxZlibRatio = 1100;

[[noreturn]] void fail(const std::string& origin, const std::string& reason) {
  throw Error(ErrorKind::kTraceFormat,
              origin + ": " + reason +
                  " (the file is not a complete fpgaprof trace: re-record it, or re-copy it if it was "
                  "transferred)");
}

// ---- writing -------------------------------------------------------------------------

class ByteWriter {
 public:
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) u8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) u8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void varint(uint64_t v) {
    while (v >= 0x80) {
      u8(static_cast<uint8_t>(v | 0x80));
      v >>= 7;
    }
    u8(static_cast<uint8_t>(v));
  }
  void svarint(int64_t v) { varint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
  void bytes(std::string_view s) { out_.append(s); }
  void str(std::string_view s) {
    varint(s.size());
    bytes(s);
  }
  std::string& data() { return out_; }

 private:
  std::string out_;
};

std::string zlib_compress(const std::string& raw) {
  uLongf bound = compressBound(static_cast<uLong>(raw.size()));
  std::string out(bound, '\0');
  const int rc = compress2(reinterpret_cast<Bytef*>(out.data()), &bound, reinterpret_cast<const Bytef*>(raw.data()),
                           static_cast<uLong>(raw.size()), 6);
  if (rc != Z_OK) throw Error(ErrorKind::kInternal, "zlib compress2 failed with code " + std::to_string(rc));
  out.resize(bound);
  return out;
}

// CRC32 of the section header (tag, codec, lengths) and its stored payload, so a damaged tag
// or length is caught like damaged data.
uint32_t section_crc(std::string_view header, std::string_view stored) {
  uLong crc = crc32_z(0, reinterpret_cast<const Bytef*>(header.data()), header.size());
  crc = crc32_z(crc, reinterpret_cast<const Bytef*>(stored.data()), stored.size());
  return static_cast<uint32_t>(crc);
}

void add_section(ByteWriter& file, const char* tag, const std::string& raw, bool compress) {
  const std::string stored = compress ? zlib_compress(raw) : raw;
  const std::size_t header_at = file.data().size();
  file.bytes(std::string_view(tag, 4));
  file.u32(compress ? kCodecZlib : kCodecStored);
  file.u64(raw.size());
  file.u64(stored.size());
  file.u32(section_crc(std::string_view(file.data()).substr(header_at, kSectionHeaderBytes - 4), stored));
  file.bytes(stored);
}

template <class R>
std::string encode_table(const std::vector<R>& rows, std::span<const FieldSpec<R>> fields) {
  ByteWriter w;
  w.varint(rows.size());
  w.varint(fields.size());
  std::vector<uint64_t> column(rows.size());
  std::map<std::string_view, std::vector<uint64_t>> kept;  // columns others are relative to
  for (std::size_t c = 0; c < fields.size(); ++c) {
    const FieldSpec<R>& f = fields[c];
    for (std::size_t i = 0; i < rows.size(); ++i) column[i] = f.get(rows[i]);
    ByteWriter col;
    switch (f.encoding) {
      case ColumnEncoding::kVarint:
        for (uint64_t v : column) col.varint(v);
        break;
      case ColumnEncoding::kDelta: {
        uint64_t prev = 0;
        for (uint64_t v : column) {
          col.svarint(static_cast<int64_t>(v - prev));
          prev = v;
        }
        break;
      }
      case ColumnEncoding::kRelative: {
        const std::vector<uint64_t>& base = kept.at(f.base);
        for (std::size_t i = 0; i < column.size(); ++i) col.svarint(static_cast<int64_t>(column[i] - base[i]));
        break;
      }
      case ColumnEncoding::kFixed64:
        for (uint64_t v : column) col.u64(v);
        break;
    }
    w.str(f.name);
    w.u8(static_cast<uint8_t>(f.encoding));
    if (f.encoding == ColumnEncoding::kRelative) {
      std::size_t base_index = 0;
      while (std::string_view(fields[base_index].name) != f.base) ++base_index;
      w.varint(base_index);
    }
    w.str(col.data());
    // Only the relative encodings' bases are kept, so peak memory stays one column per table.
    for (const FieldSpec<R>& other : fields) {
      if (other.base != nullptr && std::string_view(other.base) == f.name) {
        kept[f.name] = column;
        break;
      }
    }
  }
  return std::move(w.data());
}

nlohmann::json meta_json(const TraceStore& s) {
  const TraceMeta& m = s.meta;
  nlohmann::json meta = {
      {"start_ns", m.start_ns},
      {"end_ns", m.end_ns},
      {"dropped_records", m.dropped_records},
      {"incomplete_records", m.incomplete_records},
      {"driver_version", m.driver_version},
      {"cupti_version", m.cupti_version},
      {"cupti_path", m.cupti_path},
      {"clock", m.clock},
      {"gpu_available", m.gpu_available},
      {"unavailable_reason", m.unavailable_reason},
      {"command_buffers_disabled", m.command_buffers_disabled},
      {"fpgaprof_version", m.fpgaprof_version},
      {"warnings", m.warnings},
      {"process_index", m.process_index},
      {"process_count", m.process_count},
      {"process_source", m.process_source},
      {"host_name", m.host_name},
      {"global_device_ids", m.global_device_ids},
  };
  nlohmann::json devices = nlohmann::json::array();
  for (const DeviceInfo& d : s.devices) {
    devices.push_back({
        {"id", d.id},
        {"name", d.name},
        {"uuid", d.uuid},
        {"compute_capability_major", d.compute_capability_major},
        {"compute_capability_minor", d.compute_capability_minor},
        {"sm_count", d.sm_count},
        {"core_clock_khz", d.core_clock_khz},
        {"memory_clock_khz", d.memory_clock_khz},
        {"memory_bus_width_bits", d.memory_bus_width_bits},
        {"global_memory_bytes", d.global_memory_bytes},
        {"l2_cache_bytes", d.l2_cache_bytes},
        {"shared_memory_per_sm_bytes", d.shared_memory_per_sm_bytes},
        {"max_threads_per_sm", d.max_threads_per_sm},
        {"max_registers_per_sm", d.max_registers_per_sm},
        {"pcie_generation", d.pcie_generation},
        {"pcie_link_width", d.pcie_link_width},
    });
  }
  nlohmann::json tables = nlohmann::json::object();
  for_each_table([&](const auto& t) {
    nlohmann::json cols = nlohmann::json::array();
    for (const auto& f : t.fields) cols.push_back(f.name);
    tables[t.name] = {{"tag", t.tag}, {"records", (s.*(t.member)).size()}, {"columns", cols}};
  });
  return {{"format", "fpgaprof-trace"},
          {"format_version", kFormatVersion},
          {"writer", std::string("fpgaprof ") + version()},
          {"meta", meta},
          {"devices", devices},
          {"tables", tables},
          {"strings", s.strings.size()},
          {"hlo_modules", s.hlo_modules.size()}};
}

// ---- reading -------------------------------------------------------------------------

class ByteReader {
 public:
  ByteReader(std::string_view data, const std::string& origin, const char* what)
      : data_(data), origin_(origin), what_(what) {}
  bool done() const { return pos_ == data_.size(); }
  std::size_t remaining() const { return data_.size() - pos_; }
  uint8_t u8() {
    need(1);
    return static_cast<uint8_t>(data_[pos_++]);
  }
  uint32_t u32() {
    need(4);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(data_[pos_++])) << (8 * i);
    return v;
  }
  uint64_t u64() {
    need(8);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_++])) << (8 * i);
    return v;
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      const uint8_t b = u8();
      if (shift == 63 && b > 1) fail(origin_, std::string("varint overflows 64 bits in ") + what_);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    fail(origin_, std::string("varint longer than 10 bytes in ") + what_);
  }
  int64_t svarint() {
    const uint64_t u = varint();
    return static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
  }
  std::string_view bytes(uint64_t n) {
    if (n > remaining()) {
      fail(origin_, std::string("truncated ") + what_ + " (needs " + std::to_string(n) + " bytes, " +
                        std::to_string(remaining()) + " left)");
    }
    const std::string_view out = data_.substr(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return out;
  }
  std::string_view str() { return bytes(varint()); }
  // A count of items that each take at least min_bytes_each bytes: a count the remaining
  // data cannot hold is corrupt, which also bounds every allocation by the input size.
  std::size_t count(const char* item, std::size_t min_bytes_each) {
    const uint64_t n = varint();
    if (min_bytes_each > 0 && n > remaining() / min_bytes_each) {
      fail(origin_,
           std::string("count of ") + item + " (" + std::to_string(n) + ") exceeds what " + what_ + " can hold");
    }
    if (min_bytes_each == 0 && n > (uint64_t{1} << 32)) {
      fail(origin_, std::string("implausible count of ") + item + " (" + std::to_string(n) + ") in " + what_);
    }
    return static_cast<std::size_t>(n);
  }

 private:
  void need(std::size_t n) const {
    if (n > remaining()) fail(origin_, std::string("truncated ") + what_);
  }
  std::string_view data_;
  std::size_t pos_ = 0;
  const std::string& origin_;
  const char* what_;
};

std::string decompress(std::string_view stored, uint64_t raw_bytes, const std::string& origin, const std::string& tag) {
  if (raw_bytes > stored.size() * kMaxZlibRatio + 64) {
    fail(origin, "section " + tag + " claims " + std::to_string(raw_bytes) + " bytes from " +
                     std::to_string(stored.size()) + " compressed bytes, more than zlib can produce");
  }
  std::string raw(static_cast<std::size_t>(raw_bytes), '\0');
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) throw Error(ErrorKind::kInternal, "zlib inflateInit failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(stored.data()));
  zs.next_out = reinterpret_cast<Bytef*>(raw.data());
  std::size_t in_left = stored.size();
  std::size_t out_left = raw.size();
  int rc = Z_OK;
  // zlib counts in uInt (32 bits): feed both buffers in chunks.
  while (rc == Z_OK) {
    const uInt in_chunk = static_cast<uInt>(std::min<std::size_t>(in_left, 1u << 30));
    const uInt out_chunk = static_cast<uInt>(std::min<std::size_t>(out_left, 1u << 30));
    zs.avail_in = in_chunk;
    zs.avail_out = out_chunk;
    rc = inflate(&zs, Z_NO_FLUSH);
    in_left -= in_chunk - zs.avail_in;
    out_left -= out_chunk - zs.avail_out;
    if (rc == Z_BUF_ERROR && (in_left == 0 || out_left == 0)) break;
    if (rc == Z_OK && in_chunk == zs.avail_in && out_chunk == zs.avail_out) break;  // no progress
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END || out_left != 0 || in_left != 0) {
    fail(origin, "section " + tag + " does not decompress to its declared " + std::to_string(raw_bytes) +
                     " bytes (zlib code " + std::to_string(rc) + ")");
  }
  return raw;
}

template <class R>
void decode_table(std::string_view payload, const TableSpec<R>& spec, TraceStore& store, const std::string& origin) {
  const std::string what = std::string("table ") + spec.name;
  ByteReader r(payload, origin, what.c_str());
  const std::size_t rows = r.count("records", 0);
  const std::size_t columns = r.count("columns", 3);
  // Every stored value takes at least one byte, so a column of `rows` values needs `rows`
  // bytes: check before allocating the records.
  if (columns > 0 && rows > r.remaining()) {
    fail(origin, what + " claims " + std::to_string(rows) + " records in " + std::to_string(r.remaining()) + " bytes");
  }
  if (columns == 0 && rows != 0) fail(origin, what + " has records but no columns");
  struct Column {
    std::string_view name;
    ColumnEncoding encoding;
    std::size_t base;
    std::string_view data;
  };
  std::vector<Column> cols(columns);
  std::vector<bool> is_base(columns, false);
  for (std::size_t c = 0; c < columns; ++c) {
    Column& col = cols[c];
    col.name = r.str();
    const uint8_t enc = r.u8();
    if (enc > static_cast<uint8_t>(ColumnEncoding::kFixed64)) {
      fail(origin, what + " column '" + std::string(col.name) + "' has unknown encoding " + std::to_string(enc));
    }
    col.encoding = static_cast<ColumnEncoding>(enc);
    col.base = 0;
    if (col.encoding == ColumnEncoding::kRelative) {
      const uint64_t b = r.varint();
      if (b >= c) fail(origin, what + " column '" + std::string(col.name) + "' is relative to a later column");
      col.base = static_cast<std::size_t>(b);
      is_base[col.base] = true;
    }
    col.data = r.str();
  }
  if (!r.done()) fail(origin, what + " has trailing bytes");

  std::vector<R>& out = store.*(spec.member);
  out.assign(rows, R{});
  // Decoded values are kept only for columns that later columns are relative to.
  std::vector<std::vector<uint64_t>> kept(columns);
  std::vector<uint64_t> values(rows);
  std::vector<bool> seen(spec.fields.size(), false);
  for (std::size_t c = 0; c < columns; ++c) {
    const Column& col = cols[c];
    ByteReader in(col.data, origin, what.c_str());
    uint64_t prev = 0;
    for (std::size_t i = 0; i < rows; ++i) {
      switch (col.encoding) {
        case ColumnEncoding::kVarint: values[i] = in.varint(); break;
        case ColumnEncoding::kDelta:
          prev += static_cast<uint64_t>(in.svarint());
          values[i] = prev;
          break;
        case ColumnEncoding::kRelative: values[i] = kept[col.base][i] + static_cast<uint64_t>(in.svarint()); break;
        case ColumnEncoding::kFixed64: values[i] = in.u64(); break;
      }
    }
    if (!in.done()) fail(origin, what + " column '" + std::string(col.name) + "' has trailing bytes");
    // Columns this reader does not know come from a newer writer of the same format
    // version: skip them. Known columns are validated before they touch a record.
    for (std::size_t k = 0; k < spec.fields.size(); ++k) {
      const FieldSpec<R>& f = spec.fields[k];
      if (col.name != f.name) continue;
      if (seen[k]) fail(origin, what + " has column '" + std::string(col.name) + "' twice");
      seen[k] = true;
      for (std::size_t i = 0; i < rows; ++i) {
        if (values[i] > f.max_value) {
          fail(origin, what + " record " + std::to_string(i) + " field " + f.name + " = " + std::to_string(values[i]) +
                           " is out of range (max " + std::to_string(f.max_value) + ")");
        }
        f.set(out[i], values[i]);
      }
    }
    if (is_base[c]) kept[c] = values;
  }
}

template <class R>
void validate_refs(const TraceStore& store, const TableSpec<R>& spec, const std::string& origin) {
  const std::vector<R>& rows = store.*(spec.member);
  for (const FieldSpec<R>& f : spec.fields) {
    if (f.ref == FieldRef::kNone) continue;
    const std::size_t limit = ref_target_size(store, f.ref, rows);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const uint64_t v = f.get(rows[i]);
      if (f.ref != FieldRef::kString && v == kNone32) continue;
      if (v >= limit) {
        fail(origin, std::string("table ") + spec.name + " record " + std::to_string(i) + " field " + f.name + " = " +
                         std::to_string(v) + " refers past the end of " +
                         (f.ref == FieldRef::kString ? std::string("the string table") : std::string("its table")) +
                         " (" + std::to_string(limit) + " entries)");
      }
    }
  }
}

template <class T>
T json_get(const nlohmann::json& j, const char* key) {
  return j.at(key).get<T>();
}

void read_meta(const std::string& text, TraceStore& s, const std::string& origin) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (!j.is_object() || j.value("format", std::string()) != "fpgaprof-trace") {
      fail(origin, "META section is not an fpgaprof trace description");
    }
    const nlohmann::json& m = j.at("meta");
    TraceMeta& meta = s.meta;
    meta.start_ns = json_get<uint64_t>(m, "start_ns");
    meta.end_ns = json_get<uint64_t>(m, "end_ns");
    meta.dropped_records = json_get<uint64_t>(m, "dropped_records");
    meta.incomplete_records = json_get<uint64_t>(m, "incomplete_records");
    meta.driver_version = json_get<uint32_t>(m, "driver_version");
    meta.cupti_version = json_get<uint32_t>(m, "cupti_version");
    meta.cupti_path = json_get<std::string>(m, "cupti_path");
    meta.clock = json_get<std::string>(m, "clock");
    meta.gpu_available = json_get<bool>(m, "gpu_available");
    meta.unavailable_reason = json_get<std::string>(m, "unavailable_reason");
    meta.command_buffers_disabled = json_get<bool>(m, "command_buffers_disabled");
    meta.fpgaprof_version = json_get<std::string>(m, "fpgaprof_version");
    meta.warnings = json_get<std::vector<std::string>>(m, "warnings");
    // Added after format version 2 was fixed: absent in older traces (a one-process job).
    meta.process_index = m.value("process_index", int64_t{-1});
    meta.process_count = m.value("process_count", uint32_t{0});
    meta.process_source = m.value("process_source", std::string());
    meta.host_name = m.value("host_name", std::string());
    meta.global_device_ids = m.value("global_device_ids", std::vector<int64_t>());
    for (const nlohmann::json& d : j.at("devices")) {
      DeviceInfo info;
      info.id = json_get<uint32_t>(d, "id");
      info.name = json_get<std::string>(d, "name");
      info.uuid = json_get<std::string>(d, "uuid");
      info.compute_capability_major = json_get<uint32_t>(d, "compute_capability_major");
      info.compute_capability_minor = json_get<uint32_t>(d, "compute_capability_minor");
      info.sm_count = json_get<uint32_t>(d, "sm_count");
      info.core_clock_khz = json_get<uint64_t>(d, "core_clock_khz");
      info.memory_clock_khz = json_get<uint64_t>(d, "memory_clock_khz");
      info.memory_bus_width_bits = json_get<uint32_t>(d, "memory_bus_width_bits");
      info.global_memory_bytes = json_get<uint64_t>(d, "global_memory_bytes");
      info.l2_cache_bytes = json_get<uint64_t>(d, "l2_cache_bytes");
      info.shared_memory_per_sm_bytes = json_get<uint64_t>(d, "shared_memory_per_sm_bytes");
      info.max_threads_per_sm = json_get<uint32_t>(d, "max_threads_per_sm");
      info.max_registers_per_sm = json_get<uint32_t>(d, "max_registers_per_sm");
      info.pcie_generation = json_get<uint32_t>(d, "pcie_generation");
      info.pcie_link_width = json_get<uint32_t>(d, "pcie_link_width");
      s.devices.push_back(std::move(info));
    }
  } catch (const nlohmann::json::exception& e) {
    fail(origin, std::string("META section is malformed: ") + e.what());
  }
}

void read_strings(std::string_view payload, TraceStore& s, const std::string& origin) {
  ByteReader r(payload, origin, "string table");
  const std::size_t n = r.count("strings", 1);
  if (n == 0) fail(origin, "string table is empty (string 0 must be \"\")");
  for (std::size_t i = 0; i < n; ++i) {
    const std::string_view str = r.str();
    if (i == 0) {
      if (!str.empty()) fail(origin, "string 0 is not the empty string");
      continue;
    }
    if (s.strings.intern(str) != i) fail(origin, "string " + std::to_string(i) + " is a duplicate");
  }
  if (!r.done()) fail(origin, "string table has trailing bytes");
}

void read_hlo(std::string_view payload, TraceStore& s, const std::string& origin) {
  ByteReader r(payload, origin, "HLO module section");
  const std::size_t n = r.count("HLO modules", 3);
  for (std::size_t i = 0; i < n; ++i) {
    HloModuleText m;
    m.name = std::string(r.str());
    m.program_id = r.svarint();
    m.text = std::string(r.str());
    s.hlo_modules.push_back(std::move(m));
  }
  if (!r.done()) fail(origin, "HLO module section has trailing bytes");
}

// HLBA: the buffer assignments and live ranges of the HLO modules that have them.
void read_buffer_assignments(std::string_view payload, TraceStore& s, const std::string& origin) {
  ByteReader r(payload, origin, "buffer assignment section");
  const std::size_t n = r.count("buffer assignments", 3);
  for (std::size_t i = 0; i < n; ++i) {
    const uint64_t module = r.varint();
    if (module >= s.hlo_modules.size())
      fail(origin, "buffer assignment " + std::to_string(i) + " refers to HLO module " + std::to_string(module) +
                       " of " + std::to_string(s.hlo_modules.size()));
    HloModuleText& m = s.hlo_modules[module];
    if (!m.buffer_assignment.empty() || !m.live_ranges.empty())
      fail(origin, "HLO module " + std::to_string(module) + " has two buffer assignments");
    m.buffer_assignment = std::string(r.str());
    m.live_ranges = std::string(r.str());
  }
  if (!r.done()) fail(origin, "buffer assignment section has trailing bytes");
}

}  // namespace

std::string serialize_trace(const TraceStore& store, bool compress) {
  std::vector<std::pair<const char*, std::string>> sections;
  sections.emplace_back("META", meta_json(store).dump());
  {
    ByteWriter w;
    w.varint(store.strings.size());
    for (const std::string& s : store.strings.all()) w.str(s);
    sections.emplace_back("STRS", std::move(w.data()));
  }
  for_each_table([&](const auto& t) { sections.emplace_back(t.tag, encode_table(store.*(t.member), t.fields)); });
  {
    ByteWriter w;
    w.varint(store.hlo_modules.size());
    for (const HloModuleText& m : store.hlo_modules) {
      w.str(m.name);
      w.svarint(m.program_id);
      w.str(m.text);
    }
    sections.emplace_back("HLOM", std::move(w.data()));
  }
  {
    ByteWriter w;
    std::size_t n = 0;
    for (const HloModuleText& m : store.hlo_modules) n += !m.buffer_assignment.empty() || !m.live_ranges.empty();
    if (n > 0) {
      w.varint(n);
      for (std::size_t i = 0; i < store.hlo_modules.size(); ++i) {
        const HloModuleText& m = store.hlo_modules[i];
        if (m.buffer_assignment.empty() && m.live_ranges.empty()) continue;
        w.varint(i);
        w.str(m.buffer_assignment);
        w.str(m.live_ranges);
      }
      sections.emplace_back("HLBA", std::move(w.data()));
    }
  }
  sections.emplace_back("END\0", std::string());

  ByteWriter file;
  file.bytes(std::string_view(kMagic, sizeof kMagic));
  file.u32(kFormatVersion);
  file.u32(static_cast<uint32_t>(sections.size()));
  for (const auto& [tag, raw] : sections) add_section(file, tag, raw, compress && !raw.empty());
  return std::move(file.data());
}

TraceStore deserialize_trace(std::string_view bytes, const std::string& origin) {
  if (bytes.empty()) fail(origin, "the file is empty");
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    throw Error(ErrorKind::kTraceFormat, origin +
                                             ": not an fpgaprof trace (wrong magic bytes; expected a file written by "
                                             "fpgaprof.trace(path=...) or Profile.save)");
  }
  ByteReader file(bytes, origin, "file header");
  file.bytes(sizeof kMagic);
  const uint32_t format_version = file.u32();
  if (format_version == 0 || format_version > kFormatVersion) {
    throw Error(ErrorKind::kTraceFormat, origin + ": trace format version " + std::to_string(format_version) +
                                             " is not supported (this fpgaprof " + version() + " reads version " +
                                             std::to_string(kFormatVersion) + "; upgrade fpgaprof to read it)");
  }
  if (format_version < kOldestReadableVersion) {
    throw Error(ErrorKind::kTraceFormat,
                origin + ": trace format version " + std::to_string(format_version) +
                    " was written by a development build of fpgaprof and is no longer read (this fpgaprof " +
                    version() + " reads version " + std::to_string(kOldestReadableVersion) +
                    " and later); record the trace again");
  }
  const uint32_t section_count = file.u32();
  if (section_count > file.remaining() / kSectionHeaderBytes) {
    fail(origin, "header claims " + std::to_string(section_count) + " sections, more than the file holds");
  }
  std::map<std::string, std::string> sections;
  bool ended = false;
  for (uint32_t i = 0; i < section_count; ++i) {
    if (ended) fail(origin, "sections after the END section");
    if (file.remaining() < kSectionHeaderBytes) fail(origin, "truncated section header");
    const std::string_view header = bytes.substr(bytes.size() - file.remaining(), kSectionHeaderBytes - 4);
    std::string tag(file.bytes(4));
    const uint32_t codec = file.u32();
    const uint64_t raw_bytes = file.u64();
    const uint64_t stored_bytes = file.u64();
    const uint32_t crc = file.u32();
    std::string printable;
    for (char ch : tag) printable += (ch >= 32 && ch < 127) ? ch : '?';
    if (stored_bytes > file.remaining()) {
      fail(origin, "truncated: section " + printable + " needs " + std::to_string(stored_bytes) + " bytes but only " +
                       std::to_string(file.remaining()) + " remain");
    }
    const std::string_view stored = file.bytes(stored_bytes);
    if (section_crc(header, stored) != crc) {
      fail(origin, "section " + printable + " is corrupted (CRC32 mismatch)");
    }
    if (sections.count(tag) != 0) fail(origin, "section " + printable + " appears twice");
    if (tag == std::string("END\0", 4)) {
      ended = true;
      if (stored_bytes != 0 || raw_bytes != 0) fail(origin, "END section is not empty");
      continue;
    }
    if (codec == kCodecStored) {
      if (raw_bytes != stored_bytes) fail(origin, "stored section " + printable + " has inconsistent lengths");
      sections.emplace(tag, std::string(stored));
    } else if (codec == kCodecZlib) {
      sections.emplace(tag, decompress(stored, raw_bytes, origin, printable));
    } else {
      fail(origin, "section " + printable + " uses unknown codec " + std::to_string(codec));
    }
  }
  if (!ended) fail(origin, "truncated: no END section");
  if (!file.done()) fail(origin, std::to_string(file.remaining()) + " trailing bytes after the END section");

  TraceStore store;
  auto meta = sections.find("META");
  if (meta == sections.end()) fail(origin, "no META section");
  read_meta(meta->second, store, origin);
  auto strs = sections.find("STRS");
  if (strs == sections.end()) fail(origin, "no string table (STRS section)");
  read_strings(strs->second, store, origin);
  // A table missing from the file is empty (a writer with nothing to say may omit it).
  for_each_table([&](const auto& t) {
    auto it = sections.find(std::string(t.tag, 4));
    if (it != sections.end()) decode_table(it->second, t, store, origin);
  });
  for_each_table([&](const auto& t) { validate_refs(store, t, origin); });
  auto hlo = sections.find("HLOM");
  if (hlo != sections.end()) read_hlo(hlo->second, store, origin);
  auto hlba = sections.find("HLBA");
  if (hlba != sections.end()) read_buffer_assignments(hlba->second, store, origin);
  return store;
}

void write_trace(const TraceStore& store, const std::string& path) {
  const std::string bytes = serialize_trace(store);
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  std::string tmp = path + ".tmp.XXXXXX";
  std::vector<char> tmpl(tmp.begin(), tmp.end());
  tmpl.push_back('\0');
  const int fd = mkstemp(tmpl.data());
  if (fd < 0) {
    throw Error(ErrorKind::kIo, path + ": cannot create a temporary file in " + dir + " (" + std::strerror(errno) +
                                    "): check that the directory exists and is writable");
  }
  tmp.assign(tmpl.data());
  auto fail_io = [&](const char* step) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw Error(ErrorKind::kIo,
                path + ": " + step + " failed (" + std::strerror(err) + "): check free disk space and permissions");
  };
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_io("write");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) fail_io("fsync");
  // mkstemp creates 0600; a trace is an ordinary document: honour the umask like open() would.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error(ErrorKind::kIo, path + ": close failed (" + std::strerror(err) + ")");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error(ErrorKind::kIo,
                path + ": rename from temporary file failed (" + std::strerror(err) + "): is the path a directory?");
  }
  // Make the rename itself durable.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

TraceStore read_trace(const std::string& path) {
  // POSIX reads, not std::ifstream: libstdc++'s filebuf throws a plain std::ios_base::failure
  // ("basic_filebuf::underflow ... Is a directory") that would reach Python untyped.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw Error(ErrorKind::kIo, path + ": cannot open trace file (" + std::strerror(errno) + "): check the path");
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw Error(ErrorKind::kIo, path +
                                    ": is a folder, not a trace file: give the trace file (a `fpgaprof run` "
                                    "folder holds it as trace.fpgaprof)");
  }
  std::string bytes;
  if (st.st_size > 0) bytes.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      throw Error(ErrorKind::kIo, path + ": read error (" + std::strerror(err) + ")");
    }
    if (n == 0) break;
    bytes.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return deserialize_trace(bytes, path);
}

}  // namespace fpgaprof

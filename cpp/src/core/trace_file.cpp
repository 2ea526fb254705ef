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

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "fpgaprof/error.hpp"
#include "fpgaprof/record_schema.hpp"
#include "fpgaprof/text.hpp"
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

nlohmann::json diagnostics_json(const Diagnostics& ds) {
  nlohmann::json out = nlohmann::json::array();
  for (const Diagnostic& d : ds) {
    out.push_back({{"code", d.code()}, {"count", d.count}, {"numbers", d.numbers}});
  }
  return out;
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
      // The messages, readable by older readers; their codes, counts and figures in
      // "diagnostics", one entry per message in the same order.
      {"warnings", m.warnings.messages()},
      {"diagnostics", diagnostics_json(m.warnings)},
      {"process_index", m.process_index},
      {"process_count", m.process_count},
      {"process_source", m.process_source},
      {"host_name", m.host_name},
      {"global_device_ids", m.global_device_ids},
      {"power_sample_period_ns", m.power_sample_period_ns},
      {"energy_update_period_ns", m.energy_update_period_ns},
      {"environment", m.environment},
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

void poll(const ReadOptions& options) {
  if (options.poll) options.poll();
}

std::string mib(uint64_t bytes) { return std::to_string((bytes + (uint64_t{1} << 19)) >> 20) + " MiB"; }

// What reading one file may allocate (docs/trace-format.md, "Limits"): the records, strings
// and module texts decoded so far plus the section being decoded stay below
// kTraceMaxExpansion times the file size plus kTraceExpansionAllowanceBytes, so a small file
// cannot claim gigabytes (zlib bombs, forged counts) whatever it says.
class MemoryBudget {
 public:
  MemoryBudget(uint64_t input_bytes, const std::string& origin, uint64_t max_memory_bytes)
      : limit_(max_memory_bytes > 0 ? max_memory_bytes
               : input_bytes > (UINT64_MAX - kTraceExpansionAllowanceBytes) / kTraceMaxExpansion
                   ? UINT64_MAX
                   : input_bytes * kTraceMaxExpansion + kTraceExpansionAllowanceBytes),
        given_(max_memory_bytes > 0),
        input_bytes_(input_bytes),
        origin_(origin) {}
  // `bytes` needed while one section is decoded, on top of what is kept. Not a corrupt-file
  // failure: a genuine trace of very regular records may need more, and the message says how
  // to allow it.
  void check(uint64_t bytes, const std::string& what) const {
    if (bytes <= limit_ - kept_) return;
    const std::string need = origin_ + ": " + what + " would need " + mib(kept_ + bytes) + " of memory, ";
    if (given_)
      throw Error(ErrorKind::kTraceFormat, need + "more than the " + std::to_string(limit_) +
                                               " bytes allowed (max_memory_bytes / FPGAPROF_MAX_TRACE_MEMORY)");
    throw Error(ErrorKind::kTraceFormat,
                need + "more than a trace of " + std::to_string(input_bytes_) + " bytes can need (" +
                    std::to_string(kTraceMaxExpansion) + " x its size + " + mib(kTraceExpansionAllowanceBytes) +
                    "): a zlib bomb or a forged length, unless its records are unusually regular (a long run of "
                    "identical kernels): if fpgaprof wrote this file, allow the memory with "
                    "FPGAPROF_MAX_TRACE_MEMORY=<bytes> or fpgaprof.load(path, max_memory_bytes=...)");
  }
  // `bytes` that stay (the decoded store).
  void keep(uint64_t bytes, const std::string& what) {
    check(bytes, what);
    kept_ += bytes;
  }

 private:
  uint64_t limit_;
  bool given_;
  uint64_t kept_ = 0;
  uint64_t input_bytes_;
  const std::string& origin_;
};

// The bytes a zlib section may claim: deflate never expands less than ~1:1032, so a larger
// claimed ratio is a corrupt header.
void check_zlib_claim(uint64_t stored_bytes, uint64_t raw_bytes, const std::string& origin, const std::string& tag) {
  if (raw_bytes > stored_bytes * kMaxZlibRatio + 64) {
    fail(origin, "section " + tag + " claims " + std::to_string(raw_bytes) + " bytes from " +
                     std::to_string(stored_bytes) + " compressed bytes, more than zlib can produce");
  }
}

std::string decompress(std::string_view stored, uint64_t raw_bytes, const std::string& origin, const std::string& tag,
                       const ReadOptions& options) {
  std::string raw(static_cast<std::size_t>(raw_bytes), '\0');
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) throw Error(ErrorKind::kInternal, "zlib inflateInit failed");
  struct End {
    z_stream* zs;
    ~End() { inflateEnd(zs); }
  } end{&zs};
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(stored.data()));
  zs.next_out = reinterpret_cast<Bytef*>(raw.data());
  std::size_t in_left = stored.size();
  std::size_t out_left = raw.size();
  int rc = Z_OK;
  // zlib counts in uInt (32 bits): feed both buffers in chunks, the output in small ones so
  // that a long inflate can be interrupted.
  while (rc == Z_OK) {
    const uInt in_chunk = static_cast<uInt>(std::min<std::size_t>(in_left, 1u << 30));
    const uInt out_chunk = static_cast<uInt>(std::min<std::size_t>(out_left, 4u << 20));
    zs.avail_in = in_chunk;
    zs.avail_out = out_chunk;
    rc = inflate(&zs, Z_NO_FLUSH);
    in_left -= in_chunk - zs.avail_in;
    out_left -= out_chunk - zs.avail_out;
    if (rc == Z_BUF_ERROR && (in_left == 0 || out_left == 0)) break;
    if (rc == Z_OK && in_chunk == zs.avail_in && out_chunk == zs.avail_out) break;  // no progress
    poll(options);
  }
  if (rc != Z_STREAM_END || out_left != 0 || in_left != 0) {
    fail(origin, "section " + tag + " does not decompress to its declared " + std::to_string(raw_bytes) +
                     " bytes (zlib code " + std::to_string(rc) + ")");
  }
  return raw;
}

template <class R>
void decode_table(std::string_view payload, const TableSpec<R>& spec, TraceStore& store, const std::string& origin,
                  MemoryBudget& budget, const ReadOptions& options) {
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
  // The per-column bookkeeping (names, encodings, the kept values' vectors) is sized by the
  // column count, which a hostile file can make huge with empty columns of 3 bytes each.
  budget.check(uint64_t{columns} * (sizeof(Column) + sizeof(std::vector<uint64_t>) + 1), what);
  std::vector<Column> cols(columns);
  std::vector<bool> is_base(columns, false);
  std::size_t bases = 0;
  for (std::size_t c = 0; c < columns; ++c) {
    Column& col = cols[c];
    col.name = r.str();
    const uint8_t enc = r.u8();
    if (enc > static_cast<uint8_t>(ColumnEncoding::kFixed64)) {
      fail(origin, what + " column '" + printable(col.name) + "' has unknown encoding " + std::to_string(enc));
    }
    col.encoding = static_cast<ColumnEncoding>(enc);
    col.base = 0;
    if (col.encoding == ColumnEncoding::kRelative) {
      const uint64_t b = r.varint();
      if (b >= c) fail(origin, what + " column '" + printable(col.name) + "' is relative to a later column");
      col.base = static_cast<std::size_t>(b);
      bases += is_base[col.base] ? 0 : 1;
      is_base[col.base] = true;
    }
    col.data = r.str();
  }
  if (!r.done()) fail(origin, what + " has trailing bytes");

  // The records stay; one column of values and the columns others are relative to live
  // while the table is decoded.
  budget.check(uint64_t{rows} * 8 * (1 + bases) + uint64_t{rows} * sizeof(R), what);
  budget.keep(uint64_t{rows} * sizeof(R), what);
  std::vector<R>& out = store.*(spec.member);
  out.assign(rows, R{});
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
    if (!in.done()) fail(origin, what + " column '" + printable(col.name) + "' has trailing bytes");
    // Columns this reader does not know come from a newer writer of the same format
    // version: skip them. Known columns are validated before they touch a record.
    for (std::size_t k = 0; k < spec.fields.size(); ++k) {
      const FieldSpec<R>& f = spec.fields[k];
      if (col.name != f.name) continue;
      if (seen[k]) fail(origin, what + " has column '" + printable(col.name) + "' twice");
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
    poll(options);
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

// META values, checked against their field: a JSON number that is negative, fractional or too
// large for the field is refused, never wrapped or truncated.
class MetaReader {
 public:
  MetaReader(const nlohmann::json& object, std::string where, const std::string& origin)
      : j_(object), where_(std::move(where)), origin_(origin) {
    if (!j_.is_object()) fail(origin_, "META " + where_ + " is not a JSON object");
  }
  uint64_t whole(const char* key, uint64_t max) const {
    const nlohmann::json& v = at(key);
    if (!v.is_number_unsigned() || v.get<uint64_t>() > max) {
      bad(key, v, "a whole number from 0 to " + std::to_string(max));
    }
    return v.get<uint64_t>();
  }
  uint32_t whole32(const char* key) const { return static_cast<uint32_t>(whole(key, UINT32_MAX)); }
  bool flag(const char* key) const {
    const nlohmann::json& v = at(key);
    if (!v.is_boolean()) bad(key, v, "true or false");
    return v.get<bool>();
  }
  std::string text(const char* key) const {
    const nlohmann::json& v = at(key);
    if (!v.is_string()) bad(key, v, "a string");
    return v.get<std::string>();
  }
  bool has(const char* key) const { return j_.find(key) != j_.end(); }
  int64_t integer(const char* key, int64_t min, int64_t max) const { return integer_value(key, at(key), min, max); }
  std::vector<int64_t> integers(const char* key, int64_t min, int64_t max) const {
    const nlohmann::json& v = at(key);
    if (!v.is_array()) bad(key, v, "a list of whole numbers");
    std::vector<int64_t> out;
    out.reserve(v.size());
    for (const nlohmann::json& e : v) out.push_back(integer_value(key, e, min, max));
    return out;
  }
  std::map<std::string, std::string> text_map(const char* key) const {
    const nlohmann::json& v = at(key);
    if (!v.is_object()) bad(key, v, "an object of strings");
    std::map<std::string, std::string> out;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!it.value().is_string()) bad(key, v, "an object of strings");
      out.emplace(it.key(), it.value().get<std::string>());
    }
    return out;
  }
  // META "diagnostics": the code, count and figures of each of `messages` (META "warnings"), one
  // entry each in their order. A code this build does not know reads as kOlderTraceCode: the
  // warning is kept, never dropped.
  Diagnostics diagnostics(const char* key, std::vector<std::string> messages) const {
    const nlohmann::json& v = at(key);
    if (!v.is_array() || v.size() != messages.size()) {
      bad(key, v, "a list of {code, count, numbers}, one per warning (" + std::to_string(messages.size()) + ")");
    }
    Diagnostics out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const MetaReader e(v[i], where_ + "." + key + "[" + std::to_string(i) + "]", origin_);
      const DiagnosticCode* kind = find_diagnostic_code(e.text("code"));
      Diagnostic d{kind != nullptr ? kind : &diagnostic_code(kOlderTraceCode), e.whole("count", INT64_MAX),
                   e.reals("numbers"), std::move(messages[i])};
      if (d.count == 0) e.bad("count", e.at("count"), "a whole number from 1 to " + std::to_string(INT64_MAX));
      out.add(std::move(d));
    }
    return out;
  }
  std::vector<double> reals(const char* key) const {
    const nlohmann::json& v = at(key);
    if (!v.is_array()) bad(key, v, "a list of numbers");
    std::vector<double> out;
    out.reserve(v.size());
    for (const nlohmann::json& e : v) {
      if (!e.is_number() || !std::isfinite(e.get<double>())) bad(key, v, "a list of finite numbers");
      out.push_back(e.get<double>());
    }
    return out;
  }
  std::vector<std::string> texts(const char* key) const {
    const nlohmann::json& v = at(key);
    if (!v.is_array()) bad(key, v, "a list of strings");
    std::vector<std::string> out;
    for (const nlohmann::json& e : v) {
      if (!e.is_string()) bad(key, v, "a list of strings");
      out.push_back(e.get<std::string>());
    }
    return out;
  }

 private:
  int64_t integer_value(const char* key, const nlohmann::json& v, int64_t min, int64_t max) const {
    const std::string expected = "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
    if (!v.is_number_integer()) bad(key, v, expected);
    if (v.is_number_unsigned()) {
      if (v.get<uint64_t>() > static_cast<uint64_t>(max)) bad(key, v, expected);
      return static_cast<int64_t>(v.get<uint64_t>());
    }
    const int64_t x = v.get<int64_t>();
    if (x < min || x > max) bad(key, v, expected);
    return x;
  }
  const nlohmann::json& at(const char* key) const {
    const auto it = j_.find(key);
    if (it == j_.end()) fail(origin_, "META " + where_ + " has no field '" + key + "'");
    return *it;
  }
  [[noreturn]] void bad(const char* key, const nlohmann::json& v, const std::string& expected) const {
    // Only scalars are printed: dumping a hostile nested value would recurse.
    const std::string value = v.is_array() ? "a list" : v.is_object() ? "an object" : printable(v.dump());
    fail(origin_, "META field " + where_ + "." + key + " = " + value + " is not " + expected);
  }
  const nlohmann::json& j_;
  std::string where_;
  const std::string& origin_;
};

// `claimed`: the record count META's "tables" gives each table (by name), where it gives one;
// read_trace checks the tables read against them.
void read_meta(std::string_view text, TraceStore& s, const std::string& origin, MemoryBudget& budget,
               std::map<std::string, uint64_t>& claimed) {
  // The parsed JSON lives only here; nlohmann's values take up to a few dozen bytes per byte
  // of text (one node per number).
  budget.check(uint64_t{text.size()} * 32, "the META section");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);  // checks UTF-8; parses and frees without recursion
  } catch (const nlohmann::json::exception& e) {
    fail(origin, "META section is malformed: " + printable(e.what(), 200));
  }
  if (!j.is_object() || !j.contains("format") || j["format"] != "fpgaprof-trace") {
    fail(origin, "META section is not an fpgaprof trace description");
  }
  static const nlohmann::json kAbsent;
  const nlohmann::json& meta_object = j.contains("meta") ? j.at("meta") : kAbsent;
  const MetaReader m(meta_object, "meta", origin);
  TraceMeta& meta = s.meta;
  meta.start_ns = m.whole("start_ns", INT64_MAX);
  meta.end_ns = m.whole("end_ns", INT64_MAX);
  meta.dropped_records = m.whole("dropped_records", INT64_MAX);
  meta.incomplete_records = m.whole("incomplete_records", INT64_MAX);
  meta.driver_version = m.whole32("driver_version");
  meta.cupti_version = m.whole32("cupti_version");
  meta.cupti_path = m.text("cupti_path");
  meta.clock = m.text("clock");
  meta.gpu_available = m.flag("gpu_available");
  meta.unavailable_reason = m.text("unavailable_reason");
  meta.command_buffers_disabled = m.flag("command_buffers_disabled");
  meta.fpgaprof_version = m.text("fpgaprof_version");
  // Since the diagnostics were added (within version 2), "diagnostics" gives each warning's code;
  // a trace of an older writer has the prose only, read as kOlderTraceCode (the one warning
  // whose wording is exact, that of incomplete_records, gets its code).
  if (m.has("diagnostics")) {
    meta.warnings = m.diagnostics("diagnostics", m.texts("warnings"));
  } else {
    const std::string incomplete = older_incomplete_records_warning(meta.incomplete_records);
    for (std::string& w : m.texts("warnings")) {
      if (meta.incomplete_records > 0 && w == incomplete) {
        meta.warnings.add("capture.records_incomplete", std::move(w), {static_cast<double>(meta.incomplete_records)});
      } else {
        meta.warnings.add(kOlderTraceCode, std::move(w));
      }
    }
  }
  // Added after format version 2 was fixed: absent in older traces (a one-process job).
  if (m.has("process_index")) meta.process_index = m.integer("process_index", -1, INT32_MAX);
  if (m.has("process_count")) meta.process_count = m.whole32("process_count");
  if (m.has("process_source")) meta.process_source = m.text("process_source");
  if (m.has("host_name")) meta.host_name = m.text("host_name");
  if (m.has("global_device_ids")) meta.global_device_ids = m.integers("global_device_ids", -1, INT32_MAX);
  // Added with the power samples (POWR), also within version 2: absent means not sampled.
  if (m.has("power_sample_period_ns")) meta.power_sample_period_ns = m.whole("power_sample_period_ns", INT64_MAX);
  if (m.has("energy_update_period_ns")) meta.energy_update_period_ns = m.whole("energy_update_period_ns", INT64_MAX);
  if (m.has("environment")) meta.environment = m.text_map("environment");
  if (meta.end_ns < meta.start_ns) {
    fail(origin, "META end_ns " + std::to_string(meta.end_ns) + " is before start_ns " + std::to_string(meta.start_ns));
  }
  if (const auto tables = j.find("tables"); tables != j.end() && tables->is_object()) {
    for (const auto& [name, table] : tables->items()) {
      if (!table.is_object()) continue;
      const auto records = table.find("records");
      if (records != table.end() && records->is_number_unsigned()) claimed[name] = records->get<uint64_t>();
    }
  }
  const auto devices = j.find("devices");
  if (devices == j.end() || !devices->is_array()) fail(origin, "META has no list of devices");
  for (std::size_t i = 0; i < devices->size(); ++i) {
    const MetaReader d((*devices)[i], "devices[" + std::to_string(i) + "]", origin);
    DeviceInfo info;
    info.id = d.whole32("id");
    info.name = d.text("name");
    info.uuid = d.text("uuid");
    info.compute_capability_major = d.whole32("compute_capability_major");
    info.compute_capability_minor = d.whole32("compute_capability_minor");
    info.sm_count = d.whole32("sm_count");
    info.core_clock_khz = d.whole("core_clock_khz", INT64_MAX);
    info.memory_clock_khz = d.whole("memory_clock_khz", INT64_MAX);
    info.memory_bus_width_bits = d.whole32("memory_bus_width_bits");
    info.global_memory_bytes = d.whole("global_memory_bytes", INT64_MAX);
    info.l2_cache_bytes = d.whole("l2_cache_bytes", INT64_MAX);
    info.shared_memory_per_sm_bytes = d.whole("shared_memory_per_sm_bytes", INT64_MAX);
    info.max_threads_per_sm = d.whole32("max_threads_per_sm");
    info.max_registers_per_sm = d.whole32("max_registers_per_sm");
    info.pcie_generation = d.whole32("pcie_generation");
    info.pcie_link_width = d.whole32("pcie_link_width");
    s.devices.push_back(std::move(info));
  }
  budget.keep(uint64_t{text.size()} + s.devices.size() * sizeof(DeviceInfo), "the META section");
}

// Bytes a string costs in the StringTable beyond its characters: two std::string (the list
// and the index key) and a hash node.
constexpr uint64_t kStringOverheadBytes = 2 * sizeof(std::string) + 48;

void check_utf8(std::string_view s, const std::string& origin, const std::string& what) {
  const std::size_t at = invalid_utf8_at(s);
  if (at != std::string_view::npos) {
    fail(origin, what + " is not UTF-8 text (byte " + printable(s.substr(at, 1)) + " at offset " + std::to_string(at) +
                     " of \"" + printable(s, 40) + "\")");
  }
}

void read_strings(std::string_view payload, TraceStore& s, const std::string& origin, MemoryBudget& budget) {
  ByteReader r(payload, origin, "string table");
  const std::size_t n = r.count("strings", 1);
  if (n == 0) fail(origin, "string table is empty (string 0 must be \"\")");
  budget.keep(n * kStringOverheadBytes + 2 * uint64_t{payload.size()}, "the string table");
  for (std::size_t i = 0; i < n; ++i) {
    const std::string_view str = r.str();
    if (i == 0) {
      if (!str.empty()) fail(origin, "string 0 is not the empty string");
      continue;
    }
    check_utf8(str, origin, "string " + std::to_string(i));
    if (s.strings.intern(str) != i) fail(origin, "string " + std::to_string(i) + " is a duplicate");
  }
  if (!r.done()) fail(origin, "string table has trailing bytes");
}

void read_hlo(std::string_view payload, TraceStore& s, const std::string& origin, MemoryBudget& budget) {
  ByteReader r(payload, origin, "HLO module section");
  const std::size_t n = r.count("HLO modules", 3);
  budget.keep(n * sizeof(HloModuleText) + uint64_t{payload.size()}, "the HLO module section");
  for (std::size_t i = 0; i < n; ++i) {
    HloModuleText m;
    m.name = std::string(r.str());
    check_utf8(m.name, origin, "the name of HLO module " + std::to_string(i));
    m.program_id = r.svarint();
    m.text = std::string(r.str());
    check_utf8(m.text, origin, "the text of HLO module " + std::to_string(i) + " (" + printable(m.name, 40) + ")");
    s.hlo_modules.push_back(std::move(m));
  }
  if (!r.done()) fail(origin, "HLO module section has trailing bytes");
}

// HLBA: the buffer assignments and live ranges of the HLO modules that have them (after HLOM,
// whose modules it refers to by index).
void read_buffer_assignments(std::string_view payload, TraceStore& s, const std::string& origin, MemoryBudget& budget) {
  ByteReader r(payload, origin, "buffer assignment section");
  const std::size_t n = r.count("buffer assignments", 3);
  budget.keep(uint64_t{payload.size()}, "the buffer assignment section");
  for (std::size_t i = 0; i < n; ++i) {
    const uint64_t module = r.varint();
    if (module >= s.hlo_modules.size())
      fail(origin, "buffer assignment " + std::to_string(i) + " refers to HLO module " + std::to_string(module) +
                       " of " + std::to_string(s.hlo_modules.size()));
    HloModuleText& m = s.hlo_modules[module];
    if (!m.buffer_assignment.empty() || !m.live_ranges.empty())
      fail(origin, "HLO module " + std::to_string(module) + " has two buffer assignments");
    m.buffer_assignment = std::string(r.str());
    check_utf8(m.buffer_assignment, origin, "the buffer assignment of HLO module " + std::to_string(module));
    m.live_ranges = std::string(r.str());
    check_utf8(m.live_ranges, origin, "the live ranges of HLO module " + std::to_string(module));
  }
  if (!r.done()) fail(origin, "buffer assignment section has trailing bytes");
}

// Where a trace's bytes come from: memory (deserialize_trace) or a file read as it is decoded
// (read_trace), so only one section is held at a time.
class Input {
 public:
  virtual ~Input() = default;
  // Bytes left before the end (for a file: its size when it was opened).
  virtual uint64_t remaining() const = 0;
  // The next n <= remaining() bytes; valid until the next call.
  virtual std::string_view take(std::size_t n) = 0;
  // Passes over the next n <= remaining() bytes, returning zlib's CRC-32 of them continued
  // from `crc`, without holding them (a file: a MiB at a time).
  virtual uint32_t skip(uint64_t n, uint32_t crc) = 0;
  // Whether anything follows the bytes taken so far.
  virtual bool more() = 0;
};

class MemoryInput final : public Input {
 public:
  explicit MemoryInput(std::string_view bytes) : bytes_(bytes) {}
  uint64_t remaining() const override { return bytes_.size() - pos_; }
  std::string_view take(std::size_t n) override {
    const std::string_view out = bytes_.substr(pos_, n);
    pos_ += out.size();
    return out;
  }
  bool more() override { return pos_ < bytes_.size(); }
  uint32_t skip(uint64_t n, uint32_t crc) override {
    const std::string_view part = take(static_cast<std::size_t>(n));
    return static_cast<uint32_t>(crc32_z(crc, reinterpret_cast<const Bytef*>(part.data()), part.size()));
  }

 private:
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

class FileInput final : public Input {
 public:
  FileInput(int fd, uint64_t size, const std::string& origin, const ReadOptions& options)
      : fd_(fd), size_(size), origin_(origin), options_(options) {}
  uint64_t remaining() const override { return size_ - pos_; }
  std::string_view take(std::size_t n) override {
    buffer_.resize(n);
    std::size_t done = 0;
    while (done < n) {
      // In steps of a MiB, so that Ctrl-C is seen while a large section is read.
      const std::size_t step = std::min<std::size_t>(n - done, std::size_t{1} << 20);
      const std::size_t got = read_some(buffer_.data() + done, step);
      if (got == 0) {
        fail(origin_, "truncated: the file ended at byte " + std::to_string(pos_ + done) + " of the " +
                          std::to_string(size_) + " it had when it was opened (is it still being written?)");
      }
      done += got;
      poll(options_);
    }
    pos_ += n;
    return std::string_view(buffer_.data(), n);
  }
  uint32_t skip(uint64_t n, uint32_t crc) override {
    uLong c = crc;
    while (n > 0) {
      const std::string_view part = take(static_cast<std::size_t>(std::min<uint64_t>(n, uint64_t{1} << 20)));
      c = crc32_z(c, reinterpret_cast<const Bytef*>(part.data()), part.size());
      n -= part.size();
    }
    buffer_ = std::string();
    return static_cast<uint32_t>(c);
  }
  bool more() override {
    if (pos_ < size_) return true;
    char c = 0;
    return read_some(&c, 1) > 0;  // the file grew after it was opened
  }

 private:
  std::size_t read_some(char* out, std::size_t n) {
    for (;;) {
      const ssize_t got = ::read(fd_, out, n);
      if (got >= 0) return static_cast<std::size_t>(got);
      if (errno == EINTR) {
        poll(options_);
        continue;
      }
      throw Error(ErrorKind::kIo, origin_ + ": read error (" + std::strerror(errno) + ")");
    }
  }
  int fd_;
  uint64_t size_;
  uint64_t pos_ = 0;
  std::string buffer_;
  const std::string& origin_;
  const ReadOptions& options_;
};

std::string printable_tag(std::string_view tag) {
  std::string out;
  for (char ch : tag) out += (ch >= 32 && ch < 127) ? ch : '?';
  return out;
}

TraceStore decode_trace(Input& in, const std::string& origin, const ReadOptions& options) {
  const uint64_t input_bytes = in.remaining();
  if (input_bytes == 0) fail(origin, "the file is empty");
  // The magic first: a file that is not a trace costs 8 bytes of reading, whatever its size.
  if (input_bytes < sizeof kMagic || std::memcmp(in.take(sizeof kMagic).data(), kMagic, sizeof kMagic) != 0) {
    throw Error(ErrorKind::kTraceFormat, origin +
                                             ": not an fpgaprof trace (wrong magic bytes; expected a file written by "
                                             "fpgaprof.trace(path=...) or Profile.save)");
  }
  if (in.remaining() < 8) fail(origin, "truncated file header");
  const std::string_view header_bytes = in.take(8);
  ByteReader header(header_bytes, origin, "file header");
  const uint32_t format_version = header.u32();
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
  const uint32_t section_count = header.u32();
  if (section_count > in.remaining() / kSectionHeaderBytes) {
    fail(origin, "header claims " + std::to_string(section_count) + " sections, more than the file holds");
  }

  TraceStore store;
  MemoryBudget budget(input_bytes, origin, options.max_memory_bytes);
  std::set<std::string> seen;
  std::map<std::string, uint64_t> claimed;  // META's record count per table
  bool ended = false;
  for (uint32_t i = 0; i < section_count; ++i) {
    if (ended) fail(origin, "sections after the END section");
    if (in.remaining() < kSectionHeaderBytes) fail(origin, "truncated section header");
    char header_copy[kSectionHeaderBytes];
    std::memcpy(header_copy, in.take(kSectionHeaderBytes).data(), kSectionHeaderBytes);
    ByteReader h(std::string_view(header_copy, kSectionHeaderBytes), origin, "section header");
    const std::string tag(h.bytes(4));
    const uint32_t codec = h.u32();
    const uint64_t raw_bytes = h.u64();
    const uint64_t stored_bytes = h.u64();
    const uint32_t crc = h.u32();
    const std::string name = printable_tag(tag);
    if (stored_bytes > in.remaining()) {
      fail(origin, "truncated: section " + name + " needs " + std::to_string(stored_bytes) + " bytes but only " +
                       std::to_string(in.remaining()) + " remain");
    }
    bool known = tag == "META" || tag == "STRS" || tag == "HLOM" || tag == "HLBA" || tag == std::string("END\0", 4);
    for_each_table([&](const auto& t) { known = known || tag == std::string_view(t.tag, 4); });
    const std::string_view header_crc_part(header_copy, kSectionHeaderBytes - 4);
    std::string_view stored;
    if (known) {
      stored = in.take(static_cast<std::size_t>(stored_bytes));
      if (section_crc(header_crc_part, stored) != crc)
        fail(origin, "section " + name + " is corrupted (CRC32 mismatch)");
    } else {
      // Room for additions within a format version: CRC-checked as it passes, never held or
      // inflated.
      const uLong header_crc =
          crc32_z(0, reinterpret_cast<const Bytef*>(header_crc_part.data()), header_crc_part.size());
      if (in.skip(stored_bytes, static_cast<uint32_t>(header_crc)) != crc) {
        fail(origin, "section " + name + " is corrupted (CRC32 mismatch)");
      }
    }
    if (!seen.insert(tag).second) fail(origin, "section " + name + " appears twice");
    if (tag == std::string("END\0", 4)) {
      ended = true;
      if (stored_bytes != 0 || raw_bytes != 0) fail(origin, "END section is not empty");
      continue;
    }
    if (codec == kCodecStored) {
      if (raw_bytes != stored_bytes) fail(origin, "stored section " + name + " has inconsistent lengths");
    } else if (codec == kCodecZlib) {
      check_zlib_claim(stored_bytes, raw_bytes, origin, name);
    } else {
      fail(origin, "section " + name + " uses unknown codec " + std::to_string(codec));
    }
    if (!known) continue;

    std::string inflated;
    std::string_view raw = stored;
    if (codec == kCodecZlib) {
      budget.check(raw_bytes, "section " + name);
      inflated = decompress(stored, raw_bytes, origin, name, options);
      raw = inflated;
    }
    if (tag == "META") {
      read_meta(raw, store, origin, budget, claimed);
    } else if (tag == "STRS") {
      read_strings(raw, store, origin, budget);
    } else if (tag == "HLOM") {
      read_hlo(raw, store, origin, budget);
    } else if (tag == "HLBA") {
      read_buffer_assignments(raw, store, origin, budget);
    } else {
      for_each_table([&](const auto& t) {
        if (tag == std::string_view(t.tag, 4)) decode_table(raw, t, store, origin, budget, options);
      });
    }
    poll(options);
  }
  if (!ended) fail(origin, "truncated: no END section");
  if (in.more()) {
    const uint64_t left = in.remaining();
    fail(origin, (left > 0 ? std::to_string(left) : std::string("some")) + " trailing bytes after the END section");
  }
  if (seen.count("META") == 0) fail(origin, "no META section");
  if (seen.count("STRS") == 0) fail(origin, "no string table (STRS section)");
  // A table whose section is absent reads as empty; one META says held records was cut out
  // (or the file edited): refused rather than read as a trace without those records.
  for_each_table([&](const auto& t) {
    const auto it = claimed.find(t.name);
    const uint64_t have = (store.*(t.member)).size();
    if (it != claimed.end() && it->second != have) {
      const std::string tag(t.tag, 4);
      const std::string where = seen.count(tag) != 0
                                    ? "its section " + printable_tag(tag) + " holds " + std::to_string(have)
                                    : "the file has no " + printable_tag(tag) + " section";
      fail(origin, "META says table " + std::string(t.name) + " holds " + std::to_string(it->second) +
                       " records, but " + where + ": the file was cut or edited; write it again from its source");
    }
  });
  for_each_table([&](const auto& t) { validate_refs(store, t, origin); });
  // A trace written before the warning named its cause and a fix the API offers holds the older
  // wording (always the full buffer, and a C++-only option): reworded, with kernel replay as the
  // cause where the trace has counters.
  if (store.meta.incomplete_records > 0) {
    const auto& items = store.meta.warnings.items();
    const std::string older = older_incomplete_records_warning(store.meta.incomplete_records);
    if (std::any_of(items.begin(), items.end(), [&](const Diagnostic& d) { return d.message == older; }))
      store.meta.set_incomplete_records(store.meta.incomplete_records, !store.counters.empty());
  }
  return store;
}

}  // namespace

std::string serialize_trace(const TraceStore& store, bool compress) {
  std::vector<std::pair<const char*, std::string>> sections;
  // A name from native code that is not UTF-8 (a path, an NVTX domain) is written with U+FFFD
  // instead of failing the save; the reader accepts UTF-8 only.
  sections.emplace_back("META", meta_json(store).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
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

TraceStore deserialize_trace(std::string_view bytes, const std::string& origin, const ReadOptions& options) {
  MemoryInput in(bytes);
  return decode_trace(in, origin, options);
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

TraceStore read_trace(const std::string& path, const ReadOptions& options) {
  // POSIX reads, not std::ifstream: libstdc++'s filebuf throws a plain std::ios_base::failure
  // ("basic_filebuf::underflow ... Is a directory") that would reach Python untyped.
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int open_errno = errno;
    struct stat st {};
    if (open_errno == ENXIO && ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
      // A socket cannot be opened at all (ENXIO, "No such device or address"): say what it is.
      throw Error(ErrorKind::kIo, path +
                                      ": is a socket, not a trace file: give a trace file written by fpgaprof (only "
                                      "regular files are read)");
    }
    throw Error(ErrorKind::kIo, path + ": cannot open trace file (" + std::strerror(open_errno) + "): check the path");
  }
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } close_fd{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    throw Error(ErrorKind::kIo, path + ": cannot read trace file (" + std::strerror(errno) + ")");
  }
  if (S_ISDIR(st.st_mode)) {
    throw Error(ErrorKind::kIo, path +
                                    ": is a folder, not a trace file: give the trace file (a `fpgaprof run` "
                                    "folder holds it as trace.fpgaprof)");
  }
  if (!S_ISREG(st.st_mode)) {
    // A device (/dev/zero), FIFO or socket has no end, or no size to bound the reading by.
    const char* kind = S_ISFIFO(st.st_mode)                         ? "a FIFO"
                       : S_ISSOCK(st.st_mode)                       ? "a socket"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                                    : "a special file";
    throw Error(ErrorKind::kIo, path + ": is " + kind +
                                    ", not a trace file: give a trace file written by fpgaprof (only regular "
                                    "files are read)");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  FileInput in(fd, static_cast<uint64_t>(st.st_size), path, options);
  return decode_trace(in, path, options);
}

}  // namespace fpgaprof

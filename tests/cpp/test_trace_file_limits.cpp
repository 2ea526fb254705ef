// Trace reader against hostile files (issue #21): what is refused without reading (folders,
// devices, FIFOs, a wrong magic), what a file may make the reader allocate (zlib bombs,
// forged counts), UTF-8 and META range checks, and interruption. Files are built here from
// sections so that each case has a valid CRC and reaches the check it is about.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "fpgaprof/error.hpp"
#include "fpgaprof/text.hpp"
#include "fpgaprof/trace_file.hpp"

using namespace fpgaprof;
namespace fs = std::filesystem;

namespace {

struct Section {
  std::string tag;  // 4 bytes
  std::string raw;  // the payload before compression
  bool compress = true;
};

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t get_u64(const std::string& s, std::size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(s[at + i])) << (8 * i);
  return v;
}
void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>(v | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

std::string deflate(const std::string& raw) {
  uLongf n = compressBound(static_cast<uLong>(raw.size()));
  std::string out(n, '\0');
  REQUIRE(compress2(reinterpret_cast<Bytef*>(out.data()), &n, reinterpret_cast<const Bytef*>(raw.data()),
                    static_cast<uLong>(raw.size()), 9) == Z_OK);
  out.resize(n);
  return out;
}

// A trace file of these sections (docs/trace-format.md), CRCs right, END appended.
std::string build(const std::vector<Section>& sections) {
  std::string out = "FPGAPROF";
  put_u32(out, 2);
  put_u32(out, static_cast<uint32_t>(sections.size() + 1));
  auto add = [&](const std::string& tag, const std::string& raw, bool compress) {
    const std::string stored = compress && !raw.empty() ? deflate(raw) : raw;
    std::string header = tag;
    put_u32(header, compress && !raw.empty() ? 1 : 0);
    put_u64(header, raw.size());
    put_u64(header, stored.size());
    uLong crc = crc32(0, reinterpret_cast<const Bytef*>(header.data()), static_cast<uInt>(header.size()));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(stored.data()), static_cast<uInt>(stored.size()));
    put_u32(header, static_cast<uint32_t>(crc));
    out += header + stored;
  };
  for (const Section& s : sections) add(s.tag, s.raw, s.compress);
  add(std::string("END\0", 4), "", false);
  return out;
}

// The sections of a file the writer made (uncompressed payloads), END left out.
std::vector<Section> sections_of(const std::string& file) {
  std::vector<Section> out;
  std::size_t pos = 16;
  while (pos + 28 <= file.size()) {
    const std::string tag = file.substr(pos, 4);
    const uint64_t raw = get_u64(file, pos + 8), stored = get_u64(file, pos + 16);
    REQUIRE(static_cast<uint8_t>(file[pos + 4]) == 0);  // written with compress=false
    if (tag != std::string("END\0", 4)) out.push_back({tag, file.substr(pos + 28, raw)});
    pos += 28 + stored;
  }
  return out;
}

// An empty trace's sections, its META without "tables": the tests put records into sections
// without saying so in META (which the reader checks where META gives the counts).
std::vector<Section> minimal_sections() {
  std::vector<Section> sections = sections_of(serialize_trace(TraceStore{}, false));
  std::string& meta = sections.at(0).raw;  // META comes first
  nlohmann::json j = nlohmann::json::parse(meta);
  j.erase("tables");
  meta = j.dump();
  return sections;
}

std::string& payload(std::vector<Section>& sections, const std::string& tag) {
  for (Section& s : sections) {
    if (s.tag == tag) return s.raw;
  }
  FAIL("no section " << tag);
  throw;
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const std::size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

// The message of the Error(kind) that reading `bytes` throws.
std::string error_of(const std::string& bytes, ErrorKind kind = ErrorKind::kTraceFormat) {
  try {
    (void)deserialize_trace(bytes, "t.fpgaprof");
  } catch (const Error& e) {
    REQUIRE(e.kind() == kind);
    return e.what();
  }
  FAIL("accepted");
  return {};
}

fs::path temp_dir() {
  fs::path dir = fs::temp_directory_path() / ("fpgaprof_limits_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

std::string read_error(const std::string& path, ErrorKind kind) {
  try {
    (void)read_trace(path);
  } catch (const Error& e) {
    REQUIRE(e.kind() == kind);
    return e.what();
  }
  FAIL("read " << path);
  return {};
}

}  // namespace

TEST_CASE("the crafted minimal trace is read", "[trace_file][limits]") {
  REQUIRE_NOTHROW(deserialize_trace(build(minimal_sections()), "m"));
}

TEST_CASE("folders, devices and FIFOs are refused without reading or waiting", "[trace_file][limits]") {
  const fs::path dir = temp_dir();
  const std::string fifo = (dir / "f.fpgaprof").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THAT(read_error(fifo, ErrorKind::kIo), Catch::Contains("is a FIFO, not a trace file"));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));  // no writer: must not block
  CHECK_THAT(read_error("/dev/zero", ErrorKind::kIo), Catch::Contains("/dev/zero: is a device, not a trace file"));
  const std::string link = (dir / "z.fpgaprof").string();
  fs::create_symlink("/dev/zero", link);
  CHECK_THAT(read_error(link, ErrorKind::kIo), Catch::Contains("is a device"));
  CHECK_THAT(read_error(dir.string(), ErrorKind::kIo), Catch::Contains("is a folder"));
  fs::remove_all(dir);
}

TEST_CASE("the magic is checked before the rest of a large file is read", "[trace_file][limits]") {
  const fs::path dir = temp_dir();
  const std::string path = (dir / "sparse.fpgaprof").string();
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, off_t{1} << 34) == 0);  // 16 GiB of zeros, no disk used
  ::close(fd);
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THAT(read_error(path, ErrorKind::kTraceFormat), Catch::Contains("wrong magic"));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
  // A valid header, then a section claiming most of the sparse file: read only as far as the
  // header says, and the CRC fails.
  std::string head = build(minimal_sections()).substr(0, 16);
  const int fd2 = ::open(path.c_str(), O_WRONLY);
  REQUIRE(::pwrite(fd2, head.data(), head.size(), 0) == static_cast<ssize_t>(head.size()));
  ::close(fd2);
  CHECK_THAT(read_error(path, ErrorKind::kTraceFormat), Catch::Contains("corrupted"));
  fs::remove_all(dir);
}

TEST_CASE("a zlib bomb is refused before it is inflated", "[trace_file][limits]") {
  // 64 MiB + 1 of zeros deflate to ~65 KB: within zlib's ratio but over the budget of a file
  // that small (64 x its size + 64 MiB).
  std::vector<Section> s = minimal_sections();
  payload(s, "KERN") = std::string((std::size_t{64} << 20) + (std::size_t{8} << 20), '\0');
  const std::string file = build(s);
  REQUIRE(file.size() < (std::size_t{1} << 20));
  const std::string msg = error_of(file);
  CHECK_THAT(msg, Catch::Contains("section KERN would need"));
  CHECK_THAT(msg, Catch::Contains("64 x its size + 64 MiB"));
  // a genuine trace of very regular records may compress past the bound: the message says how
  // to allow it, and does not call the file incomplete
  CHECK_THAT(msg, Catch::Contains("FPGAPROF_MAX_TRACE_MEMORY=<bytes>"));
  CHECK_THAT(msg, !Catch::Contains("not a complete fpgaprof trace"));
}

TEST_CASE("a table of millions of empty columns is refused before its bookkeeping is allocated",
          "[trace_file][limits]") {
  // 0 records in 20,000,000 columns, each 3 bytes (no name, varint encoding, no data): 60 MB
  // that deflate to ~60 KB, within the file's inflation bound (64 x its size + 64 MiB), but
  // the per-column bookkeeping would take over 1 GB. Before, it was allocated unchecked.
  std::vector<Section> s = minimal_sections();
  std::string kern;
  put_varint(kern, 0);
  put_varint(kern, 20'000'000);
  kern += std::string(std::size_t{3} * 20'000'000, '\0');
  payload(s, "KERN") = kern;
  const std::string file = build(s);
  REQUIRE(file.size() < (std::size_t{1} << 20));
  const std::string msg = error_of(file);
  CHECK_THAT(msg, Catch::Contains("would need"));
  CHECK_THAT(msg, !Catch::Contains("section KERN would need"));  // the section itself fits
}

TEST_CASE("a trace read can be given another memory bound", "[trace_file][limits]") {
  // 200,000 kernels (64 B each decoded): within the default bound; max_memory_bytes below
  // their need refuses them naming that bound, above it reads them.
  TraceStore store;
  store.devices.push_back(DeviceInfo{});
  KernelRecord k{};
  k.name = store.strings.intern("k");
  for (uint64_t i = 0; i < 200'000; ++i) {
    k.start_ns = 1000 * i;
    k.end_ns = 1000 * i + 500;
    k.correlation_id = static_cast<uint32_t>(i + 1);
    store.kernels.push_back(k);
  }
  const std::string file = serialize_trace(store);
  const uint64_t need = store.kernels.size() * sizeof(KernelRecord);
  REQUIRE_NOTHROW(deserialize_trace(file, "t.fpgaprof"));
  ReadOptions roomy;
  roomy.max_memory_bytes = 4 * need;
  const TraceStore back = deserialize_trace(file, "t.fpgaprof", roomy);
  CHECK(back.kernels.size() == 200'000);
  CHECK(back.kernels.back().end_ns == 1000 * 199'999 + 500);
  ReadOptions tight;
  tight.max_memory_bytes = need / 2;
  try {
    (void)deserialize_trace(file, "t.fpgaprof", tight);
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kTraceFormat);
    CHECK_THAT(std::string(e.what()), Catch::Contains("more than the " + std::to_string(need / 2) + " bytes allowed"));
  }
}

TEST_CASE("sections that each stay in bounds are refused together", "[trace_file][limits]") {
  // Every record table with 300,000 records of one column of zeros (~300 bytes stored each):
  // one alone fits the budget of a file this small, all of them together do not.
  constexpr std::size_t kRows = 300'000;
  std::string table;
  put_varint(table, kRows);
  put_varint(table, 1);  // one column
  put_varint(table, 8);
  table += "start_ns";
  table += '\0';  // varint encoding
  put_varint(table, kRows);
  table += std::string(kRows, '\0');
  std::vector<Section> one = minimal_sections();
  payload(one, "KERN") = table;
  REQUIRE(deserialize_trace(build(one), "one").kernels.size() == kRows);
  std::vector<Section> all = minimal_sections();
  for (const char* tag : {"KERN", "LCFG", "MCPY", "MSET", "ALOC", "APIC", "APIF", "SYNC", "MARK", "REGN", "OVHD",
                          "XCOR", "CNTR", "POWR"}) {
    payload(all, tag) = table;
  }
  const std::string file = build(all);
  REQUIRE(file.size() < (std::size_t{64} << 10));
  const std::string msg = error_of(file);
  CHECK_THAT(msg, Catch::Contains("would need"));
}

TEST_CASE("unknown sections are skipped without inflating them", "[trace_file][limits]") {
  std::vector<Section> s = minimal_sections();
  s.push_back({"ZZZZ", std::string(std::size_t{200} << 20, 'z')});  // 200 MiB claimed, ~200 KB stored
  REQUIRE_NOTHROW(deserialize_trace(build(s), "u"));
}

TEST_CASE("a section claiming more than zlib can produce is refused", "[trace_file][limits]") {
  std::string file = build(minimal_sections());
  // The META section's raw length (after the 16-byte header, the tag and codec) set to 2^40:
  // the CRC is recomputed so the claim itself is what fails.
  std::vector<Section> s = minimal_sections();
  std::string bytes = build(s);
  const std::size_t raw_at = 16 + 8;
  for (int i = 0; i < 8; ++i) bytes[raw_at + i] = static_cast<char>(((uint64_t{1} << 40) >> (8 * i)) & 0xff);
  const uint64_t stored = get_u64(bytes, 16 + 16);
  uLong crc = crc32(0, reinterpret_cast<const Bytef*>(bytes.data() + 16), 24);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + 16 + 28), static_cast<uInt>(stored));
  for (int i = 0; i < 4; ++i) bytes[16 + 24 + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
  CHECK_THAT(error_of(bytes), Catch::Contains("more than zlib can produce"));
}

TEST_CASE("strings and HLO modules must be UTF-8", "[trace_file][limits]") {
  SECTION("a string table entry") {
    std::vector<Section> s = minimal_sections();
    std::string strs;
    put_varint(strs, 2);
    put_varint(strs, 0);
    put_varint(strs, 4);
    strs +=
        "ab\xff"
        "c";
    payload(s, "STRS") = strs;
    const std::string msg = error_of(build(s));
    CHECK_THAT(msg, Catch::Contains("string 1 is not UTF-8 text (byte \\xff at offset 2"));
    CHECK(is_utf8(msg));  // the bytes of the file are escaped
  }
  SECTION("an HLO module name and text") {
    for (const auto& [name, text, needle] :
         {std::tuple<std::string, std::string, std::string>{"jit_\xc3", "HloModule x", "the name of HLO module 0"},
          {"jit_f", "HloModule \xed\xa0\x80", "the text of HLO module 0 (jit_f)"}}) {
      std::vector<Section> s = minimal_sections();
      std::string hlom;
      put_varint(hlom, 1);
      put_varint(hlom, name.size());
      hlom += name;
      put_varint(hlom, 2);  // program_id 1, zigzag
      put_varint(hlom, text.size());
      hlom += text;
      payload(s, "HLOM") = hlom;
      CHECK_THAT(error_of(build(s)), Catch::Contains(needle) && Catch::Contains("is not UTF-8 text"));
    }
  }
  SECTION("META text") {
    std::vector<Section> s = minimal_sections();
    payload(s, "META") = replace(payload(s, "META"), "\"clock\":\"", "\"clock\":\"\xfe");
    const std::string msg = error_of(build(s));
    CHECK_THAT(msg, Catch::Contains("META section is malformed"));
    CHECK_THAT(msg, Catch::Contains("\\xfe"));
    CHECK(msg.find('\xfe') == std::string::npos);
  }
  SECTION("a column name in a message is escaped") {
    std::vector<Section> s = minimal_sections();
    std::string table;
    put_varint(table, 1);
    put_varint(table, 1);
    put_varint(table, 3);
    table += "\xff\x01x";
    table += '\x07';  // unknown encoding
    put_varint(table, 1);
    table += '\0';
    payload(s, "KERN") = table;
    const std::string msg = error_of(build(s));
    CHECK_THAT(msg, Catch::Contains("column '\\xff\\x01x' has unknown encoding 7"));
  }
}

TEST_CASE("META numbers must fit their fields", "[trace_file][limits]") {
  const std::string meta = minimal_sections()[0].raw;
  REQUIRE(minimal_sections()[0].tag == "META");
  const auto with_meta = [](const std::string& text) {
    std::vector<Section> s = minimal_sections();
    payload(s, "META") = text;
    return build(s);
  };
  for (const auto& [from, to, needle] : {
           std::tuple<std::string, std::string, std::string>{"\"start_ns\":0", "\"start_ns\":-5",
                                                             "meta.start_ns = -5 is not a whole number"},
           {"\"end_ns\":0", "\"end_ns\":1e30", "meta.end_ns = 1e+30 is not a whole number"},
           {"\"dropped_records\":0", "\"dropped_records\":-1", "meta.dropped_records = -1"},
           {"\"dropped_records\":0", "\"dropped_records\":18446744073709551615", "from 0 to 9223372036854775807"},
           {"\"driver_version\":0", "\"driver_version\":4294967296", "from 0 to 4294967295"},
           {"\"driver_version\":0", "\"driver_version\":2.5", "driver_version = 2.5"},
           {"\"gpu_available\":false", "\"gpu_available\":0", "gpu_available = 0 is not true or false"},
           {"\"clock\":\"", "\"clock\":[[[[1]]]],\"x\":\"", "meta.clock = a list is not a string"},
           {"\"start_ns\":0", "\"start_ns\":1", "META end_ns 0 is before start_ns 1"},
           {"\"environment\":{}", "\"environment\":5", "meta.environment = 5 is not an object of strings"},
           {"\"environment\":{}", "\"environment\":{\"jax_version\":1}",
            "meta.environment = an object is not an object of strings"},
       }) {
    INFO(to);
    CHECK_THAT(error_of(with_meta(replace(meta, from, to))), Catch::Contains(needle));
  }
  // Deeply nested JSON is parsed and freed without recursion.
  const std::string deep =
      replace(meta, "\"warnings\":[]", "\"warnings\":" + std::string(100000, '[') + std::string(100000, ']'));
  CHECK_THAT(error_of(with_meta(deep)), Catch::Contains("meta.warnings = a list is not a list of strings"));
  // The environment recorded at capture reads back; a META without it (older writers) has none.
  const TraceStore with_env = deserialize_trace(
      with_meta(replace(meta, "\"environment\":{}", "\"environment\":{\"jax_version\":\"0.10.1\"}")), "e");
  CHECK(with_env.meta.environment == std::map<std::string, std::string>{{"jax_version", "0.10.1"}});
  const TraceStore without = deserialize_trace(with_meta(replace(meta, ",\"environment\":{}", "")), "w");
  CHECK(without.meta.environment.empty());
}

TEST_CASE("META warnings read as records, and a trace of an older writer keeps its prose", "[trace_file][limits]") {
  const std::string meta = minimal_sections()[0].raw;
  REQUIRE(meta.find("\"diagnostics\":[]") != std::string::npos);
  REQUIRE(meta.find("\"warnings\":[]") != std::string::npos);
  const auto with_meta = [](const std::string& text) {
    std::vector<Section> s = minimal_sections();
    payload(s, "META") = text;
    return build(s);
  };
  const auto two = [&](const std::string& diagnostics) {
    return replace(replace(meta, "\"warnings\":[]", "\"warnings\":[\"a\",\"b\"]"), "\"diagnostics\":[]",
                   "\"diagnostics\":" + diagnostics);
  };
  // An older writer: no "diagnostics"; each warning is kept under the older-trace code.
  const TraceStore older =
      deserialize_trace(with_meta(replace(replace(meta, "\"warnings\":[]", "\"warnings\":[\"a\",\"b\",\"a\"]"),
                                          "\"diagnostics\":[],", "")),
                        "o");
  REQUIRE(older.meta.warnings.size() == 2);  // the repeated one is counted
  CHECK(older.meta.warnings[0].code() == kOlderTraceCode);
  CHECK(older.meta.warnings[0].count == 2);
  CHECK(older.meta.warnings[1].message == "b");
  // Codes, counts and figures; a code this build does not know is kept as an older trace's.
  const TraceStore coded =
      deserialize_trace(with_meta(two("[{\"code\":\"correlate.unmatched_records\",\"count\":3,\"numbers\":[4,0.5]},"
                                      "{\"code\":\"future.kind\",\"count\":1,\"numbers\":[]}]")),
                        "c");
  REQUIRE(coded.meta.warnings.size() == 2);
  CHECK(coded.meta.warnings[0].code() == "correlate.unmatched_records");
  CHECK(coded.meta.warnings[0].source() == "correlate");
  CHECK(coded.meta.warnings[0].count == 3);
  CHECK(coded.meta.warnings[0].numbers == std::vector<double>{4, 0.5});
  CHECK(coded.meta.warnings[1].code() == kOlderTraceCode);
  CHECK(coded.meta.warnings[1].message == "b");
  const std::string entry = "{\"code\":\"capture.flush_failed\",\"count\":1,\"numbers\":[]}";
  for (const auto& [diagnostics, needle] : {
           std::pair<std::string, std::string>{"5",
                                               "meta.diagnostics = 5 is not a list of {code, count, numbers}, one "
                                               "per warning (2)"},
           {"[" + entry + "]", "meta.diagnostics = a list is not a list of {code, count, numbers}"},
           {"[" + entry + ",7]", "META meta.diagnostics[1] is not a JSON object"},
           {"[" + entry + ",{\"code\":1,\"count\":1,\"numbers\":[]}]", "meta.diagnostics[1].code = 1 is not a string"},
           {"[" + entry + ",{\"code\":\"x\",\"count\":0,\"numbers\":[]}]",
            "meta.diagnostics[1].count = 0 is not a whole number from 1"},
           {"[" + entry + ",{\"code\":\"x\",\"count\":-2,\"numbers\":[]}]", "meta.diagnostics[1].count = -2"},
           {"[" + entry + ",{\"code\":\"x\",\"count\":1,\"numbers\":[\"1\"]}]",
            "meta.diagnostics[1].numbers = a list is not a list of finite numbers"},
           {"[" + entry + ",{\"code\":\"x\",\"count\":1}]", "META meta.diagnostics[1] has no field 'numbers'"},
           {"[" + entry + "," + std::string(100000, '[') + std::string(100000, ']') + "]",
            "META meta.diagnostics[1] is not a JSON object"},
       }) {
    INFO(diagnostics.substr(0, 80));
    CHECK_THAT(error_of(with_meta(two(diagnostics))), Catch::Contains(needle));
  }
}

TEST_CASE("the poll callback is called and can stop a read", "[trace_file][limits]") {
  std::vector<Section> s = minimal_sections();
  s.push_back({"ZZZZ", std::string(std::size_t{3} << 20, 'z'), false});
  const std::string file = build(s);
  int calls = 0;
  ReadOptions counting;
  counting.poll = [&] { ++calls; };
  REQUIRE_NOTHROW(deserialize_trace(file, "p", counting));
  CHECK(calls > 0);

  const fs::path dir = temp_dir();
  const std::string path = (dir / "p.fpgaprof").string();
  {
    FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f != nullptr);
    std::fwrite(file.data(), 1, file.size(), f);
    std::fclose(f);
  }
  struct Stop {};
  int polls = 0;
  ReadOptions stopping;
  stopping.poll = [&] {
    if (++polls == 2) throw Stop{};
  };
  REQUIRE_THROWS_AS(read_trace(path, stopping), Stop);
  calls = 0;
  REQUIRE_NOTHROW(read_trace(path, counting));
  CHECK(calls >= 3);  // one per MiB of the 3 MiB section at least
  fs::remove_all(dir);
}

TEST_CASE("text helpers: UTF-8 checks, repair and printable messages", "[text]") {
  CHECK(is_utf8(""));
  CHECK(is_utf8("plain ascii"));
  CHECK(is_utf8("\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));  // été € 😀
  CHECK(invalid_utf8_at("ab\xff") == 2);
  CHECK(invalid_utf8_at("\xc0\x80") == 0);          // overlong NUL
  CHECK(invalid_utf8_at("\xe0\x80\x80") == 0);      // overlong
  CHECK(invalid_utf8_at("x\xed\xa0\x80") == 1);     // a surrogate
  CHECK(invalid_utf8_at("\xf4\x90\x80\x80") == 0);  // above U+10FFFF
  CHECK(invalid_utf8_at("\xe2\x82") == 0);          // cut short
  CHECK(to_utf8("a\xff"
                "b") ==
        "a\xef\xbf\xbd"
        "b");
  CHECK(to_utf8("\xe2\x82") == "\xef\xbf\xbd\xef\xbf\xbd");
  CHECK(is_utf8(to_utf8("\xed\xa0\x80\xc3")));
  CHECK(printable("a\nb\xff") == "a\\x0ab\\xff");
  CHECK(printable(std::string(100, 'x'), 10) == "xxxxxxxxxx...");
}

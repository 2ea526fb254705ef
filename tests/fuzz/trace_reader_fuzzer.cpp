// libFuzzer target for the trace file reader: any bytes must give a TraceStore or
// fpgaprof::Error, never a crash, overread or unbounded allocation.
//
// Each input is tried twice: as is, and with every section's CRC32 recomputed, so that
// mutations reach the section decoders (string table, columns, META JSON) behind the
// checksum instead of all stopping at it. The seed corpus (tests/fuzz/corpus/
// trace_reader_fuzzer) holds small valid traces, some with uncompressed sections for the same
// reason; it is written by the Catch2 test "[.corpus]" in tests/cpp/test_trace_file.cpp.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fpgaprof/error.hpp"
#include "fpgaprof/trace_file.hpp"

namespace {

// Plain CRC-32 (IEEE 802.3, as zlib's crc32), so the fuzzer needs no zlib of its own.
uint32_t crc32_update(uint32_t crc, const char* p, std::size_t n) {
  crc = ~crc;
  for (std::size_t i = 0; i < n; ++i) {
    crc ^= static_cast<uint8_t>(p[i]);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

uint64_t read_u64(const std::string& s, std::size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(s[at + i])) << (8 * i);
  return v;
}

// Layout (docs/trace-format.md): 16-byte file header, then sections of a 28-byte header
// (tag, codec, raw length, stored length, CRC over the first 24 header bytes + payload).
std::string with_fixed_crcs(std::string s) {
  if (s.size() < 16) return s;
  std::size_t pos = 16;
  while (pos + 28 <= s.size()) {
    const uint64_t stored = read_u64(s, pos + 16);
    if (stored > s.size() - pos - 28) break;
    uint32_t crc = crc32_update(0, s.data() + pos, 24);
    crc = crc32_update(crc, s.data() + pos + 28, static_cast<std::size_t>(stored));
    for (int i = 0; i < 4; ++i) s[pos + 24 + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
    pos += 28 + static_cast<std::size_t>(stored);
  }
  return s;
}

void try_read(std::string_view bytes) {
  try {
    const fpgaprof::TraceStore store = fpgaprof::deserialize_trace(bytes, "fuzz");
    // A store that was accepted must be usable: serializing it again must work.
    (void)fpgaprof::serialize_trace(store);
  } catch (const fpgaprof::Error&) {}
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  try_read(input);
  const std::string fixed = with_fixed_crcs(input);
  if (fixed != input) try_read(fixed);
  return 0;
}

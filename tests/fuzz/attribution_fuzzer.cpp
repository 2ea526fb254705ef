// Fuzzes the XLA range-name parser and the whole attribution over a store built from the
// input: marker names, parent links (including loops and out-of-range ones), kernel names and
// an HLO module text all come from the bytes. Must never crash, hang or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fpgaprof/analysis/attribution.hpp"
#include "fpgaprof/error.hpp"

using namespace fpgaprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  (void)analysis::parse_xla_range_name(in);
  (void)analysis::sanitize_kernel_name(in);
  (void)analysis::library_of_kernel(in);

  // Layout: parts separated by '\n'; a part starting with "M" is a marker (next byte: parent),
  // "K" a kernel (next byte: marker index), "H" starts the HLO text (rest of the input).
  TraceStore store;
  std::size_t pos = 0;
  uint64_t t = 0;
  while (pos < in.size()) {
    std::size_t end = in.find('\n', pos);
    if (in[pos] == 'H') {
      store.hlo_modules.push_back(
          HloModuleText{"fuzz", static_cast<int64_t>(store.markers.size()), std::string(in.substr(pos + 1))});
      break;
    }
    if (end == std::string_view::npos) end = in.size();
    const std::string_view part = in.substr(pos, end - pos);
    if (part.size() >= 2 && part[0] == 'M') {
      MarkerRecord m;
      m.name = store.strings.intern(part.substr(2));
      const uint8_t p = static_cast<uint8_t>(part[1]);
      m.parent = p == 0xff ? kNone32 : p;  // may point anywhere, also to itself
      m.start_ns = t++;
      m.end_ns = t + 10;
      store.markers.push_back(m);
    } else if (part.size() >= 2 && part[0] == 'K') {
      KernelRecord k;
      k.name = store.strings.intern(part.substr(2));
      const uint8_t mi = static_cast<uint8_t>(part[1]);
      k.marker_index = mi == 0xff ? kNone32 : mi;
      k.stream_id = mi % 3;
      k.start_ns = t++;
      k.end_ns = t + (mi % 7);
      store.kernels.push_back(k);
      MemcpyRecord c;
      c.marker_index = k.marker_index;
      store.memcpys.push_back(c);
    }
    pos = end + 1;
  }
  try {
    const analysis::AttributionResult r = analysis::attribute(store);
    if (r.kernels.size() != store.kernels.size()) __builtin_trap();
    if (r.attributed_count + r.unattributed_count != store.kernels.size()) __builtin_trap();
  } catch (const Error&) {
    // only the documented error type may escape
  }
  return 0;
}

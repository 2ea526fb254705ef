#include "fpgaprof/trace_store.hpp"

#include <algorithm>
#include <string>

#include "fpgaprof/error.hpp"

namespace fpgaprof {

std::string incomplete_records_warning(uint64_t count, bool under_counters) {
  if (under_counters)
    return std::to_string(count) +
           " GPU activity records have no timestamps (start=end=0): traced under kernel replay for counters, "
           "which times a launch only through its counter range, and no range timed them (a window whose ranges "
           "could not be paired, or a copy the profiler does not range); left out of times. Fix: trace again "
           "without counters to time them";
  return std::to_string(count) +
         " GPU activity records have no timestamps (start=end=0: CUPTI's device timestamp buffer ran out); left "
         "out of times. Fix: trace again with a larger device buffer (fpgaprof.trace(device_buffer_size=...), "
         "fpgaprof run --device-buffer-size)";
}

std::string older_incomplete_records_warning(uint64_t count) {
  return std::to_string(count) +
         " GPU activity records have no timestamps (start=end=0: CUPTI's device timestamp buffer ran out): "
         "raise device_buffer_bytes";
}

void TraceMeta::set_incomplete_records(uint64_t count, bool under_counters) {
  static constexpr std::string_view kCode = "capture.records_incomplete";
  const std::string old = older_incomplete_records_warning(incomplete_records);
  const auto& items = warnings.items();
  const auto it = std::find_if(items.begin(), items.end(), [&](const Diagnostic& d) {
    return d.code() == kCode || (d.code() == kOlderTraceCode && d.message == old);
  });
  incomplete_records = count;
  if (it == items.end()) {
    if (count > 0) warnings.add(kCode, incomplete_records_warning(count, under_counters), {static_cast<double>(count)});
  } else if (count == 0) {
    const std::size_t at = static_cast<std::size_t>(it - items.begin());
    std::size_t i = 0;
    warnings.remove_if([&](const Diagnostic&) { return i++ == at; });
  } else {
    warnings.replace(static_cast<std::size_t>(it - items.begin()),
                     Diagnostic{&diagnostic_code(kCode),
                                1,
                                {static_cast<double>(count)},
                                incomplete_records_warning(count, under_counters)});
  }
}

std::size_t TraceStore::LaunchConfigHash::operator()(const LaunchConfig& c) const noexcept {
  // FNV-1a over the fields (not the bytes: padding is unspecified).
  uint64_t h = 1469598103934665603ull;
  const auto mix = [&h](uint64_t v) {
    h ^= v;
    h *= 1099511628211ull;
  };
  mix(c.grid_x);
  mix(c.grid_y);
  mix(c.grid_z);
  mix(c.block_x);
  mix(c.block_y);
  mix(c.block_z);
  mix(c.registers_per_thread);
  mix(c.static_shared_bytes);
  mix(c.dynamic_shared_bytes);
  mix(c.local_bytes_per_thread);
  mix(c.graph_id);
  mix(c.graph_node_id);
  return static_cast<std::size_t>(h ^ (h >> 29));
}

namespace {

// Index of `value` in `table`, appending it when new. `index` covers table[0, indexed); entries
// appended directly since (trace reader, tests) join it first, a duplicate keeping the first.
template <class T, class Map>
uint32_t intern_into(std::vector<T>& table, Map& index, std::size_t& indexed, const T& value, const char* what) {
  if (indexed > table.size()) {  // the vector was cleared or replaced
    index.clear();
    indexed = 0;
  }
  for (; indexed < table.size(); ++indexed) index.emplace(table[indexed], static_cast<uint32_t>(indexed));
  const auto it = index.find(value);
  if (it != index.end()) return it->second;
  if (table.size() >= kNone32 - 1) {
    throw Error(ErrorKind::kInternal,
                "more than " + std::to_string(kNone32 - 1) + " distinct " + what + " in one trace");
  }
  const auto id = static_cast<uint32_t>(table.size());
  table.push_back(value);
  index.emplace(value, id);
  ++indexed;
  return id;
}

}  // namespace

std::size_t TraceStore::ApiFunctionHash::operator()(const ApiFunction& f) const noexcept {
  return static_cast<std::size_t>((uint64_t{f.name} * 0x9E3779B97F4A7C15ull) ^ (uint64_t{f.callback_id} << 1) ^
                                  static_cast<uint64_t>(f.kind));
}

uint32_t TraceStore::intern_launch_config(const LaunchConfig& config) {
  return intern_into(launch_configs, launch_config_index_, launch_configs_indexed_, config,
                     "kernel launch configurations");
}

uint32_t TraceStore::intern_api_function(const ApiFunction& function) {
  return intern_into(api_functions, api_function_index_, api_functions_indexed_, function, "API functions");
}

}  // namespace fpgaprof

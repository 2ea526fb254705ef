#include "fpgaprof/trace_store.hpp"

#include <string>

#include "fpgaprof/error.hpp"

namespace fpgaprof {

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

uint32_t TraceStore::intern_launch_config(const LaunchConfig& config) {
  // Entries appended to launch_configs directly (trace reader, tests) join the index here; a
  // duplicate among them keeps the first index.
  if (launch_configs_indexed_ > launch_configs.size()) {  // the vector was cleared or replaced
    launch_config_index_.clear();
    launch_configs_indexed_ = 0;
  }
  for (; launch_configs_indexed_ < launch_configs.size(); ++launch_configs_indexed_) {
    launch_config_index_.emplace(launch_configs[launch_configs_indexed_],
                                 static_cast<uint32_t>(launch_configs_indexed_));
  }
  const auto it = launch_config_index_.find(config);
  if (it != launch_config_index_.end()) return it->second;
  if (launch_configs.size() >= kNone32 - 1) {
    throw Error(ErrorKind::kInternal, "more than " + std::to_string(kNone32 - 1) +
                                          " distinct kernel launch configurations in one trace");
  }
  const auto index = static_cast<uint32_t>(launch_configs.size());
  launch_configs.push_back(config);
  launch_config_index_.emplace(config, index);
  ++launch_configs_indexed_;
  return index;
}

}  // namespace fpgaprof

#include "hlo/author_cost.hpp"

#include <zlib.h>

#include <cmath>
#include <cstddef>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>

namespace fpgaprof::hlo {
namespace {

std::string inflate_all(const std::string& in) {
  std::string out;
  if (in.empty() || in.size() > (std::size_t{64} << 20)) return out;
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) return out;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  char buf[65536];
  int rc = Z_OK;
  while (rc == Z_OK && out.size() < (std::size_t{256} << 20)) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
  }
  inflateEnd(&zs);
  return rc == Z_STREAM_END ? out : std::string();
}

bool read_author_cost(const nlohmann::json& j, AuthorCost& c) {
  if (!j.is_object()) return false;
  const auto number = [&](const char* key, double& v) {
    auto it = j.find(key);
    if (it == j.end()) return false;
    try {
      const double x = it->is_string() ? std::stod(it->get<std::string>()) : it->get<double>();
      if (!(std::isfinite(x) && x >= 0)) return false;
      v = x;
      return true;
    } catch (const std::exception&) {
      return false;
    }
  };
  if (!number("flops", c.flops)) return false;
  number("transcendentals", c.transcendentals);
  number("bytes_accessed", c.bytes_accessed);
  return true;
}

}  // namespace

bool author_cost(const Instruction& ins, AuthorCost& c) {
  if (!is_triton_custom_call(ins)) return false;
  const std::string meta = backend_config_string(ins, "serialized_metadata");
  if (!meta.empty()) {
    try {
      if (read_author_cost(nlohmann::json::parse(meta), c)) return true;
    } catch (const std::exception&) {}
  }
  // triton_kernel_call_ffi: the metadata's JSON object sits inside the compressed call proto.
  const std::string proto = inflate_all(backend_config_string(ins, "opaque"));
  for (std::size_t at = proto.find("{\""); at != std::string::npos; at = proto.find("{\"", at + 1)) {
    int depth = 0;
    std::size_t end = at;
    for (; end < proto.size() && end < at + 65536; ++end) {
      if (proto[end] == '{') ++depth;
      if (proto[end] == '}' && --depth == 0) break;
    }
    if (depth != 0 || end >= proto.size()) continue;
    try {
      if (read_author_cost(nlohmann::json::parse(proto.substr(at, end - at + 1)), c)) return true;
    } catch (const std::exception&) {}
  }
  return false;
}

}  // namespace fpgaprof::hlo

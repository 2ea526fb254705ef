#include <string>

#include "fpgaprof/error.hpp"
#include "fpgaprof/trace_store.hpp"

namespace fpgaprof {

StringId StringTable::intern(std::string_view s) {
  auto it = index_.find(std::string(s));
  if (it != index_.end()) return it->second;
  const auto id = static_cast<StringId>(strings_.size());
  strings_.emplace_back(s);
  index_.emplace(strings_.back(), id);
  return id;
}

const std::string& StringTable::get(StringId id) const {
  if (id >= strings_.size()) {
    throw Error(ErrorKind::kInvalidArgument, "string id " + std::to_string(id) + " is out of range (table has " +
                                                 std::to_string(strings_.size()) + " strings)");
  }
  return strings_[id];
}

}  // namespace fpgaprof

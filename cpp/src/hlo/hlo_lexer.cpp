#include "hlo/hlo_lexer.hpp"

namespace fpgaprof::hlo::lex {

PrimitiveType primitive_from_name(std::string_view n) {
  if (n.size() < 2 || n.size() > 13) return PrimitiveType::kInvalid;
  struct Entry {
    std::string_view name;
    PrimitiveType type;
  };
  // By first letter: a name is compared only with the few types that start like it.
  static constexpr Entry kF[] = {{"f32", PrimitiveType::kF32},
                                 {"f16", PrimitiveType::kF16},
                                 {"f64", PrimitiveType::kF64},
                                 {"f8e5m2", PrimitiveType::kF8E5M2},
                                 {"f8e4m3fn", PrimitiveType::kF8E4M3FN},
                                 {"f8e4m3b11fnuz", PrimitiveType::kF8E4M3B11FNUZ},
                                 {"f8e5m2fnuz", PrimitiveType::kF8E5M2FNUZ},
                                 {"f8e4m3fnuz", PrimitiveType::kF8E4M3FNUZ},
                                 {"f8e4m3", PrimitiveType::kF8E4M3},
                                 {"f8e3m4", PrimitiveType::kF8E3M4},
                                 {"f8e8m0fnu", PrimitiveType::kF8E8M0FNU},
                                 {"f4e2m1fn", PrimitiveType::kF4E2M1FN}};
  static constexpr Entry kS[] = {{"s32", PrimitiveType::kS32}, {"s64", PrimitiveType::kS64}, {"s8", PrimitiveType::kS8},
                                 {"s16", PrimitiveType::kS16}, {"s4", PrimitiveType::kS4},   {"s2", PrimitiveType::kS2},
                                 {"s1", PrimitiveType::kS1}};
  static constexpr Entry kU[] = {{"u32", PrimitiveType::kU32}, {"u8", PrimitiveType::kU8}, {"u64", PrimitiveType::kU64},
                                 {"u16", PrimitiveType::kU16}, {"u4", PrimitiveType::kU4}, {"u2", PrimitiveType::kU2},
                                 {"u1", PrimitiveType::kU1}};
  static constexpr Entry kOther[] = {{"pred", PrimitiveType::kPred},   {"bf16", PrimitiveType::kBF16},
                                     {"c64", PrimitiveType::kC64},     {"c128", PrimitiveType::kC128},
                                     {"token", PrimitiveType::kToken}, {"opaque", PrimitiveType::kOpaque}};
  auto find = [&](const auto& table) {
    for (const Entry& e : table) {
      if (e.name == n) return e.type;
    }
    return PrimitiveType::kInvalid;
  };
  switch (n[0]) {
    case 'f': return find(kF);
    case 's': return find(kS);
    case 'u': return find(kU);
    case 'p':
    case 'b':
    case 'c':
    case 't':
    case 'o': return find(kOther);
    default: return PrimitiveType::kInvalid;
  }
}

std::string unquote(std::string_view v) {
  if (v.size() < 2 || v.front() != '"' || v.back() != '"') return std::string(v);
  if (v.find('\\') == std::string_view::npos) return std::string(v.substr(1, v.size() - 2));
  std::string out;
  out.reserve(v.size() - 2);
  for (std::size_t i = 1; i + 1 < v.size(); ++i) {
    char c = v[i];
    if (c == '\\' && i + 2 < v.size()) {
      char n = v[++i];
      switch (n) {
        case 'n': out.push_back('\n'); break;
        case 't': out.push_back('\t'); break;
        default: out.push_back(n);
      }
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string_view trim(std::string_view v) {
  while (!v.empty() && is_space(v.front())) v.remove_prefix(1);
  while (!v.empty() && is_space(v.back())) v.remove_suffix(1);
  return v;
}

bool parse_int(std::string_view v, int64_t& out) {
  v = trim(v);
  if (v.empty()) return false;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  return ec == std::errc() && p == v.data() + v.size();
}

std::string one_line(std::string_view v) {
  if (v.find_first_of("\n\r\t") == std::string_view::npos) return std::string(v);
  std::string out;
  out.reserve(v.size());
  bool in_string = false;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const char c = v[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < v.size()) {
        out.push_back(v[++i]);
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (is_space(c)) {
      std::size_t j = i;
      bool breaks = false;
      for (; j < v.size() && is_space(v[j]); ++j) breaks = breaks || v[j] == '\n' || v[j] == '\r' || v[j] == '\t';
      if (breaks) {
        // a blank only between two tokens that need one
        if (!out.empty() && j < v.size() && is_ident(out.back()) && is_ident(v[j])) out.push_back(' ');
        i = j - 1;
        continue;
      }
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace fpgaprof::hlo::lex

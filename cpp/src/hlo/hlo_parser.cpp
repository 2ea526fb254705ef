#include "fpgaprof/hlo/hlo_parser.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fpgaprof::hlo {
namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '-' || c == '$';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

PrimitiveType primitive_from_name(std::string_view n) {
  static const std::unordered_map<std::string_view, PrimitiveType> kTypes = {
      {"pred", PrimitiveType::kPred},
      {"s2", PrimitiveType::kS2},
      {"s4", PrimitiveType::kS4},
      {"s8", PrimitiveType::kS8},
      {"s16", PrimitiveType::kS16},
      {"s32", PrimitiveType::kS32},
      {"s64", PrimitiveType::kS64},
      {"u2", PrimitiveType::kU2},
      {"u4", PrimitiveType::kU4},
      {"u8", PrimitiveType::kU8},
      {"u16", PrimitiveType::kU16},
      {"u32", PrimitiveType::kU32},
      {"u64", PrimitiveType::kU64},
      {"f16", PrimitiveType::kF16},
      {"bf16", PrimitiveType::kBF16},
      {"f32", PrimitiveType::kF32},
      {"f64", PrimitiveType::kF64},
      {"f8e5m2", PrimitiveType::kF8E5M2},
      {"f8e4m3fn", PrimitiveType::kF8E4M3FN},
      {"f8e4m3b11fnuz", PrimitiveType::kF8E4M3B11FNUZ},
      {"f8e5m2fnuz", PrimitiveType::kF8E5M2FNUZ},
      {"f8e4m3fnuz", PrimitiveType::kF8E4M3FNUZ},
      {"f8e4m3", PrimitiveType::kF8E4M3},
      {"f8e3m4", PrimitiveType::kF8E3M4},
      {"f8e8m0fnu", PrimitiveType::kF8E8M0FNU},
      {"f4e2m1fn", PrimitiveType::kF4E2M1FN},
      {"c64", PrimitiveType::kC64},
      {"c128", PrimitiveType::kC128},
      {"token", PrimitiveType::kToken},
      {"opaque", PrimitiveType::kOpaque},
  };
  auto it = kTypes.find(n);
  return it == kTypes.end() ? PrimitiveType::kInvalid : it->second;
}

// Strips one level of quotes and resolves backslash escapes ("a\"b" -> a"b).
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
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t' || v.front() == '\r')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r')) v.remove_suffix(1);
  return v;
}

bool parse_int(std::string_view v, int64_t& out) {
  v = trim(v);
  if (v.empty()) return false;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  return ec == std::errc() && p == v.data() + v.size();
}

// Recursive-descent parser over the whole text. One instance per parse.
class HloParser {
 public:
  explicit HloParser(std::string_view text) : s_(text) {}

  Module parse() {
    skip_ws();
    expect_keyword("HloModule", "'HloModule'");
    skip_blanks();
    module_.name = std::string(name_token("module name"));
    parse_module_attributes();
    while (true) {
      skip_ws();
      if (eof()) break;
      if (at_table_keyword()) {
        parse_table();
      } else {
        parse_computation();
      }
    }
    if (module_.computations.empty()) fail("a computation");
    if (!module_.has_entry) {
      // Short dumps without ENTRY: XLA's own parser takes the last computation.
      module_.has_entry = true;
      module_.entry_index = module_.computations.size() - 1;
      module_.computations.back().is_entry = true;
    }
    link_called_computations();
    resolve_stack_frames();
    return std::move(module_);
  }

 private:
  // ---- errors -------------------------------------------------------------------------
  [[noreturn]] void fail(std::string_view expected) const { fail_at(pos_, expected); }

  [[noreturn]] void fail_at(std::size_t at, std::string_view expected) const {
    if (at > s_.size()) at = s_.size();
    int line = 1;
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < at; ++i) {
      if (s_[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    std::string found;
    for (std::size_t i = at; i < s_.size() && found.size() < 24 && s_[i] != '\n'; ++i) {
      const char c = s_[i];
      found.push_back(static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e ? '?' : c);
    }
    const int column = static_cast<int>(at - line_start) + 1;
    std::string msg = "line " + std::to_string(line) + ", column " + std::to_string(column) + ": expected " +
                      std::string(expected) + ", found " +
                      (at >= s_.size() ? std::string("end of input") : "'" + found + "'") +
                      " (is this HLO text as printed by XLA? report unsupported syntax to fpgaprof)";
    throw HloParseError(line, column, found, msg);
  }

  // ---- low-level scanning ---------------------------------------------------------------
  bool eof() const { return pos_ >= s_.size(); }
  char peek(std::size_t k = 0) const { return pos_ + k < s_.size() ? s_[pos_ + k] : '\0'; }

  void skip_comment_block() {
    // /*index=5*/ comments appear inside long operand and tuple lists.
    std::size_t end = s_.find("*/", pos_ + 2);
    if (end == std::string_view::npos) fail("'*/' closing the comment");
    for (std::size_t i = pos_; i < end; ++i) {
      if (s_[i] == '\n') ++line_;
    }
    pos_ = end + 2;
  }

  // Spaces and tabs on the current line, and /* */ comments.
  void skip_blanks() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '/' && peek(1) == '*') {
        skip_comment_block();
      } else {
        break;
      }
    }
  }

  // Whitespace including newlines, /* */ and // comments.
  void skip_ws() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '\n') {
        ++pos_;
        ++line_;
      } else if (c == '/' && peek(1) == '*') {
        skip_comment_block();
      } else if (c == '/' && peek(1) == '/') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  bool at_keyword(std::string_view kw) const {
    if (s_.substr(pos_, kw.size()) != kw) return false;
    return pos_ + kw.size() >= s_.size() || !is_name_char(s_[pos_ + kw.size()]);
  }
  bool accept_keyword(std::string_view kw) {
    if (!at_keyword(kw)) return false;
    pos_ += kw.size();
    return true;
  }
  void expect_keyword(std::string_view kw, std::string_view what) {
    if (!accept_keyword(kw)) fail(what);
  }
  void expect_char(char c, std::string_view what) {
    if (peek() != c || eof()) fail(what);
    ++pos_;
  }

  std::string_view name_token(std::string_view what) {
    if (peek() == '%') ++pos_;
    std::size_t start = pos_;
    while (pos_ < s_.size() && is_name_char(s_[pos_])) ++pos_;
    if (pos_ == start) fail(what);
    return s_.substr(start, pos_ - start);
  }

  int64_t int_token(std::string_view what) {
    std::size_t start = pos_;
    if (peek() == '-') ++pos_;
    while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s_.data() + start, s_.data() + pos_, v);
    if (ec != std::errc() || p != s_.data() + pos_) fail_at(start, what);
    return v;
  }

  // Skips a quoted string starting at pos_ (which is '"').
  void skip_string() {
    std::size_t start = pos_;
    ++pos_;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '\\') {
        pos_ += 2;
        continue;
      }
      if (c == '\n') ++line_;
      ++pos_;
      if (c == '"') return;
    }
    fail_at(start, "a closing '\"' for this string");
  }

  // Raw value text up to ',' or end of line at bracket depth 0 (or an unmatched closer).
  std::string_view scan_value() {
    skip_blanks();
    std::size_t start = pos_;
    int depth = 0;
    char stack[64];
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '"') {
        skip_string();
        continue;
      }
      if (c == '{' || c == '(' || c == '[') {
        if (depth >= 64) fail("less deeply nested brackets");
        stack[depth++] = c == '{' ? '}' : (c == '(' ? ')' : ']');
      } else if (c == '}' || c == ')' || c == ']') {
        if (depth == 0) break;
        if (stack[depth - 1] != c) fail(std::string("'") + stack[depth - 1] + "'");
        --depth;
      } else if (depth == 0 && (c == ',' || c == '\n')) {
        break;
      } else if (c == '\n') {
        ++line_;
      }
      ++pos_;
    }
    if (depth != 0) fail(std::string("'") + stack[depth - 1] + "'");
    return trim(s_.substr(start, pos_ - start));
  }

  // Skips a balanced (...) group starting at pos_ (which is '(').
  void skip_balanced_parens() {
    std::size_t start = pos_;
    int depth = 0;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '"') {
        skip_string();
        continue;
      }
      if (c == '\n') ++line_;
      if (c == '(' || c == '{' || c == '[') ++depth;
      if (c == ')' || c == '}' || c == ']') {
        --depth;
        if (depth == 0) {
          ++pos_;
          return;
        }
        if (depth < 0) break;
      }
      ++pos_;
    }
    fail_at(start, "a balanced '(...)'");
  }

  // ---- module header --------------------------------------------------------------------
  void parse_module_attributes() {
    while (true) {
      skip_blanks();
      if (eof() || peek() == '\n') return;
      expect_char(',', "',' or end of line after the module name");
      skip_blanks();
      std::string_view key = name_token("a module attribute name");
      skip_blanks();
      expect_char('=', "'=' after module attribute '" + std::string(key) + "'");
      std::string_view value = scan_value();
      module_.attributes[std::string(key)] = std::string(value);
    }
  }

  bool at_table_keyword() const {
    return at_keyword("FileNames") || at_keyword("FunctionNames") || at_keyword("FileLocations") ||
           at_keyword("StackFrames");
  }

  // FileNames / FunctionNames rows: `1 "text"`; FileLocations / StackFrames rows: `1 {k=v ...}`.
  void parse_table() {
    std::string_view kind = name_token("a table name");
    // Row ids size the tables: XLA numbers rows 1, 2, 3, ..., so an id far beyond the rows
    // read so far is not XLA's and would make a few bytes of text allocate gigabytes.
    int64_t rows = 0;
    while (true) {
      skip_ws();
      if (!is_digit(peek())) return;
      int64_t id = int_token("a row id");
      skip_blanks();
      if (id <= 0 || id > 2 * rows + 1024) fail("a row id between 1 and " + std::to_string(2 * rows + 1024));
      ++rows;
      const auto idx = static_cast<std::size_t>(id - 1);
      if (kind == "FileNames" || kind == "FunctionNames") {
        if (peek() != '"') fail("a quoted string");
        std::size_t start = pos_;
        skip_string();
        auto& table = kind == "FileNames" ? file_names_ : function_names_;
        if (table.size() <= idx) table.resize(idx + 1);
        table[idx] = unquote(s_.substr(start, pos_ - start));
      } else {
        if (peek() != '{') fail("'{'");
        std::string_view body = scan_value();
        std::unordered_map<std::string_view, int64_t> kv;
        parse_int_fields(body, kv);
        if (kind == "FileLocations") {
          if (locations_.size() <= idx) locations_.resize(idx + 1);
          Location& l = locations_[idx];
          l.file_id = kv.count("file_name_id") ? kv["file_name_id"] : 0;
          l.function_id = kv.count("function_name_id") ? kv["function_name_id"] : 0;
          l.line = kv.count("line") ? kv["line"] : -1;
          l.column = kv.count("column") ? kv["column"] : -1;
        } else {
          if (frames_.size() <= idx) frames_.resize(idx + 1);
          frames_[idx].location_id = kv.count("file_location_id") ? kv["file_location_id"] : 0;
          // Printed parent ids are one more than the parent's frame id; 1 means no parent.
          const int64_t printed_parent = kv.count("parent_frame_id") ? kv["parent_frame_id"] : 0;
          frames_[idx].parent_id = printed_parent > 0 ? printed_parent - 1 : 0;
        }
      }
    }
  }

  // `{a=1 b=2}` -> map of integer fields (other fields ignored).
  static void parse_int_fields(std::string_view body, std::unordered_map<std::string_view, int64_t>& kv) {
    if (!body.empty() && body.front() == '{') body.remove_prefix(1);
    if (!body.empty() && body.back() == '}') body.remove_suffix(1);
    std::size_t i = 0;
    while (i < body.size()) {
      while (i < body.size() && (body[i] == ' ' || body[i] == ',' || body[i] == '\t')) ++i;
      std::size_t k0 = i;
      while (i < body.size() && body[i] != '=' && body[i] != ' ') ++i;
      std::string_view key = body.substr(k0, i - k0);
      if (i >= body.size() || body[i] != '=') continue;
      ++i;
      std::size_t v0 = i;
      if (i < body.size() && body[i] == '"') {
        ++i;
        while (i < body.size() && body[i] != '"') i += body[i] == '\\' ? 2 : 1;
        ++i;
        continue;
      }
      while (i < body.size() && body[i] != ' ' && body[i] != ',') ++i;
      int64_t v = 0;
      if (parse_int(body.substr(v0, i - v0), v)) kv[key] = v;
    }
  }

  // ---- shapes ----------------------------------------------------------------------------
  bool at_shape_start() const {
    if (peek() == '(') return true;
    std::size_t i = pos_;
    while (i < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i])) != 0)) ++i;
    if (i == pos_ || i >= s_.size() || s_[i] != '[') return false;
    return primitive_from_name(s_.substr(pos_, i - pos_)) != PrimitiveType::kInvalid;
  }

  void parse_shape(Shape& shape, int depth = 0) {
    if (depth > 32) fail("a less deeply nested tuple shape");
    if (peek() == '(') {
      ++pos_;
      shape.type = PrimitiveType::kTuple;
      skip_ws();
      if (peek() == ')') {
        ++pos_;
        return;
      }
      while (true) {
        skip_ws();
        shape.tuple.emplace_back();
        parse_shape(shape.tuple.back(), depth + 1);
        skip_ws();
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        expect_char(')', "',' or ')' in a tuple shape");
        return;
      }
    }
    std::size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) != 0)) ++pos_;
    shape.type = primitive_from_name(s_.substr(start, pos_ - start));
    if (shape.type == PrimitiveType::kInvalid)
      fail_at(start, "a shape (element type such as f32, bf16, s32, pred, token)");
    expect_char('[', "'[' after the element type");
    skip_blanks();
    if (peek() != ']') {
      while (true) {
        skip_blanks();
        bool dynamic = false;
        if (peek() == '<' && peek(1) == '=') {
          pos_ += 2;
          dynamic = true;
        }
        int64_t d = 0;
        if (peek() == '?') {
          ++pos_;
          dynamic = true;
        } else {
          d = int_token("a dimension size");
          if (d < 0) fail("a non-negative dimension size");
        }
        if (dynamic) {
          shape.dynamic_dims.resize(shape.dims.size() + 1, false);
          shape.dynamic_dims.back() = true;
        }
        shape.dims.push_back(d);
        skip_blanks();
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        break;
      }
    }
    expect_char(']', "',' or ']' in the dimensions");
    if (!shape.dynamic_dims.empty()) shape.dynamic_dims.resize(shape.dims.size(), false);
    // A layout is printed glued to ']'; a '{' after a blank opens a computation body.
    if (peek() == '{') parse_layout(shape);
  }

  void parse_layout(Shape& shape) {
    ++pos_;
    shape.has_layout = true;
    while (true) {
      skip_blanks();
      if (is_digit(peek())) {
        shape.layout.push_back(int_token("a layout dimension"));
        skip_blanks();
        if (peek() == ',') {
          ++pos_;
          continue;
        }
      }
      break;
    }
    if (peek() == ':') {
      ++pos_;
      // Tiling T(..), element size E(n), memory space S(n), and more: keep E and S.
      while (!eof() && peek() != '}') {
        char c = peek();
        if ((c == 'E' || c == 'S') && peek(1) == '(') {
          pos_ += 2;
          int64_t v = int_token("a number");
          expect_char(')', "')'");
          if (v < 0 || v > 1024) fail("a small number");
          (c == 'E' ? shape.element_size_in_bits : shape.memory_space) = static_cast<int>(v);
        } else if (c == '(') {
          skip_balanced_parens();
        } else if (c == '\n') {
          fail("'}' closing the layout");
        } else {
          ++pos_;
        }
      }
    }
    expect_char('}', "'}' closing the layout");
  }

  // ---- computations ------------------------------------------------------------------------
  void parse_computation() {
    Computation comp;
    comp.is_entry = accept_keyword("ENTRY");
    skip_ws();
    comp.name = std::string(name_token("a computation name or 'ENTRY'"));
    skip_blanks();
    if (peek() == '(') skip_balanced_parens();
    skip_blanks();
    if (peek() == '-' && peek(1) == '>') {
      pos_ += 2;
      skip_blanks();
      Shape result;
      parse_shape(result);
      skip_blanks();
    }
    if (peek() == ',') {  // `, execution_thread="..."`
      ++pos_;
      scan_value();
      skip_blanks();
    }
    skip_ws();
    expect_char('{', "'{' opening the computation body");
    {
      // One instruction per line: reserving avoids moving large Instruction objects.
      std::size_t end = s_.find("\n}", pos_);
      if (end == std::string_view::npos) end = s_.size();
      std::size_t lines = 0;
      for (std::size_t i = pos_; i < end; ++i) lines += s_[i] == '\n';
      comp.instructions.reserve(lines + 1);
    }
    const std::size_t comp_index = module_.computations.size();
    std::unordered_map<std::string_view, std::size_t> local;
    bool saw_root = false;
    while (true) {
      skip_ws();
      if (eof()) fail("'}' closing computation '" + comp.name + "'");
      if (peek() == '}') {
        ++pos_;
        break;
      }
      comp.instructions.emplace_back();
      comp.instructions.back().computation_index = comp_index;
      std::string_view name = parse_instruction(comp.instructions.back());
      if (!nested_.empty()) {
        // Instructions written in place as operands come first, as if on lines of their own.
        Instruction outer = std::move(comp.instructions.back());
        comp.instructions.pop_back();
        for (Instruction& n : nested_) {
          n.computation_index = comp_index;
          comp.instructions.push_back(std::move(n));
          synthetic_names_.push_back(std::make_unique<std::string>(comp.instructions.back().name));
          if (!local.emplace(*synthetic_names_.back(), comp.instructions.size() - 1).second) {
            fail_at(pos_, "a unique instruction name (duplicate '" + *synthetic_names_.back() + "')");
          }
        }
        nested_.clear();
        comp.instructions.push_back(std::move(outer));
      }
      if (comp.instructions.back().is_root) {
        saw_root = true;
        comp.root_index = comp.instructions.size() - 1;
      }
      if (!local.emplace(name, comp.instructions.size() - 1).second) {
        fail_at(pos_, "a unique instruction name (duplicate '" + std::string(name) + "')");
      }
    }
    skip_blanks();
    if (peek() == ',') {  // trailing `, execution_thread="..."`
      ++pos_;
      scan_value();
    }
    if (comp.instructions.empty()) fail("at least one instruction in computation '" + comp.name + "'");
    if (!saw_root) comp.root_index = comp.instructions.size() - 1;
    add_tuple_element_instructions(comp, local, comp_index);
    resolve_operands(comp, local);
    for (auto& [n, i] : local) comp.index.emplace(std::string(n), i);
    if (comp.is_entry) {
      if (module_.has_entry) fail("only one ENTRY computation");
      module_.has_entry = true;
      module_.entry_index = comp_index;
    }
    if (!module_.index.emplace(comp.name, comp_index).second) {
      fail("a unique computation name (duplicate '" + comp.name + "')");
    }
    module_.computations.push_back(std::move(comp));
  }

  // A get-tuple-element for each distinct tuple-element operand `t#N` of the computation,
  // appended after its instructions (named "t#N", line 0: it has no text of its own), so that
  // the cost model and the users of a tuple see the same instructions as in HLO printed with
  // explicit get-tuple-element.
  void add_tuple_element_instructions(Computation& comp, std::unordered_map<std::string_view, std::size_t>& local,
                                      std::size_t comp_index) {
    std::vector<std::pair<std::string, int>> wanted;  // (operand name, line of its first user)
    for (const Instruction& ins : comp.instructions) {
      for (const std::string& o : ins.operands) {
        if (o.find('#') != std::string::npos && local.find(o) == local.end() &&
            std::none_of(wanted.begin(), wanted.end(), [&](const auto& w) { return w.first == o; })) {
          wanted.emplace_back(o, ins.line);
        }
      }
    }
    for (const auto& [name, line] : wanted) {
      const std::size_t hash = name.find('#');
      const std::string base = name.substr(0, hash);
      int64_t index = -1;
      auto it = local.find(base);
      if (it == local.end())
        fail_line(line, "operand '" + base + "' (of '" + name + "') defined in computation '" + comp.name + "'");
      const Shape& tuple = comp.instructions[it->second].shape;
      if (!parse_int(std::string_view(name).substr(hash + 1), index) || !tuple.is_tuple() || index < 0 ||
          static_cast<std::size_t>(index) >= tuple.tuple.size()) {
        fail_line(line, "'" + name + "' to name an element of a tuple-shaped instruction ('" + base + "' has " +
                            (tuple.is_tuple() ? std::to_string(tuple.tuple.size()) + " elements" : "no tuple shape") +
                            ")");
      }
      Instruction gte;
      gte.name = name;
      gte.opcode = "get-tuple-element";
      gte.shape = tuple.tuple[static_cast<std::size_t>(index)];
      gte.operands = {base};
      gte.attributes["index"] = std::to_string(index);
      gte.computation_index = comp_index;
      gte.line = 0;
      comp.instructions.push_back(std::move(gte));
      synthetic_names_.push_back(std::make_unique<std::string>(name));
      local.emplace(*synthetic_names_.back(), comp.instructions.size() - 1);
    }
  }

  void resolve_operands(Computation& comp, const std::unordered_map<std::string_view, std::size_t>& local) {
    for (Instruction& ins : comp.instructions) {
      const std::size_t n = ins.operands.size();
      ins.operand_shapes.resize(n);
      ins.operand_indices.assign(n, SIZE_MAX);
      for (std::size_t k = 0; k < n; ++k) {
        auto it = local.find(ins.operands[k]);
        if (it != local.end()) {
          ins.operand_indices[k] = it->second;
          ins.operand_shapes[k] = comp.instructions[it->second].shape;
        } else if (ins.operand_shapes[k].type == PrimitiveType::kInvalid) {
          fail_line(ins.line, "operand '" + ins.operands[k] + "' of '" + ins.name + "' defined in computation '" +
                                  comp.name + "'");
        }
      }
      if (ins.shape.type == PrimitiveType::kInvalid && !infer_shape(ins)) {
        fail_line(ins.line, "a shape before the opcode of '" + ins.name +
                                "' (fpgaprof infers it only for tuple, get-tuple-element, pad, while, opt-barrier, "
                                "select, clamp, compare and elementwise arithmetic, from operands defined "
                                "before it)");
      }
    }
  }

  // XLA's own tests write some instructions without a shape (`t = tuple(a, b)`,
  // `g = get-tuple-element(t), index=0`) and let XLA's parser infer it: the same inference for
  // the opcodes such text uses, from the operands' shapes.
  static bool infer_shape(Instruction& ins) {
    const std::vector<Shape>& ops = ins.operand_shapes;
    for (const Shape& s : ops) {
      if (s.type == PrimitiveType::kInvalid) return false;
    }
    const std::string& op = ins.opcode;
    auto int_attr = [&](const char* key, int64_t& v) {
      auto it = ins.attributes.find(key);
      return it != ins.attributes.end() && parse_int(trim(it->second), v);
    };
    if (op == "tuple") {
      ins.shape.type = PrimitiveType::kTuple;
      ins.shape.tuple = ops;
      return true;
    }
    if (op == "get-tuple-element") {
      int64_t index = -1;
      if (ops.size() != 1 || !ops[0].is_tuple() || !int_attr("index", index) || index < 0 ||
          static_cast<std::size_t>(index) >= ops[0].tuple.size()) {
        return false;
      }
      ins.shape = ops[0].tuple[static_cast<std::size_t>(index)];
      return true;
    }
    if (op == "pad") {
      // padding=lo_hi[_interior] per dimension, joined by 'x'
      auto it = ins.attributes.find("padding");
      if (ops.size() != 2 || ops[0].is_tuple() || it == ins.attributes.end()) return false;
      std::vector<std::vector<int64_t>> dims;
      std::string_view v = trim(it->second);
      while (!v.empty()) {
        const std::size_t x = v.find('x');
        std::string_view part = v.substr(0, x);
        std::vector<int64_t> lhi;
        while (!part.empty()) {
          const std::size_t u = part.find('_');
          int64_t n = 0;
          if (!parse_int(part.substr(0, u), n) || n > (int64_t{1} << 40) || n < -(int64_t{1} << 40)) return false;
          lhi.push_back(n);
          part = u == std::string_view::npos ? std::string_view() : part.substr(u + 1);
        }
        if (lhi.size() < 2 || lhi.size() > 3) return false;
        dims.push_back(std::move(lhi));
        v = x == std::string_view::npos ? std::string_view() : v.substr(x + 1);
      }
      if (dims.size() != ops[0].dims.size()) return false;
      ins.shape.type = ops[0].type;
      for (std::size_t d = 0; d < dims.size(); ++d) {
        const int64_t in = ops[0].dims[d];
        const int64_t interior = dims[d].size() > 2 ? dims[d][2] : 0;
        const double out = static_cast<double>(dims[d][0]) + static_cast<double>(dims[d][1]) + static_cast<double>(in) +
                           (in > 0 ? static_cast<double>(in - 1) * static_cast<double>(interior) : 0.0);
        if (interior < 0 || out < 0 || out > 1e15) return false;
        ins.shape.dims.push_back(static_cast<int64_t>(out));
      }
      return true;
    }
    static const char* const kSameShape[] = {"abs",
                                             "add",
                                             "and",
                                             "atan2",
                                             "cbrt",
                                             "ceil",
                                             "copy",
                                             "cosine",
                                             "divide",
                                             "exponential",
                                             "exponential-minus-one",
                                             "floor",
                                             "log",
                                             "log-plus-one",
                                             "logistic",
                                             "maximum",
                                             "minimum",
                                             "multiply",
                                             "negate",
                                             "not",
                                             "or",
                                             "power",
                                             "remainder",
                                             "round-nearest-afz",
                                             "round-nearest-even",
                                             "rsqrt",
                                             "shift-left",
                                             "shift-right-arithmetic",
                                             "shift-right-logical",
                                             "sign",
                                             "sine",
                                             "sqrt",
                                             "subtract",
                                             "tan",
                                             "tanh",
                                             "xor"};
    const bool same = std::any_of(std::begin(kSameShape), std::end(kSameShape), [&](const char* o) { return op == o; });
    if (same && !ops.empty() && ops[0].is_array()) {
      ins.shape = ops[0];
      return true;
    }
    if ((op == "while" || op == "opt-barrier") && ops.size() == 1) {  // the loop state
      ins.shape = ops[0];
      return true;
    }
    if ((op == "select" || op == "clamp") && ops.size() == 3 && ops[1].is_array()) {
      ins.shape = ops[1];
      return true;
    }
    if (op == "compare" && ops.size() == 2 && ops[0].is_array()) {
      ins.shape = ops[0];
      ins.shape.type = PrimitiveType::kPred;
      ins.shape.element_size_in_bits = 0;
      return true;
    }
    return false;
  }

  [[noreturn]] void fail_line(int line, std::string_view expected) const {
    std::size_t at = 0;
    for (int l = 1; l < line && at < s_.size(); ++at) {
      if (s_[at] == '\n') ++l;
    }
    fail_at(at, expected);
  }

  // One instruction line. Returns its name (a view into the text).
  std::string_view parse_instruction(Instruction& ins) {
    ins.line = line_;
    ins.is_root = accept_keyword("ROOT");
    skip_blanks();
    std::string_view name = name_token("an instruction name");
    ins.name = std::string(name);
    skip_blanks();
    expect_char('=', "'=' after the instruction name");
    skip_blanks();
    if (at_shape_less_opcode()) {
      // No shape (XLA's tests leave it to the parser): resolve_operands infers it.
    } else {
      parse_shape(ins.shape);
      skip_blanks();
      if (peek() == '\n') skip_ws();  // hand-written HLO may put the opcode on the next line
    }
    parse_opcode_and_operands(ins);
    parse_attributes(ins);
    return name;
  }

  // `name(` where a shape is expected: an instruction written without its shape.
  bool at_shape_less_opcode() const {
    if (at_shape_start()) return false;
    std::size_t i = pos_;
    while (i < s_.size() && is_name_char(s_[i])) ++i;
    return i > pos_ && i < s_.size() && s_[i] == '(';
  }

  // The opcode and what follows it up to the attributes: operands, a parameter number or a
  // constant's literal.
  void parse_opcode_and_operands(Instruction& ins) {
    std::size_t op_start = pos_;
    while (pos_ < s_.size() && is_name_char(s_[pos_])) ++pos_;
    if (pos_ == op_start) fail("an opcode");
    ins.opcode = std::string(s_.substr(op_start, pos_ - op_start));
    skip_blanks();
    if (peek() != '(') fail("'(' after the opcode");
    if (ins.opcode == "constant") {
      std::size_t lit = pos_;
      skip_balanced_parens();
      if (pos_ - lit <= 66) ins.attributes["literal"] = std::string(s_.substr(lit + 1, pos_ - lit - 2));
    } else if (ins.opcode == "parameter") {
      ++pos_;
      skip_blanks();
      ins.parameter_number = int_token("a parameter number");
      skip_blanks();
      expect_char(')', "')' after the parameter number");
    } else {
      parse_operands(ins);
    }
  }

  void parse_operands(Instruction& ins) {
    ++pos_;  // '('
    skip_ws();
    if (peek() == ')') {
      ++pos_;
      return;
    }
    while (true) {
      skip_ws();
      Shape inline_shape;
      if (at_shape_start()) {
        parse_shape(inline_shape);
        skip_blanks();
      }
      if (inline_shape.type != PrimitiveType::kInvalid && at_shape_less_opcode()) {
        // XLA's tests write an operand as an instruction in place (`pad(s8[4] parameter(0),
        // s8[] constant(0))`): it becomes an instruction of its own before this one, named
        // "<user>/<operand position>".
        if (nested_depth_ >= 32) fail("operands written in place less deeply nested");
        Instruction nested;
        nested.name = ins.name + "/" + std::to_string(ins.operands.size());
        nested.line = line_;
        nested.shape = inline_shape;
        ++nested_depth_;
        parse_opcode_and_operands(nested);
        --nested_depth_;
        ins.operands.push_back(nested.name);
        ins.operand_shapes.push_back(std::move(inline_shape));
        nested_.push_back(std::move(nested));
        skip_ws();
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        expect_char(')', "',' or ')' in the operand list");
        return;
      }
      std::string_view operand = name_token("an operand name");
      if (peek() == '#') {
        // XLA's tuple-element shorthand (2025 on): `%t#2` is element 2 of tuple-shaped %t, printed
        // in place of a get-tuple-element instruction. Kept as the name "t#2"; resolve_operands
        // adds the get-tuple-element it stands for.
        ++pos_;
        const std::size_t digits = pos_;
        while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
        if (pos_ == digits) fail("a tuple index after '#' in operand '" + std::string(operand) + "'");
        operand = s_.substr(operand.data() - s_.data(), pos_ - static_cast<std::size_t>(operand.data() - s_.data()));
      }
      ins.operands.emplace_back(operand);
      ins.operand_shapes.push_back(std::move(inline_shape));
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect_char(')', "',' or ')' in the operand list");
      return;
    }
  }

  void parse_attributes(Instruction& ins) {
    while (true) {
      skip_blanks();
      if (eof()) return;
      if (peek() == '\n') {
        // Hand-written HLO may start a continuation line with the ',' before its attribute.
        const std::size_t at = pos_;
        const int line = line_;
        skip_ws();
        if (peek() != ',') {
          pos_ = at;
          line_ = line;
          return;
        }
      }
      if (peek() == '}') return;  // a computation closed on the same line
      expect_char(',', "',' before an attribute or end of line");
      skip_ws();  // hand-written HLO may continue the attribute list on the next line
      std::size_t key_start = pos_;
      while (pos_ < s_.size() && is_name_char(s_[pos_])) ++pos_;
      if (pos_ == key_start) fail("an attribute name");
      std::string_view key = s_.substr(key_start, pos_ - key_start);
      skip_blanks();
      expect_char('=', "'=' after attribute '" + std::string(key) + "'");
      std::size_t value_pos = pos_;
      std::string_view value = scan_value();
      if (value.empty()) fail_at(value_pos, "a value for attribute '" + std::string(key) + "'");
      interpret_attribute(ins, key, value, value_pos);
    }
  }

  void interpret_attribute(Instruction& ins, std::string_view key, std::string_view value, std::size_t value_pos) {
    if (key == "metadata") {
      parse_metadata(ins.metadata, value, value_pos);
      return;
    }
    if (key == "kind") {
      ins.fusion_kind = std::string(value);
    } else if (key == "calls" || key == "to_apply" || key == "body" || key == "condition" ||
               key == "branch_computations" || key == "true_computation" || key == "false_computation" ||
               key == "select" || key == "scatter" || key == "called_computations" || key == "comparator") {
      add_computation_names(ins, value);
    } else if (key == "custom_call_target") {
      ins.custom_call_target = unquote(value);
    } else if (key == "backend_config") {
      ins.backend_config = value.front() == '"' ? unquote(value) : std::string(value);
      auto tc = ins.backend_config.find("\"known_trip_count\"");
      if (tc != std::string::npos) {
        auto n = ins.backend_config.find("\"n\"", tc);
        if (n != std::string::npos) {
          std::size_t i = n + 3;
          while (i < ins.backend_config.size() && !is_digit(ins.backend_config[i])) {
            if (ins.backend_config[i] == '}') break;
            ++i;
          }
          int64_t v = 0;
          std::size_t j = i;
          while (j < ins.backend_config.size() && is_digit(ins.backend_config[j])) ++j;
          if (j > i && parse_int(std::string_view(ins.backend_config).substr(i, j - i), v)) ins.known_trip_count = v;
        }
      }
      return;
    }
    ins.attributes.emplace(std::string(key), std::string(value));
  }

  void add_computation_names(Instruction& ins, std::string_view value) {
    std::size_t i = 0;
    while (i < value.size()) {
      char c = value[i];
      if (c == '{' || c == '}' || c == ',' || c == ' ' || c == '%') {
        ++i;
        continue;
      }
      std::size_t start = i;
      while (i < value.size() && is_name_char(value[i])) ++i;
      if (i == start) {
        ++i;
        continue;
      }
      ins.called_computations.emplace_back(value.substr(start, i - start));
    }
  }

  // {op_type="..." op_name="..." source_file="..." source_line=N stack_frame_id=N ...}
  void parse_metadata(Metadata& md, std::string_view v, std::size_t value_pos) {
    if (v.size() < 2 || v.front() != '{' || v.back() != '}') fail_at(value_pos, "'{' starting metadata");
    std::size_t i = 1;
    const std::size_t end = v.size() - 1;
    while (i < end) {
      while (i < end && (v[i] == ' ' || v[i] == ',' || v[i] == '\n' || v[i] == '\t')) ++i;
      if (i >= end) break;
      std::size_t k0 = i;
      while (i < end && v[i] != '=' && v[i] != ' ') ++i;
      std::string_view key = v.substr(k0, i - k0);
      if (i >= end || v[i] != '=') fail_at(value_pos + i, "'=' in metadata");
      ++i;
      std::size_t v0 = i;
      if (i < end && v[i] == '"') {
        ++i;
        while (i < end && v[i] != '"') i += v[i] == '\\' ? 2 : 1;
        if (i >= end) fail_at(value_pos + v0, "a closing '\"' in metadata");
        ++i;
      } else if (i < end && v[i] == '{') {
        int depth = 0;
        for (; i < end; ++i) {
          if (v[i] == '{') ++depth;
          if (v[i] == '}' && --depth == 0) {
            ++i;
            break;
          }
        }
      } else {
        while (i < end && v[i] != ' ' && v[i] != ',') ++i;
      }
      std::string_view val = v.substr(v0, i - v0);
      if (key == "op_name") {
        md.op_name = unquote(val);
      } else if (key == "op_type") {
        md.op_type = unquote(val);
      } else if (key == "source_file") {
        md.source_file = unquote(val);
      } else if (key == "source_line") {
        parse_int(val, md.source_line);
      } else if (key == "stack_frame_id") {
        parse_int(val, md.stack_frame_id);
      }
    }
  }

  // ---- whole-module resolution -------------------------------------------------------------
  void link_called_computations() {
    for (Computation& c : module_.computations) {
      for (Instruction& ins : c.instructions) {
        for (const std::string& callee : ins.called_computations) {
          auto it = module_.index.find(callee);
          if (it == module_.index.end()) {
            fail_line(ins.line, "a computation named '" + callee + "' (called by '" + ins.name + "')");
          }
          if (ins.opcode == "fusion") module_.computations[it->second].is_fusion = true;
        }
      }
    }
  }

  static bool is_framework_file(const std::string& f) {
    return f.find("/jax/_src/") != std::string::npos || f.find("/jaxlib/") != std::string::npos;
  }

  void resolve_stack_frames() {
    if (frames_.empty()) return;
    module_.stack_frames.resize(frames_.size());
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      StackFrame& out = module_.stack_frames[i];
      out.parent_id = frames_[i].parent_id;
      const int64_t loc = frames_[i].location_id;
      if (loc <= 0 || static_cast<std::size_t>(loc) > locations_.size()) continue;
      const Location& l = locations_[static_cast<std::size_t>(loc - 1)];
      out.line = l.line;
      out.column = l.column;
      if (l.file_id > 0 && static_cast<std::size_t>(l.file_id) <= file_names_.size()) {
        out.file = file_names_[static_cast<std::size_t>(l.file_id - 1)];
      }
      if (l.function_id > 0 && static_cast<std::size_t>(l.function_id) <= function_names_.size()) {
        out.function = function_names_[static_cast<std::size_t>(l.function_id - 1)];
      }
    }
    const auto n = static_cast<int64_t>(module_.stack_frames.size());
    for (Computation& c : module_.computations) {
      for (Instruction& ins : c.instructions) {
        Metadata& md = ins.metadata;
        if (md.stack_frame_id <= 0 || md.stack_frame_id > n || !md.source_file.empty()) continue;
        // Innermost frame the user wrote: skip framework frames, bounded against cycles.
        int64_t id = md.stack_frame_id;
        const StackFrame* chosen = &module_.stack_frames[static_cast<std::size_t>(id - 1)];
        for (int steps = 0; steps < 256 && id > 0 && id <= n; ++steps) {
          const StackFrame& f = module_.stack_frames[static_cast<std::size_t>(id - 1)];
          if (!is_framework_file(f.file)) {
            chosen = &f;
            break;
          }
          id = f.parent_id;
        }
        md.source_file = chosen->file;
        md.source_line = chosen->line;
        md.source_column = chosen->column;
        md.function_name = chosen->function;
      }
    }
  }

  struct Location {
    int64_t file_id = 0;
    int64_t function_id = 0;
    int64_t line = -1;
    int64_t column = -1;
  };
  struct Frame {
    int64_t location_id = 0;
    int64_t parent_id = 0;
  };

  std::string_view s_;
  std::size_t pos_ = 0;
  int line_ = 1;
  Module module_;
  std::vector<std::unique_ptr<std::string>> synthetic_names_;  // keys of `local` for "t#N" operands
                                                               // and operands written in place
  std::vector<Instruction> nested_;  // operands written in place in the instruction being parsed
  int nested_depth_ = 0;
  std::vector<std::string> file_names_;
  std::vector<std::string> function_names_;
  std::vector<Location> locations_;
  std::vector<Frame> frames_;
};

}  // namespace

Module parse_hlo_module(std::string_view text) { return HloParser(text).parse(); }

}  // namespace fpgaprof::hlo

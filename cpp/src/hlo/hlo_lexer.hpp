// The lexical level of the HLO text parser (hlo_parser.cpp): XLA's lexical rules
// (xla/hlo/parser/hlo_lexer.cc) over the whole text: whitespace, line breaks and `/* */` and
// `// ...` comments are free between any two tokens; the value scanners (strings, bracketed
// groups) and the errors, each with its line and column.
#pragma once
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fpgaprof/hlo/hlo_module.hpp"
#include "fpgaprof/hlo/hlo_parser.hpp"

namespace fpgaprof::hlo::lex {

// Identifier characters: XLA's [A-Za-z0-9_.-], plus '$' (names in older dumps).
struct CharTable {
  bool ident[256] = {};
  bool space[256] = {};
  CharTable() {
    for (int c = 'a'; c <= 'z'; ++c) ident[c] = true;
    for (int c = 'A'; c <= 'Z'; ++c) ident[c] = true;
    for (int c = '0'; c <= '9'; ++c) ident[c] = true;
    ident[static_cast<unsigned char>('_')] = ident[static_cast<unsigned char>('.')] = true;
    ident[static_cast<unsigned char>('-')] = ident[static_cast<unsigned char>('$')] = true;
    space[static_cast<unsigned char>(' ')] = space[static_cast<unsigned char>('\t')] = true;
    space[static_cast<unsigned char>('\n')] = space[static_cast<unsigned char>('\r')] = true;
    space[static_cast<unsigned char>('\f')] = space[static_cast<unsigned char>('\v')] = true;
  }
};
inline const CharTable kChars;

inline bool is_ident(char c) { return kChars.ident[static_cast<unsigned char>(c)]; }
inline bool is_space(char c) { return kChars.space[static_cast<unsigned char>(c)]; }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

// An element type's name ("f32", "bf16", "pred", ...); kInvalid for any other word.
PrimitiveType primitive_from_name(std::string_view n);
// Strips one level of quotes and resolves backslash escapes ("a\"b" -> a"b).
std::string unquote(std::string_view v);
std::string_view trim(std::string_view v);
// A whole integer (blanks around it allowed); false otherwise.
bool parse_int(std::string_view v, int64_t& out);
// Attribute value text with every run of whitespace that holds a line break (outside quoted
// strings) made one blank: a value re-wrapped over lines reads as printed on one.
std::string one_line(std::string_view v);

// The parser's position in the text and the tokens below the grammar.
class HloLexer {
 public:
  explicit HloLexer(std::string_view text) : s_(text) {}

 protected:
  // ---- errors ---------------------------------------------------------------------------------
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

  // 1-based line of a position: counted forward from the last position asked for (positions
  // come in increasing order while parsing, so the whole text is counted about once).
  int line_of(std::size_t at) {
    if (at < line_pos_) {
      line_pos_ = 0;
      line_no_ = 1;
    }
    if (at > s_.size()) at = s_.size();
    const char* p = s_.data() + line_pos_;
    const char* end = s_.data() + at;
    while (p < end) {
      const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
      if (nl == nullptr) break;
      ++line_no_;
      p = static_cast<const char*>(nl) + 1;
    }
    line_pos_ = at;
    return line_no_;
  }

  // ---- lexical level ----------------------------------------------------------------------------
  bool eof() const { return pos_ >= s_.size(); }
  char peek(std::size_t k = 0) const { return pos_ + k < s_.size() ? s_[pos_ + k] : '\0'; }

  // Whitespace, line breaks and comments: free between any two tokens.
  void skip_ws() {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (is_space(c)) {
        ++pos_;
      } else if (c == '/' && peek(1) == '*') {
        const std::size_t end = s_.find("*/", pos_ + 2);
        if (end == std::string_view::npos) fail("'*/' closing the comment");
        pos_ = end + 2;
      } else if (c == '/' && peek(1) == '/') {
        const void* nl = std::memchr(s_.data() + pos_, '\n', s_.size() - pos_);
        pos_ = nl == nullptr ? s_.size() : static_cast<std::size_t>(static_cast<const char*>(nl) - s_.data());
      } else {
        break;
      }
    }
  }

  std::size_t ident_end(std::size_t from) const {
    while (from < s_.size() && is_ident(s_[from])) ++from;
    return from;
  }

  // A keyword: the identifier at pos_ is exactly `kw`.
  bool at_word(std::string_view kw) const {
    if (s_.compare(pos_, kw.size(), kw) != 0) return false;
    return pos_ + kw.size() >= s_.size() || !is_ident(s_[pos_ + kw.size()]);
  }

  void expect_char(char c, std::string_view what) {
    if (eof() || s_[pos_] != c) fail(what);
    ++pos_;
  }

  // `%name` or `name`.
  std::string_view name_token(std::string_view what) {
    if (peek() == '%') ++pos_;
    const std::size_t start = pos_;
    pos_ = ident_end(pos_);
    if (pos_ == start) fail(what);
    return s_.substr(start, pos_ - start);
  }

  int64_t int_token(std::string_view what) {
    const std::size_t start = pos_;
    if (peek() == '-') ++pos_;
    while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s_.data() + start, s_.data() + pos_, v);
    if (ec != std::errc() || p != s_.data() + pos_) fail_at(start, what);
    return v;
  }

  // A quoted string starting at pos_ (which is '"').
  void skip_string() {
    const std::size_t start = pos_;
    ++pos_;
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == '\\') {
        pos_ += 2;
        continue;
      }
      ++pos_;
      if (c == '"') return;
    }
    fail_at(start, "a closing '\"' for this string");
  }

  // A comment inside a bracketed value, kept in its text but not read for brackets.
  bool skip_comment_in_value() {
    if (peek() != '/' || (peek(1) != '*' && peek(1) != '/')) return false;
    if (peek(1) == '*') {
      const std::size_t end = s_.find("*/", pos_ + 2);
      if (end == std::string_view::npos) fail("'*/' closing the comment");
      pos_ = end + 2;
    } else {
      const void* nl = std::memchr(s_.data() + pos_, '\n', s_.size() - pos_);
      pos_ = nl == nullptr ? s_.size() : static_cast<std::size_t>(static_cast<const char*>(nl) - s_.data());
    }
    return true;
  }

  // An attribute value: bracketed groups (with anything inside, strings and comments
  // included) and the characters between them, up to a ',' or a blank outside brackets, or an
  // unmatched closer. Leading whitespace is skipped: a value may start on the next line.
  std::string_view scan_value() {
    skip_ws();
    const std::size_t start = pos_;
    int depth = 0;
    char stack[64];
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == '"') {
        skip_string();
        continue;
      }
      if (depth > 0 && c == '/' && skip_comment_in_value()) continue;
      if (c == '{' || c == '(' || c == '[') {
        if (depth >= 64) fail("less deeply nested brackets");
        stack[depth++] = c == '{' ? '}' : (c == '(' ? ')' : ']');
      } else if (c == '}' || c == ')' || c == ']') {
        if (depth == 0) break;
        if (stack[depth - 1] != c) fail(std::string("'") + stack[depth - 1] + "'");
        --depth;
      } else if (depth == 0 && (c == ',' || is_space(c) || (c == '/' && (peek(1) == '*' || peek(1) == '/')))) {
        break;
      }
      ++pos_;
    }
    if (depth != 0) fail(std::string("'") + stack[depth - 1] + "'");
    return s_.substr(start, pos_ - start);
  }

  // A balanced (...) group starting at pos_ (which is '('), strings and comments inside.
  void skip_balanced_parens() {
    const std::size_t start = pos_;
    int depth = 0;
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == '"') {
        skip_string();
        continue;
      }
      if (c == '/' && skip_comment_in_value()) continue;
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

  // The first character at or after `at` that is not whitespace ('\0' at the end).
  char next_char_after(std::size_t at) const {
    while (at < s_.size() && is_space(s_[at])) ++at;
    return at < s_.size() ? s_[at] : '\0';
  }

  [[noreturn]] void fail_line(int line, std::string_view expected) const {
    std::size_t at = 0;
    for (int l = 1; l < line && at < s_.size(); ++at) {
      if (s_[at] == '\n') ++l;
    }
    fail_at(at, expected);
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  std::size_t line_pos_ = 0;  // line_of's memo: the line at line_pos_ is line_no_
  int line_no_ = 1;
};

}  // namespace fpgaprof::hlo::lex

#include "fpgaprof/hlo/hlo_parser.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hlo/hlo_lexer.hpp"
#include "hlo/shape_inference.hpp"

// A recursive-descent parser over the whole text with XLA's lexical rules
// (xla/hlo/parser/hlo_lexer.cc): whitespace and line breaks are free between any two tokens,
// `/* */` and `// ...` comments are whitespace. What ends an instruction is the grammar
// (`name = shape? opcode(operands) (, attribute=value)*`), never the end of a line, so text
// re-wrapped anywhere between tokens (XLA's own tests do it) reads as printed text does.

namespace fpgaprof::hlo {
namespace {

using namespace lex;  // NOLINT(google-build-using-namespace): the parser's own lexer

bool is_computation_attribute(std::string_view key) {
  return key == "calls" || key == "to_apply" || key == "body" || key == "condition" || key == "branch_computations" ||
         key == "true_computation" || key == "false_computation" || key == "select" || key == "scatter" ||
         key == "called_computations" || key == "comparator";
}

class HloParser : private lex::HloLexer {
 public:
  explicit HloParser(std::string_view text)
      : HloLexer(text), reserve_budget_(1 + static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'))) {}

  Module parse() {
    // A UTF-8 byte-order mark some editors write first: not text of the module.
    if (s_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
    skip_ws();
    bool headerless = true;
    if (at_word("HloModule")) {
      headerless = false;
      pos_ += 9;
      skip_ws();
      module_.name = std::string(name_token("a module name"));
      if (peek() == ':') ++pos_;  // the older header form `HloModule name:`
      parse_module_attributes();
    }
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
      // Without ENTRY XLA's parser takes the last computation.
      module_.has_entry = true;
      module_.entry_index = module_.computations.size() - 1;
      module_.computations.back().is_entry = true;
    }
    // Text without the HloModule line (XLA's lit tests): XLA names it after the entry.
    if (headerless) module_.name = "module_" + module_.computations[module_.entry_index].name;
    link_called_computations();
    resolve_stack_frames();
    return std::move(module_);
  }

 private:
  // ---- module header and tables -----------------------------------------------------------------
  // ---- attribute lists ----------------------------------------------------------------------------
  // What an attribute list's errors call its parts: "a module attribute name" and "'=' after
  // module attribute 'k'" (with_key), or "'=' after a computation attribute".
  struct ListWords {
    std::string_view name;    // expected where a name is missing
    std::string_view equals;  // "'=' after <equals>['<key>']"
    bool with_key;
  };

  // `(, key = value)*`: XLA's attribute list, after the module's name, around a computation's
  // body and after an instruction's operands; the one reader of all three. For each attribute
  // `value(key)` reads the value from just after the '='. Leaves pos_ where the list ends.
  template <class ReadValue>
  void parse_attribute_list(const ListWords& words, ReadValue&& value) {
    while (true) {
      const std::size_t at = pos_;
      skip_ws();
      if (peek() != ',') {
        pos_ = at;
        return;
      }
      ++pos_;
      skip_ws();
      const std::size_t key_start = pos_;
      pos_ = ident_end(pos_);
      if (pos_ == key_start) fail(words.name);
      const std::string_view key = s_.substr(key_start, pos_ - key_start);
      skip_ws();
      if (peek() != '=') {
        fail("'=' after " + std::string(words.equals) + (words.with_key ? " '" + std::string(key) + "'" : ""));
      }
      ++pos_;
      value(key);
    }
  }

  void parse_module_attributes() {
    parse_attribute_list({"a module attribute name", "module attribute", true}, [&](std::string_view key) {
      const std::size_t value_pos = pos_;
      const std::string_view value = scan_value();
      if (value.empty()) fail_at(value_pos, "a value for module attribute '" + std::string(key) + "'");
      module_.attributes[std::string(key)] = one_line(value);
    });
  }

  bool at_table_keyword() const {
    return at_word("FileNames") || at_word("FunctionNames") || at_word("FileLocations") || at_word("StackFrames");
  }

  // FileNames / FunctionNames rows: `1 "text"`; FileLocations / StackFrames rows: `1 {k=v ...}`.
  void parse_table() {
    const std::string_view kind = name_token("a table name");
    // Row ids size the tables: XLA numbers rows 1, 2, 3, ..., so an id far beyond the rows
    // read so far is not XLA's and would make a few bytes of text allocate gigabytes.
    int64_t rows = 0;
    while (true) {
      skip_ws();
      if (!is_digit(peek())) return;
      const int64_t id = int_token("a row id");
      skip_ws();
      if (id <= 0 || id > 2 * rows + 1024) fail("a row id between 1 and " + std::to_string(2 * rows + 1024));
      ++rows;
      const auto idx = static_cast<std::size_t>(id - 1);
      if (kind == "FileNames" || kind == "FunctionNames") {
        if (peek() != '"') fail("a quoted string");
        const std::size_t start = pos_;
        skip_string();
        auto& table = kind == "FileNames" ? file_names_ : function_names_;
        if (table.size() <= idx) table.resize(idx + 1);
        table[idx] = unquote(s_.substr(start, pos_ - start));
      } else {
        if (peek() != '{') fail("'{'");
        const std::string_view body = scan_value();
        std::unordered_map<std::string_view, int64_t> kv;
        parse_int_fields(body, kv);
        auto get = [&](std::string_view k, int64_t fallback) {
          auto it = kv.find(k);
          return it == kv.end() ? fallback : it->second;
        };
        if (kind == "FileLocations") {
          if (locations_.size() <= idx) locations_.resize(idx + 1);
          Location& l = locations_[idx];
          l.file_id = get("file_name_id", 0);
          l.function_id = get("function_name_id", 0);
          l.line = get("line", -1);
          l.column = get("column", -1);
        } else {
          if (frames_.size() <= idx) frames_.resize(idx + 1);
          frames_[idx].location_id = get("file_location_id", 0);
          // Printed parent ids are one more than the parent's frame id; 1 means no parent.
          const int64_t printed_parent = get("parent_frame_id", 0);
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
      while (i < body.size() && (is_space(body[i]) || body[i] == ',')) ++i;
      const std::size_t k0 = i;
      while (i < body.size() && body[i] != '=' && !is_space(body[i])) ++i;
      const std::string_view key = body.substr(k0, i - k0);
      if (i >= body.size() || body[i] != '=') continue;
      ++i;
      const std::size_t v0 = i;
      if (i < body.size() && body[i] == '"') {
        ++i;
        while (i < body.size() && body[i] != '"') i += body[i] == '\\' ? 2 : 1;
        ++i;
        continue;
      }
      while (i < body.size() && !is_space(body[i]) && body[i] != ',') ++i;
      int64_t v = 0;
      if (parse_int(body.substr(v0, i - v0), v)) kv[key] = v;
    }
  }

  // ---- shapes -----------------------------------------------------------------------------------
  // A shape starts here: a tuple '(' or an element type name (a reserved word in XLA's lexer),
  // or a buffer `b(`.
  bool at_shape_start() const {
    const char c = peek();
    if (c == '(') return true;
    const std::size_t e = ident_end(pos_);
    if (e == pos_) return false;
    if (e == pos_ + 1 && c == 'b' && e < s_.size() && s_[e] == '(') return true;
    // An element type name and '[' (an instruction may be named `s2`).
    return next_char_after(e) == '[' && primitive_from_name(s_.substr(pos_, e - pos_)) != PrimitiveType::kInvalid;
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
    const std::size_t start = pos_;
    pos_ = ident_end(pos_);
    const std::string_view word = s_.substr(start, pos_ - start);
    if (word == "b" && peek() == '(') {
      // A buffer `b(f32[4])`: sized as the array it holds.
      ++pos_;
      skip_ws();
      parse_shape(shape, depth + 1);
      if (!shape.is_array()) fail_at(start, "an array inside a buffer shape");
      skip_ws();
      expect_char(')', "')' closing the buffer shape");
      return;
    }
    shape.type = primitive_from_name(word);
    if (shape.type == PrimitiveType::kInvalid) {
      fail_at(start, "a shape (element type such as f32, bf16, s32, pred, token)");
    }
    skip_ws();
    expect_char('[', "'[' after the element type");
    skip_ws();
    if (peek() != ']') {
      while (true) {
        skip_ws();
        bool dynamic = false;
        if (peek() == '<' && peek(1) == '=') {
          pos_ += 2;
          skip_ws();
          dynamic = true;
        }
        int64_t d = 0;
        if (peek() == '?') {
          ++pos_;
          dynamic = true;  // unbounded: no size (counted as 0 elements)
        } else {
          d = int_token("a dimension size");
          if (d < 0) fail("a non-negative dimension size");
        }
        if (dynamic) {
          shape.dynamic_dims.resize(shape.dims.size() + 1, false);
          shape.dynamic_dims.back() = true;
        }
        shape.dims.push_back(d);
        if (shape.dims.size() > 64) fail("at most 64 dimensions");
        skip_ws();
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        break;
      }
    }
    expect_char(']', "',' or ']' in the dimensions");
    if (!shape.dynamic_dims.empty()) shape.dynamic_dims.resize(shape.dims.size(), false);
    // A layout: '{' then a number, ':' or '}' glued (XLA: '{' followed by an integer or ':').
    // A '{' followed by anything else opens a computation body.
    if (peek() == '{' && peek(1) == '}') {
      pos_ += 2;
      shape.has_layout = true;
      return;
    }
    const std::size_t after = pos_;
    skip_ws();
    if (peek() == '{') {
      std::size_t q = pos_ + 1;
      while (q < s_.size() && is_space(s_[q])) ++q;
      if (q < s_.size() && (is_digit(s_[q]) || s_[q] == ':')) {
        parse_layout(shape);
        return;
      }
    }
    pos_ = after;
  }

  void parse_layout(Shape& shape) {
    ++pos_;  // '{'
    shape.has_layout = true;
    while (true) {
      skip_ws();
      if (!is_digit(peek())) break;
      shape.layout.push_back(int_token("a layout dimension"));
      if (shape.layout.size() > 64) fail("at most 64 layout dimensions");
      skip_ws();
      if (peek() != ',') break;
      ++pos_;
    }
    skip_ws();
    if (peek() == ':') {
      ++pos_;
      // Tiling T(..), element size E(n), memory space S(n), and more: keep E and S.
      while (!eof() && peek() != '}') {
        const char c = peek();
        if ((c == 'E' || c == 'S') && peek(1) == '(') {
          pos_ += 2;
          skip_ws();
          const int64_t v = int_token("a number");
          skip_ws();
          expect_char(')', "')'");
          if (v < 0 || v > 1024) fail("a small number");
          (c == 'E' ? shape.element_size_in_bits : shape.memory_space) = static_cast<int>(v);
        } else if (c == '(') {
          skip_balanced_parens();
        } else if (c == '{' || c == ')' || c == ']' || c == '"') {
          fail("'}' closing the layout");
        } else {
          ++pos_;
        }
      }
    }
    expect_char('}', "'}' closing the layout");
  }

  // ---- computations -----------------------------------------------------------------------------
  void parse_computation() {
    Computation comp;
    comp.is_entry = at_word("ENTRY");
    if (comp.is_entry) pos_ += 5;
    skip_ws();
    comp.name = std::string(name_token("a computation name or 'ENTRY'"));
    skip_ws();
    if (peek() == ':') {  // a name lexed as `name:` (XLA's kName)
      ++pos_;
      skip_ws();
    }
    if (peek() == '(') {
      skip_balanced_parens();  // parameter list
      skip_ws();
    }
    if (peek() == '-' && peek(1) == '>') {
      pos_ += 2;
      skip_ws();
      Shape result;
      parse_shape(result);
      skip_ws();
    }
    parse_computation_attributes();
    skip_ws();
    if (peek() != '{') fail("'{' opening the body of computation '" + comp.name + "'");
    ++pos_;
    parse_instruction_list(comp);
    parse_computation_attributes();  // trailing `, execution_thread="..."`
    add_computation(std::move(comp));
  }

  // `, execution_thread="..."` before or after a computation's body.
  void parse_computation_attributes() {
    parse_attribute_list({"a computation attribute name", "a computation attribute", false}, [&](std::string_view) {
      if (scan_value().empty()) fail("a value");
    });
  }

  void add_computation(Computation&& comp) {
    const std::size_t comp_index = module_.computations.size();
    if (comp.is_entry) {
      if (module_.has_entry) fail("only one ENTRY computation");
      module_.has_entry = true;
      module_.entry_index = comp_index;
    }
    if (!module_.index.emplace(comp.name, comp_index).second) {
      fail("a unique computation name (duplicate '" + comp.name + "')");
    }
    for (Instruction& ins : comp.instructions) ins.computation_index = comp_index;
    module_.computations.push_back(std::move(comp));
  }

  // `{ instruction+ }` with pos_ after the '{'; resolves operands and infers shapes.
  void parse_instruction_list(Computation& comp) {
    if (++computation_depth_ > 8) fail("computations written in place less deeply nested");
    // The computation's name -> position index, filled as instructions are read (it finds
    // duplicates and operands; no second map is built).
    NameIndex& local = comp.index;
    Computation* const outer_computation = current_;
    current_ = &comp;
    bool saw_root = false;
    {
      // About one instruction a line, up to the first line that starts with '}': reserving
      // spares moving instructions as the vector grows. The module's reservations together
      // stay within its line count (reserve_budget_), and so does the scanning: a body whose
      // '}' ends a line of text (`... add(a, b) }`) would otherwise be counted to the end of
      // the file, once for every such computation (quadratic time, memory per computation).
      const std::size_t cap = std::min<std::size_t>(reserve_budget_, 1 << 16);
      std::size_t lines = 1;
      for (const char* p = s_.data() + pos_; p < s_.data() + s_.size() && lines < cap;) {
        const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(s_.data() + s_.size() - p));
        if (nl == nullptr) break;
        p = static_cast<const char*>(nl) + 1;
        while (p < s_.data() + s_.size() && (*p == ' ' || *p == '\t')) ++p;
        if (p < s_.data() + s_.size() && *p == '}') break;
        ++lines;
      }
      lines = std::min(lines, cap);
      reserve_budget_ -= std::min(lines, reserve_budget_);
      comp.instructions.reserve(lines);
      local.reserve(lines, comp.instructions);
    }
    while (true) {
      skip_ws();
      if (eof()) fail("'}' closing computation '" + comp.name + "'");
      if (peek() == '}') {
        ++pos_;
        break;
      }
      if (comp.instructions.size() >= Operands::kMaxPosition) fail("fewer instructions in one computation");
      comp.instructions.emplace_back();
      std::string_view name = parse_instruction(comp.instructions.back());
      if (!nested_.empty()) {
        // Instructions written in place as operands come first, as if on lines of their own.
        Instruction outer = std::move(comp.instructions.back());
        comp.instructions.pop_back();
        for (Instruction& n : nested_) {
          comp.instructions.push_back(std::move(n));
          if (!local.insert(comp.instructions.size() - 1, comp.instructions)) {
            fail("a unique instruction name (duplicate '" + comp.instructions.back().name + "')");
          }
        }
        nested_.clear();
        comp.instructions.push_back(std::move(outer));
      }
      if (comp.instructions.back().is_root) {
        if (saw_root) fail("one ROOT in computation '" + comp.name + "'");
        saw_root = true;
        comp.root_index = comp.instructions.size() - 1;
      }
      if (!local.insert(comp.instructions.size() - 1, comp.instructions)) {
        fail("a unique instruction name (duplicate '" + std::string(name) + "')");
      }
    }
    if (comp.instructions.empty()) fail("at least one instruction in computation '" + comp.name + "'");
    if (!saw_root) comp.root_index = comp.instructions.size() - 1;
    add_tuple_element_instructions(comp, local);
    resolve_operands(comp, local);
    current_ = outer_computation;
    --computation_depth_;
  }

  // A get-tuple-element for each distinct tuple-element operand `t#N` of the computation,
  // appended after its instructions (named "t#N", line 0: it has no text of its own), so that
  // the cost model and the users of a tuple see the same instructions as in HLO printed with
  // explicit get-tuple-element.
  void add_tuple_element_instructions(Computation& comp, NameIndex& local) {
    std::vector<std::pair<std::string, int>> wanted;  // (operand name, line of its first user)
    for (const Instruction& ins : comp.instructions) {
      for (std::size_t k = 0; k < ins.operands.size(); ++k) {
        if (ins.operands.position(k) != Operands::kNoPosition) continue;  // resolved while parsing
        const std::string& o = ins.operands[k];
        if (o.find('#') != std::string::npos && local.find(o, comp.instructions) == NameIndex::npos &&
            std::none_of(wanted.begin(), wanted.end(), [&](const auto& w) { return w.first == o; })) {
          wanted.emplace_back(o, ins.line);
        }
      }
    }
    for (const auto& [name, line] : wanted) {
      const std::size_t hash = name.find('#');
      const std::string base = name.substr(0, hash);
      int64_t index = -1;
      const std::size_t base_pos = local.find(base, comp.instructions);
      if (base_pos == NameIndex::npos) {
        fail_line(line, "operand '" + base + "' (of '" + name + "') defined in computation '" + comp.name + "'");
      }
      const Shape& tuple = comp.instructions[base_pos].shape;
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
      gte.operands.push_back(base_pos);
      gte.detail().attributes["index"] = std::to_string(index);
      gte.line = 0;
      comp.instructions.push_back(std::move(gte));
      local.insert(comp.instructions.size() - 1, comp.instructions);
    }
  }

  // Operand shapes and positions, in order; a shape left out is inferred from them (XLA's
  // parser requires operands defined before their users).
  void resolve_operands(Computation& comp, const NameIndex& local) {
    if (comp.instructions.size() > Operands::kMaxPosition) fail("fewer instructions in one computation");
    for (Instruction& ins : comp.instructions) {
      const std::size_t n = ins.operands.size();
      ins.operands.bind(comp.instructions.data());
      for (std::size_t k = 0; k < n; ++k) {
        if (ins.operands.position(k) != Operands::kNoPosition) continue;  // resolved while parsing
        const std::size_t at = local.find(ins.operands[k], comp.instructions);
        if (at != NameIndex::npos) {
          ins.operands.refer(k, at);
        } else if (ins.operands.shape(k).type == PrimitiveType::kInvalid) {
          fail_line(ins.line, "operand '" + ins.operands[k] + "' of '" + ins.name + "' defined in computation '" +
                                  comp.name + "'");
        }
      }
      ins.operands.compact();
      use_constructed_shape(ins);
      if (ins.shape.type == PrimitiveType::kInvalid) {
        const std::string why = infer_shape(ins, module_);
        if (!why.empty()) {
          fail_line(ins.line, "a shape before the opcode of '" + ins.name + "' (XLA infers it for " + ins.opcode +
                                  " only with " + why + ")");
        }
      }
    }
  }

  // Instructions whose shape XLA's parser builds from the operands whatever the text says
  // (HloInstruction::CreateTuple, CreateSend, CreateRecvDone, ...), and constants, whose
  // literal keeps no packed element size (xla/literal.cc).
  static void use_constructed_shape(Instruction& ins) {
    const std::string_view op = ins.opcode;
    const OperandShapes& ops = ins.operand_shapes();
    auto all_known = [&] {
      return std::all_of(ops.begin(), ops.end(), [](const Shape& o) { return o.type != PrimitiveType::kInvalid; });
    };
    auto scalar = [](PrimitiveType t) {
      Shape r;
      r.type = t;
      return r;
    };
    if (op == "constant") {
      clear_element_size(ins.shape, 0);
    } else if (op == "tuple" && all_known()) {
      ins.shape = Shape{};
      ins.shape.type = PrimitiveType::kTuple;
      ins.shape.tuple = ops.to_vector();
    } else if (op == "send" && !ops.empty() && all_known()) {
      ins.shape = Shape{};
      ins.shape.type = PrimitiveType::kTuple;
      ins.shape.tuple = {ops[0], scalar(PrimitiveType::kU32), scalar(PrimitiveType::kToken)};
    } else if (op == "recv-done" && !ops.empty() && ops[0].is_tuple() && !ops[0].tuple.empty()) {
      ins.shape = Shape{};
      ins.shape.type = PrimitiveType::kTuple;
      ins.shape.tuple = {ops[0].tuple[0], scalar(PrimitiveType::kToken)};
    } else if (op == "send-done" || op == "after-all") {
      ins.shape = scalar(PrimitiveType::kToken);
    } else if (op == "replica-id" || op == "partition-id") {
      ins.shape = scalar(PrimitiveType::kU32);
    } else if (op == "add-dependency" && !ops.empty() && ops[0].type != PrimitiveType::kInvalid) {
      ins.shape = ops[0];
    }
  }

  static void clear_element_size(Shape& s, int depth) {
    s.element_size_in_bits = 0;
    if (depth < 64) {
      for (Shape& e : s.tuple) clear_element_size(e, depth + 1);
    }
  }

  // ---- instructions -----------------------------------------------------------------------------
  // `ROOT? name = shape? opcode(operands) (, attribute=value)*`. Returns the name (a view into
  // the text).
  std::string_view parse_instruction(Instruction& ins) {
    ins.line = line_of(pos_);
    ins.is_root = at_word("ROOT");
    if (ins.is_root) {
      pos_ += 4;
      skip_ws();
    }
    const std::string_view name = name_token("an instruction name");
    ins.name = std::string(name);
    skip_ws();
    expect_char('=', "'=' after the instruction name");
    skip_ws();
    if (at_shape_start()) {
      parse_shape(ins.shape);
      skip_ws();
    } else if (next_char_after(ident_end(pos_)) == '[') {
      fail("a shape (element type such as f32, bf16, s32, pred, token)");
    }
    parse_opcode_and_operands(ins);
    parse_attributes(ins);
    return name;
  }

  // The opcode and what follows it up to the attributes: operands, a parameter number or a
  // constant's literal.
  void parse_opcode_and_operands(Instruction& ins) {
    const std::size_t op_start = pos_;
    pos_ = ident_end(pos_);
    if (pos_ == op_start) fail("an opcode");
    ins.opcode = std::string(s_.substr(op_start, pos_ - op_start));
    skip_ws();
    if (peek() != '(') fail("'(' after the opcode");
    if (ins.opcode == "constant") {
      const std::size_t lit = pos_;
      skip_balanced_parens();
      if (pos_ - lit <= 66) ins.detail().attributes["literal"] = one_line(trim(s_.substr(lit + 1, pos_ - lit - 2)));
    } else if (ins.opcode == "parameter") {
      ++pos_;
      skip_ws();
      ins.parameter_number = int_token("a parameter number");
      skip_ws();
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
        skip_ws();
      }
      const std::size_t word_start = pos_;
      if (peek() == '%') ++pos_;
      const std::size_t ident_start = pos_;
      pos_ = ident_end(pos_);
      if (pos_ == ident_start) fail("an operand name");
      std::size_t word_end = pos_;
      skip_ws();
      if (peek() == '(' && s_[word_start] != '%') {
        // An operand written as an instruction in place (`pad(s8[4] parameter(0), s8[]
        // constant(0))`, `add(add(a, b), c)`): an instruction of its own before this one,
        // named "<user>/<operand position>" (XLA: no attributes on it).
        if (nested_depth_ >= 32) fail("operands written in place less deeply nested");
        Instruction nested;
        nested.name = ins.name + "/" + std::to_string(ins.operands.size());
        nested.line = line_of(word_start);
        nested.shape = std::move(inline_shape);
        pos_ = word_start;
        ++nested_depth_;
        parse_opcode_and_operands(nested);
        --nested_depth_;
        ins.operands.push_back(nested.name, nested.shape);
        nested_.push_back(std::move(nested));
        skip_ws();
      } else {
        if (peek() == '#' && pos_ == word_end) {
          // XLA's tuple-element shorthand (2025 on): `%t#2` is element 2 of tuple-shaped %t,
          // printed in place of a get-tuple-element instruction. Kept as the name "t#2";
          // add_tuple_element_instructions adds the get-tuple-element it stands for.
          ++pos_;
          const std::size_t digits = pos_;
          while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
          if (pos_ == digits) {
            fail("a tuple index after '#' in operand '" + std::string(s_.substr(ident_start, word_end - ident_start)) +
                 "'");
          }
          word_end = pos_;
          skip_ws();
        }
        // An operand defined above in this computation (XLA prints operands before their
        // users) is its position from here on; any other keeps its name until the
        // computation's end resolves it (resolve_operands).
        const std::string_view operand = s_.substr(ident_start, word_end - ident_start);
        const std::size_t at = current_ != nullptr ? current_->position(operand) : NameIndex::npos;
        if (at != NameIndex::npos) {
          ins.operands.push_back(at);
        } else {
          ins.operands.push_back(std::string(operand), std::move(inline_shape));
        }
      }
      if (ins.operands.size() > 100000) fail("fewer operands");
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect_char(')', "',' or ')' in the operand list");
      return;
    }
  }

  void parse_attributes(Instruction& ins) {
    parse_attribute_list({"an attribute name", "attribute", true}, [&](std::string_view key) {
      skip_ws();
      if (is_computation_attribute(key)) {
        parse_computation_attribute(ins, key);
        return;
      }
      const std::size_t value_pos = pos_;
      std::string_view value;
      if (key == "literal" && peek() != '(' && at_shape_start()) {
        // A literal attribute (custom-call's `literal=s32[2]{0} {1, 2}`): a shape, then its value.
        Shape literal_shape;
        parse_shape(literal_shape);
        scan_value();
        value = s_.substr(value_pos, pos_ - value_pos);
      } else {
        value = scan_value();
        // XLA's mesh-axes replica groups (`replica_groups=mesh['x'=4,'y'=2] {'x'}`): the mesh,
        // a blank, then the axes the groups run over; one value.
        if (value.size() > 5 && value.substr(0, 5) == "mesh[" && value.back() == ']' && next_char_after(pos_) == '{') {
          skip_ws();
          scan_value();
          value = s_.substr(value_pos, pos_ - value_pos);
        }
      }
      if (value.empty()) fail_at(value_pos, "a value for attribute '" + std::string(key) + "'");
      interpret_attribute(ins, key, value, value_pos);
    });
  }

  // calls=, to_apply=, body=, ...: a computation's name, a braced list of them, or a
  // computation written in place (`calls={ p = f32[] parameter(0) ... }`, XLA's nested
  // computations), which becomes a computation of its own named "<instruction>.<attribute>".
  void parse_computation_attribute(Instruction& ins, std::string_view key) {
    std::string text;
    auto one = [&](int item) {
      skip_ws();
      if (peek() == '{') {
        const std::string name = parse_computation_in_place(ins, key, item);
        ins.detail().called_computations.push_back(name);
        text += "%" + name;
        return;
      }
      if (peek() == '%') ++pos_;
      const std::size_t start = pos_;
      pos_ = ident_end(pos_);
      if (pos_ == start) fail("a computation name for " + std::string(key) + "=");
      const std::string_view n = s_.substr(start, pos_ - start);
      ins.detail().called_computations.emplace_back(n);
      text += "%";
      text += n;
    };
    if (peek() == '{' && !at_instruction_list()) {
      ++pos_;
      text = "{";
      skip_ws();
      int item = 0;
      if (peek() != '}') {
        while (true) {
          if (item > 0) text += ", ";
          one(item++);
          skip_ws();
          if (peek() == ',') {
            ++pos_;
            continue;
          }
          break;
        }
      }
      expect_char('}', "'}' closing the list of computations");
      text += "}";
    } else {
      one(-1);
    }
    ins.detail().attributes[std::string(key)] = std::move(text);
  }

  // At '{': does an instruction list follow (`name =` or `ROOT`)?
  bool at_instruction_list() {
    const std::size_t save = pos_;
    ++pos_;
    skip_ws();
    bool list = at_word("ROOT");
    if (!list) {
      if (peek() == '%') ++pos_;
      const std::size_t e = ident_end(pos_);
      if (e > pos_) {
        pos_ = e;
        skip_ws();
        list = peek() == '=';
      }
    }
    pos_ = save;
    return list;
  }

  std::string parse_computation_in_place(const Instruction& ins, std::string_view key, int item) {
    Computation comp;
    comp.name = ins.name + "." + std::string(key) + (item >= 0 ? "." + std::to_string(item) : "");
    for (int k = 1; module_.index.count(comp.name) != 0 && k < 1000; ++k) comp.name += "_";
    ++pos_;  // '{'
    // The enclosing instruction's operands written in place wait in nested_.
    std::vector<Instruction> outer_nested;
    outer_nested.swap(nested_);
    const int outer_depth = nested_depth_;
    nested_depth_ = 0;
    parse_instruction_list(comp);
    nested_.swap(outer_nested);
    nested_depth_ = outer_depth;
    std::string name = comp.name;
    add_computation(std::move(comp));
    return name;
  }

  void interpret_attribute(Instruction& ins, std::string_view key, std::string_view value, std::size_t value_pos) {
    if (key == "metadata") {
      parse_metadata(ins.detail().metadata, value, value_pos);
      return;
    }
    if (key == "kind") {
      ins.detail().fusion_kind = std::string(value);
    } else if (key == "custom_call_target") {
      ins.detail().custom_call_target = unquote(value);
    } else if (key == "backend_config") {
      ins.detail().backend_config = value.front() == '"' ? unquote(value) : std::string(value);
      read_known_trip_count(ins);
      return;
    }
    ins.detail().attributes.emplace(std::string(key), one_line(value));
  }

  static void read_known_trip_count(Instruction& ins) {
    const std::string& bc = ins.backend_config();
    const auto tc = bc.find("\"known_trip_count\"");
    if (tc == std::string::npos) return;
    const auto n = bc.find("\"n\"", tc);
    if (n == std::string::npos) return;
    // XLA writes the proto's JSON: "n":"5" (an int64 as a string) or "n":5. Anything else
    // ("-5", "1e308", "5x", a count beyond int64) leaves the trip count unknown, never a part
    // of it read as a count.
    std::size_t i = n + 3;
    const auto spaces = [&](std::size_t& k) {
      while (k < bc.size() && (bc[k] == ' ' || bc[k] == '\n' || bc[k] == '\t' || bc[k] == '\r')) ++k;
    };
    spaces(i);
    if (i >= bc.size() || bc[i] != ':') return;
    ++i;
    spaces(i);
    const bool quoted = i < bc.size() && bc[i] == '"';
    if (quoted) ++i;
    std::size_t j = i;
    while (j < bc.size() && is_digit(bc[j])) ++j;
    const std::size_t digits_end = j;
    if (quoted) {
      if (j >= bc.size() || bc[j] != '"') return;
      ++j;
    }
    spaces(j);
    if (j >= bc.size() || (bc[j] != ',' && bc[j] != '}')) return;
    int64_t v = 0;
    if (digits_end > i && parse_int(std::string_view(bc).substr(i, digits_end - i), v)) ins.known_trip_count = v;
  }

  // {op_type="..." op_name="..." source_file="..." source_line=N stack_frame_id=N ...}
  void parse_metadata(Metadata& md, std::string_view v, std::size_t value_pos) {
    if (v.size() < 2 || v.front() != '{' || v.back() != '}') fail_at(value_pos, "'{' starting metadata");
    std::size_t i = 1;
    const std::size_t end = v.size() - 1;
    while (i < end) {
      while (i < end && (is_space(v[i]) || v[i] == ',')) ++i;
      if (i >= end) break;
      const std::size_t k0 = i;
      while (i < end && v[i] != '=' && !is_space(v[i])) ++i;
      const std::string_view key = v.substr(k0, i - k0);
      if (i >= end || v[i] != '=') fail_at(value_pos + i, "'=' in metadata");
      ++i;
      const std::size_t v0 = i;
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
        while (i < end && !is_space(v[i]) && v[i] != ',') ++i;
      }
      const std::string_view val = v.substr(v0, i - v0);
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

  // ---- whole-module resolution ------------------------------------------------------------------
  void link_called_computations() {
    for (Computation& c : module_.computations) {
      for (Instruction& ins : c.instructions) {
        for (const std::string& callee : ins.called_computations()) {
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
        const Metadata& printed = ins.metadata();
        if (printed.stack_frame_id <= 0 || printed.stack_frame_id > n || !printed.source_file.empty()) continue;
        Metadata& md = ins.detail().metadata;
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

  Module module_;
  Computation* current_ = nullptr;   // the computation whose instructions are being read
  std::vector<Instruction> nested_;  // operands written in place in the instruction being parsed
  int nested_depth_ = 0;
  int computation_depth_ = 0;
  // Instructions the module's computations may still reserve ahead (its line count at first).
  std::size_t reserve_budget_;
  std::vector<std::string> file_names_;
  std::vector<std::string> function_names_;
  std::vector<Location> locations_;
  std::vector<Frame> frames_;
};

}  // namespace

Module parse_hlo_module(std::string_view text) { return HloParser(text).parse(); }

}  // namespace fpgaprof::hlo

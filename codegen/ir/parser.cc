// Recursive-descent parser for the textual graph IR (grammar in printer.cc).
#include "codegen/ir/parser.h"

#include <cctype>
#include <cmath>
#include <limits>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace tccd::ir {
namespace {

bool DTypeFromName(absl::string_view name, DType* out) {
  static constexpr std::pair<const char*, DType> kNames[] = {
      {"f32", DType::kF32}, {"f64", DType::kF64}, {"f16", DType::kF16}, {"bf16", DType::kBF16},
      {"i8", DType::kI8},   {"i16", DType::kI16}, {"i32", DType::kI32}, {"i64", DType::kI64},
      {"u8", DType::kU8},   {"b8", DType::kBool}, {"c64", DType::kC64}, {"c128", DType::kC128},
      {"c32", DType::kC32}, {"u16", DType::kU16}, {"u32", DType::kU32}, {"u64", DType::kU64}};
  for (const auto& [n, d] : kNames) {
    if (name == n) {
      *out = d;
      return true;
    }
  }
  return false;
}

class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

  absl::StatusOr<Graph> ParseGraph() {
    Graph graph;
    RETURN_IF_ERROR(ExpectWord("graph"));
    RETURN_IF_ERROR(Expect('('));
    if (!Consume(')')) {
      do {
        ASSIGN_OR_RETURN(ValueRef ref, ParseRef());
        if (!ref.is_input() || ref.output != static_cast<int>(graph.inputs.size()))
          return Error(absl::StrCat("expected input %a", graph.inputs.size()));
        RETURN_IF_ERROR(Expect(':'));
        ASSIGN_OR_RETURN(TensorType type, ParseType());
        graph.inputs.push_back(std::move(type));
      } while (Consume(','));
      RETURN_IF_ERROR(Expect(')'));
    }
    RETURN_IF_ERROR(Expect('{'));
    while (true) {
      SkipSpace();
      if (PeekWord() == "return") break;
      ASSIGN_OR_RETURN(ValueRef ref, ParseRef());
      if (ref.is_input() || ref.output != 0 || ref.node != static_cast<int>(graph.nodes.size()))
        return Error(absl::StrCat("expected node %", graph.nodes.size()));
      RETURN_IF_ERROR(Expect('='));
      ASSIGN_OR_RETURN(Node node, ParseNode());
      graph.nodes.push_back(std::move(node));
    }
    RETURN_IF_ERROR(ExpectWord("return"));
    RETURN_IF_ERROR(Expect('('));
    if (!Consume(')')) {
      do {
        ASSIGN_OR_RETURN(Arg a, ParseArg());
        graph.outputs.push_back(std::move(a));
      } while (Consume(','));
      RETURN_IF_ERROR(Expect(')'));
    }
    RETURN_IF_ERROR(Expect('}'));
    SkipSpace();
    if (pos_ != text_.size()) return Error("trailing text after graph");
    return graph;
  }

 private:
  absl::StatusOr<Node> ParseNode() {
    Node node;
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '_' || text_[pos_] == ':' || text_[pos_] == '.'))
      ++pos_;
    node.target = std::string(text_.substr(start, pos_ - start));
    if (node.target.empty()) return Error("expected an op target");
    RETURN_IF_ERROR(Expect('('));
    if (!Consume(')')) {
      do {
        SkipSpace();
        // A keyword argument is an identifier followed by '=' (no other arg starts that way).
        size_t save = pos_;
        absl::string_view word = ReadIdentifier();
        SkipSpace();
        if (!word.empty() && pos_ < text_.size() && text_[pos_] == '=') {
          ++pos_;
          ASSIGN_OR_RETURN(Arg a, ParseArg());
          node.kwargs.push_back({std::string(word), std::move(a)});
          continue;
        }
        pos_ = save;
        if (!node.kwargs.empty()) return Error("positional argument after keyword argument");
        ASSIGN_OR_RETURN(Arg a, ParseArg());
        node.args.push_back(std::move(a));
      } while (Consume(','));
      RETURN_IF_ERROR(Expect(')'));
    }
    RETURN_IF_ERROR(Expect('-'));
    RETURN_IF_ERROR(Expect('>'));
    if (Consume('(')) {
      if (!Consume(')')) {
        do {
          ASSIGN_OR_RETURN(TensorType t, ParseType());
          node.outputs.push_back(std::move(t));
        } while (Consume(','));
        RETURN_IF_ERROR(Expect(')'));
      }
    } else {
      ASSIGN_OR_RETURN(TensorType t, ParseType());
      node.outputs.push_back(std::move(t));
    }
    return node;
  }

  absl::StatusOr<TensorType> ParseType() {
    TensorType type;
    SkipSpace();
    absl::string_view name = ReadIdentifier();
    if (!DTypeFromName(name, &type.dtype)) return Error(absl::StrCat("unknown dtype '", name, "'"));
    RETURN_IF_ERROR(Expect('['));
    RETURN_IF_ERROR(ParseIntList(']', &type.sizes));
    RETURN_IF_ERROR(Expect('{'));
    RETURN_IF_ERROR(ParseIntList('}', &type.strides));
    if (Consume('+')) {
      ASSIGN_OR_RETURN(type.storage_offset, ParseInt());
    }
    RETURN_IF_ERROR(Expect('@'));
    absl::string_view device = ReadIdentifier();
    if (device == "cpu") {
      type.device = DeviceType::kCpu;
    } else if (device == "cuda") {
      type.device = DeviceType::kCuda;
    } else {
      return Error(absl::StrCat("unknown device '", device, "'"));
    }
    return type;
  }

  absl::Status ParseIntList(char close, std::vector<int64_t>* out) {
    if (Consume(close)) return absl::OkStatus();
    do {
      ASSIGN_OR_RETURN(int64_t v, ParseInt());
      out->push_back(v);
    } while (Consume(','));
    return Expect(close);
  }

  absl::StatusOr<int64_t> ParseInt() {
    SkipSpace();
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    int64_t v;
    if (!absl::SimpleAtoi(text_.substr(start, pos_ - start), &v))
      return Error("expected an integer");
    return v;
  }

  absl::StatusOr<ValueRef> ParseRef() {
    RETURN_IF_ERROR(Expect('%'));
    ValueRef ref;
    if (pos_ < text_.size() && text_[pos_] == 'a') {
      ++pos_;
      ref.node = ValueRef::kInput;
      ASSIGN_OR_RETURN(int64_t i, ParseInt());
      ref.output = static_cast<int>(i);
      return ref;
    }
    ASSIGN_OR_RETURN(int64_t n, ParseInt());
    ref.node = static_cast<int>(n);
    if (pos_ < text_.size() && text_[pos_] == '#') {
      ++pos_;
      ASSIGN_OR_RETURN(int64_t o, ParseInt());
      ref.output = static_cast<int>(o);
    }
    return ref;
  }

  // Lists nest at most this deep: as deep as a request's may (proto_convert.cc's ArgFromProto
  // takes values at depths 0 to 8, so lists at those depths), so every graph of a request still
  // round-trips; deeper text is refused instead of recursing until the stack overflows (an IR
  // text fuzzer finding: 2,611 open brackets).
  static constexpr int kMaxListDepth = 9;

  absl::StatusOr<Arg> ParseArg(int depth = 0) {
    SkipSpace();
    if (pos_ >= text_.size()) return Error("expected an argument");
    char c = text_[pos_];
    if (c == '%') {
      ASSIGN_OR_RETURN(ValueRef ref, ParseRef());
      return Arg{ref};
    }
    if (c == '[') {
      if (depth >= kMaxListDepth)
        return Error(absl::StrCat("lists nested more than ", kMaxListDepth, " deep"));
      ++pos_;
      ArgList list;
      if (!Consume(']')) {
        do {
          ASSIGN_OR_RETURN(Arg a, ParseArg(depth + 1));
          list.push_back(std::move(a));
        } while (Consume(','));
        RETURN_IF_ERROR(Expect(']'));
      }
      return Arg{std::move(list)};
    }
    if (c == '"') return ParseString();
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) return ParseNumber();
    absl::string_view word = ReadIdentifier();
    if (word == "None") return Arg{NoneArg{}};
    if (word == "true") return Arg{true};
    if (word == "false") return Arg{false};
    if (word == "nan") return Arg{std::numeric_limits<double>::quiet_NaN()};
    if (word == "inf") return Arg{std::numeric_limits<double>::infinity()};
    DType dtype;
    if (DTypeFromName(word, &dtype)) return Arg{dtype};
    if (word == "device") {
      RETURN_IF_ERROR(Expect('('));
      absl::string_view dev = ReadIdentifier();
      RETURN_IF_ERROR(Expect(')'));
      if (dev == "cpu") return Arg{DeviceType::kCpu};
      if (dev == "cuda") return Arg{DeviceType::kCuda};
      return Error(absl::StrCat("unknown device '", dev, "'"));
    }
    if (word == "layout" || word == "memory_format") {
      RETURN_IF_ERROR(Expect('('));
      ASSIGN_OR_RETURN(int64_t v, ParseInt());
      RETURN_IF_ERROR(Expect(')'));
      if (word == "layout") return Arg{LayoutArg{static_cast<int>(v)}};
      return Arg{MemoryFormatArg{static_cast<int>(v)}};
    }
    return Error(
        absl::StrCat("unexpected '", word.empty() ? std::string(1, c) : std::string(word), "'"));
  }

  absl::StatusOr<Arg> ParseNumber() {
    size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    if (text_.substr(pos_, 3) == "inf") {
      pos_ += 3;
      return Arg{-std::numeric_limits<double>::infinity()};
    }
    bool is_float = false;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (std::isdigit(static_cast<unsigned char>(c))) {
        ++pos_;
      } else if (c == '.' || c == 'e' || c == 'E' ||
                 ((c == '+' || c == '-') && (text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'E'))) {
        is_float = true;
        ++pos_;
      } else {
        break;
      }
    }
    absl::string_view token = text_.substr(start, pos_ - start);
    if (is_float) {
      double d;
      if (!absl::SimpleAtod(token, &d)) return Error(absl::StrCat("bad float '", token, "'"));
      return Arg{d};
    }
    int64_t i;
    if (!absl::SimpleAtoi(token, &i)) return Error(absl::StrCat("bad integer '", token, "'"));
    return Arg{i};
  }

  absl::StatusOr<Arg> ParseString() {
    ++pos_;  // opening quote
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\\') ++pos_;
      ++pos_;
    }
    if (pos_ >= text_.size()) return Error("unterminated string");
    std::string unescaped;
    std::string error;
    if (!absl::CUnescape(text_.substr(start, pos_ - start), &unescaped, &error))
      return Error(absl::StrCat("bad string escape: ", error));
    ++pos_;
    return Arg{std::move(unescaped)};
  }

  absl::string_view ReadIdentifier() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    return text_.substr(start, pos_ - start);
  }

  absl::string_view PeekWord() {
    size_t save = pos_;
    absl::string_view w = ReadIdentifier();
    pos_ = save;
    return w;
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  absl::Status Expect(char c) {
    if (Consume(c)) return absl::OkStatus();
    return Error(absl::StrCat("expected '", std::string(1, c), "'"));
  }

  absl::Status ExpectWord(absl::string_view word) {
    if (ReadIdentifier() == word) return absl::OkStatus();
    return Error(absl::StrCat("expected '", word, "'"));
  }

  absl::Status Error(absl::string_view message) const {
    int line = 1, column = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return absl::InvalidArgumentError(
        absl::StrCat("graph IR parse error at ", line, ":", column, ": ", message));
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<Graph> ParseGraph(absl::string_view text) { return Parser(text).ParseGraph(); }

}  // namespace tccd::ir

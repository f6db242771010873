// Line-oriented parser for the schedule IR (grammar in printer.cc). Types, extern arguments and
// outputs have the graph IR's syntax, so they are read by the graph IR's own parser (wrapped in
// a one-node graph) instead of by a second copy of it.
#include "codegen/schedule/parser.h"

#include <cctype>
#include <map>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "codegen/ir/parser.h"
#include "base/status_macros.h"

namespace tccd::schedule {
namespace {

// An attribute value: an int, a float, a string, a list or a record (KernelInfo, params).
struct Attr {
  enum class Kind { kInt, kFloat, kString, kList, kRecord } kind = Kind::kInt;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<Attr> items;
  std::map<std::string, Attr> fields;
  std::vector<std::string> order;  // field names as written
};

// Reads the non-graph-IR parts of one step line.
class Cursor {
 public:
  explicit Cursor(absl::string_view text) : text_(text) {}

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= text_.size();
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
    return absl::InvalidArgumentError(
        absl::StrCat("expected '", std::string(1, c), "' at column ", pos_ + 1));
  }
  absl::string_view Word() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    return text_.substr(start, pos_ - start);
  }
  absl::string_view Rest() {
    SkipSpace();
    return text_.substr(pos_);
  }
  absl::StatusOr<int64_t> Int() {
    SkipSpace();
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    int64_t v;
    if (!absl::SimpleAtoi(text_.substr(start, pos_ - start), &v))
      return absl::InvalidArgumentError(absl::StrCat("expected an integer at column ", start + 1));
    return v;
  }
  // '%' N, or '_' (kUnused) where `allow_unused`.
  absl::StatusOr<ValueId> Value(bool allow_unused) {
    if (allow_unused && Consume('_')) return kUnused;
    RETURN_IF_ERROR(Expect('%'));
    ASSIGN_OR_RETURN(int64_t v, Int());
    if (v < 0) return absl::InvalidArgumentError("negative value id");
    return static_cast<ValueId>(v);
  }
  // '(' [%N (',' %N)*] ')'
  absl::StatusOr<std::vector<ValueId>> Ids() {
    std::vector<ValueId> ids;
    RETURN_IF_ERROR(Expect('('));
    if (Consume(')')) return ids;
    do {
      ASSIGN_OR_RETURN(ValueId v, Value(/*allow_unused=*/false));
      ids.push_back(v);
    } while (Consume(','));
    RETURN_IF_ERROR(Expect(')'));
    return ids;
  }
  absl::StatusOr<Attr> ParseAttr(int depth = 0) {
    if (depth > 4) return absl::InvalidArgumentError("attributes nested too deeply");
    SkipSpace();
    Attr a;
    if (Consume('[')) {
      a.kind = Attr::Kind::kList;
      if (Consume(']')) return a;
      do {
        ASSIGN_OR_RETURN(Attr item, ParseAttr(depth + 1));
        a.items.push_back(std::move(item));
      } while (Consume(','));
      RETURN_IF_ERROR(Expect(']'));
      return a;
    }
    if (Consume('{')) {
      a.kind = Attr::Kind::kRecord;
      if (Consume('}')) return a;
      do {
        std::string name(Word());
        RETURN_IF_ERROR(Expect('='));
        ASSIGN_OR_RETURN(Attr value, ParseAttr(depth + 1));
        if (name.empty() || !a.fields.emplace(name, std::move(value)).second)
          return absl::InvalidArgumentError(absl::StrCat("bad or repeated field '", name, "'"));
        a.order.push_back(name);
      } while (Consume(','));
      RETURN_IF_ERROR(Expect('}'));
      return a;
    }
    if (Consume('"')) {
      a.kind = Attr::Kind::kString;
      size_t start = pos_;
      while (pos_ < text_.size() && text_[pos_] != '"') pos_ += text_[pos_] == '\\' ? 2 : 1;
      if (pos_ >= text_.size()) return absl::InvalidArgumentError("unterminated string");
      std::string error;
      if (!absl::CUnescape(text_.substr(start, pos_ - start), &a.s, &error))
        return absl::InvalidArgumentError(absl::StrCat("bad string escape: ", error));
      ++pos_;
      return a;
    }
    // A number: an int unless it has a '.' or an exponent (or is nan/inf, as floats print).
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.' ||
            ((text_[pos_] == '+' || text_[pos_] == '-') && (text_[pos_ - 1] == 'e'))))
      ++pos_;
    absl::string_view token = text_.substr(start, pos_ - start);
    if (absl::SimpleAtoi(token, &a.i)) return a;
    a.kind = Attr::Kind::kFloat;
    if (!absl::SimpleAtod(token, &a.f))
      return absl::InvalidArgumentError(absl::StrCat("expected a number at column ", start + 1));
    return a;
  }
  // name '=' attr ... up to the end of the line, or up to the word `stop` when not empty.
  absl::StatusOr<std::map<std::string, Attr>> Attrs(absl::string_view stop = "") {
    std::map<std::string, Attr> attrs;
    while (!AtEnd()) {
      const size_t save = pos_;
      std::string name(Word());
      if (!stop.empty() && name == stop) {
        pos_ = save;
        break;
      }
      RETURN_IF_ERROR(Expect('='));
      ASSIGN_OR_RETURN(Attr value, ParseAttr());
      if (name.empty() || !attrs.emplace(name, std::move(value)).second)
        return absl::InvalidArgumentError(absl::StrCat("bad or repeated attribute '", name, "'"));
    }
    return attrs;
  }

 private:
  absl::string_view text_;
  size_t pos_ = 0;
};

// Typed reads of attributes; every attribute named in `attrs` must be read exactly once.
class AttrReader {
 public:
  explicit AttrReader(std::map<std::string, Attr> attrs) : attrs_(std::move(attrs)) {}

  absl::StatusOr<Attr> Take(const std::string& name, Attr::Kind kind, bool optional = false) {
    auto it = attrs_.find(name);
    if (it == attrs_.end()) {
      if (optional) return Attr{.kind = kind};
      return absl::InvalidArgumentError(absl::StrCat("missing attribute '", name, "'"));
    }
    if (it->second.kind != kind)
      return absl::InvalidArgumentError(absl::StrCat("attribute '", name, "' has the wrong kind"));
    Attr a = std::move(it->second);
    attrs_.erase(it);
    return a;
  }
  absl::StatusOr<std::string> String(const std::string& name) {
    ASSIGN_OR_RETURN(Attr a, Take(name, Attr::Kind::kString));
    return a.s;
  }
  absl::StatusOr<int64_t> Int(const std::string& name, bool optional = false) {
    ASSIGN_OR_RETURN(Attr a, Take(name, Attr::Kind::kInt, optional));
    return a.i;
  }
  absl::StatusOr<std::vector<int64_t>> Ints(const std::string& name, bool optional = false) {
    ASSIGN_OR_RETURN(Attr a, Take(name, Attr::Kind::kList, optional));
    std::vector<int64_t> out;
    for (const Attr& item : a.items) {
      if (item.kind != Attr::Kind::kInt)
        return absl::InvalidArgumentError(absl::StrCat("'", name, "' holds a non-integer"));
      out.push_back(item.i);
    }
    return out;
  }
  absl::StatusOr<std::vector<std::string>> Strings(const std::string& name) {
    ASSIGN_OR_RETURN(Attr a, Take(name, Attr::Kind::kList));
    std::vector<std::string> out;
    for (const Attr& item : a.items) {
      if (item.kind != Attr::Kind::kString)
        return absl::InvalidArgumentError(absl::StrCat("'", name, "' holds a non-string"));
      out.push_back(item.s);
    }
    return out;
  }
  // A record of numbers, in the order written.
  absl::StatusOr<std::vector<std::pair<std::string, double>>> Numbers(const std::string& name) {
    ASSIGN_OR_RETURN(Attr a, Take(name, Attr::Kind::kRecord));
    std::vector<std::pair<std::string, double>> out;
    for (const std::string& field : a.order) {
      const Attr& v = a.fields.at(field);
      if (v.kind == Attr::Kind::kInt) {
        out.push_back({field, static_cast<double>(v.i)});
      } else if (v.kind == Attr::Kind::kFloat) {
        out.push_back({field, v.f});
      } else {
        return absl::InvalidArgumentError(absl::StrCat("'", name, ".", field, "' is not a number"));
      }
    }
    return out;
  }
  absl::StatusOr<NativeEntry> Entry() {
    NativeEntry e;
    ASSIGN_OR_RETURN(e.artifact, String("artifact"));
    ASSIGN_OR_RETURN(e.symbol, String("symbol"));
    ASSIGN_OR_RETURN(e.abi, String("abi"));
    return e;
  }
  absl::StatusOr<std::vector<KernelInfo>> Kernels() {
    ASSIGN_OR_RETURN(Attr list, Take("kernels", Attr::Kind::kList));
    std::vector<KernelInfo> kernels;
    for (Attr& item : list.items) {
      if (item.kind != Attr::Kind::kRecord)
        return absl::InvalidArgumentError("'kernels' holds a non-record");
      AttrReader r(std::move(item.fields));
      KernelInfo k;
      ASSIGN_OR_RETURN(k.name, r.String("name"));
      ASSIGN_OR_RETURN(k.kind, r.String("kind"));
      ASSIGN_OR_RETURN(k.ops, r.Strings("ops"));
      ASSIGN_OR_RETURN(k.grid, r.Ints("grid", /*optional=*/true));
      ASSIGN_OR_RETURN(k.block, r.Ints("block", /*optional=*/true));
      ASSIGN_OR_RETURN(k.shared_mem_bytes, r.Int("shared_mem", /*optional=*/true));
      ASSIGN_OR_RETURN(k.shape, r.Ints("shape"));
      RETURN_IF_ERROR(r.Done());
      kernels.push_back(std::move(k));
    }
    return kernels;
  }
  absl::Status Done() const {
    if (attrs_.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("unknown attribute '", attrs_.begin()->first, "'"));
  }

 private:
  std::map<std::string, Attr> attrs_;
};

absl::StatusOr<ir::TensorType> ParseType(absl::string_view text) {
  ASSIGN_OR_RETURN(ir::Graph g,
                   ir::ParseGraph(absl::StrCat("graph(%a0: ", text, ") {\n  return ()\n}")));
  return g.inputs[0];
}

// target(args) in the graph IR's syntax: one node of a graph.
absl::StatusOr<ExternOp> ParseOp(absl::string_view text) {
  ASSIGN_OR_RETURN(ir::Graph g, ir::ParseGraph(absl::StrCat("graph() {\n  %0 = ", text,
                                                            " -> ()\n  return ()\n}")));
  return ExternOp{g.nodes[0].target, std::move(g.nodes[0].args), std::move(g.nodes[0].kwargs)};
}

absl::StatusOr<Step> ParseStep(absl::string_view line) {
  Step step;
  Cursor c(line);
  c.SkipSpace();
  if (!line.empty() && (line[0] == '%' || line[0] == '_')) {
    do {
      ASSIGN_OR_RETURN(ValueId v, c.Value(/*allow_unused=*/true));
      step.outputs.push_back(v);
    } while (c.Consume(','));
    RETURN_IF_ERROR(c.Expect('='));
  }
  absl::string_view op = c.Word();
  if (op == "extern") {
    ASSIGN_OR_RETURN(step.op, ParseOp(c.Rest()));
    return step;
  }
  if (op == "library") {
    LibraryCall l;
    l.function = std::string(c.Word());
    if (l.function.empty()) return absl::InvalidArgumentError("expected a library function");
    ASSIGN_OR_RETURN(l.operands, c.Ids());
    ASSIGN_OR_RETURN(auto attrs, c.Attrs("of"));
    AttrReader r(std::move(attrs));
    ASSIGN_OR_RETURN(l.name, r.String("name"));
    ASSIGN_OR_RETURN(l.params, r.Numbers("params"));
    RETURN_IF_ERROR(r.Done());
    if (c.Word() != "of") return absl::InvalidArgumentError("expected 'of' and the op");
    ASSIGN_OR_RETURN(l.op, ParseOp(c.Rest()));
    step.op = std::move(l);
    return step;
  }
  if (op == "alias") {
    ASSIGN_OR_RETURN(std::vector<ValueId> base, c.Ids());
    if (base.size() != 1) return absl::InvalidArgumentError("alias takes one value");
    step.op = Alias{base[0]};
  } else if (op == "release") {
    ASSIGN_OR_RETURN(std::vector<ValueId> values, c.Ids());
    if (!step.outputs.empty()) return absl::InvalidArgumentError("release defines no values");
    step.op = Release{std::move(values)};
  } else if (op == "kernel") {
    KernelLaunch k;
    ASSIGN_OR_RETURN(k.inputs, c.Ids());
    ASSIGN_OR_RETURN(auto attrs, c.Attrs());
    AttrReader r(std::move(attrs));
    ASSIGN_OR_RETURN(k.entry, r.Entry());
    ASSIGN_OR_RETURN(k.shape, r.Ints("shape"));
    ASSIGN_OR_RETURN(k.expected_strides, r.Ints("strides"));
    ASSIGN_OR_RETURN(k.kernels, r.Kernels());
    ASSIGN_OR_RETURN(std::vector<int64_t> into, r.Ints("into", /*optional=*/true));
    k.write_into.assign(into.begin(), into.end());
    RETURN_IF_ERROR(r.Done());
    step.op = std::move(k);
    return step;
  } else if (op == "segment") {
    Segment s;
    ASSIGN_OR_RETURN(s.inputs, c.Ids());
    ASSIGN_OR_RETURN(auto attrs, c.Attrs());
    AttrReader r(std::move(attrs));
    ASSIGN_OR_RETURN(s.entry, r.Entry());
    ASSIGN_OR_RETURN(s.workspace_bytes, r.Int("workspace"));
    ASSIGN_OR_RETURN(s.kernels, r.Kernels());
    ASSIGN_OR_RETURN(std::vector<int64_t> into, r.Ints("into", /*optional=*/true));
    s.write_into.assign(into.begin(), into.end());
    RETURN_IF_ERROR(r.Done());
    step.op = std::move(s);
    return step;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown step '", op, "'"));
  }
  if (!c.AtEnd()) return absl::InvalidArgumentError("trailing text");
  return step;
}

absl::Status LineError(int line, const absl::Status& status) {
  return absl::InvalidArgumentError(
      absl::StrCat("schedule IR parse error at line ", line, ": ", status.message()));
}

}  // namespace

absl::StatusOr<Schedule> ParseSchedule(absl::string_view text) {
  Schedule schedule;
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  size_t i = 0;
  auto next = [&]() -> absl::string_view {
    while (i < lines.size() && absl::StripAsciiWhitespace(lines[i]).empty()) ++i;
    return i < lines.size() ? absl::StripAsciiWhitespace(lines[i++]) : absl::string_view();
  };
  absl::string_view line = next();
  {
    Cursor c(line);
    if (c.Word() != "schedule" || !c.Consume('(') || c.Word() != "inputs" || !c.Consume('='))
      return LineError(i, absl::InvalidArgumentError("expected 'schedule(inputs=N) {'"));
    absl::StatusOr<int64_t> n = c.Int();
    if (!n.ok() || *n < 0 || !c.Consume(')') || !c.Consume('{') || !c.AtEnd())
      return LineError(i, absl::InvalidArgumentError("expected 'schedule(inputs=N) {'"));
    schedule.num_inputs = static_cast<int>(*n);
  }
  while (true) {
    line = next();
    if (line.empty()) return LineError(i, absl::InvalidArgumentError("missing 'return'"));
    const int at = static_cast<int>(i);
    if (absl::StartsWith(line, "return")) {
      absl::StatusOr<ir::Graph> g = ir::ParseGraph(absl::StrCat("graph() {\n  ", line, "\n}"));
      if (!g.ok()) return LineError(at, g.status());
      schedule.outputs = std::move(g->outputs);
      break;
    }
    // A declaration "%N: type" (the ':' comes before any '=') or a step.
    const size_t equals = line.find('=');
    if (line[0] == '%' && line.find(':') != absl::string_view::npos &&
        (equals == absl::string_view::npos || line.find(':') < equals)) {
      size_t c = line.find(':');
      int id;
      if (!absl::SimpleAtoi(line.substr(1, c - 1), &id) ||
          id != static_cast<int>(schedule.values.size()))
        return LineError(at, absl::InvalidArgumentError(absl::StrCat("expected declaration of %",
                                                                     schedule.values.size())));
      if (!schedule.steps.empty())
        return LineError(at, absl::InvalidArgumentError("declaration after the first step"));
      absl::StatusOr<ir::TensorType> type = ParseType(line.substr(c + 1));
      if (!type.ok()) return LineError(at, type.status());
      schedule.values.push_back(*std::move(type));
      continue;
    }
    absl::StatusOr<Step> step = ParseStep(line);
    if (!step.ok()) return LineError(at, step.status());
    schedule.steps.push_back(*std::move(step));
  }
  if (next() != "}") return LineError(i, absl::InvalidArgumentError("expected '}'"));
  if (!next().empty())
    return LineError(i, absl::InvalidArgumentError("trailing text after the schedule"));
  if (schedule.num_inputs > static_cast<int>(schedule.values.size()))
    return absl::InvalidArgumentError("schedule declares fewer values than inputs");
  return schedule;
}

}  // namespace tccd::schedule

// Parser, printer and evaluator of symbolic size expressions; see sym_expr.h.
#include "codegen/ir/sym_expr.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace tccd::ir {
namespace {

using Kind = SymExpr::Kind;

SymExpr Const(int64_t v) { return SymExpr{Kind::kConst, v, {}}; }

// Python's floor division and modulo (Dynamo's FloorDiv/Mod follow Python).
int64_t FloorDivide(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t PyMod(int64_t a, int64_t b) { return a - FloorDivide(a, b) * b; }

// Recursive descent over the grammar in sym_expr.h, with the usual precedence:
//   sum := product (('+' | '-') product)*
//   product := unary (('*' | '//' | '%') unary)*
//   unary := '-' unary | power
//   power := atom ('**' unary)?
//   atom := integer | sN | '(' sum ')' | Name '(' sum (',' sum)* ')'
class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

  absl::StatusOr<SymExpr> Parse() {
    ASSIGN_OR_RETURN(SymExpr e, Sum(0));
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text");
    return e;
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("symbolic expression '", text_.substr(0, 96),
                                                   "': ", what, " at offset ", pos_));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool Eat(absl::string_view token) {
    SkipSpace();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }

  absl::StatusOr<SymExpr> Sum(int depth) {
    if (depth > kMaxSymExprDepth) return Error("nested too deeply");
    ASSIGN_OR_RETURN(SymExpr first, Product(depth));
    std::vector<SymExpr> terms{std::move(first)};
    while (true) {
      if (Eat("+")) {
        ASSIGN_OR_RETURN(SymExpr t, Product(depth));
        terms.push_back(std::move(t));
      } else if (Eat("-")) {
        ASSIGN_OR_RETURN(SymExpr t, Product(depth));
        terms.push_back(Fold(SymExpr{Kind::kMul, 0, {Const(-1), std::move(t)}}));
      } else {
        break;
      }
    }
    if (terms.size() == 1) return std::move(terms[0]);
    return Fold(SymExpr{Kind::kAdd, 0, std::move(terms)});
  }

  absl::StatusOr<SymExpr> Product(int depth) {
    ASSIGN_OR_RETURN(SymExpr e, Unary(depth));
    while (true) {
      SkipSpace();
      if (Eat("**")) {  // only reachable after a unary minus bound tighter; keep it an error
        return Error("'**' after a unary minus needs parentheses");
      }
      Kind kind;
      if (Eat("//")) {
        kind = Kind::kFloorDiv;
      } else if (Eat("*")) {
        kind = Kind::kMul;
      } else if (Eat("%")) {
        kind = Kind::kMod;
      } else {
        break;
      }
      ASSIGN_OR_RETURN(SymExpr rhs, Unary(depth));
      if (kind == Kind::kMul && e.kind == Kind::kMul) {
        e.operands.push_back(std::move(rhs));
        e = Fold(std::move(e));
      } else {
        e = Fold(SymExpr{kind, 0, {std::move(e), std::move(rhs)}});
      }
    }
    return e;
  }

  absl::StatusOr<SymExpr> Unary(int depth) {
    if (depth > kMaxSymExprDepth) return Error("nested too deeply");
    if (Eat("-")) {
      ASSIGN_OR_RETURN(SymExpr e, Unary(depth + 1));
      return Fold(SymExpr{Kind::kMul, 0, {Const(-1), std::move(e)}});
    }
    ASSIGN_OR_RETURN(SymExpr base, Atom(depth));
    if (Eat("**")) {
      ASSIGN_OR_RETURN(SymExpr exponent, Unary(depth + 1));
      if (!exponent.IsConst() || exponent.value < 0 || exponent.value > 64)
        return Error("exponent must be a constant from 0 to 64");
      return Fold(SymExpr{Kind::kPow, 0, {std::move(base), std::move(exponent)}});
    }
    return base;
  }

  absl::StatusOr<SymExpr> Atom(int depth) {
    SkipSpace();
    if (pos_ >= text_.size()) return Error("expression ends early");
    char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t v = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text_[pos_] - '0', &v))
          return Error("integer out of range");
        ++pos_;
      }
      return Const(v);
    }
    if (c == '(') {
      ++pos_;
      ASSIGN_OR_RETURN(SymExpr e, Sum(depth + 1));
      if (!Eat(")")) return Error("expected ')'");
      return e;
    }
    if (!std::isalpha(static_cast<unsigned char>(c))) return Error("unexpected character");
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    absl::string_view name = text_.substr(start, pos_ - start);
    if (name.size() >= 2 && name[0] == 's' && std::all_of(name.begin() + 1, name.end(), [](char d) {
          return std::isdigit(static_cast<unsigned char>(d));
        })) {
      if (name.size() > 3) return Error("symbol index out of range");
      int index = std::stoi(std::string(name.substr(1)));
      if (index >= kMaxSymbols) return Error(absl::StrCat("symbol index above s", kMaxSymbols - 1));
      return SymExpr{Kind::kSymbol, index, {}};
    }
    Kind kind;
    size_t min_args = 2, max_args = 2;
    if (name == "FloorDiv" || name == "CleanDiv") {
      kind = Kind::kFloorDiv;
    } else if (name == "Mod" || name == "PythonMod") {
      kind = Kind::kMod;
    } else if (name == "Max" || name == "Min") {
      kind = name == "Max" ? Kind::kMax : Kind::kMin;
      max_args = 16;
    } else {
      return Error(absl::StrCat("unknown name '", name.substr(0, 32), "'"));
    }
    if (!Eat("(")) return Error("expected '('");
    std::vector<SymExpr> args;
    do {
      ASSIGN_OR_RETURN(SymExpr a, Sum(depth + 1));
      args.push_back(std::move(a));
    } while (args.size() < max_args && Eat(","));
    if (!Eat(")")) return Error("expected ')'");
    if (args.size() < min_args)
      return Error(absl::StrCat(name, " takes at least ", min_args, " arguments"));
    return Fold(SymExpr{kind, 0, std::move(args)});
  }

  // Folds an operation whose operands are all constants into one constant (when its value is
  // defined and fits); anything else stays as written. Flattens nested sums.
  static SymExpr Fold(SymExpr e) {
    if (e.kind == Kind::kAdd) {
      std::vector<SymExpr> flat;
      for (SymExpr& o : e.operands) {
        if (o.kind == Kind::kAdd) {
          for (SymExpr& inner : o.operands) flat.push_back(std::move(inner));
        } else {
          flat.push_back(std::move(o));
        }
      }
      e.operands = std::move(flat);
    }
    for (const SymExpr& o : e.operands)
      if (!o.IsConst()) return e;
    absl::StatusOr<int64_t> v = EvalSymExpr(e, {});
    return v.ok() ? Const(*v) : e;
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

void Print(const SymExpr& e, std::string& out) {
  auto list = [&](absl::string_view open, absl::string_view sep, absl::string_view close) {
    absl::StrAppend(&out, open);
    for (size_t i = 0; i < e.operands.size(); ++i) {
      if (i) absl::StrAppend(&out, sep);
      Print(e.operands[i], out);
    }
    absl::StrAppend(&out, close);
  };
  switch (e.kind) {
    case Kind::kConst:
      absl::StrAppend(&out, e.value);
      return;
    case Kind::kSymbol:
      absl::StrAppend(&out, "s", e.value);
      return;
    case Kind::kAdd:
      list("(", " + ", ")");
      return;
    case Kind::kMul:
      list("(", "*", ")");
      return;
    case Kind::kFloorDiv:
      list("(", "//", ")");
      return;
    case Kind::kPow:
      list("(", "**", ")");
      return;
    case Kind::kMod:
      list("Mod(", ", ", ")");
      return;
    case Kind::kMax:
      list("Max(", ", ", ")");
      return;
    case Kind::kMin:
      list("Min(", ", ", ")");
      return;
  }
}

}  // namespace

absl::StatusOr<SymExpr> ParseSymExpr(absl::string_view text) {
  if (text.size() > 4096)
    return absl::InvalidArgumentError("symbolic expression longer than 4096 bytes");
  return Parser(text).Parse();
}

std::string PrintSymExpr(const SymExpr& expr) {
  std::string out;
  Print(expr, out);
  return out;
}

absl::StatusOr<int64_t> EvalSymExpr(const SymExpr& e, absl::Span<const int64_t> symbols) {
  auto overflow = [] { return absl::InvalidArgumentError("symbolic expression overflows int64"); };
  switch (e.kind) {
    case Kind::kConst:
      return e.value;
    case Kind::kSymbol:
      if (e.value < 0 || e.value >= static_cast<int64_t>(symbols.size()))
        return absl::InvalidArgumentError(absl::StrCat("symbol s", e.value, " has no value"));
      return symbols[e.value];
    default:
      break;
  }
  std::vector<int64_t> v;
  v.reserve(e.operands.size());
  for (const SymExpr& o : e.operands) {
    ASSIGN_OR_RETURN(int64_t x, EvalSymExpr(o, symbols));
    v.push_back(x);
  }
  if (v.empty()) return absl::InternalError("symbolic operation without operands");
  int64_t r = v[0];
  switch (e.kind) {
    case Kind::kAdd:
      for (size_t i = 1; i < v.size(); ++i)
        if (__builtin_add_overflow(r, v[i], &r)) return overflow();
      return r;
    case Kind::kMul:
      for (size_t i = 1; i < v.size(); ++i)
        if (__builtin_mul_overflow(r, v[i], &r)) return overflow();
      return r;
    case Kind::kMax:
      return *std::max_element(v.begin(), v.end());
    case Kind::kMin:
      return *std::min_element(v.begin(), v.end());
    case Kind::kFloorDiv:
    case Kind::kMod:
      if (v.size() != 2) return absl::InternalError("division without two operands");
      if (v[1] == 0) return absl::InvalidArgumentError("symbolic expression divides by zero");
      if (v[0] == INT64_MIN && v[1] == -1) return overflow();
      return e.kind == Kind::kFloorDiv ? FloorDivide(v[0], v[1]) : PyMod(v[0], v[1]);
    case Kind::kPow: {
      if (v.size() != 2 || v[1] < 0) return absl::InvalidArgumentError("negative exponent");
      int64_t p = 1;
      for (int64_t i = 0; i < v[1]; ++i)
        if (__builtin_mul_overflow(p, v[0], &p)) return overflow();
      return p;
    }
    default:
      return absl::InternalError("unknown symbolic operation");
  }
}

void CollectSymbols(const SymExpr& expr, std::vector<int>& out) {
  if (expr.kind == Kind::kSymbol) {
    if (std::find(out.begin(), out.end(), static_cast<int>(expr.value)) == out.end())
      out.push_back(static_cast<int>(expr.value));
    return;
  }
  for (const SymExpr& o : expr.operands) CollectSymbols(o, out);
}

}  // namespace tccd::ir

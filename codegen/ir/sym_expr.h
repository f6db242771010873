// Symbolic integer expressions: the sizes, strides and SymInt arguments of graphs compiled with
// dynamic shapes, over the graph's size symbols s0, s1, ... (the client renames Dynamo's symbols
// to these in first-appearance order, so the names never depend on Dynamo's numbering).
//
// The text form is the subset of sympy's printing that Dynamo's ShapeEnv emits for sizes:
//   integers, symbols sN, + - * (binary and unary), ** with a constant exponent >= 0,
//   a//b and FloorDiv(a, b), Mod(a, b) and PythonMod(a, b) (non-negative operands: Python's %),
//   Max(a, ...), Min(a, ...), CleanDiv(a, b) (exact division), and parentheses.
// PrintSymExpr writes a canonical, fully parenthesised text in the same language (so the client
// evaluates the daemon's output with the parser it already needs), which is what enters a
// compile key: "s0*2" and "2*s0" stay different texts, but Dynamo prints one expression one way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace tccd::ir {

struct SymExpr {
  enum class Kind : uint8_t { kConst, kSymbol, kAdd, kMul, kFloorDiv, kMod, kMax, kMin, kPow };
  Kind kind = Kind::kConst;
  int64_t value = 0;              // kConst: the value; kSymbol: the symbol's index (sN -> N)
  std::vector<SymExpr> operands;  // kAdd/kMul/kMax/kMin: >= 2; kFloorDiv/kMod/kPow: exactly 2

  bool IsConst() const { return kind == Kind::kConst; }
};

// At most this many symbols per graph (s0 .. s63), and this much nesting: a bound on what a
// client can make the daemon parse, far above what Dynamo emits.
inline constexpr int kMaxSymbols = 64;
inline constexpr int kMaxSymExprDepth = 32;

// INVALID_ARGUMENT (naming the offending text) for anything outside the language above.
absl::StatusOr<SymExpr> ParseSymExpr(absl::string_view text);

// The canonical text (see above); constants fold ("2*3" prints "6").
std::string PrintSymExpr(const SymExpr& expr);

// The value under `symbols` (symbols[N] is sN). INVALID_ARGUMENT for an unbound symbol, a
// division by zero or an overflow.
absl::StatusOr<int64_t> EvalSymExpr(const SymExpr& expr, absl::Span<const int64_t> symbols);

// The symbols the expression mentions, appended to `out` in first-appearance order (no repeats).
void CollectSymbols(const SymExpr& expr, std::vector<int>& out);

}  // namespace tccd::ir

// Symbolic size expressions, text in and text out: Dynamo's sympy spellings parse, print in the
// canonical form, evaluate with Python's floor semantics, and anything else is refused.
#include <catch2/catch.hpp>

#include "codegen/ir/sym_expr.h"

namespace tccd::ir {
namespace {

std::string Canonical(absl::string_view text) {
  absl::StatusOr<SymExpr> e = ParseSymExpr(text);
  REQUIRE(e.ok());
  return PrintSymExpr(*e);
}

int64_t Eval(absl::string_view text, std::vector<int64_t> symbols) {
  absl::StatusOr<SymExpr> e = ParseSymExpr(text);
  REQUIRE(e.ok());
  absl::StatusOr<int64_t> v = EvalSymExpr(*e, symbols);
  REQUIRE(v.ok());
  return *v;
}

TEST_CASE("sympy spellings of sizes print canonically", "[sym_expr]") {
  CHECK(Canonical("s0") == "s0");
  CHECK(Canonical("17") == "17");
  CHECK(Canonical("s0*s1") == "(s0*s1)");
  CHECK(Canonical("s0*s1 + 1") == "((s0*s1) + 1)");
  CHECK(Canonical("2*s0 - 1") == "((2*s0) + -1)");
  CHECK(Canonical("3 - s0") == "(3 + (-1*s0))");
  CHECK(Canonical("(s0//2)") == "(s0//2)");
  CHECK(Canonical("FloorDiv(s0*s1, 64)") == "((s0*s1)//64)");
  CHECK(Canonical("Mod(s0, 8)") == "Mod(s0, 8)");
  CHECK(Canonical("PythonMod(s2, 3)") == "Mod(s2, 3)");
  CHECK(Canonical("Max(1, s0)") == "Max(1, s0)");
  CHECK(Canonical("s0**2") == "(s0**2)");
  CHECK(Canonical("  s0 +  s1  ") == "(s0 + s1)");
}

TEST_CASE("constant sub-expressions fold; nothing else is rewritten", "[sym_expr]") {
  CHECK(Canonical("2*3") == "6");
  CHECK(Canonical("7//2 + s0") == "(3 + s0)");
  CHECK(Canonical("Max(2, 5)") == "5");
  CHECK(Canonical("-4") == "-4");
  // Nothing to do: an already canonical text is a fixed point.
  for (const char* text : {"((s0*s1) + 1)", "Mod((s0 + 3), 4)", "(s1//Max(1, s0))"})
    CHECK(Canonical(text) == text);
}

TEST_CASE("evaluation follows Python's floor division and modulo", "[sym_expr]") {
  CHECK(Eval("s0*s1 + 1", {3, 4}) == 13);
  CHECK(Eval("(s0//2)", {7}) == 3);
  CHECK(Eval("FloorDiv(s0 - 8, 3)", {1}) == -3);  // floor(-7/3)
  CHECK(Eval("Mod(s0 - 8, 3)", {1}) == 2);        // Python: -7 % 3 == 2
  CHECK(Eval("Min(s0, s1, 9)", {12, 10}) == 9);
  CHECK(Eval("s0**3", {5}) == 125);
}

TEST_CASE("what is not a size expression is refused with its place", "[sym_expr]") {
  for (const char* bad : {"", "s0 +", "s0 / 2", "foo(s0)", "u0 + 1", "s0 == 1", "Mod(s0)", "(s0",
                          "s99", "s0 ** s1", "__import__('os')", "99999999999999999999"}) {
    absl::StatusOr<SymExpr> e = ParseSymExpr(bad);
    INFO(bad);
    CHECK(absl::IsInvalidArgument(e.status()));
  }
  absl::StatusOr<SymExpr> deep = ParseSymExpr(std::string(200, '(') + "s0" + std::string(200, ')'));
  CHECK(absl::IsInvalidArgument(deep.status()));
}

TEST_CASE("evaluation errors are statuses, never crashes", "[sym_expr]") {
  absl::StatusOr<SymExpr> e = ParseSymExpr("s0//s1");
  REQUIRE(e.ok());
  CHECK(absl::IsInvalidArgument(EvalSymExpr(*e, {4, 0}).status()));  // division by zero
  CHECK(absl::IsInvalidArgument(EvalSymExpr(*e, {4}).status()));     // s1 unbound
  absl::StatusOr<SymExpr> big = ParseSymExpr("s0*s0*s0");
  REQUIRE(big.ok());
  CHECK(absl::IsInvalidArgument(EvalSymExpr(*big, {int64_t{1} << 30}).status()));  // overflow
  std::vector<int> symbols;
  CollectSymbols(*ParseSymExpr("s3*s1 + s3"), symbols);
  CHECK(symbols == std::vector<int>{3, 1});
}

}  // namespace
}  // namespace tccd::ir

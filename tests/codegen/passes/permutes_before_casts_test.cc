// PermutesBeforeCasts: IR text in, IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/permutes_before_casts.h"

namespace tccd::codegen {
namespace {

std::string Run(const std::string& text, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  PermutesBeforeCasts pass;
  absl::StatusOr<bool> c = pass.Run(*g);
  REQUIRE(c.ok());
  *changed = *c;
  return ir::PrintGraph(*g);
}

std::string Canonical(const std::string& text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return ir::PrintGraph(*g);
}

// Attention's key under bf16 autocast, 2 batches x 3 heads x 4 positions x 2 features: %a0 the
// bf16 projection viewed as heads (transposed strides), cast to f32, transposed and scaled.
constexpr char kInputs[] = "graph(%a0: bf16[2,3,4,2]{24,2,6,1}@cuda) {\n";

TEST_CASE("the scaled key's transpose moves before its cast: one kernel reads the bf16 key",
          "[permutes_before_casts]") {
  bool changed = false;
  const std::string out =
      Run(std::string(kInputs) +
              R"(  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[2,3,4,2]{24,2,6,1}@cuda
  %1 = aten::transpose.int(%0, -2, -1) -> f32[2,3,2,4]{24,2,1,6}@cuda
  %2 = aten::mul.Scalar(%1, 0.5) -> f32[2,3,2,4]{24,8,4,1}@cuda
  return (%2)
})",
          &changed);
  CHECK(changed);
  // The old cast stays until dead-code elimination removes it.
  CHECK(out ==
        Canonical(std::string(kInputs) +
                  R"(  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[2,3,4,2]{24,2,6,1}@cuda
  %1 = aten::transpose.int(%a0, -2, -1) -> bf16[2,3,2,4]{24,2,1,6}@cuda
  %2 = aten::_to_copy.default(%1, dtype=f32) -> f32[2,3,2,4]{24,2,1,6}@cuda
  %3 = aten::mul.Scalar(%2, 0.5) -> f32[2,3,2,4]{24,8,4,1}@cuda
  return (%3)
})"));
}

TEST_CASE("a t moves before its cast like a transpose (op_properties.h: ViewKind::kPermute)",
          "[permutes_before_casts]") {
  bool changed = false;
  const std::string out = Run(R"(graph(%a0: bf16[4,2]{2,1}@cuda) {
  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[4,2]{2,1}@cuda
  %1 = aten::t.default(%0) -> f32[2,4]{1,2}@cuda
  %2 = aten::mul.Scalar(%1, 0.5) -> f32[2,4]{4,1}@cuda
  return (%2)
})",
                              &changed);
  CHECK(changed);
  CHECK(out == Canonical(R"(graph(%a0: bf16[4,2]{2,1}@cuda) {
  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[4,2]{2,1}@cuda
  %1 = aten::t.default(%a0) -> bf16[2,4]{1,2}@cuda
  %2 = aten::_to_copy.default(%1, dtype=f32) -> f32[2,4]{1,2}@cuda
  %3 = aten::mul.Scalar(%2, 0.5) -> f32[2,4]{4,1}@cuda
  return (%3)
})"));
}

TEST_CASE("nothing to do: the transpose feeds a matmul, or the cast has another reader",
          "[permutes_before_casts]") {
  bool changed = false;
  const std::string in = R"(graph(%a0: bf16[2,3,4,2]{24,2,6,1}@cuda, %a1: f32[6,4,2]{8,2,1}@cuda) {
  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[2,3,4,2]{24,2,6,1}@cuda
  %1 = aten::transpose.int(%0, -2, -1) -> f32[2,3,2,4]{24,2,1,6}@cuda
  %2 = aten::view.default(%1, [6, 2, 4]) -> f32[6,2,4]{2,1,6}@cuda
  %3 = aten::bmm.default(%a1, %2) -> f32[6,4,4]{16,4,1}@cuda
  %4 = aten::_to_copy.default(%a0, dtype=f32) -> f32[2,3,4,2]{24,2,6,1}@cuda
  %5 = aten::transpose.int(%4, 1, 2) -> f32[2,4,3,2]{24,6,2,1}@cuda
  %6 = aten::mul.Scalar(%5, 0.5) -> f32[2,4,3,2]{24,6,2,1}@cuda
  %7 = aten::add.Tensor(%4, %4) -> f32[2,3,4,2]{24,2,6,1}@cuda
  return (%3, %6, %7)
})";
  const std::string out = Run(in, &changed);
  CHECK_FALSE(changed);
  CHECK(out == Canonical(in));
}

TEST_CASE("a narrowing cast of a pointwise op's output stays where it is",
          "[permutes_before_casts]") {
  // Moved, the producing kernel would store f32 instead of bf16 for the transposing reader.
  bool changed = false;
  const std::string in = R"(graph(%a0: f32[2,3,4,2]{24,2,6,1}@cuda) {
  %0 = aten::mul.Scalar(%a0, 0.5) -> f32[2,3,4,2]{24,2,6,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=bf16) -> bf16[2,3,4,2]{24,2,6,1}@cuda
  %2 = aten::transpose.int(%1, 1, 2) -> bf16[2,4,3,2]{24,6,2,1}@cuda
  %3 = aten::add.Tensor(%2, %2) -> bf16[2,4,3,2]{24,6,2,1}@cuda
  return (%3)
})";
  const std::string out = Run(in, &changed);
  CHECK_FALSE(changed);
  CHECK(out == Canonical(in));
}

}  // namespace
}  // namespace tccd::codegen

// CastsBeforeViews: IR text in, IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/casts_before_views.h"

namespace tccd::codegen {
namespace {

std::string Run(const std::string& text, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  CastsBeforeViews pass;
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

// Attention's backward under bf16 autocast, 2 batches x 3 heads, 4 positions: %a0 the f32
// probabilities the forward saved, %a1 the bf16 gradient of the scores (dP), %a2 dO.
constexpr char kInputs[] =
    "graph(%a0: f32[2,3,4,4]{48,16,4,1}@cuda, %a1: bf16[2,3,4,4]{48,16,4,1}@cuda, "
    "%a2: bf16[6,4,2]{8,2,1}@cuda) {\n";
constexpr char kSoftmaxBackward[] =
    R"(  %5 = aten::_to_copy.default(%a1, dtype=f32) -> f32[2,3,4,4]{48,16,4,1}@cuda
  %6 = aten::_softmax_backward_data.default(%5, %a0, -1, f32) -> f32[2,3,4,4]{48,16,4,1}@cuda
)";

TEST_CASE("the probabilities' cast for the dV matmul moves before the views onto their shape",
          "[casts_before_views]") {
  bool changed = false;
  const std::string out =
      Run(std::string(kInputs) +
              R"(  %0 = aten::expand.default(%a0, [2, 3, 4, 4]) -> f32[2,3,4,4]{48,16,4,1}@cuda
  %1 = aten::view.default(%0, [6, 4, 4]) -> f32[6,4,4]{16,4,1}@cuda
  %2 = aten::transpose.int(%1, 1, 2) -> f32[6,4,4]{16,1,4}@cuda
  %3 = aten::_to_copy.default(%2, dtype=bf16) -> bf16[6,4,4]{16,1,4}@cuda
  %4 = aten::bmm.default(%3, %a2) -> bf16[6,4,2]{8,2,1}@cuda
)" + kSoftmaxBackward +
              "  return (%4, %6)\n}",
          &changed);
  CHECK(changed);
  // The old views stay until dead-code elimination removes them.
  CHECK(out ==
        Canonical(std::string(kInputs) +
                  R"(  %0 = aten::expand.default(%a0, [2, 3, 4, 4]) -> f32[2,3,4,4]{48,16,4,1}@cuda
  %1 = aten::view.default(%0, [6, 4, 4]) -> f32[6,4,4]{16,4,1}@cuda
  %2 = aten::transpose.int(%1, 1, 2) -> f32[6,4,4]{16,1,4}@cuda
  %3 = aten::_to_copy.default(%a0, dtype=bf16) -> bf16[2,3,4,4]{48,16,4,1}@cuda
  %4 = aten::expand.default(%3, [2, 3, 4, 4]) -> bf16[2,3,4,4]{48,16,4,1}@cuda
  %5 = aten::view.default(%4, [6, 4, 4]) -> bf16[6,4,4]{16,4,1}@cuda
  %6 = aten::transpose.int(%5, 1, 2) -> bf16[6,4,4]{16,1,4}@cuda
  %7 = aten::bmm.default(%6, %a2) -> bf16[6,4,2]{8,2,1}@cuda
  %8 = aten::_to_copy.default(%a1, dtype=f32) -> f32[2,3,4,4]{48,16,4,1}@cuda
  %9 = aten::_softmax_backward_data.default(%8, %a0, -1, f32) -> f32[2,3,4,4]{48,16,4,1}@cuda
  return (%7, %9)
})"));
}

TEST_CASE("nothing to do: no row reduction reads the cast's source", "[casts_before_views]") {
  bool changed = false;
  const std::string in = std::string(kInputs) +
                         R"(  %0 = aten::view.default(%a0, [6, 4, 4]) -> f32[6,4,4]{16,4,1}@cuda
  %1 = aten::transpose.int(%0, 1, 2) -> f32[6,4,4]{16,1,4}@cuda
  %2 = aten::_to_copy.default(%1, dtype=bf16) -> bf16[6,4,4]{16,1,4}@cuda
  %3 = aten::bmm.default(%2, %a2) -> bf16[6,4,2]{8,2,1}@cuda
  return (%3)
})";
  const std::string out = Run(in, &changed);
  CHECK_FALSE(changed);
  CHECK(out == Canonical(in));
}

TEST_CASE("a cast that writes another layout than its views' (a contiguous copy) stays",
          "[casts_before_views]") {
  bool changed = false;
  const std::string in = std::string(kInputs) +
                         R"(  %0 = aten::view.default(%a0, [6, 4, 4]) -> f32[6,4,4]{16,4,1}@cuda
  %1 = aten::transpose.int(%0, 1, 2) -> f32[6,4,4]{16,1,4}@cuda
  %2 = aten::_to_copy.default(%1, dtype=bf16) -> bf16[6,4,4]{16,4,1}@cuda
  %3 = aten::bmm.default(%2, %a2) -> bf16[6,4,2]{8,2,1}@cuda
  %4 = aten::_to_copy.default(%a1, dtype=f32) -> f32[2,3,4,4]{48,16,4,1}@cuda
  %5 = aten::_softmax_backward_data.default(%4, %a0, -1, f32) -> f32[2,3,4,4]{48,16,4,1}@cuda
  return (%3, %5)
})";
  const std::string out = Run(in, &changed);
  CHECK_FALSE(changed);
  CHECK(out == Canonical(in));
}

}  // namespace
}  // namespace tccd::codegen

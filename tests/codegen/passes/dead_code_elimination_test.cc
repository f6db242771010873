// Dead code elimination removes unused pure nodes and renumbers; nothing to do is "unchanged".
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/dead_code_elimination.h"

namespace tccd::codegen {
namespace {

TEST_CASE("unused pointwise ops and views are removed, side-effecting ops kept", "[dce]") {
  ir::Graph g = *ir::ParseGraph(R"(graph(%a0: f32[4]{1}@cpu) {
  %0 = aten::relu.default(%a0) -> f32[4]{1}@cpu
  %1 = aten::view.default(%0, [2, 2]) -> f32[2,2]{2,1}@cpu
  %2 = aten::copy_.default(%a0, %a0) -> f32[4]{1}@cpu
  %3 = aten::exp.default(%a0) -> f32[4]{1}@cpu
  return (%3)
})");
  DeadCodeElimination dce;
  absl::StatusOr<bool> changed = dce.Run(g);
  REQUIRE(changed.ok());
  CHECK(*changed);
  CHECK(ir::PrintGraph(g) == R"(graph(%a0: f32[4]{1}@cpu) {
  %0 = aten::copy_.default(%a0, %a0) -> f32[4]{1}@cpu
  %1 = aten::exp.default(%a0) -> f32[4]{1}@cpu
  return (%1)
}
)");
}

TEST_CASE("a graph without dead code is unchanged", "[dce]") {
  const char* text = R"(graph(%a0: f32[4]{1}@cpu) {
  %0 = aten::relu.default(%a0) -> f32[4]{1}@cpu
  return (%0)
}
)";
  ir::Graph g = *ir::ParseGraph(text);
  DeadCodeElimination dce;
  CHECK(*dce.Run(g) == false);
  CHECK(ir::PrintGraph(g) == text);
}

}  // namespace
}  // namespace tccd::codegen

// CommonSubexpressions: equal pure nodes merge (chains too); random ops, different constants and
// graph outputs stay.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/common_subexpressions.h"
#include "codegen/passes/dead_code_elimination.h"

namespace tccd::codegen {
namespace {

TEST_CASE("a per-layer where and cast of one mask are made once", "[common_subexpressions]") {
  ir::Graph g = *ir::ParseGraph(
      R"(graph(%a0: b8[2,1,8,8]{64,64,8,1}@cuda, %a1: f32[2,1,8,8]{64,64,8,1}@cuda) {
  %0 = aten::where.self(%a0, %a1, -inf) -> f32[2,1,8,8]{64,64,8,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=bf16) -> bf16[2,1,8,8]{64,64,8,1}@cuda
  %2 = aten::where.self(%a0, %a1, -inf) -> f32[2,1,8,8]{64,64,8,1}@cuda
  %3 = aten::_to_copy.default(%2, dtype=bf16) -> bf16[2,1,8,8]{64,64,8,1}@cuda
  %4 = aten::where.self(%a0, %a1, 0.0) -> f32[2,1,8,8]{64,64,8,1}@cuda
  %5 = aten::add.Tensor(%1, %3) -> bf16[2,1,8,8]{64,64,8,1}@cuda
  %6 = aten::add.Tensor(%5, %4) -> f32[2,1,8,8]{64,64,8,1}@cuda
  %7 = aten::where.self(%a0, %a1, 0.0) -> f32[2,1,8,8]{64,64,8,1}@cuda
  %8 = aten::rand_like.default(%a1) -> f32[2,1,8,8]{64,64,8,1}@cuda
  %9 = aten::rand_like.default(%a1) -> f32[2,1,8,8]{64,64,8,1}@cuda
  return (%6, %7, %8, %9)
})");
  CommonSubexpressions cse;
  REQUIRE(*cse.Run(g));
  DeadCodeElimination dce;
  REQUIRE(dce.Run(g).ok());
  // %2/%3 merge into %0/%1 (a chain), %4 (another constant) stays, %7 (a graph output) stays,
  // the random draws stay.
  CHECK(ir::PrintGraph(g) ==
        R"(graph(%a0: b8[2,1,8,8]{64,64,8,1}@cuda, %a1: f32[2,1,8,8]{64,64,8,1}@cuda) {
  %0 = aten::where.self(%a0, %a1, -inf) -> f32[2,1,8,8]{64,64,8,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=bf16) -> bf16[2,1,8,8]{64,64,8,1}@cuda
  %2 = aten::where.self(%a0, %a1, 0.0) -> f32[2,1,8,8]{64,64,8,1}@cuda
  %3 = aten::add.Tensor(%1, %1) -> bf16[2,1,8,8]{64,64,8,1}@cuda
  %4 = aten::add.Tensor(%3, %2) -> f32[2,1,8,8]{64,64,8,1}@cuda
  %5 = aten::where.self(%a0, %a1, 0.0) -> f32[2,1,8,8]{64,64,8,1}@cuda
  %6 = aten::rand_like.default(%a1) -> f32[2,1,8,8]{64,64,8,1}@cuda
  %7 = aten::rand_like.default(%a1) -> f32[2,1,8,8]{64,64,8,1}@cuda
  return (%4, %5, %6, %7)
}
)");
  CHECK_FALSE(*cse.Run(g));
}

}  // namespace
}  // namespace tccd::codegen

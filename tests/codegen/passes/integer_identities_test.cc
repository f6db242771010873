// IntegerIdentities: integer x + 0, x - 0, x * 1 are x; floats, outputs, broadcasts, promotions
// and alpha other than 1 stay.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/dead_code_elimination.h"
#include "codegen/passes/integer_identities.h"

namespace tccd::codegen {
namespace {

TEST_CASE("transformers' arange + past_seen_tokens (0) is the arange", "[integer_identities]") {
  ir::Graph g = *ir::ParseGraph(R"(graph(%a0: f32[2,8]{8,1}@cuda) {
  %0 = aten::arange.default(8, device=device(cuda), pin_memory=false) -> i64[8]{1}@cuda
  %1 = aten::add.Tensor(%0, 0) -> i64[8]{1}@cuda
  %2 = aten::sub.Tensor(%1, 0, alpha=1) -> i64[8]{1}@cuda
  %3 = aten::mul.Tensor(%2, 1) -> i64[8]{1}@cuda
  %4 = aten::unsqueeze.default(%3, 0) -> i64[1,8]{8,1}@cuda
  %5 = aten::mul.Tensor(%a0, %4) -> f32[2,8]{8,1}@cuda
  return (%5)
})");
  IntegerIdentities identities;
  REQUIRE(*identities.Run(g));
  DeadCodeElimination dce;
  REQUIRE(dce.Run(g).ok());
  CHECK(ir::PrintGraph(g) == R"(graph(%a0: f32[2,8]{8,1}@cuda) {
  %0 = aten::arange.default(8, device=device(cuda), pin_memory=false) -> i64[8]{1}@cuda
  %1 = aten::unsqueeze.default(%0, 0) -> i64[1,8]{8,1}@cuda
  %2 = aten::mul.Tensor(%a0, %1) -> f32[2,8]{8,1}@cuda
  return (%2)
}
)");
}

TEST_CASE("floats, outputs, broadcasts, promotions and alpha != 1 are left alone",
          "[integer_identities]") {
  ir::Graph g =
      *ir::ParseGraph(R"(graph(%a0: f32[8]{1}@cuda, %a1: i64[8]{1}@cuda, %a2: i64[1]{1}@cuda) {
  %0 = aten::add.Tensor(%a0, 0) -> f32[8]{1}@cuda
  %1 = aten::add.Tensor(%a1, 0) -> i64[8]{1}@cuda
  %2 = aten::add.Tensor(%a2, 0) -> i64[1]{1}@cuda
  %3 = aten::expand.default(%2, [8]) -> i64[8]{0}@cuda
  %4 = aten::add.Tensor(%a1, %3) -> i64[8]{1}@cuda
  %5 = aten::add.Tensor(%4, 0, alpha=2) -> i64[8]{1}@cuda
  %6 = aten::mul.Tensor(%5, 1.0) -> f32[8]{1}@cuda
  %7 = aten::add.Tensor(%a1, %a1) -> i64[8]{1}@cuda
  %8 = aten::mul.Tensor(%7, 2) -> i64[8]{1}@cuda
  return (%0, %1, %6, %8)
})");
  // %2 is no output, but %a2 is graph input [1] and %2 keeps its sizes: it is folded; the rest
  // stay (%0 float, %1 an output, %5's alpha, %6 promotes to f32, %8 multiplies by 2).
  IntegerIdentities identities;
  REQUIRE(*identities.Run(g));
  CHECK(ir::PrintGraph(g) ==
        R"(graph(%a0: f32[8]{1}@cuda, %a1: i64[8]{1}@cuda, %a2: i64[1]{1}@cuda) {
  %0 = aten::add.Tensor(%a0, 0) -> f32[8]{1}@cuda
  %1 = aten::add.Tensor(%a1, 0) -> i64[8]{1}@cuda
  %2 = aten::expand.default(%a2, [8]) -> i64[8]{0}@cuda
  %3 = aten::add.Tensor(%a1, %2) -> i64[8]{1}@cuda
  %4 = aten::add.Tensor(%3, 0, alpha=2) -> i64[8]{1}@cuda
  %5 = aten::mul.Tensor(%4, 1.0) -> f32[8]{1}@cuda
  %6 = aten::add.Tensor(%a1, %a1) -> i64[8]{1}@cuda
  %7 = aten::mul.Tensor(%6, 2) -> i64[8]{1}@cuda
  return (%0, %1, %5, %7)
}
)");
  // Nothing left to do.
  CHECK_FALSE(*identities.Run(g));
}

}  // namespace
}  // namespace tccd::codegen

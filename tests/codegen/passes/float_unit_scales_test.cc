// FloatUnitScales: floating x * 1.0 and x / 1.0 of x's own type are x; outputs, other scales,
// adds, promotions and layout-changing copies stay.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/dead_code_elimination.h"
#include "codegen/passes/float_unit_scales.h"

namespace tccd::codegen {
namespace {

// PyTorch's math attention backward (T5's biased attention): the key's gradient scaled by
// sqrt(1.0), then transposed and cast for the next matmul.
TEST_CASE("math attention's scale by sqrt(1.0) is the value itself", "[float_unit_scales]") {
  ir::Graph g = *ir::ParseGraph(R"(graph(%a0: f32[2,8,64,256]{131072,16384,256,1}@cuda) {
  %0 = aten::mul.Scalar(%a0, 1.0) -> f32[2,8,64,256]{131072,16384,256,1}@cuda
  %1 = aten::div.Tensor(%0, 1) -> f32[2,8,64,256]{131072,16384,256,1}@cuda
  %2 = aten::transpose.int(%1, -2, -1) -> f32[2,8,256,64]{131072,16384,1,256}@cuda
  %3 = aten::_to_copy.default(%2, dtype=bf16) -> bf16[2,8,256,64]{131072,16384,1,256}@cuda
  return (%3)
})");
  FloatUnitScales pass;
  REQUIRE(*pass.Run(g));
  DeadCodeElimination dce;
  REQUIRE(dce.Run(g).ok());
  CHECK(ir::PrintGraph(g) == R"(graph(%a0: f32[2,8,64,256]{131072,16384,256,1}@cuda) {
  %0 = aten::transpose.int(%a0, -2, -1) -> f32[2,8,256,64]{131072,16384,1,256}@cuda
  %1 = aten::_to_copy.default(%0, dtype=bf16) -> bf16[2,8,256,64]{131072,16384,1,256}@cuda
  return (%1)
}
)");
}

TEST_CASE("outputs, other scales, adds, promotions and dense copies are left alone",
          "[float_unit_scales]") {
  constexpr char kGraph[] = R"(graph(%a0: f32[8,4]{4,1}@cuda, %a1: i64[8,4]{4,1}@cuda, %a2: f32[8,4]{1,8}@cuda) {
  %0 = aten::mul.Scalar(%a0, 1.0) -> f32[8,4]{4,1}@cuda
  %1 = aten::mul.Scalar(%a0, 2.0) -> f32[8,4]{4,1}@cuda
  %2 = aten::add.Tensor(%a0, 0.0) -> f32[8,4]{4,1}@cuda
  %3 = aten::mul.Tensor(%a1, 1.0) -> f32[8,4]{4,1}@cuda
  %4 = aten::mul.Scalar(%a2, 1.0) -> f32[8,4]{4,1}@cuda
  %5 = aten::add.Tensor(%1, %2) -> f32[8,4]{4,1}@cuda
  %6 = aten::add.Tensor(%3, %4) -> f32[8,4]{4,1}@cuda
  %7 = aten::add.Tensor(%5, %6) -> f32[8,4]{4,1}@cuda
  %8 = aten::exp.default(%a0) -> f32[8,4]{4,1}@cuda
  %9 = aten::t.default(%8) -> f32[4,8]{1,4}@cuda
  %10 = aten::mul.Scalar(%9, 1.0) -> f32[4,8]{1,4}@cuda
  %11 = aten::mm.default(%10, %7) -> f32[4,4]{4,1}@cuda
  return (%0, %11)
})";
  // %0 is an output, %1 scales by 2, %2 adds 0.0 (-0.0 + 0.0 is +0.0), %3 promotes i64 to f32,
  // %4 copies a transposed %a2 into a dense layout, %10 scales (a view of) a pointwise op's value,
  // which it rides along with in one kernel: nothing to do.
  ir::Graph g = *ir::ParseGraph(kGraph);
  FloatUnitScales pass;
  CHECK(!*pass.Run(g));
  CHECK(ir::PrintGraph(g) == ir::PrintGraph(*ir::ParseGraph(kGraph)));
}

}  // namespace
}  // namespace tccd::codegen

// InlineScalarFills: 0-dim fills read by pointwise ops become numbers; others stay.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/dead_code_elimination.h"
#include "codegen/passes/inline_scalar_fills.h"

namespace tccd::codegen {
namespace {

TEST_CASE("0-dim fills read by pointwise ops become numbers", "[inline_scalar_fills]") {
  ir::Graph g = *ir::ParseGraph(R"(graph(%a0: f32[4]{1}@cpu, %a1: b8[4]{1}@cpu) {
  %0 = aten::full.default([], 0.0, dtype=f32, device=device(cpu)) -> f32[]{}@cpu
  %1 = aten::where.self(%a1, %0, %a0) -> f32[4]{1}@cpu
  %2 = aten::full.default([], 1.00390625, dtype=bf16) -> bf16[]{}@cpu
  %3 = aten::mul.Tensor(%1, %2) -> f32[4]{1}@cpu
  %4 = aten::scalar_tensor.default(3) -> i64[]{}@cpu
  %5 = aten::lt.Tensor(%a0, %4) -> b8[4]{1}@cpu
  %6 = aten::full.default([4], 2.0) -> f32[4]{1}@cpu
  %7 = aten::mm.default(%0, %0) -> f32[]{}@cpu
  %8 = aten::zeros.default([], dtype=f32) -> f32[]{}@cpu
  %9 = aten::sub.Tensor(%a0, %8) -> f32[4]{1}@cpu
  return (%3, %5, %6, %7, %9)
})");
  InlineScalarFills inline_fills;
  REQUIRE(*inline_fills.Run(g));
  DeadCodeElimination dce;
  REQUIRE(dce.Run(g).ok());
  // %0 stays for the mm (not pointwise); 1 + 2^-8 is not a bf16 value, so %2 stays read as a
  // tensor; %4 (an exact integer) is inlined and then dead; the [4] fill is not 0-dim.
  CHECK(ir::PrintGraph(g) == R"(graph(%a0: f32[4]{1}@cpu, %a1: b8[4]{1}@cpu) {
  %0 = aten::full.default([], 0.0, dtype=f32, device=device(cpu)) -> f32[]{}@cpu
  %1 = aten::where.self(%a1, 0.0, %a0) -> f32[4]{1}@cpu
  %2 = aten::full.default([], 1.00390625, dtype=bf16) -> bf16[]{}@cpu
  %3 = aten::mul.Tensor(%1, %2) -> f32[4]{1}@cpu
  %4 = aten::lt.Tensor(%a0, 3) -> b8[4]{1}@cpu
  %5 = aten::full.default([4], 2.0) -> f32[4]{1}@cpu
  %6 = aten::mm.default(%0, %0) -> f32[]{}@cpu
  %7 = aten::sub.Tensor(%a0, 0.0) -> f32[4]{1}@cpu
  return (%3, %4, %5, %6, %7)
}
)");
}

TEST_CASE("0-dim new_ones/new_zeros/new_full of a tensor become numbers", "[inline_scalar_fills]") {
  // transformers' and_mask: q_idx.new_ones((), dtype=torch.bool) & mask.
  ir::Graph g = *ir::ParseGraph(R"(graph(%a0: i64[4]{1}@cuda, %a1: b8[4]{1}@cuda) {
  %0 = aten::new_ones.default(%a0, [], dtype=b8) -> b8[]{}@cuda
  %1 = aten::bitwise_and.Tensor(%0, %a1) -> b8[4]{1}@cuda
  %2 = aten::new_zeros.default(%a0, []) -> i64[]{}@cuda
  %3 = aten::add.Tensor(%a0, %2) -> i64[4]{1}@cuda
  %4 = aten::new_full.default(%a0, [], 7) -> i64[]{}@cuda
  %5 = aten::mul.Tensor(%a0, %4) -> i64[4]{1}@cuda
  %6 = aten::new_ones.default(%a0, [4]) -> i64[4]{1}@cuda
  %7 = aten::add.Tensor(%a0, %6) -> i64[4]{1}@cuda
  return (%1, %3, %5, %7)
})");
  InlineScalarFills inline_fills;
  REQUIRE(*inline_fills.Run(g));
  DeadCodeElimination dce;
  REQUIRE(dce.Run(g).ok());
  // The sized new_ones ([4]) is no 0-dim fill: it stays.
  CHECK(ir::PrintGraph(g) == R"(graph(%a0: i64[4]{1}@cuda, %a1: b8[4]{1}@cuda) {
  %0 = aten::bitwise_and.Tensor(true, %a1) -> b8[4]{1}@cuda
  %1 = aten::add.Tensor(%a0, 0) -> i64[4]{1}@cuda
  %2 = aten::mul.Tensor(%a0, 7) -> i64[4]{1}@cuda
  %3 = aten::new_ones.default(%a0, [4]) -> i64[4]{1}@cuda
  %4 = aten::add.Tensor(%a0, %3) -> i64[4]{1}@cuda
  return (%0, %1, %2, %4)
}
)");
}

}  // namespace
}  // namespace tccd::codegen

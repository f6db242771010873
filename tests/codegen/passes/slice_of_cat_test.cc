// SliceOfCat: slices of a cat along its dim read the cat's parts; other slices stay.
// SliceOfPad: slices of a constant_pad_nd along a padded dim pad a slice of its input.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/dead_code_elimination.h"
#include "codegen/passes/slice_of_cat.h"

namespace tccd::codegen {
namespace {

TEST_CASE("the packed-sequence check's shifted slices read the position ids", "[slice_of_cat]") {
  // transformers' find_packed_sequence_indices: first_dummy = pos[:, :1] - 1;
  // shifted = cat([first_dummy, pos], -1); diff = shifted[:, 1:] - shifted[:, :-1].
  ir::Graph g = *ir::ParseGraph(R"(graph(%a0: i64[2,8]{8,1}@cuda) {
  %0 = aten::slice.Tensor(%a0, 1, 0, 1) -> i64[2,1]{8,1}@cuda
  %1 = aten::sub.Tensor(%0, 1) -> i64[2,1]{1,1}@cuda
  %2 = aten::cat.default([%1, %a0], -1) -> i64[2,9]{9,1}@cuda
  %3 = aten::slice.Tensor(%2, 1, 1, 9223372036854775807) -> i64[2,8]{9,1}+1@cuda
  %4 = aten::slice.Tensor(%2, 1, 0, -1) -> i64[2,8]{9,1}@cuda
  %5 = aten::sub.Tensor(%3, %4) -> i64[2,8]{8,1}@cuda
  return (%5)
})");
  SliceOfCat pass;
  REQUIRE(*pass.Run(g));
  DeadCodeElimination dce;
  REQUIRE(dce.Run(g).ok());
  CHECK(ir::PrintGraph(g) == R"(graph(%a0: i64[2,8]{8,1}@cuda) {
  %0 = aten::slice.Tensor(%a0, 1, 0, 1) -> i64[2,1]{8,1}@cuda
  %1 = aten::sub.Tensor(%0, 1) -> i64[2,1]{1,1}@cuda
  %2 = aten::slice.Tensor(%a0, 1, 0, 7) -> i64[2,7]{8,1}@cuda
  %3 = aten::cat.default([%1, %2], 1) -> i64[2,8]{8,1}@cuda
  %4 = aten::sub.Tensor(%a0, %3) -> i64[2,8]{8,1}@cuda
  return (%4)
}
)");
}

TEST_CASE("slices across the cat's dim, with a step, or returned stay", "[slice_of_cat]") {
  ir::Graph g = *ir::ParseGraph(R"(graph(%a0: f32[2,4]{4,1}@cuda, %a1: f32[2,4]{4,1}@cuda) {
  %0 = aten::cat.default([%a0, %a1], 1) -> f32[2,8]{8,1}@cuda
  %1 = aten::slice.Tensor(%0, 0, 0, 1) -> f32[1,8]{8,1}@cuda
  %2 = aten::slice.Tensor(%0, 1, 0, 8, 2) -> f32[2,4]{8,2}@cuda
  %3 = aten::slice.Tensor(%0, 1, 2, 6) -> f32[2,4]{8,1}+2@cuda
  %4 = aten::neg.default(%1) -> f32[1,8]{8,1}@cuda
  %5 = aten::neg.default(%2) -> f32[2,4]{4,1}@cuda
  return (%4, %5, %3)
})");
  const ir::Graph before = g;
  SliceOfCat pass;
  CHECK_FALSE(*pass.Run(g));
  CHECK(g == before);
}

TEST_CASE("the loss's shifted labels pad a slice of the labels", "[slice_of_cat]") {
  // transformers' ForCausalLMLoss: shift_labels = pad(labels, (0, 1), value=-100)[..., 1:].
  // %4 slices the unpadded dim (left alone), %5 only padding (left alone), %6 both pads of a
  // two-sided pad in part.
  ir::Graph g = *ir::ParseGraph(R"(graph(%a0: i64[2,8]{8,1}@cuda) {
  %0 = aten::constant_pad_nd.default(%a0, [0, 1], -100) -> i64[2,9]{9,1}@cuda
  %1 = aten::slice.Tensor(%0, 1, 1, 9223372036854775807) -> i64[2,8]{9,1}+1@cuda
  %2 = aten::clone.default(%1, memory_format=memory_format(0)) -> i64[2,8]{8,1}@cuda
  %3 = aten::constant_pad_nd.default(%a0, [2, 3]) -> i64[2,13]{13,1}@cuda
  %4 = aten::slice.Tensor(%3, 0, 1, 2) -> i64[1,13]{13,1}+13@cuda
  %5 = aten::slice.Tensor(%3, 1, 10, 13) -> i64[2,3]{13,1}+10@cuda
  %6 = aten::slice.Tensor(%3, 1, 1, 12) -> i64[2,11]{13,1}+1@cuda
  %7 = aten::add.Tensor(%6, 1) -> i64[2,11]{11,1}@cuda
  return (%2, %4, %5, %7)
})");
  SliceOfPad pass;
  REQUIRE(*pass.Run(g));
  DeadCodeElimination dce;
  REQUIRE(dce.Run(g).ok());
  CHECK(ir::PrintGraph(g) == R"(graph(%a0: i64[2,8]{8,1}@cuda) {
  %0 = aten::slice.Tensor(%a0, 1, 1, 8) -> i64[2,7]{8,1}+1@cuda
  %1 = aten::constant_pad_nd.default(%0, [0, 1], -100) -> i64[2,8]{8,1}@cuda
  %2 = aten::clone.default(%1, memory_format=memory_format(0)) -> i64[2,8]{8,1}@cuda
  %3 = aten::constant_pad_nd.default(%a0, [2, 3]) -> i64[2,13]{13,1}@cuda
  %4 = aten::slice.Tensor(%3, 0, 1, 2) -> i64[1,13]{13,1}+13@cuda
  %5 = aten::slice.Tensor(%3, 1, 10, 13) -> i64[2,3]{13,1}+10@cuda
  %6 = aten::constant_pad_nd.default(%a0, [1, 2]) -> i64[2,11]{11,1}@cuda
  %7 = aten::add.Tensor(%6, 1) -> i64[2,11]{11,1}@cuda
  return (%2, %4, %5, %7)
}
)");
  CHECK_FALSE(*pass.Run(g));
}

}  // namespace
}  // namespace tccd::codegen

// FillCopyFolding: T5's decoder-input shift becomes one slice_scatter of a constant; copies,
// sized fills and scatters it cannot prove equal are left alone.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/dead_code_elimination.h"
#include "codegen/passes/fill_copy_folding.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/plan_builder.h"

namespace tccd::codegen {
namespace {

// transformers' T5 `_shift_right` as AOTAutograd functionalises it (decoder_start_token_id and
// pad_token_id both 0): new_zeros; shifted[..., 1:] = ids[..., :-1].clone();
// shifted[..., 0] = 0; masked_fill(shifted == -100, 0).
constexpr const char* kShiftRight = R"(graph(%a0: i64[2,8]{8,1}@cuda) {
  %0 = aten::new_zeros.default(%a0, [2, 8], pin_memory=false) -> i64[2,8]{8,1}@cuda
  %1 = aten::slice.Tensor(%a0, 1, 0, -1) -> i64[2,7]{8,1}@cuda
  %2 = aten::clone.default(%1) -> i64[2,7]{7,1}@cuda
  %3 = aten::slice.Tensor(%0, 1, 1, 9223372036854775807) -> i64[2,7]{8,1}+1@cuda
  %4 = aten::copy.default(%3, %2) -> i64[2,7]{8,1}+1@cuda
  %5 = aten::slice_scatter.default(%0, %4, 1, 1, 9223372036854775807) -> i64[2,8]{8,1}@cuda
  %6 = aten::select.int(%5, 1, 0) -> i64[2]{8}@cuda
  %7 = aten::fill.Scalar(%6, 0) -> i64[2]{1}@cuda
  %8 = aten::select_scatter.default(%5, %7, 1, 0) -> i64[2,8]{8,1}@cuda
  %9 = aten::eq.Scalar(%8, -100) -> b8[2,8]{8,1}@cuda
  %10 = aten::masked_fill.Scalar(%8, %9, 0) -> i64[2,8]{8,1}@cuda
  return (%10)
})";

TEST_CASE("T5's decoder shift is one slice_scatter of a constant, fused with its mask",
          "[fill_copy_folding]") {
  ir::Graph g = *ir::ParseGraph(kShiftRight);
  FillCopyFolding fold;
  REQUIRE(*fold.Run(g));
  DeadCodeElimination dce;
  REQUIRE(dce.Run(g).ok());
  // The copy is its source, the clone is read through, the zeros are the number 0, and column 0
  // (outside the scattered [1, 8)) already holds the 0 the select_scatter wrote.
  CHECK(ir::PrintGraph(g) == R"(graph(%a0: i64[2,8]{8,1}@cuda) {
  %0 = aten::slice.Tensor(%a0, 1, 0, -1) -> i64[2,7]{8,1}@cuda
  %1 = aten::slice_scatter.default(0, %0, 1, 1, 9223372036854775807) -> i64[2,8]{8,1}@cuda
  %2 = aten::eq.Scalar(%1, -100) -> b8[2,8]{8,1}@cuda
  %3 = aten::masked_fill.Scalar(%1, %2, 0) -> i64[2,8]{8,1}@cuda
  return (%3)
}
)");
  absl::StatusOr<Partition> p = PartitionForFusion(g, {});
  REQUIRE(p.ok());
  CHECK(PrintPartition(g, *p) == "extern %0 aten::slice.Tensor\nfused %1 %2 %3 -> %3\n");
}

TEST_CASE("a fill that keeps its input's strides folds as well", "[fill_copy_folding]") {
  // As a GPU trace records it: fill(select(ids, 1, 0)) with the select's stride.
  std::string text = kShiftRight;
  text.replace(text.find("-> i64[2]{1}@cuda"), 17, "-> i64[2]{8}@cuda");
  ir::Graph g = *ir::ParseGraph(text);
  FillCopyFolding fold;
  REQUIRE(*fold.Run(g));
  DeadCodeElimination dce;
  REQUIRE(dce.Run(g).ok());
  CHECK(g.nodes.size() == 4);
  CHECK(g.nodes[1].target == "aten::slice_scatter.default");
}

TEST_CASE("a start token other than the fill keeps its select_scatter, with a constant source",
          "[fill_copy_folding]") {
  std::string text = kShiftRight;
  text.replace(text.find("fill.Scalar(%6, 0)"), 18, "fill.Scalar(%6, 5)");
  ir::Graph g = *ir::ParseGraph(text);
  FillCopyFolding fold;
  REQUIRE(*fold.Run(g));
  DeadCodeElimination dce;
  REQUIRE(dce.Run(g).ok());
  CHECK(ir::PrintGraph(g) == R"(graph(%a0: i64[2,8]{8,1}@cuda) {
  %0 = aten::slice.Tensor(%a0, 1, 0, -1) -> i64[2,7]{8,1}@cuda
  %1 = aten::slice_scatter.default(0, %0, 1, 1, 9223372036854775807) -> i64[2,8]{8,1}@cuda
  %2 = aten::select_scatter.default(%1, 5, 1, 0) -> i64[2,8]{8,1}@cuda
  %3 = aten::eq.Scalar(%2, -100) -> b8[2,8]{8,1}@cuda
  %4 = aten::masked_fill.Scalar(%2, %3, 0) -> i64[2,8]{8,1}@cuda
  return (%4)
}
)");
}

TEST_CASE("copies that change dtype or are outputs, and scatters of real tensors, stay",
          "[fill_copy_folding]") {
  constexpr const char* kText =
      R"(graph(%a0: f32[2,4]{4,1}@cuda, %a1: bf16[2,4]{4,1}@cuda, %a2: f32[2,6]{6,1}@cuda) {
  %0 = aten::copy.default(%a0, %a1) -> f32[2,4]{4,1}@cuda
  %1 = aten::slice.Tensor(%a2, 1, 0, 4) -> f32[2,4]{6,1}@cuda
  %2 = aten::copy.default(%1, %a0) -> f32[2,4]{6,1}@cuda
  %3 = aten::slice_scatter.default(%a2, %a0, 1, 0, 4) -> f32[2,6]{6,1}@cuda
  return (%0, %2, %3)
})";
  ir::Graph g = *ir::ParseGraph(kText);
  const ir::Graph before = g;
  FillCopyFolding fold;
  CHECK_FALSE(*fold.Run(g));
  CHECK(g == before);
}

}  // namespace
}  // namespace tccd::codegen

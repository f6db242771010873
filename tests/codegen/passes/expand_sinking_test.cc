// ExpandSinking: IR text in, IR text out (after dead-code elimination), and the row-kernel
// partition it enables (RMSNorm's backward, as Llama's training graph has it).
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/dead_code_elimination.h"
#include "codegen/passes/expand_sinking.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/reduction_fusion.h"

namespace tccd::codegen {
namespace {

ir::Graph Parse(const std::string& text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return *std::move(g);
}

ir::Graph Run(const std::string& text, bool* changed) {
  ir::Graph g = Parse(text);
  ExpandSinking pass;
  absl::StatusOr<bool> c = pass.Run(g);
  REQUIRE(c.ok());
  *changed = *c;
  DeadCodeElimination dce;
  REQUIRE(dce.Run(g).ok());
  return g;
}

std::string Canonical(const std::string& text) { return ir::PrintGraph(Parse(text)); }

// The CUDA partition: pointwise groups, then row and column reductions.
std::string RowPartition(const ir::Graph& g) {
  absl::StatusOr<Partition> p = PartitionForFusion(g, FusionOptions{});
  REQUIRE(p.ok());
  REQUIRE(FuseRowReductions(g, {}, *p).ok());
  return PrintPartition(g, *p);
}

// g (bf16 upstream gradient), w (weight), x (f32 input), rs (per-row rsqrt of the mean square).
constexpr char kInputs[] =
    "graph(%a0: bf16[2,4,8]{32,8,1}@cuda, %a1: f32[8]{1}@cuda, %a2: f32[2,4,8]{32,8,1}@cuda, "
    "%a3: f32[2,4,1]{4,1,1}@cuda) {\n";
constexpr char kPrologue[] =
    R"(  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[2,4,8]{32,8,1}@cuda
  %1 = aten::mul.Tensor(%0, %a1) -> f32[2,4,8]{32,8,1}@cuda
  %2 = aten::mul.Tensor(%1, %a2) -> f32[2,4,8]{32,8,1}@cuda
  %3 = aten::mul.Tensor(%1, %a3) -> f32[2,4,8]{32,8,1}@cuda
  %4 = aten::sum.dim_IntList(%2, [2], true) -> f32[2,4,1]{4,1,1}@cuda
  %5 = aten::pow.Tensor_Scalar(%a3, 3) -> f32[2,4,1]{4,1,1}@cuda
  %6 = aten::mul.Scalar(%4, -0.5) -> f32[2,4,1]{4,1,1}@cuda
  %7 = aten::mul.Tensor(%6, %5) -> f32[2,4,1]{4,1,1}@cuda
)";

TEST_CASE("RMSNorm backward: the expanded row value is divided per row and broadcast by the mul",
          "[expand_sinking]") {
  bool changed = false;
  const ir::Graph g =
      Run(std::string(kInputs) + kPrologue +
              R"(  %8 = aten::expand.default(%7, [2, 4, 8]) -> f32[2,4,8]{4,1,0}@cuda
  %9 = aten::div.Scalar(%8, 8) -> f32[2,4,8]{32,8,1}@cuda
  %10 = aten::mul.Scalar(%a2, 2.0) -> f32[2,4,8]{32,8,1}@cuda
  %11 = aten::mul.Tensor(%9, %10) -> f32[2,4,8]{32,8,1}@cuda
  %12 = aten::add.Tensor(%3, %11) -> f32[2,4,8]{32,8,1}@cuda
  %13 = aten::_to_copy.default(%12, dtype=bf16) -> bf16[2,4,8]{32,8,1}@cuda
  return (%12, %13)
})",
          &changed);
  CHECK(changed);
  CHECK(ir::PrintGraph(g) == Canonical(std::string(kInputs) + kPrologue +
                                       R"(  %8 = aten::div.Scalar(%7, 8) -> f32[2,4,1]{4,1,1}@cuda
  %9 = aten::mul.Scalar(%a2, 2.0) -> f32[2,4,8]{32,8,1}@cuda
  %10 = aten::mul.Tensor(%8, %9) -> f32[2,4,8]{32,8,1}@cuda
  %11 = aten::add.Tensor(%3, %10) -> f32[2,4,8]{32,8,1}@cuda
  %12 = aten::_to_copy.default(%11, dtype=bf16) -> bf16[2,4,8]{32,8,1}@cuda
  return (%11, %12)
})"));
  // The row sum, its per-row epilogue and the input gradient are one row kernel (was: the expand
  // an extern step, the ops after it a pointwise kernel of their own).
  const std::string partition = RowPartition(g);
  INFO(partition);
  CHECK(partition.find("extern") == std::string::npos);
  CHECK(partition.find("%4 %5 %6 %7 %8 %9 %10 %11 %12") != std::string::npos);
}

TEST_CASE("an expand read by a graph output or an extern op, or by nothing it can leave, stays",
          "[expand_sinking]") {
  const std::string text = std::string(kInputs) + kPrologue +
                           R"(  %8 = aten::expand.default(%7, [2, 4, 8]) -> f32[2,4,8]{4,1,0}@cuda
  %9 = aten::div.Scalar(%8, 8) -> f32[2,4,8]{32,8,1}@cuda
  %10 = aten::expand.default(%6, [2, 4, 8]) -> f32[2,4,8]{4,1,0}@cuda
  %11 = aten::neg.default(%10) -> f32[2,4,8]{32,8,1}@cuda
  %12 = aten::view.default(%11, [64]) -> f32[64]{1}@cuda
  %13 = aten::expand.default(%a1, [2, 4, 8]) -> f32[2,4,8]{0,0,1}@cuda
  %14 = aten::zeros_like.default(%13) -> f32[2,4,8]{32,8,1}@cuda
  return (%9, %12, %14, %3)
})";
  bool changed = true;
  const ir::Graph g = Run(text, &changed);
  CHECK_FALSE(changed);
  CHECK(ir::PrintGraph(g) == Canonical(text));
}

}  // namespace
}  // namespace tccd::codegen

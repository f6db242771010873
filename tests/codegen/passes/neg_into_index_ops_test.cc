// NegIntoIndexOps: IR text in, IR text out (after dead-code elimination), and the fusion
// partition it enables (rotary embeddings' rotate_half, forward and backward).
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/dead_code_elimination.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/neg_into_index_ops.h"

namespace tccd::codegen {
namespace {

ir::Graph Parse(const std::string& text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return *std::move(g);
}

// The pass, then dead-code elimination (the negs it bypassed are left without readers).
ir::Graph Run(const std::string& text, bool* changed) {
  ir::Graph g = Parse(text);
  NegIntoIndexOps pass;
  absl::StatusOr<bool> c = pass.Run(g);
  REQUIRE(c.ok());
  *changed = *c;
  DeadCodeElimination dce;
  REQUIRE(dce.Run(g).ok());
  return g;
}

std::string Canonical(const std::string& text) { return ir::PrintGraph(Parse(text)); }

std::string PartitionText(const ir::Graph& g) {
  absl::StatusOr<Partition> p = PartitionForFusion(g, FusionOptions{});
  REQUIRE(p.ok());
  return PrintPartition(g, *p);
}

constexpr char kInputs[] =
    "graph(%a0: bf16[2,3,4,8]{96,32,8,1}@cuda, %a1: f32[1,1,4,8]{32,32,8,1}@cuda) {\n";

TEST_CASE("rotate_half's cat of a negated half is slice_backwards summed, in one kernel",
          "[neg_into_index_ops]") {
  bool changed = false;
  const ir::Graph g =
      Run(std::string(kInputs) +
              R"(  %0 = aten::slice.Tensor(%a0, 3, 0, 4) -> bf16[2,3,4,4]{96,32,8,1}@cuda
  %1 = aten::slice.Tensor(%a0, 3, 4, 9223372036854775807) -> bf16[2,3,4,4]{96,32,8,1}+4@cuda
  %2 = aten::neg.default(%1) -> bf16[2,3,4,4]{48,16,4,1}@cuda
  %3 = aten::cat.default([%2, %0], -1) -> bf16[2,3,4,8]{96,32,8,1}@cuda
  %4 = aten::mul.Tensor(%3, %a1) -> f32[2,3,4,8]{96,32,8,1}@cuda
  return (%4)
})",
          &changed);
  CHECK(changed);
  CHECK(ir::PrintGraph(g) ==
        Canonical(std::string(kInputs) +
                  R"(  %0 = aten::slice.Tensor(%a0, 3, 0, 4) -> bf16[2,3,4,4]{96,32,8,1}@cuda
  %1 = aten::slice.Tensor(%a0, 3, 4, 9223372036854775807) -> bf16[2,3,4,4]{96,32,8,1}+4@cuda
  %2 = aten::slice_backward.default(%1, [2, 3, 4, 8], 3, 0, 4, 1) -> bf16[2,3,4,8]{96,32,8,1}@cuda
  %3 = aten::neg.default(%2) -> bf16[2,3,4,8]{96,32,8,1}@cuda
  %4 = aten::slice_backward.default(%0, [2, 3, 4, 8], 3, 4, 8, 1) -> bf16[2,3,4,8]{96,32,8,1}@cuda
  %5 = aten::add.Tensor(%3, %4) -> bf16[2,3,4,8]{96,32,8,1}@cuda
  %6 = aten::mul.Tensor(%5, %a1) -> f32[2,3,4,8]{96,32,8,1}@cuda
  return (%6)
})"));
  // Was: the neg a kernel over [2, 3, 4, 4], the cat and the mul another.
  CHECK(PartitionText(g).find("fused %2 %3 %4 %5 %6 -> %6\n") != std::string::npos);
}

TEST_CASE("a slice_backward of a negated slice negates its placed value, in the add's kernel",
          "[neg_into_index_ops]") {
  bool changed = false;
  const ir::Graph g =
      Run(std::string(kInputs) +
              R"(  %0 = aten::slice.Tensor(%a0, 3, 0, 4) -> bf16[2,3,4,4]{96,32,8,1}@cuda
  %1 = aten::slice.Tensor(%a0, 3, 4, 8) -> bf16[2,3,4,4]{96,32,8,1}+4@cuda
  %2 = aten::neg.default(%0) -> bf16[2,3,4,4]{48,16,4,1}@cuda
  %3 = aten::slice_backward.default(%2, [2, 3, 4, 8], 3, 4, 9223372036854775807, 1) -> bf16[2,3,4,8]{96,32,8,1}@cuda
  %4 = aten::slice_backward.default(%1, [2, 3, 4, 8], 3, 0, 4, 1) -> bf16[2,3,4,8]{96,32,8,1}@cuda
  %5 = aten::add.Tensor(%3, %4) -> bf16[2,3,4,8]{96,32,8,1}@cuda
  return (%5)
})",
          &changed);
  CHECK(changed);
  CHECK(ir::PrintGraph(g) ==
        Canonical(std::string(kInputs) +
                  R"(  %0 = aten::slice.Tensor(%a0, 3, 0, 4) -> bf16[2,3,4,4]{96,32,8,1}@cuda
  %1 = aten::slice.Tensor(%a0, 3, 4, 8) -> bf16[2,3,4,4]{96,32,8,1}+4@cuda
  %2 = aten::slice_backward.default(%0, [2, 3, 4, 8], 3, 4, 9223372036854775807, 1) -> bf16[2,3,4,8]{96,32,8,1}@cuda
  %3 = aten::neg.default(%2) -> bf16[2,3,4,8]{96,32,8,1}@cuda
  %4 = aten::slice_backward.default(%1, [2, 3, 4, 8], 3, 0, 4, 1) -> bf16[2,3,4,8]{96,32,8,1}@cuda
  %5 = aten::add.Tensor(%3, %4) -> bf16[2,3,4,8]{96,32,8,1}@cuda
  return (%5)
})"));
  CHECK(PartitionText(g).find("fused %2 %3 %4 %5 -> %5\n") != std::string::npos);
}

TEST_CASE("a neg with another reader, a graph output, or a cat without one stays",
          "[neg_into_index_ops]") {
  const std::string text =
      std::string(kInputs) +
      R"(  %0 = aten::slice.Tensor(%a0, 3, 0, 4) -> bf16[2,3,4,4]{96,32,8,1}@cuda
  %1 = aten::slice.Tensor(%a0, 3, 4, 8) -> bf16[2,3,4,4]{96,32,8,1}+4@cuda
  %2 = aten::neg.default(%1) -> bf16[2,3,4,4]{48,16,4,1}@cuda
  %3 = aten::cat.default([%2, %0], -1) -> bf16[2,3,4,8]{96,32,8,1}@cuda
  %4 = aten::neg.default(%0) -> bf16[2,3,4,4]{48,16,4,1}@cuda
  %5 = aten::slice_backward.default(%4, [2, 3, 4, 8], 3, 4, 8, 1) -> bf16[2,3,4,8]{96,32,8,1}@cuda
  %6 = aten::cat.default([%1, %0], -1) -> bf16[2,3,4,8]{96,32,8,1}@cuda
  return (%3, %2, %5, %4, %6)
})";
  bool changed = true;
  const ir::Graph g = Run(text, &changed);
  CHECK_FALSE(changed);
  CHECK(ir::PrintGraph(g) == Canonical(text));
}

}  // namespace
}  // namespace tccd::codegen

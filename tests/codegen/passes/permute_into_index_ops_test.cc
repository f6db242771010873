// PermuteIntoIndexOps: IR text in, IR text out (after dead-code elimination), and the fusion
// partition it enables.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/dead_code_elimination.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/permute_into_index_ops.h"

namespace tccd::codegen {
namespace {

ir::Graph Parse(const std::string& text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return *std::move(g);
}

// The pass, then dead-code elimination (the op the permute read is left without readers).
ir::Graph Run(const std::string& text, bool* changed) {
  ir::Graph g = Parse(text);
  PermuteIntoIndexOps pass;
  absl::StatusOr<bool> c = pass.Run(g);
  REQUIRE(c.ok());
  *changed = *c;
  DeadCodeElimination dce;
  REQUIRE(dce.Run(g).ok());
  return g;
}

std::string Canonical(const std::string& text) { return ir::PrintGraph(Parse(text)); }

TEST_CASE("ViT's q/k/v gradient stack, permuted and cloned, becomes a stack over the clone's space",
          "[permute_into_index_ops]") {
  constexpr char kInputs[] =
      "graph(%a0: bf16[2,3,5,4]{60,20,4,1}@cuda, %a1: bf16[2,3,5,4]{60,20,4,1}@cuda, "
      "%a2: bf16[2,3,5,4]{60,20,4,1}@cuda) {\n";
  bool changed = false;
  const ir::Graph g =
      Run(std::string(kInputs) +
              R"(  %0 = aten::stack.default([%a0, %a1, %a2]) -> bf16[3,2,3,5,4]{120,60,20,4,1}@cuda
  %1 = aten::permute.default(%0, [1, 3, 0, 2, 4]) -> bf16[2,5,3,3,4]{60,4,120,20,1}@cuda
  %2 = aten::clone.default(%1, memory_format=memory_format(0)) -> bf16[2,5,3,3,4]{180,36,12,4,1}@cuda
  %3 = aten::view.default(%2, [10, 36]) -> bf16[10,36]{36,1}@cuda
  return (%3)
})",
          &changed);
  CHECK(changed);
  CHECK(
      ir::PrintGraph(g) ==
      Canonical(std::string(kInputs) +
                R"(  %0 = aten::permute.default(%a0, [0, 2, 1, 3]) -> bf16[2,5,3,4]{60,4,20,1}@cuda
  %1 = aten::permute.default(%a1, [0, 2, 1, 3]) -> bf16[2,5,3,4]{60,4,20,1}@cuda
  %2 = aten::permute.default(%a2, [0, 2, 1, 3]) -> bf16[2,5,3,4]{60,4,20,1}@cuda
  %3 = aten::stack.default([%0, %1, %2], 2) -> bf16[2,5,3,3,4]{180,36,12,4,1}@cuda
  %4 = aten::clone.default(%3, memory_format=memory_format(0)) -> bf16[2,5,3,3,4]{180,36,12,4,1}@cuda
  %5 = aten::view.default(%4, [10, 36]) -> bf16[10,36]{36,1}@cuda
  return (%5)
})"));
  // The stack and the clone are now one kernel over the clone's space.
  absl::StatusOr<Partition> p = PartitionForFusion(g, FusionOptions{});
  REQUIRE(p.ok());
  CHECK(PrintPartition(g, *p).find("fused %3 %4 -> %4\n") != std::string::npos);
}

TEST_CASE("a permuted cat and a transposed pad, read by pointwise ops, gather permuted inputs",
          "[permute_into_index_ops]") {
  constexpr char kInputs[] =
      "graph(%a0: f32[2,3,4]{12,4,1}@cpu, %a1: f32[2,5,4]{20,4,1}@cpu, %a2: f32[2,3]{3,1}@cpu) {\n";
  bool changed = false;
  const ir::Graph g = Run(
      std::string(kInputs) + R"(  %0 = aten::cat.default([%a0, %a1], -2) -> f32[2,8,4]{32,4,1}@cpu
  %1 = aten::permute.default(%0, [2, 0, 1]) -> f32[4,2,8]{1,32,4}@cpu
  %2 = aten::neg.default(%1) -> f32[4,2,8]{16,8,1}@cpu
  %3 = aten::constant_pad_nd.default(%a2, [1, 2], 0.5) -> f32[2,6]{6,1}@cpu
  %4 = aten::transpose.int(%3, -1, 0) -> f32[6,2]{1,6}@cpu
  %5 = aten::mul.Tensor(%4, %4) -> f32[6,2]{2,1}@cpu
  return (%2, %5)
})",
      &changed);
  CHECK(changed);
  CHECK(ir::PrintGraph(g) ==
        Canonical(std::string(kInputs) +
                  R"(  %0 = aten::permute.default(%a0, [2, 0, 1]) -> f32[4,2,3]{1,12,4}@cpu
  %1 = aten::permute.default(%a1, [2, 0, 1]) -> f32[4,2,5]{1,20,4}@cpu
  %2 = aten::cat.default([%0, %1], 2) -> f32[4,2,8]{16,8,1}@cpu
  %3 = aten::neg.default(%2) -> f32[4,2,8]{16,8,1}@cpu
  %4 = aten::permute.default(%a2, [1, 0]) -> f32[3,2]{1,3}@cpu
  %5 = aten::constant_pad_nd.default(%4, [0, 0, 1, 2], 0.5) -> f32[6,2]{2,1}@cpu
  %6 = aten::mul.Tensor(%5, %5) -> f32[6,2]{2,1}@cpu
  return (%3, %6)
})"));
}

TEST_CASE(
    "permutes of shared or returned index ops, read by a matmul, or with contradicting sizes stay",
    "[permute_into_index_ops]") {
  bool changed = true;
  Run(R"(graph(%a0: f32[2,3]{3,1}@cpu, %a1: f32[2,3]{3,1}@cpu, %a2: f32[3,4]{4,1}@cpu) {
  %0 = aten::stack.default([%a0, %a1]) -> f32[2,2,3]{6,3,1}@cpu
  %1 = aten::permute.default(%0, [1, 0, 2]) -> f32[2,2,3]{3,6,1}@cpu
  %2 = aten::neg.default(%1) -> f32[2,2,3]{6,3,1}@cpu
  %3 = aten::neg.default(%0) -> f32[2,2,3]{6,3,1}@cpu
  %4 = aten::cat.default([%a0, %a1], 1) -> f32[2,6]{6,1}@cpu
  %5 = aten::permute.default(%4, [1, 0]) -> f32[6,2]{1,6}@cpu
  %6 = aten::cat.default([%a0, %a1]) -> f32[4,3]{3,1}@cpu
  %7 = aten::permute.default(%6, [1, 0]) -> f32[3,4]{1,3}@cpu
  %8 = aten::mm.default(%7, %a2) -> f32[3,4]{4,1}@cpu
  %9 = aten::permute.default(%0, [0, 1, 2]) -> f32[2,2,3]{6,3,1}@cpu
  %10 = aten::stack.default([%a0, %a1]) -> f32[2,2,3]{6,3,1}@cpu
  %11 = aten::permute.default(%10, [2, 0, 1]) -> f32[2,3,2]{1,6,3}@cpu
  %12 = aten::neg.default(%11) -> f32[2,3,2]{6,2,1}@cpu
  return (%2, %3, %5, %8, %12)
})",
      &changed);
  CHECK(!changed);
}

}  // namespace
}  // namespace tccd::codegen

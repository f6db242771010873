// ColumnSumSplit: IR text in, IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/column_sum_split.h"

namespace tccd::codegen {
namespace {

std::string Run(const std::string& text, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  ColumnSumSplit pass;
  absl::StatusOr<bool> c = pass.Run(*g);
  REQUIRE(c.ok());
  *changed = *c;
  return ir::PrintGraph(*g);
}

std::string Canonical(const std::string& text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return ir::PrintGraph(*g);
}

// An MLP's first bias gradient: the GELU backward (also the matmul's operand) summed over 16384
// tokens of 384 columns, as ConvNeXt's first stage has it (bf16, keepdim, cast to f32 after).
constexpr char kMlp[] =
    R"(graph(%a0: bf16[16384,384]{384,1}@cuda, %a1: bf16[16384,384]{384,1}@cuda, %a2: bf16[384,96]{96,1}@cuda) {
  %0 = aten::gelu_backward.default(%a0, %a1) -> bf16[16384,384]{384,1}@cuda
  %1 = aten::mm.default(%0, %a2) -> bf16[16384,96]{96,1}@cuda
  %2 = aten::sum.dim_IntList(%0, [0], true) -> bf16[1,384]{384,1}@cuda
  %3 = aten::_to_copy.default(%2, dtype=f32) -> f32[1,384]{384,1}@cuda
  return (%1, %3)
})";

TEST_CASE("a narrow bias gradient is two column sums, its producer over the split view",
          "[column_sum_split]") {
  bool changed = false;
  const std::string out = Run(kMlp, &changed);
  CHECK(changed);
  // B = 8 (8 x 384 >= 2048 stage-one columns), A = 2048; the matmul reads the GELU backward
  // through a view, stage one reads it directly (one column kernel stores it and sums it), and
  // stage two keeps the result's [1, 384] so that the casts after it join its kernel.
  CHECK(
      out ==
      Canonical(
          R"(graph(%a0: bf16[16384,384]{384,1}@cuda, %a1: bf16[16384,384]{384,1}@cuda, %a2: bf16[384,96]{96,1}@cuda) {
  %0 = aten::view.default(%a0, [2048, 8, 384]) -> bf16[2048,8,384]{3072,384,1}@cuda
  %1 = aten::view.default(%a1, [2048, 8, 384]) -> bf16[2048,8,384]{3072,384,1}@cuda
  %2 = aten::gelu_backward.default(%0, %1) -> bf16[2048,8,384]{3072,384,1}@cuda
  %3 = aten::view.default(%2, [16384, 384]) -> bf16[16384,384]{384,1}@cuda
  %4 = aten::mm.default(%3, %a2) -> bf16[16384,96]{96,1}@cuda
  %5 = aten::_to_copy.default(%2, dtype=f32) -> f32[2048,8,384]{3072,384,1}@cuda
  %6 = aten::sum.dim_IntList(%5, [0]) -> f32[8,384]{384,1}@cuda
  %7 = aten::sum.dim_IntList(%6, [0], true) -> f32[1,384]{384,1}@cuda
  %8 = aten::_to_copy.default(%7, dtype=bf16) -> bf16[1,384]{384,1}@cuda
  %9 = aten::_to_copy.default(%8, dtype=f32) -> f32[1,384]{384,1}@cuda
  return (%4, %9)
})"));
  bool again = true;
  Run(out, &again);
  CHECK_FALSE(again);  // the stage sums are wide or short: nothing left to split
}

TEST_CASE("a narrow sum of a graph input or a matmul's output is split alone",
          "[column_sum_split]") {
  bool changed = false;
  const std::string out = Run(R"(graph(%a0: bf16[16384,384]{384,1}@cuda) {
  %0 = aten::sum.dim_IntList(%a0, [0]) -> bf16[384]{1}@cuda
  return (%0)
})",
                              &changed);
  CHECK(changed);
  CHECK(out == Canonical(R"(graph(%a0: bf16[16384,384]{384,1}@cuda) {
  %0 = aten::view.default(%a0, [2048, 8, 384]) -> bf16[2048,8,384]{3072,384,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=f32) -> f32[2048,8,384]{3072,384,1}@cuda
  %2 = aten::sum.dim_IntList(%1, [0]) -> f32[8,384]{384,1}@cuda
  %3 = aten::sum.dim_IntList(%2, [0], false) -> f32[384]{1}@cuda
  %4 = aten::_to_copy.default(%3, dtype=bf16) -> bf16[384]{1}@cuda
  return (%4)
})"));
}

TEST_CASE("nothing to do: wide, small or sibling sums, producers with broadcast operands, the CPU",
          "[column_sum_split]") {
  for (const char* text :
       {// 1024 columns: the column kernel's own tiles fill the GPU.
        R"(graph(%a0: bf16[16384,1024]{1024,1}@cuda) {
  %0 = aten::sum.dim_IntList(%a0, [0]) -> bf16[1024]{1}@cuda
  return (%0)
})",
        // 2M elements: the second launch would cost what the split saves.
        R"(graph(%a0: bf16[8192,256]{256,1}@cuda) {
  %0 = aten::sum.dim_IntList(%a0, [0]) -> bf16[256]{1}@cuda
  return (%0)
})",
        // A producer with a per-column operand stays fused with the one-kernel sum.
        R"(graph(%a0: bf16[16384,384]{384,1}@cuda, %a1: bf16[384]{1}@cuda) {
  %0 = aten::mul.Tensor(%a0, %a1) -> bf16[16384,384]{384,1}@cuda
  %1 = aten::sum.dim_IntList(%0, [0]) -> bf16[384]{1}@cuda
  return (%0, %1)
})",
        // Two column sums over the same rows: horizontal fusion makes them one pass.
        R"(graph(%a0: bf16[16384,384]{384,1}@cuda) {
  %0 = aten::sum.dim_IntList(%a0, [0]) -> bf16[384]{1}@cuda
  %1 = aten::sum.dim_IntList(%a0, [0], true) -> bf16[1,384]{384,1}@cuda
  return (%0, %1)
})",
        // Row sums are not column sums.
        R"(graph(%a0: bf16[16384,384]{384,1}@cuda) {
  %0 = aten::sum.dim_IntList(%a0, [1]) -> bf16[16384]{1}@cuda
  return (%0)
})",
        R"(graph(%a0: bf16[16384,384]{384,1}@cpu) {
  %0 = aten::sum.dim_IntList(%a0, [0]) -> bf16[384]{1}@cpu
  return (%0)
})",
        // A sum without arguments (a malformed request, found by the request fuzzer: the pass
        // read its first argument) stays an extern op for ATen to refuse.
        R"(graph(%a0: f32[4,6]{6,1}@cuda) {
  %0 = aten::sum.dim_IntList() -> f32[6]{1}@cuda
  return (%0)
})"}) {
    INFO(text);
    bool changed = true;
    const std::string out = Run(text, &changed);
    CHECK_FALSE(changed);
    CHECK(out == Canonical(text));
  }
}

}  // namespace
}  // namespace tccd::codegen

// LayerNormParamGradSplit: IR text in, IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/layer_norm_param_grad_split.h"

namespace tccd::codegen {
namespace {

std::string Run(const std::string& text, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  LayerNormParamGradSplit pass;
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

// A LayerNorm2d's column half: 8 channels of [2, 16, 16] pixels, the permuted map contiguous
// (M = 512 rows of N = 8), bf16 maps, f32 statistics and parameters.
constexpr char kInputs[] =
    "graph(%a0: bf16[2,16,16,8]{2048,128,8,1}@cuda, %a1: bf16[2,16,16,8]{2048,128,8,1}@cuda, "
    "%a2: f32[2,16,16,1]{256,16,1,1}@cuda, %a3: f32[2,16,16,1]{256,16,1,1}@cuda, "
    "%a4: f32[8]{1}@cuda, %a5: f32[8]{1}@cuda) {\n";

TEST_CASE("a narrow layer norm's parameter gradients become two-stage column sums",
          "[ln_param_grad_split]") {
  bool changed = false;
  const std::string out = Run(
      std::string(kInputs) +
          R"(  %0 = aten::native_layer_norm_backward.default(%a0, %a1, [8], %a2, %a3, %a4, %a5, [false, true, true]) -> (bf16[0]{1}@cuda, f32[8]{1}@cuda, f32[8]{1}@cuda)
  return (%0#1, %0#2)
})",
      &changed);
  CHECK(changed);
  // B = 2 (A = 256 rows, the fewest a stage-one column keeps); the two stage-one sums read the
  // same rows (one column kernel), each casting g itself.
  CHECK(out ==
        Canonical(std::string(kInputs) +
                  R"(  %0 = aten::view.default(%a1, [256, 2, 8]) -> bf16[256,2,8]{16,8,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=f32) -> f32[256,2,8]{16,8,1}@cuda
  %2 = aten::view.default(%a2, [256, 2, 1]) -> f32[256,2,1]{2,1,1}@cuda
  %3 = aten::sub.Tensor(%1, %2) -> f32[256,2,8]{16,8,1}@cuda
  %4 = aten::view.default(%a3, [256, 2, 1]) -> f32[256,2,1]{2,1,1}@cuda
  %5 = aten::mul.Tensor(%3, %4) -> f32[256,2,8]{16,8,1}@cuda
  %6 = aten::view.default(%a0, [256, 2, 8]) -> bf16[256,2,8]{16,8,1}@cuda
  %7 = aten::_to_copy.default(%6, dtype=f32) -> f32[256,2,8]{16,8,1}@cuda
  %8 = aten::mul.Tensor(%7, %5) -> f32[256,2,8]{16,8,1}@cuda
  %9 = aten::sum.dim_IntList(%8, [0]) -> f32[2,8]{8,1}@cuda
  %10 = aten::sum.dim_IntList(%9, [0]) -> f32[8]{1}@cuda
  %11 = aten::view.default(%a0, [256, 2, 8]) -> bf16[256,2,8]{16,8,1}@cuda
  %12 = aten::_to_copy.default(%11, dtype=f32) -> f32[256,2,8]{16,8,1}@cuda
  %13 = aten::sum.dim_IntList(%12, [0]) -> f32[2,8]{8,1}@cuda
  %14 = aten::sum.dim_IntList(%13, [0]) -> f32[8]{1}@cuda
  return (%10, %14)
})"));
  bool again = true;
  Run(out, &again);
  CHECK_FALSE(again);  // nothing left to split
}

TEST_CASE("nothing to do: wide norms, grad_input wanted, non-contiguous rows",
          "[ln_param_grad_split]") {
  bool changed = true;
  // 2048 columns fill the GPU without a split.
  Run(R"(graph(%a0: bf16[512,2048]{2048,1}@cuda, %a1: bf16[512,2048]{2048,1}@cuda, %a2: f32[512,1]{1,1}@cuda, %a3: f32[512,1]{1,1}@cuda, %a4: f32[2048]{1}@cuda, %a5: f32[2048]{1}@cuda) {
  %0 = aten::native_layer_norm_backward.default(%a0, %a1, [2048], %a2, %a3, %a4, %a5, [false, true, true]) -> (bf16[0]{1}@cuda, f32[2048]{1}@cuda, f32[2048]{1}@cuda)
  return (%0#1, %0#2)
})",
      &changed);
  CHECK_FALSE(changed);
  changed = true;
  // The unsplit node (layer_norm_backward_split.h runs first).
  Run(std::string(kInputs) +
          R"(  %0 = aten::native_layer_norm_backward.default(%a0, %a1, [8], %a2, %a3, %a4, %a5, [true, true, true]) -> (bf16[2,16,16,8]{2048,128,8,1}@cuda, f32[8]{1}@cuda, f32[8]{1}@cuda)
  return (%0, %0#1, %0#2)
})",
      &changed);
  CHECK_FALSE(changed);
  changed = true;
  // g read through a permute (not rows of memory): the ATen node's column kernel reads it.
  Run(R"(graph(%a0: bf16[2,16,16,8]{2048,8,128,1}@cuda, %a1: bf16[2,16,16,8]{2048,128,8,1}@cuda, %a2: f32[2,16,16,1]{256,16,1,1}@cuda, %a3: f32[2,16,16,1]{256,16,1,1}@cuda, %a4: f32[8]{1}@cuda, %a5: f32[8]{1}@cuda) {
  %0 = aten::native_layer_norm_backward.default(%a0, %a1, [8], %a2, %a3, %a4, %a5, [false, true, true]) -> (bf16[0]{1}@cuda, f32[8]{1}@cuda, f32[8]{1}@cuda)
  return (%0#1, %0#2)
})",
      &changed);
  CHECK_FALSE(changed);
}

}  // namespace
}  // namespace tccd::codegen

// LayerNormParamGradSplit: IR text in, IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/layer_norm_param_grad_split.h"

namespace tccd::codegen {
namespace {

std::string Run(const std::string& text, bool* changed, bool narrow_gradient = true) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  LayerNormParamGradSplit pass({.narrow_gradient = narrow_gradient});
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
  // same rows (one column kernel) through one view of g, each casting it itself.
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
  %11 = aten::_to_copy.default(%6, dtype=f32) -> f32[256,2,8]{16,8,1}@cuda
  %12 = aten::sum.dim_IntList(%11, [0]) -> f32[2,8]{8,1}@cuda
  %13 = aten::sum.dim_IntList(%12, [0]) -> f32[8]{1}@cuda
  return (%10, %13)
})"));
  bool again = true;
  Run(out, &again);
  CHECK_FALSE(again);  // nothing left to split
}

// A transformer's norm under autocast (ViT, BERT, GPT-2: x f32, the gradient the f32 cast of a
// bf16 matmul gradient [tokens, N] viewed as [batch, seq, N]), both halves.
constexpr char kAutocastInputs[] =
    "graph(%a0: bf16[1024,8]{8,1}@cuda, %a1: f32[2,512,8]{4096,8,1}@cuda, "
    "%a2: f32[2,512,1]{512,1,1}@cuda, %a3: f32[2,512,1]{512,1,1}@cuda, "
    "%a4: f32[8]{1}@cuda, %a5: f32[8]{1}@cuda) {\n"
    "  %0 = aten::view.default(%a0, [2, 512, 8]) -> bf16[2,512,8]{4096,8,1}@cuda\n"
    "  %1 = aten::_to_copy.default(%0, dtype=f32) -> f32[2,512,8]{4096,8,1}@cuda\n";

TEST_CASE("the parameter-gradient sums read the bf16 gradient the f32 one was cast from",
          "[ln_param_grad_split]") {
  const std::string in = std::string(kAutocastInputs) +
                         R"(  %2 = aten::native_layer_norm_backward.default(%1, %a1, [8], %a2, %a3, %a4, %a5, [true, false, false]) -> (f32[2,512,8]{4096,8,1}@cuda, f32[0]{1}@cuda, f32[0]{1}@cuda)
  %3 = aten::native_layer_norm_backward.default(%1, %a1, [8], %a2, %a3, %a4, %a5, [false, true, true]) -> (f32[0]{1}@cuda, f32[8]{1}@cuda, f32[8]{1}@cuda)
  return (%2, %3#1, %3#2)
})";
  bool changed = false;
  const std::string out = Run(in, &changed);
  CHECK(changed);
  // 1024 rows of 8: B = 4 (A = 256, the fewest rows a stage-one column keeps). Both sums read
  // one view of the bf16 %0 and cast it themselves; nothing they read is the f32 %1, which only
  // the row half reads (its kernel's prologue).
  CHECK(out == Canonical(std::string(kAutocastInputs) +
                         R"(  %2 = aten::native_layer_norm_backward.default(%1, %a1, [8], %a2, %a3, %a4, %a5, [true, false, false]) -> (f32[2,512,8]{4096,8,1}@cuda, f32[0]{1}@cuda, f32[0]{1}@cuda)
  %3 = aten::view.default(%a1, [256, 4, 8]) -> f32[256,4,8]{32,8,1}@cuda
  %4 = aten::view.default(%a2, [256, 4, 1]) -> f32[256,4,1]{4,1,1}@cuda
  %5 = aten::sub.Tensor(%3, %4) -> f32[256,4,8]{32,8,1}@cuda
  %6 = aten::view.default(%a3, [256, 4, 1]) -> f32[256,4,1]{4,1,1}@cuda
  %7 = aten::mul.Tensor(%5, %6) -> f32[256,4,8]{32,8,1}@cuda
  %8 = aten::view.default(%0, [256, 4, 8]) -> bf16[256,4,8]{32,8,1}@cuda
  %9 = aten::_to_copy.default(%8, dtype=f32) -> f32[256,4,8]{32,8,1}@cuda
  %10 = aten::mul.Tensor(%9, %7) -> f32[256,4,8]{32,8,1}@cuda
  %11 = aten::sum.dim_IntList(%10, [0]) -> f32[4,8]{8,1}@cuda
  %12 = aten::sum.dim_IntList(%11, [0]) -> f32[8]{1}@cuda
  %13 = aten::_to_copy.default(%8, dtype=f32) -> f32[256,4,8]{32,8,1}@cuda
  %14 = aten::sum.dim_IntList(%13, [0]) -> f32[4,8]{8,1}@cuda
  %15 = aten::sum.dim_IntList(%14, [0]) -> f32[8]{1}@cuda
  return (%2, %12, %15)
})"));
  // The knob off (layer-norm-grad-narrow-reads disabled): the sums read views of the f32 cast,
  // one view per use, as before.
  bool off_changed = false;
  const std::string off = Run(in, &off_changed, /*narrow_gradient=*/false);
  CHECK(off_changed);
  CHECK(off == Canonical(std::string(kAutocastInputs) +
                         R"(  %2 = aten::native_layer_norm_backward.default(%1, %a1, [8], %a2, %a3, %a4, %a5, [true, false, false]) -> (f32[2,512,8]{4096,8,1}@cuda, f32[0]{1}@cuda, f32[0]{1}@cuda)
  %3 = aten::view.default(%a1, [256, 4, 8]) -> f32[256,4,8]{32,8,1}@cuda
  %4 = aten::view.default(%a2, [256, 4, 1]) -> f32[256,4,1]{4,1,1}@cuda
  %5 = aten::sub.Tensor(%3, %4) -> f32[256,4,8]{32,8,1}@cuda
  %6 = aten::view.default(%a3, [256, 4, 1]) -> f32[256,4,1]{4,1,1}@cuda
  %7 = aten::mul.Tensor(%5, %6) -> f32[256,4,8]{32,8,1}@cuda
  %8 = aten::view.default(%1, [256, 4, 8]) -> f32[256,4,8]{32,8,1}@cuda
  %9 = aten::mul.Tensor(%8, %7) -> f32[256,4,8]{32,8,1}@cuda
  %10 = aten::sum.dim_IntList(%9, [0]) -> f32[4,8]{8,1}@cuda
  %11 = aten::sum.dim_IntList(%10, [0]) -> f32[8]{1}@cuda
  %12 = aten::view.default(%1, [256, 4, 8]) -> f32[256,4,8]{32,8,1}@cuda
  %13 = aten::sum.dim_IntList(%12, [0]) -> f32[4,8]{8,1}@cuda
  %14 = aten::sum.dim_IntList(%13, [0]) -> f32[8]{1}@cuda
  return (%2, %11, %14)
})"));
}

TEST_CASE("the sums keep the f32 gradient where it is no cast of a matmul's 16-bit result",
          "[ln_param_grad_split]") {
  // The bf16 source is a pointwise op's value: reshape-sinking would move the cast of its view
  // onto that op's kernel (an f32 copy stored beside the bf16 one), so the sums read g.
  const std::string in = std::string(kAutocastInputs) +
                         R"(  %2 = aten::mul.Tensor(%0, %0) -> bf16[2,512,8]{4096,8,1}@cuda
  %3 = aten::_to_copy.default(%2, dtype=f32) -> f32[2,512,8]{4096,8,1}@cuda
  %4 = aten::native_layer_norm_backward.default(%3, %a1, [8], %a2, %a3, %a4, %a5, [false, true, false]) -> (f32[0]{1}@cuda, f32[8]{1}@cuda, f32[0]{1}@cuda)
  return (%1, %4#1)
})";
  bool changed = false;
  const std::string out = Run(in, &changed);
  CHECK(changed);
  CHECK(out == Canonical(std::string(kAutocastInputs) +
                         R"(  %2 = aten::mul.Tensor(%0, %0) -> bf16[2,512,8]{4096,8,1}@cuda
  %3 = aten::_to_copy.default(%2, dtype=f32) -> f32[2,512,8]{4096,8,1}@cuda
  %4 = aten::view.default(%a1, [256, 4, 8]) -> f32[256,4,8]{32,8,1}@cuda
  %5 = aten::view.default(%a2, [256, 4, 1]) -> f32[256,4,1]{4,1,1}@cuda
  %6 = aten::sub.Tensor(%4, %5) -> f32[256,4,8]{32,8,1}@cuda
  %7 = aten::view.default(%a3, [256, 4, 1]) -> f32[256,4,1]{4,1,1}@cuda
  %8 = aten::mul.Tensor(%6, %7) -> f32[256,4,8]{32,8,1}@cuda
  %9 = aten::view.default(%3, [256, 4, 8]) -> f32[256,4,8]{32,8,1}@cuda
  %10 = aten::mul.Tensor(%9, %8) -> f32[256,4,8]{32,8,1}@cuda
  %11 = aten::sum.dim_IntList(%10, [0]) -> f32[4,8]{8,1}@cuda
  %12 = aten::sum.dim_IntList(%11, [0]) -> f32[8]{1}@cuda
  return (%1, %12)
})"));
}

TEST_CASE("x read as the bf16 tensor CUDA autocast cast up for the norm", "[ln_param_grad_split]") {
  // ConvNeXt under CUDA autocast: the norm runs in f32 on a cast of the bf16 activation (%a6).
  const std::string inputs =
      "graph(%a0: bf16[1024,8]{8,1}@cuda, %a1: f32[2,512,8]{4096,8,1}@cuda, "
      "%a2: f32[2,512,1]{512,1,1}@cuda, %a3: f32[2,512,1]{512,1,1}@cuda, "
      "%a4: f32[8]{1}@cuda, %a5: f32[8]{1}@cuda, %a6: bf16[2,512,8]{4096,8,1}@cuda) {\n"
      "  %0 = aten::view.default(%a0, [2, 512, 8]) -> bf16[2,512,8]{4096,8,1}@cuda\n"
      "  %1 = aten::_to_copy.default(%0, dtype=f32) -> f32[2,512,8]{4096,8,1}@cuda\n"
      "  %2 = aten::_to_copy.default(%a6, dtype=f32, layout=layout(0), device=device(cuda)) -> "
      "f32[2,512,8]{4096,8,1}@cuda\n";
  bool changed = false;
  const std::string out = Run(inputs + R"(  %3 = aten::native_layer_norm_backward.default(%1, %2, [8], %a2, %a3, %a4, %a5, [false, true, false]) -> (f32[0]{1}@cuda, f32[8]{1}@cuda, f32[0]{1}@cuda)
  return (%3#1)
})",
                              &changed);
  CHECK(changed);
  CHECK(out == Canonical(inputs + R"(  %3 = aten::view.default(%a6, [256, 4, 8]) -> bf16[256,4,8]{32,8,1}@cuda
  %4 = aten::_to_copy.default(%3, dtype=f32) -> f32[256,4,8]{32,8,1}@cuda
  %5 = aten::view.default(%a2, [256, 4, 1]) -> f32[256,4,1]{4,1,1}@cuda
  %6 = aten::sub.Tensor(%4, %5) -> f32[256,4,8]{32,8,1}@cuda
  %7 = aten::view.default(%a3, [256, 4, 1]) -> f32[256,4,1]{4,1,1}@cuda
  %8 = aten::mul.Tensor(%6, %7) -> f32[256,4,8]{32,8,1}@cuda
  %9 = aten::view.default(%0, [256, 4, 8]) -> bf16[256,4,8]{32,8,1}@cuda
  %10 = aten::_to_copy.default(%9, dtype=f32) -> f32[256,4,8]{32,8,1}@cuda
  %11 = aten::mul.Tensor(%10, %8) -> f32[256,4,8]{32,8,1}@cuda
  %12 = aten::sum.dim_IntList(%11, [0]) -> f32[4,8]{8,1}@cuda
  %13 = aten::sum.dim_IntList(%12, [0]) -> f32[8]{1}@cuda
  return (%13)
})"));
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

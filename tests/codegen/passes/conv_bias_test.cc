// ConvBiasPeel and ConvBackwardBiasGrad: IR text in, IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/conv_backward_bias_grad.h"
#include "codegen/passes/conv_bias_peel.h"

namespace tccd::codegen {
namespace {

std::string Run(GraphPass& pass, const std::string& text, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
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

// ConvNeXt's depthwise 7x7 convolution, bf16, channels-last (as ChannelsLastLayout leaves it).
constexpr char kDepthwise[] =
    "graph(%a0: bf16[2,8,6,6]{288,1,48,8}@cuda, %a1: bf16[8,1,7,7]{49,49,7,1}@cuda, %a2: "
    "bf16[8]{1}@cuda) {\n";

TEST_CASE("a CUDA convolution's bias becomes a broadcast add in the output's layout",
          "[conv_bias_peel]") {
  ConvBiasPeel pass;
  bool changed = false;
  const std::string out = Run(
      pass,
      std::string(kDepthwise) +
          R"(  %0 = aten::convolution.default(%a0, %a1, %a2, [1, 1], [3, 3], [1, 1], false, [0, 0], 8) -> bf16[2,8,6,6]{288,1,48,8}@cuda
  %1 = aten::relu.default(%0) -> bf16[2,8,6,6]{288,1,48,8}@cuda
  return (%1)
})",
      &changed);
  CHECK(changed);
  CHECK(
      out ==
      Canonical(
          std::string(kDepthwise) +
          R"(  %0 = aten::convolution.default(%a0, %a1, None, [1, 1], [3, 3], [1, 1], false, [0, 0], 8) -> bf16[2,8,6,6]{288,1,48,8}@cuda
  %1 = aten::view.default(%a2, [8, 1, 1]) -> bf16[8,1,1]{1,1,1}@cuda
  %2 = aten::expand.default(%1, [2, 8, 6, 6]) -> bf16[2,8,6,6]{0,1,0,0}@cuda
  %3 = aten::add.Tensor(%0, %2) -> bf16[2,8,6,6]{288,1,48,8}@cuda
  %4 = aten::relu.default(%3) -> bf16[2,8,6,6]{288,1,48,8}@cuda
  return (%4)
})"));
  // Nothing to do the second time: the convolution has no bias now.
  bool again = true;
  Run(pass, out, &again);
  CHECK_FALSE(again);
}

TEST_CASE("a convolution read only by permutes gets its bias added after them (a norm's prologue)",
          "[conv_bias_peel]") {
  ConvBiasPeel pass;
  bool changed = false;
  const std::string out = Run(
      pass,
      std::string(kDepthwise) +
          R"(  %0 = aten::convolution.default(%a0, %a1, %a2, [1, 1], [3, 3], [1, 1], false, [0, 0], 8) -> bf16[2,8,6,6]{288,1,48,8}@cuda
  %1 = aten::permute.default(%0, [0, 2, 3, 1]) -> bf16[2,6,6,8]{288,48,8,1}@cuda
  %2 = aten::permute.default(%0, [1, 0, 2, 3]) -> bf16[8,2,6,6]{1,288,48,8}@cuda
  return (%1, %2)
})",
      &changed);
  CHECK(changed);
  CHECK(
      out ==
      Canonical(
          std::string(kDepthwise) +
          R"(  %0 = aten::convolution.default(%a0, %a1, None, [1, 1], [3, 3], [1, 1], false, [0, 0], 8) -> bf16[2,8,6,6]{288,1,48,8}@cuda
  %1 = aten::permute.default(%0, [0, 2, 3, 1]) -> bf16[2,6,6,8]{288,48,8,1}@cuda
  %2 = aten::expand.default(%a2, [2, 6, 6, 8]) -> bf16[2,6,6,8]{0,0,0,1}@cuda
  %3 = aten::add.Tensor(%1, %2) -> bf16[2,6,6,8]{288,48,8,1}@cuda
  %4 = aten::permute.default(%0, [1, 0, 2, 3]) -> bf16[8,2,6,6]{1,288,48,8}@cuda
  %5 = aten::view.default(%a2, [8, 1, 1, 1]) -> bf16[8,1,1,1]{1,1,1,1}@cuda
  %6 = aten::expand.default(%5, [8, 2, 6, 6]) -> bf16[8,2,6,6]{1,0,0,0}@cuda
  %7 = aten::add.Tensor(%4, %6) -> bf16[8,2,6,6]{1,288,48,8}@cuda
  return (%3, %7)
})"));
  // Read by a permute and by the graph's outputs: the add stays in the convolution's space.
  changed = false;
  const std::string kept = Run(
      pass,
      std::string(kDepthwise) +
          R"(  %0 = aten::convolution.default(%a0, %a1, %a2, [1, 1], [3, 3], [1, 1], false, [0, 0], 8) -> bf16[2,8,6,6]{288,1,48,8}@cuda
  %1 = aten::permute.default(%0, [0, 2, 3, 1]) -> bf16[2,6,6,8]{288,48,8,1}@cuda
  return (%0, %1)
})",
      &changed);
  CHECK(changed);
  CHECK(
      kept ==
      Canonical(
          std::string(kDepthwise) +
          R"(  %0 = aten::convolution.default(%a0, %a1, None, [1, 1], [3, 3], [1, 1], false, [0, 0], 8) -> bf16[2,8,6,6]{288,1,48,8}@cuda
  %1 = aten::view.default(%a2, [8, 1, 1]) -> bf16[8,1,1]{1,1,1}@cuda
  %2 = aten::expand.default(%1, [2, 8, 6, 6]) -> bf16[2,8,6,6]{0,1,0,0}@cuda
  %3 = aten::add.Tensor(%0, %2) -> bf16[2,8,6,6]{288,1,48,8}@cuda
  %4 = aten::permute.default(%3, [0, 2, 3, 1]) -> bf16[2,6,6,8]{288,48,8,1}@cuda
  return (%3, %4)
})"));
}

TEST_CASE("1-D f32 convolutions peel too; the bias add keeps the graph output",
          "[conv_bias_peel]") {
  ConvBiasPeel pass;
  bool changed = false;
  const std::string out = Run(
      pass,
      R"(graph(%a0: f32[2,3,10]{30,10,1}@cuda, %a1: f32[4,3,3]{9,3,1}@cuda, %a2: f32[4]{1}@cuda) {
  %0 = aten::convolution.default(%a0, %a1, %a2, [1], [1], [1], false, [0], 1) -> f32[2,4,10]{40,10,1}@cuda
  return (%0)
})",
      &changed);
  CHECK(changed);
  CHECK(
      out ==
      Canonical(
          R"(graph(%a0: f32[2,3,10]{30,10,1}@cuda, %a1: f32[4,3,3]{9,3,1}@cuda, %a2: f32[4]{1}@cuda) {
  %0 = aten::convolution.default(%a0, %a1, None, [1], [1], [1], false, [0], 1) -> f32[2,4,10]{40,10,1}@cuda
  %1 = aten::view.default(%a2, [4, 1]) -> f32[4,1]{1,1}@cuda
  %2 = aten::expand.default(%1, [2, 4, 10]) -> f32[2,4,10]{0,1,0}@cuda
  %3 = aten::add.Tensor(%0, %2) -> f32[2,4,10]{40,10,1}@cuda
  return (%3)
})"));
}

TEST_CASE("nothing to peel: no bias, the CPU, an unbatched input", "[conv_bias_peel]") {
  ConvBiasPeel pass;
  bool changed = true;
  Run(pass,
      std::string(kDepthwise) +
          R"(  %0 = aten::convolution.default(%a0, %a1, None, [1, 1], [3, 3], [1, 1], false, [0, 0], 8) -> bf16[2,8,6,6]{288,1,48,8}@cuda
  return (%0)
})",
      &changed);
  CHECK_FALSE(changed);
  changed = true;
  Run(pass,
      R"(graph(%a0: f32[2,3,10]{30,10,1}@cpu, %a1: f32[4,3,3]{9,3,1}@cpu, %a2: f32[4]{1}@cpu) {
  %0 = aten::convolution.default(%a0, %a1, %a2, [1], [1], [1], false, [0], 1) -> f32[2,4,10]{40,10,1}@cpu
  return (%0)
})",
      &changed);
  CHECK_FALSE(changed);
  changed = true;
  Run(pass,
      R"(graph(%a0: f32[3,10,10]{100,10,1}@cuda, %a1: f32[4,3,3,3]{27,9,3,1}@cuda, %a2: f32[4]{1}@cuda) {
  %0 = aten::convolution.default(%a0, %a1, %a2, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) -> f32[4,10,10]{100,10,1}@cuda
  return (%0)
})",
      &changed);
  CHECK_FALSE(changed);
}

constexpr char kBackward[] =
    "graph(%a0: bf16[2,8,6,6]{288,1,48,8}@cuda, %a1: bf16[2,8,6,6]{288,1,48,8}@cuda, "
    "%a2: bf16[8,1,7,7]{49,49,7,1}@cuda) {\n";

TEST_CASE("a CUDA convolution backward's bias gradient becomes a sum of grad_output",
          "[conv_backward_bias_grad]") {
  ConvBackwardBiasGrad pass;
  bool changed = false;
  const std::string out = Run(
      pass,
      std::string(kBackward) +
          R"(  %0 = aten::convolution_backward.default(%a0, %a1, %a2, [8], [1, 1], [3, 3], [1, 1], false, [0, 0], 8, [true, true, true]) -> (bf16[2,8,6,6]{288,1,48,8}@cuda, bf16[8,1,7,7]{49,49,7,1}@cuda, bf16[8]{1}@cuda)
  return (%0#0, %0#1, %0#2)
})",
      &changed);
  CHECK(changed);
  CHECK(
      out ==
      Canonical(
          std::string(kBackward) +
          R"(  %0 = aten::convolution_backward.default(%a0, %a1, %a2, [8], [1, 1], [3, 3], [1, 1], false, [0, 0], 8, [true, true, false]) -> (bf16[2,8,6,6]{288,1,48,8}@cuda, bf16[8,1,7,7]{49,49,7,1}@cuda, bf16[0]{1}@cuda)
  %1 = aten::permute.default(%a0, [0, 2, 3, 1]) -> bf16[2,6,6,8]{288,48,8,1}@cuda
  %2 = aten::sum.dim_IntList(%1, [0, 1, 2]) -> bf16[8]{1}@cuda
  return (%0#0, %0#1, %2)
})"));
  bool again = true;
  Run(pass, out, &again);
  CHECK_FALSE(again);
}

TEST_CASE("a convolution backward wanting only the bias gradient becomes the sum alone",
          "[conv_backward_bias_grad]") {
  ConvBackwardBiasGrad pass;
  bool changed = false;
  const std::string out = Run(
      pass,
      std::string(kBackward) +
          R"(  %0 = aten::convolution_backward.default(%a0, %a1, %a2, [8], [1, 1], [3, 3], [1, 1], false, [0, 0], 8, [false, false, true]) -> (bf16[0]{1}@cuda, bf16[0]{1}@cuda, bf16[8]{1}@cuda)
  %1 = aten::mul.Tensor(%0#2, %0#2) -> bf16[8]{1}@cuda
  return (%1)
})",
      &changed);
  CHECK(changed);
  CHECK(
      out ==
      Canonical(std::string(kBackward) +
                R"(  %0 = aten::permute.default(%a0, [0, 2, 3, 1]) -> bf16[2,6,6,8]{288,48,8,1}@cuda
  %1 = aten::sum.dim_IntList(%0, [0, 1, 2]) -> bf16[8]{1}@cuda
  %2 = aten::mul.Tensor(%1, %1) -> bf16[8]{1}@cuda
  return (%2)
})"));
}

TEST_CASE("an NCHW gradient's bias gradient sums over [0, 2, ...] as it is",
          "[conv_backward_bias_grad]") {
  ConvBackwardBiasGrad pass;
  bool changed = false;
  const std::string out = Run(
      pass,
      R"(graph(%a0: f32[2,4,10]{40,10,1}@cuda, %a1: f32[2,3,10]{30,10,1}@cuda, %a2: f32[4,3,3]{9,3,1}@cuda) {
  %0 = aten::convolution_backward.default(%a0, %a1, %a2, [4], [1], [1], [1], false, [0], 1, [false, true, true]) -> (f32[0]{1}@cuda, f32[4,3,3]{9,3,1}@cuda, f32[4]{1}@cuda)
  return (%0#1, %0#2)
})",
      &changed);
  CHECK(changed);
  CHECK(
      out ==
      Canonical(
          R"(graph(%a0: f32[2,4,10]{40,10,1}@cuda, %a1: f32[2,3,10]{30,10,1}@cuda, %a2: f32[4,3,3]{9,3,1}@cuda) {
  %0 = aten::convolution_backward.default(%a0, %a1, %a2, [4], [1], [1], [1], false, [0], 1, [false, true, false]) -> (f32[0]{1}@cuda, f32[4,3,3]{9,3,1}@cuda, f32[0]{1}@cuda)
  %1 = aten::sum.dim_IntList(%a0, [0, 2]) -> f32[4]{1}@cuda
  return (%0#1, %1)
})"));
}

TEST_CASE("nothing to do: no bias gradient, or on the CPU", "[conv_backward_bias_grad]") {
  ConvBackwardBiasGrad pass;
  bool changed = true;
  Run(pass,
      std::string(kBackward) +
          R"(  %0 = aten::convolution_backward.default(%a0, %a1, %a2, [8], [1, 1], [3, 3], [1, 1], false, [0, 0], 8, [true, true, false]) -> (bf16[2,8,6,6]{288,1,48,8}@cuda, bf16[8,1,7,7]{49,49,7,1}@cuda, bf16[0]{1}@cuda)
  return (%0#0, %0#1)
})",
      &changed);
  CHECK_FALSE(changed);
  changed = true;
  Run(pass,
      R"(graph(%a0: f32[2,4,10]{40,10,1}@cpu, %a1: f32[2,3,10]{30,10,1}@cpu, %a2: f32[4,3,3]{9,3,1}@cpu) {
  %0 = aten::convolution_backward.default(%a0, %a1, %a2, [4], [1], [1], [1], false, [0], 1, [true, true, true]) -> (f32[2,3,10]{30,10,1}@cpu, f32[4,3,3]{9,3,1}@cpu, f32[4]{1}@cpu)
  return (%0#0, %0#1, %0#2)
})",
      &changed);
  CHECK_FALSE(changed);
}

}  // namespace
}  // namespace tccd::codegen

// DepthwiseConvKernels (depthwise_conv_kernels.h) and the index kernel it leads to: IR text in,
// IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/kernel/pointwise_kernel.h"
#include "codegen/passes/depthwise_conv_kernels.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/kernel_builder.h"

namespace tccd::codegen {
namespace {

std::string Run(const std::string& text, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  DepthwiseConvKernels pass;
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

// A ConvNeXt block's depthwise convolution on CUDA, channels-last (bias peeled off by
// ConvBiasPeel), and its backward (bias gradient a graph sum: ConvBackwardBiasGrad).
constexpr char kCudaBlock[] =
    R"(graph(%a0: bf16[2,8,5,6]{240,1,48,8}@cuda, %a1: bf16[8,1,7,7]{49,49,7,1}@cuda, %a2: bf16[2,8,5,6]{240,1,48,8}@cuda) {
  %0 = aten::convolution.default(%a0, %a1, None, [1, 1], [3, 3], [1, 1], false, [0, 0], 8) -> bf16[2,8,5,6]{240,1,48,8}@cuda
  %1 = aten::convolution_backward.default(%a2, %a0, %a1, [0], [1, 1], [3, 3], [1, 1], false, [0, 0], 8, [true, true, false]) -> (bf16[2,8,5,6]{240,1,48,8}@cuda, bf16[8,1,7,7]{49,49,7,1}@cuda, bf16[0]{1}@cuda)
  return (%0, %1#0, %1#1)
})";

TEST_CASE("a channels-last depthwise convolution and its input gradient become index kernels",
          "[depthwise_conv_kernels]") {
  bool changed = false;
  const std::string out = Run(kCudaBlock, &changed);
  CHECK(changed);
  CHECK(
      out ==
      Canonical(
          R"(graph(%a0: bf16[2,8,5,6]{240,1,48,8}@cuda, %a1: bf16[8,1,7,7]{49,49,7,1}@cuda, %a2: bf16[2,8,5,6]{240,1,48,8}@cuda) {
  %0 = aten::permute.default(%a0, [0, 2, 3, 1]) -> bf16[2,5,6,8]{240,48,8,1}@cuda
  %1 = aten::permute.default(%a1, [2, 3, 0, 1]) -> bf16[7,7,8,1]{7,1,49,49}@cuda
  %2 = aten::_to_copy.default(%1, dtype=f32, memory_format=memory_format(0)) -> f32[7,7,8,1]{56,8,1,1}@cuda
  %3 = aten::view.default(%2, [7, 7, 8]) -> f32[7,7,8]{56,8,1}@cuda
  %4 = tccd::depthwise_conv2d.default(%0, %3, None, [7, 7], [3, 3], false, true) -> bf16[2,5,6,8]{240,48,8,1}@cuda
  %5 = aten::permute.default(%4, [0, 3, 1, 2]) -> bf16[2,8,5,6]{240,1,48,8}@cuda
  %6 = aten::permute.default(%a2, [0, 2, 3, 1]) -> bf16[2,5,6,8]{240,48,8,1}@cuda
  %7 = aten::permute.default(%a1, [2, 3, 0, 1]) -> bf16[7,7,8,1]{7,1,49,49}@cuda
  %8 = aten::_to_copy.default(%7, dtype=f32, memory_format=memory_format(0)) -> f32[7,7,8,1]{56,8,1,1}@cuda
  %9 = aten::view.default(%8, [7, 7, 8]) -> f32[7,7,8]{56,8,1}@cuda
  %10 = tccd::depthwise_conv2d.default(%6, %9, None, [7, 7], [3, 3], true, true) -> bf16[2,5,6,8]{240,48,8,1}@cuda
  %11 = aten::permute.default(%10, [0, 3, 1, 2]) -> bf16[2,8,5,6]{240,1,48,8}@cuda
  %12 = aten::permute.default(%a0, [0, 2, 3, 1]) -> bf16[2,5,6,8]{240,48,8,1}@cuda
  %13 = tccd::depthwise_conv2d_weight_partials.default(%6, %12, [7, 7], [3, 3], 5, true) -> f32[2,1,7,7,8]{392,392,56,8,1}@cuda
  %14 = aten::sum.dim_IntList(%13, [0, 1]) -> f32[7,7,8]{56,8,1}@cuda
  %15 = aten::view.default(%14, [7, 7, 8, 1]) -> f32[7,7,8,1]{56,8,1,1}@cuda
  %16 = aten::permute.default(%15, [2, 3, 0, 1]) -> f32[8,1,7,7]{1,1,56,8}@cuda
  %17 = aten::_to_copy.default(%16, dtype=bf16) -> bf16[8,1,7,7]{49,49,7,1}@cuda
  return (%5, %11, %17)
})"));
}

TEST_CASE("without the weight gradient's rewrite ATen's backward computes it alone",
          "[depthwise_conv_kernels]") {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(kCudaBlock);
  REQUIRE(g.ok());
  DepthwiseConvKernels pass(DepthwiseConvKernels::Options{.weight_grad = false});
  REQUIRE(pass.Run(*g).ok());
  const std::string out = ir::PrintGraph(*g);
  CHECK(out.find("depthwise_conv2d_weight_partials") == std::string::npos);
  CHECK(out.find("aten::convolution_backward.default(%a2, %a0, %a1, [0], [1, 1], [3, 3], [1, 1], "
                 "false, [0, 0], 8, [false, true, false]) -> (bf16[0]{1}@cuda, "
                 "bf16[8,1,7,7]{49,49,7,1}@cuda, bf16[0]{1}@cuda)") != std::string::npos);
  CHECK(out.find("true, true) -> bf16[2,5,6,8]") != std::string::npos);  // the flipped kernel
}

TEST_CASE("with the CUDA templates a weight partial sums up to eight rows of the map",
          "[depthwise_conv_kernels]") {
  // ConvNeXt-T's stage 1 (56 x 56, C 96; batch 1 here): one row a partial in the index form
  // (56 terms), eight with the templates (448 <= kMaxTemplatePartialTerms); an odd C keeps one.
  auto partials = [](int64_t channels, bool templates) {
    const std::string c = std::to_string(channels);
    const std::string map = "bf16[1," + c + ",56,56]{" + std::to_string(channels * 3136) + ",1," +
                            std::to_string(channels * 56) + "," + c + "}@cuda";
    const std::string text = "graph(%a0: " + map + ", %a1: bf16[" + c + ",1,7,7]{49,49,7,1}@cuda, %a2: " +
                             map + ") {\n  %0 = aten::convolution_backward.default(%a2, %a0, %a1, [0], "
                             "[1, 1], [3, 3], [1, 1], false, [0, 0], " + c +
                             ", [false, true, false]) -> (bf16[0]{1}@cuda, bf16[" + c +
                             ",1,7,7]{49,49,7,1}@cuda, bf16[0]{1}@cuda)\n  return (%0#1)\n}";
    absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
    INFO(g.status().ToString());
    REQUIRE(g.ok());
    DepthwiseConvKernels pass(DepthwiseConvKernels::Options{.templates = templates});
    REQUIRE(pass.Run(*g).ok());
    const std::string out = ir::PrintGraph(*g);
    const size_t at = out.find("[7, 7], [3, 3], ");
    REQUIRE(at != std::string::npos);
    return out.substr(at + 16, out.find(',', at + 16) - at - 16);
  };
  CHECK(partials(96, false) == "1");
  CHECK(partials(96, true) == "8");
  CHECK(partials(95, true) == "1");
}

TEST_CASE("a CPU weight gradient in partial sums over row blocks; its bias gradient stays ATen's",
          "[depthwise_conv_kernels]") {
  bool changed = false;
  const std::string out = Run(
      R"(graph(%a0: f32[1,4,6,6]{144,36,6,1}@cpu, %a1: f32[1,4,6,6]{144,36,6,1}@cpu, %a2: f32[4,1,3,3]{9,9,3,1}@cpu) {
  %0 = aten::convolution_backward.default(%a1, %a0, %a2, [4], [1, 1], [1, 1], [1, 1], false, [0, 0], 4, [false, true, true]) -> (f32[0]{1}@cpu, f32[4,1,3,3]{9,9,3,1}@cpu, f32[4]{1}@cpu)
  return (%0#1, %0#2)
})",
      &changed);
  CHECK(changed);
  CHECK(
      out ==
      Canonical(
          R"(graph(%a0: f32[1,4,6,6]{144,36,6,1}@cpu, %a1: f32[1,4,6,6]{144,36,6,1}@cpu, %a2: f32[4,1,3,3]{9,9,3,1}@cpu) {
  %0 = tccd::depthwise_conv2d_weight_partials.default(%a1, %a0, [3, 3], [1, 1], 6, false) -> f32[1,1,3,3,4]{36,36,12,4,1}@cpu
  %1 = aten::sum.dim_IntList(%0, [0, 1]) -> f32[3,3,4]{12,4,1}@cpu
  %2 = aten::view.default(%1, [3, 3, 4, 1]) -> f32[3,3,4,1]{12,4,1,1}@cpu
  %3 = aten::permute.default(%2, [2, 3, 0, 1]) -> f32[4,1,3,3]{1,1,12,4}@cpu
  %4 = aten::_to_copy.default(%3, dtype=f32) -> f32[4,1,3,3]{9,9,3,1}@cpu
  %5 = aten::convolution_backward.default(%a1, %a0, %a2, [4], [1, 1], [1, 1], [1, 1], false, [0, 0], 4, [false, false, true]) -> (f32[0]{1}@cpu, f32[0]{1}@cpu, f32[4]{1}@cpu)
  return (%4, %5#2)
})"));
}

TEST_CASE("a map row wider than a partial's terms keeps ATen's weight gradient",
          "[depthwise_conv_kernels]") {
  // 80 columns: one row is more than kMaxWeightPartialTerms terms.
  const char* text =
      R"(graph(%a0: f32[1,4,3,80]{960,240,80,1}@cpu, %a1: f32[1,4,3,80]{960,240,80,1}@cpu, %a2: f32[4,1,3,3]{9,9,3,1}@cpu) {
  %0 = aten::convolution_backward.default(%a1, %a0, %a2, [0], [1, 1], [1, 1], [1, 1], false, [0, 0], 4, [false, true, false]) -> (f32[0]{1}@cpu, f32[4,1,3,3]{9,9,3,1}@cpu, f32[0]{1}@cpu)
  return (%0#1)
})";
  bool changed = true;
  CHECK(Run(text, &changed) == Canonical(text));
  CHECK_FALSE(changed);
}

TEST_CASE(
    "a CPU NCHW depthwise convolution keeps its layout and its bias; an input gradient "
    "alone drops the backward",
    "[depthwise_conv_kernels]") {
  bool changed = false;
  const std::string out = Run(
      R"(graph(%a0: f32[1,4,6,6]{144,36,6,1}@cpu, %a1: f32[4,1,3,5]{15,15,5,1}@cpu, %a2: f32[4]{1}@cpu) {
  %0 = aten::convolution.default(%a0, %a1, %a2, [1], [1, 2], [1], false, [0], 4) -> f32[1,4,6,6]{144,36,6,1}@cpu
  %1 = aten::convolution_backward.default(%0, %a0, %a1, [4], [1, 1], [1, 2], [1, 1], false, [0, 0], 4, [true, false, false]) -> (f32[1,4,6,6]{144,36,6,1}@cpu, f32[0]{1}@cpu, f32[0]{1}@cpu)
  return (%1#0)
})",
      &changed);
  CHECK(changed);
  CHECK(
      out ==
      Canonical(
          R"(graph(%a0: f32[1,4,6,6]{144,36,6,1}@cpu, %a1: f32[4,1,3,5]{15,15,5,1}@cpu, %a2: f32[4]{1}@cpu) {
  %0 = aten::permute.default(%a1, [2, 3, 0, 1]) -> f32[3,5,4,1]{5,1,15,15}@cpu
  %1 = aten::_to_copy.default(%0, dtype=f32, memory_format=memory_format(0)) -> f32[3,5,4,1]{20,4,1,1}@cpu
  %2 = aten::view.default(%1, [3, 5, 4]) -> f32[3,5,4]{20,4,1}@cpu
  %3 = tccd::depthwise_conv2d.default(%a0, %2, %a2, [3, 5], [1, 2], false, false) -> f32[1,4,6,6]{144,36,6,1}@cpu
  %4 = aten::permute.default(%a1, [2, 3, 0, 1]) -> f32[3,5,4,1]{5,1,15,15}@cpu
  %5 = aten::_to_copy.default(%4, dtype=f32, memory_format=memory_format(0)) -> f32[3,5,4,1]{20,4,1,1}@cpu
  %6 = aten::view.default(%5, [3, 5, 4]) -> f32[3,5,4]{20,4,1}@cpu
  %7 = tccd::depthwise_conv2d.default(%3, %6, None, [3, 5], [1, 2], true, false) -> f32[1,4,6,6]{144,36,6,1}@cpu
  return (%7)
})"));
}

TEST_CASE("other convolutions stay ATen ops", "[depthwise_conv_kernels]") {
  // Stride 2, padding 0, an even window, a depth multiplier of 2, groups 1, dilation 2, f64, a
  // transposed convolution, an NCHW map on CUDA, a transposed backward, a 9x9 window.
  const char* text =
      R"(graph(%a0: f32[1,4,8,8]{256,64,8,1}@cpu, %a1: f32[4,1,3,3]{9,9,3,1}@cpu, %a2: f32[4,1,4,4]{16,16,4,1}@cpu, %a3: f32[8,1,3,3]{9,9,3,1}@cpu, %a4: f32[4,4,3,3]{36,9,3,1}@cpu, %a5: f64[1,4,8,8]{256,64,8,1}@cpu, %a6: f64[4,1,3,3]{9,9,3,1}@cpu, %a7: bf16[1,4,8,8]{256,64,8,1}@cuda, %a8: bf16[4,1,3,3]{9,9,3,1}@cuda, %a9: f32[9,1,9,9]{81,81,9,1}@cpu, %a10: f32[1,9,8,8]{576,64,8,1}@cpu) {
  %0 = aten::convolution.default(%a0, %a1, None, [2, 2], [1, 1], [1, 1], false, [0, 0], 4) -> f32[1,4,4,4]{64,16,4,1}@cpu
  %1 = aten::convolution.default(%a0, %a1, None, [1, 1], [0, 0], [1, 1], false, [0, 0], 4) -> f32[1,4,6,6]{144,36,6,1}@cpu
  %2 = aten::convolution.default(%a0, %a2, None, [1, 1], [2, 2], [1, 1], false, [0, 0], 4) -> f32[1,4,9,9]{324,81,9,1}@cpu
  %3 = aten::convolution.default(%a0, %a3, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 4) -> f32[1,8,8,8]{512,64,8,1}@cpu
  %4 = aten::convolution.default(%a0, %a4, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) -> f32[1,4,8,8]{256,64,8,1}@cpu
  %5 = aten::convolution.default(%a0, %a1, None, [1, 1], [2, 2], [2, 2], false, [0, 0], 4) -> f32[1,4,8,8]{256,64,8,1}@cpu
  %6 = aten::convolution.default(%a5, %a6, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 4) -> f64[1,4,8,8]{256,64,8,1}@cpu
  %7 = aten::convolution.default(%a0, %a1, None, [1, 1], [1, 1], [1, 1], true, [0, 0], 4) -> f32[1,4,8,8]{256,64,8,1}@cpu
  %8 = aten::convolution.default(%a7, %a8, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 4) -> bf16[1,4,8,8]{256,64,8,1}@cuda
  %9 = aten::convolution_backward.default(%a0, %a0, %a1, [0], [1, 1], [1, 1], [1, 1], true, [0, 0], 4, [true, true, false]) -> (f32[1,4,8,8]{256,64,8,1}@cpu, f32[4,1,3,3]{9,9,3,1}@cpu, f32[0]{1}@cpu)
  %10 = aten::convolution.default(%a10, %a9, None, [1, 1], [4, 4], [1, 1], false, [0, 0], 9) -> f32[1,9,8,8]{576,64,8,1}@cpu
  return (%0, %1, %2, %3, %4, %5, %6, %7, %8, %9#0, %9#1, %10)
})";
  bool changed = true;
  const std::string out = Run(text, &changed);
  CHECK_FALSE(changed);
  CHECK(out == Canonical(text));
}

TEST_CASE("a 3x3 depthwise kernel: nine taps, each an x gather times a weight vector",
          "[depthwise_conv_kernels]") {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(
      R"(graph(%a0: f32[1,4,6,6]{144,36,6,1}@cpu, %a1: f32[4,1,3,3]{9,9,3,1}@cpu, %a2: f32[4]{1}@cpu) {
  %0 = aten::convolution.default(%a0, %a1, %a2, [1, 1], [1, 1], [1, 1], false, [0, 0], 4) -> f32[1,4,6,6]{144,36,6,1}@cpu
  return (%0)
})");
  REQUIRE(g.ok());
  DepthwiseConvKernels pass;
  REQUIRE(pass.Run(*g).ok());
  absl::StatusOr<Partition> p = PartitionForFusion(*g, {});
  REQUIRE(p.ok());
  CHECK(PrintPartition(*g, *p) ==
        "extern %0 aten::permute.default\nfused %1 -> %1\nextern %2 aten::view.default\nfused "
        "%3 -> %3\n");
  absl::StatusOr<PointwiseKernel> k = BuildPointwiseKernel(*g, p->groups[1], "k");
  INFO(k.status().ToString());
  REQUIRE(k.ok());
  const std::string text = PrintPointwiseKernel(*k);
  CHECK(
      text.starts_with("pointwise @k[1,4,6,6](in0: f32, in1: f32, in2: f32) -> (out0: f32) {\n"
                       "  // fused: tccd::depthwise_conv2d.default\n"));
  // Nine x gathers (masked) and nine weight gathers (unmasked), one bias gather.
  size_t gathers = 0;
  for (size_t at = text.find("gather.f32"); at != std::string::npos;
       at = text.find("gather.f32", at + 1))
    ++gathers;
  CHECK(gathers == 19);
}

}  // namespace
}  // namespace tccd::codegen

// BatchNormDecomposition: IR text in, IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/batch_norm_decomposition.h"

namespace tccd::codegen {
namespace {

std::string Run(const std::string& text, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  BatchNormDecomposition pass;
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

constexpr char kInputs[] =
    "graph(%a0: bf16[4,8,6,6]{288,36,6,1}@cuda, %a1: f32[8]{1}@cuda, %a2: f32[8]{1}@cuda, "
    "%a3: f32[8]{1}@cuda, %a4: f32[8]{1}@cuda) {\n";

TEST_CASE("bf16 training batch norm forward: var_mean rows of the channel-first view",
          "[bn_decomp]") {
  bool changed = false;
  const std::string out = Run(
      std::string(kInputs) +
          R"(  %0 = aten::_native_batch_norm_legit_functional.default(%a0, %a1, %a2, %a3, %a4, true, 0.1, 1e-05) -> (bf16[4,8,6,6]{288,36,6,1}@cuda, f32[8]{1}@cuda, f32[8]{1}@cuda, f32[8]{1}@cuda, f32[8]{1}@cuda)
  %1 = aten::relu.default(%0) -> bf16[4,8,6,6]{288,36,6,1}@cuda
  return (%1, %0#1, %0#2, %0#3, %0#4)
})",
      &changed);
  CHECK(changed);
  // The relu, the norm output's only reader, moves into the channel-first view: the row
  // kernel's epilogue (%13 and %14 are left dead for dead-code elimination).
  CHECK(out ==
        Canonical(std::string(kInputs) +
                  R"(  %0 = aten::view.default(%a0, [4, 8, 36]) -> bf16[4,8,36]{288,36,1}@cuda
  %1 = aten::permute.default(%0, [1, 0, 2]) -> bf16[8,4,36]{36,288,1}@cuda
  %2 = aten::_to_copy.default(%1, dtype=f32) -> f32[8,4,36]{144,36,1}@cuda
  %3 = aten::var_mean.correction(%2, [1, 2], correction=0, keepdim=true) -> (f32[8,1,1]{1,1,1}@cuda, f32[8,1,1]{1,1,1}@cuda)
  %4 = aten::add.Tensor(%3, 1.0000000000000001e-05) -> f32[8,1,1]{1,1,1}@cuda
  %5 = aten::rsqrt.default(%4) -> f32[8,1,1]{1,1,1}@cuda
  %6 = aten::sub.Tensor(%2, %3#1) -> f32[8,4,36]{144,36,1}@cuda
  %7 = aten::mul.Tensor(%6, %5) -> f32[8,4,36]{144,36,1}@cuda
  %8 = aten::view.default(%a1, [8, 1, 1]) -> f32[8,1,1]{1,1,1}@cuda
  %9 = aten::mul.Tensor(%7, %8) -> f32[8,4,36]{144,36,1}@cuda
  %10 = aten::view.default(%a2, [8, 1, 1]) -> f32[8,1,1]{1,1,1}@cuda
  %11 = aten::add.Tensor(%9, %10) -> f32[8,4,36]{144,36,1}@cuda
  %12 = aten::_to_copy.default(%11, dtype=bf16) -> bf16[8,4,36]{36,288,1}@cuda
  %13 = aten::permute.default(%12, [1, 0, 2]) -> bf16[4,8,36]{288,36,1}@cuda
  %14 = aten::view.default(%13, [4, 8, 6, 6]) -> bf16[4,8,6,6]{288,36,6,1}@cuda
  %15 = aten::view.default(%a3, [8, 1, 1]) -> f32[8,1,1]{1,1,1}@cuda
  %16 = aten::lerp.Scalar(%15, %3#1, 0.10000000000000001) -> f32[8,1,1]{1,1,1}@cuda
  %17 = aten::view.default(%16, [8]) -> f32[8]{1}@cuda
  %18 = aten::mul.Tensor(%3, 1.0069930069930071) -> f32[8,1,1]{1,1,1}@cuda
  %19 = aten::view.default(%a4, [8, 1, 1]) -> f32[8,1,1]{1,1,1}@cuda
  %20 = aten::lerp.Scalar(%19, %18, 0.10000000000000001) -> f32[8,1,1]{1,1,1}@cuda
  %21 = aten::view.default(%20, [8]) -> f32[8]{1}@cuda
  %22 = aten::view.default(%3#1, [8]) -> f32[8]{1}@cuda
  %23 = aten::view.default(%5, [8]) -> f32[8]{1}@cuda
  %24 = aten::relu.default(%12) -> bf16[8,4,36]{36,288,1}@cuda
  %25 = aten::permute.default(%24, [1, 0, 2]) -> bf16[4,8,36]{288,36,1}@cuda
  %26 = aten::view.default(%25, [4, 8, 6, 6]) -> bf16[4,8,6,6]{288,36,6,1}@cuda
  return (%26, %22, %23, %17, %21)
})"));
}

TEST_CASE("bf16 training batch norm backward", "[bn_decomp]") {
  bool changed = false;
  const std::string out = Run(
      std::string(kInputs) +
          R"(  %0 = aten::threshold_backward.default(%a0, %a0, 0) -> bf16[4,8,6,6]{288,36,6,1}@cuda
  %1 = aten::native_batch_norm_backward.default(%0, %a0, %a1, %a3, %a4, %a3, %a4, true, 1e-05, [true, true, true]) -> (bf16[4,8,6,6]{288,36,6,1}@cuda, f32[8]{1}@cuda, f32[8]{1}@cuda)
  return (%1, %1#1, %1#2)
})",
      &changed);
  CHECK(changed);
  // The relu backward, read only by the norm backward, moves into the channel-first view (%0 is
  // left dead): sums of g and g * x_hat per channel, then grad_input, in one row kernel.
  CHECK(
      out ==
      Canonical(
          std::string(kInputs) +
          R"(  %0 = aten::threshold_backward.default(%a0, %a0, 0) -> bf16[4,8,6,6]{288,36,6,1}@cuda
  %1 = aten::view.default(%a0, [4, 8, 36]) -> bf16[4,8,36]{288,36,1}@cuda
  %2 = aten::permute.default(%1, [1, 0, 2]) -> bf16[8,4,36]{36,288,1}@cuda
  %3 = aten::view.default(%a0, [4, 8, 36]) -> bf16[4,8,36]{288,36,1}@cuda
  %4 = aten::permute.default(%3, [1, 0, 2]) -> bf16[8,4,36]{36,288,1}@cuda
  %5 = aten::threshold_backward.default(%2, %4, 0) -> bf16[8,4,36]{144,36,1}@cuda
  %6 = aten::_to_copy.default(%5, dtype=f32) -> f32[8,4,36]{144,36,1}@cuda
  %7 = aten::view.default(%a0, [4, 8, 36]) -> bf16[4,8,36]{288,36,1}@cuda
  %8 = aten::permute.default(%7, [1, 0, 2]) -> bf16[8,4,36]{36,288,1}@cuda
  %9 = aten::_to_copy.default(%8, dtype=f32) -> f32[8,4,36]{144,36,1}@cuda
  %10 = aten::view.default(%a4, [8, 1, 1]) -> f32[8,1,1]{1,1,1}@cuda
  %11 = aten::view.default(%a3, [8, 1, 1]) -> f32[8,1,1]{1,1,1}@cuda
  %12 = aten::sub.Tensor(%9, %11) -> f32[8,4,36]{144,36,1}@cuda
  %13 = aten::mul.Tensor(%12, %10) -> f32[8,4,36]{144,36,1}@cuda
  %14 = aten::sum.dim_IntList(%6, [1, 2], true) -> f32[8,1,1]{1,1,1}@cuda
  %15 = aten::mul.Tensor(%6, %13) -> f32[8,4,36]{144,36,1}@cuda
  %16 = aten::sum.dim_IntList(%15, [1, 2], true) -> f32[8,1,1]{1,1,1}@cuda
  %17 = aten::mul.Tensor(%14, 0.0069444444444444441) -> f32[8,1,1]{1,1,1}@cuda
  %18 = aten::mul.Tensor(%16, 0.0069444444444444441) -> f32[8,1,1]{1,1,1}@cuda
  %19 = aten::sub.Tensor(%6, %17) -> f32[8,4,36]{144,36,1}@cuda
  %20 = aten::mul.Tensor(%13, %18) -> f32[8,4,36]{144,36,1}@cuda
  %21 = aten::sub.Tensor(%19, %20) -> f32[8,4,36]{144,36,1}@cuda
  %22 = aten::mul.Tensor(%21, %10) -> f32[8,4,36]{144,36,1}@cuda
  %23 = aten::view.default(%a1, [8, 1, 1]) -> f32[8,1,1]{1,1,1}@cuda
  %24 = aten::mul.Tensor(%22, %23) -> f32[8,4,36]{144,36,1}@cuda
  %25 = aten::_to_copy.default(%24, dtype=bf16) -> bf16[8,4,36]{36,288,1}@cuda
  %26 = aten::permute.default(%25, [1, 0, 2]) -> bf16[4,8,36]{288,36,1}@cuda
  %27 = aten::view.default(%26, [4, 8, 6, 6]) -> bf16[4,8,6,6]{288,36,6,1}@cuda
  %28 = aten::view.default(%16, [8]) -> f32[8]{1}@cuda
  %29 = aten::view.default(%14, [8]) -> f32[8]{1}@cuda
  return (%27, %28, %29)
})"));
}

TEST_CASE("batch norm stays ATen's where the row kernel does not apply", "[bn_decomp]") {
  bool changed = true;
  // eval mode; a channels-last input with an NCHW output; bf16 parameters; a masked-off
  // gradient that is read.
  Run(R"(graph(%a0: bf16[4,8,6,6]{288,1,48,8}@cuda, %a1: f32[8]{1}@cuda, %a2: bf16[8]{1}@cuda, %a3: bf16[4,8,6,6]{288,36,6,1}@cuda) {
  %0 = aten::_native_batch_norm_legit_functional.default(%a3, %a1, %a1, %a1, %a1, false, 0.1, 1e-05) -> (bf16[4,8,6,6]{288,36,6,1}@cuda, f32[8]{1}@cuda, f32[8]{1}@cuda, f32[8]{1}@cuda, f32[8]{1}@cuda)
  %1 = aten::_native_batch_norm_legit_functional.default(%a0, %a1, %a1, %a1, %a1, true, 0.1, 1e-05) -> (bf16[4,8,6,6]{288,36,6,1}@cuda, f32[8]{1}@cuda, f32[8]{1}@cuda, f32[8]{1}@cuda, f32[8]{1}@cuda)
  %2 = aten::_native_batch_norm_legit_functional.default(%a3, %a2, %a2, %a1, %a1, true, 0.1, 1e-05) -> (bf16[4,8,6,6]{288,36,6,1}@cuda, f32[8]{1}@cuda, f32[8]{1}@cuda, f32[8]{1}@cuda, f32[8]{1}@cuda)
  %3 = aten::native_batch_norm_backward.default(%a3, %a3, %a1, %a1, %a1, %a1, %a1, true, 1e-05, [true, false, true]) -> (bf16[4,8,6,6]{288,36,6,1}@cuda, f32[0]{1}@cuda, f32[8]{1}@cuda)
  return (%0, %1, %2, %3, %3#1)
})",
      &changed);
  CHECK(!changed);
}

// Channels-last norms (batch_norm_channels_last.h): [2,4,32,32] is [M=2048, C=4] in memory, so
// the per-channel sums are column reductions of [A=256, B=8, C=4] then of the [8, 4] partials.
constexpr char kChannelsLastInputs[] =
    "graph(%a0: bf16[2,4,32,32]{4096,1,128,4}@cuda, %a1: f32[4]{1}@cuda, %a2: f32[4]{1}@cuda, "
    "%a3: f32[4]{1}@cuda, %a4: f32[4]{1}@cuda, %a5: bf16[2,4,32,32]{4096,1,128,4}@cuda) {\n";

// Forward: one pass over x for both statistics (sums of x - K and (x - K)^2, K = x's first
// pixel), stage two turns them into the mean and the variance.
TEST_CASE("channels-last training batch norm forward: split column sums, pointwise normalisation",
          "[bn_decomp]") {
  bool changed = false;
  const std::string out = Run(
      std::string(kChannelsLastInputs) +
          R"(  %0 = aten::_native_batch_norm_legit_functional.default(%a0, %a1, %a2, %a3, %a4, true, 0.1, 1e-05) -> (bf16[2,4,32,32]{4096,1,128,4}@cuda, f32[4]{1}@cuda, f32[4]{1}@cuda, f32[4]{1}@cuda, f32[4]{1}@cuda)
  %1 = aten::relu.default(%0) -> bf16[2,4,32,32]{4096,1,128,4}@cuda
  return (%1, %0#1, %0#2, %0#3, %0#4)
})",
      &changed);
  CHECK(changed);
  CHECK(out ==
        Canonical(
            std::string(kChannelsLastInputs) +
            R"(  %0 = aten::permute.default(%a0, [0, 2, 3, 1]) -> bf16[2,32,32,4]{4096,128,4,1}@cuda
  %1 = aten::view.default(%0, [256, 8, 4]) -> bf16[256,8,4]{32,4,1}@cuda
  %2 = aten::select.int(%1, 0, 0) -> bf16[8,4]{4,1}@cuda
  %3 = aten::select.int(%2, 0, 0) -> bf16[4]{1}@cuda
  %4 = aten::permute.default(%a0, [0, 2, 3, 1]) -> bf16[2,32,32,4]{4096,128,4,1}@cuda
  %5 = aten::view.default(%4, [256, 8, 4]) -> bf16[256,8,4]{32,4,1}@cuda
  %6 = aten::_to_copy.default(%5, dtype=f32) -> f32[256,8,4]{32,4,1}@cuda
  %7 = aten::sub.Tensor(%6, %3) -> f32[256,8,4]{32,4,1}@cuda
  %8 = aten::permute.default(%a0, [0, 2, 3, 1]) -> bf16[2,32,32,4]{4096,128,4,1}@cuda
  %9 = aten::view.default(%8, [256, 8, 4]) -> bf16[256,8,4]{32,4,1}@cuda
  %10 = aten::_to_copy.default(%9, dtype=f32) -> f32[256,8,4]{32,4,1}@cuda
  %11 = aten::sub.Tensor(%10, %3) -> f32[256,8,4]{32,4,1}@cuda
  %12 = aten::sum.dim_IntList(%7, [0]) -> f32[8,4]{4,1}@cuda
  %13 = aten::sum.dim_IntList(%12, [0], true) -> f32[1,4]{4,1}@cuda
  %14 = aten::mul.Tensor(%11, %11) -> f32[256,8,4]{32,4,1}@cuda
  %15 = aten::sum.dim_IntList(%14, [0]) -> f32[8,4]{4,1}@cuda
  %16 = aten::sum.dim_IntList(%15, [0], true) -> f32[1,4]{4,1}@cuda
  %17 = aten::mul.Tensor(%13, 0.00048828125) -> f32[1,4]{4,1}@cuda
  %18 = aten::view.default(%3, [1, 4]) -> bf16[1,4]{4,1}@cuda
  %19 = aten::add.Tensor(%17, %18) -> f32[1,4]{4,1}@cuda
  %20 = aten::mul.Tensor(%17, %17) -> f32[1,4]{4,1}@cuda
  %21 = aten::mul.Tensor(%16, 0.00048828125) -> f32[1,4]{4,1}@cuda
  %22 = aten::sub.Tensor(%21, %20) -> f32[1,4]{4,1}@cuda
  %23 = aten::relu.default(%22) -> f32[1,4]{4,1}@cuda
  %24 = aten::add.Tensor(%23, 1.0000000000000001e-05) -> f32[1,4]{4,1}@cuda
  %25 = aten::rsqrt.default(%24) -> f32[1,4]{4,1}@cuda
  %26 = aten::view.default(%19, [4, 1, 1]) -> f32[4,1,1]{1,1,1}@cuda
  %27 = aten::_to_copy.default(%a0, dtype=f32) -> f32[2,4,32,32]{4096,1,128,4}@cuda
  %28 = aten::sub.Tensor(%27, %26) -> f32[2,4,32,32]{4096,1,128,4}@cuda
  %29 = aten::view.default(%25, [4, 1, 1]) -> f32[4,1,1]{1,1,1}@cuda
  %30 = aten::mul.Tensor(%28, %29) -> f32[2,4,32,32]{4096,1,128,4}@cuda
  %31 = aten::view.default(%a1, [4, 1, 1]) -> f32[4,1,1]{1,1,1}@cuda
  %32 = aten::mul.Tensor(%30, %31) -> f32[2,4,32,32]{4096,1,128,4}@cuda
  %33 = aten::view.default(%a2, [4, 1, 1]) -> f32[4,1,1]{1,1,1}@cuda
  %34 = aten::add.Tensor(%32, %33) -> f32[2,4,32,32]{4096,1,128,4}@cuda
  %35 = aten::_to_copy.default(%34, dtype=bf16) -> bf16[2,4,32,32]{4096,1,128,4}@cuda
  %36 = aten::view.default(%a3, [1, 4]) -> f32[1,4]{4,1}@cuda
  %37 = aten::lerp.Scalar(%36, %19, 0.10000000000000001) -> f32[1,4]{4,1}@cuda
  %38 = aten::view.default(%37, [4]) -> f32[4]{1}@cuda
  %39 = aten::mul.Tensor(%23, 1.0004885197850513) -> f32[1,4]{4,1}@cuda
  %40 = aten::view.default(%a4, [1, 4]) -> f32[1,4]{4,1}@cuda
  %41 = aten::lerp.Scalar(%40, %39, 0.10000000000000001) -> f32[1,4]{4,1}@cuda
  %42 = aten::view.default(%41, [4]) -> f32[4]{1}@cuda
  %43 = aten::view.default(%19, [4]) -> f32[4]{1}@cuda
  %44 = aten::view.default(%25, [4]) -> f32[4]{1}@cuda
  %45 = aten::relu.default(%35) -> bf16[2,4,32,32]{4096,1,128,4}@cuda
  return (%45, %43, %44, %38, %42)
})"));
}

TEST_CASE("channels-last training batch norm backward: column sums of g and g * xhat",
          "[bn_decomp]") {
  bool changed = false;
  const std::string out = Run(
      std::string(kChannelsLastInputs) +
          R"(  %0 = aten::native_batch_norm_backward.default(%a5, %a0, %a1, %a3, %a4, %a2, %a2, true, 1e-05, [true, true, true]) -> (bf16[2,4,32,32]{4096,1,128,4}@cuda, f32[4]{1}@cuda, f32[4]{1}@cuda)
  return (%0, %0#1, %0#2)
})",
      &changed);
  CHECK(changed);
  CHECK(out ==
        Canonical(
            std::string(kChannelsLastInputs) +
            R"(  %0 = aten::permute.default(%a5, [0, 2, 3, 1]) -> bf16[2,32,32,4]{4096,128,4,1}@cuda
  %1 = aten::view.default(%0, [256, 8, 4]) -> bf16[256,8,4]{32,4,1}@cuda
  %2 = aten::_to_copy.default(%1, dtype=f32) -> f32[256,8,4]{32,4,1}@cuda
  %3 = aten::permute.default(%a0, [0, 2, 3, 1]) -> bf16[2,32,32,4]{4096,128,4,1}@cuda
  %4 = aten::view.default(%3, [256, 8, 4]) -> bf16[256,8,4]{32,4,1}@cuda
  %5 = aten::_to_copy.default(%4, dtype=f32) -> f32[256,8,4]{32,4,1}@cuda
  %6 = aten::sub.Tensor(%5, %a2) -> f32[256,8,4]{32,4,1}@cuda
  %7 = aten::mul.Tensor(%6, %a2) -> f32[256,8,4]{32,4,1}@cuda
  %8 = aten::sum.dim_IntList(%2, [0]) -> f32[8,4]{4,1}@cuda
  %9 = aten::sum.dim_IntList(%8, [0], true) -> f32[1,4]{4,1}@cuda
  %10 = aten::permute.default(%a5, [0, 2, 3, 1]) -> bf16[2,32,32,4]{4096,128,4,1}@cuda
  %11 = aten::view.default(%10, [256, 8, 4]) -> bf16[256,8,4]{32,4,1}@cuda
  %12 = aten::_to_copy.default(%11, dtype=f32) -> f32[256,8,4]{32,4,1}@cuda
  %13 = aten::mul.Tensor(%12, %7) -> f32[256,8,4]{32,4,1}@cuda
  %14 = aten::sum.dim_IntList(%13, [0]) -> f32[8,4]{4,1}@cuda
  %15 = aten::sum.dim_IntList(%14, [0], true) -> f32[1,4]{4,1}@cuda
  %16 = aten::view.default(%a2, [4, 1, 1]) -> f32[4,1,1]{1,1,1}@cuda
  %17 = aten::view.default(%a2, [4, 1, 1]) -> f32[4,1,1]{1,1,1}@cuda
  %18 = aten::_to_copy.default(%a0, dtype=f32) -> f32[2,4,32,32]{4096,1,128,4}@cuda
  %19 = aten::sub.Tensor(%18, %17) -> f32[2,4,32,32]{4096,1,128,4}@cuda
  %20 = aten::mul.Tensor(%19, %16) -> f32[2,4,32,32]{4096,1,128,4}@cuda
  %21 = aten::mul.Tensor(%9, 0.00048828125) -> f32[1,4]{4,1}@cuda
  %22 = aten::view.default(%21, [4, 1, 1]) -> f32[4,1,1]{1,1,1}@cuda
  %23 = aten::mul.Tensor(%15, 0.00048828125) -> f32[1,4]{4,1}@cuda
  %24 = aten::view.default(%23, [4, 1, 1]) -> f32[4,1,1]{1,1,1}@cuda
  %25 = aten::_to_copy.default(%a5, dtype=f32) -> f32[2,4,32,32]{4096,1,128,4}@cuda
  %26 = aten::sub.Tensor(%25, %22) -> f32[2,4,32,32]{4096,1,128,4}@cuda
  %27 = aten::mul.Tensor(%20, %24) -> f32[2,4,32,32]{4096,1,128,4}@cuda
  %28 = aten::sub.Tensor(%26, %27) -> f32[2,4,32,32]{4096,1,128,4}@cuda
  %29 = aten::mul.Tensor(%28, %16) -> f32[2,4,32,32]{4096,1,128,4}@cuda
  %30 = aten::view.default(%a1, [4, 1, 1]) -> f32[4,1,1]{1,1,1}@cuda
  %31 = aten::mul.Tensor(%29, %30) -> f32[2,4,32,32]{4096,1,128,4}@cuda
  %32 = aten::_to_copy.default(%31, dtype=bf16) -> bf16[2,4,32,32]{4096,1,128,4}@cuda
  %33 = aten::view.default(%15, [4]) -> f32[4]{1}@cuda
  %34 = aten::view.default(%9, [4]) -> f32[4]{1}@cuda
  return (%32, %33, %34)
})"));
}

TEST_CASE(
    "channels-last batch norm backward after a relu backward read by it alone: the relu "
    "backward is recomputed in the column sums over its own operands",
    "[bn_decomp]") {
  bool changed = false;
  const std::string out = Run(
      std::string(kChannelsLastInputs) +
          R"(  %0 = aten::threshold_backward.default(%a5, %a0, 0) -> bf16[2,4,32,32]{4096,1,128,4}@cuda
  %1 = aten::native_batch_norm_backward.default(%0, %a0, %a1, %a3, %a4, %a2, %a2, true, 1e-05, [true, true, true]) -> (bf16[2,4,32,32]{4096,1,128,4}@cuda, f32[4]{1}@cuda, f32[4]{1}@cuda)
  return (%1, %1#1, %1#2)
})",
      &changed);
  CHECK(changed);
  // Both sums read a5 and a0 through views; only the normalisation reads %0 (and fuses it).
  INFO(out);
  CHECK(out.find("aten::threshold_backward.default(%2, %4, 0) -> bf16[256,8,4]{32,4,1}@cuda") !=
        std::string::npos);
  size_t recomputed = 0;
  for (size_t at = out.find("threshold_backward"); at != std::string::npos;
       at = out.find("threshold_backward", at + 1))
    ++recomputed;
  INFO(out);
  CHECK(recomputed == 3);  // the original and one per sum
  // Read twice more (a second reader): the sums read its value.
  changed = false;
  const std::string shared = Run(
      std::string(kChannelsLastInputs) +
          R"(  %0 = aten::threshold_backward.default(%a5, %a0, 0) -> bf16[2,4,32,32]{4096,1,128,4}@cuda
  %1 = aten::native_batch_norm_backward.default(%0, %a0, %a1, %a3, %a4, %a2, %a2, true, 1e-05, [true, true, true]) -> (bf16[2,4,32,32]{4096,1,128,4}@cuda, f32[4]{1}@cuda, f32[4]{1}@cuda)
  return (%1, %1#1, %1#2, %0)
})",
      &changed);
  CHECK(changed);
  size_t count = 0;
  for (size_t at = shared.find("threshold_backward"); at != std::string::npos;
       at = shared.find("threshold_backward", at + 1))
    ++count;
  CHECK(count == 1);
}

}  // namespace
}  // namespace tccd::codegen

// MaxPoolKernels (max_pool_kernels.h) and the index kernels it leads to: IR text in, IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/kernel/pointwise_kernel.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/horizontal_fusion.h"
#include "codegen/passes/kernel_builder.h"
#include "codegen/passes/max_pool_kernels.h"
#include "codegen/passes/plan_builder.h"

namespace tccd::codegen {
namespace {

std::string Run(const std::string& text, bool* changed, bool backward = true) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  MaxPoolKernels pass(backward);
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

// The stem of a ResNet, channels-last (as the CUDA layout pass leaves it): relu, max pool, the
// backward's gradient a sum, and the relu backward reading the pool's gradient.
constexpr char kStem[] =
    R"(graph(%a0: bf16[2,4,7,7]{196,1,28,4}@cuda, %a1: bf16[2,4,4,4]{64,1,16,4}@cuda, %a2: bf16[2,4,4,4]{64,1,16,4}@cuda) {
  %0 = aten::relu.default(%a0) -> bf16[2,4,7,7]{196,1,28,4}@cuda
  %1 = aten::max_pool2d_with_indices.default(%0, [3, 3], [2, 2], [1, 1]) -> (bf16[2,4,4,4]{64,1,16,4}@cuda, i64[2,4,4,4]{64,1,16,4}@cuda)
  %2 = aten::add.Tensor(%a1, %a2) -> bf16[2,4,4,4]{64,1,16,4}@cuda
  %3 = aten::max_pool2d_with_indices_backward.default(%2, %0, [3, 3], [2, 2], [1, 1], [1, 1], false, %1#1) -> bf16[2,4,7,7]{196,1,28,4}@cuda
  %4 = aten::threshold_backward.default(%3, %0, 0) -> bf16[2,4,7,7]{196,1,28,4}@cuda
  return (%1, %4)
})";

TEST_CASE("channels-last max pooling and its backward run over [N, H, W, C] views",
          "[max_pool_kernels]") {
  bool changed = false;
  const std::string out = Run(kStem, &changed);
  CHECK(changed);
  CHECK(out ==
        Canonical(
            R"(graph(%a0: bf16[2,4,7,7]{196,1,28,4}@cuda, %a1: bf16[2,4,4,4]{64,1,16,4}@cuda, %a2: bf16[2,4,4,4]{64,1,16,4}@cuda) {
  %0 = aten::relu.default(%a0) -> bf16[2,4,7,7]{196,1,28,4}@cuda
  %1 = aten::permute.default(%0, [0, 2, 3, 1]) -> bf16[2,7,7,4]{196,28,4,1}@cuda
  %2 = tccd::max_pool2d_values.default(%1, [3, 3], [2, 2], [1, 1], [1], false, true) -> bf16[2,4,4,4]{64,16,4,1}@cuda
  %3 = aten::permute.default(%2, [0, 3, 1, 2]) -> bf16[2,4,4,4]{64,1,16,4}@cuda
  %4 = tccd::max_pool2d_offsets.default(%1, [3, 3], [2, 2], [1, 1], [1], false, true) -> i64[2,4,4,4]{64,16,4,1}@cuda
  %5 = aten::permute.default(%4, [0, 3, 1, 2]) -> i64[2,4,4,4]{64,1,16,4}@cuda
  %6 = aten::add.Tensor(%a1, %a2) -> bf16[2,4,4,4]{64,1,16,4}@cuda
  %7 = aten::permute.default(%6, [0, 2, 3, 1]) -> bf16[2,4,4,4]{64,16,4,1}@cuda
  %8 = aten::permute.default(%5, [0, 2, 3, 1]) -> i64[2,4,4,4]{64,16,4,1}@cuda
  %9 = tccd::max_pool2d_gather_backward.default(%7, %8, [3, 3], [2, 2], [1, 1], [1, 1], false, true) -> bf16[2,7,7,4]{196,28,4,1}@cuda
  %10 = aten::permute.default(%9, [0, 3, 1, 2]) -> bf16[2,4,7,7]{196,1,28,4}@cuda
  %11 = aten::threshold_backward.default(%10, %0, 0) -> bf16[2,4,7,7]{196,1,28,4}@cuda
  return (%3, %11)
})"));
}

TEST_CASE("NCHW max pooling and its backward keep their shapes and strides",
          "[max_pool_kernels]") {
  bool changed = false;
  const std::string out = Run(
      R"(graph(%a0: f32[2,4,7,7]{196,49,7,1}@cpu, %a1: f32[2,4,4,4]{64,16,4,1}@cpu) {
  %0 = aten::max_pool2d_with_indices.default(%a0, [3, 3], [2, 2], [1, 1]) -> (f32[2,4,4,4]{64,16,4,1}@cpu, i64[2,4,4,4]{64,16,4,1}@cpu)
  %1 = aten::max_pool2d_with_indices_backward.default(%a1, %a0, [3, 3], [2, 2], [1, 1], [1, 1], false, %0#1) -> f32[2,4,7,7]{196,49,7,1}@cpu
  return (%0, %1)
})",
      &changed);
  CHECK(changed);
  CHECK(out == Canonical(R"(graph(%a0: f32[2,4,7,7]{196,49,7,1}@cpu, %a1: f32[2,4,4,4]{64,16,4,1}@cpu) {
  %0 = tccd::max_pool2d_values.default(%a0, [3, 3], [2, 2], [1, 1], [1], false, false) -> f32[2,4,4,4]{64,16,4,1}@cpu
  %1 = tccd::max_pool2d_offsets.default(%a0, [3, 3], [2, 2], [1, 1], [1], false, false) -> i64[2,4,4,4]{64,16,4,1}@cpu
  %2 = tccd::max_pool2d_gather_backward.default(%a1, %1, [3, 3], [2, 2], [1, 1], [1, 1], false, false) -> f32[2,4,7,7]{196,49,7,1}@cpu
  return (%0, %2)
})"));
}

TEST_CASE("without the backward (the CPU's default) ATen's backward reads the offsets kernel",
          "[max_pool_kernels]") {
  bool changed = false;
  const std::string out = Run(
      R"(graph(%a0: f32[2,4,7,7]{196,49,7,1}@cpu, %a1: f32[2,4,4,4]{64,16,4,1}@cpu) {
  %0 = aten::max_pool2d_with_indices.default(%a0, [3, 3], [2, 2], [1, 1]) -> (f32[2,4,4,4]{64,16,4,1}@cpu, i64[2,4,4,4]{64,16,4,1}@cpu)
  %1 = aten::max_pool2d_with_indices_backward.default(%a1, %a0, [3, 3], [2, 2], [1, 1], [1, 1], false, %0#1) -> f32[2,4,7,7]{196,49,7,1}@cpu
  return (%0, %1)
})",
      &changed, /*backward=*/false);
  CHECK(changed);
  CHECK(out == Canonical(R"(graph(%a0: f32[2,4,7,7]{196,49,7,1}@cpu, %a1: f32[2,4,4,4]{64,16,4,1}@cpu) {
  %0 = tccd::max_pool2d_values.default(%a0, [3, 3], [2, 2], [1, 1], [1], false, false) -> f32[2,4,4,4]{64,16,4,1}@cpu
  %1 = tccd::max_pool2d_offsets.default(%a0, [3, 3], [2, 2], [1, 1], [1], false, false) -> i64[2,4,4,4]{64,16,4,1}@cpu
  %2 = aten::max_pool2d_with_indices_backward.default(%a1, %a0, [3, 3], [2, 2], [1, 1], [1, 1], false, %1) -> f32[2,4,7,7]{196,49,7,1}@cpu
  return (%0, %2)
})"));
  // A backward alone: nothing to do.
  const char* alone = R"(graph(%a0: f32[2,4,7,7]{196,49,7,1}@cpu, %a1: f32[2,4,4,4]{64,16,4,1}@cpu, %a2: i64[2,4,4,4]{64,16,4,1}@cpu) {
  %0 = aten::max_pool2d_with_indices_backward.default(%a1, %a0, [3, 3], [2, 2], [1, 1], [1, 1], false, %a2) -> f32[2,4,7,7]{196,49,7,1}@cpu
  return (%0)
})";
  CHECK(Run(alone, &changed, /*backward=*/false) == Canonical(alone));
  CHECK(!changed);
}

TEST_CASE("ceil_mode, dilation and f64 max pools stay ATen ops", "[max_pool_kernels]") {
  const char* text =
      R"(graph(%a0: f32[2,4,7,7]{196,49,7,1}@cpu, %a1: f64[2,4,7,7]{196,49,7,1}@cpu) {
  %0 = aten::max_pool2d_with_indices.default(%a0, [3, 3], [2, 2], [1, 1], [1, 1], true) -> (f32[2,4,4,4]{64,16,4,1}@cpu, i64[2,4,4,4]{64,16,4,1}@cpu)
  %1 = aten::max_pool2d_with_indices.default(%a0, [2, 2], [2, 2], [0, 0], [2, 2]) -> (f32[2,4,3,3]{36,9,3,1}@cpu, i64[2,4,3,3]{36,9,3,1}@cpu)
  %2 = aten::max_pool2d_with_indices.default(%a1, [3, 3], [2, 2], [1, 1]) -> (f64[2,4,4,4]{64,16,4,1}@cpu, i64[2,4,4,4]{64,16,4,1}@cpu)
  return (%0, %1, %2)
})";
  bool changed = true;
  const std::string out = Run(text, &changed);
  CHECK_FALSE(changed);
  CHECK(out == Canonical(text));
}

TEST_CASE("the channels-last stem's pool kernels read and write through permuted views",
          "[max_pool_kernels]") {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(kStem);
  REQUIRE(g.ok());
  MaxPoolKernels pass;
  REQUIRE(pass.Run(*g).ok());
  absl::StatusOr<Partition> p = PartitionForFusion(*g, {});
  REQUIRE(p.ok());
  CHECK(PrintPartition(*g, *p) ==
        "fused %0 -> %0\nextern %1 aten::permute.default\nfused %2 -> %2\nextern %3 "
        "aten::permute.default\nfused %4 -> %4\nextern %5 aten::permute.default\nfused %6 -> "
        "%6\nextern %7 aten::permute.default\nextern %8 aten::permute.default\nfused %9 -> "
        "%9\nextern %10 aten::permute.default\nfused %11 -> %11\n");
}

TEST_CASE("a pool backward whose gradient other ops read takes no consumers (knob: it does)",
          "[max_pool_kernels]") {
  // As in a ResNet stem (NCHW here: channels-last gradients are written through a permuted view,
  // which keeps consumers out anyway): the batch norm's backward sums read the gradient beside
  // the ReLU backward and its f32 cast.
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(
      R"(graph(%a0: bf16[2,4,7,7]{196,49,7,1}@cuda, %a1: bf16[2,4,4,4]{64,16,4,1}@cuda, %a2: i64[2,4,4,4]{64,16,4,1}@cuda) {
  %0 = aten::max_pool2d_with_indices_backward.default(%a1, %a0, [3, 3], [2, 2], [1, 1], [1, 1], false, %a2) -> bf16[2,4,7,7]{196,49,7,1}@cuda
  %1 = aten::threshold_backward.default(%0, %a0, 0) -> bf16[2,4,7,7]{196,49,7,1}@cuda
  %2 = aten::_to_copy.default(%1, dtype=f32) -> f32[2,4,7,7]{196,49,7,1}@cuda
  %3 = aten::sum.dim_IntList(%0, [0, 2, 3]) -> bf16[4]{1}@cuda
  return (%2, %3)
})");
  REQUIRE(g.ok());
  MaxPoolKernels pass;
  REQUIRE(pass.Run(*g).ok());
  absl::StatusOr<Partition> alone = PartitionForFusion(*g, {});
  REQUIRE(alone.ok());
  CHECK(PrintPartition(*g, *alone) ==
        "fused %0 -> %0\nfused %1 %2 -> %2\nextern %3 aten::sum.dim_IntList\n");
  FusionOptions fused_options;
  fused_options.max_pool_backward_alone = false;
  absl::StatusOr<Partition> fused = PartitionForFusion(*g, fused_options);
  REQUIRE(fused.ok());
  CHECK(PrintPartition(*g, *fused) ==
        "fused %0 %1 %2 -> %0 %2\nextern %3 aten::sum.dim_IntList\n");
}

TEST_CASE("a 2x2 max pool's kernels", "[max_pool_kernels]") {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(
      R"(graph(%a0: f32[1,2,4,4]{32,16,4,1}@cuda, %a1: f32[1,2,2,2]{8,4,2,1}@cuda) {
  %0 = aten::max_pool2d_with_indices.default(%a0, [2, 2]) -> (f32[1,2,2,2]{8,4,2,1}@cuda, i64[1,2,2,2]{8,4,2,1}@cuda)
  %1 = aten::max_pool2d_with_indices_backward.default(%a1, %a0, [2, 2], [], [0, 0], [1, 1], false, %0#1) -> f32[1,2,4,4]{32,16,4,1}@cuda
  return (%0, %1)
})");
  REQUIRE(g.ok());
  MaxPoolKernels pass;
  REQUIRE(pass.Run(*g).ok());
  absl::StatusOr<Partition> p = PartitionForFusion(*g, {});
  REQUIRE(p.ok());
  std::vector<std::string> kernels;
  for (size_t i = 0; i < p->groups.size(); ++i) {
    absl::StatusOr<PointwiseKernel> k = BuildPointwiseKernel(*g, p->groups[i], "k");
    INFO(k.status().ToString());
    REQUIRE(k.ok());
    kernels.push_back(PrintPointwiseKernel(*k));
  }
  REQUIRE(kernels.size() == 3);
  // The forward: four gathers each (one per window point), the index kernel with the running
  // (value, index) pair.
  CHECK(kernels[0].starts_with(
      "pointwise @k[1,2,2,2](in0: f32) -> (out0: f32) {\n  // fused: tccd::max_pool2d_values"));
  CHECK(kernels[1].starts_with(
      "pointwise @k[1,2,2,2](in0: f32) -> (out0: i64) {\n  // fused: tccd::max_pool2d_offsets"));
  CHECK(kernels[2] ==
        R"(pointwise @k[1,2,4,4](in0: f32, in1: i64) -> (out0: f32) {
  // fused: tccd::max_pool2d_gather_backward.default
  %0 = index.i64 dim2
  %1 = cast.f32 %0
  %2 = constant.f32 0.5
  %3 = add.f32 %1, %2
  %4 = constant.f32 2.0
  %5 = div.f32 %3, %4
  %6 = floor.f32 %5
  %7 = cast.i64 %6
  %8 = constant.i64 0
  %9 = ge.b8 %7, %8
  %10 = constant.i64 2
  %11 = lt.b8 %7, %10
  %12 = and.b8 %9, %11
  %13 = constant.i64 2
  %14 = constant.i64 2
  %15 = mul.i64 %7, %14
  %16 = add.i64 %15, %13
  %17 = lt.b8 %0, %16
  %18 = and.b8 %12, %17
  %19 = index.i64 dim3
  %20 = cast.f32 %19
  %21 = constant.f32 0.5
  %22 = add.f32 %20, %21
  %23 = constant.f32 2.0
  %24 = div.f32 %22, %23
  %25 = floor.f32 %24
  %26 = cast.i64 %25
  %27 = constant.i64 0
  %28 = ge.b8 %26, %27
  %29 = constant.i64 2
  %30 = lt.b8 %26, %29
  %31 = and.b8 %28, %30
  %32 = constant.i64 2
  %33 = constant.i64 2
  %34 = mul.i64 %26, %33
  %35 = add.i64 %34, %32
  %36 = lt.b8 %19, %35
  %37 = and.b8 %31, %36
  %38 = constant.i64 4
  %39 = mul.i64 %0, %38
  %40 = add.i64 %39, %19
  %41 = constant.f32 0.0
  %42 = and.b8 %18, %37
  %43 = index.i64 dim0
  %44 = index.i64 dim1
  %45 = gather.i64 in1, %42, %43, %44, %7, %26
  %46 = eq.b8 %45, %40
  %47 = and.b8 %42, %46
  %48 = gather.f32 in0, %47, %43, %44, %7, %26
  %49 = where.f32 %47, %48, %41
  store.f32 out0, %49
}
)");
}

TEST_CASE("the values and offsets kernels merge horizontally; other index kernels do not",
          "[max_pool_kernels]") {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(kStem);
  REQUIRE(g.ok());
  MaxPoolKernels pass;
  REQUIRE(pass.Run(*g).ok());
  absl::StatusOr<Partition> p = PartitionForFusion(*g, {});
  REQUIRE(p.ok());
  // The graph is tiny: with the small-index-group rule (horizontal-index-groups) the add would
  // merge into the pool's kernel too; this test is about the gather-only rule alone.
  FusionOptions options;
  options.max_index_merge_numel = 0;
  absl::StatusOr<bool> merged = FuseHorizontally(*g, options, *p);
  REQUIRE(merged.ok());
  CHECK(*merged);
  const int group = p->group_of[2];
  REQUIRE(group >= 0);
  CHECK(p->group_of[4] == group);
  absl::StatusOr<PointwiseKernel> k = BuildPointwiseKernel(*g, p->groups[group], "k");
  INFO(k.status().ToString());
  REQUIRE(k.ok());
  // One kernel, two outputs; each op's nine window gathers stay in the IR (the kernel IR has no
  // value numbering) and are the same loads for the backend compilers to merge.
  const std::string text = PrintPointwiseKernel(*k);
  CHECK(text.starts_with("pointwise @k[2,4,4,4](in0: bf16) -> (out0: bf16, out1: i64) {\n"));
  size_t gathers = 0;
  for (size_t at = text.find("gather.bf16 in0"); at != std::string::npos;
       at = text.find("gather.bf16 in0", at + 1))
    ++gathers;
  CHECK(gathers == 18);
}

}  // namespace
}  // namespace tccd::codegen

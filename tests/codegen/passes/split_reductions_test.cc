// SplitReductions: IR text in, IR text out; both stages are row kernels.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/batch_norm_decomposition.h"
#include "codegen/passes/dead_code_elimination.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/kernel_builder.h"
#include "codegen/passes/reduction_fusion.h"
#include "codegen/passes/split_reductions.h"

namespace tccd::codegen {
namespace {

std::string Rewrite(const std::string& text, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  SplitReductions pass;
  absl::StatusOr<bool> c = pass.Run(*g);
  REQUIRE(c.ok());
  *changed = *c;
  DeadCodeElimination dce;
  REQUIRE(dce.Run(*g).ok());
  return ir::PrintGraph(*g);
}

std::string Canonical(const std::string& text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return ir::PrintGraph(*g);
}

// The partition after fusion and row fusion; every group must build a valid kernel.
std::string Partitioned(const std::string& text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  REQUIRE(g.ok());
  absl::StatusOr<Partition> p = PartitionForFusion(*g, {});
  REQUIRE(p.ok());
  REQUIRE(FuseRowReductions(*g, {}, *p).ok());
  for (size_t i = 0; i < p->groups.size(); ++i) {
    absl::StatusOr<PointwiseKernel> k = BuildPointwiseKernel(*g, p->groups[i], "k");
    INFO(k.status().ToString());
    CHECK(k.ok());
  }
  return PrintPartition(*g, *p);
}

TEST_CASE("a var_mean over 64 rows of 802816 becomes chunk statistics and their combination",
          "[split_reductions]") {
  bool changed = false;
  const std::string out = Rewrite(R"(graph(%a0: f32[64,64,12544]{802816,12544,1}@cuda) {
  %0 = aten::var_mean.correction(%a0, [1, 2], correction=1, keepdim=true) -> (f32[64,1,1]{1,1,1}@cuda, f32[64,1,1]{1,1,1}@cuda)
  return (%0, %0#1)
}
)",
                                  &changed);
  CHECK(changed);
  // S = 32: 2048 stage-1 rows of 25088 (S = 16 gives 1024 rows, but of 50176: streamed). Stage 2 is
  // one row kernel (the mean of the chunk means, then the mean of chunk variance + squared
  // deviation of the chunk mean), with the unbiased correction as its epilogue, and gives the
  // declared keepdim shape itself.
  CHECK(out == Canonical(R"(graph(%a0: f32[64,64,12544]{802816,12544,1}@cuda) {
  %0 = aten::view.default(%a0, [64, 32, 2, 12544]) -> f32[64,32,2,12544]{802816,25088,12544,1}@cuda
  %1 = aten::var_mean.correction(%0, [2, 3], correction=0) -> (f32[64,32]{32,1}@cuda, f32[64,32]{32,1}@cuda)
  %2 = aten::view.default(%1, [64, 32, 1]) -> f32[64,32,1]{32,1,1}@cuda
  %3 = aten::view.default(%1#1, [64, 32, 1]) -> f32[64,32,1]{32,1,1}@cuda
  %4 = aten::mean.dim(%3, [1, 2], true) -> f32[64,1,1]{1,1,1}@cuda
  %5 = aten::sub.Tensor(%3, %4) -> f32[64,32,1]{32,1,1}@cuda
  %6 = aten::mul.Tensor(%5, %5) -> f32[64,32,1]{32,1,1}@cuda
  %7 = aten::add.Tensor(%2, %6) -> f32[64,32,1]{32,1,1}@cuda
  %8 = aten::mean.dim(%7, [1, 2], true) -> f32[64,1,1]{1,1,1}@cuda
  %9 = aten::mul.Tensor(%8, 1.0000012456169853) -> f32[64,1,1]{1,1,1}@cuda
  return (%9, %4)
}
)"));
  CHECK(Partitioned(out) ==
        R"(extern %0 aten::view.default
fused(rows, reduce 2) %1 -> %1 %1#1
extern %2 aten::view.default
extern %3 aten::view.default
fused(rows, reduce 2) %4 %5 %6 %7 %8 %9 -> %4 %9
)");
}

TEST_CASE("a bf16 sum reads its cast prologue over the split shape; the partials are f32",
          "[split_reductions]") {
  bool changed = false;
  const std::string out = Rewrite(R"(graph(%a0: bf16[8,64,100352]{6422528,100352,1}@cuda) {
  %0 = aten::permute.default(%a0, [1, 0, 2]) -> bf16[64,8,100352]{100352,6422528,1}@cuda
  %1 = aten::relu.default(%0) -> bf16[64,8,100352]{802816,100352,1}@cuda
  %2 = aten::sum.dim_IntList(%1, [1, 2]) -> bf16[64]{1}@cuda
  return (%2)
}
)",
                                  &changed);
  CHECK(changed);
  CHECK(out == Canonical(R"(graph(%a0: bf16[8,64,100352]{6422528,100352,1}@cuda) {
  %0 = aten::permute.default(%a0, [1, 0, 2]) -> bf16[64,8,100352]{100352,6422528,1}@cuda
  %1 = aten::view.default(%0, [64, 8, 1, 100352]) -> bf16[64,8,1,100352]{100352,6422528,6422528,1}@cuda
  %2 = aten::relu.default(%1) -> bf16[64,8,1,100352]{802816,100352,100352,1}@cuda
  %3 = aten::sum.dim_IntList(%2, [2, 3], false, dtype=f32) -> f32[64,8]{8,1}@cuda
  %4 = aten::view.default(%3, [64, 8, 1]) -> f32[64,8,1]{8,1,1}@cuda
  %5 = aten::sum.dim_IntList(%4, [1, 2], false, dtype=bf16) -> bf16[64]{1}@cuda
  return (%5)
}
)"));
  CHECK(Partitioned(out) ==
        R"(extern %0 aten::permute.default
extern %1 aten::view.default
fused(rows, reduce 2) %2 %3 -> %3
extern %4 aten::view.default
fused(rows, reduce 2) %5 -> %5
)");
}

TEST_CASE("a full amax of a long vector: stage 2 gives the 0-dim result", "[split_reductions]") {
  bool changed = false;
  const std::string out = Rewrite(R"(graph(%a0: f16[1048576]{1}@cuda) {
  %0 = aten::amax.default(%a0, [0]) -> f16[]{}@cuda
  return (%0)
}
)",
                                  &changed);
  CHECK(changed);
  CHECK(out == Canonical(R"(graph(%a0: f16[1048576]{1}@cuda) {
  %0 = aten::view.default(%a0, [1024, 1024]) -> f16[1024,1024]{1024,1}@cuda
  %1 = aten::amax.default(%0, [1], false) -> f16[1024]{1}@cuda
  %2 = aten::amax.default(%1, [0], false) -> f16[]{}@cuda
  return (%2)
}
)"));
  CHECK(Partitioned(out) ==
        R"(extern %0 aten::view.default
fused(rows, reduce 1) %1 -> %1
fused(rows, reduce 1) %2 -> %2
)");
}

TEST_CASE("split factors at ResNet-50's batch-64 norm shapes", "[split_reductions]") {
  // The statistics reduction BatchNormDecomposition emits: [C, N, H*W] over dims [1, 2].
  auto factor = [](const std::string& x) {
    absl::StatusOr<ir::Graph> g = ir::ParseGraph(
        "graph(%a0: " + x +
        ") {\n"
        "  %0 = aten::var_mean.correction(%a0, [1, 2], correction=0, keepdim=true) -> "
        "(f32[64,1,1]{1,1,1}@cuda, f32[64,1,1]{1,1,1}@cuda)\n  return (%0, %0#1)\n}\n");
    REQUIRE(g.ok());
    return SplitFactor(*g, g->nodes[0]).value_or(0);
  };
  // Stem: 64 rows of 64x112x112: 2048 stage-1 rows of 25088 (held in registers).
  CHECK(factor("f32[64,64,12544]{802816,12544,1}@cuda") == 32);
  // layer1: 64 rows of 64x56x56: 1024 rows of 12544.
  CHECK(factor("f32[64,64,3136]{200704,3136,1}@cuda") == 16);
  // Batch 8 stem: at most 8 chunks (d0 = 8): 512 rows of 12544.
  CHECK(factor("f32[64,8,12544]{100352,12544,1}@cuda") == 8);
  // Batch 8 layer1 (25088 per row) is a plain row reduction; batch 1 has no split (d0 = 1).
  CHECK(factor("f32[64,8,3136]{25088,3136,1}@cuda") == 0);
  CHECK(factor("f32[64,1,200704]{200704,200704,1}@cuda") == 0);
}

TEST_CASE("nothing to do: short rows, many rows, no divisor, CPU, softmax", "[split_reductions]") {
  bool changed = true;
  const std::string text =
      R"(graph(%a0: f32[64,8,4096]{32768,4096,1}@cuda, %a1: f32[256,2,65536]{131072,65536,1}@cuda, %a2: f32[4,1,100000]{100000,100000,1}@cuda, %a3: f32[4,64,12544]{802816,12544,1}@cpu, %a4: f32[4,40000]{40000,1}@cuda) {
  %0 = aten::sum.dim_IntList(%a0, [1, 2]) -> f32[64]{1}@cuda
  %1 = aten::sum.dim_IntList(%a1, [1, 2]) -> f32[256]{1}@cuda
  %2 = aten::mean.dim(%a2, [1, 2]) -> f32[4]{1}@cuda
  %3 = aten::sum.dim_IntList(%a3, [1, 2]) -> f32[4]{1}@cpu
  %4 = aten::_softmax.default(%a4, -1, false) -> f32[4,40000]{40000,1}@cuda
  return (%0, %1, %2, %3, %4)
}
)";
  CHECK(Rewrite(text, &changed) == Canonical(text));
  CHECK_FALSE(changed);
}

TEST_CASE("a 64-channel training batch norm of 112x112 maps decomposes, its statistics split",
          "[split_reductions]") {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(
      R"(graph(%a0: bf16[8,64,112,112]{802816,12544,112,1}@cuda, %a1: f32[64]{1}@cuda, %a2: f32[64]{1}@cuda, %a3: f32[64]{1}@cuda, %a4: f32[64]{1}@cuda) {
  %0 = aten::_native_batch_norm_legit_functional.default(%a0, %a1, %a2, %a3, %a4, true, 0.1, 1e-05) -> (bf16[8,64,112,112]{802816,12544,112,1}@cuda, f32[64]{1}@cuda, f32[64]{1}@cuda, f32[64]{1}@cuda, f32[64]{1}@cuda)
  %1 = aten::relu.default(%0) -> bf16[8,64,112,112]{802816,12544,112,1}@cuda
  return (%1, %0#1, %0#2, %0#3, %0#4)
})");
  REQUIRE(g.ok());
  BatchNormDecomposition bn;
  REQUIRE(*bn.Run(*g));
  SplitReductions split;
  REQUIRE(*split.Run(*g));
  DeadCodeElimination dce;
  REQUIRE(dce.Run(*g).ok());
  const std::string out = ir::PrintGraph(*g);
  CHECK(out.find("_native_batch_norm") == std::string::npos);
  // Stage 1 reads x through a view of its permute (the f32 cast recomputed over the split
  // shape); the statistics' second stage carries rsqrt and both running-stat updates; the
  // normalisation and its relu are one pointwise kernel.
  CHECK(out.find("aten::var_mean.correction(%4, [2, 3], correction=0) -> (f32[64,8]{8,1}@cuda, "
                 "f32[64,8]{8,1}@cuda)") != std::string::npos);
  CHECK(Partitioned(out) ==
        R"(extern %0 aten::view.default
extern %1 aten::permute.default
extern %3 aten::view.default
fused(rows, reduce 2) %4 %5 -> %5 %5#1
extern %6 aten::view.default
extern %7 aten::view.default
extern %17 aten::view.default
extern %19 aten::view.default
extern %22 aten::view.default
extern %26 aten::view.default
fused(rows, reduce 2) %8 %9 %10 %11 %12 %13 %14 %23 %25 %27 -> %8 %14 %23 %27
fused %2 %15 %16 %18 %20 %21 %31 -> %31
extern %24 aten::view.default
extern %28 aten::view.default
extern %29 aten::view.default
extern %30 aten::view.default
extern %32 aten::permute.default
extern %33 aten::view.default
)");
}

TEST_CASE("a 64-channel batch norm backward: both channel sums read one recomputed chain",
          "[split_reductions]") {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(
      R"(graph(%a0: bf16[8,64,112,112]{802816,12544,112,1}@cuda, %a1: bf16[8,64,112,112]{802816,12544,112,1}@cuda, %a2: f32[64]{1}@cuda, %a3: f32[64]{1}@cuda, %a4: f32[64]{1}@cuda) {
  %0 = aten::threshold_backward.default(%a0, %a1, 0) -> bf16[8,64,112,112]{802816,12544,112,1}@cuda
  %1 = aten::native_batch_norm_backward.default(%0, %a1, %a2, %a3, %a4, %a3, %a4, true, 1e-05, [true, true, true]) -> (bf16[8,64,112,112]{802816,12544,112,1}@cuda, f32[64]{1}@cuda, f32[64]{1}@cuda)
  return (%1, %1#1, %1#2)
})");
  REQUIRE(g.ok());
  BatchNormDecomposition bn;
  REQUIRE(*bn.Run(*g));
  SplitReductions split;
  REQUIRE(*split.Run(*g));
  DeadCodeElimination dce;
  REQUIRE(dce.Run(*g).ok());
  const std::string out = ir::PrintGraph(*g);
  CHECK(out.find("native_batch_norm_backward") == std::string::npos);
  CHECK(Partitioned(out) ==
        R"(extern %0 aten::view.default
extern %1 aten::permute.default
extern %2 aten::view.default
extern %3 aten::permute.default
extern %6 aten::view.default
extern %7 aten::permute.default
extern %9 aten::view.default
extern %10 aten::view.default
extern %13 aten::view.default
extern %14 aten::view.default
extern %20 aten::view.default
extern %22 aten::view.default
extern %24 aten::view.default
fused(rows, reduce 2) %15 %16 %17 %21 %23 %25 %26 %27 -> %17 %27
extern %18 aten::view.default
fused(rows, reduce 2) %19 %30 -> %19 %30
extern %28 aten::view.default
fused(rows, reduce 2) %29 %31 -> %29 %31
extern %36 aten::view.default
fused %4 %5 %8 %11 %12 %32 %33 %34 %35 %37 %38 -> %38
extern %39 aten::permute.default
extern %40 aten::view.default
extern %41 aten::view.default
extern %42 aten::view.default
)");
}

}  // namespace
}  // namespace tccd::codegen

// EmbeddingBackwardToScatter and the scatter kernel it leads to: IR text in, IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/kernel/pointwise_kernel.h"
#include "codegen/passes/embedding_backward_to_scatter.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/kernel_builder.h"
#include "codegen/passes/plan_builder.h"
#include "codegen/passes/scatter_ops.h"

namespace tccd::codegen {
namespace {

std::string Run(const std::string& text, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  EmbeddingBackwardToScatter pass;
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

TEST_CASE("an f32 embedding gradient becomes one scatter-add node",
          "[embedding_backward_to_scatter]") {
  bool changed = false;
  const std::string out = Run(
      R"(graph(%a0: f32[2,8,16]{128,16,1}@cuda, %a1: i64[2,8]{8,1}@cuda) {
  %0 = aten::embedding_dense_backward.default(%a0, %a1, 100, -1, false) -> f32[100,16]{16,1}@cuda
  return (%0)
})",
      &changed);
  CHECK(changed);
  CHECK(out == Canonical(R"(graph(%a0: f32[2,8,16]{128,16,1}@cuda, %a1: i64[2,8]{8,1}@cuda) {
  %0 = tccd::embedding_scatter_add.default(%a0, %a1, 100, -1) -> f32[100,16]{16,1}@cuda
  return (%0)
})"));
}

TEST_CASE("a bf16 embedding gradient accumulates in f32 and is cast once",
          "[embedding_backward_to_scatter]") {
  bool changed = false;
  const std::string out = Run(
      R"(graph(%a0: bf16[64,32]{32,1}@cuda, %a1: i32[64]{1}@cuda) {
  %0 = aten::embedding_dense_backward.default(%a0, %a1, 50, 0, false) -> bf16[50,32]{32,1}@cuda
  return (%0)
})",
      &changed);
  CHECK(changed);
  CHECK(out == Canonical(R"(graph(%a0: bf16[64,32]{32,1}@cuda, %a1: i32[64]{1}@cuda) {
  %0 = tccd::embedding_scatter_add.default(%a0, %a1, 50, 0) -> f32[50,32]{32,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=bf16) -> bf16[50,32]{32,1}@cuda
  return (%1)
})"));
}

TEST_CASE("embedding gradients the scatter does not take stay ATen ops (nothing to do)",
          "[embedding_backward_to_scatter]") {
  for (const char* text : {
           // scale_grad_by_freq: needs per-index counts
           R"(graph(%a0: f32[64,32]{32,1}@cuda, %a1: i64[64]{1}@cuda) {
  %0 = aten::embedding_dense_backward.default(%a0, %a1, 50, -1, true) -> f32[50,32]{32,1}@cuda
  return (%0)
})",
           // the CPU keeps ATen's kernel
           R"(graph(%a0: f32[64,32]{32,1}@cpu, %a1: i64[64]{1}@cpu) {
  %0 = aten::embedding_dense_backward.default(%a0, %a1, 50, -1, false) -> f32[50,32]{32,1}@cpu
  return (%0)
})",
           // a 0-dim index (one token)
           R"(graph(%a0: f32[32]{1}@cuda, %a1: i64[]{}@cuda) {
  %0 = aten::embedding_dense_backward.default(%a0, %a1, 50, -1, false) -> f32[50,32]{32,1}@cuda
  return (%0)
})",
           // no index at all
           R"(graph(%a0: f32[0,32]{32,1}@cuda, %a1: i64[0]{1}@cuda) {
  %0 = aten::embedding_dense_backward.default(%a0, %a1, 50, -1, false) -> f32[50,32]{32,1}@cuda
  return (%0)
})",
           // f64
           R"(graph(%a0: f64[64,32]{32,1}@cuda, %a1: i64[64]{1}@cuda) {
  %0 = aten::embedding_dense_backward.default(%a0, %a1, 50, -1, false) -> f64[50,32]{32,1}@cuda
  return (%0)
})",
       }) {
    INFO(text);
    bool changed = true;
    const std::string out = Run(text, &changed);
    CHECK_FALSE(changed);
    CHECK(out == Canonical(text));
  }
}

TEST_CASE("a scatter node is a kernel of its own over the gradient's space, its output scattered",
          "[embedding_backward_to_scatter][fusion]") {
  // The gradient's producer (a mul) and the cast's reader stay out of the scatter's kernel.
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(
      R"(graph(%a0: bf16[2,8,16]{128,16,1}@cuda, %a1: i64[2,8]{8,1}@cuda, %a2: bf16[2,8,16]{128,16,1}@cuda) {
  %0 = aten::mul.Tensor(%a0, %a2) -> bf16[2,8,16]{128,16,1}@cuda
  %1 = tccd::embedding_scatter_add.default(%0, %a1, 100, 3) -> f32[100,16]{16,1}@cuda
  %2 = aten::_to_copy.default(%1, dtype=bf16) -> bf16[100,16]{16,1}@cuda
  %3 = aten::mul.Tensor(%2, %2) -> bf16[100,16]{16,1}@cuda
  return (%3)
})");
  REQUIRE(g.ok());
  REQUIRE(IsScatterOp(*g, g->nodes[1]));
  absl::StatusOr<Partition> p = PartitionForFusion(*g, FusionOptions{});
  REQUIRE(p.ok());
  CHECK(PrintPartition(*g, *p) == "fused %0 -> %0\nfused %1 -> %1\nfused %2 %3 -> %3\n");
  const FusionGroup& group = p->groups[p->group_of[1]];
  CHECK(group.shape == std::vector<int64_t>{2, 8, 16});
  absl::StatusOr<PointwiseKernel> k = BuildPointwiseKernel(*g, group, "tccd_k1");
  INFO(k.status().ToString());
  REQUIRE(k.ok());
  CHECK(
      PrintPointwiseKernel(*k) ==
      R"(pointwise @tccd_k1[2,8,16](in0: bf16, in1: i64) -> (out0: f32) scatter(zero-fills 1600 elements) {
  // fused: tccd::embedding_scatter_add.default
  %0 = load.bf16 in0
  %1 = cast.f32 %0
  %2 = constant.b8 true
  %3 = index.i64 dim0
  %4 = index.i64 dim1
  %5 = gather.i64 in1, %2, %3, %4
  %6 = constant.i64 0
  %7 = ge.b8 %5, %6
  %8 = constant.i64 100
  %9 = lt.b8 %5, %8
  %10 = and.b8 %7, %9
  %11 = constant.i64 3
  %12 = ne.b8 %5, %11
  %13 = and.b8 %10, %12
  %14 = index.i64 dim2
  scatter_add.f32 out0, %13, %1, %5, %14
}
)");
  // The plan gives the scattered output its own strides, the indices theirs (gather operands).
  absl::StatusOr<v1::Plan> plan = BuildPlan(*g, *p,
                                            {*BuildPointwiseKernel(*g, p->groups[0], "tccd_k0"), *k,
                                             *BuildPointwiseKernel(*g, p->groups[2], "tccd_k2")},
                                            {"kernels_cuda.so", "tccd-cuda-1", "cuda_pointwise"});
  INFO(plan.status().ToString());
  REQUIRE(plan.ok());
  const v1::NativeCall& call = plan->steps(1).native();
  CHECK(std::vector<int64_t>(call.expected_strides().begin(), call.expected_strides().end()) ==
        std::vector<int64_t>{128, 16, 1, 8, 1, 0, 16, 1, 0});
}

}  // namespace
}  // namespace tccd::codegen

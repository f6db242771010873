// Fusion decisions: IR text in, partition text out (see PrintPartition).
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/kernel_builder.h"

namespace tccd::codegen {
namespace {

std::string Partitioned(const char* text, FusionOptions options = {}) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  REQUIRE(g.ok());
  absl::StatusOr<Partition> p = PartitionForFusion(*g, options);
  REQUIRE(p.ok());
  // Every group must also lower to a valid kernel.
  for (size_t i = 0; i < p->groups.size(); ++i) {
    absl::StatusOr<PointwiseKernel> k = BuildPointwiseKernel(*g, p->groups[i], "k");
    INFO(k.status().ToString());
    CHECK(k.ok());
  }
  return PrintPartition(*g, *p);
}

TEST_CASE("a pointwise chain with a broadcast operand becomes one kernel", "[fusion]") {
  CHECK(Partitioned(R"(graph(%a0: f32[4,8]{8,1}@cpu, %a1: f32[4,8]{8,1}@cpu, %a2: f32[8]{1}@cpu) {
  %0 = aten::mul.Tensor(%a0, %a1) -> f32[4,8]{8,1}@cpu
  %1 = aten::add.Tensor(%0, %a2, alpha=2) -> f32[4,8]{8,1}@cpu
  %2 = aten::relu.default(%1) -> f32[4,8]{8,1}@cpu
  return (%2)
})") == "fused %0 %1 %2 -> %2\n");
}

TEST_CASE("an extern op splits pointwise chains and intermediates it reads escape", "[fusion]") {
  CHECK(Partitioned(R"(graph(%a0: f32[4,4]{4,1}@cpu, %a1: f32[4,4]{4,1}@cpu) {
  %0 = aten::sigmoid.default(%a0) -> f32[4,4]{4,1}@cpu
  %1 = aten::mul.Tensor(%0, %a0) -> f32[4,4]{4,1}@cpu
  %2 = aten::mm.default(%1, %a1) -> f32[4,4]{4,1}@cpu
  %3 = aten::tanh.default(%2) -> f32[4,4]{4,1}@cpu
  %4 = aten::add.Tensor(%3, %0) -> f32[4,4]{4,1}@cpu
  return (%4)
})") == "fused %0 %1 -> %0 %1\nextern %2 aten::mm.default\nfused %3 %4 -> %4\n");
}

TEST_CASE("a node that would close a cycle through an extern starts a new group", "[fusion]") {
  // %2 reads %0 (group A) and %1, which itself reads group A: fusing %2 into A would need A
  // both before and after %1.
  CHECK(Partitioned(R"(graph(%a0: f32[4,4]{4,1}@cpu) {
  %0 = aten::relu.default(%a0) -> f32[4,4]{4,1}@cpu
  %1 = aten::mm.default(%0, %0) -> f32[4,4]{4,1}@cpu
  %2 = aten::add.Tensor(%0, %1) -> f32[4,4]{4,1}@cpu
  return (%2)
})") == "fused %0 -> %0\nextern %1 aten::mm.default\nfused %2 -> %2\n");
}

TEST_CASE("different iteration shapes are different kernels", "[fusion]") {
  CHECK(Partitioned(R"(graph(%a0: f32[4,8]{8,1}@cpu) {
  %0 = aten::exp.default(%a0) -> f32[4,8]{8,1}@cpu
  %1 = aten::sum.dim_IntList(%0, [1], true) -> f32[4,1]{1,1}@cpu
  %2 = aten::log.default(%1) -> f32[4,1]{1,1}@cpu
  %3 = aten::sub.Tensor(%a0, %2) -> f32[4,8]{8,1}@cpu
  return (%3)
})") == "fused %0 -> %0\nextern %1 aten::sum.dim_IntList\nfused %2 -> %2\nfused %3 -> %3\n");
}

TEST_CASE("backward ops fuse with casts and comparisons", "[fusion]") {
  CHECK(Partitioned(R"(graph(%a0: bf16[16]{1}@cpu, %a1: bf16[16]{1}@cpu) {
  %0 = aten::le.Scalar(%a1, 0) -> b8[16]{1}@cpu
  %1 = aten::threshold_backward.default(%a0, %a1, 0) -> bf16[16]{1}@cpu
  %2 = prims::convert_element_type.default(%1, f32) -> f32[16]{1}@cpu
  %3 = aten::where.self(%0, %2, 1.5) -> f32[16]{1}@cpu
  %4 = aten::gelu_backward.default(%3, %2, approximate="tanh") -> f32[16]{1}@cpu
  return (%4, %1)
})") == "fused %0 %1 %2 %3 %4 -> %1 %4\n");
}

TEST_CASE("nothing to fuse leaves only extern steps", "[fusion]") {
  const char* text = R"(graph(%a0: f32[4,4]{4,1}@cpu) {
  %0 = aten::mm.default(%a0, %a0) -> f32[4,4]{4,1}@cpu
  %1 = aten::div.Tensor_mode(%0, %a0, rounding_mode="floor") -> f32[4,4]{4,1}@cpu
  %2 = aten::div.Tensor(%1, %a0, rounding_mode="floor") -> f32[4,4]{4,1}@cpu
  return (%2)
})";
  CHECK(Partitioned(text) ==
        "extern %0 aten::mm.default\nextern %1 aten::div.Tensor_mode\nextern %2 aten::div.Tensor\n");
  CHECK(Partitioned(R"(graph(%a0: f32[2]{1}@cpu) {
  %0 = aten::relu.default(%a0) -> f32[2]{1}@cpu
  return (%0)
})", FusionOptions{.enable = false}) == "extern %0 aten::relu.default\n");
}

TEST_CASE("float-only ops on integer tensors and overlapping outputs are not fused", "[fusion]") {
  CHECK(Partitioned(R"(graph(%a0: i64[4]{1}@cpu, %a1: f32[4]{1}@cpu) {
  %0 = aten::exp.default(%a0) -> i64[4]{1}@cpu
  %1 = aten::add.Tensor(%a0, %a0) -> i64[4]{1}@cpu
  %2 = aten::relu.default(%a1) -> f32[4,4]{0,1}@cpu
  return (%0, %1, %2)
})") == "extern %0 aten::exp.default\nfused %1 -> %1\nextern %2 aten::relu.default\n");
}

TEST_CASE("the group size limit splits long chains", "[fusion]") {
  CHECK(Partitioned(R"(graph(%a0: f32[4]{1}@cpu) {
  %0 = aten::neg.default(%a0) -> f32[4]{1}@cpu
  %1 = aten::neg.default(%0) -> f32[4]{1}@cpu
  %2 = aten::neg.default(%1) -> f32[4]{1}@cpu
  return (%2)
})", FusionOptions{.max_nodes_per_group = 2}) == "fused %0 %1 -> %1\nfused %2 -> %2\n");
}

}  // namespace
}  // namespace tccd::codegen

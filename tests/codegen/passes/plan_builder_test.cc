// Plans: value ids, iteration-space strides, release lists.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/kernel_builder.h"
#include "codegen/passes/plan_builder.h"

namespace tccd::codegen {
namespace {

TEST_CASE("broadcast and transposed operands get iteration-space strides", "[plan]") {
  ir::TensorType row{.sizes = {8}, .strides = {1}};
  CHECK(IterationStrides(row, {4, 8}) == std::vector<int64_t>{0, 1});
  ir::TensorType col{.sizes = {4, 1}, .strides = {1, 1}};
  CHECK(IterationStrides(col, {4, 8}) == std::vector<int64_t>{1, 0});
  ir::TensorType transposed{.sizes = {4, 8}, .strides = {1, 4}};
  CHECK(IterationStrides(transposed, {4, 8}) == std::vector<int64_t>{1, 4});
  ir::TensorType scalar{};
  CHECK(IterationStrides(scalar, {4, 8}) == std::vector<int64_t>{0, 0});
}

TEST_CASE("a plan defines values in order and releases intermediates after last use", "[plan]") {
  ir::Graph g = *ir::ParseGraph(R"(graph(%a0: f32[4,4]{4,1}@cpu, %a1: f32[4]{1}@cpu) {
  %0 = aten::add.Tensor(%a0, %a1) -> f32[4,4]{4,1}@cpu
  %1 = aten::mm.default(%0, %a0) -> f32[4,4]{4,1}@cpu
  %2 = aten::native_batch_norm.default(%1, None, None, None, None, true, 0.1, 1e-05) -> (f32[4,4]{4,1}@cpu, f32[4]{1}@cpu, f32[4]{1}@cpu)
  %3 = aten::relu.default(%2) -> f32[4,4]{4,1}@cpu
  return (%3, %2#2)
})");
  Partition p = *PartitionForFusion(g, {});
  std::vector<PointwiseKernel> kernels;
  for (size_t i = 0; i < p.groups.size(); ++i)
    kernels.push_back(*BuildPointwiseKernel(g, p.groups[i], "k" + std::to_string(i)));
  absl::StatusOr<v1::Plan> plan =
      BuildPlan(g, p, kernels, {"kernels.so", "tccd-cpu-1", "cpu_pointwise_loop"});
  REQUIRE(plan.ok());
  CHECK(plan->num_inputs() == 2);
  REQUIRE(plan->steps_size() == 4);
  // Step 0: fused add, input ids 0 and 1, output id 2, a1 broadcast along dim 0.
  const v1::NativeCall& add = plan->steps(0).native();
  CHECK(add.symbol() == "k0");
  CHECK(std::vector<int>(add.inputs().begin(), add.inputs().end()) == std::vector<int>{0, 1});
  CHECK(std::vector<int64_t>(add.expected_strides().begin(), add.expected_strides().end()) ==
        std::vector<int64_t>{4, 1, 0, 1, 4, 1});
  CHECK(plan->steps(0).outputs(0) == 2);
  CHECK(std::vector<int>(plan->steps(0).release().begin(), plan->steps(0).release().end()) ==
        std::vector<int>{1});
  // Step 1: mm reads value 2 and input 0, releases both.
  CHECK(plan->steps(1).extern_call().target() == "aten::mm.default");
  CHECK(std::vector<int>(plan->steps(1).release().begin(), plan->steps(1).release().end()) ==
        std::vector<int>{0, 2});
  // Step 2: batch norm: output 1 unused (-1), output 2 returned (never released).
  CHECK(plan->steps(2).outputs_size() == 3);
  CHECK(plan->steps(2).outputs(1) == -1);
  int returned = plan->steps(2).outputs(2);
  CHECK(plan->outputs(1).ref().node() == returned);
  for (const v1::Step& s : plan->steps())
    for (int r : s.release()) CHECK(r != returned);
  CHECK(plan->steps(3).native().kernels(0).ops(0) == "aten::relu.default");
}

}  // namespace
}  // namespace tccd::codegen

// The op-properties table agrees with the lowering libraries, and passes consult it.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/ops/op_properties.h"
#include "codegen/passes/dead_code_elimination.h"
#include "codegen/passes/index_ops.h"
#include "codegen/passes/pointwise_ops.h"
#include "codegen/passes/reduction_ops.h"

namespace tccd::codegen {
namespace {

TEST_CASE("every op a lowering library lowers is listed with its category", "[op_properties]") {
  for (const std::string& target : PointwiseOpTargets()) {
    INFO(target);
    CHECK(PropertiesOf(target).category == OpCategory::kPointwise);
    CHECK(IsSideEffectFree(target));
  }
  for (const std::string& target : IndexOpTargets()) {
    INFO(target);
    CHECK(PropertiesOf(target).category == OpCategory::kIndex);
    CHECK(IsSideEffectFree(target));
  }
  CHECK(PropertiesOf("tccd::embedding_scatter_add.default").category == OpCategory::kScatter);
  CHECK(IsSideEffectFree("tccd::embedding_scatter_add.default"));
  for (const std::string& target : ReductionOpTargets()) {
    INFO(target);
    CHECK(PropertiesOf(target).category == OpCategory::kReduction);
    CHECK(IsSideEffectFree(target));
  }
}

TEST_CASE("views, random and in-place ops, unknown ops", "[op_properties]") {
  CHECK(IsViewOp("aten::permute.default"));
  CHECK(IsViewOp("aten::split.Tensor"));
  CHECK_FALSE(IsViewOp("aten::reshape.default"));  // may copy
  CHECK(IsSideEffectFree("aten::reshape.default"));
  CHECK_FALSE(IsSideEffectFree("aten::native_dropout.default"));
  CHECK_FALSE(IsSideEffectFree("aten::copy_.default"));
  CHECK(PropertiesOf("aten::no_such_op.default").category == OpCategory::kUnknown);
  CHECK_FALSE(IsSideEffectFree("aten::no_such_op.default"));
}

TEST_CASE("DCE drops dead pure ops of every category, keeps random ones", "[op_properties][dce]") {
  ir::Graph g = *ir::ParseGraph(R"(graph(%a0: f32[4,4]{4,1}@cpu) {
  %0 = aten::mm.default(%a0, %a0) -> f32[4,4]{4,1}@cpu
  %1 = aten::split.Tensor(%a0, 2) -> (f32[2,4]{4,1}@cpu, f32[2,4]{4,1}@cpu)
  %2 = aten::sum.dim_IntList(%a0, [1]) -> f32[4]{1}@cpu
  %3 = aten::native_dropout.default(%a0, 0.5, true) -> (f32[4,4]{4,1}@cpu, b8[4,4]{4,1}@cpu)
  %4 = aten::exp.default(%a0) -> f32[4,4]{4,1}@cpu
  return (%4)
})");
  DeadCodeElimination dce;
  REQUIRE(*dce.Run(g));
  CHECK(ir::PrintGraph(g) == R"(graph(%a0: f32[4,4]{4,1}@cpu) {
  %0 = aten::native_dropout.default(%a0, 0.5, true) -> (f32[4,4]{4,1}@cpu, b8[4,4]{4,1}@cpu)
  %1 = aten::exp.default(%a0) -> f32[4,4]{4,1}@cpu
  return (%1)
}
)");
}

}  // namespace
}  // namespace tccd::codegen

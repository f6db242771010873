// The op-properties table agrees with the lowering libraries, and passes consult it.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/ops/op_properties.h"
#include "codegen/passes/dead_code_elimination.h"
#include "codegen/passes/graph_rebuild.h"
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

TEST_CASE("view kinds: the classes of views the layout passes look through", "[op_properties]") {
  // One table answers "is this a reshape / permute / identity view" for every pass; the lists
  // the passes kept before disagreed on t (permute-into-index-ops had it; copy-layout-into-
  // producer, casts-before-views and permutes-before-casts did not) and on detach (channels-last
  // had it; padded-row-stores and padded-output-views did not). t is a permute and detach an
  // identity view everywhere now: their tests say so.
  for (const char* target : {"aten::alias.default", "aten::detach.default"}) {
    INFO(target);
    CHECK(ViewKindOf(target) == ViewKind::kIdentity);
  }
  for (const char* target :
       {"aten::view.default", "aten::_unsafe_view.default", "aten::reshape.default"}) {
    INFO(target);
    CHECK(ViewKindOf(target) == ViewKind::kReshape);
  }
  for (const char* target : {"aten::permute.default", "aten::transpose.int", "aten::t.default"}) {
    INFO(target);
    CHECK(ViewKindOf(target) == ViewKind::kPermute);
    CHECK(IsViewOp(target));
  }
  CHECK(ViewKindOf("aten::expand.default") == ViewKind::kExpand);
  for (const char* target :
       {"aten::slice.Tensor", "aten::select.int", "aten::split.Tensor", "aten::unbind.int",
        "aten::narrow.default", "aten::squeeze.dim", "aten::unsqueeze.default",
        "aten::as_strided.default", "aten::view_as_real.default"}) {
    INFO(target);
    CHECK(ViewKindOf(target) == ViewKind::kOther);
    CHECK(IsViewOp(target));
  }
  CHECK(ViewKindOf("aten::add.Tensor") == ViewKind::kNone);
  CHECK(ViewKindOf("aten::no_such_op.default") == ViewKind::kNone);
  CHECK_FALSE(IsViewOp("aten::reshape.default"));  // a reshape, but it may copy
}

TEST_CASE("PermutationOf: permute, transpose and t, by position or keyword", "[op_properties]") {
  using Perm = std::vector<int64_t>;
  auto node = [](std::string target, std::vector<ir::Arg> args,
                 std::vector<ir::NamedArg> kwargs = {}) {
    return ir::Node{
        .target = std::move(target), .args = std::move(args), .kwargs = std::move(kwargs)};
  };
  const ir::Arg x{ir::ValueRef{-1, 0}};
  CHECK(PermutationOf(node("aten::t.default", {x}), 2) == Perm{1, 0});
  CHECK(PermutationOf(node("aten::t.default", {x}), 1) == Perm{0});  // t of a vector: identity
  CHECK(PermutationOf(node("aten::transpose.int", {x, ir::Arg{int64_t{-1}}, ir::Arg{int64_t{0}}}),
                      3) == Perm{2, 1, 0});
  CHECK(PermutationOf(node("aten::transpose.int", {x},
                           {{"dim0", ir::Arg{int64_t{1}}}, {"dim1", ir::Arg{int64_t{2}}}}),
                      3) == Perm{0, 2, 1});
  CHECK(PermutationOf(
            node("aten::permute.default", {x, IntListArg(std::vector<int64_t>{-1, 0, 1})}), 3) ==
        Perm{2, 0, 1});
  // Not a permutation, or not a permute at all.
  CHECK_FALSE(PermutationOf(
      node("aten::permute.default", {x, IntListArg(std::vector<int64_t>{0, 0, 1})}), 3));
  CHECK_FALSE(
      PermutationOf(node("aten::transpose.int", {x, ir::Arg{int64_t{3}}, ir::Arg{int64_t{0}}}), 3));
  CHECK_FALSE(
      PermutationOf(node("aten::view.default", {x, IntListArg(std::vector<int64_t>{6})}), 2));
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

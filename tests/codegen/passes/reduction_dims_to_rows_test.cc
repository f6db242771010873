// ReductionDimsToRows: IR text in, IR text out; the rewritten reduction is a row kernel.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/kernel_builder.h"
#include "codegen/passes/reduction_dims_to_rows.h"
#include "codegen/passes/reduction_fusion.h"

namespace tccd::codegen {
namespace {

std::string Rewrite(const std::string& text, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  ReductionDimsToRows pass;
  absl::StatusOr<bool> c = pass.Run(*g);
  REQUIRE(c.ok());
  *changed = *c;
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

TEST_CASE("a sum over a middle dim becomes a row sum of a permuted view", "[reduction_dims]") {
  bool changed = false;
  const std::string out = Rewrite(R"(graph(%a0: f32[4,8,16]{128,16,1}@cuda) {
  %0 = aten::sum.dim_IntList(%a0, [1]) -> f32[4,16]{16,1}@cuda
  %1 = aten::relu.default(%0) -> f32[4,16]{16,1}@cuda
  return (%1)
}
)",
                                  &changed);
  CHECK(changed);
  CHECK(out == R"(graph(%a0: f32[4,8,16]{128,16,1}@cuda) {
  %0 = aten::permute.default(%a0, [0, 2, 1]) -> f32[4,16,8]{128,1,16}@cuda
  %1 = aten::sum.dim_IntList(%0, [2]) -> f32[4,16]{16,1}@cuda
  %2 = aten::relu.default(%1) -> f32[4,16]{16,1}@cuda
  return (%2)
}
)");
  // The sum is now a row kernel (with its relu epilogue); the permute is an alias step.
  CHECK(Partitioned(out) == "extern %0 aten::permute.default\nfused(rows, reduce 1) %1 %2 -> %2\n");
}

TEST_CASE("a sum over N, H, W of a channels-last map becomes a column sum in memory order",
          "[reduction_dims]") {
  // The kept C is innermost in memory: rows over N*H*W would read one element every C.
  bool changed = false;
  const std::string out = Rewrite(R"(graph(%a0: f32[2,8,4,4]{128,1,32,8}@cuda) {
  %0 = aten::sum.dim_IntList(%a0, [0, 2, 3]) -> f32[8]{1}@cuda
  return (%0)
}
)",
                                  &changed);
  CHECK(changed);
  CHECK(out == R"(graph(%a0: f32[2,8,4,4]{128,1,32,8}@cuda) {
  %0 = aten::permute.default(%a0, [0, 2, 3, 1]) -> f32[2,4,4,8]{128,32,8,1}@cuda
  %1 = aten::sum.dim_IntList(%0, [0, 1, 2]) -> f32[8]{1}@cuda
  return (%1)
}
)");
  CHECK(Partitioned(out) == "extern %0 aten::permute.default\nfused(columns, reduce 3) %1 -> %1\n");
  // The same sum of an NCHW map keeps the row form (H, W innermost).
  const std::string nchw = Rewrite(R"(graph(%a0: f32[2,8,4,4]{128,16,4,1}@cuda) {
  %0 = aten::sum.dim_IntList(%a0, [0, 2, 3]) -> f32[8]{1}@cuda
  return (%0)
}
)",
                                   &changed);
  CHECK(changed);
  CHECK(nchw.find("aten::permute.default(%a0, [1, 0, 2, 3])") != std::string::npos);
  // A mean over H, W (trailing: already a row reduction) is left alone.
  Rewrite(R"(graph(%a0: f32[2,8,4,4]{128,1,32,8}@cuda) {
  %0 = aten::mean.dim(%a0, [2, 3]) -> f32[2,8]{8,1}@cuda
  return (%0)
}
)",
          &changed);
  CHECK_FALSE(changed);
}

TEST_CASE("keepdim reductions over scattered dims get their size-1 dims back through a view",
          "[reduction_dims]") {
  bool changed = false;
  const std::string out = Rewrite(R"(graph(%a0: f32[4,8,16]{128,16,1}@cuda) {
  %0 = aten::amax.default(%a0, [0, -1], true) -> f32[1,8,1]{8,1,1}@cuda
  %1 = aten::var_mean.correction(%a0, [0], correction=0, keepdim=true) -> (f32[1,8,16]{128,16,1}@cuda, f32[1,8,16]{128,16,1}@cuda)
  %2 = aten::sub.Tensor(%a0, %1#1) -> f32[4,8,16]{128,16,1}@cuda
  return (%0, %1#0, %2)
}
)",
                                  &changed);
  CHECK(changed);
  CHECK(out == R"(graph(%a0: f32[4,8,16]{128,16,1}@cuda) {
  %0 = aten::permute.default(%a0, [1, 0, 2]) -> f32[8,4,16]{16,128,1}@cuda
  %1 = aten::amax.default(%0, [1, 2], false) -> f32[8]{1}@cuda
  %2 = aten::view.default(%1, [1, 8, 1]) -> f32[1,8,1]{8,1,1}@cuda
  %3 = aten::permute.default(%a0, [1, 2, 0]) -> f32[8,16,4]{16,1,128}@cuda
  %4 = aten::var_mean.correction(%3, [2], correction=0) -> (f32[8,16]{16,1}@cuda, f32[8,16]{16,1}@cuda)
  %5 = aten::view.default(%4, [1, 8, 16]) -> f32[1,8,16]{128,16,1}@cuda
  %6 = aten::view.default(%4#1, [1, 8, 16]) -> f32[1,8,16]{128,16,1}@cuda
  %7 = aten::sub.Tensor(%a0, %6) -> f32[4,8,16]{128,16,1}@cuda
  return (%2, %5, %7)
}
)");
  CHECK(Partitioned(out) ==
        "extern %0 aten::permute.default\nfused(rows, reduce 2) %1 -> %1\nextern %2 "
        "aten::view.default\n"
        "extern %3 aten::permute.default\nfused(rows, reduce 1) %4 -> %4 %4#1\n"
        "extern %5 aten::view.default\nextern %6 aten::view.default\nfused %7 -> %7\n");
}

TEST_CASE("nothing to do: trailing, leading sums, CPU, f64, all dims and unknown dims",
          "[reduction_dims]") {
  bool changed = true;
  const std::string text =
      R"(graph(%a0: f32[4,8,16]{128,16,1}@cuda, %a1: f32[4,8,16]{128,16,1}@cpu, %a2: f64[4,8,16]{128,16,1}@cuda) {
  %0 = aten::sum.dim_IntList(%a0, [1, 2]) -> f32[4]{1}@cuda
  %1 = aten::mean.dim(%a0, [0], true) -> f32[1,8,16]{128,16,1}@cuda
  %2 = aten::sum.dim_IntList(%a1, [1]) -> f32[4,16]{16,1}@cpu
  %3 = aten::amax.default(%a2, [1]) -> f64[4,16]{16,1}@cuda
  %4 = aten::amin.default(%a0, [0, 1, 2]) -> f32[]{}@cuda
  %5 = aten::var.correction(%a0, None) -> f32[]{}@cuda
  return (%0, %1, %2, %3, %4, %5)
}
)";
  CHECK(Rewrite(text, &changed) == text);
  CHECK_FALSE(changed);
}

}  // namespace
}  // namespace tccd::codegen

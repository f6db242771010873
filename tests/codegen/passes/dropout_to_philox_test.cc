// DropoutToPhilox: training dropout becomes a seeded draw that fuses with its neighbours.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/dropout_to_philox.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/kernel_builder.h"

namespace tccd::codegen {
namespace {

TEST_CASE("training dropout becomes a seed, a draw, a mask and a scale, then fuses", "[dropout]") {
  ir::Graph g = *ir::ParseGraph(R"(graph(%a0: f32[4,8]{8,1}@cuda, %a1: f32[4,8]{8,1}@cuda) {
  %0 = aten::relu.default(%a0) -> f32[4,8]{8,1}@cuda
  %1 = aten::native_dropout.default(%0, 0.25, true) -> (f32[4,8]{8,1}@cuda, b8[4,8]{8,1}@cuda)
  %2 = aten::add.Tensor(%1, %a1) -> f32[4,8]{8,1}@cuda
  %3 = aten::native_dropout.default(%2, 0.5, false) -> (f32[4,8]{8,1}@cuda, b8[4,8]{8,1}@cuda)
  return (%2, %1#1, %3)
})");
  DropoutToPhilox pass;
  REQUIRE(*pass.Run(g));
  CHECK(ir::PrintGraph(g) == R"(graph(%a0: f32[4,8]{8,1}@cuda, %a1: f32[4,8]{8,1}@cuda) {
  %0 = aten::randint.low(0, 9223372036854775807, [], dtype=i64, device=device(cuda)) -> i64[]{}@cuda
  %1 = aten::relu.default(%a0) -> f32[4,8]{8,1}@cuda
  %2 = tccd::philox_uniform.default(%0, 0) -> f32[4,8]{8,1}@cuda
  %3 = aten::lt.Scalar(%2, 0.75) -> b8[4,8]{8,1}@cuda
  %4 = aten::mul.Tensor(%1, %3) -> f32[4,8]{8,1}@cuda
  %5 = aten::mul.Scalar(%4, 1.3333333333333333) -> f32[4,8]{8,1}@cuda
  %6 = aten::add.Tensor(%5, %a1) -> f32[4,8]{8,1}@cuda
  %7 = aten::native_dropout.default(%6, 0.5, false) -> (f32[4,8]{8,1}@cuda, b8[4,8]{8,1}@cuda)
  return (%6, %3, %7)
}
)");
  absl::StatusOr<Partition> p = PartitionForFusion(g, {});
  REQUIRE(p.ok());
  // relu, draw, mask, scale and add: one kernel (the eval-mode dropout stays ATen's).
  CHECK(PrintPartition(g, *p) ==
        "extern %0 aten::randint.low\nfused %1 %2 %3 %4 %5 %6 -> %3 %6\nextern %7 "
        "aten::native_dropout.default\n");
  absl::StatusOr<PointwiseKernel> k = BuildPointwiseKernel(g, p->groups[0], "k");
  INFO(k.status().ToString());
  REQUIRE(k.ok());
  const std::string text = PrintPointwiseKernel(*k);
  INFO(text);
  CHECK(text.find("random.f32") != std::string::npos);
  CHECK(HasIndexOps(*k));
}

TEST_CASE("no training dropout, nothing to do", "[dropout]") {
  ir::Graph g = *ir::ParseGraph(R"(graph(%a0: f32[4]{1}@cpu) {
  %0 = aten::native_dropout.default(%a0, 0.5, false) -> (f32[4]{1}@cpu, b8[4]{1}@cpu)
  return (%0)
})");
  DropoutToPhilox pass;
  CHECK(*pass.Run(g) == false);
}

}  // namespace
}  // namespace tccd::codegen

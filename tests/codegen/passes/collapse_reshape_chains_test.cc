// CollapseReshapeChains: IR text in, IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/collapse_reshape_chains.h"
#include "codegen/passes/dead_code_elimination.h"

namespace tccd::codegen {
namespace {

// The pass, then dead-code elimination (as the pipeline runs them): the graph printed.
std::string Run(const std::string& text, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  CollapseReshapeChains pass;
  absl::StatusOr<bool> c = pass.Run(*g);
  REQUIRE(c.ok());
  *changed = *c;
  REQUIRE(DeadCodeElimination().Run(*g).ok());
  return ir::PrintGraph(*g);
}

std::string Canonical(const std::string& text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return ir::PrintGraph(*g);
}

TEST_CASE("a reshape back to the shape it came from is its operand; two reshapes are one",
          "[collapse_reshape_chains]") {
  // GPT-2's GELU backward: the gradient terms move through [2, 512, N] and back.
  bool changed = false;
  const std::string out = Run(
      R"(graph(%a0: bf16[1024,64]{64,1}@cuda, %a1: bf16[1024,64]{64,1}@cuda) {
  %0 = aten::mul.Tensor(%a0, 0.5) -> bf16[1024,64]{64,1}@cuda
  %1 = aten::view.default(%0, [2, 512, 64]) -> bf16[2,512,64]{32768,64,1}@cuda
  %2 = aten::view.default(%1, [1024, 64]) -> bf16[1024,64]{64,1}@cuda
  %3 = aten::add.Tensor(%a1, %2) -> bf16[1024,64]{64,1}@cuda
  %4 = aten::view.default(%3, [2, 512, 64]) -> bf16[2,512,64]{32768,64,1}@cuda
  %5 = aten::_unsafe_view.default(%4, [512, 128]) -> bf16[512,128]{128,1}@cuda
  %6 = aten::relu.default(%5) -> bf16[512,128]{128,1}@cuda
  return (%6)
})",
      &changed);
  CHECK(changed);
  CHECK(out == Canonical(R"(graph(%a0: bf16[1024,64]{64,1}@cuda, %a1: bf16[1024,64]{64,1}@cuda) {
  %0 = aten::mul.Tensor(%a0, 0.5) -> bf16[1024,64]{64,1}@cuda
  %1 = aten::add.Tensor(%a1, %0) -> bf16[1024,64]{64,1}@cuda
  %2 = aten::view.default(%1, [512, 128]) -> bf16[512,128]{128,1}@cuda
  %3 = aten::relu.default(%2) -> bf16[512,128]{128,1}@cuda
  return (%3)
})"));
}

TEST_CASE("single reshapes and reshapes that are graph outputs stay", "[collapse_reshape_chains]") {
  bool changed = true;
  const std::string in =
      R"(graph(%a0: bf16[1024,64]{64,1}@cuda) {
  %0 = aten::view.default(%a0, [2, 512, 64]) -> bf16[2,512,64]{32768,64,1}@cuda
  %1 = aten::relu.default(%0) -> bf16[2,512,64]{32768,64,1}@cuda
  %2 = aten::view.default(%0, [1024, 64]) -> bf16[1024,64]{64,1}@cuda
  return (%1, %2)
})";
  CHECK(Run(in, &changed) == Canonical(in));
  CHECK(!changed);
}

}  // namespace
}  // namespace tccd::codegen

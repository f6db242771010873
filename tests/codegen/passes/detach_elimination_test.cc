// DetachElimination and AliasElimination: IR text in, IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/detach_elimination.h"

namespace tccd::codegen {
namespace {

std::string Run(const std::string& text, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  DetachElimination pass;
  absl::StatusOr<bool> c = pass.Run(*g);
  REQUIRE(c.ok());
  *changed = *c;
  return ir::PrintGraph(*g);
}

std::string Canonical(const std::string& text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  REQUIRE(g.ok());
  return ir::PrintGraph(*g);
}

TEST_CASE("a chain of detaches read by an op is its source; a detach that is an output stays",
          "[detach]") {
  bool changed = false;
  const std::string out = Run(R"(graph(%a0: f32[8,50]{50,1}@cuda, %a1: f32[8,50]{50,1}@cuda) {
  %0 = aten::sub.Tensor(%a0, %a1) -> f32[8,50]{50,1}@cuda
  %1 = aten::detach.default(%0) -> f32[8,50]{50,1}@cuda
  %2 = aten::detach.default(%1) -> f32[8,50]{50,1}@cuda
  %3 = aten::_log_softmax_backward_data.default(%a1, %2, 1, f32) -> f32[8,50]{50,1}@cuda
  %4 = aten::detach.default(%a0) -> f32[8,50]{50,1}@cuda
  return (%3, %4)
})",
                              &changed);
  CHECK(changed);
  CHECK(out == Canonical(R"(graph(%a0: f32[8,50]{50,1}@cuda, %a1: f32[8,50]{50,1}@cuda) {
  %0 = aten::sub.Tensor(%a0, %a1) -> f32[8,50]{50,1}@cuda
  %1 = aten::_log_softmax_backward_data.default(%a1, %0, 1, f32) -> f32[8,50]{50,1}@cuda
  %2 = aten::detach.default(%a0) -> f32[8,50]{50,1}@cuda
  return (%1, %2)
})"));
}

TEST_CASE("a graph without detaches is left as it is", "[detach]") {
  bool changed = true;
  Run(R"(graph(%a0: f32[8]{1}@cpu) {
  %0 = aten::relu.default(%a0) -> f32[8]{1}@cpu
  return (%0)
})",
      &changed);
  CHECK_FALSE(changed);
}

// Llama's final norm: transformers' slice_logits_to_keep aliases it before the lm_head's cast.
TEST_CASE("an alias read by an op is its source; detaches and returned aliases stay", "[detach]") {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(R"(graph(%a0: f32[4,8]{8,1}@cuda, %a1: f32[8]{1}@cuda) {
  %0 = aten::mul.Tensor(%a1, %a0) -> f32[4,8]{8,1}@cuda
  %1 = aten::alias.default(%0) -> f32[4,8]{8,1}@cuda
  %2 = aten::_to_copy.default(%1, dtype=bf16) -> bf16[4,8]{8,1}@cuda
  %3 = aten::detach.default(%a0) -> f32[4,8]{8,1}@cuda
  %4 = aten::add.Tensor(%3, 1) -> f32[4,8]{8,1}@cuda
  %5 = aten::alias.default(%a0) -> f32[4,8]{8,1}@cuda
  return (%2, %4, %5)
})");
  REQUIRE(g.ok());
  AliasElimination pass;
  REQUIRE(*pass.Run(*g));
  CHECK(ir::PrintGraph(*g) == Canonical(R"(graph(%a0: f32[4,8]{8,1}@cuda, %a1: f32[8]{1}@cuda) {
  %0 = aten::mul.Tensor(%a1, %a0) -> f32[4,8]{8,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=bf16) -> bf16[4,8]{8,1}@cuda
  %2 = aten::detach.default(%a0) -> f32[4,8]{8,1}@cuda
  %3 = aten::add.Tensor(%2, 1) -> f32[4,8]{8,1}@cuda
  %4 = aten::alias.default(%a0) -> f32[4,8]{8,1}@cuda
  return (%1, %3, %4)
})"));
  CHECK_FALSE(*pass.Run(*g));
}

}  // namespace
}  // namespace tccd::codegen

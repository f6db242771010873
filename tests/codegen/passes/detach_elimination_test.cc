// DetachElimination: IR text in, IR text out.
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

}  // namespace
}  // namespace tccd::codegen

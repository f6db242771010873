// NllLossBackwardToPointwise: IR text in, IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/nll_loss_backward_to_pointwise.h"

namespace tccd::codegen {
namespace {

std::string Run(const std::string& text, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  NllLossBackwardToPointwise pass;
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

constexpr char kInputs[] =
    "graph(%a0: f32[]{}@cuda, %a1: f32[8,50]{50,1}@cuda, %a2: i64[8]{1}@cuda, %a3: f32[]{}@cuda) "
    "{\n";

TEST_CASE("a mean nll gradient read by a log_softmax backward becomes broadcast pointwise ops",
          "[nll_loss_backward_to_pointwise]") {
  bool changed = false;
  const std::string out = Run(
      std::string(kInputs) +
          R"(  %0 = aten::nll_loss_backward.default(%a0, %a1, %a2, None, 1, -100, %a3) -> f32[8,50]{50,1}@cuda
  %1 = aten::_log_softmax_backward_data.default(%0, %a1, 1, f32) -> f32[8,50]{50,1}@cuda
  return (%1)
})",
      &changed);
  CHECK(changed);
  CHECK(
      out ==
      Canonical(
          std::string(kInputs) +
          R"(  %0 = aten::arange.default(50, dtype=i64, layout=layout(0), device=device(cuda), pin_memory=false) -> i64[50]{1}@cuda
  %1 = aten::unsqueeze.default(%a2, 1) -> i64[8,1]{1,1}@cuda
  %2 = aten::eq.Tensor(%0, %1) -> b8[8,50]{50,1}@cuda
  %3 = aten::mul.Tensor(%2, %a0) -> f32[8,50]{50,1}@cuda
  %4 = aten::div.Tensor(%3, %a3) -> f32[8,50]{50,1}@cuda
  %5 = aten::neg.default(%4) -> f32[8,50]{50,1}@cuda
  %6 = aten::_log_softmax_backward_data.default(%5, %a1, 1, f32) -> f32[8,50]{50,1}@cuda
  return (%6)
})"));
}

TEST_CASE(
    "an nll gradient cast to bf16 for a bf16 log_softmax backward (CUDA autocast) is rewritten too",
    "[nll_loss_backward_to_pointwise]") {
  bool changed = false;
  const std::string out = Run(
      R"(graph(%a0: f32[]{}@cuda, %a1: f32[8,50]{50,1}@cuda, %a2: i64[8]{1}@cuda, %a3: f32[]{}@cuda, %a4: bf16[8,50]{50,1}@cuda) {
  %0 = aten::nll_loss_backward.default(%a0, %a1, %a2, None, 1, -100, %a3) -> f32[8,50]{50,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=bf16, layout=layout(0), device=device(cuda)) -> bf16[8,50]{50,1}@cuda
  %2 = aten::_log_softmax_backward_data.default(%1, %a4, 1, bf16) -> bf16[8,50]{50,1}@cuda
  return (%2)
})",
      &changed);
  CHECK(changed);
  CHECK(out.find("aten::nll_loss_backward") == std::string::npos);
  CHECK(out.find("aten::_to_copy.default(%5, dtype=bf16") != std::string::npos);
  changed = true;
  // The cast is also a graph output: its value must exist, the index kernel writes it.
  Run(R"(graph(%a0: f32[]{}@cuda, %a1: f32[8,50]{50,1}@cuda, %a2: i64[8]{1}@cuda, %a3: f32[]{}@cuda, %a4: bf16[8,50]{50,1}@cuda) {
  %0 = aten::nll_loss_backward.default(%a0, %a1, %a2, None, 1, -100, %a3) -> f32[8,50]{50,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=bf16) -> bf16[8,50]{50,1}@cuda
  %2 = aten::_log_softmax_backward_data.default(%1, %a4, 1, bf16) -> bf16[8,50]{50,1}@cuda
  return (%2, %1)
})",
      &changed);
  CHECK_FALSE(changed);
}

TEST_CASE("a per-row (reduction none) nll gradient is read as a column; sum has no division",
          "[nll_loss_backward_to_pointwise]") {
  bool changed = false;
  const std::string out = Run(
      R"(graph(%a0: f32[8]{1}@cuda, %a1: f32[8,50]{50,1}@cuda, %a2: i64[8]{1}@cuda, %a3: f32[]{}@cuda, %a4: f32[]{}@cuda) {
  %0 = aten::nll_loss_backward.default(%a0, %a1, %a2, None, 0, 3, %a3) -> f32[8,50]{50,1}@cuda
  %1 = aten::_log_softmax_backward_data.default(%0, %a1, 1, f32) -> f32[8,50]{50,1}@cuda
  %2 = aten::nll_loss_backward.default(%a4, %a1, %a2, None, 2, -100, %a3) -> f32[8,50]{50,1}@cuda
  %3 = aten::_log_softmax_backward_data.default(%2, %a1, 1, f32) -> f32[8,50]{50,1}@cuda
  return (%1, %3)
})",
      &changed);
  CHECK(changed);
  CHECK(out.find("aten::nll_loss_backward") == std::string::npos);
  CHECK(out.find("aten::ne.Scalar(%1, 3)") != std::string::npos);      // 3 is a class: masked
  CHECK(out.find("aten::ne.Scalar") == out.rfind("aten::ne.Scalar"));  // -100 is not
  CHECK(out.find("aten::unsqueeze.default(%a0, 1) -> f32[8,1]{1,1}@cuda") != std::string::npos);
  CHECK(out.find("aten::mul.Tensor(%11, %a4)") != std::string::npos);
  CHECK(out.find("aten::div.Tensor") == out.rfind("aten::div.Tensor"));  // none: no division either
}

TEST_CASE("nll gradients with other readers, class weights or on the CPU stay",
          "[nll_loss_backward_to_pointwise]") {
  bool changed = true;
  // Also read by an add: the index kernel writes it once anyway.
  Run(std::string(kInputs) +
          R"(  %0 = aten::nll_loss_backward.default(%a0, %a1, %a2, None, 1, -100, %a3) -> f32[8,50]{50,1}@cuda
  %1 = aten::_log_softmax_backward_data.default(%0, %a1, 1, f32) -> f32[8,50]{50,1}@cuda
  %2 = aten::add.Tensor(%0, %1) -> f32[8,50]{50,1}@cuda
  return (%2)
})",
      &changed);
  CHECK_FALSE(changed);
  changed = true;
  Run(R"(graph(%a0: f32[]{}@cuda, %a1: f32[8,50]{50,1}@cuda, %a2: i64[8]{1}@cuda, %a3: f32[]{}@cuda, %a4: f32[50]{1}@cuda) {
  %0 = aten::nll_loss_backward.default(%a0, %a1, %a2, %a4, 1, -100, %a3) -> f32[8,50]{50,1}@cuda
  %1 = aten::_log_softmax_backward_data.default(%0, %a1, 1, f32) -> f32[8,50]{50,1}@cuda
  return (%1)
})",
      &changed);
  CHECK_FALSE(changed);
  changed = true;
  Run(R"(graph(%a0: f32[]{}@cpu, %a1: f32[8,50]{50,1}@cpu, %a2: i64[8]{1}@cpu, %a3: f32[]{}@cpu) {
  %0 = aten::nll_loss_backward.default(%a0, %a1, %a2, None, 1, -100, %a3) -> f32[8,50]{50,1}@cpu
  %1 = aten::_log_softmax_backward_data.default(%0, %a1, 1, f32) -> f32[8,50]{50,1}@cpu
  return (%1)
})",
      &changed);
  CHECK_FALSE(changed);
}

}  // namespace
}  // namespace tccd::codegen

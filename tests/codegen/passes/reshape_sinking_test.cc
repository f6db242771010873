// ReshapeSinking: IR text in, IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/reshape_sinking.h"

namespace tccd::codegen {
namespace {

std::string Run(const std::string& text, ir::DeviceType device, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  ReshapeSinking pass(device);
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

TEST_CASE("a cast after a reshape of a row kernel's output moves onto it, then a residual add",
          "[reshape_sinking]") {
  constexpr char kInputs[] =
      "graph(%a0: f32[1024,64]{64,1}@cuda, %a1: f32[1024,64]{64,1}@cuda, %a2: "
      "bf16[2,512,64]{32768,64,1}@cuda, "
      "%a3: f32[64]{1}@cuda) {\n";
  bool changed = false;
  const std::string out = Run(
      std::string(kInputs) +
          R"(  %0 = aten::_log_softmax_backward_data.default(%a0, %a1, 1, f32) -> f32[1024,64]{64,1}@cuda
  %1 = aten::view.default(%0, [2, 512, 64]) -> f32[2,512,64]{32768,64,1}@cuda
  %2 = aten::_to_copy.default(%1, dtype=bf16) -> bf16[2,512,64]{32768,64,1}@cuda
  %3 = aten::add.Tensor(%2, %a2) -> bf16[2,512,64]{32768,64,1}@cuda
  %4 = aten::mul.Tensor(%3, %a3) -> f32[2,512,64]{32768,64,1}@cuda
  return (%4)
})",
      ir::DeviceType::kCuda, &changed);
  CHECK(changed);
  CHECK(
      out ==
      Canonical(
          std::string(kInputs) +
          R"(  %0 = aten::_log_softmax_backward_data.default(%a0, %a1, 1, f32) -> f32[1024,64]{64,1}@cuda
  %1 = aten::view.default(%0, [2, 512, 64]) -> f32[2,512,64]{32768,64,1}@cuda
  %2 = aten::_to_copy.default(%0, dtype=bf16) -> bf16[1024,64]{64,1}@cuda
  %3 = aten::view.default(%2, [2, 512, 64]) -> bf16[2,512,64]{32768,64,1}@cuda
  %4 = aten::view.default(%a2, [1024, 64]) -> bf16[1024,64]{64,1}@cuda
  %5 = aten::add.Tensor(%2, %4) -> bf16[1024,64]{64,1}@cuda
  %6 = aten::view.default(%5, [2, 512, 64]) -> bf16[2,512,64]{32768,64,1}@cuda
  %7 = aten::mul.Tensor(%5, %a3) -> f32[1024,64]{64,1}@cuda
  %8 = aten::view.default(%7, [2, 512, 64]) -> f32[2,512,64]{32768,64,1}@cuda
  return (%8)
})"));
}

TEST_CASE("reshapes of matmul outputs, of inputs, or with broadcasts that differ stay",
          "[reshape_sinking]") {
  bool changed = true;
  Run(R"(graph(%a0: f32[1024,64]{64,1}@cuda, %a1: f32[64,64]{64,1}@cuda, %a2: f32[2,1,64]{64,64,1}@cuda) {
  %0 = aten::mm.default(%a0, %a1) -> f32[1024,64]{64,1}@cuda
  %1 = aten::view.default(%0, [2, 512, 64]) -> f32[2,512,64]{32768,64,1}@cuda
  %2 = aten::relu.default(%1) -> f32[2,512,64]{32768,64,1}@cuda
  %3 = aten::view.default(%a0, [2, 512, 64]) -> f32[2,512,64]{32768,64,1}@cuda
  %4 = aten::relu.default(%3) -> f32[2,512,64]{32768,64,1}@cuda
  %5 = aten::relu.default(%a0) -> f32[1024,64]{64,1}@cuda
  %6 = aten::view.default(%5, [2, 512, 64]) -> f32[2,512,64]{32768,64,1}@cuda
  %7 = aten::add.Tensor(%6, %a2) -> f32[2,512,64]{32768,64,1}@cuda
  return (%2, %4, %7)
})",
      ir::DeviceType::kCuda, &changed);
  CHECK(!changed);
}

TEST_CASE("on the CPU, reductions are not kernels: only pointwise producers count",
          "[reshape_sinking]") {
  bool changed = true;
  Run(R"(graph(%a0: f32[1024,64]{64,1}@cpu) {
  %0 = aten::_softmax.default(%a0, -1, false) -> f32[1024,64]{64,1}@cpu
  %1 = aten::view.default(%0, [2, 512, 64]) -> f32[2,512,64]{32768,64,1}@cpu
  %2 = aten::relu.default(%1) -> f32[2,512,64]{32768,64,1}@cpu
  return (%2)
})",
      ir::DeviceType::kCpu, &changed);
  CHECK(!changed);
  const std::string out = Run(R"(graph(%a0: f32[1024,64]{64,1}@cpu) {
  %0 = aten::exp.default(%a0) -> f32[1024,64]{64,1}@cpu
  %1 = aten::view.default(%0, [2, 512, 64]) -> f32[2,512,64]{32768,64,1}@cpu
  %2 = aten::relu.default(%1) -> f32[2,512,64]{32768,64,1}@cpu
  return (%2)
})",
                              ir::DeviceType::kCpu, &changed);
  CHECK(changed);
  CHECK(out == Canonical(R"(graph(%a0: f32[1024,64]{64,1}@cpu) {
  %0 = aten::exp.default(%a0) -> f32[1024,64]{64,1}@cpu
  %1 = aten::view.default(%0, [2, 512, 64]) -> f32[2,512,64]{32768,64,1}@cpu
  %2 = aten::relu.default(%0) -> f32[1024,64]{64,1}@cpu
  %3 = aten::view.default(%2, [2, 512, 64]) -> f32[2,512,64]{32768,64,1}@cpu
  return (%3)
})"));
}

TEST_CASE("a row reduction's prologue on a reshape another row reduction reads stays put (CUDA)",
          "[reshape_sinking]") {
  // Cross-entropy's forward after nll_loss_forward_to_rows: the target pick masks the viewed f32
  // logits that the logsumexp reads too. Sunk, the masked_fill would join the cast's kernel and
  // write an f32 copy of the logits; kept, both reductions share one row kernel.
  constexpr char kGraph[] =
      R"(graph(%a0: bf16[2,8,100]{800,100,1}@cuda, %a1: b8[16,100]{100,1}@cuda) {
  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[2,8,100]{800,100,1}@cuda
  %1 = aten::view.default(%0, [16, 100]) -> f32[16,100]{100,1}@cuda
  %2 = aten::logsumexp.default(%1, [1], true) -> f32[16,1]{1,1}@cuda
  %3 = aten::masked_fill.Scalar(%1, %a1, 0.0) -> f32[16,100]{100,1}@cuda
  %4 = aten::sum.dim_IntList(%3, [1], true) -> f32[16,1]{1,1}@cuda
  return (%2, %4)
})";
  bool changed = true;
  CHECK(Run(kGraph, ir::DeviceType::kCuda, &changed) == Canonical(kGraph));
  CHECK(!changed);
}

TEST_CASE("ops on a reshaped graph input move onto it when their values go back to its shape",
          "[reshape_sinking]") {
  // GPT-2's GELU backward: the saved [tokens, N] matmul output viewed as [2, 512, N], its tanh
  // recomputed there and viewed back for the [tokens, N] gradient.
  constexpr char kInputs[] =
      "graph(%a0: bf16[1024,64]{64,1}@cuda, %a1: f32[1024,64]{64,1}@cuda) {\n";
  bool changed = false;
  const std::string out =
      Run(std::string(kInputs) +
              R"(  %0 = aten::view.default(%a0, [2, 512, 64]) -> bf16[2,512,64]{32768,64,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=f32) -> f32[2,512,64]{32768,64,1}@cuda
  %2 = aten::add.Tensor(%0, %1) -> f32[2,512,64]{32768,64,1}@cuda
  %3 = aten::tanh.default(%2) -> f32[2,512,64]{32768,64,1}@cuda
  %4 = aten::view.default(%3, [1024, 64]) -> f32[1024,64]{64,1}@cuda
  %5 = aten::tanh_backward.default(%a1, %4) -> f32[1024,64]{64,1}@cuda
  return (%5)
})",
          ir::DeviceType::kCuda, &changed);
  CHECK(changed);
  CHECK(out ==
        Canonical(std::string(kInputs) +
                  R"(  %0 = aten::view.default(%a0, [2, 512, 64]) -> bf16[2,512,64]{32768,64,1}@cuda
  %1 = aten::_to_copy.default(%a0, dtype=f32) -> f32[1024,64]{64,1}@cuda
  %2 = aten::view.default(%1, [2, 512, 64]) -> f32[2,512,64]{32768,64,1}@cuda
  %3 = aten::view.default(%2, [1024, 64]) -> f32[1024,64]{64,1}@cuda
  %4 = aten::add.Tensor(%a0, %3) -> f32[1024,64]{64,1}@cuda
  %5 = aten::view.default(%4, [2, 512, 64]) -> f32[2,512,64]{32768,64,1}@cuda
  %6 = aten::tanh.default(%4) -> f32[1024,64]{64,1}@cuda
  %7 = aten::view.default(%6, [2, 512, 64]) -> f32[2,512,64]{32768,64,1}@cuda
  %8 = aten::view.default(%7, [1024, 64]) -> f32[1024,64]{64,1}@cuda
  %9 = aten::tanh_backward.default(%a1, %8) -> f32[1024,64]{64,1}@cuda
  return (%9)
})"));
}

TEST_CASE("ops on a reshaped graph input stay where one of them cannot move or nothing goes back",
          "[reshape_sinking]") {
  bool changed = true;
  // A mask broadcast over a dim the input's shape does not have stops the chain: moving the cast
  // alone would split it from the masked add.
  Run(R"(graph(%a0: bf16[1024,64]{64,1}@cuda, %a1: f32[2,1,64]{64,64,1}@cuda) {
  %0 = aten::view.default(%a0, [2, 512, 64]) -> bf16[2,512,64]{32768,64,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=f32) -> f32[2,512,64]{32768,64,1}@cuda
  %2 = aten::add.Tensor(%1, %a1) -> f32[2,512,64]{32768,64,1}@cuda
  %3 = aten::view.default(%2, [1024, 64]) -> f32[1024,64]{64,1}@cuda
  return (%3)
})",
      ir::DeviceType::kCuda, &changed);
  CHECK(!changed);
  // Nothing reads the values back in the input's shape.
  Run(R"(graph(%a0: bf16[1024,64]{64,1}@cuda) {
  %0 = aten::view.default(%a0, [2, 512, 64]) -> bf16[2,512,64]{32768,64,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=f32) -> f32[2,512,64]{32768,64,1}@cuda
  %2 = aten::sum.dim_IntList(%1, [2]) -> f32[2,512]{512,1}@cuda
  return (%2)
})",
      ir::DeviceType::kCuda, &changed);
  CHECK(!changed);
}

}  // namespace
}  // namespace tccd::codegen

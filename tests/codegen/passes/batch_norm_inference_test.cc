// BatchNormInference: IR text in, IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/batch_norm_inference.h"

namespace tccd::codegen {
namespace {

std::string Run(const std::string& text, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  BatchNormInference pass;
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
    "graph(%a0: bf16[2,3,4,4]{48,16,4,1}@cuda, %a1: f32[3]{1}@cuda, %a2: f32[3]{1}@cuda, %a3: "
    "f32[3]{1}@cuda, "
    "%a4: f32[3]{1}@cuda) {\n";

TEST_CASE("an eval-mode bf16 batch norm becomes pointwise ops over its input's shape",
          "[batch_norm_inference]") {
  bool changed = false;
  const std::string out = Run(
      std::string(kInputs) +
          R"(  %0 = aten::_native_batch_norm_legit_no_training.default(%a0, %a1, %a2, %a3, %a4, 0.1, 1e-05) -> (bf16[2,3,4,4]{48,16,4,1}@cuda, f32[0]{1}@cuda, f32[0]{1}@cuda)
  %1 = aten::relu.default(%0) -> bf16[2,3,4,4]{48,16,4,1}@cuda
  return (%1)
})",
      &changed);
  CHECK(changed);
  CHECK(out ==
        Canonical(std::string(kInputs) +
                  R"(  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[2,3,4,4]{48,16,4,1}@cuda
  %1 = aten::view.default(%a3, [3, 1, 1]) -> f32[3,1,1]{1,1,1}@cuda
  %2 = aten::expand.default(%1, [2, 3, 4, 4]) -> f32[2,3,4,4]{0,1,0,0}@cuda
  %3 = aten::sub.Tensor(%0, %2) -> f32[2,3,4,4]{48,16,4,1}@cuda
  %4 = aten::view.default(%a4, [3, 1, 1]) -> f32[3,1,1]{1,1,1}@cuda
  %5 = aten::expand.default(%4, [2, 3, 4, 4]) -> f32[2,3,4,4]{0,1,0,0}@cuda
  %6 = aten::add.Scalar(%5, 1e-05) -> f32[2,3,4,4]{48,16,4,1}@cuda
  %7 = aten::rsqrt.default(%6) -> f32[2,3,4,4]{48,16,4,1}@cuda
  %8 = aten::mul.Tensor(%3, %7) -> f32[2,3,4,4]{48,16,4,1}@cuda
  %9 = aten::view.default(%a1, [3, 1, 1]) -> f32[3,1,1]{1,1,1}@cuda
  %10 = aten::expand.default(%9, [2, 3, 4, 4]) -> f32[2,3,4,4]{0,1,0,0}@cuda
  %11 = aten::mul.Tensor(%8, %10) -> f32[2,3,4,4]{48,16,4,1}@cuda
  %12 = aten::view.default(%a2, [3, 1, 1]) -> f32[3,1,1]{1,1,1}@cuda
  %13 = aten::expand.default(%12, [2, 3, 4, 4]) -> f32[2,3,4,4]{0,1,0,0}@cuda
  %14 = aten::add.Tensor(%11, %13) -> f32[2,3,4,4]{48,16,4,1}@cuda
  %15 = aten::_to_copy.default(%14, dtype=bf16) -> bf16[2,3,4,4]{48,16,4,1}@cuda
  %16 = aten::relu.default(%15) -> bf16[2,3,4,4]{48,16,4,1}@cuda
  return (%16)
})"));
}

TEST_CASE("eval-mode norms whose statistics are read, or on the CPU, stay",
          "[batch_norm_inference]") {
  bool changed = true;
  Run(std::string(kInputs) +
          R"(  %0 = aten::_native_batch_norm_legit_no_training.default(%a0, %a1, %a2, %a3, %a4, 0.1, 1e-05) -> (bf16[2,3,4,4]{48,16,4,1}@cuda, f32[0]{1}@cuda, f32[0]{1}@cuda)
  return (%0, %0#1)
})",
      &changed);
  CHECK_FALSE(changed);
  changed = true;
  Run(R"(graph(%a0: f32[2,3,4,4]{48,16,4,1}@cpu, %a1: f32[3]{1}@cpu, %a2: f32[3]{1}@cpu, %a3: f32[3]{1}@cpu, %a4: f32[3]{1}@cpu) {
  %0 = aten::_native_batch_norm_legit_no_training.default(%a0, %a1, %a2, %a3, %a4, 0.1, 1e-05) -> (f32[2,3,4,4]{48,16,4,1}@cpu, f32[0]{1}@cpu, f32[0]{1}@cpu)
  return (%0)
})",
      &changed);
  CHECK_FALSE(changed);
}

}  // namespace
}  // namespace tccd::codegen

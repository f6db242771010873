// CudnnBatchNorm: IR text in, IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/cudnn_batch_norm.h"

namespace tccd::codegen {
namespace {

std::string Run(const std::string& text, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  CudnnBatchNorm pass;
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
    "graph(%a0: f32[8,4,6,6]{144,36,6,1}@cuda, %a1: f32[4]{1}@cuda, %a2: f32[4]{1}@cuda, "
    "%a3: f32[4]{1}@cuda, %a4: f32[4]{1}@cuda) {\n";

TEST_CASE("training batch norm becomes cuDNN's on clones of the running stats", "[cudnn_bn]") {
  bool changed = false;
  const std::string out =
      Run(std::string(kInputs) + R"(  %0 = aten::relu.default(%a0) -> f32[8,4,6,6]{144,36,6,1}@cuda
  %1 = aten::_native_batch_norm_legit_functional.default(%0, %a1, %a2, %a3, %a4, true, 0.1, 1e-05) -> (f32[8,4,6,6]{144,36,6,1}@cuda, f32[4]{1}@cuda, f32[4]{1}@cuda, f32[4]{1}@cuda, f32[4]{1}@cuda)
  %2 = aten::relu.default(%1) -> f32[8,4,6,6]{144,36,6,1}@cuda
  return (%2, %1#1, %1#2, %1#3, %1#4)
})",
          &changed);
  CHECK(changed);
  CHECK(out == Canonical(std::string(kInputs) +
                         R"(  %0 = aten::relu.default(%a0) -> f32[8,4,6,6]{144,36,6,1}@cuda
  %1 = aten::clone.default(%a3) -> f32[4]{1}@cuda
  %2 = aten::clone.default(%a4) -> f32[4]{1}@cuda
  %3 = aten::cudnn_batch_norm.default(%0, %a1, %a2, %1, %2, true, 0.1, 1e-05) -> (f32[8,4,6,6]{144,36,6,1}@cuda, f32[4]{1}@cuda, f32[4]{1}@cuda, u8[0]{1}@cuda)
  %4 = aten::relu.default(%3) -> f32[8,4,6,6]{144,36,6,1}@cuda
  return (%4, %3#1, %3#2, %1, %2)
})"));
}

TEST_CASE("batch norm stays ATen's where eager would not use cuDNN either", "[cudnn_bn]") {
  bool changed = true;
  // eval mode, eps below cuDNN's minimum, a bf16 input, channels-last strides.
  Run(std::string(kInputs) +
          R"(  %0 = aten::_native_batch_norm_legit_functional.default(%a0, %a1, %a2, %a3, %a4, false, 0.1, 1e-05) -> (f32[8,4,6,6]{144,36,6,1}@cuda, f32[4]{1}@cuda, f32[4]{1}@cuda, f32[4]{1}@cuda, f32[4]{1}@cuda)
  %1 = aten::_native_batch_norm_legit_functional.default(%a0, %a1, %a2, %a3, %a4, true, 0.1, 1e-06) -> (f32[8,4,6,6]{144,36,6,1}@cuda, f32[4]{1}@cuda, f32[4]{1}@cuda, f32[4]{1}@cuda, f32[4]{1}@cuda)
  %2 = aten::_to_copy.default(%a0, dtype=bf16) -> bf16[8,4,6,6]{144,36,6,1}@cuda
  %3 = aten::_native_batch_norm_legit_functional.default(%2, %a1, %a2, %a3, %a4, true, 0.1, 1e-05) -> (bf16[8,4,6,6]{144,36,6,1}@cuda, f32[4]{1}@cuda, f32[4]{1}@cuda, f32[4]{1}@cuda, f32[4]{1}@cuda)
  return (%0, %1, %3)
})",
      &changed);
  CHECK(!changed);
}

}  // namespace
}  // namespace tccd::codegen

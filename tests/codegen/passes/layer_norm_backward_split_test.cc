// LayerNormBackwardSplit: IR text in, IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/layer_norm_backward_split.h"

namespace tccd::codegen {
namespace {

constexpr char kArgs[] =
    "%a0: f32[64,32]{32,1}@cuda, %a1: f32[64,32]{32,1}@cuda, %a2: f32[64,1]{1,1}@cuda, "
    "%a3: f32[64,1]{1,1}@cuda, %a4: f32[32]{1}@cuda, %a5: f32[32]{1}@cuda";

std::string Split(const std::string& text, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  LayerNormBackwardSplit pass;
  absl::StatusOr<bool> c = pass.Run(*g);
  REQUIRE(c.ok());
  *changed = *c;
  return ir::PrintGraph(*g);
}

TEST_CASE("a layer norm backward wanting every output becomes a row half and a column half",
          "[ln_backward_split]") {
  bool changed = false;
  const std::string out = Split(std::string("graph(") + kArgs + R"() {
  %0 = aten::native_layer_norm_backward.default(%a0, %a1, [32], %a2, %a3, %a4, %a5, [true, true, true]) -> (f32[64,32]{32,1}@cuda, f32[32]{1}@cuda, f32[32]{1}@cuda)
  %1 = aten::mul.Tensor(%0#1, %0#2) -> f32[32]{1}@cuda
  return (%0#0, %1)
})",
                                &changed);
  CHECK(changed);
  bool again = false;
  const std::string expected = Split(std::string("graph(") + kArgs + R"() {
  %0 = aten::native_layer_norm_backward.default(%a0, %a1, [32], %a2, %a3, %a4, %a5, [true, false, false]) -> (f32[64,32]{32,1}@cuda, f32[0]{1}@cuda, f32[0]{1}@cuda)
  %1 = aten::native_layer_norm_backward.default(%a0, %a1, [32], %a2, %a3, %a4, %a5, [false, true, true]) -> (f32[0]{1}@cuda, f32[32]{1}@cuda, f32[32]{1}@cuda)
  %2 = aten::mul.Tensor(%1#1, %1#2) -> f32[32]{1}@cuda
  return (%0#0, %2)
})",
                                     &again);
  CHECK_FALSE(again);  // nothing to do: already split
  CHECK(out == expected);
}

TEST_CASE("nothing to do: grad_input alone or parameter gradients alone", "[ln_backward_split]") {
  bool changed = true;
  Split(std::string("graph(") + kArgs + R"() {
  %0 = aten::native_layer_norm_backward.default(%a0, %a1, [32], %a2, %a3, %a4, %a5, [false, true, false]) -> (f32[0]{1}@cuda, f32[32]{1}@cuda, f32[0]{1}@cuda)
  return (%0#1)
})",
        &changed);
  CHECK_FALSE(changed);
}

}  // namespace
}  // namespace tccd::codegen

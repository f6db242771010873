// ReshapeHoisting: IR text in, IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/reshape_hoisting.h"

namespace tccd::codegen {
namespace {

std::string Run(const std::string& text, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  ReshapeHoisting pass;
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

constexpr char kInputs[] = "graph(%a0: bf16[2,4,50]{200,50,1}@cuda, %a1: f32[]{}@cuda) {\n";

TEST_CASE("a cast of an input before the reshape a log_softmax reads moves below the reshape",
          "[reshape_hoisting]") {
  bool changed = false;
  const std::string out =
      Run(std::string(kInputs) +
              R"(  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[2,4,50]{200,50,1}@cuda
  %1 = aten::view.default(%0, [8, 50]) -> f32[8,50]{50,1}@cuda
  %2 = aten::_log_softmax.default(%1, 1, false) -> f32[8,50]{50,1}@cuda
  return (%2)
})",
          &changed);
  CHECK(changed);
  CHECK(out ==
        Canonical(std::string(kInputs) +
                  R"(  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[2,4,50]{200,50,1}@cuda
  %1 = aten::view.default(%a0, [8, 50]) -> bf16[8,50]{50,1}@cuda
  %2 = aten::_to_copy.default(%1, dtype=f32) -> f32[8,50]{50,1}@cuda
  %3 = aten::_log_softmax.default(%2, 1, false) -> f32[8,50]{50,1}@cuda
  return (%3)
})"));
}

// GPT-2's logits as a forward returns them with TCCD_PADDED_OUTPUTS (padded_output_views.h):
// rows of 50 at stride 56. The loss graph's cast still joins the row kernel; the hoisted view
// keeps the padded rows.
constexpr char kPaddedInputs[] = "graph(%a0: bf16[2,4,50]{224,56,1}@cuda) {\n";

TEST_CASE("a cast of padded rows moves below a reshape that keeps the rows whole",
          "[reshape_hoisting]") {
  bool changed = false;
  const std::string out =
      Run(std::string(kPaddedInputs) +
              R"(  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[2,4,50]{200,50,1}@cuda
  %1 = aten::view.default(%0, [8, 50]) -> f32[8,50]{50,1}@cuda
  %2 = aten::_log_softmax.default(%1, 1, false) -> f32[8,50]{50,1}@cuda
  return (%2)
})",
          &changed);
  CHECK(changed);
  CHECK(out ==
        Canonical(std::string(kPaddedInputs) +
                  R"(  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[2,4,50]{200,50,1}@cuda
  %1 = aten::view.default(%a0, [8, 50]) -> bf16[8,50]{56,1}@cuda
  %2 = aten::_to_copy.default(%1, dtype=f32) -> f32[8,50]{50,1}@cuda
  %3 = aten::_log_softmax.default(%2, 1, false) -> f32[8,50]{50,1}@cuda
  return (%3)
})"));
}

TEST_CASE("a reshape that splits padded rows stays (nothing to do)", "[reshape_hoisting]") {
  const std::string in =
      std::string(kPaddedInputs) +
      R"(  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[2,4,50]{200,50,1}@cuda
  %1 = aten::view.default(%0, [8, 5, 10]) -> f32[8,5,10]{50,10,1}@cuda
  %2 = aten::_log_softmax.default(%1, 2, false) -> f32[8,5,10]{50,10,1}@cuda
  return (%2)
})";
  bool changed = true;
  CHECK(Run(in, &changed) == Canonical(in));
  CHECK_FALSE(changed);
}

TEST_CASE("a 0-dim operand stays as it is; a binary op views its other operand too",
          "[reshape_hoisting]") {
  bool changed = false;
  const std::string out =
      Run(std::string(kInputs) + R"(  %0 = aten::mul.Tensor(%a0, %a1) -> f32[2,4,50]{200,50,1}@cuda
  %1 = aten::add.Tensor(%0, %a0) -> f32[2,4,50]{200,50,1}@cuda
  %2 = aten::view.default(%1, [8, 50]) -> f32[8,50]{50,1}@cuda
  %3 = aten::amax.default(%2, [1], false) -> f32[8]{1}@cuda
  return (%3)
})",
          &changed);
  CHECK_FALSE(changed);  // add's operand %0 is a kernel's (mul's) output: the group fuses as is
  const std::string out2 =
      Run(std::string(kInputs) + R"(  %0 = aten::mul.Tensor(%a0, %a1) -> f32[2,4,50]{200,50,1}@cuda
  %1 = aten::view.default(%0, [8, 50]) -> f32[8,50]{50,1}@cuda
  %2 = aten::amax.default(%1, [1], false) -> f32[8]{1}@cuda
  return (%2)
})",
          &changed);
  CHECK(changed);
  CHECK(out2.find("aten::mul.Tensor(%1, %a1) -> f32[8,50]{50,1}@cuda") != std::string::npos);
  (void)out;
}

TEST_CASE("a reshape read by a pointwise op (a decomposed log_softmax's x - lse) hoists too",
          "[reshape_hoisting]") {
  bool changed = false;
  const std::string out = Run(R"(graph(%a0: bf16[2,4,50]{200,50,1}@cuda, %a1: f32[8,1]{1,1}@cuda) {
  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[2,4,50]{200,50,1}@cuda
  %1 = aten::view.default(%0, [8, 50]) -> f32[8,50]{50,1}@cuda
  %2 = aten::sub.Tensor(%1, %a1) -> f32[8,50]{50,1}@cuda
  return (%2)
})",
                              &changed);
  CHECK(changed);
  CHECK(out.find("aten::_to_copy.default(%1, dtype=f32) -> f32[8,50]{50,1}@cuda") !=
        std::string::npos);
}

TEST_CASE("ops with other readers, reshapes read by ATen ops, and broadcasts stay",
          "[reshape_hoisting]") {
  bool changed = true;
  Run(std::string(kInputs) +
          R"(  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[2,4,50]{200,50,1}@cuda
  %1 = aten::view.default(%0, [8, 50]) -> f32[8,50]{50,1}@cuda
  %2 = aten::_log_softmax.default(%1, 1, false) -> f32[8,50]{50,1}@cuda
  return (%2, %0)
})",
      &changed);
  CHECK_FALSE(changed);
  changed = true;
  Run(std::string(kInputs) +
          R"(  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[2,4,50]{200,50,1}@cuda
  %1 = aten::view.default(%0, [8, 50]) -> f32[8,50]{50,1}@cuda
  %2 = aten::cumsum.default(%1, 1) -> f32[8,50]{50,1}@cuda
  return (%2)
})",
      &changed);
  CHECK_FALSE(changed);
  changed = true;
  Run(R"(graph(%a0: f32[2,4,50]{200,50,1}@cuda, %a1: f32[50]{1}@cuda) {
  %0 = aten::add.Tensor(%a0, %a1) -> f32[2,4,50]{200,50,1}@cuda
  %1 = aten::view.default(%0, [8, 50]) -> f32[8,50]{50,1}@cuda
  %2 = aten::_log_softmax.default(%1, 1, false) -> f32[8,50]{50,1}@cuda
  return (%2)
})",
      &changed);
  CHECK_FALSE(changed);
}

TEST_CASE("a cast read through several reshapes is copied below each of them",
          "[reshape_hoisting]") {
  // GPT-2's layer-norm gradient: the f32 cast of a bf16 matmul output, read as [batch, seq,
  // width] by the norm's backward and as [chunks, rows, width] by a weight-gradient partial.
  constexpr char kIn[] = "graph(%a0: bf16[8,50]{50,1}@cuda, %a1: f32[2,4,50]{200,50,1}@cuda) {\n";
  bool changed = false;
  const std::string out =
      Run(std::string(kIn) +
              R"(  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[8,50]{50,1}@cuda
  %1 = aten::view.default(%0, [2, 4, 50]) -> f32[2,4,50]{200,50,1}@cuda
  %2 = aten::add.Tensor(%1, %a1) -> f32[2,4,50]{200,50,1}@cuda
  %3 = aten::view.default(%0, [4, 2, 50]) -> f32[4,2,50]{100,50,1}@cuda
  %4 = aten::sum.dim_IntList(%3, [0]) -> f32[2,50]{50,1}@cuda
  return (%2, %4)
})",
          &changed);
  CHECK(changed);
  CHECK(out == Canonical(std::string(kIn) +
                         R"(  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[8,50]{50,1}@cuda
  %1 = aten::view.default(%a0, [2, 4, 50]) -> bf16[2,4,50]{200,50,1}@cuda
  %2 = aten::_to_copy.default(%1, dtype=f32) -> f32[2,4,50]{200,50,1}@cuda
  %3 = aten::add.Tensor(%2, %a1) -> f32[2,4,50]{200,50,1}@cuda
  %4 = aten::view.default(%a0, [4, 2, 50]) -> bf16[4,2,50]{100,50,1}@cuda
  %5 = aten::_to_copy.default(%4, dtype=f32) -> f32[4,2,50]{100,50,1}@cuda
  %6 = aten::sum.dim_IntList(%5, [0]) -> f32[2,50]{50,1}@cuda
  return (%3, %6)
})"));
  // One reader that is not a reshape: the cast is written anyway, so it stays.
  changed = true;
  Run(std::string(kIn) +
          R"(  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[8,50]{50,1}@cuda
  %1 = aten::view.default(%0, [2, 4, 50]) -> f32[2,4,50]{200,50,1}@cuda
  %2 = aten::add.Tensor(%1, %a1) -> f32[2,4,50]{200,50,1}@cuda
  %3 = aten::cumsum.default(%0, 1) -> f32[8,50]{50,1}@cuda
  return (%2, %3)
})",
      &changed);
  CHECK_FALSE(changed);
}

}  // namespace
}  // namespace tccd::codegen

// PadMatmulOperands: IR text in, IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/pad_matmul_operands.h"

namespace tccd::codegen {
namespace {

std::string Run(const std::string& text, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  PadMatmulOperands pass;
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

// GPT-2's vocabulary projection backward: g = grad of the logits [1024, 50257], W the tied
// embedding [50257, 768], h the hidden states [1024, 768].
constexpr char kInputs[] =
    "graph(%a0: bf16[1024,50257]{50257,1}@cuda, %a1: bf16[50257,768]{768,1}@cuda, %a2: "
    "bf16[1024,768]{768,1}@cuda) {\n";

TEST_CASE("an odd K is zero-padded on both operands", "[pad_mm]") {
  bool changed = false;
  const std::string out =
      Run(std::string(kInputs) + R"(  %0 = aten::mm.default(%a0, %a1) -> bf16[1024,768]{768,1}@cuda
  return (%0)
})",
          &changed);
  CHECK(changed);
  CHECK(
      out ==
      Canonical(
          std::string(kInputs) +
          R"(  %0 = aten::constant_pad_nd.default(%a0, [0, 7, 0, 0], 0) -> bf16[1024,50264]{50264,1}@cuda
  %1 = aten::constant_pad_nd.default(%a1, [0, 0, 0, 7], 0) -> bf16[50264,768]{768,1}@cuda
  %2 = aten::mm.default(%0, %1) -> bf16[1024,768]{768,1}@cuda
  return (%2)
})"));
}

// BERT's decoder under autocast: the f32 weight %a0 cast to bf16, transposed, the product's N
// odd. The weight is padded before the cast, so that pad and cast are one kernel (the pad, an
// index op, fuses with its pointwise reader) and the unpadded cast is dead.
TEST_CASE("a weight cast's padded copy is the cast of the padded weight", "[pad_mm]") {
  bool changed = false;
  const std::string in =
      R"(graph(%a0: f32[30522,768]{768,1}@cuda, %a1: bf16[1024,768]{768,1}@cuda) {
  %0 = aten::_to_copy.default(%a0, dtype=bf16) -> bf16[30522,768]{768,1}@cuda
  %1 = aten::t.default(%0) -> bf16[768,30522]{1,768}@cuda
  %2 = aten::mm.default(%a1, %1) -> bf16[1024,30522]{30522,1}@cuda
  return (%2)
})";
  const std::string out = Run(in, &changed);
  CHECK(changed);
  CHECK(out ==
        Canonical(R"(graph(%a0: f32[30522,768]{768,1}@cuda, %a1: bf16[1024,768]{768,1}@cuda) {
  %0 = aten::_to_copy.default(%a0, dtype=bf16) -> bf16[30522,768]{768,1}@cuda
  %1 = aten::t.default(%0) -> bf16[768,30522]{1,768}@cuda
  %2 = aten::constant_pad_nd.default(%a0, [0, 0, 0, 6], 0) -> f32[30528,768]{768,1}@cuda
  %3 = aten::_to_copy.default(%2, dtype=bf16) -> bf16[30528,768]{768,1}@cuda
  %4 = aten::t.default(%3) -> bf16[768,30528]{1,768}@cuda
  %5 = aten::mm.default(%a1, %4) -> bf16[1024,30528]{30528,1}@cuda
  %6 = aten::slice.Tensor(%5, 1, 0, 30522, 1) -> bf16[1024,30522]{30528,1}@cuda
  %7 = aten::clone.default(%6) -> bf16[1024,30522]{30522,1}@cuda
  return (%7)
})"));
}

TEST_CASE("an odd M of a column-major A pads its storage; the result is a prefix slice",
          "[pad_mm]") {
  bool changed = false;
  const std::string out =
      Run(std::string(kInputs) + R"(  %0 = aten::t.default(%a0) -> bf16[50257,1024]{1,50257}@cuda
  %1 = aten::mm.default(%0, %a2) -> bf16[50257,768]{768,1}@cuda
  return (%1)
})",
          &changed);
  CHECK(changed);
  CHECK(out == Canonical(std::string(kInputs) +
                         R"(  %0 = aten::t.default(%a0) -> bf16[50257,1024]{1,50257}@cuda
  %1 = aten::constant_pad_nd.default(%a0, [0, 7, 0, 0], 0) -> bf16[1024,50264]{50264,1}@cuda
  %2 = aten::t.default(%1) -> bf16[50264,1024]{1,50264}@cuda
  %3 = aten::mm.default(%2, %a2) -> bf16[50264,768]{768,1}@cuda
  %4 = aten::slice.Tensor(%3, 0, 0, 50257, 1) -> bf16[50257,768]{768,1}@cuda
  return (%4)
})"));
}

TEST_CASE("both gradients of the projection share one padded copy of g", "[pad_mm]") {
  bool changed = false;
  const std::string out =
      Run(std::string(kInputs) + R"(  %0 = aten::t.default(%a0) -> bf16[50257,1024]{1,50257}@cuda
  %1 = aten::mm.default(%0, %a2) -> bf16[50257,768]{768,1}@cuda
  %2 = aten::mm.default(%a0, %a1) -> bf16[1024,768]{768,1}@cuda
  return (%1, %2)
})",
          &changed);
  CHECK(changed);
  CHECK(out == Canonical(std::string(kInputs) +
                         R"(  %0 = aten::t.default(%a0) -> bf16[50257,1024]{1,50257}@cuda
  %1 = aten::constant_pad_nd.default(%a0, [0, 7, 0, 0], 0) -> bf16[1024,50264]{50264,1}@cuda
  %2 = aten::t.default(%1) -> bf16[50264,1024]{1,50264}@cuda
  %3 = aten::mm.default(%2, %a2) -> bf16[50264,768]{768,1}@cuda
  %4 = aten::slice.Tensor(%3, 0, 0, 50257, 1) -> bf16[50257,768]{768,1}@cuda
  %5 = aten::constant_pad_nd.default(%a1, [0, 0, 0, 7], 0) -> bf16[50264,768]{768,1}@cuda
  %6 = aten::mm.default(%1, %5) -> bf16[1024,768]{768,1}@cuda
  return (%4, %6)
})"));
}

TEST_CASE("an odd N pads B; the result is the first N columns, cloned contiguous", "[pad_mm]") {
  // GPT-2's vocabulary projection forward: logits = h @ W^T.
  bool changed = false;
  const std::string out =
      Run(std::string(kInputs) + R"(  %0 = aten::t.default(%a1) -> bf16[768,50257]{1,768}@cuda
  %1 = aten::mm.default(%a2, %0) -> bf16[1024,50257]{50257,1}@cuda
  return (%1)
})",
          &changed);
  CHECK(changed);
  CHECK(out == Canonical(std::string(kInputs) +
                         R"(  %0 = aten::t.default(%a1) -> bf16[768,50257]{1,768}@cuda
  %1 = aten::constant_pad_nd.default(%a1, [0, 0, 0, 7], 0) -> bf16[50264,768]{768,1}@cuda
  %2 = aten::t.default(%1) -> bf16[768,50264]{1,768}@cuda
  %3 = aten::mm.default(%a2, %2) -> bf16[1024,50264]{50264,1}@cuda
  %4 = aten::slice.Tensor(%3, 1, 0, 50257, 1) -> bf16[1024,50257]{50264,1}@cuda
  %5 = aten::clone.default(%4) -> bf16[1024,50257]{50257,1}@cuda
  return (%5)
})"));
}

TEST_CASE("an addmm with an odd N pads its bias with B", "[pad_mm]") {
  // BERT's vocabulary projection: logits = addmm(bias, h, W^T), vocabulary 30522.
  constexpr char kBert[] =
      "graph(%a0: bf16[30522]{1}@cuda, %a1: bf16[30522,768]{768,1}@cuda, %a2: "
      "bf16[8192,768]{768,1}@cuda) {\n";
  bool changed = false;
  const std::string out =
      Run(std::string(kBert) + R"(  %0 = aten::t.default(%a1) -> bf16[768,30522]{1,768}@cuda
  %1 = aten::addmm.default(%a0, %a2, %0) -> bf16[8192,30522]{30522,1}@cuda
  return (%1)
})",
          &changed);
  CHECK(changed);
  CHECK(out ==
        Canonical(std::string(kBert) + R"(  %0 = aten::t.default(%a1) -> bf16[768,30522]{1,768}@cuda
  %1 = aten::constant_pad_nd.default(%a1, [0, 0, 0, 6], 0) -> bf16[30528,768]{768,1}@cuda
  %2 = aten::t.default(%1) -> bf16[768,30528]{1,768}@cuda
  %3 = aten::constant_pad_nd.default(%a0, [0, 6], 0) -> bf16[30528]{1}@cuda
  %4 = aten::addmm.default(%3, %a2, %2) -> bf16[8192,30528]{30528,1}@cuda
  %5 = aten::slice.Tensor(%4, 1, 0, 30522, 1) -> bf16[8192,30522]{30528,1}@cuda
  %6 = aten::clone.default(%5) -> bf16[8192,30522]{30522,1}@cuda
  return (%6)
})"));
  // beta/alpha other than the defaults, or a 2-D bias: left alone.
  CHECK(Run(std::string(kBert) + R"(  %0 = aten::t.default(%a1) -> bf16[768,30522]{1,768}@cuda
  %1 = aten::addmm.default(%a0, %a2, %0, beta=2) -> bf16[8192,30522]{30522,1}@cuda
  return (%1)
})",
            &changed) != "");
  CHECK(!changed);
}

TEST_CASE("aligned, small or f32 matmuls are left alone", "[pad_mm]") {
  bool changed = true;
  Run(R"(graph(%a0: bf16[1024,768]{768,1}@cuda, %a1: bf16[768,3072]{3072,1}@cuda, %a2: bf16[64,65]{65,1}@cuda, %a3: bf16[65,64]{64,1}@cuda, %a4: f32[1024,50257]{50257,1}@cuda, %a5: f32[50257,768]{768,1}@cuda) {
  %0 = aten::mm.default(%a0, %a1) -> bf16[1024,3072]{3072,1}@cuda
  %1 = aten::mm.default(%a2, %a3) -> bf16[64,64]{64,1}@cuda
  %2 = aten::mm.default(%a4, %a5) -> f32[1024,768]{768,1}@cuda
  return (%0, %1, %2)
})",
      &changed);
  CHECK(!changed);
}

}  // namespace
}  // namespace tccd::codegen

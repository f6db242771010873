// PaddedOutputViews: IR text in, IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/pad_matmul_operands.h"
#include "codegen/passes/padded_output_views.h"

namespace tccd::codegen {
namespace {

std::string Run(const std::string& text, std::vector<int> free_outputs, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  PaddedOutputViews pass(std::move(free_outputs));
  absl::StatusOr<bool> c = pass.Run(*g);
  INFO(c.status().ToString());
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

// GPT-2's forward LM head at batch 2 x 512 as PadMatmulOperands leaves it: the hidden states h
// [1024, 768], the tied embedding W [50257, 768] padded to [50264, 768], the product's first
// 50257 columns copied back to contiguous and viewed as the logits [2, 512, 50257].
constexpr char kInputs[] =
    "graph(%a0: bf16[1024,768]{768,1}@cuda, %a1: bf16[50257,768]{768,1}@cuda) {\n";
constexpr char kPadded[] =
    R"(  %0 = aten::constant_pad_nd.default(%a1, [0, 0, 0, 7], 0) -> bf16[50264,768]{768,1}@cuda
  %1 = aten::t.default(%0) -> bf16[768,50264]{1,768}@cuda
  %2 = aten::mm.default(%a0, %1) -> bf16[1024,50264]{50264,1}@cuda
  %3 = aten::slice.Tensor(%2, 1, 0, 50257, 1) -> bf16[1024,50257]{50264,1}@cuda
)";

TEST_CASE("a free output's padded columns are returned as the strided view, the copy is gone",
          "[padded_output_views]") {
  bool changed = false;
  const std::string out =
      Run(std::string(kInputs) + kPadded +
              R"(  %4 = aten::clone.default(%3) -> bf16[1024,50257]{50257,1}@cuda
  %5 = aten::view.default(%4, [2, 512, 50257]) -> bf16[2,512,50257]{25731584,50257,1}@cuda
  return (%5)
})",
          {0}, &changed);
  CHECK(changed);
  CHECK(
      out ==
      Canonical(
          std::string(kInputs) + kPadded +
          R"(  %4 = aten::view.default(%3, [2, 512, 50257]) -> bf16[2,512,50257]{25735168,50264,1}@cuda
  return (%4)
})"));
}

TEST_CASE("the copy itself returned: the output is the slice", "[padded_output_views]") {
  bool changed = false;
  const std::string out =
      Run(std::string(kInputs) + kPadded +
              R"(  %4 = aten::clone.default(%3) -> bf16[1024,50257]{50257,1}@cuda
  return (%4)
})",
          {0}, &changed);
  CHECK(changed);
  CHECK(out == Canonical(std::string(kInputs) + kPadded + R"(  return (%3)
})"));
}

TEST_CASE("an output whose strides are promised keeps its copy (nothing to do)",
          "[padded_output_views]") {
  const std::string in = std::string(kInputs) + kPadded +
                         R"(  %4 = aten::clone.default(%3) -> bf16[1024,50257]{50257,1}@cuda
  %5 = aten::view.default(%4, [2, 512, 50257]) -> bf16[2,512,50257]{25731584,50257,1}@cuda
  %6 = aten::relu.default(%a0) -> bf16[1024,768]{768,1}@cuda
  return (%5, %6)
})";
  bool changed = true;
  CHECK(Run(in, {1}, &changed) == Canonical(in));
  CHECK_FALSE(changed);
  CHECK(Run(in, {}, &changed) == Canonical(in));
  CHECK_FALSE(changed);
}

TEST_CASE("the same value also returned at a promised position keeps its copy",
          "[padded_output_views]") {
  const std::string in = std::string(kInputs) + kPadded +
                         R"(  %4 = aten::clone.default(%3) -> bf16[1024,50257]{50257,1}@cuda
  return (%4, %4)
})";
  bool changed = true;
  CHECK(Run(in, {0}, &changed) == Canonical(in));
  CHECK_FALSE(changed);
}

TEST_CASE("the copy's other readers read the padded columns: the copy is gone",
          "[padded_output_views]") {
  // BERT's inference graph: the loss reads the logits it returns. Were the copy kept for the
  // loss, the padded product would live beside it (477 MiB more at batch 16 x 512).
  bool changed = false;
  const std::string out =
      Run(std::string(kInputs) + kPadded +
              R"(  %4 = aten::clone.default(%3) -> bf16[1024,50257]{50257,1}@cuda
  %5 = aten::view.default(%4, [2, 512, 50257]) -> bf16[2,512,50257]{25731584,50257,1}@cuda
  %6 = aten::view.default(%5, [1024, 50257]) -> bf16[1024,50257]{50257,1}@cuda
  %7 = aten::_log_softmax.default(%6, 1, false) -> bf16[1024,50257]{50257,1}@cuda
  %8 = aten::exp.default(%4) -> bf16[1024,50257]{50257,1}@cuda
  return (%5, %7, %8)
})",
          {0, 1, 2}, &changed);
  CHECK(changed);
  CHECK(
      out ==
      Canonical(
          std::string(kInputs) + kPadded +
          R"(  %4 = aten::view.default(%3, [2, 512, 50257]) -> bf16[2,512,50257]{25735168,50264,1}@cuda
  %5 = aten::view.default(%4, [1024, 50257]) -> bf16[1024,50257]{50264,1}@cuda
  %6 = aten::_log_softmax.default(%5, 1, false) -> bf16[1024,50257]{50257,1}@cuda
  %7 = aten::exp.default(%3) -> bf16[1024,50257]{50257,1}@cuda
  return (%4, %6, %7)
})"));
}

TEST_CASE("a reader that may need the contiguous copy keeps it (nothing to do)",
          "[padded_output_views]") {
  // reshape may copy, and an extern op of unknown kind may depend on the strides.
  for (const char* reader : {"aten::reshape.default(%4, [51463168]) -> bf16[51463168]{1}@cuda",
                             "aten::mm.default(%4, %1) -> bf16[1024,50264]{50264,1}@cuda"}) {
    const std::string in = std::string(kInputs) + kPadded +
                           R"(  %4 = aten::clone.default(%3) -> bf16[1024,50257]{50257,1}@cuda
  %5 = aten::view.default(%4, [2, 512, 50257]) -> bf16[2,512,50257]{25731584,50257,1}@cuda
  %6 = )" + reader + R"(
  return (%5, %6)
})";
    bool changed = true;
    CHECK(Run(in, {0, 1}, &changed) == Canonical(in));
    CHECK_FALSE(changed);
  }
}

// BERT's training forward: the logits returned (free) and a view of them saved for the backward
// (promised, declared contiguous).
TEST_CASE("a view of the output read elsewhere keeps the copy (nothing to do)",
          "[padded_output_views]") {
  const std::string in = std::string(kInputs) + kPadded +
                         R"(  %4 = aten::clone.default(%3) -> bf16[1024,50257]{50257,1}@cuda
  %5 = aten::view.default(%4, [2, 512, 50257]) -> bf16[2,512,50257]{25731584,50257,1}@cuda
  %6 = aten::view.default(%5, [1024, 50257]) -> bf16[1024,50257]{50257,1}@cuda
  return (%5, %6)
})";
  bool changed = true;
  CHECK(Run(in, {0}, &changed) == Canonical(in));
  CHECK_FALSE(changed);
}

TEST_CASE("a view that does not keep whole rows keeps the copy", "[padded_output_views]") {
  const std::string in = std::string(kInputs) + kPadded +
                         R"(  %4 = aten::clone.default(%3) -> bf16[1024,50257]{50257,1}@cuda
  %5 = aten::view.default(%4, [51463168]) -> bf16[51463168]{1}@cuda
  return (%5)
})";
  bool changed = true;
  CHECK(Run(in, {0}, &changed) == Canonical(in));
  CHECK_FALSE(changed);
}

TEST_CASE("after PadMatmulOperands: the logits of an odd vocabulary need no copy",
          "[padded_output_views]") {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(
      std::string(kInputs) + R"(  %0 = aten::t.default(%a1) -> bf16[768,50257]{1,768}@cuda
  %1 = aten::mm.default(%a0, %0) -> bf16[1024,50257]{50257,1}@cuda
  %2 = aten::view.default(%1, [2, 512, 50257]) -> bf16[2,512,50257]{25731584,50257,1}@cuda
  return (%2)
})");
  REQUIRE(g.ok());
  REQUIRE(*PadMatmulOperands().Run(*g));
  REQUIRE(*PaddedOutputViews({0}).Run(*g));
  const std::string out = ir::PrintGraph(*g);
  CHECK(out.find("aten::clone") == std::string::npos);
  CHECK(out.find("-> bf16[2,512,50257]{25735168,50264,1}@cuda") != std::string::npos);
}

}  // namespace
}  // namespace tccd::codegen

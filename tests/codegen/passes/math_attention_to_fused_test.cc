// MathAttentionToFused: the half-precision math attention chain becomes one
// scaled_dot_product_attention call; a chain whose intermediates something else reads stays.
#include <catch2/catch.hpp>

#include <regex>
#include <string>

#include "absl/strings/str_replace.h"
#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/dead_code_elimination.h"
#include "codegen/passes/math_attention_to_fused.h"

namespace tccd::codegen {
namespace {

// What AOTAutograd traces for SDPA's math path over bf16 q, k, v ([B, H, S, D] views of a
// [B, S, H, D] projection) with an additive mask MASK (T5's and BERT's attention on the GPU),
// returning RETURNS.
constexpr char kMathAttention[] =
    R"(graph(%a0: bf16[2,2,8,4]{64,4,8,1}@cuda, %a1: bf16[2,2,8,4]{64,4,8,1}@cuda, %a2: bf16[2,2,8,4]{64,4,8,1}@cuda, %a3: f32[2,1,8,8]{64,64,8,1}@cuda, %a4: bf16[2,1,8,8]{64,64,8,1}@cuda, %a5: bf16[2,1,8,8]{64,64,1,8}@cuda) {
  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[2,2,8,4]{64,4,8,1}@cuda
  %1 = aten::_to_copy.default(%a1, dtype=f32) -> f32[2,2,8,4]{64,4,8,1}@cuda
  %2 = aten::_to_copy.default(%a2, dtype=f32) -> f32[2,2,8,4]{64,4,8,1}@cuda
  %3 = aten::mul.Scalar(%0, 0.5) -> f32[2,2,8,4]{64,4,8,1}@cuda
  %4 = aten::transpose.int(%1, -2, -1) -> f32[2,2,4,8]{64,4,1,8}@cuda
  %5 = aten::mul.Scalar(%4, 0.25) -> f32[2,2,4,8]{64,4,1,8}@cuda
  %6 = aten::expand.default(%3, [2, 2, 8, 4]) -> f32[2,2,8,4]{64,4,8,1}@cuda
  %7 = aten::clone.default(%6, memory_format=memory_format(0)) -> f32[2,2,8,4]{64,32,4,1}@cuda
  %8 = aten::_unsafe_view.default(%7, [4, 8, 4]) -> f32[4,8,4]{32,4,1}@cuda
  %9 = aten::expand.default(%5, [2, 2, 4, 8]) -> f32[2,2,4,8]{64,4,1,8}@cuda
  %10 = aten::clone.default(%9, memory_format=memory_format(0)) -> f32[2,2,4,8]{64,32,8,1}@cuda
  %11 = aten::_unsafe_view.default(%10, [4, 4, 8]) -> f32[4,4,8]{32,8,1}@cuda
  %12 = aten::bmm.default(%8, %11) -> f32[4,8,8]{64,8,1}@cuda
  %13 = aten::view.default(%12, [2, 2, 8, 8]) -> f32[2,2,8,8]{128,64,8,1}@cuda
  %14 = aten::add.Tensor(%13, MASK) -> f32[2,2,8,8]{128,64,8,1}@cuda
  %15 = aten::_safe_softmax.default(%14, -1) -> f32[2,2,8,8]{128,64,8,1}@cuda
  %16 = aten::expand.default(%15, [2, 2, 8, 8]) -> f32[2,2,8,8]{128,64,8,1}@cuda
  %17 = aten::view.default(%16, [4, 8, 8]) -> f32[4,8,8]{64,8,1}@cuda
  %18 = aten::expand.default(%2, [2, 2, 8, 4]) -> f32[2,2,8,4]{64,4,8,1}@cuda
  %19 = aten::clone.default(%18, memory_format=memory_format(0)) -> f32[2,2,8,4]{64,32,4,1}@cuda
  %20 = aten::_unsafe_view.default(%19, [4, 8, 4]) -> f32[4,8,4]{32,4,1}@cuda
  %21 = aten::bmm.default(%17, %20) -> f32[4,8,4]{32,4,1}@cuda
  %22 = aten::view.default(%21, [2, 2, 8, 4]) -> f32[2,2,8,4]{64,32,4,1}@cuda
  %23 = aten::_to_copy.default(%22, dtype=bf16) -> bf16[2,2,8,4]{64,32,4,1}@cuda
  return (RETURNS)
})";

ir::Graph MathAttention(const std::string& mask, const std::string& returns) {
  return *ir::ParseGraph(
      absl::StrReplaceAll(kMathAttention, {{"MASK", mask}, {"RETURNS", returns}}));
}

std::string RunAndClean(ir::Graph& g, bool expect_change) {
  MathAttentionToFused pass;
  absl::StatusOr<bool> changed = pass.Run(g);
  REQUIRE(changed.ok());
  CHECK(*changed == expect_change);
  DeadCodeElimination dce;
  REQUIRE(dce.Run(g).ok());
  return ir::PrintGraph(g);
}

TEST_CASE("Math attention with a transposed bf16 mask: one attention call over a copy of it",
          "[math_attention_to_fused]") {
  ir::Graph g = MathAttention("%a5", "%23");
  const std::string out = RunAndClean(g, true);
  INFO(out);
  // The scale is the product of q's and k's factors; the result is laid out in q's dimension
  // order, then copied into the cast's contiguous type (the graph returns it).
  CHECK(out.find("%0 = aten::clone.default(%a5, memory_format=memory_format(0)) -> "
                 "bf16[2,1,8,8]{64,64,8,1}@cuda") != std::string::npos);
  CHECK(out.find("%1 = aten::scaled_dot_product_attention.default(%a0, %a1, %a2, %0, 0.0, false, "
                 "scale=0.125) -> bf16[2,2,8,4]{64,4,8,1}@cuda") != std::string::npos);
  CHECK(out.find("%2 = aten::clone.default(%1, memory_format=memory_format(0)) -> "
                 "bf16[2,2,8,4]{64,32,4,1}@cuda") != std::string::npos);
  CHECK(out.find("bmm") == std::string::npos);
  CHECK(out.find("softmax") == std::string::npos);
  CHECK(out.find("-> f32[") == std::string::npos);
  // Nothing left to do.
  MathAttentionToFused pass;
  CHECK_FALSE(*pass.Run(g));
}

TEST_CASE("Math attention with an f32 mask keeps the math path (no rounding of the mask)",
          "[math_attention_to_fused]") {
  ir::Graph g = MathAttention("%a3", "%23");
  MathAttentionToFused pass;
  CHECK_FALSE(*pass.Run(g));
}

TEST_CASE("Math attention with an f32 select of 0 / -inf from a boolean mask: cast exactly",
          "[math_attention_to_fused]") {
  // The math path's own conversion of a boolean mask, made in f32: where(mask, 0, -inf), whose
  // values bf16 holds exactly. Node ids shifted by one for the where in front.
  std::string text = absl::StrReplaceAll(
      kMathAttention, {{"MASK", "%MASKREF"},
                       {"RETURNS", "%23"},
                       {"%a5: bf16[2,1,8,8]{64,64,1,8}@cuda)",
                        "%a5: bf16[2,1,8,8]{64,64,1,8}@cuda, %a6: b8[2,1,8,8]{64,64,8,1}@cuda)"}});
  std::string shifted;
  std::smatch m;
  const std::regex id("%([0-9]+)");
  auto begin = text.cbegin();
  while (std::regex_search(begin, text.cend(), m, id)) {
    shifted.append(begin, m[0].first);
    shifted += "%" + std::to_string(std::stoi(m[1].str()) + 1);
    begin = m[0].second;
  }
  shifted.append(begin, text.cend());
  shifted = absl::StrReplaceAll(
      shifted, {{"%MASKREF", "%0"},
                {") {\n  %1 =",
                 ") {\n  %0 = aten::where.self(%a6, 0.0, -inf) -> f32[2,1,8,8]{64,64,8,1}@cuda\n  %1 ="}});
  ir::Graph g = *ir::ParseGraph(shifted);
  const std::string out = RunAndClean(g, true);
  INFO(out);
  CHECK(out.find("aten::_to_copy.default(%0, dtype=bf16, memory_format=memory_format(0)) -> "
                 "bf16[2,1,8,8]{64,64,8,1}@cuda") != std::string::npos);
  CHECK(out.find("aten::scaled_dot_product_attention.default(%a0, %a1, %a2, %1, 0.0, false, "
                 "scale=0.125)") != std::string::npos);

  // Any other constant (here 0.1, which bf16 rounds) keeps the math path.
  ir::Graph other = *ir::ParseGraph(absl::StrReplaceAll(shifted, {{"0.0, -inf)", "0.1, -inf)"}}));
  CHECK_FALSE(*MathAttentionToFused().Run(other));
}

TEST_CASE("Math attention with a contiguous bf16 mask reads the mask itself",
          "[math_attention_to_fused]") {
  ir::Graph g = MathAttention("%a4", "%23");
  const std::string out = RunAndClean(g, true);
  INFO(out);
  CHECK(out.find("aten::scaled_dot_product_attention.default(%a0, %a1, %a2, %a4, 0.0, false, "
                 "scale=0.125)") != std::string::npos);
  CHECK(out.find("_to_copy") == std::string::npos);
}

TEST_CASE("Math attention read through transformers' reshape + transpose + contiguous: no copy",
          "[math_attention_to_fused]") {
  ir::Graph g = *ir::ParseGraph(absl::StrReplaceAll(
      kMathAttention,
      {{"MASK", "%a4"},
       {"  return (RETURNS)",
        "  %24 = aten::view.default(%23, [2, -1, 8, 4]) -> bf16[2,2,8,4]{64,32,4,1}@cuda\n"
        "  %25 = aten::transpose.int(%24, 1, 2) -> bf16[2,8,2,4]{64,4,32,1}@cuda\n"
        "  %26 = aten::clone.default(%25, memory_format=memory_format(0)) -> "
        "bf16[2,8,2,4]{64,8,4,1}@cuda\n"
        "  return (%26)"}}));
  const std::string out = RunAndClean(g, true);
  INFO(out);
  // The attention's [B, Q, H, D] memory order, and the transpose's strides follow it: the
  // clone copies dense rows.
  CHECK(out.find("%0 = aten::scaled_dot_product_attention.default(%a0, %a1, %a2, %a4, 0.0, "
                 "false, scale=0.125) -> bf16[2,2,8,4]{64,4,8,1}@cuda") != std::string::npos);
  CHECK(out.find("%1 = aten::view.default(%0, [2, -1, 8, 4]) -> bf16[2,2,8,4]{64,4,8,1}@cuda") !=
        std::string::npos);
  CHECK(out.find("%2 = aten::transpose.int(%1, 1, 2) -> bf16[2,8,2,4]{64,8,4,1}@cuda") !=
        std::string::npos);
  CHECK(out.find("%3 = aten::clone.default(%2, memory_format=memory_format(0)) -> "
                 "bf16[2,8,2,4]{64,8,4,1}@cuda") != std::string::npos);
  CHECK(out.find("clone.default(%0") == std::string::npos);
}

TEST_CASE("Math attention with the decomposition's dead cast of the probabilities is rewritten",
          "[math_attention_to_fused]") {
  // PyTorch's math path also casts the probabilities to q's dtype and drops them: a reader that
  // dead-code elimination removes after this pass.
  ir::Graph g = *ir::ParseGraph(absl::StrReplaceAll(
      kMathAttention,
      {{"MASK", "%a4"},
       {"  return (RETURNS)",
        "  %24 = aten::_to_copy.default(%15, dtype=bf16) -> bf16[2,2,8,8]{128,64,8,1}@cuda\n"
        "  return (%23)"}}));
  const std::string out = RunAndClean(g, true);
  INFO(out);
  CHECK(out.find("aten::scaled_dot_product_attention.default(%a0, %a1, %a2, %a4,") !=
        std::string::npos);
  CHECK(out.find("softmax") == std::string::npos);
}

TEST_CASE("Math attention whose probabilities a backward saves keeps the math path",
          "[math_attention_to_fused]") {
  ir::Graph g = MathAttention("%a4", "%23, %15");
  const std::string before = ir::PrintGraph(g);
  MathAttentionToFused pass;
  CHECK_FALSE(*pass.Run(g));
  CHECK(ir::PrintGraph(g) == before);
}

TEST_CASE("Math attention without a mask, or in f32, or with a mask of another shape",
          "[math_attention_to_fused]") {
  SECTION("no mask: the scores go to the softmax directly") {
    ir::Graph g = *ir::ParseGraph(absl::StrReplaceAll(
        kMathAttention,
        {{"aten::add.Tensor(%13, MASK) -> f32[2,2,8,8]{128,64,8,1}",
          "aten::add.Tensor(%a3, %a3) -> f32[2,1,8,8]{64,64,8,1}"},
         {"_safe_softmax.default(%14, -1)", "_safe_softmax.default(%13, -1)"},
         {"RETURNS", "%23"}}));
    const std::string out = RunAndClean(g, true);
    INFO(out);
    CHECK(out.find("aten::scaled_dot_product_attention.default(%a0, %a1, %a2, None, 0.0, false, "
                   "scale=0.125)") != std::string::npos);
  }
  SECTION("a mask over the head dim only is no attention mask shape: kept") {
    ir::Graph g = *ir::ParseGraph(absl::StrReplaceAll(
        kMathAttention, {{"%a4: bf16[2,1,8,8]{64,64,8,1}", "%a4: bf16[8]{1}"},
                         {"MASK", "%a4"},
                         {"RETURNS", "%23"}}));
    MathAttentionToFused pass;
    CHECK_FALSE(*pass.Run(g));
  }
}

}  // namespace
}  // namespace tccd::codegen

namespace tccd::codegen {
namespace {

TEST_CASE("Math attention below the size limit keeps the math path",
          "[math_attention_to_fused]") {
  // 2 x 2 x 8 x 8 = 256 scores.
  ir::Graph small = MathAttention("%a4", "%23");
  CHECK_FALSE(*MathAttentionToFused(257).Run(small));
  ir::Graph at_limit = MathAttention("%a4", "%23");
  CHECK(*MathAttentionToFused(256).Run(at_limit));
  CHECK(MathAttentionToFused::kDefaultMinScores == 8 * 1024 * 1024);
}

}  // namespace
}  // namespace tccd::codegen

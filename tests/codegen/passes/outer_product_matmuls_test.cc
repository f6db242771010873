// OuterProductMatmuls: matmuls over a length-1 dim become broadcast multiplies; others, mixed
// dtypes and graph outputs stay.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/outer_product_matmuls.h"

namespace tccd::codegen {
namespace {

TEST_CASE("the rotary angles' K = 1 bmm is a multiply", "[outer_product_matmuls]") {
  // transformers' LlamaRotaryEmbedding on CUDA: inv_freq [1, 32, 1] @ positions [1, 1, 16].
  ir::Graph g = *ir::ParseGraph(R"(graph(%a0: f32[32]{1}@cuda, %a1: i64[1,16]{16,1}@cuda) {
  %0 = aten::unsqueeze.default(%a0, 0) -> f32[1,32]{32,1}@cuda
  %1 = aten::unsqueeze.default(%0, 2) -> f32[1,32,1]{32,1,1}@cuda
  %2 = aten::unsqueeze.default(%a1, 1) -> i64[1,1,16]{16,16,1}@cuda
  %3 = aten::_to_copy.default(%2, dtype=f32) -> f32[1,1,16]{16,16,1}@cuda
  %4 = aten::bmm.default(%1, %3) -> f32[1,32,16]{512,16,1}@cuda
  %5 = aten::transpose.int(%4, 1, 2) -> f32[1,16,32]{512,1,16}@cuda
  %6 = aten::cos.default(%5) -> f32[1,16,32]{512,32,1}@cuda
  %7 = aten::mm.default(%0, %a0) -> f32[1,32]{32,1}@cuda
  return (%6, %7)
})");
  OuterProductMatmuls pass;
  REQUIRE(*pass.Run(g));
  CHECK(ir::PrintGraph(g) == R"(graph(%a0: f32[32]{1}@cuda, %a1: i64[1,16]{16,1}@cuda) {
  %0 = aten::unsqueeze.default(%a0, 0) -> f32[1,32]{32,1}@cuda
  %1 = aten::unsqueeze.default(%0, 2) -> f32[1,32,1]{32,1,1}@cuda
  %2 = aten::unsqueeze.default(%a1, 1) -> i64[1,1,16]{16,16,1}@cuda
  %3 = aten::_to_copy.default(%2, dtype=f32) -> f32[1,1,16]{16,16,1}@cuda
  %4 = aten::mul.Tensor(%1, %3) -> f32[1,32,16]{512,16,1}@cuda
  %5 = aten::transpose.int(%4, 1, 2) -> f32[1,16,32]{512,1,16}@cuda
  %6 = aten::cos.default(%5) -> f32[1,16,32]{512,32,1}@cuda
  %7 = aten::mm.default(%0, %a0) -> f32[1,32]{32,1}@cuda
  return (%6, %7)
}
)");
  CHECK_FALSE(*pass.Run(g));
}

TEST_CASE("matmuls over longer dims, mixed dtypes and outputs stay", "[outer_product_matmuls]") {
  const char* text =
      R"(graph(%a0: f32[4,2]{2,1}@cuda, %a1: f32[2,8]{8,1}@cuda, %a2: f32[4,1]{1,1}@cuda, %a3: bf16[1,8]{8,1}@cuda, %a4: f32[1,8]{8,1}@cuda) {
  %0 = aten::mm.default(%a0, %a1) -> f32[4,8]{8,1}@cuda
  %1 = aten::mm.default(%a2, %a3) -> f32[4,8]{8,1}@cuda
  %2 = aten::mm.default(%a2, %a4) -> f32[4,8]{8,1}@cuda
  return (%0, %1, %2)
})";
  ir::Graph g = *ir::ParseGraph(text);
  OuterProductMatmuls pass;
  CHECK_FALSE(*pass.Run(g));
}

}  // namespace
}  // namespace tccd::codegen

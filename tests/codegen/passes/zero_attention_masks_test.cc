// ZeroAttentionMasks: attention calls drop an all-zeros mask; other masks stay.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/dead_code_elimination.h"
#include "codegen/passes/zero_attention_masks.h"

namespace tccd::codegen {
namespace {

TEST_CASE("T5's cross-attention zeros mask is dropped, a real mask stays",
          "[zero_attention_masks]") {
  ir::Graph g = *ir::ParseGraph(
      R"(graph(%a0: bf16[2,8,16,64]{8192,1024,64,1}@cuda, %a1: bf16[1,8,16,16]{2048,256,16,1}@cuda) {
  %0 = aten::zeros.default([1, 8, 16, 16], dtype=bf16, device=device(cuda), pin_memory=false) -> bf16[1,8,16,16]{2048,256,16,1}@cuda
  %1 = aten::_scaled_dot_product_efficient_attention.default(%a0, %a0, %a0, %0, false, 0.0, false, scale=1.0) -> (bf16[2,8,16,64]{8192,1024,64,1}@cuda, f32[2,8,0]{0,0,1}@cuda, i64[]{}@cuda, i64[]{}@cuda)
  %2 = aten::_scaled_dot_product_cudnn_attention.default(%a0, %a0, %a0, %a1, false, 0.0, false, false, scale=1.0) -> (bf16[2,8,16,64]{8192,1024,64,1}@cuda, f32[2,8,16,1]{128,16,1,1}@cuda, i64[]{}@cuda, i64[]{}@cuda, i64[]{}@cuda, i64[]{}@cuda, i64[]{}@cuda, i64[]{}@cuda, bf16[0]{1}@cuda)
  %3 = aten::full.default([1, 8, 16, 16], 0.0, dtype=bf16, device=device(cuda)) -> bf16[1,8,16,16]{2048,256,16,1}@cuda
  %4 = aten::_scaled_dot_product_cudnn_attention.default(%a0, %a0, %a0, %3, false, 0.0, false, false, scale=1.0) -> (bf16[2,8,16,64]{8192,1024,64,1}@cuda, f32[2,8,16,1]{128,16,1,1}@cuda, i64[]{}@cuda, i64[]{}@cuda, i64[]{}@cuda, i64[]{}@cuda, i64[]{}@cuda, i64[]{}@cuda, bf16[0]{1}@cuda)
  return (%1#0, %2#0, %4#0)
})");
  ZeroAttentionMasks pass;
  REQUIRE(*pass.Run(g));
  DeadCodeElimination dce;
  REQUIRE(dce.Run(g).ok());
  const std::string out = ir::PrintGraph(g);
  CHECK(out.find("aten::zeros.default") == std::string::npos);
  CHECK(out.find("aten::full.default") == std::string::npos);
  CHECK(out.find("_scaled_dot_product_efficient_attention.default(%a0, %a0, %a0, None,") !=
        std::string::npos);
  CHECK(out.find("_scaled_dot_product_cudnn_attention.default(%a0, %a0, %a0, %a1,") !=
        std::string::npos);
  CHECK(out.find("_scaled_dot_product_cudnn_attention.default(%a0, %a0, %a0, None,") !=
        std::string::npos);
  CHECK_FALSE(*pass.Run(g));
}

}  // namespace
}  // namespace tccd::codegen

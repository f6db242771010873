// RedundantClones: a clone of a fresh value read by nothing else, in its layout, is that value;
// every other clone stays.
#include <catch2/catch.hpp>

#include <string>

#include "absl/strings/str_replace.h"
#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/dead_code_elimination.h"
#include "codegen/passes/redundant_clones.h"

namespace tccd::codegen {
namespace {

// ConvNeXt's block tail: the second linear's result viewed as [B, H, W, C], cloned, permuted to
// NCHW, scaled and added to the shortcut. EXTRA: more nodes; RETURNS: the graph's outputs.
constexpr char kBlockTail[] =
    R"(graph(%a0: bf16[32,16]{16,1}@cuda, %a1: bf16[16,8]{8,1}@cuda, %a2: f32[2,8,4,4]{128,16,4,1}@cuda) {
  %0 = aten::mm.default(%a0, %a1) -> bf16[32,8]{8,1}@cuda
  %1 = aten::view.default(%0, [2, 4, 4, 8]) -> bf16[2,4,4,8]{128,32,8,1}@cuda
  %2 = aten::clone.default(CLONED) -> bf16[2,4,4,8]{128,32,8,1}@cuda
  %3 = aten::permute.default(%2, [0, 3, 1, 2]) -> bf16[2,8,4,4]{128,1,32,8}@cuda
  %4 = aten::add.Tensor(%3, %a2) -> f32[2,8,4,4]{128,16,4,1}@cuda
EXTRA  return (RETURNS)
})";

ir::Graph BlockTail(const std::string& cloned, const std::string& extra, const std::string& returns) {
  return *ir::ParseGraph(absl::StrReplaceAll(
      kBlockTail, {{"CLONED", cloned}, {"EXTRA", extra}, {"RETURNS", returns}}));
}

TEST_CASE("A clone of a matmul's view that nothing else reads is the view",
          "[redundant_clones]") {
  ir::Graph g = BlockTail("%1", "", "%4");
  RedundantClones pass;
  REQUIRE(*pass.Run(g));
  REQUIRE(DeadCodeElimination().Run(g).ok());
  const std::string out = ir::PrintGraph(g);
  INFO(out);
  CHECK(out.find("clone") == std::string::npos);
  CHECK(out.find("%2 = aten::permute.default(%1, [0, 3, 1, 2])") != std::string::npos);
  CHECK_FALSE(*pass.Run(g));
}

TEST_CASE("Clones that copy something else read, an input, another layout, or an output stay",
          "[redundant_clones]") {
  RedundantClones pass;
  SECTION("the matmul's result has another reader") {
    ir::Graph g = BlockTail(
        "%1", "  %5 = aten::sum.default(%0) -> bf16[]{}@cuda\n", "%4, %5");
    CHECK_FALSE(*pass.Run(g));
  }
  SECTION("a graph input") {
    ir::Graph g = *ir::ParseGraph(absl::StrReplaceAll(
        kBlockTail, {{"%2 = aten::clone.default(CLONED) -> bf16[2,4,4,8]{128,32,8,1}@cuda",
                      "%2 = aten::clone.default(%a2) -> f32[2,8,4,4]{128,16,4,1}@cuda"},
                     {"%3 = aten::permute.default(%2, [0, 3, 1, 2]) -> bf16[2,8,4,4]{128,1,32,8}",
                      "%3 = aten::permute.default(%1, [0, 3, 1, 2]) -> bf16[2,8,4,4]{128,1,32,8}"},
                     {"EXTRA", "  %5 = aten::mul.Tensor(%2, %4) -> f32[2,8,4,4]{128,16,4,1}@cuda\n"},
                     {"RETURNS", "%5"}}));
    CHECK_FALSE(*pass.Run(g));
  }
  SECTION("a copy into another layout") {
    ir::Graph g = *ir::ParseGraph(absl::StrReplaceAll(
        kBlockTail,
        {{"%2 = aten::clone.default(CLONED) -> bf16[2,4,4,8]{128,32,8,1}@cuda\n"
          "  %3 = aten::permute.default(%2, [0, 3, 1, 2]) -> bf16[2,8,4,4]{128,1,32,8}@cuda",
          "%2 = aten::permute.default(%1, [0, 3, 1, 2]) -> bf16[2,8,4,4]{128,1,32,8}@cuda\n"
          "  %3 = aten::clone.default(%2, memory_format=memory_format(0)) -> "
          "bf16[2,8,4,4]{128,16,4,1}@cuda"},
         {"EXTRA", ""},
         {"RETURNS", "%4"}}));
    CHECK_FALSE(*pass.Run(g));
  }
  SECTION("the copied value is an attention call's (its layout is the backend's)") {
    ir::Graph g = *ir::ParseGraph(absl::StrReplaceAll(
        kBlockTail,
        {{"%1 = aten::view.default(%0, [2, 4, 4, 8]) -> bf16[2,4,4,8]{128,32,8,1}@cuda",
          "%1 = aten::scaled_dot_product_attention.default(%a2, %a2, %a2, None, 0.0, false) -> "
          "bf16[2,4,4,8]{128,32,8,1}@cuda"},
         {"CLONED", "%1"},
         {"EXTRA", ""},
         {"RETURNS", "%4"}}));
    CHECK_FALSE(*pass.Run(g));
  }
  SECTION("the clone is returned") {
    ir::Graph g = BlockTail("%1", "", "%4, %2");
    CHECK_FALSE(*pass.Run(g));
  }
}

}  // namespace
}  // namespace tccd::codegen

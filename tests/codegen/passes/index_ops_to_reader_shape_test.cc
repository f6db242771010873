// IndexOpsToReaderShape: IR text in, IR text out, and the one kernel it enables (transformers'
// causal mask: two indexes of a position table compared at [B, 1, S, S]).
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/index_ops_to_reader_shape.h"

namespace tccd::codegen {
namespace {

ir::Graph Parse(const std::string& text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return *std::move(g);
}

std::string Canonical(const std::string& text) { return ir::PrintGraph(Parse(text)); }

std::string PartitionText(const ir::Graph& g) {
  absl::StatusOr<Partition> p = PartitionForFusion(g, FusionOptions{});
  REQUIRE(p.ok());
  return PrintPartition(g, *p);
}

// pos [B=2, S=4], batch index [2,1,1,1], q index [1,1,4,1], kv index [1,1,1,4].
constexpr char kInputs[] =
    "graph(%a0: i64[2,4]{4,1}@cuda, %a1: i64[2,1,1,1]{1,1,1,1}@cuda, "
    "%a2: i64[1,1,4,1]{4,4,1,1}@cuda, %a3: i64[1,1,1,4]{4,4,4,1}@cuda) {\n";

TEST_CASE("mask indexes are computed at the comparison's shape and fuse with it",
          "[index_ops_to_reader_shape]") {
  ir::Graph g = Parse(std::string(kInputs) +
                      R"(  %0 = aten::index.Tensor(%a0, [%a1, %a2]) -> i64[2,1,4,1]{4,4,1,1}@cuda
  %1 = aten::index.Tensor(%a0, [%a1, %a3]) -> i64[2,1,1,4]{4,4,4,1}@cuda
  %2 = aten::le.Tensor(%1, %0) -> b8[2,1,4,4]{16,16,4,1}@cuda
  return (%2)
})");
  CHECK(PartitionText(g) == "fused %0 -> %0\nfused %1 -> %1\nfused %2 -> %2\n");
  IndexOpsToReaderShape pass;
  absl::StatusOr<bool> changed = pass.Run(g);
  REQUIRE(changed.ok());
  CHECK(*changed);
  CHECK(ir::PrintGraph(g) ==
        Canonical(std::string(kInputs) +
                  R"(  %0 = aten::expand.default(%a1, [2, 1, 4, 4]) -> i64[2,1,4,4]{1,1,0,0}@cuda
  %1 = aten::expand.default(%a2, [2, 1, 4, 4]) -> i64[2,1,4,4]{0,4,1,0}@cuda
  %2 = aten::index.Tensor(%a0, [%0, %1]) -> i64[2,1,4,4]{16,16,4,1}@cuda
  %3 = aten::expand.default(%a1, [2, 1, 4, 4]) -> i64[2,1,4,4]{1,1,0,0}@cuda
  %4 = aten::expand.default(%a3, [2, 1, 4, 4]) -> i64[2,1,4,4]{0,4,0,1}@cuda
  %5 = aten::index.Tensor(%a0, [%3, %4]) -> i64[2,1,4,4]{16,16,4,1}@cuda
  %6 = aten::le.Tensor(%5, %2) -> b8[2,1,4,4]{16,16,4,1}@cuda
  return (%6)
})"));
  // One kernel: both indexes and the comparison (the expands are views).
  CHECK(PartitionText(g) ==
        "extern %0 aten::expand.default\nextern %1 aten::expand.default\nextern %3 "
        "aten::expand.default\nextern %4 aten::expand.default\nfused %2 %5 %6 -> %6\n");
}

TEST_CASE("an index read twice, returned, or not broadcast keeps its shape",
          "[index_ops_to_reader_shape]") {
  const std::string text =
      std::string(kInputs) +
      R"(  %0 = aten::index.Tensor(%a0, [%a1, %a2]) -> i64[2,1,4,1]{4,4,1,1}@cuda
  %1 = aten::index.Tensor(%a0, [%a1, %a3]) -> i64[2,1,1,4]{4,4,4,1}@cuda
  %2 = aten::le.Tensor(%1, %0) -> b8[2,1,4,4]{16,16,4,1}@cuda
  %3 = aten::eq.Tensor(%1, %0) -> b8[2,1,4,4]{16,16,4,1}@cuda
  %4 = aten::index.Tensor(%a0, [%a1, %a2]) -> i64[2,1,4,1]{4,4,1,1}@cuda
  %5 = aten::neg.default(%4) -> i64[2,1,4,1]{4,4,1,1}@cuda
  return (%2, %3, %1, %5)
})";
  ir::Graph g = Parse(text);
  IndexOpsToReaderShape pass;
  absl::StatusOr<bool> changed = pass.Run(g);
  REQUIRE(changed.ok());
  CHECK_FALSE(*changed);
  CHECK(ir::PrintGraph(g) == Canonical(text));
}

// GPT-2's position embedding: wpe(position ids [1, S]) added to the token embedding at [B, S, E].
constexpr char kPositionEmbedding[] =
    R"(graph(%a0: i64[2,4]{4,1}@cuda, %a1: i64[1,4]{4,1}@cuda, %a2: f32[100,8]{8,1}@cuda, %a3: f32[16,8]{8,1}@cuda) {
  %0 = aten::embedding.default(%a2, %a0) -> f32[2,4,8]{32,8,1}@cuda
  %1 = aten::embedding.default(%a3, %a1) -> f32[1,4,8]{32,8,1}@cuda
  %2 = aten::add.Tensor(%0, %1) -> f32[2,4,8]{32,8,1}@cuda
  return (%2)
})";

TEST_CASE("a position embedding is gathered at its reader's shape and fuses with it",
          "[index_ops_to_reader_shape]") {
  ir::Graph g = Parse(kPositionEmbedding);
  // Before: the position embedding is a kernel of its own (its [1, 4, 8] is not the add's shape).
  CHECK(PartitionText(g) == "fused %1 -> %1\nfused %0 %2 -> %2\n");
  IndexOpsToReaderShape pass;
  absl::StatusOr<bool> changed = pass.Run(g);
  REQUIRE(changed.ok());
  CHECK(*changed);
  CHECK(ir::PrintGraph(g) ==
        Canonical(R"(graph(%a0: i64[2,4]{4,1}@cuda, %a1: i64[1,4]{4,1}@cuda, %a2: f32[100,8]{8,1}@cuda, %a3: f32[16,8]{8,1}@cuda) {
  %0 = aten::embedding.default(%a2, %a0) -> f32[2,4,8]{32,8,1}@cuda
  %1 = aten::expand.default(%a1, [2, 4]) -> i64[2,4]{0,1}@cuda
  %2 = aten::embedding.default(%a3, %1) -> f32[2,4,8]{32,8,1}@cuda
  %3 = aten::add.Tensor(%0, %2) -> f32[2,4,8]{32,8,1}@cuda
  return (%3)
})"));
  CHECK(PartitionText(g) == "extern %1 aten::expand.default\nfused %0 %2 %3 -> %3\n");
}

TEST_CASE("without embeddings-to-reader-shape the position embedding keeps its shape",
          "[index_ops_to_reader_shape]") {
  ir::Graph g = Parse(kPositionEmbedding);
  IndexOpsToReaderShape pass(/*embeddings=*/false);
  absl::StatusOr<bool> changed = pass.Run(g);
  REQUIRE(changed.ok());
  CHECK_FALSE(*changed);
  CHECK(ir::PrintGraph(g) == Canonical(kPositionEmbedding));
}

}  // namespace
}  // namespace tccd::codegen

// CopyLayoutIntoProducer: IR text in, IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/copy_layout_into_producer.h"

namespace tccd::codegen {
namespace {

std::string Run(const std::string& text, bool* changed, bool through_reshapes = true) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  CopyLayoutIntoProducer pass(through_reshapes);
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

// Attention's bmm operand as AOTAutograd decomposes it under bf16 autocast: q [B, S, H, D]
// transposed to [B, H, S, D], cast to f32 (strides preserved), scaled, expanded to itself, made
// contiguous and viewed as [B*H, S, D] for bmm.
constexpr char kInputs[] =
    "graph(%a0: bf16[2,4,3,2]{24,6,2,1}@cuda, %a1: f32[6,2,4]{8,4,1}@cuda) {\n";
constexpr char kHead[] = R"(  %0 = aten::transpose.int(%a0, 1, 2) -> bf16[2,3,4,2]{24,2,6,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=f32) -> f32[2,3,4,2]{24,2,6,1}@cuda
)";

TEST_CASE("the scaled query writes the contiguous bmm operand itself; expand and clone go",
          "[copy_layout_into_producer]") {
  bool changed = false;
  const std::string out = Run(std::string(kInputs) + kHead +
                                  R"(  %2 = aten::mul.Scalar(%1, 0.5) -> f32[2,3,4,2]{24,2,6,1}@cuda
  %3 = aten::expand.default(%2, [2, 3, 4, 2]) -> f32[2,3,4,2]{24,2,6,1}@cuda
  %4 = aten::clone.default(%3, memory_format=memory_format(0)) -> f32[2,3,4,2]{24,8,2,1}@cuda
  %5 = aten::_unsafe_view.default(%4, [6, 4, 2]) -> f32[6,4,2]{8,2,1}@cuda
  %6 = aten::bmm.default(%5, %a1) -> f32[6,4,4]{16,4,1}@cuda
  return (%6, %5)
})",
                              &changed);
  CHECK(changed);
  CHECK(out == Canonical(std::string(kInputs) + kHead +
                         R"(  %2 = aten::mul.Scalar(%1, 0.5) -> f32[2,3,4,2]{24,8,2,1}@cuda
  %3 = aten::_unsafe_view.default(%2, [6, 4, 2]) -> f32[6,4,2]{8,2,1}@cuda
  %4 = aten::bmm.default(%3, %a1) -> f32[6,4,4]{16,4,1}@cuda
  return (%4, %3)
})"));
}

TEST_CASE("a clone straight of the producer folds too, and the cast itself may be the producer",
          "[copy_layout_into_producer]") {
  bool changed = false;
  const std::string out = Run(
      std::string(kInputs) + kHead +
          R"(  %2 = aten::clone.default(%1, memory_format=memory_format(0)) -> f32[2,3,4,2]{24,8,2,1}@cuda
  return (%2)
})",
      &changed);
  CHECK(changed);
  CHECK(out == Canonical(std::string(kInputs) +
                         R"(  %0 = aten::transpose.int(%a0, 1, 2) -> bf16[2,3,4,2]{24,2,6,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=f32) -> f32[2,3,4,2]{24,8,2,1}@cuda
  return (%1)
})"));
}

TEST_CASE(
    "attention's output, cast and transposed back from heads, is written transposed by the cast",
    "[copy_layout_into_producer]") {
  bool changed = false;
  const std::string out = Run(R"(graph(%a0: f32[6,4,2]{8,2,1}@cuda) {
  %0 = aten::view.default(%a0, [2, 3, 4, 2]) -> f32[2,3,4,2]{24,8,2,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=bf16) -> bf16[2,3,4,2]{24,8,2,1}@cuda
  %2 = aten::transpose.int(%1, 1, 2) -> bf16[2,4,3,2]{24,2,8,1}@cuda
  %3 = aten::clone.default(%2, memory_format=memory_format(0)) -> bf16[2,4,3,2]{24,6,2,1}@cuda
  %4 = aten::view.default(%3, [2, 4, 6]) -> bf16[2,4,6]{24,6,1}@cuda
  return (%4)
})",
                              &changed);
  CHECK(changed);
  CHECK(out == Canonical(R"(graph(%a0: f32[6,4,2]{8,2,1}@cuda) {
  %0 = aten::view.default(%a0, [2, 3, 4, 2]) -> f32[2,3,4,2]{24,8,2,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=bf16) -> bf16[2,3,4,2]{24,2,6,1}@cuda
  %2 = aten::transpose.int(%1, 1, 2) -> bf16[2,4,3,2]{24,6,2,1}@cuda
  %3 = aten::view.default(%2, [2, 4, 6]) -> bf16[2,4,6]{24,6,1}@cuda
  return (%3)
})"));
}

TEST_CASE("a t folds like the transpose it is (op_properties.h: ViewKind::kPermute)",
          "[copy_layout_into_producer]") {
  bool changed = false;
  const std::string out = Run(R"(graph(%a0: f32[3,4]{4,1}@cpu) {
  %0 = aten::neg.default(%a0) -> f32[3,4]{4,1}@cpu
  %1 = aten::t.default(%0) -> f32[4,3]{1,4}@cpu
  %2 = aten::clone.default(%1, memory_format=memory_format(0)) -> f32[4,3]{3,1}@cpu
  return (%2)
})",
                              &changed);
  CHECK(changed);
  CHECK(out == Canonical(R"(graph(%a0: f32[3,4]{4,1}@cpu) {
  %0 = aten::neg.default(%a0) -> f32[3,4]{1,3}@cpu
  %1 = aten::t.default(%0) -> f32[4,3]{3,1}@cpu
  return (%1)
})"));
}

TEST_CASE("a permute with negative dims folds the same way", "[copy_layout_into_producer]") {
  bool changed = false;
  const std::string out = Run(R"(graph(%a0: f32[2,3,4]{12,4,1}@cpu) {
  %0 = aten::neg.default(%a0) -> f32[2,3,4]{12,4,1}@cpu
  %1 = aten::permute.default(%0, [-1, 0, 1]) -> f32[4,2,3]{1,12,4}@cpu
  %2 = aten::clone.default(%1, memory_format=memory_format(0)) -> f32[4,2,3]{6,3,1}@cpu
  return (%2)
})",
                              &changed);
  CHECK(changed);
  CHECK(out == Canonical(R"(graph(%a0: f32[2,3,4]{12,4,1}@cpu) {
  %0 = aten::neg.default(%a0) -> f32[2,3,4]{3,1,6}@cpu
  %1 = aten::permute.default(%0, [-1, 0, 1]) -> f32[4,2,3]{6,3,1}@cpu
  return (%1)
})"));
}

TEST_CASE(
    "nothing to do where another reader, the graph, a broadcast or an ATen op sees the strides",
    "[copy_layout_into_producer]") {
  const std::vector<std::string> bodies = {
      // The producer has a second reader (it would see the new strides... as it should, but it
      // was traced against the old ones: left alone).
      R"(  %2 = aten::mul.Scalar(%1, 0.5) -> f32[2,3,4,2]{24,2,6,1}@cuda
  %3 = aten::clone.default(%2, memory_format=memory_format(0)) -> f32[2,3,4,2]{24,8,2,1}@cuda
  %4 = aten::add.Tensor(%2, %3) -> f32[2,3,4,2]{24,8,2,1}@cuda
  return (%4)
})",
      // The producer is a graph output: its strides were promised to the caller.
      R"(  %2 = aten::mul.Scalar(%1, 0.5) -> f32[2,3,4,2]{24,2,6,1}@cuda
  %3 = aten::clone.default(%2, memory_format=memory_format(0)) -> f32[2,3,4,2]{24,8,2,1}@cuda
  return (%3, %2)
})",
      // The expand broadcasts: the clone writes more elements than the producer has.
      R"(  %2 = aten::mul.Scalar(%1, 0.5) -> f32[2,3,4,2]{24,2,6,1}@cuda
  %3 = aten::unsqueeze.default(%2, 0) -> f32[1,2,3,4,2]{48,24,2,6,1}@cuda
  %4 = aten::expand.default(%3, [2, 2, 3, 4, 2]) -> f32[2,2,3,4,2]{0,24,2,6,1}@cuda
  %5 = aten::clone.default(%4, memory_format=memory_format(0)) -> f32[2,2,3,4,2]{48,24,8,2,1}@cuda
  return (%5)
})",
      // The producer is an ATen op (bmm): its strides are ATen's.
      R"(  %2 = aten::bmm.default(%a1, %a1) -> f32[6,2,2]{4,2,1}@cuda
  %3 = aten::transpose.int(%2, 1, 2) -> f32[6,2,2]{4,1,2}@cuda
  %4 = aten::clone.default(%3, memory_format=memory_format(0)) -> f32[6,2,2]{4,2,1}@cuda
  return (%4, %1)
})",
      // The transpose has a second reader, which sees the producer's strides through it.
      R"(  %2 = aten::mul.Scalar(%1, 0.5) -> f32[2,3,4,2]{24,2,6,1}@cuda
  %3 = aten::transpose.int(%2, 1, 2) -> f32[2,4,3,2]{24,6,2,1}@cuda
  %4 = aten::clone.default(%3, memory_format=memory_format(0)) -> f32[2,4,3,2]{24,6,2,1}@cuda
  %5 = aten::sum.dim_IntList(%3, [1]) -> f32[2,3,2]{6,2,1}@cuda
  return (%4, %5)
})",
      // The clone copies into the layout the producer already has.
      R"(  %2 = aten::mul.Scalar(%1, 0.5) -> f32[2,3,4,2]{24,2,6,1}@cuda
  %3 = aten::clone.default(%2) -> f32[2,3,4,2]{24,2,6,1}@cuda
  return (%3)
})",
  };
  for (const std::string& body : bodies) {
    bool changed = true;
    const std::string text = std::string(kInputs) + kHead + body;
    const std::string out = Run(text, &changed);
    INFO(body);
    CHECK_FALSE(changed);
    CHECK(out == Canonical(text));
  }
}

// T5's attention backward: dk (a transposed bmm result) cast to bf16, transposed from heads,
// merged to [B, S, H*D] and made contiguous for its projection's matmuls. The cast writes the
// layout in which the transpose is row-major; the view of it is the clone's layout.
TEST_CASE("a clone of a reshaped transpose folds into the producer", "[copy_layout_into_producer]") {
  const std::string in = R"(graph(%a0: f32[2,4,3,2]{24,6,1,3}@cuda, %a1: bf16[8,4]{4,1}@cuda) {
  %0 = aten::_to_copy.default(%a0, dtype=bf16) -> bf16[2,4,3,2]{24,6,1,3}@cuda
  %1 = aten::transpose.int(%0, 1, 2) -> bf16[2,3,4,2]{24,1,6,3}@cuda
  %2 = aten::view.default(%1, [2, 3, 8]) -> bf16[2,3,8]{24,1,3}@cuda
  %3 = aten::clone.default(%2, memory_format=memory_format(0)) -> bf16[2,3,8]{24,8,1}@cuda
  %4 = aten::_unsafe_view.default(%3, [6, 8]) -> bf16[6,8]{8,1}@cuda
  %5 = aten::mm.default(%4, %a1) -> bf16[6,4]{4,1}@cuda
  return (%5)
})";
  bool changed = false;
  const std::string out = Run(in, &changed);
  CHECK(changed);
  CHECK(out == Canonical(R"(graph(%a0: f32[2,4,3,2]{24,6,1,3}@cuda, %a1: bf16[8,4]{4,1}@cuda) {
  %0 = aten::_to_copy.default(%a0, dtype=bf16) -> bf16[2,4,3,2]{24,2,8,1}@cuda
  %1 = aten::transpose.int(%0, 1, 2) -> bf16[2,3,4,2]{24,8,2,1}@cuda
  %2 = aten::view.default(%1, [2, 3, 8]) -> bf16[2,3,8]{24,8,1}@cuda
  %3 = aten::_unsafe_view.default(%2, [6, 8]) -> bf16[6,8]{8,1}@cuda
  %4 = aten::mm.default(%3, %a1) -> bf16[6,4]{4,1}@cuda
  return (%4)
})"));
  // TCCD_DISABLE_PASSES=copy-layout-through-reshapes: the clone stays.
  CHECK(Run(in, &changed, /*through_reshapes=*/false) == Canonical(in));
  CHECK(!changed);
}

}  // namespace
}  // namespace tccd::codegen

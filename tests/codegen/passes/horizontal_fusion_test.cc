// Horizontal fusion: independent same-shape groups share a kernel; dependent ones do not.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/passes/horizontal_fusion.h"
#include "codegen/passes/kernel_builder.h"
#include "codegen/passes/partition_verifier.h"

namespace tccd::codegen {
namespace {

std::string Horizontal(const char* text, FusionOptions options = {}) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  absl::StatusOr<Partition> p = PartitionForFusion(*g, options);
  REQUIRE(p.ok());
  CHECK(VerifyPartition(*g, *p) == "");
  REQUIRE(FuseHorizontally(*g, options, *p).ok());
  CHECK(VerifyPartition(*g, *p) == "");
  for (const FusionGroup& group : p->groups) {
    absl::StatusOr<PointwiseKernel> k = BuildPointwiseKernel(*g, group, "k");
    INFO(k.status().ToString());
    CHECK(k.ok());
  }
  return PrintPartition(*g, *p);
}

TEST_CASE("batch norm stat clones and weight casts of one shape share a kernel", "[horizontal]") {
  CHECK(
      Horizontal(
          R"(graph(%a0: f32[16]{1}@cuda, %a1: f32[16]{1}@cuda, %a2: f32[16]{1}@cuda, %a3: f32[16]{1}@cuda, %a4: f32[8,8]{8,1}@cuda) {
  %0 = aten::clone.default(%a0) -> f32[16]{1}@cuda
  %1 = aten::clone.default(%a1) -> f32[16]{1}@cuda
  %2 = aten::mm.default(%a4, %a4) -> f32[8,8]{8,1}@cuda
  %3 = aten::clone.default(%a2) -> f32[16]{1}@cuda
  %4 = aten::_to_copy.default(%a3, dtype=bf16) -> bf16[16]{1}@cuda
  return (%0, %1, %2, %3, %4)
})") == "fused %0 %1 %3 %4 -> %0 %1 %3 %4\nextern %2 aten::mm.default\n");
}

// Two layers' bf16 weight casts (1.5 MiB each) in an inference graph: merged, the second layer's
// cast would be made, and held, where the first layer's is.
TEST_CASE("large values another group would make early keep their own kernel", "[horizontal]") {
  constexpr char kLayers[] =
      R"(graph(%a0: f32[1024,768]{768,1}@cuda, %a1: f32[1024,768]{768,1}@cuda, %a2: bf16[8,1024]{1024,1}@cuda) {
  %0 = aten::_to_copy.default(%a0, dtype=bf16) -> bf16[1024,768]{768,1}@cuda
  %1 = aten::mm.default(%a2, %0) -> bf16[8,768]{768,1}@cuda
  %2 = aten::_to_copy.default(%a1, dtype=bf16) -> bf16[1024,768]{768,1}@cuda
  %3 = aten::mm.default(%a2, %2) -> bf16[8,768]{768,1}@cuda
  return (%1, %3%s)
})";
  auto graph = [&](const std::string& extra) {
    std::string text = kLayers;
    text.replace(text.find("%s"), 2, extra);
    return text;
  };
  // Two nodes apart here, a layer apart in a model: the window of near groups off.
  FusionOptions far;
  far.near_merge_nodes = 0;
  CHECK(Horizontal(graph("").c_str(), far) ==
        "fused %0 -> %0\nextern %1 aten::mm.default\nfused %2 -> %2\nextern %3 aten::mm.default\n");
  // Returned (a training forward saves its casts for the backward): held to the end anyway.
  CHECK(Horizontal(graph(", %0, %2").c_str(), far) ==
        "fused %0 %2 -> %0 %2\nextern %1 aten::mm.default\nextern %3 aten::mm.default\n");
}

// T5's attention backward: the bf16 casts of dq, dk and dv (512 KiB each), adjacent nodes, each
// read by its projection's matmuls: one kernel, made at most a few nodes early
// (FusionOptions::near_merge_nodes). Casts further apart than the window keep their kernels.
TEST_CASE("large groups a few nodes apart merge, groups further apart do not", "[horizontal]") {
  std::string text =
      "graph(%a0: f32[512,512]{512,1}@cuda, %a1: f32[512,512]{512,1}@cuda, "
      "%a2: f32[512,512]{512,1}@cuda, %a3: f32[4,4]{4,1}@cuda) {\n"
      "  %0 = aten::_to_copy.default(%a0, dtype=bf16) -> bf16[512,512]{512,1}@cuda\n"
      "  %1 = aten::_to_copy.default(%a1, dtype=bf16) -> bf16[512,512]{512,1}@cuda\n";
  // 16 nodes of other work (a chain of 4x4 matmuls) before the third cast.
  for (int i = 2; i < 18; ++i)
    text += "  %" + std::to_string(i) + " = aten::mm.default(" +
            (i == 2 ? std::string("%a3") : "%" + std::to_string(i - 1)) +
            ", %a3) -> f32[4,4]{4,1}@cuda\n";
  text +=
      "  %18 = aten::_to_copy.default(%a2, dtype=bf16) -> bf16[512,512]{512,1}@cuda\n"
      "  %19 = aten::mm.default(%0, %1) -> bf16[512,512]{512,1}@cuda\n"
      "  %20 = aten::mm.default(%19, %18) -> bf16[512,512]{512,1}@cuda\n"
      "  return (%20, %17)\n}";
  const std::string merged = Horizontal(text.c_str());
  CHECK(merged.find("fused %0 %1 -> %0 %1\n") != std::string::npos);
  CHECK(merged.find("fused %18 -> %18\n") != std::string::npos);
  FusionOptions off;
  off.near_merge_nodes = 0;
  const std::string apart = Horizontal(text.c_str(), off);
  CHECK(apart.find("fused %0 -> %0\n") != std::string::npos);
  CHECK(apart.find("fused %1 -> %1\n") != std::string::npos);
}

// A training forward under autocast saves each weight's bf16 cast as the `t` view its matmul
// reads (T5's 64 linear weights): the cast's storage is held to the end through that view, so
// the casts merge as if returned themselves. With the option off (TCCD_DISABLE_PASSES=
// horizontal-returned-views) only directly returned values count, and each cast keeps its kernel.
TEST_CASE("values returned through views count as held to the end", "[horizontal]") {
  constexpr char kLayers[] =
      R"(graph(%a0: f32[1024,768]{768,1}@cuda, %a1: f32[1024,768]{768,1}@cuda, %a2: bf16[8,768]{768,1}@cuda) {
  %0 = aten::_to_copy.default(%a0, dtype=bf16) -> bf16[1024,768]{768,1}@cuda
  %1 = aten::t.default(%0) -> bf16[768,1024]{1,768}@cuda
  %2 = aten::mm.default(%a2, %1) -> bf16[8,1024]{1024,1}@cuda
  %3 = aten::_to_copy.default(%a1, dtype=bf16) -> bf16[1024,768]{768,1}@cuda
  %4 = aten::t.default(%3) -> bf16[768,1024]{1,768}@cuda
  %5 = aten::mm.default(%a2, %4) -> bf16[8,1024]{1024,1}@cuda
  %6 = aten::t.default(%4) -> bf16[1024,768]{768,1}@cuda
  return (%2, %5, %1, %6)
})";
  FusionOptions far;
  far.near_merge_nodes = 0;
  CHECK(Horizontal(kLayers, far) ==
        "fused %0 %3 -> %0 %3\nextern %1 aten::t.default\nextern %2 aten::mm.default\n"
        "extern %4 aten::t.default\nextern %5 aten::mm.default\nextern %6 aten::t.default\n");
  FusionOptions off;
  off.returned_views_held = false;
  off.near_merge_nodes = 0;  // three nodes apart here, a layer apart in a model
  CHECK(Horizontal(kLayers, off) ==
        "fused %0 -> %0\nextern %1 aten::t.default\nextern %2 aten::mm.default\nfused %3 -> %3\n"
        "extern %4 aten::t.default\nextern %5 aten::mm.default\nextern %6 aten::t.default\n");
}

// SwiGLU's backward (Llama's MLP, [tokens, 2816] at the zoo's size; 1 MiB values here): after
// the down projection's input-gradient matmul (%2), the up gradient grad * silu(gate) and the
// gate gradient silu_backward(grad * up, gate), each read through views by its own matmuls. Both
// read grad and gate: one kernel (as Inductor's), although their values exceed kMaxHoistedBytes.
TEST_CASE("groups reading the same full-size tensors merge whatever their values' size",
          "[horizontal]") {
  CHECK(
      Horizontal(
          R"(graph(%a0: bf16[512,1024]{1024,1}@cuda, %a1: bf16[512,1024]{1024,1}@cuda, %a2: bf16[512,256]{256,1}@cuda, %a3: bf16[256,1024]{1024,1}@cuda) {
  %0 = aten::mm.default(%a2, %a3) -> bf16[512,1024]{1024,1}@cuda
  %1 = aten::silu.default(%a0) -> bf16[512,1024]{1024,1}@cuda
  %2 = aten::mul.Tensor(%0, %1) -> bf16[512,1024]{1024,1}@cuda
  %3 = aten::mul.Tensor(%0, %a1) -> bf16[512,1024]{1024,1}@cuda
  %4 = aten::t.default(%2) -> bf16[1024,512]{1,1024}@cuda
  %5 = aten::mm.default(%4, %a2) -> bf16[1024,256]{256,1}@cuda
  %6 = aten::silu_backward.default(%3, %a0) -> bf16[512,1024]{1024,1}@cuda
  %7 = aten::t.default(%6) -> bf16[1024,512]{1,1024}@cuda
  %8 = aten::mm.default(%7, %a2) -> bf16[1024,256]{256,1}@cuda
  return (%5, %8)
})") ==
      "extern %0 aten::mm.default\nfused %1 %2 %3 %6 -> %2 %6\nextern %4 aten::t.default\n"
      "extern %5 aten::mm.default\nextern %7 aten::t.default\nextern %8 aten::mm.default\n");
}

TEST_CASE("a group that depends on another through an extern step is not merged", "[horizontal]") {
  CHECK(Horizontal(R"(graph(%a0: f32[4,4]{4,1}@cuda) {
  %0 = aten::relu.default(%a0) -> f32[4,4]{4,1}@cuda
  %1 = aten::mm.default(%0, %0) -> f32[4,4]{4,1}@cuda
  %2 = aten::exp.default(%1) -> f32[4,4]{4,1}@cuda
  %3 = aten::neg.default(%a0) -> f32[4,4]{4,1}@cuda
  return (%2, %3)
})") == "fused %0 %3 -> %0 %3\nextern %1 aten::mm.default\nfused %2 -> %2\n");
}

TEST_CASE("the operand budget bounds horizontal merges", "[horizontal]") {
  CHECK(Horizontal(R"(graph(%a0: f32[4]{1}@cpu, %a1: f32[4]{1}@cpu, %a2: f32[4]{1}@cpu) {
  %0 = aten::relu.default(%a0) -> f32[4]{1}@cpu
  %1 = aten::relu.default(%a1) -> f32[4]{1}@cpu
  %2 = aten::relu.default(%a2) -> f32[4]{1}@cpu
  return (%0, %1, %2)
})",
                   FusionOptions{.max_operands = 4}) == "fused %0 %1 -> %0 %1\nfused %2 -> %2\n");
}

TEST_CASE("a group depending on another through a third group's other member is not merged",
          "[horizontal]") {
  // Found by tests/fuzz/request_fuzzer: {%5} depends on {%2 %3 %6} only through %3 (via %4),
  // and that group depends on {%0} only through %2 (via %1): node paths from %5 never reach
  // {%0}, so the two were merged into a cycle. Group dependencies are closed transitively now.
  CHECK(Horizontal(R"(graph(%a0: f32[4,4]{4,1}@cpu, %a1: f32[4,4]{4,1}@cpu) {
  %0 = aten::relu.default(%a0) -> f32[4,4]{4,1}@cpu
  %1 = aten::mm.default(%0, %0) -> f32[4,4]{4,1}@cpu
  %2 = aten::exp.default(%1) -> f32[4,4]{4,1}@cpu
  %3 = aten::neg.default(%a1) -> f32[4,4]{4,1}@cpu
  %4 = aten::mm.default(%3, %3) -> f32[4,4]{4,1}@cpu
  %5 = aten::exp.default(%4) -> f32[4,4]{4,1}@cpu
  %6 = aten::add.Tensor(%2, %3) -> f32[4,4]{4,1}@cpu
  return (%5, %6)
})") == "fused %0 -> %0\nextern %1 aten::mm.default\nfused %2 %3 %6 -> %3 %6\nextern %4 "
        "aten::mm.default\nfused %5 -> %5\n");
}

}  // namespace
}  // namespace tccd::codegen

namespace tccd::codegen {
namespace {

// Llama's mask code after slice-of-cat: the packed-sequence check (a cat read by its sub, an
// index kernel) beside the loss's label mask of the same [B, S] shape.
constexpr const char* kSmallIndexGroups = R"(graph(%a0: i64[2,1]{1,1}@cuda, %a1: i64[2,8]{8,1}@cuda, %a2: i64[2,8]{8,1}@cuda) {
  %0 = aten::slice.Tensor(%a1, 1, 0, 7) -> i64[2,7]{8,1}@cuda
  %1 = aten::cat.default([%a0, %0], 1) -> i64[2,8]{8,1}@cuda
  %2 = aten::sub.Tensor(%a1, %1) -> i64[2,8]{8,1}@cuda
  %3 = aten::ne.Scalar(%2, 1) -> b8[2,8]{8,1}@cuda
  %4 = aten::ne.Scalar(%a2, -100) -> b8[2,8]{8,1}@cuda
  return (%3, %4)
})";

TEST_CASE("a small index group shares a kernel with an independent group of its shape",
          "[horizontal]") {
  CHECK(Horizontal(kSmallIndexGroups) ==
        "extern %0 aten::slice.Tensor\nfused %1 %2 %3 %4 -> %3 %4\n");
}

TEST_CASE("index groups above the size limit, or with the limit 0, keep their kernels",
          "[horizontal]") {
  FusionOptions options;
  options.max_index_merge_numel = 15;  // the groups have 16 points
  CHECK(Horizontal(kSmallIndexGroups, options) ==
        "extern %0 aten::slice.Tensor\nfused %1 %2 %3 -> %3\nfused %4 -> %4\n");
  options.max_index_merge_numel = 0;
  CHECK(Horizontal(kSmallIndexGroups, options) ==
        "extern %0 aten::slice.Tensor\nfused %1 %2 %3 -> %3\nfused %4 -> %4\n");
}

TEST_CASE("an index group does not merge with a group loading what it gathers", "[horizontal]") {
  // The cat gathers %a0; the add loads it (broadcast): one kernel cannot do both. Two index
  // groups gathering the same tensor do merge.
  CHECK(Horizontal(R"(graph(%a0: i64[2,1]{1,1}@cuda, %a1: i64[2,7]{7,1}@cuda, %a2: i64[2,8]{8,1}@cuda) {
  %0 = aten::cat.default([%a0, %a1], 1) -> i64[2,8]{8,1}@cuda
  %1 = aten::ne.Scalar(%0, 1) -> b8[2,8]{8,1}@cuda
  %2 = aten::add.Tensor(%a2, %a0) -> i64[2,8]{8,1}@cuda
  %3 = aten::constant_pad_nd.default(%a1, [0, 1], 0) -> i64[2,8]{8,1}@cuda
  return (%1, %2, %3)
})") == "fused %0 %1 %3 -> %1 %3\nfused %2 -> %2\n");
}

// Gather-only groups (max pooling's values and offsets kernels) over two maps, and a plain
// group of their shape; the small-group rule off (0 points), so only the gather-only one applies.
constexpr const char* kGatherOnlyGroups =
    R"(graph(%a0: bf16[2,16,16,8]{2048,128,8,1}@cuda, %a1: bf16[2,16,16,8]{2048,128,8,1}@cuda, %a2: bf16[2,8,8,8]{512,64,8,1}@cuda) {
  %0 = tccd::max_pool2d_values.default(%a0, [3, 3], [2, 2], [1, 1], [1], false, true) -> bf16[2,8,8,8]{512,64,8,1}@cuda
  %1 = tccd::max_pool2d_offsets.default(%a1, [3, 3], [2, 2], [1, 1], [1], false, true) -> i64[2,8,8,8]{512,64,8,1}@cuda
  %2 = tccd::max_pool2d_offsets.default(%a0, [3, 3], [2, 2], [1, 1], [1], false, true) -> i64[2,8,8,8]{512,64,8,1}@cuda
  %3 = aten::relu.default(%a2) -> bf16[2,8,8,8]{512,64,8,1}@cuda
  %4 = aten::mul.Tensor(%0, %0) -> bf16[2,8,8,8]{512,64,8,1}@cuda
  return (%1, %2, %3, %4)
})";

TEST_CASE("gather-only groups merge when they gather a common tensor, whatever their size",
          "[horizontal]") {
  FusionOptions options;
  options.max_index_merge_numel = 0;
  // %0 with its epilogue %4 (loads nothing: %0 is its own value) and %2 both gather %a0: one
  // kernel. %1 gathers %a1 only: its own. The relu loads %a2: an index group of 1024 points is
  // above the limit, so it keeps its kernel.
  CHECK(Horizontal(kGatherOnlyGroups, options) ==
        "fused %0 %2 %4 -> %2 %4\nfused %1 -> %1\nfused %3 -> %3\n");
  // With the small-group limit above 1024 points every group may merge but %1 and %0's: each
  // gathers a tensor the other does not (gather-only groups share a kernel only through a common
  // map), and the relu joins the first.
  options.max_index_merge_numel = 1024;
  CHECK(Horizontal(kGatherOnlyGroups, options) ==
        "fused %0 %2 %3 %4 -> %2 %3 %4\nfused %1 -> %1\n");
}

// The rotary embeddings of q and k (rotate_half as slice_backward pairs: index kernels, each
// gathering its own projection), both read by attention through views; 64 points each, above
// the small-index-group limit set to 16 here.
constexpr char kRotaryPair[] =
    R"(graph(%a0: f32[2,2,4,4]{32,16,4,1}@cuda, %a1: f32[2,2,4,4]{32,16,4,1}@cuda, %a2: f32[4,4]{4,1}@cuda) {
  %0 = aten::slice.Tensor(%a0, 3, 2, 4) -> f32[2,2,4,2]{32,16,4,1}@cuda
  %1 = aten::slice_backward.default(%0, [2, 2, 4, 4], 3, 0, 2, 1) -> f32[2,2,4,4]{32,16,4,1}@cuda
  %2 = aten::mul.Tensor(%a0, %a2) -> f32[2,2,4,4]{32,16,4,1}@cuda
  %3 = aten::add.Tensor(%2, %1) -> f32[2,2,4,4]{32,16,4,1}@cuda
  %4 = aten::slice.Tensor(%a1, 3, 2, 4) -> f32[2,2,4,2]{32,16,4,1}@cuda
  %5 = aten::slice_backward.default(%4, [2, 2, 4, 4], 3, 0, 2, 1) -> f32[2,2,4,4]{32,16,4,1}@cuda
  %6 = aten::mul.Tensor(%a1, %a2) -> f32[2,2,4,4]{32,16,4,1}@cuda
  %7 = aten::add.Tensor(%6, %5) -> f32[2,2,4,4]{32,16,4,1}@cuda
  %8 = aten::view.default(%3, [4, 4, 4]) -> f32[4,4,4]{16,4,1}@cuda
  %9 = aten::view.default(%7, [4, 4, 4]) -> f32[4,4,4]{16,4,1}@cuda
  %10 = aten::bmm.default(%8, %9) -> f32[4,4,4]{16,4,1}@cuda
  return (%10)
})";

TEST_CASE("two large index groups that one node reads share a kernel", "[horizontal]") {
  FusionOptions options;
  options.max_index_merge_numel = 16;
  CHECK(Horizontal(kRotaryPair, options) ==
        "extern %0 aten::slice.Tensor\nextern %4 aten::slice.Tensor\nfused %1 %2 %3 %5 %6 %7 -> %3 "
        "%7\nextern %8 aten::view.default\nextern %9 aten::view.default\nextern %10 "
        "aten::bmm.default\n");
  // TCCD_DISABLE_PASSES=index-reader-siblings: a kernel each.
  options.merge_index_reader_siblings = false;
  CHECK(Horizontal(kRotaryPair, options) ==
        "extern %0 aten::slice.Tensor\nfused %1 %2 %3 -> %3\nextern %4 aten::slice.Tensor\nfused %5 %6 "
        "%7 -> %7\nextern %8 aten::view.default\nextern %9 aten::view.default\nextern %10 "
        "aten::bmm.default\n");
}

}  // namespace
}  // namespace tccd::codegen

// ChannelsLastLayout: IR text in (strides as traced), IR text out (strides chosen).
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/channels_last_layout.h"

namespace tccd::codegen {
namespace {

std::string Run(const std::string& text, bool* changed, std::vector<int> free_outputs = {},
                bool permutes_follow = true) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  ChannelsLastLayout pass(std::move(free_outputs), permutes_follow);
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

// Two convolutions (3x3, then 1x1) with a residual add, as in a ResNet block; the mean (an
// average pool) reads the result.
constexpr char kInputs[] =
    "graph(%a0: f32[2,4,6,6]{144,36,6,1}@cuda, %a1: f32[4,4,3,3]{36,9,3,1}@cuda, %a2: "
    "f32[4,4,1,1]{4,1,1,1}@cuda) {\n";
constexpr char kBlock[] =
    R"(  %0 = aten::_to_copy.default(%a1, dtype=bf16) -> bf16[4,4,3,3]{36,9,3,1}@cuda
  %1 = aten::_to_copy.default(%a0, dtype=bf16) -> bf16[2,4,6,6]{144,36,6,1}@cuda
  %2 = aten::convolution.default(%1, %0, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) -> bf16[2,4,6,6]{144,36,6,1}@cuda
  %3 = aten::relu.default(%2) -> bf16[2,4,6,6]{144,36,6,1}@cuda
  %4 = aten::_to_copy.default(%a2, dtype=bf16) -> bf16[4,4,1,1]{4,1,1,1}@cuda
  %5 = aten::convolution.default(%3, %4, None, [1, 1], [0, 0], [1, 1], false, [0, 0], 1) -> bf16[2,4,6,6]{144,36,6,1}@cuda
  %6 = aten::add.Tensor(%5, %3) -> bf16[2,4,6,6]{144,36,6,1}@cuda
  %7 = aten::relu.default(%6) -> bf16[2,4,6,6]{144,36,6,1}@cuda
  %8 = aten::mean.dim(%7, [-1, -2], true) -> bf16[2,4,1,1]{4,1,1,1}@cuda
)";

TEST_CASE("channels-last strides follow c10 (sizes of 1 count as 1)", "[channels_last_layout]") {
  CHECK(ChannelsLastStrides({2, 4, 6, 5}) == std::vector<int64_t>{120, 1, 20, 4});
  CHECK(ChannelsLastStrides({4, 4, 1, 1}) == std::vector<int64_t>{4, 1, 4, 4});
  CHECK(ChannelsLastStrides({0, 3, 2, 2}) == std::vector<int64_t>{12, 1, 6, 3});
}

TEST_CASE(
    "a conv block's activations and weight casts become channels-last; the mean reads them as they "
    "are",
    "[channels_last_layout]") {
  bool changed = false;
  const std::string out = Run(std::string(kInputs) + kBlock + "  return (%8)\n}", &changed);
  CHECK(changed);
  CHECK(out ==
        Canonical(std::string(kInputs) +
                  R"(  %0 = aten::_to_copy.default(%a1, dtype=bf16) -> bf16[4,4,3,3]{36,1,12,4}@cuda
  %1 = aten::_to_copy.default(%a0, dtype=bf16) -> bf16[2,4,6,6]{144,1,24,4}@cuda
  %2 = aten::convolution.default(%1, %0, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) -> bf16[2,4,6,6]{144,1,24,4}@cuda
  %3 = aten::relu.default(%2) -> bf16[2,4,6,6]{144,1,24,4}@cuda
  %4 = aten::_to_copy.default(%a2, dtype=bf16) -> bf16[4,4,1,1]{4,1,4,4}@cuda
  %5 = aten::convolution.default(%3, %4, None, [1, 1], [0, 0], [1, 1], false, [0, 0], 1) -> bf16[2,4,6,6]{144,1,24,4}@cuda
  %6 = aten::add.Tensor(%5, %3) -> bf16[2,4,6,6]{144,1,24,4}@cuda
  %7 = aten::relu.default(%6) -> bf16[2,4,6,6]{144,1,24,4}@cuda
  %8 = aten::mean.dim(%7, [-1, -2], true) -> bf16[2,4,1,1]{4,1,1,1}@cuda
  return (%8)
})"));
}

TEST_CASE(
    "graph outputs keep their strides: saved activations cost copies, so the region stays NCHW",
    "[channels_last_layout]") {
  // A training forward returns the conv output and the relu for the backward: two values would
  // need copies for two convolutions.
  const std::string text = std::string(kInputs) + kBlock + "  return (%8, %2, %3)\n}";
  bool changed = true;
  const std::string out = Run(text, &changed);
  CHECK_FALSE(changed);
  CHECK(out == Canonical(text));
}

TEST_CASE("outputs declared free take the chosen strides without copies",
          "[channels_last_layout]") {
  bool changed = false;
  const std::string out =
      Run(std::string(kInputs) + kBlock + "  return (%8, %2, %3, %0)\n}", &changed, {1, 2, 3});
  CHECK(changed);
  CHECK(out ==
        Canonical(std::string(kInputs) +
                  R"(  %0 = aten::_to_copy.default(%a1, dtype=bf16) -> bf16[4,4,3,3]{36,1,12,4}@cuda
  %1 = aten::_to_copy.default(%a0, dtype=bf16) -> bf16[2,4,6,6]{144,1,24,4}@cuda
  %2 = aten::convolution.default(%1, %0, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) -> bf16[2,4,6,6]{144,1,24,4}@cuda
  %3 = aten::relu.default(%2) -> bf16[2,4,6,6]{144,1,24,4}@cuda
  %4 = aten::_to_copy.default(%a2, dtype=bf16) -> bf16[4,4,1,1]{4,1,4,4}@cuda
  %5 = aten::convolution.default(%3, %4, None, [1, 1], [0, 0], [1, 1], false, [0, 0], 1) -> bf16[2,4,6,6]{144,1,24,4}@cuda
  %6 = aten::add.Tensor(%5, %3) -> bf16[2,4,6,6]{144,1,24,4}@cuda
  %7 = aten::relu.default(%6) -> bf16[2,4,6,6]{144,1,24,4}@cuda
  %8 = aten::mean.dim(%7, [-1, -2], true) -> bf16[2,4,1,1]{4,1,1,1}@cuda
  return (%8, %2, %3, %0)
})"));
}

TEST_CASE("a max pool follows its input's layout, indices included", "[channels_last_layout]") {
  bool changed = false;
  const std::string out =
      Run(std::string(kInputs) +
              R"(  %0 = aten::_to_copy.default(%a1, dtype=bf16) -> bf16[4,4,3,3]{36,9,3,1}@cuda
  %1 = aten::_to_copy.default(%a0, dtype=bf16) -> bf16[2,4,6,6]{144,36,6,1}@cuda
  %2 = aten::convolution.default(%1, %0, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) -> bf16[2,4,6,6]{144,36,6,1}@cuda
  %3 = aten::max_pool2d_with_indices.default(%2, [3, 3], [2, 2], [1, 1]) -> (bf16[2,4,3,3]{36,9,3,1}@cuda, i64[2,4,3,3]{36,9,3,1}@cuda)
  %4 = aten::convolution.default(%3, %0, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) -> bf16[2,4,3,3]{36,9,3,1}@cuda
  %5 = aten::relu.default(%4) -> bf16[2,4,3,3]{36,9,3,1}@cuda
  return (%5)
})",
          &changed);
  CHECK(changed);
  CHECK(out ==
        Canonical(std::string(kInputs) +
                  R"(  %0 = aten::_to_copy.default(%a1, dtype=bf16) -> bf16[4,4,3,3]{36,1,12,4}@cuda
  %1 = aten::_to_copy.default(%a0, dtype=bf16) -> bf16[2,4,6,6]{144,1,24,4}@cuda
  %2 = aten::convolution.default(%1, %0, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) -> bf16[2,4,6,6]{144,1,24,4}@cuda
  %3 = aten::max_pool2d_with_indices.default(%2, [3, 3], [2, 2], [1, 1]) -> (bf16[2,4,3,3]{36,1,12,4}@cuda, i64[2,4,3,3]{36,1,12,4}@cuda)
  %4 = aten::convolution.default(%3, %0, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) -> bf16[2,4,3,3]{36,1,12,4}@cuda
  %5 = aten::relu.default(%4) -> bf16[2,4,3,3]{36,1,12,4}@cuda
  %6 = aten::clone.default(%5, memory_format=memory_format(0)) -> bf16[2,4,3,3]{36,9,3,1}@cuda
  return (%6)
})"));
}

TEST_CASE("a view of a channels-last value reads an NCHW copy; detach follows the layout",
          "[channels_last_layout]") {
  bool changed = false;
  const std::string out =
      Run(std::string(kInputs) +
              R"(  %0 = aten::_to_copy.default(%a1, dtype=bf16) -> bf16[4,4,3,3]{36,9,3,1}@cuda
  %1 = aten::_to_copy.default(%a0, dtype=bf16) -> bf16[2,4,6,6]{144,36,6,1}@cuda
  %2 = aten::convolution.default(%1, %0, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) -> bf16[2,4,6,6]{144,36,6,1}@cuda
  %3 = aten::relu.default(%2) -> bf16[2,4,6,6]{144,36,6,1}@cuda
  %4 = aten::convolution.default(%3, %0, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) -> bf16[2,4,6,6]{144,36,6,1}@cuda
  %5 = aten::detach.default(%4) -> bf16[2,4,6,6]{144,36,6,1}@cuda
  %6 = aten::view.default(%4, [2, 144]) -> bf16[2,144]{144,1}@cuda
  return (%6, %5)
})",
          &changed, {1});
  CHECK(changed);
  CHECK(out ==
        Canonical(std::string(kInputs) +
                  R"(  %0 = aten::_to_copy.default(%a1, dtype=bf16) -> bf16[4,4,3,3]{36,1,12,4}@cuda
  %1 = aten::_to_copy.default(%a0, dtype=bf16) -> bf16[2,4,6,6]{144,1,24,4}@cuda
  %2 = aten::convolution.default(%1, %0, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) -> bf16[2,4,6,6]{144,1,24,4}@cuda
  %3 = aten::relu.default(%2) -> bf16[2,4,6,6]{144,1,24,4}@cuda
  %4 = aten::convolution.default(%3, %0, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) -> bf16[2,4,6,6]{144,1,24,4}@cuda
  %5 = aten::clone.default(%4, memory_format=memory_format(0)) -> bf16[2,4,6,6]{144,36,6,1}@cuda
  %6 = aten::detach.default(%4) -> bf16[2,4,6,6]{144,1,24,4}@cuda
  %7 = aten::view.default(%5, [2, 144]) -> bf16[2,144]{144,1}@cuda
  return (%7, %6)
})"));
}

TEST_CASE(
    "ATen's layout of a backward: saved inputs in channels-last make the gradients channels-last",
    "[channels_last_layout]") {
  // The backward of a conv + relu, its saved activations channels-last (as the forward's plan
  // chose them): convolution_backward returns channels-last gradients whatever is chosen.
  bool changed = false;
  const std::string out = Run(
      R"(graph(%a0: bf16[2,4,6,6]{144,1,24,4}@cuda, %a1: bf16[4,4,3,3]{36,1,12,4}@cuda, %a2: bf16[2,4,6,6]{144,1,24,4}@cuda, %a3: bf16[2,4,6,6]{144,36,6,1}@cuda) {
  %0 = aten::threshold_backward.default(%a3, %a2, 0) -> bf16[2,4,6,6]{144,36,6,1}@cuda
  %1 = aten::convolution_backward.default(%0, %a0, %a1, [0], [1, 1], [1, 1], [1, 1], false, [0, 0], 1, [true, true, false]) -> (bf16[2,4,6,6]{144,36,6,1}@cuda, bf16[4,4,3,3]{36,9,3,1}@cuda, bf16[0]{1}@cuda)
  %2 = aten::_to_copy.default(%1#1, dtype=f32) -> f32[4,4,3,3]{36,9,3,1}@cuda
  return (%1, %2)
})",
      &changed);
  CHECK(changed);
  CHECK(
      out ==
      Canonical(
          R"(graph(%a0: bf16[2,4,6,6]{144,1,24,4}@cuda, %a1: bf16[4,4,3,3]{36,1,12,4}@cuda, %a2: bf16[2,4,6,6]{144,1,24,4}@cuda, %a3: bf16[2,4,6,6]{144,36,6,1}@cuda) {
  %0 = aten::threshold_backward.default(%a3, %a2, 0) -> bf16[2,4,6,6]{144,1,24,4}@cuda
  %1 = aten::convolution_backward.default(%0, %a0, %a1, [0], [1, 1], [1, 1], [1, 1], false, [0, 0], 1, [true, true, false]) -> (bf16[2,4,6,6]{144,1,24,4}@cuda, bf16[4,4,3,3]{36,1,12,4}@cuda, bf16[0]{1}@cuda)
  %2 = aten::clone.default(%1, memory_format=memory_format(0)) -> bf16[2,4,6,6]{144,36,6,1}@cuda
  %3 = aten::_to_copy.default(%1#1, dtype=f32) -> f32[4,4,3,3]{36,1,12,4}@cuda
  %4 = aten::clone.default(%3, memory_format=memory_format(0)) -> f32[4,4,3,3]{36,9,3,1}@cuda
  return (%2, %4)
})"));
}

TEST_CASE("f32 convolutions keep eager's layout unless an input is channels-last already",
          "[channels_last_layout]") {
  const std::string f32 =
      R"(graph(%a0: f32[2,4,6,6]{144,36,6,1}@cuda, %a1: f32[4,4,3,3]{36,9,3,1}@cuda) {
  %0 = aten::relu.default(%a0) -> f32[2,4,6,6]{144,36,6,1}@cuda
  %1 = aten::convolution.default(%0, %a1, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) -> f32[2,4,6,6]{144,36,6,1}@cuda
  %2 = aten::relu.default(%1) -> f32[2,4,6,6]{144,36,6,1}@cuda
  %3 = aten::convolution.default(%2, %a1, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) -> f32[2,4,6,6]{144,36,6,1}@cuda
  %4 = aten::relu.default(%3) -> f32[2,4,6,6]{144,36,6,1}@cuda
  %5 = aten::mean.dim(%4, [-1, -2]) -> f32[2,4]{4,1}@cuda
  return (%5)
})";
  bool changed = true;
  Run(f32, &changed);
  CHECK_FALSE(changed);
  // A channels-last weight: ATen runs the convolution channels-last whatever is declared.
  bool anchored = false;
  const std::string out =
      Run(R"(graph(%a0: f32[2,4,6,6]{144,36,6,1}@cuda, %a1: f32[4,4,3,3]{36,1,12,4}@cuda) {
  %0 = aten::relu.default(%a0) -> f32[2,4,6,6]{144,36,6,1}@cuda
  %1 = aten::convolution.default(%0, %a1, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) -> f32[2,4,6,6]{144,36,6,1}@cuda
  %2 = aten::relu.default(%1) -> f32[2,4,6,6]{144,36,6,1}@cuda
  %3 = aten::mean.dim(%2, [-1, -2]) -> f32[2,4]{4,1}@cuda
  return (%3)
})",
          &anchored);
  CHECK(anchored);
  CHECK(out ==
        Canonical(R"(graph(%a0: f32[2,4,6,6]{144,36,6,1}@cuda, %a1: f32[4,4,3,3]{36,1,12,4}@cuda) {
  %0 = aten::relu.default(%a0) -> f32[2,4,6,6]{144,1,24,4}@cuda
  %1 = aten::convolution.default(%0, %a1, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) -> f32[2,4,6,6]{144,1,24,4}@cuda
  %2 = aten::relu.default(%1) -> f32[2,4,6,6]{144,1,24,4}@cuda
  %3 = aten::mean.dim(%2, [-1, -2]) -> f32[2,4]{4,1}@cuda
  return (%3)
})"));
}

// ConvNeXt's stem: a 4x4 stride-4 convolution, then LayerNorm2d (permute to NHWC, the norm over
// the channels in f32, permute back).
constexpr char kStemInputs[] =
    "graph(%a0: f32[2,3,8,8]{192,64,8,1}@cuda, %a1: f32[4,3,4,4]{48,16,4,1}@cuda) {\n";
constexpr char kStemCasts[] =
    R"(  %0 = aten::_to_copy.default(%a1, dtype=bf16) -> bf16[4,3,4,4]{48,16,4,1}@cuda
  %1 = aten::_to_copy.default(%a0, dtype=bf16) -> bf16[2,3,8,8]{192,64,8,1}@cuda
  %2 = aten::convolution.default(%1, %0, None, [4, 4], [0, 0], [1, 1], false, [0, 0], 1) -> bf16[2,4,2,2]{16,4,2,1}@cuda
  %3 = aten::permute.default(%2, [0, 2, 3, 1]) -> bf16[2,2,2,4]{16,2,1,4}@cuda
)";
constexpr char kStemNorm[] =
    R"(  %4 = aten::_to_copy.default(%3, dtype=f32) -> f32[2,2,2,4]{16,8,4,1}@cuda
  %5 = aten::native_layer_norm.default(%4, [4], None, None, 1e-06) -> (f32[2,2,2,4]{16,8,4,1}@cuda, f32[2,2,2,1]{4,2,1,1}@cuda, f32[2,2,2,1]{4,2,1,1}@cuda)
  %6 = aten::_to_copy.default(%5, dtype=bf16) -> bf16[2,2,2,4]{16,8,4,1}@cuda
  %7 = aten::permute.default(%6, [0, 3, 1, 2]) -> bf16[2,4,2,2]{16,1,8,4}@cuda
  return (%7)
})";

TEST_CASE(
    "a permute only kernels read follows the layout: the stem's convolution goes channels-last "
    "and its norm reads NHWC rows",
    "[channels_last_layout]") {
  bool changed = false;
  const std::string out =
      Run(std::string(kStemInputs) + kStemCasts + kStemNorm, &changed);
  CHECK(changed);
  CHECK(out ==
        Canonical(std::string(kStemInputs) +
                  R"(  %0 = aten::_to_copy.default(%a1, dtype=bf16) -> bf16[4,3,4,4]{48,1,12,3}@cuda
  %1 = aten::_to_copy.default(%a0, dtype=bf16) -> bf16[2,3,8,8]{192,1,24,3}@cuda
  %2 = aten::convolution.default(%1, %0, None, [4, 4], [0, 0], [1, 1], false, [0, 0], 1) -> bf16[2,4,2,2]{16,1,8,4}@cuda
  %3 = aten::permute.default(%2, [0, 2, 3, 1]) -> bf16[2,2,2,4]{16,8,4,1}@cuda
)" + kStemNorm));
}

TEST_CASE(
    "permutes keep NCHW with channels-last-permutes off, or where a view or the graph reads them",
    "[channels_last_layout]") {
  const std::string stem = std::string(kStemInputs) + kStemCasts + kStemNorm;
  bool changed = true;
  CHECK(Run(stem, &changed, {}, /*permutes_follow=*/false) == Canonical(stem));
  CHECK_FALSE(changed);
  // A reshape of the permute (its element order is not its strides'), and the permute returned.
  const std::string viewed = std::string(kStemInputs) + kStemCasts +
                             R"(  %4 = aten::view.default(%3, [8, 4]) -> bf16[8,4]{4,1}@cuda
  return (%4)
})";
  changed = true;
  CHECK(Run(viewed, &changed) == Canonical(viewed));
  CHECK_FALSE(changed);
  const std::string returned = std::string(kStemInputs) + kStemCasts + "  return (%3)\n}";
  changed = true;
  CHECK(Run(returned, &changed) == Canonical(returned));
  CHECK_FALSE(changed);
}

TEST_CASE("nothing to do: no convolution, a CPU convolution, a grouped one",
          "[channels_last_layout]") {
  bool changed = true;
  Run(std::string(kInputs) + R"(  %0 = aten::relu.default(%a0) -> f32[2,4,6,6]{144,36,6,1}@cuda
  return (%0)
})",
      &changed);
  CHECK_FALSE(changed);
  changed = true;
  Run(R"(graph(%a0: f32[2,4,6,6]{144,36,6,1}@cpu, %a1: f32[4,4,3,3]{36,9,3,1}@cpu) {
  %0 = aten::relu.default(%a0) -> f32[2,4,6,6]{144,36,6,1}@cpu
  %1 = aten::convolution.default(%0, %a1, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) -> f32[2,4,6,6]{144,36,6,1}@cpu
  %2 = aten::relu.default(%1) -> f32[2,4,6,6]{144,36,6,1}@cpu
  %3 = aten::convolution.default(%2, %a1, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) -> f32[2,4,6,6]{144,36,6,1}@cpu
  %4 = aten::relu.default(%3) -> f32[2,4,6,6]{144,36,6,1}@cpu
  return (%4)
})",
      &changed);
  CHECK_FALSE(changed);
  changed = true;
  Run(R"(graph(%a0: f32[2,4,6,6]{144,36,6,1}@cuda, %a1: f32[4,1,3,3]{9,9,3,1}@cuda) {
  %0 = aten::relu.default(%a0) -> f32[2,4,6,6]{144,36,6,1}@cuda
  %1 = aten::convolution.default(%0, %a1, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 4) -> f32[2,4,6,6]{144,36,6,1}@cuda
  %2 = aten::relu.default(%1) -> f32[2,4,6,6]{144,36,6,1}@cuda
  return (%2)
})",
      &changed);
  CHECK_FALSE(changed);
}

}  // namespace
}  // namespace tccd::codegen

// The verifier accepts well-formed graphs and names the problem in malformed ones.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/verifier.h"

namespace tccd::ir {
namespace {

absl::Status VerifyText(const char* text) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  REQUIRE(g.ok());
  return VerifyGraph(*g);
}

bool MessageHas(const absl::Status& s, const char* needle) {
  return std::string(s.message()).find(needle) != std::string::npos;
}

TEST_CASE("a well-formed graph verifies", "[verifier]") {
  CHECK(VerifyText("graph(%a0: f32[2,3]{3,1}@cpu) {\n"
                   "  %0 = aten::relu.default(%a0) -> f32[2,3]{3,1}@cpu\n"
                   "  return (%0)\n}\n")
            .ok());
}

TEST_CASE("references must point backwards and in range", "[verifier]") {
  absl::Status forward = VerifyText(
      "graph(%a0: f32[2]{1}@cpu) {\n  %0 = aten::relu.default(%1) -> f32[2]{1}@cpu\n"
      "  %1 = aten::relu.default(%a0) -> f32[2]{1}@cpu\n  return (%0)\n}\n");
  CHECK(forward.code() == absl::StatusCode::kInvalidArgument);
  CHECK(MessageHas(forward, "topological"));
  CHECK(!VerifyText("graph() {\n  return (%a3)\n}\n").ok());
  CHECK(MessageHas(
      VerifyText("graph(%a0: f32[2]{1}@cpu) {\n  %0 = aten::relu.default(%a0) -> f32[2]{1}@cpu\n"
                 "  return (%0#1)\n}\n"),
      "has 1 outputs"));
}

TEST_CASE("absurd and inconsistent tensor types are rejected", "[verifier]") {
  TensorType t{.dtype = DType::kF32,
               .sizes = {int64_t{1} << 40, int64_t{1} << 20},
               .strides = {int64_t{1} << 20, 1}};
  CHECK(MessageHas(VerifyTensorType(t), "TiB"));
  TensorType overflow{.dtype = DType::kF64, .sizes = {INT64_MAX, INT64_MAX}, .strides = {1, 1}};
  CHECK(!VerifyTensorType(overflow).ok());
  TensorType mismatch{.dtype = DType::kF32, .sizes = {2, 3}, .strides = {3}};
  CHECK(MessageHas(VerifyTensorType(mismatch), "2 sizes but 1 strides"));
  TensorType negative{.dtype = DType::kF32, .sizes = {-1}, .strides = {1}};
  CHECK(MessageHas(VerifyTensorType(negative), "negative size"));
  TensorType deep{.dtype = DType::kF32,
                  .sizes = std::vector<int64_t>(17, 1),
                  .strides = std::vector<int64_t>(17, 1)};
  CHECK(MessageHas(VerifyTensorType(deep), "rank"));
  TensorType zero{.dtype = DType::kF32, .sizes = {0, int64_t{1} << 50}, .strides = {1, 1}};
  CHECK(VerifyTensorType(zero).ok());  // empty tensors are fine whatever their other sizes
}

TEST_CASE("targets must look like op overloads", "[verifier]") {
  Graph g;
  for (const char* target : {"", "relu", "aten::relu", "aten::relu.default; rm -rf", "::x.y"}) {
    g.nodes = {Node{.target = target}};
    CHECK(VerifyGraph(g).code() == absl::StatusCode::kInvalidArgument);
  }
  g.nodes = {Node{.target = "aten::relu.default"}};
  CHECK(VerifyGraph(g).ok());
}

}  // namespace
}  // namespace tccd::ir

// NllLossForwardToRows: IR text in, IR text out; and the row kernel the result fuses into.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/nll_loss_forward_to_rows.h"
#include "codegen/passes/reduction_fusion.h"

namespace tccd::codegen {
namespace {

ir::Graph Parse(const std::string& text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return *std::move(g);
}

std::string Run(ir::Graph& g, bool* changed) {
  NllLossForwardToRows pass;
  absl::StatusOr<bool> c = pass.Run(g);
  REQUIRE(c.ok());
  *changed = *c;
  return ir::PrintGraph(g);
}

// The forward of cross-entropy on bf16 logits after the client's log_softmax decomposition.
constexpr char kDecomposedLoss[] = R"(graph(%a0: bf16[16,1000]{1000,1}@cuda, %a1: i64[16]{1}@cuda) {
  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[16,1000]{1000,1}@cuda
  %1 = aten::logsumexp.default(%0, [1], true) -> f32[16,1]{1,1}@cuda
  %2 = aten::sub.Tensor(%0, %1) -> f32[16,1000]{1000,1}@cuda
  %3 = aten::nll_loss_forward.default(%2, %a1, None, 1, -100) -> (f32[]{}@cuda, f32[]{}@cuda)
  return (%3#0, %3#1, %1)
})";

TEST_CASE("a mean nll of log-probabilities read by it alone picks each row's target in a row sum",
          "[nll_loss_forward_to_rows]") {
  ir::Graph g = Parse(kDecomposedLoss);
  bool changed = false;
  const std::string out = Run(g, &changed);
  CHECK(changed);
  CHECK(out ==
        ir::PrintGraph(Parse(R"(graph(%a0: bf16[16,1000]{1000,1}@cuda, %a1: i64[16]{1}@cuda) {
  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[16,1000]{1000,1}@cuda
  %1 = aten::logsumexp.default(%0, [1], true) -> f32[16,1]{1,1}@cuda
  %2 = aten::sub.Tensor(%0, %1) -> f32[16,1000]{1000,1}@cuda
  %3 = aten::arange.default(1000, dtype=i64, layout=layout(0), device=device(cuda), pin_memory=false) -> i64[1000]{1}@cuda
  %4 = aten::unsqueeze.default(%a1, 1) -> i64[16,1]{1,1}@cuda
  %5 = aten::ne.Tensor(%3, %4) -> b8[16,1000]{1000,1}@cuda
  %6 = aten::masked_fill.Scalar(%0, %5, 0.0) -> f32[16,1000]{1000,1}@cuda
  %7 = aten::sum.dim_IntList(%6, [1], true) -> f32[16,1]{1,1}@cuda
  %8 = aten::lt.Scalar(%4, 0) -> b8[16,1]{1,1}@cuda
  %9 = aten::ge.Scalar(%4, 1000) -> b8[16,1]{1,1}@cuda
  %10 = aten::logical_or.default(%8, %9) -> b8[16,1]{1,1}@cuda
  %11 = aten::masked_fill.Scalar(%1, %10, 0.0) -> f32[16,1]{1,1}@cuda
  %12 = aten::sub.Tensor(%7, %11) -> f32[16,1]{1,1}@cuda
  %13 = aten::view.default(%12, [16]) -> f32[16]{1}@cuda
  %14 = aten::ne.Scalar(%a1, -100) -> b8[16]{1}@cuda
  %15 = aten::_to_copy.default(%14, dtype=f32) -> f32[16]{1}@cuda
  %16 = aten::sum.dim_IntList(%15, [0]) -> f32[]{}@cuda
  %17 = aten::sum.dim_IntList(%13, [0]) -> f32[]{}@cuda
  %18 = aten::neg.default(%17) -> f32[]{}@cuda
  %19 = aten::div.Tensor(%18, %16) -> f32[]{}@cuda
  return (%19, %16, %1)
})")));

  // One row kernel reads the logits once and writes logsumexp and the picked values; the
  // log-probabilities are not an output of any kernel. The pick reads the logits (%0), not
  // the log-probabilities (%2, dead): it needs no row value, so it shares the logsumexp's pass.
  absl::StatusOr<Partition> p = PartitionForFusion(g, {});
  REQUIRE(p.ok());
  REQUIRE(FuseRowReductions(g, {}, *p).ok());
  const std::string partition = PrintPartition(g, *p);
  INFO(partition);
  CHECK(partition.find("fused(rows, reduce 1) %0 %1 %2 %5 %6 %7 %8 %9 %10 %11 %12 -> %1 %12\n") !=
        std::string::npos);
}

TEST_CASE(
    "a bf16 log-probability cast to f32 for nll (CUDA autocast) is picked from the logits too",
    "[nll_loss_forward_to_rows]") {
  ir::Graph g = Parse(R"(graph(%a0: bf16[16,1000]{1000,1}@cuda, %a1: i64[16]{1}@cuda) {
  %0 = aten::logsumexp.default(%a0, [1], true) -> bf16[16,1]{1,1}@cuda
  %1 = aten::sub.Tensor(%a0, %0) -> bf16[16,1000]{1000,1}@cuda
  %2 = aten::_to_copy.default(%1, dtype=f32) -> f32[16,1000]{1000,1}@cuda
  %3 = aten::nll_loss_forward.default(%2, %a1, None, 2, -100) -> (f32[]{}@cuda, f32[]{}@cuda)
  return (%3#0, %0)
})");
  bool changed = false;
  const std::string out = Run(g, &changed);
  CHECK(changed);
  INFO(out);
  CHECK(out.find("aten::_to_copy.default(%a0, dtype=f32) -> f32[16,1000]") != std::string::npos);
  CHECK(out.find("aten::_to_copy.default(%0, dtype=f32) -> f32[16,1]") != std::string::npos);
  CHECK(out.find("aten::masked_fill.Scalar(%2") == std::string::npos);  // not the log-probabilities
}

TEST_CASE(
    "a bf16 log_softmax decomposed in f32, cast to bf16 and back to f32 for nll, is picked from "
    "the logits",
    "[nll_loss_forward_to_rows]") {
  ir::Graph g = Parse(R"(graph(%a0: bf16[16,1000]{1000,1}@cuda, %a1: i64[16]{1}@cuda) {
  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[16,1000]{1000,1}@cuda
  %1 = aten::logsumexp.default(%0, [1], true) -> f32[16,1]{1,1}@cuda
  %2 = aten::sub.Tensor(%0, %1) -> f32[16,1000]{1000,1}@cuda
  %3 = aten::_to_copy.default(%2, dtype=bf16) -> bf16[16,1000]{1000,1}@cuda
  %4 = aten::_to_copy.default(%3, dtype=f32) -> f32[16,1000]{1000,1}@cuda
  %5 = aten::nll_loss_forward.default(%4, %a1, None, 2, -100) -> (f32[]{}@cuda, f32[]{}@cuda)
  return (%5#0, %1)
})");
  bool changed = false;
  const std::string out = Run(g, &changed);
  CHECK(changed);
  INFO(out);
  CHECK(out.find("aten::masked_fill.Scalar(%0, ") != std::string::npos);  // the f32 logits
  CHECK(out.find("aten::masked_fill.Scalar(%4") == std::string::npos);  // not the log-probabilities
}

TEST_CASE(
    "nll over log-probabilities that are also saved, weighted or with an ignored class stays "
    "ATen's",
    "[nll_loss_forward_to_rows]") {
  bool changed = true;
  // The log-probabilities are an output (saved for the backward): written anyway.
  ir::Graph saved = Parse(R"(graph(%a0: f32[16,1000]{1000,1}@cuda, %a1: i64[16]{1}@cuda) {
  %0 = aten::_log_softmax.default(%a0, 1, false) -> f32[16,1000]{1000,1}@cuda
  %1 = aten::nll_loss_forward.default(%0, %a1, None, 1, -100) -> (f32[]{}@cuda, f32[]{}@cuda)
  return (%1#0, %0)
})");
  Run(saved, &changed);
  CHECK(!changed);
  // ignore_index names a class.
  ir::Graph ignored = Parse(R"(graph(%a0: f32[16,1000]{1000,1}@cuda, %a1: i64[16]{1}@cuda) {
  %0 = aten::_log_softmax.default(%a0, 1, false) -> f32[16,1000]{1000,1}@cuda
  %1 = aten::nll_loss_forward.default(%0, %a1, None, 1, 0) -> (f32[]{}@cuda, f32[]{}@cuda)
  return (%1#0)
})");
  Run(ignored, &changed);
  CHECK(!changed);
  // Class weights.
  ir::Graph weighted =
      Parse(R"(graph(%a0: f32[16,1000]{1000,1}@cuda, %a1: i64[16]{1}@cuda, %a2: f32[1000]{1}@cuda) {
  %0 = aten::_log_softmax.default(%a0, 1, false) -> f32[16,1000]{1000,1}@cuda
  %1 = aten::nll_loss_forward.default(%0, %a1, %a2, 1, -100) -> (f32[]{}@cuda, f32[]{}@cuda)
  return (%1#0)
})");
  Run(weighted, &changed);
  CHECK(!changed);
  // A graph input: nothing to fuse into.
  ir::Graph input = Parse(R"(graph(%a0: f32[16,1000]{1000,1}@cuda, %a1: i64[16]{1}@cuda) {
  %0 = aten::nll_loss_forward.default(%a0, %a1, None, 2, -100) -> (f32[]{}@cuda, f32[]{}@cuda)
  return (%0#0)
})");
  Run(input, &changed);
  CHECK(!changed);
}

TEST_CASE("a sum nll has no division", "[nll_loss_forward_to_rows]") {
  ir::Graph g = Parse(R"(graph(%a0: f32[16,1000]{1000,1}@cuda, %a1: i64[16]{1}@cuda) {
  %0 = aten::_log_softmax.default(%a0, 1, false) -> f32[16,1000]{1000,1}@cuda
  %1 = aten::nll_loss_forward.default(%0, %a1, None, 2, -100) -> (f32[]{}@cuda, f32[]{}@cuda)
  return (%1#0, %1#1)
})");
  bool changed = false;
  const std::string out = Run(g, &changed);
  CHECK(changed);
  CHECK(out.find("aten::div") == std::string::npos);
  CHECK(out.find("aten::nll_loss_forward") == std::string::npos);
}

}  // namespace
}  // namespace tccd::codegen

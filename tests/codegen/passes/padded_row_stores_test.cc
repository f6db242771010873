// ReadThroughZeroPads (IR text in, IR text out) and AbsorbZeroTailPads (IR text in, partition and
// kernel IR out): a row kernel writes the zero-padded copy of its output that an aligned matmul
// reads, and the output's other readers read the padded buffer through a strided view.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/kernel_builder.h"
#include "codegen/passes/padded_row_stores.h"
#include "codegen/passes/partition_verifier.h"
#include "codegen/passes/reduction_fusion.h"

namespace tccd::codegen {
namespace {

ir::Graph Parse(const std::string& text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return *std::move(g);
}

std::string Rewrite(const std::string& text, bool* changed) {
  ir::Graph g = Parse(text);
  ReadThroughZeroPads pass;
  absl::StatusOr<bool> c = pass.Run(g);
  INFO(c.status().ToString());
  REQUIRE(c.ok());
  *changed = *c;
  return ir::PrintGraph(g);
}

std::string Canonical(const std::string& text) { return ir::PrintGraph(Parse(text)); }

// BERT's logits gradient at the vocabulary projection (batch 2 x 64 tokens): the log_softmax
// backward (row kernel) makes g [128, 30522]; PadMatmulOperands padded it along K for both
// gradient matmuls, and the decoder's bias gradient sums it over the rows.
constexpr char kBertInputs[] =
    "graph(%a0: bf16[128,30522]{30522,1}@cuda, %a1: bf16[128,30522]{30522,1}@cuda, "
    "%a2: bf16[30528,768]{768,1}@cuda, %a3: bf16[128,768]{768,1}@cuda) {\n";
constexpr char kBertBody[] =
    R"(  %0 = aten::_log_softmax_backward_data.default(%a0, %a1, 1, bf16) -> bf16[128,30522]{30522,1}@cuda
  %1 = aten::constant_pad_nd.default(%0, [0, 6], 0) -> bf16[128,30528]{30528,1}@cuda
  %2 = aten::mm.default(%1, %a2) -> bf16[128,768]{768,1}@cuda
  %3 = aten::t.default(%1) -> bf16[30528,128]{1,30528}@cuda
  %4 = aten::mm.default(%3, %a3) -> bf16[30528,768]{768,1}@cuda
  %5 = aten::sum.dim_IntList(%0, [0], true, dtype=f32) -> f32[1,30522]{30522,1}@cuda
  return (%2, %4, %5)
})";

TEST_CASE("the padded operand's other readers read the padded buffer through a slice",
          "[padded_rows]") {
  bool changed = false;
  const std::string out = Rewrite(std::string(kBertInputs) + kBertBody, &changed);
  CHECK(changed);
  CHECK(
      out ==
      Canonical(
          std::string(kBertInputs) +
          R"(  %0 = aten::_log_softmax_backward_data.default(%a0, %a1, 1, bf16) -> bf16[128,30522]{30522,1}@cuda
  %1 = aten::constant_pad_nd.default(%0, [0, 6], 0) -> bf16[128,30528]{30528,1}@cuda
  %2 = aten::slice.Tensor(%1, 1, 0, 30522, 1) -> bf16[128,30522]{30528,1}@cuda
  %3 = aten::mm.default(%1, %a2) -> bf16[128,768]{768,1}@cuda
  %4 = aten::t.default(%1) -> bf16[30528,128]{1,30528}@cuda
  %5 = aten::mm.default(%4, %a3) -> bf16[30528,768]{768,1}@cuda
  %6 = aten::sum.dim_IntList(%2, [0], true, dtype=f32) -> f32[1,30522]{30522,1}@cuda
  return (%3, %5, %6)
})"));
}

TEST_CASE("a pad that moves next to its operand's producer keeps the graph in order",
          "[padded_rows]") {
  // The sum reads g before the pad in node order: the pad moves up, right after g's producer.
  bool changed = false;
  const std::string out = Rewrite(
      std::string(kBertInputs) +
          R"(  %0 = aten::_log_softmax_backward_data.default(%a0, %a1, 1, bf16) -> bf16[128,30522]{30522,1}@cuda
  %1 = aten::sum.dim_IntList(%0, [0], true, dtype=f32) -> f32[1,30522]{30522,1}@cuda
  %2 = aten::constant_pad_nd.default(%0, [0, 6], 0) -> bf16[128,30528]{30528,1}@cuda
  %3 = aten::mm.default(%2, %a2) -> bf16[128,768]{768,1}@cuda
  return (%1, %3)
})",
      &changed);
  CHECK(changed);
  CHECK(
      out ==
      Canonical(
          std::string(kBertInputs) +
          R"(  %0 = aten::_log_softmax_backward_data.default(%a0, %a1, 1, bf16) -> bf16[128,30522]{30522,1}@cuda
  %1 = aten::constant_pad_nd.default(%0, [0, 6], 0) -> bf16[128,30528]{30528,1}@cuda
  %2 = aten::slice.Tensor(%1, 1, 0, 30522, 1) -> bf16[128,30522]{30528,1}@cuda
  %3 = aten::sum.dim_IntList(%2, [0], true, dtype=f32) -> f32[1,30522]{30522,1}@cuda
  %4 = aten::mm.default(%1, %a2) -> bf16[128,768]{768,1}@cuda
  return (%3, %4)
})"));
}

TEST_CASE("nothing to do: a pad that is already the only reader, a returned operand, other pads",
          "[padded_rows]") {
  bool changed = true;
  // The pad is g's only reader.
  Rewrite(
      std::string(kBertInputs) +
          R"(  %0 = aten::_log_softmax_backward_data.default(%a0, %a1, 1, bf16) -> bf16[128,30522]{30522,1}@cuda
  %1 = aten::constant_pad_nd.default(%0, [0, 6], 0) -> bf16[128,30528]{30528,1}@cuda
  %2 = aten::mm.default(%1, %a2) -> bf16[128,768]{768,1}@cuda
  return (%2)
})",
      &changed);
  CHECK(!changed);
  // g leaves the graph (its readers there expect it contiguous).
  changed = true;
  Rewrite(
      std::string(kBertInputs) +
          R"(  %0 = aten::_log_softmax_backward_data.default(%a0, %a1, 1, bf16) -> bf16[128,30522]{30522,1}@cuda
  %1 = aten::constant_pad_nd.default(%0, [0, 6], 0) -> bf16[128,30528]{30528,1}@cuda
  %2 = aten::mm.default(%1, %a2) -> bf16[128,768]{768,1}@cuda
  %3 = aten::sum.dim_IntList(%0, [0], true, dtype=f32) -> f32[1,30522]{30522,1}@cuda
  return (%0, %2, %3)
})",
      &changed);
  CHECK(!changed);
  // Pads of other dims, at the front, with another value, or of a graph input.
  changed = true;
  Rewrite(
      std::string(kBertInputs) +
          R"(  %0 = aten::_log_softmax_backward_data.default(%a0, %a1, 1, bf16) -> bf16[128,30522]{30522,1}@cuda
  %1 = aten::constant_pad_nd.default(%0, [0, 0, 0, 8], 0) -> bf16[136,30522]{30522,1}@cuda
  %2 = aten::constant_pad_nd.default(%0, [6, 0], 0) -> bf16[128,30528]{30528,1}@cuda
  %3 = aten::constant_pad_nd.default(%0, [0, 6], 1) -> bf16[128,30528]{30528,1}@cuda
  %4 = aten::constant_pad_nd.default(%0, [0, 6], -0.0) -> bf16[128,30528]{30528,1}@cuda
  %5 = aten::constant_pad_nd.default(%a0, [0, 6], 0) -> bf16[128,30528]{30528,1}@cuda
  %6 = aten::sum.dim_IntList(%a0, [0], true, dtype=f32) -> f32[1,30522]{30522,1}@cuda
  return (%1, %2, %3, %4, %5, %6)
})",
      &changed);
  CHECK(!changed);
}

struct Fused {
  std::string partition;
  std::vector<std::string> kernels;
  bool absorbed = false;
};

Fused Fuse(const std::string& text) {
  ir::Graph g = Parse(text);
  absl::StatusOr<Partition> p = PartitionForFusion(g, {});
  REQUIRE(p.ok());
  REQUIRE(FuseRowReductions(g, {}, *p).ok());
  absl::StatusOr<bool> absorbed = AbsorbZeroTailPads(g, *p);
  INFO(absorbed.status().ToString());
  REQUIRE(absorbed.ok());
  CHECK(VerifyPartition(g, *p) == "");
  Fused r;
  r.absorbed = *absorbed;
  r.partition = PrintPartition(g, *p);
  for (size_t i = 0; i < p->groups.size(); ++i) {
    absl::StatusOr<PointwiseKernel> k =
        BuildPointwiseKernel(g, p->groups[i], "k" + std::to_string(i));
    INFO(k.status().ToString());
    REQUIRE(k.ok());
    r.kernels.push_back(PrintPointwiseKernel(*k));
  }
  return r;
}

TEST_CASE("the row kernel writes the padded layout; the pad step is gone", "[padded_rows]") {
  // After ReadThroughZeroPads (the first test's output).
  const Fused r = Fuse(
      std::string(kBertInputs) +
      R"(  %0 = aten::_log_softmax_backward_data.default(%a0, %a1, 1, bf16) -> bf16[128,30522]{30522,1}@cuda
  %1 = aten::constant_pad_nd.default(%0, [0, 6], 0) -> bf16[128,30528]{30528,1}@cuda
  %2 = aten::slice.Tensor(%1, 1, 0, 30522, 1) -> bf16[128,30522]{30528,1}@cuda
  %3 = aten::mm.default(%1, %a2) -> bf16[128,768]{768,1}@cuda
  %4 = aten::sum.dim_IntList(%2, [0], true, dtype=f32) -> f32[1,30522]{30522,1}@cuda
  return (%3, %4)
})");
  CHECK(r.absorbed);
  // One row kernel makes %1 (not %0); the column sum reads the slice of it.
  CHECK(r.partition ==
        "fused(rows, reduce 1) %0 %1 -> %1\nextern %2 aten::slice.Tensor\nextern %3 "
        "aten::mm.default\n"
        "fused(columns, reduce 1) %4 -> %4\n");
  REQUIRE(r.kernels.size() == 2);
  CHECK(r.kernels[0].find("rows(reduce 1 dims) zero-tail(out0: 6) {") != std::string::npos);
  CHECK(r.kernels[0].find(
            "// fused: aten::_log_softmax_backward_data.default, aten::constant_pad_nd.default") !=
        std::string::npos);
}

TEST_CASE("a pad the row kernel cannot absorb stays its own step", "[padded_rows]") {
  // The unpadded value has another reader: the kernel must write it, the pad stays.
  Fused r = Fuse(std::string(kBertInputs) + kBertBody);
  CHECK(!r.absorbed);
  CHECK(r.partition.find("aten::constant_pad_nd") == std::string::npos);  // a fused index group
  CHECK(r.partition.find("fused %1 -> %1") != std::string::npos);
  // A pad of a plain pointwise kernel's output (no rows): not absorbed.
  r = Fuse(std::string(kBertInputs) +
           R"(  %0 = aten::mul.Tensor(%a0, %a1) -> bf16[128,30522]{30522,1}@cuda
  %1 = aten::constant_pad_nd.default(%0, [0, 6], 0) -> bf16[128,30528]{30528,1}@cuda
  %2 = aten::mm.default(%1, %a2) -> bf16[128,768]{768,1}@cuda
  return (%2)
})");
  CHECK(!r.absorbed);
}

TEST_CASE("the loss row kernel reads the logits copy itself, through no reshapes, and absorbs it",
          "[padded_rows]") {
  // The forward of a padded vocabulary projection (PadMatmulOperands' N-pad): the logits are
  // the contiguous copy of the padded product's first 30522 columns, returned (saved for the
  // backward), and read by the loss through a reshape round trip of their own layout.
  constexpr char kInputs[] =
      "graph(%a0: bf16[1024,30528]{30528,1}@cuda, %a1: f32[1024,1]{1,1}@cuda) {\n";
  bool changed = false;
  const std::string out = Rewrite(
      std::string(kInputs) +
          R"(  %0 = aten::slice.Tensor(%a0, 1, 0, 30522, 1) -> bf16[1024,30522]{30528,1}@cuda
  %1 = aten::clone.default(%0) -> bf16[1024,30522]{30522,1}@cuda
  %2 = aten::_unsafe_view.default(%1, [2, 512, 30522]) -> bf16[2,512,30522]{15627264,30522,1}@cuda
  %3 = aten::view.default(%2, [-1, 30522]) -> bf16[1024,30522]{30522,1}@cuda
  %4 = aten::_to_copy.default(%3, dtype=f32) -> f32[1024,30522]{30522,1}@cuda
  %5 = aten::logsumexp.default(%4, [1], true) -> f32[1024,1]{1,1}@cuda
  return (%2, %5)
})",
      &changed);
  CHECK(changed);
  const std::string expected =
      std::string(kInputs) +
      R"(  %0 = aten::slice.Tensor(%a0, 1, 0, 30522, 1) -> bf16[1024,30522]{30528,1}@cuda
  %1 = aten::clone.default(%0) -> bf16[1024,30522]{30522,1}@cuda
  %2 = aten::_unsafe_view.default(%1, [2, 512, 30522]) -> bf16[2,512,30522]{15627264,30522,1}@cuda
  %3 = aten::_to_copy.default(%1, dtype=f32) -> f32[1024,30522]{30522,1}@cuda
  %4 = aten::logsumexp.default(%3, [1], true) -> f32[1024,1]{1,1}@cuda
  return (%2, %4)
})";
  CHECK(out == Canonical(expected));
  // One row kernel reads the padded rows (the slice) and writes the copy the graph returns.
  const Fused r = Fuse(expected);
  CHECK(r.partition ==
        "extern %0 aten::slice.Tensor\nfused(rows, reduce 1) %1 %3 %4 -> %1 %4\nextern %2 "
        "aten::_unsafe_view.default\n");
}

}  // namespace
}  // namespace tccd::codegen

// ColumnPrologueRecompute: IR text in, IR text out (after dead-code elimination), the partition
// it gives (RMSNorm's backward as Llama's training graph has it: the weight-gradient column sum
// no longer takes the row kernel's prologue), and the cases it leaves alone.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/column_prologue_recompute.h"
#include "codegen/passes/dead_code_elimination.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/reduction_fusion.h"

namespace tccd::codegen {
namespace {

ir::Graph Parse(const std::string& text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return *std::move(g);
}

ir::Graph Run(const std::string& text, bool* changed) {
  ir::Graph g = Parse(text);
  ColumnPrologueRecompute pass;
  absl::StatusOr<bool> c = pass.Run(g);
  REQUIRE(c.ok());
  *changed = *c;
  DeadCodeElimination dce;
  REQUIRE(dce.Run(g).ok());
  return g;
}

std::string Canonical(const std::string& text) { return ir::PrintGraph(Parse(text)); }

std::string RowPartition(const ir::Graph& g) {
  absl::StatusOr<Partition> p = PartitionForFusion(g, FusionOptions{});
  REQUIRE(p.ok());
  REQUIRE(FuseRowReductions(g, {}, *p).ok());
  return PrintPartition(g, *p);
}

// %a0, %a1: bf16 upstream gradients (two matmuls read the norm's output), %a2: the f32 weight,
// %a3: x (f32), %a4: rstd per row.
constexpr char kInputs[] =
    "graph(%a0: bf16[64,128]{128,1}@cuda, %a1: bf16[64,128]{128,1}@cuda, "
    "%a2: f32[128]{1}@cuda, %a3: f32[64,128]{128,1}@cuda, %a4: f32[64,1]{1,1}@cuda) {\n";
// The weight gradient sum(g * (x * rstd)) over the tokens, then the input gradient's row.
constexpr char kBody[] =
    R"(  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[64,128]{128,1}@cuda
  %1 = aten::_to_copy.default(%a1, dtype=f32) -> f32[64,128]{128,1}@cuda
  %2 = aten::add.Tensor(%0, %1) -> f32[64,128]{128,1}@cuda
  %3 = aten::mul.Tensor(%a3, %a4) -> f32[64,128]{128,1}@cuda
  %4 = aten::mul.Tensor(%2, %3) -> f32[64,128]{128,1}@cuda
  %5 = aten::sum.dim_IntList(%4, [0]) -> f32[128]{1}@cuda
  %6 = aten::mul.Tensor(%2, %a2) -> f32[64,128]{128,1}@cuda
  %7 = aten::mul.Tensor(%6, %a3) -> f32[64,128]{128,1}@cuda
  %8 = aten::sum.dim_IntList(%7, [1], true) -> f32[64,1]{1,1}@cuda
  %9 = aten::mul.Tensor(%6, %a4) -> f32[64,128]{128,1}@cuda
  %10 = aten::mul.Tensor(%8, %a3) -> f32[64,128]{128,1}@cuda
  %11 = aten::add.Tensor(%9, %10) -> f32[64,128]{128,1}@cuda
)";

TEST_CASE("RMSNorm backward: the weight-gradient column sum recomputes the shared prologue",
          "[column_prologue_recompute]") {
  bool changed = false;
  const ir::Graph g = Run(std::string(kInputs) + kBody + "  return (%5, %11)\n}", &changed);
  CHECK(changed);
  CHECK(ir::PrintGraph(g) ==
        Canonical(std::string(kInputs) +
                  R"(  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[64,128]{128,1}@cuda
  %1 = aten::_to_copy.default(%a1, dtype=f32) -> f32[64,128]{128,1}@cuda
  %2 = aten::add.Tensor(%0, %1) -> f32[64,128]{128,1}@cuda
  %3 = aten::_to_copy.default(%a0, dtype=f32) -> f32[64,128]{128,1}@cuda
  %4 = aten::_to_copy.default(%a1, dtype=f32) -> f32[64,128]{128,1}@cuda
  %5 = aten::add.Tensor(%3, %4) -> f32[64,128]{128,1}@cuda
  %6 = aten::mul.Tensor(%a3, %a4) -> f32[64,128]{128,1}@cuda
  %7 = aten::mul.Tensor(%5, %6) -> f32[64,128]{128,1}@cuda
  %8 = aten::sum.dim_IntList(%7, [0]) -> f32[128]{1}@cuda
  %9 = aten::mul.Tensor(%2, %a2) -> f32[64,128]{128,1}@cuda
  %10 = aten::mul.Tensor(%9, %a3) -> f32[64,128]{128,1}@cuda
  %11 = aten::sum.dim_IntList(%10, [1], true) -> f32[64,1]{1,1}@cuda
  %12 = aten::mul.Tensor(%9, %a4) -> f32[64,128]{128,1}@cuda
  %13 = aten::mul.Tensor(%11, %a3) -> f32[64,128]{128,1}@cuda
  %14 = aten::add.Tensor(%12, %13) -> f32[64,128]{128,1}@cuda
  return (%8, %14)
})"));
  // Two kernels: the column sum over its own copy (reads the bf16 gradients, x, rstd; writes
  // only the [128] sum) and the row kernel with the originals as its prologue.
  const std::string partition = RowPartition(g);
  INFO(partition);
  CHECK(partition.find("extern") == std::string::npos);
  CHECK(partition.find("%3 %4 %5 %6 %7 %8") != std::string::npos);
  CHECK(partition.find("%0 %1 %2 %9 %10 %11 %12 %13 %14") != std::string::npos);
}

TEST_CASE("layer norm backward: the parameter-gradient half casts the bf16 gradient itself",
          "[column_prologue_recompute]") {
  // layer-norm-backward-split's two halves reading one f32 cast of the bf16 matmul gradient:
  // the row half takes the cast as its prologue, the column half its own copy (before, the
  // column half read the f32 cast that the row kernel wrote for it: 8 bytes per element
  // against 2 re-read).
  const std::string inputs =
      "graph(%a0: bf16[64,32]{32,1}@cuda, %a1: f32[64,32]{32,1}@cuda, %a2: f32[64,1]{1,1}@cuda, "
      "%a3: f32[64,1]{1,1}@cuda, %a4: f32[32]{1}@cuda, %a5: f32[32]{1}@cuda) {\n";
  constexpr char kRow[] =
      "aten::native_layer_norm_backward.default(%0, %a1, [32], %a2, %a3, %a4, %a5, "
      "[true, false, false]) -> (f32[64,32]{32,1}@cuda, f32[0]{1}@cuda, f32[0]{1}@cuda)\n";
  constexpr char kColumn[] =
      "aten::native_layer_norm_backward.default(%X, %a1, [32], %a2, %a3, %a4, %a5, "
      "[false, true, true]) -> (f32[0]{1}@cuda, f32[32]{1}@cuda, f32[32]{1}@cuda)\n";
  auto column = [&](const char* g) {
    std::string c = kColumn;
    c.replace(c.find("%X"), 2, g);
    return c;
  };
  bool changed = false;
  const ir::Graph g =
      Run(inputs + "  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[64,32]{32,1}@cuda\n" +
              "  %1 = " + kRow + "  %2 = " + column("%0") + "  return (%1#0, %2#1, %2#2)\n}",
          &changed);
  CHECK(changed);
  CHECK(ir::PrintGraph(g) ==
        Canonical(inputs +
                  "  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[64,32]{32,1}@cuda\n" +
                  "  %1 = " + kRow +
                  "  %2 = aten::_to_copy.default(%a0, dtype=f32) -> f32[64,32]{32,1}@cuda\n" +
                  "  %3 = " + column("%2") + "  return (%1#0, %3#1, %3#2)\n}"));
  // The column half's cast stays its own prologue (row fusion's sibling rule does not hand it
  // to the row half, which would write it for the column half to read).
  const std::string partition = RowPartition(g);
  INFO(partition);
  CHECK(partition.find("extern") == std::string::npos);
  CHECK(partition.find("%2 %3") != std::string::npos);
  CHECK(partition.find("%0 %1") != std::string::npos);
}

TEST_CASE("nothing to do: a private prologue, a shared value an extern op or the graph reads",
          "[column_prologue_recompute]") {
  // The column sum alone: its prologue is its own already.
  const std::string alone =
      std::string(kInputs) +
      R"(  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[64,128]{128,1}@cuda
  %1 = aten::mul.Tensor(%a3, %a4) -> f32[64,128]{128,1}@cuda
  %2 = aten::mul.Tensor(%0, %1) -> f32[64,128]{128,1}@cuda
  %3 = aten::sum.dim_IntList(%2, [0]) -> f32[128]{1}@cuda
  return (%3)
})";
  // The summed gradient also read by a matmul: it is written whatever the column kernel does.
  const std::string extern_reader =
      std::string(kInputs) + kBody +
      "  %12 = aten::mm.default(%2, %a3) -> f32[64,64]{64,1}@cuda\n  return (%5, %11, %12)\n}";
  // ... or returned.
  const std::string returned = std::string(kInputs) + kBody + "  return (%5, %11, %2)\n}";
  for (const std::string& text : {alone, extern_reader, returned}) {
    bool changed = true;
    const ir::Graph g = Run(text, &changed);
    INFO(text);
    CHECK_FALSE(changed);
    CHECK(ir::PrintGraph(g) == Canonical(text));
  }
}

TEST_CASE("nothing to do: re-reading the leaves costs more than the shared value",
          "[column_prologue_recompute]") {
  // The shared value is a bf16 product of two f32 tensors: 4 bytes written and read back per
  // element against 8 re-read.
  const std::string text =
      "graph(%a0: f32[64,128]{128,1}@cuda, %a1: f32[64,128]{128,1}@cuda) {\n"
      R"(  %0 = aten::mul.Tensor(%a0, %a1) -> f32[64,128]{128,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=bf16) -> bf16[64,128]{128,1}@cuda
  %2 = aten::sum.dim_IntList(%1, [0], dtype=f32) -> f32[128]{1}@cuda
  %3 = aten::sum.dim_IntList(%1, [1], true, dtype=f32) -> f32[64,1]{1,1}@cuda
  return (%2, %3)
})";
  bool changed = true;
  const ir::Graph g = Run(text, &changed);
  CHECK_FALSE(changed);
  CHECK(ir::PrintGraph(g) == Canonical(text));
}

}  // namespace
}  // namespace tccd::codegen

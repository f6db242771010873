// AffineFactoryFolding: transformers' packed-sequence check of arange position ids folds to
// constants (the cumsum, the diff and the eq die), `x & true` is x; values that depend on an
// input, floats, graph outputs and indices that could wrap stay.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/affine_factory_folding.h"
#include "codegen/passes/dead_code_elimination.h"

namespace tccd::codegen {
namespace {

// Llama's mask construction (masking_utils.py, transformers 5.x) at batch 2, sequence 8, as the
// inference graph has it: position ids arange(8) + 0, find_packed_sequence_indices' diff and
// cumsum, sdpa_mask's index of the position ids and of the packed-sequence ids, and-ed.
constexpr char kLlamaMask[] = R"(graph(%a0: bf16[2,1,8,8]{64,64,8,1}@cuda) {
  %0 = aten::arange.default(8, device=device(cuda), pin_memory=false) -> i64[8]{1}@cuda
  %1 = aten::add.Tensor(%0, 0) -> i64[8]{1}@cuda
  %2 = aten::unsqueeze.default(%1, 0) -> i64[1,8]{8,1}@cuda
  %3 = aten::expand.default(%2, [2, -1]) -> i64[2,8]{0,1}@cuda
  %4 = aten::slice.Tensor(%3, 1, 0, 1) -> i64[2,1]{0,1}@cuda
  %5 = aten::sub.Tensor(%4, 1) -> i64[2,1]{1,1}@cuda
  %6 = aten::cat.default([%5, %3], -1) -> i64[2,9]{9,1}@cuda
  %7 = aten::slice.Tensor(%6, -1, 0, 8) -> i64[2,8]{9,1}@cuda
  %8 = aten::slice.Tensor(%6, -1, 1, 9) -> i64[2,8]{9,1}@cuda
  %9 = aten::sub.Tensor(%8, %7) -> i64[2,8]{8,1}@cuda
  %10 = aten::ne.Scalar(%9, 1) -> b8[2,8]{8,1}@cuda
  %11 = aten::cumsum.default(%10, -1) -> i64[2,8]{8,1}@cuda
  %12 = aten::arange.default(2, device=device(cuda), pin_memory=false) -> i64[2]{1}@cuda
  %13 = aten::unsqueeze.default(%12, 1) -> i64[2,1]{1,1}@cuda
  %14 = aten::unsqueeze.default(%13, 2) -> i64[2,1,1]{1,1,1}@cuda
  %15 = aten::unsqueeze.default(%14, 3) -> i64[2,1,1,1]{1,1,1,1}@cuda
  %16 = aten::reshape.default(%0, [1, 1, 8, 1]) -> i64[1,1,8,1]{8,8,1,1}@cuda
  %17 = aten::reshape.default(%0, [1, 1, 1, 8]) -> i64[1,1,1,8]{8,8,8,1}@cuda
  %18 = aten::new_ones.default(%16, [], dtype=b8, pin_memory=false) -> b8[]{}@cuda
  %19 = aten::index.Tensor(%3, [%15, %16]) -> i64[2,1,8,1]{8,8,1,1}@cuda
  %20 = aten::index.Tensor(%3, [%15, %17]) -> i64[2,1,1,8]{8,8,8,1}@cuda
  %21 = aten::le.Tensor(%20, %19) -> b8[2,1,8,8]{64,64,8,1}@cuda
  %22 = aten::bitwise_and.Tensor(%18, %21) -> b8[2,1,8,8]{64,64,8,1}@cuda
  %23 = aten::index.Tensor(%11, [%15, %16]) -> i64[2,1,8,1]{8,8,1,1}@cuda
  %24 = aten::index.Tensor(%11, [%15, %17]) -> i64[2,1,1,8]{8,8,8,1}@cuda
  %25 = aten::eq.Tensor(%23, %24) -> b8[2,1,8,8]{64,64,8,1}@cuda
  %26 = aten::bitwise_and.Tensor(%22, %25) -> b8[2,1,8,8]{64,64,8,1}@cuda
  %27 = aten::where.self(%26, %a0, -inf) -> bf16[2,1,8,8]{64,64,8,1}@cuda
  return (%27)
})";

TEST_CASE("Llama's packed-sequence check of arange position ids folds away",
          "[affine_factory_folding]") {
  ir::Graph g = *ir::ParseGraph(kLlamaMask);
  AffineFactoryFolding folding;
  REQUIRE(*folding.Run(g));
  DeadCodeElimination dce;
  REQUIRE(dce.Run(g).ok());
  // The mask is kv <= q through the position ids; the cumsum, the diff, new_ones and the eq are
  // gone. (arange(2)'s unsqueezes stay: a tensor of two values, no constant.)
  CHECK(ir::PrintGraph(g) == R"(graph(%a0: bf16[2,1,8,8]{64,64,8,1}@cuda) {
  %0 = aten::arange.default(8, device=device(cuda), pin_memory=false) -> i64[8]{1}@cuda
  %1 = aten::add.Tensor(%0, 0) -> i64[8]{1}@cuda
  %2 = aten::unsqueeze.default(%1, 0) -> i64[1,8]{8,1}@cuda
  %3 = aten::expand.default(%2, [2, -1]) -> i64[2,8]{0,1}@cuda
  %4 = aten::arange.default(2, device=device(cuda), pin_memory=false) -> i64[2]{1}@cuda
  %5 = aten::unsqueeze.default(%4, 1) -> i64[2,1]{1,1}@cuda
  %6 = aten::unsqueeze.default(%5, 2) -> i64[2,1,1]{1,1,1}@cuda
  %7 = aten::unsqueeze.default(%6, 3) -> i64[2,1,1,1]{1,1,1,1}@cuda
  %8 = aten::reshape.default(%0, [1, 1, 8, 1]) -> i64[1,1,8,1]{8,8,1,1}@cuda
  %9 = aten::reshape.default(%0, [1, 1, 1, 8]) -> i64[1,1,1,8]{8,8,8,1}@cuda
  %10 = aten::index.Tensor(%3, [%7, %8]) -> i64[2,1,8,1]{8,8,1,1}@cuda
  %11 = aten::index.Tensor(%3, [%7, %9]) -> i64[2,1,1,8]{8,8,8,1}@cuda
  %12 = aten::le.Tensor(%11, %10) -> b8[2,1,8,8]{64,64,8,1}@cuda
  %13 = aten::where.self(%12, %a0, -inf) -> bf16[2,1,8,8]{64,64,8,1}@cuda
  return (%13)
}
)");
  // Nothing left to do.
  CHECK_FALSE(*folding.Run(g));
}

TEST_CASE("a known cumsum and a constant comparison become fills", "[affine_factory_folding]") {
  ir::Graph g = *ir::ParseGraph(R"(graph(%a0: i64[4]{1}@cuda) {
  %0 = aten::full.default([4], 2, dtype=i64, device=device(cuda)) -> i64[4]{1}@cuda
  %1 = aten::cumsum.default(%0, 0) -> i64[4]{1}@cuda
  %2 = aten::arange.default(4, device=device(cuda), pin_memory=false) -> i64[4]{1}@cuda
  %3 = aten::mul.Tensor(%2, 2) -> i64[4]{1}@cuda
  %4 = aten::sub.Tensor(%1, %3) -> i64[4]{1}@cuda
  %5 = aten::add.Tensor(%a0, %4) -> i64[4]{1}@cuda
  %6 = aten::eq.Tensor(%1, %3) -> b8[4]{1}@cuda
  %7 = aten::where.self(%6, %a0, %2) -> i64[4]{1}@cuda
  %8 = aten::mul.Tensor(%7, 3) -> i64[4]{1}@cuda
  return (%5, %8)
})");
  AffineFactoryFolding folding;
  REQUIRE(*folding.Run(g));
  DeadCodeElimination dce;
  REQUIRE(dce.Run(g).ok());
  // cumsum(2) = 2 * (i + 1), minus 2 * i: 2 everywhere; cumsum != 2 * i everywhere, so the where
  // takes its third operand (the arange; 3 * arange is no constant). The cumsum is dead.
  CHECK(ir::PrintGraph(g) == R"(graph(%a0: i64[4]{1}@cuda) {
  %0 = aten::arange.default(4, device=device(cuda), pin_memory=false) -> i64[4]{1}@cuda
  %1 = aten::full.default([4], 2, dtype=i64, device=device(cuda)) -> i64[4]{1}@cuda
  %2 = aten::add.Tensor(%a0, %1) -> i64[4]{1}@cuda
  %3 = aten::mul.Tensor(%0, 3) -> i64[4]{1}@cuda
  return (%2, %3)
}
)");
}

TEST_CASE("inputs, floats, outputs and wrapping indices are left alone",
          "[affine_factory_folding]") {
  // %1: an input's cumsum; %3: a float arange; %5: a graph output (a constant, but the caller
  // gets the traced node); %8: index -1 would wrap (not affine, so %9 is unknown); %11 wraps
  // in i32 (unknown, so %12 is no constant here).
  const char* text = R"(graph(%a0: b8[4]{1}@cuda) {
  %0 = aten::ne.Scalar(%a0, 1) -> b8[4]{1}@cuda
  %1 = aten::cumsum.default(%0, 0) -> i64[4]{1}@cuda
  %2 = aten::arange.default(4, dtype=f32, device=device(cuda), pin_memory=false) -> f32[4]{1}@cuda
  %3 = aten::sub.Tensor(%2, %2) -> f32[4]{1}@cuda
  %4 = aten::arange.default(4, device=device(cuda), pin_memory=false) -> i64[4]{1}@cuda
  %5 = aten::sub.Tensor(%4, %4) -> i64[4]{1}@cuda
  %6 = aten::sub.Tensor(%4, 1) -> i64[4]{1}@cuda
  %7 = aten::index.Tensor(%4, [%6]) -> i64[4]{1}@cuda
  %8 = aten::sub.Tensor(%7, %6) -> i64[4]{1}@cuda
  %9 = aten::add.Tensor(%1, %8) -> i64[4]{1}@cuda
  %10 = aten::full.default([4], 2147483647, dtype=i32, device=device(cuda)) -> i32[4]{1}@cuda
  %11 = aten::add.Tensor(%10, 1) -> i32[4]{1}@cuda
  %12 = aten::sub.Tensor(%11, %11) -> i32[4]{1}@cuda
  %13 = aten::mul.Tensor(%a0, %12) -> i32[4]{1}@cuda
  return (%1, %3, %5, %9, %13)
})";
  ir::Graph g = *ir::ParseGraph(text);
  AffineFactoryFolding folding;
  CHECK_FALSE(*folding.Run(g));
  CHECK(ir::PrintGraph(g) == ir::PrintGraph(*ir::ParseGraph(text)));
}

TEST_CASE("numbers past the tracked magnitude and ops without arguments are unknown, not folded",
          "[affine_factory_folding]") {
  // Request fuzzer findings: %0 added INT64_MAX and 1 (signed overflow, UBSan); %1's range over
  // its 4 elements leaves int64 (step 2^62); %3 and %4 read a first argument they do not have.
  const char* text = R"(graph(%a0: i64[4]{1}@cuda) {
  %0 = aten::add.Tensor(9223372036854775807, 1) -> i64[]{}@cuda
  %1 = aten::arange.start_step(0, 16, 4611686018427387904, device=device(cuda), pin_memory=false) -> i64[4]{1}@cuda
  %2 = aten::sub.Tensor(%1, %1) -> i64[4]{1}@cuda
  %3 = aten::neg.default() -> i64[4]{1}@cuda
  %4 = aten::cat.default() -> i64[4]{1}@cuda
  %5 = aten::add.Tensor(%a0, %0) -> i64[4]{1}@cuda
  %6 = aten::add.Tensor(%5, %2) -> i64[4]{1}@cuda
  %7 = aten::add.Tensor(%6, %3) -> i64[4]{1}@cuda
  %8 = aten::add.Tensor(%7, %4) -> i64[4]{1}@cuda
  return (%8)
})";
  ir::Graph g = *ir::ParseGraph(text);
  AffineFactoryFolding folding;
  CHECK_FALSE(*folding.Run(g));
  CHECK(ir::PrintGraph(g) == ir::PrintGraph(*ir::ParseGraph(text)));
}

}  // namespace
}  // namespace tccd::codegen

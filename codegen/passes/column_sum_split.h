// Column sums over many rows of few columns (CUDA) in two stages, their pointwise producer
// recomputed over the split view so that it stays the first stage's prologue.
//
// A bias gradient is a column sum: sum(g, [0]) of g [R, C], R tokens or pixels. The column
// kernel gives a tile of 4..32 threads x 16 bytes of columns one block and splits its rows at
// most 8 ways (a thread-block cluster), so few columns mean few blocks: ConvNeXt's first-stage
// MLP (C = 384 over 64 x 56 x 56 pixels) got 12 tiles x 8 = 96 blocks of 256 threads for the
// 132 SMs of an H200, and its GELU backward fused into the sum (the bf16 gradient stored beside
// the f32 sums) ran at about 1 TB/s: 443 us per launch where Inductor's pointwise GELU backward
// (152 us) and split sum (37 us) took 189. As layer_norm_param_grad_split.h does for narrow
// norms, the rows are seen as [A, B, C] (views, no copy) and summed in two column kernels, B
// the smallest power of two with B * C >= SplitColumnTarget() (split_columns.h; A >= 256):
//
//   %9  = gelu_backward(%0, %a1) -> bf16[R, C]          (also read by the matmuls)
//   %14 = sum.dim_IntList(%9, [0], true) -> bf16[1, C]
// becomes
//   %p3 = gelu_backward(view(%0, [A, B, C]), view(%a1, [A, B, C])) -> bf16[A, B, C]
//   %9' = view(%p3, [R, C])                              (the matmuls' operand: an alias)
//   %s1 = sum(_to_copy(%p3, f32), [0]) -> f32[B, C]      stage 1: %p3's kernel, B * C columns
//   %s2 = sum(%s1, [0], true) -> f32[1, C]                stage 2 (the result's shape)
//   %14' = _to_copy(%s2, bf16)                            (stage 2's epilogue)
//
// f32 accumulation rounded once, as ATen's bf16 sum, in another order. The producer is
// rewritten over the view only when every tensor operand has its full shape and is contiguous
// (or is 0-dim); otherwise the sum is left alone: splitting it would leave the producer a kernel
// of its own that writes its output for the first stage to read back. Sums of graph inputs and
// extern results (a matmul's output) are split without a producer. Left alone: wide sums (C >=
// 1024: the column kernel's own tiles then fill the GPU; a transformer's 3072), sums of fewer
// than 4M elements (the second launch would cost what the split saves; unmeasured), and a sum
// whose input another column reduction also reads (horizontal fusion makes the two one pass
// over it; a split of one would undo that). Runs after the reshape passes (pipeline.cc), which
// settle which node makes the value. TCCD_DISABLE_PASSES=column-sum-split keeps the one-kernel form
// (to measure one against the other: deploy/column_bench.py).
#pragma once

#include <cstdint>

#include "codegen/passes/pass.h"

namespace tccd::codegen {

// Sums with at least this many columns keep one column kernel.
inline constexpr int64_t kColumnSumSplitMaxColumns = 1024;

class ColumnSumSplit : public GraphPass {
 public:
  std::string_view name() const override { return "column-sum-split"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

// Split reductions (CUDA): a row reduction with a few very long rows, which the row kernels
// refuse (one row is one thread block: 64 rows of 800k elements would leave most of the GPU
// idle; reduction_ops.h, kMaxFewRowsLength), becomes two row reductions, as Inductor's split
// reductions: the first reduced dim d0 is split into [S, d0 / S], stage 1 reduces every row
// chunk ([rows, S, d0/S, rest] -> [rows, S], rows * S blocks fill the GPU), stage 2 reduces
// the S partial results of each row ([rows, S] -> [rows]):
//
//   %1 = aten::var_mean.correction(%x, [1, 2], correction=1, keepdim=true)   x: f32[64,64,12544]
// becomes (S = 32)
//   %2 = aten::view.default(%x, [64, 32, 2, 12544])                         (a view, any strides)
//   %3 = aten::var_mean.correction(%2, [2, 3], correction=0) -> [64, 32] x2  chunk var, mean
//   (views of the partials as [64, 32, 1]; then one row kernel:)
//   %m = aten::mean.dim(chunk means, [1, 2], true)                          the mean
//   %v = aten::mean.dim(chunk vars + (chunk means - %m)^2, [1, 2], true)    biased var
//   %9 = aten::mul.Tensor(%v, R / (R - correction))                         the asked correction
//
// Chunks are of equal size, so the mean is the mean of the chunk means and the biased variance
// the mean of the chunk variances plus the variance of the chunk means (exact; Chan et al.'s
// pairwise combination with equal counts). sum/mean partials are f32 (dtype=f32) whatever the
// input dtype, var/var_mean read their input as f32; amax/amin are exact in any dtype.
//
// The reduction's input is usually a fused prologue (a cast of a permuted view in a batch
// norm): a pointwise producer of x's shape is re-emitted over the split shape (recomputed in
// stage 1's kernel, not written out), down to non-pointwise values, which are viewed. The
// original chain stays for its other readers (the norm's normalisation) and is dead otherwise.
//
// Applies to sum.dim_IntList, mean.dim, amax, amin, var.correction and var_mean.correction over
// trailing dims that ReductionAxesOf refuses only for their few long rows, when d0 has a divisor
// S that makes both stages acceptable to it (SplitFactor; preferring >= kSplitTargetBlocks
// stage-1 rows of at most kMaxFewRowsLength elements, which the row kernel holds in registers).
// Everything else is left alone (d0 = 1, a batch of one image, has no split: it stays ATen's).
#pragma once

#include <cstdint>
#include <optional>

#include "codegen/ir/graph.h"
#include "codegen/passes/pass.h"

namespace tccd::codegen {

// Stage 1 aims at this many thread blocks (8 per SM of a 132-SM H100; enough on smaller GPUs).
inline constexpr int64_t kSplitTargetBlocks = 1024;
// Stage 1 rows are at least this long (shorter chunks would spend their time on stage 2).
inline constexpr int64_t kMinSplitChunkLength = 1024;

// S for `node` if SplitReductions would split it (see above), else nullopt. Passes that emit
// reductions (BatchNormDecomposition) use it to accept rows the pass below makes lowerable.
std::optional<int64_t> SplitFactor(const ir::Graph& graph, const ir::Node& node);

class SplitReductions : public GraphPass {
 public:
  std::string_view name() const override { return "split-reductions"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

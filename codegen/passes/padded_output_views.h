// PaddedOutputViews: a graph output whose strides the client left to the compiler, and which is
// the contiguous copy of a padded matmul's first N columns (PadMatmulOperands' clone of
// mm(A, B'[K, N8])[:, :N]), is returned as the strided view of the padded product instead:
//
//   %p = mm(A, B')            [T, N8]
//   %s = slice(%p, 1, 0, N)   [T, N]  {N8, 1}
//   %c = clone(%s)            [T, N]  {N, 1}      <- dropped
//   %v = view(%c, [B, S, N])  [B, S, N] {S*N, N, 1}  ->  view(%s, [B, S, N]) {S*N8, N8, 1}
//   return (%v)
//
// GPT-2's logits at the zoo's large batch: the copy is a [8192, 50257] bf16 read and write
// (0.84 ms on an H200) that Inductor does not pay. The view chain between the copy and the
// output may only split the leading (row) dimension: the last dimension stays N and rows keep
// the padded stride N8, so every view is expressible on the strided slice.
//
// Only outputs in `free_outputs` qualify (CompileOptions.extra["tccd_free_layout_outputs"]):
// their readers outside the graph take any strides (client/tccd/padded_outputs.py decides which;
// TCCD_PADDED_OUTPUTS). Readers of the copy inside the graph read the padded columns too (BERT's
// loss reads the logits it returns: kept for it, the copy would live beside the padded product,
// 477 MiB more at batch 16): views of it take the padded row stride, kernels' ops (pointwise,
// reductions) read any strides. When another reader needs the contiguous copy (a reshape, an
// extern op, a view that merges rows, a view returned at a promised position), all stays.
#pragma once

#include <set>
#include <string_view>
#include <vector>

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class PaddedOutputViews : public GraphPass {
 public:
  explicit PaddedOutputViews(std::vector<int> free_outputs)
      : free_outputs_(free_outputs.begin(), free_outputs.end()) {}
  std::string_view name() const override { return "padded-output-views"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

 private:
  std::set<int> free_outputs_;
};

}  // namespace tccd::codegen

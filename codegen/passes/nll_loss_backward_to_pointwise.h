// NllLossBackwardToPointwise: the gradient of nll_loss, when a log_softmax backward reads it, as
// broadcast pointwise ops that the log_softmax backward's row kernel takes in as its prologue
// (CUDA target), the way Inductor decomposes it. Cross-entropy's backward then no longer writes
// (and reads back) an f32 [rows, classes] tensor that is zero but for one element per row: for
// GPT-2 at batch 2 x 512 that is 196 MiB of peak memory and 400 MB of traffic per step.
//
//   %g_in = nll_loss_backward(g, self [N, C], target [N], None, reduction, ignore_index,
//   total_weight)
// becomes (the class index as a [C] arange: one tiny ATen kernel in place of the index kernel)
//   classes = arange(C)                                   i64 [C]
//   t = unsqueeze(target, 1)                              [N, 1] view
//   hit = eq(classes, t)                                  b8 [N, C]; and ne(t, ignore_index)
//                                                         when ignore_index is a class
//   %g_in = neg(div(mul(hit, g'), total_weight))          (div only for reduction=mean;
//                                                          g' = g, or unsqueeze(g, 1) for 'none')
// ATen writes 0 where hit is false; here that is 0 * g, the same unless g is inf or NaN (then
// both give a non-finite gradient after the log_softmax backward).
//
// Applied when every reader is `_log_softmax_backward_data` (otherwise the index kernel is as
// good), with no class weights, self a 2-d float tensor on CUDA and target 1-d.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class NllLossBackwardToPointwise : public GraphPass {
 public:
  std::string_view name() const override { return "nll-loss-backward-to-pointwise"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

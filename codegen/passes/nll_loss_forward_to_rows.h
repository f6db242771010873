// NllLossForwardToRows: cross-entropy's forward loss, when its log-probabilities are computed
// for it alone, as a row reduction that picks each row's target class, so the log-probabilities
// are never written (CUDA target). With the client's log_softmax decomposition
// (client/tccd/decompositions.py) the forward of a language model's loss then reads the logits
// once, in one row kernel that produces logsumexp and the picked log-probability per row, where
// it wrote an f32 [tokens, vocabulary] tensor for ATen's nll_loss_forward to read back (GPT-2 at
// 16 x 1024 tokens: 3.3 GB written and read per step).
//
//   %out, %total = nll_loss_forward(self [N, C] f32, target [N], None, reduction, ignore_index)
// becomes (reduction mean or sum, ignore_index outside [0, C), like the usual -100)
//   classes = arange(C)                                   i64 [C]
//   other = ne(classes, unsqueeze(target, 1))             b8 [N, C]
//   picked = sum(masked_fill(self, other, 0), [1])        f32 [N]: self[i, target[i]], or 0 for
//                                                         an ignored row (no class matches)
//   %total = sum(_to_copy(ne(target, ignore_index), f32), [0])
//   %out = neg(sum(picked, [0]))                          (sum)
//          div(neg(sum(picked, [0])), %total)             (mean; 0/0 = NaN when all are ignored,
//                                                          as ATen)
// The masked_fill and the picking sum join the row kernel that produces `self`. Where self is
// a - b with one b per row (log_softmax decomposed: logits - logsumexp, maybe cast to f32), the
// pick reads a instead and subtracts b afterwards:
//   picked = sum(masked_fill(a, other, 0), [1]) - masked_fill(b, target outside [0, C), 0)
// so it needs no row value, and the looped row kernel accumulates it in the same streamed pass
// as the logsumexp (one read of the logits in all).
//
// Applied only when self is an intermediate that this nll_loss_forward alone reads (otherwise
// it is written anyway and ATen's gather of N values is cheaper than a pass over it), with no
// class weights. A target outside [0, C) that is not ignore_index is an error in ATen (a device
// assert); here its row contributes 0.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class NllLossForwardToRows : public GraphPass {
 public:
  std::string_view name() const override { return "nll-loss-forward-to-rows"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

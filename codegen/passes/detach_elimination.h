// DetachElimination: `aten::detach.default(x)` read by other ops becomes `x` itself. A compiled
// graph records no autograd, so detach is the identity; as an alias step it would split the
// kernels around it. Cross-entropy's backward reads the log-probabilities through two detaches
// (AOTAutograd's trace of log_softmax's saved output): with them the recomputed x - logsumexp
// was a kernel of its own writing an f32 [tokens, vocabulary] tensor, without them it is the
// log_softmax backward's prologue. A detach that is a graph output stays (outputs keep their
// own alias relations).
//
// AliasElimination does the same for `aten::alias.default` (the same storage, sizes and strides:
// in a graph that writes no tensor but through copy_ into an input, which both would see alike,
// reading x instead is exact). transformers' slice_logits_to_keep aliases the final norm's
// output before the lm_head's bf16 cast: the alias kept the cast out of the norm's row kernel (a
// cast kernel of its own per call on Llama, 12 us at batch 16). TCCD_DISABLE_PASSES=
// alias-elimination keeps them.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class DetachElimination : public GraphPass {
 public:
  std::string_view name() const override { return "detach-elimination"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

class AliasElimination : public GraphPass {
 public:
  std::string_view name() const override { return "alias-elimination"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

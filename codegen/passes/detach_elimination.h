// DetachElimination: `aten::detach.default(x)` read by other ops becomes `x` itself. A compiled
// graph records no autograd, so detach is the identity; as an alias step it would split the
// kernels around it. Cross-entropy's backward reads the log-probabilities through two detaches
// (AOTAutograd's trace of log_softmax's saved output): with them the recomputed x - logsumexp
// was a kernel of its own writing an f32 [tokens, vocabulary] tensor, without them it is the
// log_softmax backward's prologue. A detach that is a graph output stays (outputs keep their
// own alias relations).
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class DetachElimination : public GraphPass {
 public:
  std::string_view name() const override { return "detach-elimination"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

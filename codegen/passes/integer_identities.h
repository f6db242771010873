// IntegerIdentities: x + 0, x - 0 and x * 1 of an integer (or bool) tensor x, of x's own dtype and
// sizes, are x. transformers computes its position ids and mask ranges as
// `torch.arange(n) + past_seen_tokens` (and `+ q_offset`, `+ kv_offset`), 0 in a graph without a
// cache: Llama's three such adds were a kernel per call reading the load-time arange, T5's two
// another (the arange itself is computed once at load and shared: no kernel at all).
//
// Exact for integers (no -0.0, no NaN: floating x is left alone). Not for graph outputs (the
// caller gets a fresh tensor, never an alias of another value) nor for broadcasting or
// type-promoting ops (a different shape or dtype). TCCD_DISABLE_PASSES=integer-identities keeps
// them.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class IntegerIdentities : public GraphPass {
 public:
  std::string_view name() const override { return "integer-identities"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

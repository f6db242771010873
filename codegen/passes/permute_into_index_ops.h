// Moves a permute (or transpose, t) of a cat, stack or constant_pad_nd onto the op's inputs, so
// that the op is computed directly in the permuted index space and fuses with the pointwise op that
// reads the permute:
//
//   %s = stack([%q, %k, %v])                    bf16[3, 64, 12, 197, 64] (%q, %k, %v: SDPA grads)
//   %p = permute(%s, [1, 3, 0, 2, 4])           bf16[64, 197, 3, 12, 64], a strided view
//   %c = clone(%p, memory_format=contiguous)
// becomes
//   %q' = permute(%q, [0, 2, 1, 3])             (a view: no copy)
//   ... %k', %v' likewise
//   %s' = stack([%q', %k', %v'], 2)             bf16[64, 197, 3, 12, 64], contiguous
//   %c  = clone(%s', memory_format=contiguous)  (one kernel with %s', writing in storage order)
//
// Without it the stack is a kernel of its own that writes its whole output in the stack's order
// for a second kernel to read back through the permute (ViT's backward: q/k/v gradients before
// the qkv weight-gradient matmul, 2 x 58 MB per layer at batch 64): a kernel's iteration space
// is one shape, so a group never spans a permute. Index ops gather each input at coordinates
// they compute, so their inputs may be any strided views: permuting them costs nothing.
//
// Only when the permute is the op's one reader (otherwise the op would run twice) and every
// reader of the permute is a pointwise or index op (which read any layout; the permute's value
// becomes contiguous, so an op that depends on strides must not see it) and the permute is not a
// graph output (its strides are part of what the caller gets).
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class PermuteIntoIndexOps : public GraphPass {
 public:
  std::string_view name() const override { return "permute-into-index-ops"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

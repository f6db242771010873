// Moves a negation that a cat or slice_backward reads onto the index op's output, so that the
// index kernel computes it and no kernel of its own writes the negated half (rotary embeddings'
// rotate_half, Llama's q and k in every layer):
//
//   forward                                        backward
//   %n = neg(slice(%x, -1, h, 2h))  [.., h]        %n = neg(slice(%g, -1, 0, h))  [.., h]
//   %c = cat([%n, slice(%x, -1, 0, h)], -1)        %s = slice_backward(%n, [.., 2h], -1, h, 2h, 1)
// becomes                                        becomes
//   %0 = slice_backward(slice(%x, ..h, 2h), [.., 2h], -1, 0, h, 1)
//   %1 = neg(%0)                                   %0 = slice_backward(slice(%g, ..), ..)
//   %2 = slice_backward(slice(%x, ..0, h), [.., 2h], -1, h, 2h, 1)
//   %c = add(%1, %2)                               %s = neg(%0)
//
// A kernel's iteration space is one shape, so the [.., h] negation was a kernel (16 launches per
// Llama training step at the zoo's size) between the slice views and the [.., 2h] index kernel;
// now it is one op of that kernel. Exact but for the sign of zeros outside the negated part (and
// of a negated zero inside a cat: -0 + 0 is +0), which no comparison sees.
//
// Only when the neg has no other reader and is not a graph output (otherwise both would run),
// and the cat's parts are all tensors of the cat's rank and dtype.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class NegIntoIndexOps : public GraphPass {
 public:
  std::string_view name() const override { return "neg-into-index-ops"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

// CollapseReshapeChains: a reshape of a reshape of contiguous tensors becomes one reshape of the
// first one's operand, and a reshape back to its operand's own shape becomes that operand:
//
//   %1 = view(%0, [2, 512, 3072])          (%0: bf16[1024, 3072], a kernel's output)
//   %2 = view(%1, [1024, 3072])
//   %3 = add(%x, %2)                       -> bf16[1024, 3072]
// becomes
//   %3 = add(%x, %0)
//
// AOTAutograd's backward graphs are full of such pairs (a transformer's gradients move between
// the matmuls' [tokens, width] and the modules' [batch, seq, width]); a kernel's iteration space
// is one shape, so left in place the pair splits the pointwise ops on either side into two
// kernels with the value written and read back between them (GPT-2's GELU backward: the sum of
// its three gradient terms was a kernel of its own). After reshape-sinking, which makes such
// pairs when it moves an op onto the reshaped value. Only reshapes of contiguous tensors (same
// element order); a reshape that is a graph output stays as it is.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class CollapseReshapeChains : public GraphPass {
 public:
  std::string_view name() const override { return "collapse-reshape-chains"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

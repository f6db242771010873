// Inlines 0-dim constant tensors into the pointwise ops that read them: an operand that is the
// output of aten::full.default([], v), zeros/ones.default([]), new_zeros/new_ones/new_full(x, [])
// or aten::scalar_tensor.default(v) becomes the number v (when
// v is exact in the fill's dtype), so the consumer's kernel holds a constant instead of loading a
// one-element tensor some other step had to create (on CUDA, one fill kernel per scalar).
// AOTAutograd's backward graphs are full of these (full_default = full([], 0.0) for where(),
// masked fills, ...). A 0-dim tensor and a number promote alike against the other (dimensioned)
// operands, and every lowering casts operands to the node's recorded output dtype, so the result
// is unchanged. The fill node, if nothing else reads it, is left to dead code elimination.
//
// Only for graphs that are fused (the pipeline skips it with fusion off): ATen's own .Tensor
// overloads would be handed a number.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class InlineScalarFills : public GraphPass {
 public:
  std::string_view name() const override { return "inline-scalar-fills"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

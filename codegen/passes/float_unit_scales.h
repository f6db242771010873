// FloatUnitScales: x * 1.0 and x / 1.0 of a floating tensor x, of x's own dtype, sizes and
// strides, are x. PyTorch's math attention (what SDPA runs for T5: a position-bias mask that
// needs a gradient, in f32) scales q and k each by sqrt(scale) = 1.0, and the backward scales
// their gradients by it again: in T5's backward graph each of the 8 biased attentions kept a
// kernel that only copied a [2, 8, 64, 256] f32 gradient (8 launches per step); in the forward
// the multiply only rode along in the cast's kernel.
//
// Exact in IEEE arithmetic: x * 1 and x / 1 are x for every x (-0.0, infinities, NaN; only a
// signalling NaN's quiet bit, which no op here distinguishes). Unlike x + 0.0 (-0.0 + 0.0 is
// +0.0), which stays. Not for graph outputs (the caller gets a fresh tensor, never an alias of
// another value), nor when the output's dtype, sizes or strides differ from x's (promotion,
// broadcast, a non-dense x copied dense), nor when x (through views) is made by a pointwise op:
// there the multiply costs nothing in that op's kernel, and reading x instead changed the
// layouts of T5's forward casts for a clone each. TCCD_DISABLE_PASSES=float-unit-scales keeps
// them.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class FloatUnitScales : public GraphPass {
 public:
  std::string_view name() const override { return "float-unit-scales"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

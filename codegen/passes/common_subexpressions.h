// CommonSubexpressions: a side-effect-free node with the same target, arguments (after earlier
// merges) and output types as an earlier one is that node: its readers read the earlier values.
//
// transformers recomputes per layer what depends on no layer: T5's decoder builds its causal
// mask and position bias once per stack but casts and masks them again in every layer
// (`where` and `_to_copy` per layer on the same tensors), Llama's sdpa mask is the same `where`
// per layer. Kernels fuse them horizontally only while small (horizontal_fusion.h: a larger
// value made early would be held), so on the GPU they were one launch each per layer. Merged,
// the value is made once and held to its last reader (no longer than the earliest copy's life
// would have been in sum).
//
// Only ops op_properties.h marks pure (never random or in-place ones), and no empty* allocation
// (distinct buffers by contract); graph outputs are never merged into another node (the caller
// gets distinct tensors, as traced).
// TCCD_DISABLE_PASSES=common-subexpressions keeps every node.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class CommonSubexpressions : public GraphPass {
 public:
  std::string_view name() const override { return "common-subexpressions"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

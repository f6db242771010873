// RedundantClones: `clone(x)` of a fresh value that nothing else reads, in x's own layout,
// becomes x.
//
// timm's ConvNeXt blocks trace, after the MLP's second linear, `clone(view(addmm))` (the
// inference graph's dropout/identity copy) read through the block's permute back to NCHW: the
// clone's reader reads it through that permute, so fusion leaves the clone a kernel of its own
// that copies the matmul's [B, H, W, C] result to the same layout (GPU-traced graphs,
// `convnext_infer_gpu`: 18 lone clone kernels per step; session 14's H100 kernel table: 145 us
// in 15 of them of ConvNeXt-T's 4.96 ms GPU busy at the zoo's large batch). The clone computes
// nothing: its readers can read x.
//
// Exact: x is made by a kernel or matmul op (a fresh tensor in its declared layout, through views
// that nothing else reads; not an extern op such as attention, whose layout can depend on the
// backend it picks at run time, which the clone then makes right for later views) that only
// this clone reads, so no other reader sees the shared bytes and nothing writes them
// (a graph writes tensors only through copy_ into its inputs, and x is none). The clone's type
// (dtype, sizes, strides, offset) must be x's, so its readers' declared layouts hold; a clone
// the graph returns stays (outputs keep their own alias relations). TCCD_DISABLE_PASSES=
// redundant-clones keeps them.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class RedundantClones : public GraphPass {
 public:
  std::string_view name() const override { return "redundant-clones"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

// ColumnPrologueRecompute (CUDA): a norm's weight-gradient column sum gets a private copy of
// the pointwise prologue it shares with the norm's row kernel, so neither kernel writes the
// shared values for the other to read back.
//
// Row fusion (reduction_fusion.h) gives a pointwise group to the first reduction that absorbs
// it. In an RMSNorm backward (Llama) the column sum of the weight gradient, sum(g * x * rstd)
// over the tokens, came first: its kernel took the whole group (the cast and sum of the bf16
// upstream gradients, g * w, g * w * x, g * w * rstd) and stored the two f32 products that the
// row kernel of the input gradient then read: 2 x 4 bytes written and read again per element,
// where re-reading the bf16 gradients is 2 to 6 (H200, Llama train large: the column kernels took
// ~587 us a step against Inductor's ~100).
//
// For a column reduction R (ReductionAxesOf: leading dims) on CUDA, its cone is the pointwise
// ops its argument is computed from (down to graph inputs and non-pointwise values; no index
// ops, no random draws). A cone node is shared when something outside the cone and R reads it.
// The cone is re-emitted just before R (R reads the copy; the originals keep their other
// readers, dead otherwise) when
//  * every outside reader of a shared node is a pointwise op of the node's shape or a row
//    (trailing-dims) reduction over it, and through such pointwise readers a row reduction
//    reads it: the originals then fuse into that row kernel as its prologue, so nothing is
//    written (an extern or graph-output reader would need the values written anyway: that case
//    is the generic column rule's);
//  * re-reading costs less: the bytes of the values the shared nodes are computed from (their
//    leaves outside the cone) are below twice the bytes of the shared values (written once,
//    read once before).
// Example (RMSNorm backward; %a0 bf16 upstream gradient, %a2 f32 x, %a3 f32 rstd):
//   %0 = _to_copy(%a0, f32); %1 = mul(%0, %w); %2 = mul(%a2, %a3); %3 = mul(%0, %2)
//   %4 = sum(%3, [0, 1])                      <- R, cone {%0, %2, %3}, %0 shared with %1
//   %5 = mul(%1, %a2); %6 = sum(%5, [2], true) <- the row kernel's prologue and anchor
// becomes
//   %0 = _to_copy(%a0, f32); %1 = mul(%0, %w); %2' = _to_copy(%a0, f32); %3' = mul(%a2, %a3)
//   %4' = mul(%2', %3'); %5 = sum(%4', [0, 1]); ... (the old %2, %3 dead)
#pragma once

#include "codegen/ir/graph.h"
#include "codegen/passes/pass.h"

namespace tccd::codegen {

class ColumnPrologueRecompute : public GraphPass {
 public:
  std::string_view name() const override { return "column-prologue-recompute"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

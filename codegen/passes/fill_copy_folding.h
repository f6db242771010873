// FillCopyFolding: sized fills and functional copies become plain pointwise values, so that the
// ops around them fuse instead of running as extern steps (T5's decoder-input shift,
// `_shift_right`: new_zeros + slice + copy + slice_scatter + select + fill + select_scatter +
// masked_fill was 4 generated kernels and 3 extern steps, one kernel after this pass).
//
//  - new_zeros/new_ones/new_full(self, size[, value]) with a non-empty size -> full(size, value,
//    dtype, device) of the node's own dtype and device (self gives only those defaults). full is
//    pointwise; new_* is not (an extern step, one ATen fill kernel per call). 0-dim ones are
//    InlineScalarFills' (numbers in their readers).
//  - fill.Scalar(x, value) -> full(x's sizes, value, ...), contiguous (a strided fill only where it
//    is no graph output: the caller would see the strides): the fill reads
//    x for its shape only, and x is usually a view of another kernel's output (select of the
//    shifted ids), which kept the fill a kernel of its own between two others.
//  - copy.default(self, src) with src of the output's sizes and dtype -> src: the functional copy
//    overwrites every element of self, so its value is src's. Its output had self's layout (a
//    slice of the zeros: not dense, so no pointwise kernel took it: an extern step). Not when the
//    copy is a graph output (its strides are then part of the contract).
//  - slice_scatter / select_scatter operands that are a full of their shape become the number
//    (index_ops.cc lowers it as a constant); a select_scatter of c into a position that a
//    slice_scatter of c left at c is that slice_scatter; a scatter's src that is clone(x) reads x
//    (the gather takes any strides). Only where the rewritten scatter is still an index op (a
//    kernel): an extern step would hand ATen a number. A kernel the target then rejects would make
//    it one (the rejected-kernel retry keeps the passes' graph); that graph then fails to compile
//    and runs eagerly, as InlineScalarFills' numbers would.
//
// Values are unchanged: full of the node's dtype holds the same number the fill wrote, and a
// copy of an equal-dtype, equal-shape src is src element for element. Only for fused graphs (the
// pipeline adds it beside InlineScalarFills). TCCD_DISABLE_PASSES=fill-copy-folding turns it off.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class FillCopyFolding : public GraphPass {
 public:
  std::string_view name() const override { return "fill-copy-folding"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

// CastsBeforeViews (CUDA target): a dtype cast read through views of a tensor that a row
// reduction also reads is done on that tensor itself, before the views, so that the cast becomes
// one more output of the row kernel instead of a kernel of its own:
//
//   %e = aten::expand.default(%p, [16, 12, 512, 512])     (%p: f32[16,12,512,512], saved probs)
//   %v = aten::view.default(%e, [192, 512, 512])
//   %t = aten::transpose.int(%v, 1, 2)                    -> f32[192,512,512]{262144,1,512}
//   %c = aten::_to_copy.default(%t, dtype=bf16)           -> bf16[192,512,512]{262144,1,512}
//   %m = aten::bmm.default(%c, %dout)                     (dV = P^T @ dO)
//   %g = aten::_softmax_backward_data.default(%dp, %p, -1, f32)      (a row kernel reading %p)
// becomes
//   %c' = aten::_to_copy.default(%p, dtype=bf16)          -> bf16[16,12,512,512]{contiguous}
//   %e' = aten::expand.default(%c', [16, 12, 512, 512])
//   %v' = aten::view.default(%e', [192, 512, 512])
//   %t' = aten::transpose.int(%v', 1, 2)                  -> bf16[192,512,512]{262144,1,512}
//   %m  = aten::bmm.default(%t', %dout)
//
// That is attention's backward as AOTAutograd decomposes it under bf16 autocast (BERT): the f32
// softmax probabilities saved by the forward are cast to bf16 for the dV matmul, and the softmax
// backward reads them too. A cast is elementwise, so it commutes with views; the views keep their
// sizes and element strides and only change dtype. Row fusion (reduction_fusion.h) then takes the
// cast, which reads nothing the row kernel does not read already, as a sibling: the probabilities
// are read once instead of twice (BERT-base at 16 x 512, H200: a 72 us cast kernel per layer).
//
// Conditions: the cast changes only the dtype (no memory_format, device or layout other than
// strided); between it and the source tensor there are only views that carry no tensor operand
// besides their input and do not depend on the dtype (expand, view, _unsafe_view, reshape,
// transpose, permute); the cast's output has exactly the layout the same views give when applied
// to the cast source (preserve_format of a dense view: AOTAutograd's casts); the source is dense
// from offset 0; and a row reduction over the source's shape reads the source (otherwise the
// move gains nothing, and the pass leaves the graph alone).
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class CastsBeforeViews : public GraphPass {
 public:
  std::string_view name() const override { return "casts-before-views"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

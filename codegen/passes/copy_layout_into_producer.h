// CopyLayoutIntoProducer: a layout copy whose source is a pointwise op's output, read by nothing
// else, disappears; the op writes the copy's layout itself.
//
//   %m = aten::mul.Scalar(%t, 0.35)        -> f32[16,12,512,64]{393216,64,768,1}  (transposed)
//   %e = aten::expand.default(%m, [16,12,512,64])                  (broadcasts nothing)
//   %c = aten::clone.default(%e, memory_format=contiguous_format) -> f32[16,12,512,64]{contiguous}
//   %v = aten::_unsafe_view.default(%c, [192, 512, 64])            (the bmm operand)
// becomes
//   %m = aten::mul.Scalar(%t, 0.35)        -> f32[16,12,512,64]{contiguous}
//   %v = aten::_unsafe_view.default(%m, [192, 512, 64])
//
// Between the op and the clone there may also be a transpose or permute: the op then writes the
// layout whose permutation is the clone's, and the view, re-typed, stands for the clone:
//
//   %c = aten::_to_copy.default(%bmm_out, dtype=bf16) -> bf16[16,12,512,64]{contiguous}
//   %t = aten::transpose.int(%c, 1, 2)                  -> bf16[16,512,12,64]{393216,64,768,1}
//   %o = aten::clone.default(%t, memory_format=contiguous_format) -> bf16[16,512,12,64]{contiguous}
// becomes
//   %c = aten::_to_copy.default(%bmm_out, dtype=bf16) -> bf16[16,12,512,64]{393216,64,768,1}
//   %t = aten::transpose.int(%c, 1, 2)                  -> bf16[16,512,12,64]{contiguous}
//
// (attention's output, cast and transposed back from heads: one kernel instead of two).
//
// A reshape (view, _unsafe_view, reshape) may follow the transpose when the clone makes the
// result row-major contiguous: the op then writes the layout in which the transpose is row-major
// contiguous, and the reshape, re-typed contiguous, stands for the clone (T5's attention
// backward: dk cast to bf16, transposed from heads and merged to [B, S, H*D] for its projection's
// matmuls; a copy kernel per biased attention layer). TCCD_DISABLE_PASSES=
// copy-layout-through-reshapes keeps that clone.
//
// AOTAutograd's bmm decomposition of attention (q * scale, k^T * scale, v under bf16 autocast)
// emits exactly this: the traced op keeps its input's transposed strides (preserve_format) and the
// clone makes the batched-matmul operand contiguous. Without the pass the clone is a kernel of its
// own that reads and writes the whole tensor again (BERT-base forward at batch 16 x 512, H200:
// three such clones per layer, ~42 us each). A kernel writes whatever strides its output declares,
// so the producer can write the contiguous layout directly; that is only allowed where nobody else
// sees the producer's strides: the op has no other reader and is no graph output, and the expand
// (if any) broadcasts nothing and has no other reader either, as does a transpose or permute. The
// copy must keep dtype and sizes (a clone; a _to_copy without a dtype/device change is left to
// fusion) and write a dense layout. Runs on every device: the producer's strides are the graph's to
// choose wherever it becomes a kernel, and a producer that stays an ATen op is copied into its
// declared strides by the runtime.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class CopyLayoutIntoProducer : public GraphPass {
 public:
  // through_reshapes: also fold clone(reshape(transpose(op))) (above). Default: true.
  explicit CopyLayoutIntoProducer(bool through_reshapes = true)
      : through_reshapes_(through_reshapes) {}
  std::string_view name() const override { return "copy-layout-into-producer"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

 private:
  bool through_reshapes_;
};

}  // namespace tccd::codegen

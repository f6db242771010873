// PermutesBeforeCasts (CUDA target): a transpose or permute of a dtype cast's output, read by
// pointwise ops, is applied to the cast's input instead, so that the cast joins the kernel of
// those readers instead of being a kernel of its own:
//
//   %c = aten::_to_copy.default(%k, dtype=f32)   -> f32[16,12,512,64]{393216,64,768,1}
//   %t = aten::transpose.int(%c, -2, -1)         -> f32[16,12,64,512]{393216,64,1,768}
//   %m = aten::mul.Scalar(%t, 0.125)             -> f32[16,12,64,512]{contiguous}
// becomes
//   %t' = aten::transpose.int(%k, -2, -1)        -> bf16[16,12,64,512]{393216,64,1,768}
//   %c' = aten::_to_copy.default(%t', dtype=f32) -> f32[16,12,64,512]{393216,64,1,768}
//   %m  = aten::mul.Scalar(%c', 0.125)           (one kernel: reads bf16 %k transposed)
//
// That is attention's scaled key under bf16 autocast (AOTAutograd's decomposition: k^T * scale,
// made contiguous for the bmm, which CopyLayoutIntoProducer lets the mul write): a kernel group
// never spans a view, so the cast wrote an f32 copy of the keys in their own layout and the mul
// read it back transposed (BERT-base at 16 x 512, H200: 4 x 44 us for the mul, plus the cast).
// Now one kernel reads the bf16 keys once.
//
// Conditions: the cast changes only the dtype; its output has its input's sizes and strides
// (preserve_format of a dense input, so the permuted input has the permuted output's layout);
// the cast's only reader is the permute, which is no graph output and whose readers are all
// pointwise ops (a kernel to join); and the cast widens (the kernel then reads the narrower
// tensor) or its input is not a pointwise op's output (it is in memory anyway).
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class PermutesBeforeCasts : public GraphPass {
 public:
  std::string_view name() const override { return "permutes-before-casts"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

// Moves an expand (a stride-0 broadcast view) below the pointwise op that reads it, or drops it
// where the op broadcasts the unexpanded value to the same shape anyway, so that the op fuses with
// the kernel producing the value. A row reduction's backward (RMSNorm's, mean's) expands the
// per-row value to the row shape:
//
//   %s = sum(%p, [2], true)                 f32[2, 512, 1]      (a row kernel)
//   %t = mul(%s, ...)                       f32[2, 512, 1]      (its epilogue)
//   %e = expand(%t, [2, 512, 1024])         f32[2, 512, 1024]{512, 1, 0}
//   %d = div.Scalar(%e, 1024)               f32[2, 512, 1024]
//   %m = mul(%d, %x)                        %x: f32[2, 512, 1024]
// becomes
//   %d' = div.Scalar(%t, 1024)              f32[2, 512, 1]      (per-row epilogue)
//   %m  = mul(%d', %x)                      (broadcasts %d' itself: a row epilogue)
//
// The expand is an extern view step between the row kernel and the ops after it, so they were a
// kernel of their own (Llama's and T5's RMSNorm backward: 9 and 22 launches per training step
// that read the row sum back beside two f32 [tokens, hidden] tensors).
//
// For a pointwise op reading expand(%t) (%t's sizes broadcast to the expand's):
//  * when the op's other tensor operands and %t broadcast to the op's output shape, the op reads
//    %t directly (same value at every point: broadcasting is the expand);
//  * when the op reads nothing else of the output shape (a scalar op, a cast), it is computed on
//    %t and its value expanded, only if every reader of the op is a pointwise op (which reads any
//    strides, and takes the new expand by the rules above) and it is not a graph output.
// Ops whose value ignores their operands (zeros_like: the operand gives the shape) or needs the
// point's coordinates (dropout) are left alone.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class ExpandSinking : public GraphPass {
 public:
  std::string_view name() const override { return "expand-sinking"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

// ConvBiasPeel: a CUDA convolution's bias becomes a broadcast add after the convolution.
//
//   %y = aten::convolution.default(%x, %w, %b, stride, padding, dilation, transposed, opad, groups)
// becomes
//   %c = aten::convolution.default(%x, %w, None, ...)     (the same output type: %y's strides)
//   %v = aten::view.default(%b, [C, 1, ...])               (one 1 per spatial dim)
//   %e = aten::expand.default(%v, %y's sizes)              (strides 0 but along dim 1)
//   %y = aten::add.Tensor(%c, %e)                          (%y's type: channels-last stays so)
//
// Why: with a bias, ATen's cuDNN path runs the convolution and then adds the bias in a separate
// ATen kernel (a non-vectorised elementwise add over the whole output: ConvNeXt on the H200,
// 22 launches, 0.45 ms a training step). Inductor peels the bias off on GPUs for the same reason
// (torch/_inductor/kernel/conv.py, "peel off the bias, cudnn is slower with it"); the add is then
// a pointwise op that fuses with the convolution's readers (ConvNeXt: permute -> layer norm).
// A convolution read only by permutes (not a graph output) gets the add after each permute
// instead, in the permuted space (ConvNeXt's conv -> permute -> layer norm: the add then has the
// norm's iteration space and becomes the row kernel's prologue, one kernel for both).
// Numerics are Inductor's: the 16-bit convolution result is rounded once before the add (f32
// math in the kernel, rounded again), where cuDNN's fused bias rounds once.
//
// Which convolutions: CUDA, f32/bf16/f16, batched (input rank == weight rank), a bias of the
// output's dtype with one element per output channel, at least one output channel and element.
// Any groups, stride, dilation, transposed. The CPU keeps ATen's (mkldnn adds the bias inside
// its kernel; Inductor does not peel there either). Runs after ChannelsLastLayout, so the
// output's declared strides (the layout it chose) carry over to both new values.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class ConvBiasPeel : public GraphPass {
 public:
  std::string_view name() const override { return "conv-bias-peel"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

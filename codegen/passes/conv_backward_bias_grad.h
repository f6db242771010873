// ConvBackwardBiasGrad: a CUDA convolution backward's bias gradient becomes a sum of grad_output.
//
//   %g = aten::convolution_backward.default(%go, %x, %w, bias_sizes, ..., [a, b, true])
// becomes
//   %g = aten::convolution_backward.default(%go, %x, %w, bias_sizes, ..., [a, b, false])
//   %s = aten::sum.dim_IntList(%go, [0, 2, 3, ...])        (%g#2's type: [C] of grad's dtype)
// (for a channels-last %go: %p = permute(%go, [0, 2, 3, 1]) summed over [0, 1, 2], a column
// reduction that reads %go once in its storage order)
// and readers of %g#2 read %s. When neither a nor b is set the convolution backward goes away.
//
// Why: ATen's cuDNN path computes the bias gradient as a bf16 ATen sum (reduce_kernel: ConvNeXt
// on the H200, 22 launches, 0.9 ms a training step). As a graph sum it is a tccd reduction kernel
// (ReductionDimsToRows makes it rows or columns in grad_output's layout; a column sum of a
// channels-last gradient reads it once), fused with its producer where the fusion allows. Same
// as Inductor's decomposition (torch/_inductor/decomposition.py, convolution_backward, GPU only):
// the sum accumulates in f32 and is rounded once to the gradient's dtype.
//
// Which: CUDA, f32/bf16/f16, batched (grad_output rank == weight rank >= 3), the bias gradient
// [C] with C = grad_output's dim 1 > 0. The masked-off output becomes a 0-element placeholder
// (as the client serialises None). The CPU keeps ATen's (Inductor's decomposition is GPU-only).
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class ConvBackwardBiasGrad : public GraphPass {
 public:
  std::string_view name() const override { return "conv-backward-bias-grad"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

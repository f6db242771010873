// BatchNormInference: an inference (eval-mode) batch norm as pointwise ops over its input's shape
// (CUDA target), so that it fuses with its neighbours (the relu after it, a residual add, the
// cast to bf16) into one kernel instead of running ATen's kernel plus a kernel for the relu:
//
//   (out, _, _) = _native_batch_norm_legit_no_training(x, w, b, rm, rv, momentum, eps)
// becomes, with P(v) = expand(view(v, [C, 1, ..]), x.shape) (views: no data moves, and every
// new op is over x's shape so all of them join one kernel)
//   xf = _to_copy(x, f32)                                      (bf16/f16 inputs)
//   out = _to_copy((xf - P(rm)) * rsqrt(P(rv) + eps) * P(w) + P(b), x.dtype)
// ATen computes the same in the accumulation type (f32 for 16-bit inputs). Applied when the
// statistics outputs (empty tensors in eval mode) are unused, x is a float tensor of rank >= 2
// on CUDA and the parameters and statistics are float vectors of its channel count (w, b may be
// None).
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class BatchNormInference : public GraphPass {
 public:
  std::string_view name() const override { return "batch-norm-inference"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

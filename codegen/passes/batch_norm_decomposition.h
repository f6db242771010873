// Training batch norm, forward and backward, as row reductions with their pointwise work fused in
// (CUDA target), the way Inductor decomposes it, instead of ATen's three or four kernels per norm
// (batch_norm_collect_statistics, batch_norm_transform_input, batch_norm_backward_reduce/elemt).
//
// A norm over channel dim 1 of x [N, C, *] reduces over every other dim. The pass moves the channel
// dim first with a permute view (no data moves: the kernel reads x through its strides), so that
// per channel the statistics are a row reduction over the trailing dims (reduction_ops.h), and the
// normalisation is the row group's epilogue:
//
//   (out, save_mean, save_invstd, new_rm, new_rv) =
//       _native_batch_norm_legit_functional(x, w, b, rm, rv, True, momentum, eps)
// becomes
//   xp = permute(x, [1, 0, 2, ..])               [C, N, *] view
//   xf = _to_copy(xp, f32)                       (bf16/f16 inputs; statistics in f32 as ATen's)
//   var, mean = var_mean(xf, [1..], correction=0, keepdim=True)        [C, 1, ..]
//   rs = rsqrt(var + eps)
//   yp = _to_copy(((xf - mean) * rs) * view(w) + view(b), x.dtype)     strides: permuted NCHW
//   out = permute(yp, [1, 0, 2, ..])             contiguous again, as ATen returns it
//   save_mean = view(mean, [C]); save_invstd = view(rs, [C])
//   new_rm = view(rm) * (1 - momentum) + mean * momentum
//   new_rv = view(rv) * (1 - momentum) + var * n / (n - 1) * momentum
// and native_batch_norm_backward(g, x, w, rm, rv, save_mean, save_invstd, True, eps, mask) becomes
//   xhat = (xf - view(save_mean)) * view(save_invstd); gf = _to_copy(permute(g), f32)
//   sum_g = sum(gf, [1..], keepdim=True); sum_gx = sum(gf * xhat, [1..], keepdim=True)
//   grad_input = permute(_to_copy((gf - sum_g / n - xhat * sum_gx / n) * invstd * w, x.dtype))
//   grad_weight = view(sum_gx, [C]); grad_bias = view(sum_g, [C])
// (ATen's formulas: biased variance for normalising, unbiased for the running variance.)
//
// Applied only when the statistics reduction is one the CUDA backend lowers (ReductionAxesOf:
// sizes, row length; or SplitFactor: few very long rows, which SplitReductions splits in two
// stages later), x is contiguous (NCHW-style) f32/bf16/f16 on CUDA with rank >= 2, and the
// parameters are f32 vectors; otherwise the node stays ATen's. Runs after CudnnBatchNorm, which
// keeps the f32 forward cases eager gives to cuDNN.
//
// Accuracy (deploy/batch_norm_bench.py shapes, tests/python/test_gpu_training.py): against a
// float64 reference, forward outputs are as close as eager's bf16 kernels and the gradients closer
// (eager rounds the normalised value to bf16 before the residual/relu backward; this pass keeps it
// f32). A session once took this pass for a miscompile: a tiny ResNet-50 (32x32 images, batch 4)
// trained "differently from eager"; that configuration is chaotic (batch norms over 4 values per
// channel), with Inductor 0.36 and eager-f32 0.6 off eager-bf16's first loss. Compare against a
// higher-precision reference, not bit-for-bit with eager.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class BatchNormDecomposition : public GraphPass {
 public:
  std::string_view name() const override { return "batch-norm-decomposition"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

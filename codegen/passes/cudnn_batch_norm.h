// Training-mode batch norm through cuDNN, as eager PyTorch runs it.
//
// AOTAutograd hands over batch norm in its functional form,
// aten::_native_batch_norm_legit_functional (returns the new running stats instead of updating
// them), whose CUDA implementation is ATen's own two-pass kernels; eager PyTorch calls cuDNN for
// the same module (aten::cudnn_batch_norm), which is measured 2-3x faster on an H100 for a
// 32x64x56x56 f32 block. This pass rewrites
//   %n = _native_batch_norm_legit_functional(x, w, b, rm, rv, True, momentum, eps)
//        -> (out, save_mean, save_invstd, new_rm, new_rv)
// into
//   %c_rm = clone(rm); %c_rv = clone(rv)
//   %bn = cudnn_batch_norm(x, w, b, %c_rm, %c_rv, True, momentum, eps)
//        -> (out, save_mean, save_invstd, reserve)
// where cuDNN updates the clones in place, so new_rm/new_rv are %c_rm/%c_rv afterwards and the
// graph stays functional from the outside. cuDNN's saved mean and inverse std are what the
// backward graph's native_batch_norm_backward(train=True) reads, so the backward is unchanged.
//
// Applied only where eager would pick cuDNN as well and the layout is plain: CUDA, f32 input in
// contiguous NCHW (4-D), f32 1-D weight, bias and running stats, training, eps >= 1e-5 (cuDNN's
// minimum), batch <= 880801. The clones are pointwise ops the fusion pass may fuse; nothing but
// the cuDNN op and the graph outputs reads them.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class CudnnBatchNorm : public GraphPass {
 public:
  std::string_view name() const override { return "cudnn-batch-norm"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

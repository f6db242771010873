// BatchNormStatsInPlace: a training batch norm that stays an ATen op updates the running
// statistics in their buffers itself, instead of returning new ones that copy_ steps write back.
//
//   %n = aten::_native_batch_norm_legit_functional.default(%x, %w, %b, %rm, %rv, True, 0.1, 1e-05)
//        -> (out, save_mean, save_invstd, new_rm, new_rv)
//   %c0 = aten::copy_.default(%rm, %n.3)
//   %c1 = aten::copy_.default(%rv, %n.4)
// becomes
//   %n = aten::_native_batch_norm_legit.default(%x, %w, %b, %rm, %rv, True, 0.1, 1e-05)
//        -> (out, save_mean, save_invstd)                    (updates %rm and %rv in place)
// and readers of new_rm / new_rv (or of the copies' results) read %rm / %rv.
//
// %rm and %rv are graph inputs (AOTAutograd's kept input mutations, keep_inference_input_
// mutations) copied into exactly once, from this node's outputs of their exact type; no node
// between the norm and the copy reads them or a view of them (those saw the old statistics).
// ResNet-50 on the CPU: two extern copy_ steps fewer per norm and call (the CUDA norms are
// rewritten earlier, by CudnnBatchNorm and BatchNormDecomposition; their statistics come from
// kernels, and MutationsIntoProducers writes those in place). Runs after the backend's passes.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class BatchNormStatsInPlace : public GraphPass {
 public:
  std::string_view name() const override { return "batch-norm-stats-in-place"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

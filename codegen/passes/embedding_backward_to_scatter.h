// EmbeddingBackwardToScatter: embedding_dense_backward as a generated scatter-add kernel (CUDA
// target), the way Inductor decomposes it (new_zeros + index_put_(accumulate=True), an atomic_add
// in Triton):
//
//   %gw = aten::embedding_dense_backward(grad [..., E], indices [...], V, padding_idx, false)
// becomes
//   %acc = tccd::embedding_scatter_add(grad, indices, V, padding_idx)      f32 [V, E]
//   %gw  = aten::_to_copy(%acc, dtype=bf16)                                only for 16-bit grads
//
// One zero fill (the launcher's) and one kernel of f32 atomics where ATen's CUDA kernel sorts the
// indices and runs a segmented reduction (about ten launches). How the result differs from
// eager's: the f32 sums are the same terms added in another order, and with float atomics that
// order varies from run to run, so the gradient is not bitwise reproducible (ATen's sort-based
// kernel is); 16-bit gradients are accumulated in f32 and rounded once, as in ATen.
//
// Not applied (the ATen op stays an extern step) with scale_grad_by_freq (it needs per-index
// counts), under torch.use_deterministic_algorithms(True) (the client says so in
// CompileOptions.extra["deterministic_algorithms"]; Inductor falls back to ATen then too), or
// for shapes scatter_ops.h does not take.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class EmbeddingBackwardToScatter : public GraphPass {
 public:
  std::string_view name() const override { return "embedding-backward-to-scatter"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

// Moves a pointwise op below the reshape that reads it, so that the op becomes the prologue of
// the kernel reading the reshape, usually a row reduction (CUDA target):
//
//   %c = _to_copy(%x, dtype=f32)            bf16[2, 512, 50257] -> f32  (%x: a graph input)
//   %v = view(%c, [1024, 50257])
//   %l = _log_softmax(%v, 1)
// becomes
//   %x' = view(%x, [1024, 50257])
//   %c' = _to_copy(%x', dtype=f32)          (read, cast and reduced by the log_softmax's kernel)
//   %l  = _log_softmax(%c', 1)
//
// Without it the op is a kernel of its own that writes its whole output (GPT-2's loss forward:
// the f32 copy of the logits, 196 MiB at the zoo's small batch) for the reduction to read back:
// a kernel's iteration space is one shape, so a group never spans a reshape. The mirror image of
// ReshapeSinking, which moves a pointwise op after a reshape onto the kernel before it (an
// epilogue); to stay out of its way the op's tensor operands must not be outputs of ops that
// become kernels (they are graph inputs or extern results: matmuls, ATen ops), and they must be
// contiguous tensors of the op's shape or 0-dim. The reshape must be of a contiguous tensor
// (view, _unsafe_view, reshape), the op read only by such reshapes (each takes a copy of the op:
// a cast recomputed per reader costs nothing, a written f32 copy costs its bytes), and every
// reader of the reshape an op
// that becomes (part of) a kernel: a row reduction, or a pointwise op such as the x - logsumexp(x)
// of a decomposed log_softmax, which its own row kernel then takes in (a reader that is an ATen
// op would read the op's output as written, so nothing is gained there).
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class ReshapeHoisting : public GraphPass {
 public:
  std::string_view name() const override { return "reshape-hoisting"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

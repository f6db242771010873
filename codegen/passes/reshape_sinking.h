// Moves a reshape below the pointwise op that reads it, so that the op fuses with the kernel
// producing the reshaped tensor:
//
//   %v = view(%u, [2, 512, 50257])          (%u: f32[1024, 50257], a row kernel's output)
//   %c = _to_copy(%v, dtype=bf16)           -> bf16[2, 512, 50257]
// becomes
//   %c' = _to_copy(%u, dtype=bf16)          -> bf16[1024, 50257]   (the row kernel's epilogue)
//   %c  = view(%c', [2, 512, 50257])
//
// Without it the f32 tensor is written in full and read back by a kernel of its own (GPT-2's
// loss backward: 206 MB of f32 gradient per step, and a launch); a kernel's iteration space is
// one shape, so a group never spans a reshape. The reshape must be one of contiguous tensors
// (same element order: view, _unsafe_view, reshape), the op's other tensor operands must be
// contiguous tensors of the reshaped shape (viewed back as well), 0-dim, or broadcast over
// trailing dims both shapes share (a bias); the op's output contiguous. Only done when %u is
// produced by an op that becomes a kernel itself (a pointwise op; on CUDA also a row reduction):
// moving a pointwise op off a matmul's output would only split it from its other pointwise
// neighbours. Applied in graph order, so chains (view -> cast -> mul) move op by op.
#pragma once

#include "codegen/ir/graph.h"
#include "codegen/passes/pass.h"

namespace tccd::codegen {

class ReshapeSinking : public GraphPass {
 public:
  explicit ReshapeSinking(ir::DeviceType device) : device_(device) {}
  std::string_view name() const override { return "reshape-sinking"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

 private:
  ir::DeviceType device_;
};

}  // namespace tccd::codegen

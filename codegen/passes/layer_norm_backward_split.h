// Splits a layer norm backward that wants grad_input and a parameter gradient into two nodes of
// the same op: one with output_mask [true, false, false] (a row reduction: per row it needs
// sum(g*w) and sum(g*w*x_hat)) and one with [false, w, b] (a column reduction over the leading
// dims: grad_weight = sum of g*x_hat, grad_bias = sum of g). One kernel cannot do both: the row
// kernel holds a row, the column kernel streams over all rows. Each half is still the ATen op,
// so a half that no kernel takes runs as an extern step with the same result. Masked-off outputs
// are 0-element placeholders nothing reads (client serialize.py, _absent_output).
//
// CUDA only (the CPU target never forms reduction kernels, so splitting would just run ATen's
// kernel twice there). The new node follows the original; later nodes are renumbered.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class LayerNormBackwardSplit : public GraphPass {
 public:
  std::string_view name() const override { return "layer-norm-backward-split"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

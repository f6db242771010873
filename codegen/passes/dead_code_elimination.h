// Removes nodes whose outputs nothing reads, when the op is known to be free of side effects
// (codegen/ops/op_properties.h: pure ops, e.g. pointwise, views, reductions, matmuls; never
// in-place or random ops). Renumbers the remaining nodes.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class DeadCodeElimination : public GraphPass {
 public:
  std::string_view name() const override { return "dead-code-elimination"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

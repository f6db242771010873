// Turns one fusion group into a PointwiseKernel: loads of the group's inputs, the lowered body
// of every member in order, stores of the escaping values.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "codegen/ir/graph.h"
#include "codegen/kernel/pointwise_kernel.h"
#include "codegen/passes/fusion.h"

namespace tccd::codegen {

absl::StatusOr<PointwiseKernel> BuildPointwiseKernel(const ir::Graph& graph,
                                                     const FusionGroup& group,
                                                     const std::string& name);

}  // namespace tccd::codegen

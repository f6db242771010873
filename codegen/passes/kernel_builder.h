// Turns one fusion group into a PointwiseKernel: loads of the group's inputs, the lowered body
// of every member in order, stores of the escaping values.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "codegen/ir/graph.h"
#include "codegen/kernel/pointwise_kernel.h"
#include "codegen/passes/fusion.h"

namespace tccd::codegen {

// A row-reduction group (group.num_reduced_dims > 0) becomes a kernel with a reduction section
// (BuildRowReductionKernel, reduction_kernel_builder.cc).
absl::StatusOr<PointwiseKernel> BuildPointwiseKernel(const ir::Graph& graph,
                                                     const FusionGroup& group,
                                                     const std::string& name);

absl::StatusOr<PointwiseKernel> BuildRowReductionKernel(const ir::Graph& graph,
                                                        const FusionGroup& group,
                                                        const std::string& name);

}  // namespace tccd::codegen

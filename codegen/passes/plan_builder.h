// The schedule of a partitioned graph: value ids (inputs first, then each step's outputs in
// order), one step per partition schedule entry (a kernel per fused group, each with its launch
// info; an extern op per other node). BuildPlan adds the release steps and serialises it.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/ir/graph.h"
#include "codegen/kernel/pointwise_kernel.h"
#include "codegen/passes/fusion.h"
#include "codegen/schedule/schedule.h"
#include "tccd/v1/tccd.pb.h"

namespace tccd::codegen {

struct NativeTarget {
  std::string artifact;     // artifact name holding the kernels, e.g. "kernels.so"
  std::string abi;          // "tccd-cpu-1"
  std::string kernel_kind;  // KernelInfo.kind, e.g. "cpu_pointwise_loop"
  std::string row_reduction_kind = "cuda_row_reduction";  // KernelInfo.kind of row reductions
  // KernelInfo.kind of index-aware kernels (kIndex/kGather): "<kernel_kind>_index". Their gather
  // operands' stride rows are not iteration-space strides, so a client must not recompute them
  // from a tensor that arrives in another layout (it copies such inputs into the declared one).
};

// `kernels[g]` is the kernel of partition.groups[g]. No release steps (ReleaseAfterLastUse).
absl::StatusOr<schedule::Schedule> BuildSchedule(const ir::Graph& graph, const Partition& partition,
                                                 const std::vector<PointwiseKernel>& kernels,
                                                 const NativeTarget& native);

// BuildSchedule, release steps after every value's last use, serialised.
absl::StatusOr<v1::Plan> BuildPlan(const ir::Graph& graph, const Partition& partition,
                                   const std::vector<PointwiseKernel>& kernels,
                                   const NativeTarget& native);

// Strides of a tensor of type `type` viewed in iteration space `shape` (right-aligned
// broadcasting: stride 0 where the tensor has no such dim or size 1).
std::vector<int64_t> IterationStrides(const ir::TensorType& type,
                                      const std::vector<int64_t>& shape);

// A gather operand's stride row (kernel/pointwise_kernel.h, "Index-aware kernels"): its own
// strides, dim k in slot k, zero-padded to the iteration rank.
std::vector<int64_t> GatherOperandStrides(const ir::TensorType& type,
                                          const std::vector<int64_t>& shape);

}  // namespace tccd::codegen

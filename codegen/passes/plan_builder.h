// Writes the tccd.v1.Plan for a partitioned graph: plan value ids, one step per schedule entry
// (a NativeCall per fused group, an ExternCall per extern node), and release lists so the client
// frees every intermediate right after its last use.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/ir/graph.h"
#include "codegen/kernel/pointwise_kernel.h"
#include "codegen/passes/fusion.h"
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

// `kernels[g]` is the kernel of partition.groups[g].
absl::StatusOr<v1::Plan> BuildPlan(const ir::Graph& graph, const Partition& partition,
                                   const std::vector<PointwiseKernel>& kernels,
                                   const NativeTarget& native);

// Strides of a tensor of type `type` viewed in iteration space `shape` (right-aligned
// broadcasting: stride 0 where the tensor has no such dim or size 1).
std::vector<int64_t> IterationStrides(const ir::TensorType& type, const std::vector<int64_t>& shape);

// A gather operand's stride row (kernel/pointwise_kernel.h, "Index-aware kernels"): its own
// strides, dim k in slot k, zero-padded to the iteration rank.
std::vector<int64_t> GatherOperandStrides(const ir::TensorType& type, const std::vector<int64_t>& shape);

}  // namespace tccd::codegen

// The order in which a plain pointwise kernel walks its iteration space.
//
// A kernel iterates its shape row-major: the last dim is the one adjacent threads step along.
// When every operand is stored in another order, e.g. BERT's four f32 attention-probability
// tensors cast to bf16 through a transposed view for P^T @ dO (strides [262144, 1, 512] in a
// [192, 512, 512] space), adjacent threads touch addresses a whole row apart and the kernel runs
// ~20x below bandwidth (8.4 ms instead of ~0.4 ms per step at the zoo's large batch on an H100).
// ChooseLoopOrder finds a permutation of the dims under which every operand is laid out
// row-major (its non-broadcast strides non-increasing), so the kernel takes the contiguous,
// vectorised path. A real transpose (operands disagree) keeps the graph's order: that needs a
// tiled kernel, not a loop order.
//
// Only plain pointwise kernels are reordered: a reduction's reduced dims and an index kernel's
// coordinates are part of its meaning. A reordered kernel's launch states its shape and strides
// in kernel order, so a runtime that meets an input in another layout must copy it into the
// declared one rather than recompute strides by broadcasting (KernelInfo.kind "*_reordered").
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/ir/graph.h"
#include "codegen/kernel/pointwise_kernel.h"
#include "codegen/passes/fusion.h"

namespace tccd::codegen {

// Kernel dim i is group dim order[i]; empty when the group's own order is already right (or the
// kernel may not be reordered).
std::vector<int> ChooseLoopOrder(const ir::Graph& graph, const FusionGroup& group,
                                 const PointwiseKernel& kernel);

// v permuted into kernel order: out[i] = v[order[i]]; v itself when order is empty.
std::vector<int64_t> InLoopOrder(const std::vector<int64_t>& v, const std::vector<int>& order);

}  // namespace tccd::codegen

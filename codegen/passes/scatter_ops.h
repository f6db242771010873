// Scatter ops: graph nodes whose kernel adds values into an output at computed coordinates
// (kernel IR kScatterAdd, "Scatter kernels" in kernel/pointwise_kernel.h). Today one op:
//
//   tccd::embedding_scatter_add.default(grad [..., E], indices [...], num_weights V, padding_idx)
//     -> f32 [V, E]
//   out[indices[p], e] += grad[p, e] for every point p of indices whose index is in [0, V) and
//   not padding_idx (-1: none), from zero: embedding_dense_backward without
//   scale_grad_by_freq, accumulated in f32 (embedding_backward_to_scatter.h makes it).
//
// A scatter kernel iterates over the *values'* space (grad's sizes), not its output's, and its
// output is complete only after the whole kernel: so a scatter node is a fusion group of its own
// that nothing joins (fusion.cc), its grad loaded as an ordinary operand and its indices
// gathered at the point's leading coordinates. CUDA only (the CPU keeps ATen's op).
#pragma once

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "codegen/ir/graph.h"
#include "codegen/passes/pointwise_ops.h"

namespace tccd::codegen {

inline constexpr char kEmbeddingScatterAddTarget[] = "tccd::embedding_scatter_add.default";

// True if `node` is a scatter op this library lowers with the arguments it has.
bool IsScatterOp(const ir::Graph& graph, const ir::Node& node);

// The iteration space of a scatter op's kernel (the scattered values' sizes).
std::vector<int64_t> ScatterIterationShape(const ir::Graph& graph, const ir::Node& node);

// The tensors a scatter op reads by gather (its indices).
std::vector<ir::ValueRef> ScatterGatheredRefs(const ir::Node& node);

// Lowers a node IsScatterOp accepted into `builder`: kScatterAdd into kernel output `output`.
// `input_of` gives the kernel input index of a gathered tensor, `value_of` the held value of a
// loaded one. The kernel's scatter_elements is the caller's to set (the output's numel).
absl::Status LowerScatterOp(const ir::Graph& graph, const ir::Node& node, int output,
                            const std::function<int(const ir::ValueRef&)>& input_of,
                            const std::function<int(const ir::ValueRef&)>& value_of,
                            PwBuilder& builder);

}  // namespace tccd::codegen

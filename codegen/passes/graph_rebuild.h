// Rebuilding a graph node by node, for passes that replace nodes with several new ones: the old
// node's outputs map to values of the new graph, and later arguments are remapped through that.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "codegen/ir/graph.h"
#include "codegen/ops/op_properties.h"
#include "codegen/kernel/pointwise_kernel.h"  // IsF32OrHalf, IsIndexDType: kernel-IR dtype rules

namespace tccd::codegen {

// (old node, output) -> its value in the new graph.
using RebuildMap = absl::flat_hash_map<std::pair<int, int>, ir::Arg>;

// A list-of-ints argument ([1, 0, 2]).
ir::Arg IntListArg(const std::vector<int64_t>& values);

// Appends `node` to `out`; its first output.
ir::Arg AppendNode(ir::Graph& out, ir::Node node);

// Appends a one-output node `target(args, kwargs) -> type`; its value.
ir::Arg EmitOp(ir::Graph& out, std::string target, std::vector<ir::Arg> args, ir::TensorType type,
               std::vector<ir::NamedArg> kwargs = {});

// A contiguous tensor type from offset 0.
ir::TensorType DenseType(ir::DType dtype, std::vector<int64_t> sizes, ir::DeviceType device);

// arange(n) of `dtype` on `device`: the class index of the loss rewrites.
ir::Arg EmitArange(ir::Graph& out, int64_t n, ir::DType dtype, ir::DeviceType device);

// unsqueeze(vector, 1): [N] -> [N, 1], a view.
ir::Arg EmitColumn(ir::Graph& out, const ir::Arg& vector);

// The int argument at position `i`, or nullopt (absent or not an int).
std::optional<int64_t> IntArgAt(const ir::Node& node, size_t i);

// A reshape of a contiguous tensor (view, _unsafe_view, reshape): same element order.
// (op_properties.h: ViewKind::kReshape.)
bool IsReshapeTarget(const std::string& target);

// The permutation a permute, transpose or t node (op_properties.h: ViewKind::kPermute) applies
// to its input of rank `rank` (output dim i is input dim perm[i]), normalised (each dim once, in
// [0, rank)); dims given by position or keyword. nullopt for any other node, or dims that are not
// constants in range.
std::optional<std::vector<int64_t>> PermutationOf(const ir::Node& node, int64_t rank);

// Contiguous from offset 0.
bool IsPlain(const ir::TensorType& t);

// Rows padded: `t` is contiguous but for the stride of its last dimension's rows, which is at
// least the row length (the first N columns of a zero-padded [.., N8] matmul product, GPT-2's
// logits with TCCD_PADDED_OUTPUTS). The row stride, or nullopt (contiguous tensors included:
// their row stride is the row length).
std::optional<int64_t> PaddedRowStride(const ir::TensorType& t);

// The strides of `sizes` laid over rows of stride `row_stride` (the last dimension is the row,
// the leading ones split or merge the row count); nullopt unless sizes is [..., n] with `rows`
// rows in all.
std::optional<std::vector<int64_t>> PaddedRowViewStrides(const std::vector<int64_t>& sizes,
                                                         int64_t rows, int64_t n,
                                                         int64_t row_stride);

// The ids of the nodes whose outputs the graph returns (rewrites leave those nodes as they are).
std::set<int> ReturnedNodes(const ir::Graph& graph);

// Replaces every reference to an old node's output in `arg` (through lists) by its new value.
void RemapRefs(ir::Arg& arg, const RebuildMap& map);

// Rebuilds `graph`: every node, its arguments remapped into the new graph, is offered to
// `rewrite(out, node)`, which may append nodes to `out` and return the new values of the node's
// outputs; on nullopt (with `out` untouched) the node is copied. Returns whether any node was
// rewritten; `graph` is left as it was when none was.
bool RebuildGraph(ir::Graph& graph, const std::function<std::optional<std::vector<ir::Arg>>(
                                        ir::Graph& out, const ir::Node& node)>& rewrite);

}  // namespace tccd::codegen

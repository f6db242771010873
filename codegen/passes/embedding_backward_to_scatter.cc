// EmbeddingBackwardToScatter (see embedding_backward_to_scatter.h).
#include "codegen/passes/embedding_backward_to_scatter.h"

#include <optional>
#include <vector>

#include "codegen/passes/graph_rebuild.h"
#include "codegen/passes/scatter_ops.h"

namespace tccd::codegen {
namespace {

constexpr char kEmbeddingDenseBackward[] = "aten::embedding_dense_backward.default";

// The arguments of an embedding_dense_backward this pass rewrites: (grad, indices, num_weights,
// padding_idx, scale_grad_by_freq) positional, scale_grad_by_freq false.
bool Rewritable(const ir::Node& node) {
  if (node.target != kEmbeddingDenseBackward || node.args.size() != 5 || !node.kwargs.empty() ||
      node.outputs.size() != 1 || !node.args[0].is_ref() || !node.args[1].is_ref() ||
      !IntArgAt(node, 2) || !IntArgAt(node, 3))
    return false;
  const bool* by_freq = std::get_if<bool>(&node.args[4].v);
  const ir::TensorType& out = node.outputs[0];
  return by_freq != nullptr && !*by_freq && out.device == ir::DeviceType::kCuda &&
         IsF32OrHalf(out.dtype) && out.IsContiguous() && out.storage_offset == 0;
}

}  // namespace

absl::StatusOr<bool> EmbeddingBackwardToScatter::Run(ir::Graph& graph) {
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        if (!Rewritable(node)) return std::nullopt;
        const ir::TensorType& result = node.outputs[0];
        // Checked on a node of the new graph (its arguments are remapped) before appending it.
        ir::Node scatter;
        scatter.target = kEmbeddingScatterAddTarget;
        scatter.args = {node.args[0], node.args[1], node.args[2], node.args[3]};
        scatter.outputs = {DenseType(ir::DType::kF32, result.sizes, result.device)};
        if (out.type_of(node.args[0].ref()).dtype != result.dtype) return std::nullopt;
        out.nodes.push_back(scatter);
        const bool ok = IsScatterOp(out, out.nodes.back());
        out.nodes.pop_back();
        if (!ok) return std::nullopt;
        ir::Arg acc = AppendNode(out, std::move(scatter));
        if (result.dtype == ir::DType::kF32) return std::vector<ir::Arg>{acc};
        return std::vector<ir::Arg>{EmitOp(out, "aten::_to_copy.default", {acc}, result,
                                           {{"dtype", ir::Arg{result.dtype}}})};
      });
}

}  // namespace tccd::codegen

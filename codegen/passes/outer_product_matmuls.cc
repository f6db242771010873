// OuterProductMatmuls (see outer_product_matmuls.h).
#include "codegen/passes/outer_product_matmuls.h"

#include <optional>
#include <set>
#include <vector>

#include "codegen/passes/graph_rebuild.h"

namespace tccd::codegen {

absl::StatusOr<bool> OuterProductMatmuls::Run(ir::Graph& graph) {
  const std::set<int> graph_outputs = ReturnedNodes(graph);
  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        const bool mm = node.target == "aten::mm.default";
        if ((!mm && node.target != "aten::bmm.default") || graph_outputs.count(id) ||
            node.args.size() != 2 || !node.kwargs.empty() || node.outputs.size() != 1 ||
            !node.args[0].is_ref() || !node.args[1].is_ref())
          return std::nullopt;
        const ir::TensorType& a = out.type_of(node.args[0].ref());
        const ir::TensorType& b = out.type_of(node.args[1].ref());
        const ir::TensorType& type = node.outputs[0];
        const int64_t rank = mm ? 2 : 3;
        if (a.rank() != rank || b.rank() != rank || type.rank() != rank ||
            !ir::IsFloatingPoint(type.dtype) || a.dtype != type.dtype || b.dtype != type.dtype ||
            a.sizes[rank - 1] != 1 || b.sizes[rank - 2] != 1)
          return std::nullopt;
        // mul broadcasts [.., M, 1] * [.., 1, N] to [.., M, N]; bmm's batch sizes are equal.
        std::vector<int64_t> sizes = a.sizes;
        sizes[rank - 1] = b.sizes[rank - 1];
        if (!mm && a.sizes[0] != b.sizes[0]) return std::nullopt;
        if (sizes != type.sizes) return std::nullopt;
        return std::vector<ir::Arg>{EmitOp(out, "aten::mul.Tensor", {node.args[0], node.args[1]},
                                           DenseType(type.dtype, type.sizes, type.device))};
      });
}

}  // namespace tccd::codegen

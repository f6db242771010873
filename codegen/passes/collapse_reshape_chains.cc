// CollapseReshapeChains (see collapse_reshape_chains.h).
#include "codegen/passes/collapse_reshape_chains.h"

#include <algorithm>
#include <optional>
#include <set>
#include <vector>

#include "codegen/passes/graph_rebuild.h"

namespace tccd::codegen {

absl::StatusOr<bool> CollapseReshapeChains::Run(ir::Graph& graph) {
  std::set<int> outputs;
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) {
      if (!r.is_input()) outputs.insert(r.node);
    });
  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        if (outputs.count(id) || !IsReshapeTarget(node.target) || node.outputs.size() != 1 ||
            node.args.empty() || !node.args[0].is_ref() || !IsPlain(node.outputs[0]))
          return std::nullopt;
        const std::vector<int64_t>& sizes = node.outputs[0].sizes;
        // Run-time sizes are not compared here: their reshapes keep their size arguments.
        if (std::any_of(sizes.begin(), sizes.end(), [](int64_t s) { return s < 0; }))
          return std::nullopt;
        // The operand, already remapped: a chain collapses from its start.
        ir::ValueRef source = node.args[0].ref();
        bool through_reshape = false;
        if (!source.is_input()) {
          const ir::Node& inner = out.nodes[source.node];
          if (IsReshapeTarget(inner.target) && inner.outputs.size() == 1 && !inner.args.empty() &&
              inner.args[0].is_ref() && IsPlain(inner.outputs[0]) &&
              IsPlain(out.type_of(inner.args[0].ref()))) {
            source = inner.args[0].ref();
            through_reshape = true;
          }
        }
        const ir::TensorType& from = out.type_of(source);
        if (!IsPlain(from) || from.dtype != node.outputs[0].dtype) return std::nullopt;
        if (from.sizes == sizes) return std::vector<ir::Arg>{ir::Arg{source}};
        if (!through_reshape) return std::nullopt;
        return std::vector<ir::Arg>{EmitOp(out, "aten::view.default",
                                           {ir::Arg{source}, IntListArg(sizes)}, node.outputs[0])};
      });
}

}  // namespace tccd::codegen

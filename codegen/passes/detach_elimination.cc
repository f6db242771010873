// DetachElimination (see detach_elimination.h).
#include "codegen/passes/detach_elimination.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codegen/passes/graph_rebuild.h"

namespace tccd::codegen {
namespace {

// Every `target(x)` that is no graph output becomes x.
bool EliminateIdentity(ir::Graph& graph, const std::string& target) {
  std::set<int> outputs;
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) {
      if (!r.is_input()) outputs.insert(r.node);
    });
  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph&, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        if (node.target != target || outputs.count(id) || node.args.size() != 1 ||
            !node.args[0].is_ref() || !node.kwargs.empty() || node.outputs.size() != 1)
          return std::nullopt;
        return std::vector<ir::Arg>{
            node.args[0]};  // already remapped: a chain of detaches collapses
      });
}

}  // namespace

absl::StatusOr<bool> DetachElimination::Run(ir::Graph& graph) {
  return EliminateIdentity(graph, "aten::detach.default");
}

absl::StatusOr<bool> AliasElimination::Run(ir::Graph& graph) {
  return EliminateIdentity(graph, "aten::alias.default");
}

}  // namespace tccd::codegen

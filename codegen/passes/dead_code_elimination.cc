// DeadCodeElimination (see dead_code_elimination.h).
#include "codegen/passes/dead_code_elimination.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "codegen/ops/op_properties.h"

namespace tccd::codegen {
namespace {

void Renumber(ir::Arg& arg, const std::vector<int>& new_id) {
  if (arg.is_ref()) {
    ir::ValueRef& r = std::get<ir::ValueRef>(arg.v);
    if (!r.is_input()) r.node = new_id[r.node];
  } else if (auto* list = std::get_if<ir::ArgList>(&arg.v)) {
    for (ir::Arg& a : *list) Renumber(a, new_id);
  }
}

}  // namespace

absl::StatusOr<bool> DeadCodeElimination::Run(ir::Graph& graph) {
  const int n = static_cast<int>(graph.nodes.size());
  std::vector<bool> live(n, false);
  auto mark = [&](const ir::ValueRef& r) {
    if (!r.is_input()) live[r.node] = true;
  };
  for (const ir::Arg& a : graph.outputs) ir::ForEachRef(a, mark);
  for (int id = n - 1; id >= 0; --id) {
    const ir::Node& node = graph.nodes[id];
    bool removable = IsSideEffectFree(node.target);
    if (!removable) live[id] = true;
    if (!live[id]) continue;
    ir::ForEachInput(node, mark);
  }
  std::vector<int> new_id(n, -1);
  int next = 0;
  for (int id = 0; id < n; ++id)
    if (live[id]) new_id[id] = next++;
  if (next == n) return false;
  std::vector<ir::Node> kept;
  kept.reserve(next);
  for (int id = 0; id < n; ++id) {
    if (!live[id]) continue;
    ir::Node node = std::move(graph.nodes[id]);
    for (ir::Arg& a : node.args) Renumber(a, new_id);
    for (ir::NamedArg& kw : node.kwargs) Renumber(kw.value, new_id);
    kept.push_back(std::move(node));
  }
  graph.nodes = std::move(kept);
  for (ir::Arg& a : graph.outputs) Renumber(a, new_id);
  return true;
}

}  // namespace tccd::codegen

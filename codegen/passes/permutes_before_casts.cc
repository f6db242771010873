// PermutesBeforeCasts (see permutes_before_casts.h).
#include "codegen/passes/permutes_before_casts.h"

#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "codegen/passes/graph_rebuild.h"
#include "codegen/passes/pointwise_ops.h"

namespace tccd::codegen {
namespace {

bool IsPermute(const ir::Node& node) {
  if (ViewKindOf(node.target) != ViewKind::kPermute) return false;
  if (node.outputs.size() != 1 || node.args.empty() || !node.args[0].is_ref()) return false;
  int refs = 0;
  ir::ForEachInput(node, [&](const ir::ValueRef&) { ++refs; });
  return refs == 1;
}

// A _to_copy that changes the dtype only, keeping its input's layout.
bool IsLayoutKeepingCast(const ir::Graph& graph, const ir::Node& node) {
  if (node.target != "aten::_to_copy.default" || node.args.size() != 1 || !node.args[0].is_ref() ||
      node.kwargs.size() != 1 || node.kwargs[0].name != "dtype" || node.outputs.size() != 1)
    return false;
  const ir::TensorType& in = graph.type_of(node.args[0].ref());
  const ir::TensorType& out = node.outputs[0];
  return in.sizes == out.sizes && in.strides == out.strides &&
         in.storage_offset == out.storage_offset && in.device == out.device;
}

}  // namespace

absl::StatusOr<bool> PermutesBeforeCasts::Run(ir::Graph& graph) {
  const int n = static_cast<int>(graph.nodes.size());
  std::vector<std::vector<int>> readers(n);
  for (int id = 0; id < n; ++id)
    ir::ForEachInput(graph.nodes[id], [&](const ir::ValueRef& r) {
      if (!r.is_input()) readers[r.node].push_back(id);
    });
  std::vector<bool> is_output(n, false);
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) {
      if (!r.is_input()) is_output[r.node] = true;
    });

  std::set<int> permutes;  // permutes whose cast moves below them
  for (int id = 0; id < n; ++id) {
    const ir::Node& permute = graph.nodes[id];
    if (!IsPermute(permute) || is_output[id] || readers[id].empty()) continue;
    const ir::ValueRef c = permute.args[0].ref();
    if (c.is_input() || is_output[c.node] || readers[c.node].size() != 1) continue;
    const ir::Node& cast = graph.nodes[c.node];
    if (!IsLayoutKeepingCast(graph, cast)) continue;
    bool pointwise_readers = true;
    for (int r : readers[id])
      pointwise_readers = pointwise_readers && IsPointwiseOp(graph, graph.nodes[r]);
    if (!pointwise_readers) continue;
    const ir::ValueRef x = cast.args[0].ref();
    const bool widens =
        ir::DTypeBytes(cast.outputs[0].dtype) > ir::DTypeBytes(graph.type_of(x).dtype);
    if (!widens && !x.is_input() && IsPointwiseOp(graph, graph.nodes[x.node])) continue;
    permutes.insert(id);
  }
  if (permutes.empty()) return false;

  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        if (!permutes.count(id)) return std::nullopt;
        // The cast was copied into `out` already (it dies: the permute was its only reader).
        const ir::Node cast = out.nodes[node.args[0].ref().node];
        ir::Node permute = node;
        permute.args[0] = cast.args[0];
        permute.outputs[0].dtype = out.type_of(cast.args[0].ref()).dtype;
        ir::Node moved = cast;
        moved.args[0] = AppendNode(out, std::move(permute));
        moved.outputs[0] = node.outputs[0];
        return std::vector<ir::Arg>{AppendNode(out, std::move(moved))};
      });
}

}  // namespace tccd::codegen

// CastsBeforeViews (see casts_before_views.h).
#include "codegen/passes/casts_before_views.h"

#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "codegen/passes/graph_rebuild.h"
#include "codegen/passes/pointwise_ops.h"
#include "codegen/passes/reduction_ops.h"

namespace tccd::codegen {
namespace {

// Views whose output type is the input's sizes and element strides rearranged, whatever the
// dtype (reshapes, permutes, expands), and whose other arguments are constants (sizes, dims).
bool IsDtypeFreeView(const ir::Node& node) {
  const ViewKind kind = ViewKindOf(node.target);
  if ((kind != ViewKind::kReshape && kind != ViewKind::kPermute && kind != ViewKind::kExpand) ||
      node.outputs.size() != 1 || node.args.empty() || !node.args[0].is_ref())
    return false;
  int refs = 0;
  ir::ForEachInput(node, [&](const ir::ValueRef&) { ++refs; });
  return refs == 1;
}

// A _to_copy that changes the dtype only (AOTAutograd's autocast casts: `dtype=` alone).
bool IsPlainCast(const ir::Node& node) {
  return node.target == "aten::_to_copy.default" && node.args.size() == 1 &&
         node.args[0].is_ref() && node.kwargs.size() == 1 && node.kwargs[0].name == "dtype" &&
         node.outputs.size() == 1;
}

// The view chain under a cast, from the cast's operand down (the node ids), and the source it
// ends at; nullopt when the cast is not one to move.
struct Chain {
  std::vector<int> views;  // views[0] is the cast's operand
  ir::ValueRef source;
};

std::optional<Chain> ViewChainOf(const ir::Graph& graph, const ir::Node& cast) {
  Chain chain;
  ir::ValueRef r = cast.args[0].ref();
  while (!r.is_input() && IsDtypeFreeView(graph.nodes[r.node])) {
    chain.views.push_back(r.node);
    r = graph.nodes[r.node].args[0].ref();
  }
  if (chain.views.empty()) return std::nullopt;
  chain.source = r;
  const ir::TensorType& src = graph.type_of(r);
  const ir::TensorType& viewed = graph.nodes[chain.views.front()].outputs[0];
  const ir::TensorType& out = cast.outputs[0];
  if (src.storage_offset != 0 || !IsDenseNonOverlapping(src) || src.device != out.device)
    return std::nullopt;
  // The cast kept the viewed layout (preserve_format): the moved views then give its type.
  if (out.sizes != viewed.sizes || out.strides != viewed.strides ||
      out.storage_offset != viewed.storage_offset)
    return std::nullopt;
  return chain;
}

}  // namespace

absl::StatusOr<bool> CastsBeforeViews::Run(ir::Graph& graph) {
  const int n = static_cast<int>(graph.nodes.size());
  // Sources a row reduction iterates over (its first tensor argument's shape is theirs).
  std::set<ir::ValueRef> row_read;
  for (const ir::Node& node : graph.nodes) {
    if (RowReductionDims(graph, node) == 0) continue;
    const std::vector<int64_t>& rows = graph.type_of(node.args[0].ref()).sizes;
    ir::ForEachInput(node, [&](const ir::ValueRef& r) {
      if (graph.type_of(r).sizes == rows) row_read.insert(r);
    });
  }
  if (row_read.empty()) return false;
  std::set<int> casts;
  for (int id = 0; id < n; ++id) {
    const ir::Node& node = graph.nodes[id];
    if (!IsPlainCast(node)) continue;
    const std::optional<Chain> chain = ViewChainOf(graph, node);
    if (chain && row_read.count(chain->source)) casts.insert(id);
  }
  if (casts.empty()) return false;

  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        if (!casts.count(id)) return std::nullopt;
        // The views were copied into `out` as they were: walk them there (their arguments are
        // the new graph's), then emit the cast of the source and the views over it.
        std::vector<const ir::Node*> views;  // top (the cast's operand) first
        ir::ValueRef r = node.args[0].ref();
        while (!r.is_input() && IsDtypeFreeView(out.nodes[r.node])) {
          views.push_back(&out.nodes[r.node]);
          r = out.nodes[r.node].args[0].ref();
        }
        std::vector<ir::Node> moved;
        moved.reserve(views.size());
        for (const ir::Node* v : views) moved.push_back(*v);  // copies: `out` grows below
        ir::Node cast = node;
        cast.args[0] = ir::Arg{r};
        cast.outputs[0] = out.type_of(r);
        cast.outputs[0].dtype = node.outputs[0].dtype;
        ir::Arg value = AppendNode(out, std::move(cast));
        for (auto it = moved.rbegin(); it != moved.rend(); ++it) {
          ir::Node view = std::move(*it);
          view.args[0] = value;
          view.outputs[0].dtype = node.outputs[0].dtype;
          value = AppendNode(out, std::move(view));
        }
        return std::vector<ir::Arg>{value};
      });
}

}  // namespace tccd::codegen

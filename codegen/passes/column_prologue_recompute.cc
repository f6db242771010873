// ColumnPrologueRecompute (see column_prologue_recompute.h).
#include "codegen/passes/column_prologue_recompute.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "codegen/passes/dropout_to_philox.h"
#include "codegen/passes/graph_rebuild.h"
#include "codegen/passes/index_ops.h"
#include "codegen/passes/pointwise_ops.h"
#include "codegen/passes/reduction_ops.h"

namespace tccd::codegen {
namespace {

// Cones larger than this are left alone (a long chain recomputed is compile time for little).
constexpr size_t kMaxConeNodes = 32;

int64_t Bytes(const ir::TensorType& t) { return t.numel() * ir::DTypeBytes(t.dtype); }

bool Clonable(const ir::Graph& graph, const ir::Node& node) {
  return node.outputs.size() == 1 && node.outputs[0].device == ir::DeviceType::kCuda &&
         node.target != kPhiloxUniformTarget && !NeedsCoordinates(graph, node) &&
         IsPointwiseOp(graph, node);
}

// A row reduction (trailing dims) whose iteration space is `shape`.
bool IsRowReductionOver(const ir::Graph& graph, const ir::Node& node,
                        const std::vector<int64_t>& shape) {
  const ReductionAxes axes = ReductionAxesOf(graph, node);
  return axes.num_reduced_dims > 0 && !axes.leading && !node.args.empty() &&
         node.args[0].is_ref() && graph.type_of(node.args[0].ref()).sizes == shape;
}

// Whether a row reduction over `shape` reads `start` through pointwise ops of that shape (at
// most kMaxConeNodes of them): the chain that would become that row kernel's prologue.
bool ReachesRowReduction(const ir::Graph& graph, const std::vector<std::vector<int>>& consumers,
                         int start, const std::vector<int64_t>& shape) {
  std::set<int> seen;
  std::vector<int> stack = {start};
  while (!stack.empty() && seen.size() <= kMaxConeNodes) {
    const int n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    const ir::Node& node = graph.nodes[n];
    if (IsRowReductionOver(graph, node, shape)) return true;
    if (!Clonable(graph, node) || node.outputs[0].sizes != shape) continue;
    for (int c : consumers[n]) stack.push_back(c);
  }
  return false;
}

// The cone of column reduction `r` (ascending ids) when it is to be re-emitted, else empty.
std::vector<int> ConeToClone(const ir::Graph& graph, int r,
                             const std::vector<std::vector<int>>& consumers,
                             const std::vector<bool>& returned) {
  const ir::Node& node = graph.nodes[r];
  if (node.args.empty() || !node.args[0].is_ref() || node.args[0].ref().is_input()) return {};
  std::set<int> cone;
  std::vector<int> stack = {node.args[0].ref().node};
  while (!stack.empty()) {
    const int n = stack.back();
    stack.pop_back();
    if (cone.count(n) || !Clonable(graph, graph.nodes[n])) continue;
    cone.insert(n);
    if (cone.size() > kMaxConeNodes) return {};
    ir::ForEachInput(graph.nodes[n], [&](const ir::ValueRef& v) {
      if (!v.is_input()) stack.push_back(v.node);
    });
  }
  if (cone.empty()) return {};
  // Shared nodes and their outside readers.
  std::set<int> shared;
  bool row_reader = false;
  for (int n : cone) {
    const std::vector<int64_t>& shape = graph.nodes[n].outputs[0].sizes;
    for (int c : consumers[n]) {
      if (c == r || cone.count(c)) continue;
      const ir::Node& reader = graph.nodes[c];
      if (!IsRowReductionOver(graph, reader, shape) &&
          (!Clonable(graph, reader) || reader.outputs[0].sizes != shape)) {
        return {};
      }
      row_reader = row_reader || ReachesRowReduction(graph, consumers, c, shape);
      shared.insert(n);
    }
    if (returned[n]) return {};
  }
  if (shared.empty() || !row_reader) return {};
  // The leaves the shared values are computed from: ancestors of the shared nodes in the cone.
  std::set<ir::ValueRef> leaves;
  std::set<int> seen;
  std::vector<int> walk(shared.begin(), shared.end());
  while (!walk.empty()) {
    const int n = walk.back();
    walk.pop_back();
    if (!seen.insert(n).second) continue;
    ir::ForEachInput(graph.nodes[n], [&](const ir::ValueRef& v) {
      if (!v.is_input() && cone.count(v.node))
        walk.push_back(v.node);
      else
        leaves.insert(v);
    });
  }
  int64_t leaf_bytes = 0, shared_bytes = 0;
  for (const ir::ValueRef& v : leaves) leaf_bytes += Bytes(graph.type_of(v));
  for (int n : shared) shared_bytes += Bytes(graph.nodes[n].outputs[0]);
  if (leaf_bytes >= 2 * shared_bytes) return {};
  return std::vector<int>(cone.begin(), cone.end());
}

// Replaces the refs of `arg` found in `map` (new-graph value -> its copy).
void ReplaceRefs(ir::Arg& arg, const std::map<ir::ValueRef, ir::Arg>& map) {
  if (arg.is_ref()) {
    auto it = map.find(arg.ref());
    if (it != map.end()) arg = it->second;
  } else if (auto* list = std::get_if<ir::ArgList>(&arg.v)) {
    for (ir::Arg& a : *list) ReplaceRefs(a, map);
  }
}

}  // namespace

absl::StatusOr<bool> ColumnPrologueRecompute::Run(ir::Graph& graph) {
  const int n = static_cast<int>(graph.nodes.size());
  std::vector<std::vector<int>> consumers(n);
  for (int id = 0; id < n; ++id)
    ir::ForEachInput(graph.nodes[id], [&](const ir::ValueRef& v) {
      if (!v.is_input()) consumers[v.node].push_back(id);
    });
  std::vector<bool> returned(n, false);
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& v) {
      if (!v.is_input()) returned[v.node] = true;
    });
  std::map<int, std::vector<int>> cones;  // column reduction -> cone to re-emit before it
  std::set<int> in_some_cone;
  for (int id = 0; id < n; ++id) {
    const ir::Node& node = graph.nodes[id];
    const ReductionAxes axes = ReductionAxesOf(graph, node);
    if (axes.num_reduced_dims == 0 || !axes.leading) continue;
    std::vector<int> cone = ConeToClone(graph, id, consumers, returned);
    if (cone.empty()) continue;
    in_some_cone.insert(cone.begin(), cone.end());
    cones[id] = std::move(cone);
  }
  if (cones.empty()) return false;

  // Each cone node as copied into the new graph (arguments remapped), and its new value.
  std::map<int, ir::Node> copied;
  std::map<int, ir::ValueRef> new_value;
  int old_id = 0;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        const int id = old_id++;
        auto it = cones.find(id);
        if (it == cones.end()) {
          if (in_some_cone.count(id)) {
            copied[id] = node;
            new_value[id] = ir::ValueRef{static_cast<int>(out.nodes.size()), 0};
          }
          return std::nullopt;
        }
        std::map<ir::ValueRef, ir::Arg> clone_of;  // the originals' new values -> the copies
        for (int c : it->second) {
          ir::Node copy = copied.at(c);
          for (ir::Arg& a : copy.args) ReplaceRefs(a, clone_of);
          for (ir::NamedArg& kw : copy.kwargs) ReplaceRefs(kw.value, clone_of);
          clone_of[new_value.at(c)] = AppendNode(out, std::move(copy));
        }
        ir::Node reduction = node;
        for (ir::Arg& a : reduction.args) ReplaceRefs(a, clone_of);
        const int rid = static_cast<int>(out.nodes.size());
        const size_t outputs = reduction.outputs.size();
        out.nodes.push_back(std::move(reduction));
        std::vector<ir::Arg> values;
        for (size_t o = 0; o < outputs; ++o)
          values.push_back(ir::Arg{ir::ValueRef{rid, static_cast<int>(o)}});
        return values;
      });
}

}  // namespace tccd::codegen

// WideningCastsToReaders (see widening_casts_to_readers.h).
#include "codegen/passes/widening_casts_to_readers.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "base/status_macros.h"
#include "codegen/passes/index_ops.h"

namespace tccd::codegen {
namespace {

// Whether node n is a cast of one tensor to a wider floating dtype that keeps its layout.
bool IsWideningCast(const ir::Graph& graph, const ir::Node& n) {
  if (n.target != "aten::_to_copy.default" || n.args.empty() || !n.args[0].is_ref() ||
      n.outputs.size() != 1)
    return false;
  const ir::TensorType& in = graph.type_of(n.args[0].ref());
  const ir::TensorType& out = n.outputs[0];
  return ir::IsFloatingPoint(in.dtype) && ir::IsFloatingPoint(out.dtype) &&
         ir::DTypeBytes(out.dtype) > ir::DTypeBytes(in.dtype) && in.sizes == out.sizes &&
         in.strides == out.strides && in.device == out.device;
}

}  // namespace

absl::StatusOr<bool> MoveWideningCastsToReaders(const ir::Graph& graph, Partition& partition) {
  const int num_nodes = static_cast<int>(graph.nodes.size());
  std::map<ir::ValueRef, std::set<int>> readers;
  for (int i = 0; i < num_nodes; ++i)
    ir::ForEachInput(graph.nodes[i], [&](const ir::ValueRef& r) { readers[r].insert(i); });
  std::set<ir::ValueRef> returned;
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) { returned.insert(r); });

  bool changed = false;
  for (int n = 0; n < num_nodes; ++n) {
    const int g = partition.group_of[n];
    if (g < 0 || !IsWideningCast(graph, graph.nodes[n])) continue;
    const ir::ValueRef x = graph.nodes[n].args[0].ref();
    const ir::ValueRef cast{n, 0};
    if (x.is_input() || partition.group_of[x.node] != g || returned.contains(cast)) continue;
    // G must write x anyway: read outside G, or returned.
    bool written = returned.contains(x);
    for (int r : readers[x]) written = written || partition.group_of[r] != g;
    if (!written) continue;
    // Every reader of the cast in one plain pointwise group H of its shape.
    const std::set<int>& cast_readers = readers[cast];
    if (cast_readers.empty()) continue;
    const int h = partition.group_of[*cast_readers.begin()];
    bool one_group = h >= 0 && h != g;
    for (int r : cast_readers) one_group = one_group && partition.group_of[r] == h;
    if (!one_group) continue;
    const FusionGroup& reader = partition.groups[h];
    if (reader.num_reduced_dims > 0 || reader.device != partition.groups[g].device ||
        reader.shape != graph.nodes[n].outputs[0].sizes)
      continue;
    // H loads x then: it must not gather it (a gather operand is read only by gathers).
    bool gathers_x = false;
    for (int m : reader.nodes) {
      const std::vector<ir::ValueRef> gathered = GatheredRefs(graph.nodes[m]);
      gathers_x = gathers_x || std::find(gathered.begin(), gathered.end(), x) != gathered.end();
    }
    if (gathers_x) continue;
    std::vector<int>& from = partition.groups[g].nodes;
    from.erase(std::find(from.begin(), from.end(), n));
    std::vector<int>& to = partition.groups[h].nodes;
    to.insert(std::upper_bound(to.begin(), to.end(), n), n);
    partition.group_of[n] = h;
    changed = true;
  }
  if (changed) RETURN_IF_ERROR(CompletePartition(graph, partition));
  return changed;
}

}  // namespace tccd::codegen

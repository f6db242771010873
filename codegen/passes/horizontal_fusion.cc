// Horizontal fusion (see horizontal_fusion.h).
#include "codegen/passes/horizontal_fusion.h"

#include <algorithm>
#include <set>
#include <vector>

#include "codegen/ops/op_properties.h"
#include "codegen/passes/graph_rebuild.h"  // IsReshapeTarget
#include "codegen/passes/index_ops.h"
#include "base/status_macros.h"

namespace tccd::codegen {
namespace {

// ancestors[g]: the groups group g depends on, directly or through other nodes.
std::vector<std::vector<bool>> GroupAncestors(const ir::Graph& graph, const Partition& p) {
  const size_t num_groups = p.groups.size();
  const size_t n = graph.nodes.size();
  // Per node: groups its outputs depend on (node ids are a topological order).
  std::vector<std::vector<bool>> node_anc(n, std::vector<bool>(num_groups, false));
  for (size_t id = 0; id < n; ++id) {
    ir::ForEachInput(graph.nodes[id], [&](const ir::ValueRef& r) {
      if (r.is_input()) return;
      for (size_t g = 0; g < num_groups; ++g)
        if (node_anc[r.node][g]) node_anc[id][g] = true;
      if (p.group_of[r.node] >= 0) node_anc[id][p.group_of[r.node]] = true;
    });
  }
  std::vector<std::vector<int>> direct(num_groups);
  for (size_t g = 0; g < num_groups; ++g)
    for (int m : p.groups[g].nodes)
      for (size_t h = 0; h < num_groups; ++h)
        if (node_anc[m][h] && h != g) direct[g].push_back(static_cast<int>(h));
  // Closed over groups: node paths alone miss G2 -> G0 when G2 reads (through an extern node) a
  // member of G1 that does not depend on G0 while another member of G1 does.
  std::vector<std::vector<bool>> anc(num_groups, std::vector<bool>(num_groups, false));
  for (size_t g = 0; g < num_groups; ++g) {
    std::vector<int> stack = direct[g];
    while (!stack.empty()) {
      const int h = stack.back();
      stack.pop_back();
      if (anc[g][h]) continue;
      anc[g][h] = true;
      stack.insert(stack.end(), direct[h].begin(), direct[h].end());
    }
    anc[g][g] = false;
  }
  return anc;
}

// Bytes of the values group `g` makes that the graph does not return (those are held to the end
// anyway): what a merge into an earlier group would make, and hold, early.
int64_t HoistedBytes(const ir::Graph& graph, const FusionGroup& g,
                     const std::set<ir::ValueRef>& returned) {
  int64_t bytes = 0;
  for (const ir::ValueRef& r : g.outputs)
    if (!returned.contains(r))
      bytes += graph.type_of(r).numel() * ir::DTypeBytes(graph.type_of(r).dtype);
  return bytes;
}

// Whether a and b read a common tensor of their full iteration size (not a broadcast one): then
// the merged kernel reads it once, and b's values made early are those of a computation over the
// same data, not of a later layer's (SwiGLU's backward: silu(gate) * up recomputed for the down
// projection's weight gradient beside the gate and up gradients, from the same gate and up).
bool ShareFullSizeInput(const ir::Graph& graph, const FusionGroup& a, const FusionGroup& b) {
  int64_t numel = 1;
  for (int64_t s : a.shape) numel *= s;
  for (const ir::ValueRef& r : a.inputs)
    if (graph.type_of(r).numel() == numel &&
        std::find(b.inputs.begin(), b.inputs.end(), r) != b.inputs.end())
      return true;
  return false;
}

bool HasCoordinateOps(const ir::Graph& graph, const FusionGroup& g) {
  for (int m : g.nodes)
    if (NeedsCoordinates(graph, graph.nodes[m])) return true;
  return false;
}

// Whether every coordinate-needing op of g is an index op (index_ops.h): no scatter, no Philox
// draw (those keep their kernels).
bool OnlyIndexCoordinateOps(const ir::Graph& graph, const FusionGroup& g) {
  for (int m : g.nodes)
    if (NeedsCoordinates(graph, graph.nodes[m]) && !IsIndexOp(graph, graph.nodes[m])) return false;
  return true;
}

// Whether one group gathers a tensor the other loads (a gather operand must be read only by
// gathers in its kernel: index_ops.h).
bool GatherLoadConflict(const ir::Graph& graph, const FusionGroup& a, const FusionGroup& b) {
  auto split = [&](const FusionGroup& g, std::set<ir::ValueRef>& gathered,
                   std::set<ir::ValueRef>& loaded) {
    for (int m : g.nodes) {
      const std::vector<ir::ValueRef> refs = GatheredRefs(graph.nodes[m]);
      if (!refs.empty()) {
        gathered.insert(refs.begin(), refs.end());
      } else {
        ir::ForEachInput(graph.nodes[m], [&](const ir::ValueRef& r) { loaded.insert(r); });
      }
    }
  };
  std::set<ir::ValueRef> ga, la, gb, lb;
  split(a, ga, la);
  split(b, gb, lb);
  for (const ir::ValueRef& r : ga)
    if (lb.count(r)) return true;
  for (const ir::ValueRef& r : gb)
    if (la.count(r)) return true;
  return false;
}

// Whether some node outside a and b reads an output of each, directly or through views (a
// matmul's operands are views of them): their values are then live together when it runs
// (FusionOptions::merge_index_reader_siblings).
bool ShareReader(const ir::Graph& graph, const Partition& p, int a, int b) {
  // Values of a (of b): the group's outputs and the views of them outside both groups.
  std::set<ir::ValueRef> of_a(p.groups[a].outputs.begin(), p.groups[a].outputs.end());
  std::set<ir::ValueRef> of_b(p.groups[b].outputs.begin(), p.groups[b].outputs.end());
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    if (p.group_of[id] == a || p.group_of[id] == b) continue;
    const ir::Node& node = graph.nodes[id];
    bool reads_a = false, reads_b = false;
    ir::ForEachInput(node, [&](const ir::ValueRef& r) {
      reads_a = reads_a || of_a.contains(r);
      reads_b = reads_b || of_b.contains(r);
    });
    if (reads_a && reads_b) return true;
    if ((reads_a || reads_b) && (IsViewOp(node.target) || IsReshapeTarget(node.target)) &&
        node.outputs.size() == 1)
      (reads_a ? of_a : of_b).insert(ir::ValueRef{static_cast<int>(id), 0});
  }
  return false;
}

// Points of a static shape; INT64_MAX for a shape with a run-time dim.
int64_t NumelOf(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) {
    if (s < 0) return INT64_MAX;
    n *= s;
  }
  return n;
}

// Whether g is index ops only, every operand gathered (max pooling's values and offsets kernels,
// max_pool_kernels.h): two such groups gathering a common tensor may merge, since no tensor is
// then both gathered and loaded, and the merged kernel reads the common one once.
bool GathersOnly(const ir::Graph& graph, const FusionGroup& g) {
  std::set<ir::ValueRef> gathered;
  for (int m : g.nodes) {
    if (!IsIndexOp(graph, graph.nodes[m])) return false;
    for (const ir::ValueRef& r : GatheredRefs(graph.nodes[m])) gathered.insert(r);
  }
  for (const ir::ValueRef& r : g.inputs)
    if (!gathered.contains(r)) return false;
  return !g.inputs.empty();
}

bool ShareInput(const FusionGroup& a, const FusionGroup& b) {
  for (const ir::ValueRef& r : a.inputs)
    if (std::find(b.inputs.begin(), b.inputs.end(), r) != b.inputs.end()) return true;
  return false;
}

}  // namespace

absl::StatusOr<bool> FuseHorizontally(const ir::Graph& graph, const FusionOptions& options,
                                      Partition& partition) {
  if (!options.enable) return false;
  Partition& p = partition;
  const size_t num_groups = p.groups.size();
  std::vector<std::vector<bool>> anc = GroupAncestors(graph, p);
  // Groups with index-aware ops keep to themselves: a tensor one group gathers must not be one
  // the other loads (index_ops.h).
  // Small index groups (at most options.max_index_merge_numel points: the mask and position
  // code of the LMs, [B, S] of ints) merge too, with any group that loads nothing they gather
  // and vice versa: the merged kernel runs one point per thread, which costs nothing there.
  // Gather-only groups (GathersOnly: max pooling's values and offsets kernels) merge with each
  // other when they gather a common tensor.
  // Larger index groups merge in pairs that one node reads (reader_sibling: the rotary
  // embeddings of q and k that attention reads).
  std::vector<bool> eligible(num_groups), coordinates(num_groups), small_ok(num_groups),
      gathers_only(num_groups), reader_sibling(num_groups);
  for (size_t g = 0; g < num_groups; ++g) {
    coordinates[g] = HasCoordinateOps(graph, p.groups[g]);
    gathers_only[g] = p.groups[g].num_reduced_dims == 0 && GathersOnly(graph, p.groups[g]);
    small_ok[g] =
        p.groups[g].num_reduced_dims == 0 &&
        (!coordinates[g] || (NumelOf(p.groups[g].shape) <= options.max_index_merge_numel &&
                             OnlyIndexCoordinateOps(graph, p.groups[g])));
    reader_sibling[g] = options.merge_index_reader_siblings &&
                        p.groups[g].num_reduced_dims == 0 && coordinates[g] &&
                        NumelOf(p.groups[g].shape) != INT64_MAX &&
                        OnlyIndexCoordinateOps(graph, p.groups[g]);
    eligible[g] = gathers_only[g] || small_ok[g] || reader_sibling[g];
  }
  std::set<ir::ValueRef> returned;
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) { returned.insert(r); });
  std::vector<int64_t> hoisted(num_groups);
  for (size_t g = 0; g < num_groups; ++g) hoisted[g] = HoistedBytes(graph, p.groups[g], returned);
  bool changed = false;
  for (size_t a = 0; a < num_groups; ++a) {
    if (!eligible[a] || p.groups[a].nodes.empty()) continue;
    for (size_t b = a + 1; b < num_groups; ++b) {
      FusionGroup& ga = p.groups[a];
      FusionGroup& gb = p.groups[b];
      if (!eligible[b] || gb.nodes.empty()) continue;
      if (ga.shape != gb.shape || ga.device != gb.device) continue;
      if (anc[a][b] || anc[b][a]) continue;
      if ((coordinates[a] || coordinates[b]) && GatherLoadConflict(graph, ga, gb)) continue;
      // The merged kernel runs where a ran: b's values are made there (see horizontal_fusion.h),
      // unless both read the same full-size tensor.
      if (gathers_only[a] && gathers_only[b]) {
        if (!ShareInput(ga, gb)) continue;
      } else if (reader_sibling[a] && reader_sibling[b] && (!small_ok[a] || !small_ok[b])) {
        if (!ShareReader(graph, p, static_cast<int>(a), static_cast<int>(b))) continue;
      } else if (!small_ok[a] || !small_ok[b]) {
        continue;
      } else if (hoisted[b] > kMaxHoistedBytes && !ShareFullSizeInput(graph, ga, gb)) {
        continue;
      }
      if (static_cast<int>(ga.nodes.size() + gb.nodes.size()) > options.max_nodes_per_group)
        continue;
      // No edge joins independent groups: the merged kernel's operands are exactly the union.
      std::set<ir::ValueRef> inputs(ga.inputs.begin(), ga.inputs.end());
      inputs.insert(gb.inputs.begin(), gb.inputs.end());
      if (static_cast<int>(inputs.size() + ga.outputs.size() + gb.outputs.size()) >
          options.max_operands)
        continue;
      for (int m : gb.nodes) p.group_of[m] = static_cast<int>(a);
      ga.nodes.insert(ga.nodes.end(), gb.nodes.begin(), gb.nodes.end());
      std::sort(ga.nodes.begin(), ga.nodes.end());
      gb.nodes.clear();
      ga.inputs.assign(inputs.begin(), inputs.end());
      ga.outputs.insert(ga.outputs.end(), gb.outputs.begin(), gb.outputs.end());
      coordinates[a] = coordinates[a] || coordinates[b];
      gathers_only[a] = gathers_only[a] && gathers_only[b];
      small_ok[a] = small_ok[a] && small_ok[b];
      // A pair per reader: a third group would make a kernel of three layers' values.
      reader_sibling[a] = false;
      // Keep the closure: whatever depended on a or b now depends on both and their ancestors.
      std::vector<bool> merged_anc(num_groups);
      for (size_t g = 0; g < num_groups; ++g) merged_anc[g] = anc[a][g] || anc[b][g];
      for (size_t g = 0; g < num_groups; ++g) {
        if (!(anc[g][a] || anc[g][b])) continue;
        for (size_t h = 0; h < num_groups; ++h) anc[g][h] = anc[g][h] || merged_anc[h];
        anc[g][a] = true;
        anc[g][b] = false;
      }
      anc[a] = merged_anc;
      anc[a][a] = anc[a][b] = false;
      changed = true;
    }
  }
  if (changed) RETURN_IF_ERROR(CompletePartition(graph, p));
  return changed;
}

}  // namespace tccd::codegen

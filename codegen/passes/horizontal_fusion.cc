// Horizontal fusion (see horizontal_fusion.h).
#include "codegen/passes/horizontal_fusion.h"

#include <algorithm>
#include <set>
#include <vector>

#include "codegen/passes/index_ops.h"
#include "base/status_macros.h"
#include "codegen/ops/op_properties.h"
#include "codegen/passes/graph_rebuild.h"  // IsReshapeTarget

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

// The values held until the graph ends: those it returns and, with `through_views`, the values
// those are views of (transitively: a view shares its base's storage, so returning `t(c)` holds
// c's bytes as long as returning c would). Node ids are a topological order, so one walk from
// the last node back sees every view before its base.
std::set<ir::ValueRef> HeldToEnd(const ir::Graph& graph, bool through_views) {
  std::set<ir::ValueRef> held;
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) { held.insert(r); });
  if (!through_views) return held;
  for (size_t id = graph.nodes.size(); id-- > 0;) {
    const ir::Node& node = graph.nodes[id];
    if (node.outputs.size() != 1 || node.args.empty() || !node.args[0].is_ref()) continue;
    if (!IsViewOp(node.target) || !held.contains(ir::ValueRef{static_cast<int>(id), 0})) continue;
    held.insert(node.args[0].ref());
  }
  return held;
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

// Whether every tensor group g reads exists before node `at` (a graph input or an earlier
// node's value): merged into a group starting there, g then runs there, and neither group waits
// for the other's inputs (a delayed group would hold its own inputs longer: T5's backward peak
// rose 18 MiB on the census when near groups merged without this test).
bool ReadyBefore(const FusionGroup& g, int at) {
  for (const ir::ValueRef& r : g.inputs)
    if (!r.is_input() && r.node >= at) return false;
  return true;
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

// What a group reads, and how: the one thing the merge rule for index groups looks at.
struct GroupReads {
  std::set<ir::ValueRef> gathered;  // operands its index ops read at computed coordinates
  std::set<ir::ValueRef> loaded;    // operands its other ops read at the point's own
  bool coordinates = false;         // it needs the point's coordinates (index kernel)
  bool other_coordinates = false;   // ... for a scatter or a Philox draw, not a gather
  bool reduction = false;
  int64_t numel = 0;
};

GroupReads ReadsOf(const ir::Graph& graph, const FusionGroup& g) {
  GroupReads r;
  for (int m : g.nodes) {
    const ir::Node& node = graph.nodes[m];
    if (NeedsCoordinates(graph, node)) {
      r.coordinates = true;
      r.other_coordinates = r.other_coordinates || !IsIndexOp(graph, node);
    }
    const std::vector<ir::ValueRef> refs = GatheredRefs(node);
    if (!refs.empty()) {
      r.gathered.insert(refs.begin(), refs.end());
    } else {
      ir::ForEachInput(node, [&](const ir::ValueRef& v) { r.loaded.insert(v); });
    }
  }
  // Only the group's operands count as loaded (what its nodes read of each other is internal).
  std::set<ir::ValueRef> inputs(g.inputs.begin(), g.inputs.end());
  std::erase_if(r.loaded, [&](const ir::ValueRef& v) { return !inputs.contains(v); });
  r.reduction = g.num_reduced_dims > 0;
  r.numel = NumelOf(g.shape);
  return r;
}

bool Intersect(const std::set<ir::ValueRef>& a, const std::set<ir::ValueRef>& b) {
  for (const ir::ValueRef& r : a)
    if (b.contains(r)) return true;
  return false;
}

// A gather-only group: index ops whose every operand is gathered, none loaded (max pooling's
// values and offsets kernels, max_pool_kernels.h).
bool GathersOnly(const GroupReads& r) {
  return r.coordinates && !r.other_coordinates && r.loaded.empty() && !r.gathered.empty();
}

// Whether a group may take part in any merge: no reduction, and no coordinates but for gathers.
bool Mergeable(const GroupReads& r) { return !r.reduction && !r.other_coordinates; }

// How two mergeable, independent groups of one shape may share a kernel, by what each gathers
// and what each loads (an index kernel reads a gathered operand only through its gathers,
// index_ops.h, and runs its points on the index emitter's path):
//  * never when one gathers what the other loads;
//  * two groups that load nothing (gather-only) when they gather a common tensor: the merged
//    kernel reads it once, whatever their size (the max pool's values and offsets over a
//    ResNet's stem map); gather-only groups gathering different tensors keep their kernels;
//  * two larger index groups that one node reads (`reader_pair`: the rotary embeddings of q and
//    k that attention reads, FusionOptions::merge_index_reader_siblings): their values are live
//    together when it runs anyway, so no hoisting limit;
//  * otherwise each group with coordinates must be small (at most `max_index_merge_numel`
//    points: the LMs' [B, S] mask and position code, where one point per thread costs
//    nothing), and the hoisting limit holds (the caller's kMaxHoistedBytes test).
// Returns whether the pair passes; *hoist_limited whether the hoisting limit applies.
bool MayMerge(const GroupReads& a, const GroupReads& b, int64_t max_index_merge_numel,
              bool reader_pair, bool* hoist_limited) {
  *hoist_limited = false;
  if (Intersect(a.gathered, b.loaded) || Intersect(b.gathered, a.loaded)) return false;
  if (GathersOnly(a) && GathersOnly(b)) return Intersect(a.gathered, b.gathered);
  if (reader_pair) return true;
  for (const GroupReads* r : {&a, &b})
    if (r->coordinates && r->numel > max_index_merge_numel) return false;
  *hoist_limited = true;
  return true;
}

// The reads of a merged group (b's taken into a).
void MergeReads(GroupReads& a, const GroupReads& b) {
  a.gathered.insert(b.gathered.begin(), b.gathered.end());
  a.loaded.insert(b.loaded.begin(), b.loaded.end());
  a.coordinates = a.coordinates || b.coordinates;
  a.other_coordinates = a.other_coordinates || b.other_coordinates;
}

}  // namespace

absl::StatusOr<bool> FuseHorizontally(const ir::Graph& graph, const FusionOptions& options,
                                      Partition& partition) {
  if (!options.enable) return false;
  Partition& p = partition;
  const size_t num_groups = p.groups.size();
  std::vector<std::vector<bool>> anc = GroupAncestors(graph, p);
  // What each group gathers and loads, for the rule of MayMerge above.
  std::vector<GroupReads> reads(num_groups);
  for (size_t g = 0; g < num_groups; ++g) reads[g] = ReadsOf(graph, p.groups[g]);
  // Index groups above the small-group size that may still pair with a sibling one node reads
  // (MayMerge's reader_pair); a pair per reader: a merged group takes no third.
  std::vector<bool> reader_sibling(num_groups);
  for (size_t g = 0; g < num_groups; ++g)
    reader_sibling[g] = options.merge_index_reader_siblings && Mergeable(reads[g]) &&
                        reads[g].coordinates && reads[g].numel != INT64_MAX;
  const std::set<ir::ValueRef> returned = HeldToEnd(graph, options.returned_views_held);
  std::vector<int64_t> hoisted(num_groups);
  for (size_t g = 0; g < num_groups; ++g) hoisted[g] = HoistedBytes(graph, p.groups[g], returned);
  // Each group's first node as partitioned (a merge keeps the earlier group's: the window of
  // FusionOptions::near_merge_nodes does not move along a chain of merges).
  std::vector<int> first_node(num_groups, 0);
  for (size_t g = 0; g < num_groups; ++g)
    if (!p.groups[g].nodes.empty()) first_node[g] = p.groups[g].nodes.front();
  bool changed = false;
  for (size_t a = 0; a < num_groups; ++a) {
    if (!Mergeable(reads[a]) || p.groups[a].nodes.empty()) continue;
    for (size_t b = a + 1; b < num_groups; ++b) {
      FusionGroup& ga = p.groups[a];
      FusionGroup& gb = p.groups[b];
      if (!Mergeable(reads[b]) || gb.nodes.empty()) continue;
      if (ga.shape != gb.shape || ga.device != gb.device) continue;
      if (anc[a][b] || anc[b][a]) continue;
      const bool large = reads[a].numel > options.max_index_merge_numel ||
                         reads[b].numel > options.max_index_merge_numel;
      const bool reader_pair = large && reader_sibling[a] && reader_sibling[b] &&
                               ShareReader(graph, p, static_cast<int>(a), static_cast<int>(b));
      bool hoist_limited = false;
      if (!MayMerge(reads[a], reads[b], options.max_index_merge_numel, reader_pair,
                    &hoist_limited))
        continue;
      // The merged kernel runs where a ran: b's values are made there (see horizontal_fusion.h),
      // unless both read the same full-size tensor.
      const bool near = options.near_merge_nodes > 0 &&
                        gb.nodes.front() - first_node[a] <= options.near_merge_nodes &&
                        ReadyBefore(gb, first_node[a]);
      if (hoist_limited && hoisted[b] > kMaxHoistedBytes && !near &&
          !ShareFullSizeInput(graph, ga, gb))
        continue;
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
      MergeReads(reads[a], reads[b]);
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

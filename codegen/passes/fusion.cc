// Pointwise fusion (see fusion.h).
#include "codegen/passes/fusion.h"

#include <algorithm>
#include <queue>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/group_ancestry.h"
#include "codegen/passes/index_ops.h"
#include "codegen/passes/max_pool_kernels.h"
#include "codegen/passes/pointwise_ops.h"
#include "codegen/passes/scatter_ops.h"
#include "base/status_macros.h"

namespace tccd::codegen {
namespace {

using ir::ForEachInput;
using ir::ForEachRef;

// Moves every node of group `from` into group `into`, leaving `from` empty.
void MergeGroups(Partition& p, GroupAncestry& ancestry, int from, int into) {
  for (int m : p.groups[from].nodes) p.group_of[m] = into;
  auto& nodes = p.groups[into].nodes;
  nodes.insert(nodes.end(), p.groups[from].nodes.begin(), p.groups[from].nodes.end());
  std::sort(nodes.begin(), nodes.end());
  p.groups[from].nodes.clear();
  ancestry.MergeGroups(from, into);
}

// Gather operands (index_ops.h) must be kernel inputs read only by gathers: `node` cannot share
// a kernel with `members` when it gathers a value a member produces or loads, or loads a value a
// member gathers, or a member gathers a value `node` produces (impossible in schedule order, but
// merges combine groups formed independently).
bool GatherConflict(const ir::Graph& graph, const std::vector<int>& members, int node) {
  auto conflict = [&](int a, int b) {  // does a gather something b produces or loads?
    for (const ir::ValueRef& r : GatheredRefs(graph.nodes[a])) {
      if (!r.is_input() && r.node == b) return true;
      bool loaded = false;
      if (GatheredRefs(graph.nodes[b]).empty())
        ForEachInput(graph.nodes[b], [&](const ir::ValueRef& x) { loaded |= x == r; });
      if (loaded) return true;
    }
    return false;
  };
  for (int m : members)
    if (conflict(m, node) || conflict(node, m)) return true;
  return false;
}

bool IsFusible(const ir::Graph& graph, const ir::Node& node) {
  return IsPointwiseOp(graph, node) || IsIndexOp(graph, node);
}

// FusionOptions::max_pool_backward_alone: the max-pool gather backwards whose gradient more than
// one node reads.
std::set<int> LoneMaxPoolBackwards(const ir::Graph& graph) {
  std::vector<int> readers(graph.nodes.size(), 0);
  for (const ir::Node& node : graph.nodes) {
    std::set<int> read;
    ir::ForEachInput(node, [&](const ir::ValueRef& r) {
      if (!r.is_input()) read.insert(r.node);
    });
    for (int m : read) ++readers[m];
  }
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) {
      if (!r.is_input()) ++readers[r.node];
    });
  std::set<int> lone;
  for (size_t id = 0; id < graph.nodes.size(); ++id)
    if (graph.nodes[id].target == kMaxPoolGatherBackwardTarget && readers[id] > 1)
      lone.insert(static_cast<int>(id));
  return lone;
}

}  // namespace

absl::StatusOr<Partition> PartitionForFusion(const ir::Graph& graph, const FusionOptions& options) {
  const int n = static_cast<int>(graph.nodes.size());
  Partition p;
  p.group_of.assign(n, -1);
  // Which groups every unit depends on (group_ancestry.h): the cycle test of every join and
  // merge below.
  GroupAncestry ancestry(n);

  auto group_of_ref = [&](const ir::ValueRef& r) { return r.is_input() ? -1 : p.group_of[r.node]; };
  // Does the value r depend on group g (r's own group included, through any chain of groups)?
  auto reaches = [&](const ir::ValueRef& r, int g) {
    return ancestry.ValueDependsOn(p.group_of, r, g);
  };

  // Groups of a scatter op (scatter_ops.h): iterated over the scattered values' space, complete
  // only after the whole kernel, so nothing joins them and they join nothing.
  std::set<int> sealed;
  // Max-pool backwards kept alone: nothing joins their groups (they join their producers').
  const std::set<int> lone =
      options.max_pool_backward_alone ? LoneMaxPoolBackwards(graph) : std::set<int>{};
  for (int id = 0; id < n; ++id) {
    const ir::Node& node = graph.nodes[id];
    int chosen = -1;
    if (options.enable && IsScatterOp(graph, node)) {
      chosen = static_cast<int>(p.groups.size());
      FusionGroup group;
      group.shape = ScatterIterationShape(graph, node);
      group.device = node.outputs[0].device;
      group.nodes = {id};
      p.groups.push_back(std::move(group));
      p.group_of[id] = chosen;
      sealed.insert(chosen);
    } else if (options.enable && IsFusible(graph, node)) {
      // Candidate groups: those of pointwise producers, same shape and device.
      std::vector<int> candidates;
      ForEachInput(node, [&](const ir::ValueRef& r) {
        int g = group_of_ref(r);
        if (g >= 0 && std::find(candidates.begin(), candidates.end(), g) == candidates.end())
          candidates.push_back(g);
      });
      // Prefer the group formed last: the chain we are extending.
      std::sort(candidates.rbegin(), candidates.rend());
      for (int g : candidates) {
        const FusionGroup& group = p.groups[g];
        if (sealed.contains(g)) continue;
        if (group.shape != node.outputs[0].sizes || group.device != node.outputs[0].device)
          continue;
        if (static_cast<int>(group.nodes.size()) >= options.max_nodes_per_group) continue;
        bool cycle = false;
        ForEachInput(node, [&](const ir::ValueRef& r) {
          if (group_of_ref(r) != g && reaches(r, g)) cycle = true;
        });
        if (cycle || GatherConflict(graph, group.nodes, id)) continue;
        // Operand budget: distinct outside tensors the group would read.
        absl::flat_hash_set<std::pair<int, int>> outside;
        auto count = [&](const ir::ValueRef& r) {
          if (group_of_ref(r) != g) outside.insert({r.node, r.output});
        };
        for (int m : group.nodes) ForEachInput(graph.nodes[m], count);
        ForEachInput(node, count);
        if (static_cast<int>(outside.size()) > options.max_operands) continue;
        chosen = g;
        break;
      }
      if (chosen < 0) {
        chosen = static_cast<int>(p.groups.size());
        FusionGroup group;
        group.shape = node.outputs[0].sizes;
        group.device = node.outputs[0].device;
        p.groups.push_back(std::move(group));
      }
      p.groups[chosen].nodes.push_back(id);
      p.group_of[id] = chosen;
      if (lone.contains(id)) sealed.insert(chosen);
      // This node may also tie other groups of its shape together (e.g. a where() reading a
      // mask computed in another group): merge them when neither depends on the other.
      for (int h : candidates) {
        if (h == chosen || p.groups[h].nodes.empty() || sealed.contains(h)) continue;
        if (p.groups[h].shape != p.groups[chosen].shape ||
            p.groups[h].device != p.groups[chosen].device)
          continue;
        if (static_cast<int>(p.groups[h].nodes.size() + p.groups[chosen].nodes.size()) >
            options.max_nodes_per_group)
          continue;
        bool dependent = false;
        dependent |= ancestry.GroupDependsOn(h, chosen) || ancestry.GroupDependsOn(chosen, h);
        ForEachInput(node, [&](const ir::ValueRef& r) {
          if (group_of_ref(r) != h && group_of_ref(r) != chosen && reaches(r, h)) dependent = true;
        });
        if (dependent) continue;
        bool gather_conflict = false;
        for (int m : p.groups[h].nodes)
          gather_conflict |= GatherConflict(graph, p.groups[chosen].nodes, m);
        if (gather_conflict) continue;
        MergeGroups(p, ancestry, /*from=*/h, /*into=*/chosen);
      }
    }
    // Dependencies of this node's outputs, once its group is final for this visit (merges
    // above test the groups as they were before it).
    ancestry.AddNode(graph, p.group_of, id);
  }

  RETURN_IF_ERROR(CompletePartition(graph, p));
  return p;
}

absl::StatusOr<bool> DissolveGroups(const ir::Graph& graph, const std::vector<int>& nodes,
                                    Partition& partition) {
  bool dissolved = false;
  for (int id : nodes) {
    if (id < 0 || id >= static_cast<int>(partition.group_of.size())) continue;
    const int g = partition.group_of[id];
    if (g < 0) continue;
    for (int m : partition.groups[g].nodes) partition.group_of[m] = -1;
    partition.groups[g].nodes.clear();
    dissolved = true;
  }
  if (dissolved) RETURN_IF_ERROR(CompletePartition(graph, partition));
  return dissolved;
}

absl::Status CompletePartition(const ir::Graph& graph, Partition& partition) {
  Partition& p = partition;
  const int n = static_cast<int>(graph.nodes.size());
  auto group_of_ref = [&](const ir::ValueRef& r) { return r.is_input() ? -1 : p.group_of[r.node]; };
  for (FusionGroup& group : p.groups) {
    group.inputs.clear();
    group.outputs.clear();
  }
  p.schedule.clear();
  // Drop groups emptied by merges and renumber the rest.
  {
    std::vector<int> new_index(p.groups.size(), -1);
    std::vector<FusionGroup> kept;
    for (size_t g = 0; g < p.groups.size(); ++g) {
      if (p.groups[g].nodes.empty()) continue;
      new_index[g] = static_cast<int>(kept.size());
      kept.push_back(std::move(p.groups[g]));
    }
    p.groups = std::move(kept);
    for (int& g : p.group_of)
      if (g >= 0) g = new_index[g];
  }

  // Group inputs and escaping outputs.
  std::vector<std::vector<bool>> used_outside(n);
  for (int id = 0; id < n; ++id) used_outside[id].assign(graph.nodes[id].outputs.size(), false);
  for (int id = 0; id < n; ++id) {
    ForEachInput(graph.nodes[id], [&](const ir::ValueRef& r) {
      if (r.is_input()) return;
      if (p.group_of[r.node] < 0 || p.group_of[r.node] != p.group_of[id])
        used_outside[r.node][r.output] = true;
    });
  }
  for (const ir::Arg& out : graph.outputs)
    ForEachRef(out, [&](const ir::ValueRef& r) {
      if (!r.is_input()) used_outside[r.node][r.output] = true;
    });
  for (size_t g = 0; g < p.groups.size(); ++g) {
    FusionGroup& group = p.groups[g];
    std::set<std::pair<int, int>> seen;
    for (int m : group.nodes) {
      ForEachInput(graph.nodes[m], [&](const ir::ValueRef& r) {
        if (group_of_ref(r) == static_cast<int>(g)) return;
        if (seen.insert({r.node, r.output}).second) group.inputs.push_back(r);
      });
      for (size_t o = 0; o < graph.nodes[m].outputs.size(); ++o) {
        if (used_outside[m][o]) group.outputs.push_back({m, static_cast<int>(o)});
      }
    }
  }

  // Schedule: Kahn's algorithm over units (groups and extern nodes), lowest first node id first.
  const int num_units = static_cast<int>(p.groups.size()) + n;
  auto unit_of_node = [&](int id) {
    return p.group_of[id] >= 0 ? p.group_of[id] : static_cast<int>(p.groups.size()) + id;
  };
  std::vector<int> first_node(num_units, -1);
  std::vector<bool> live(num_units, false);
  for (int id = 0; id < n; ++id) {
    int u = unit_of_node(id);
    if (!live[u]) first_node[u] = id;
    live[u] = true;
  }
  std::vector<std::set<int>> succ(num_units);
  std::vector<int> indegree(num_units, 0);
  for (int id = 0; id < n; ++id) {
    int u = unit_of_node(id);
    ForEachInput(graph.nodes[id], [&](const ir::ValueRef& r) {
      if (r.is_input()) return;
      int v = unit_of_node(r.node);
      if (v != u && succ[v].insert(u).second) ++indegree[u];
    });
  }
  std::priority_queue<std::pair<int, int>, std::vector<std::pair<int, int>>, std::greater<>> ready;
  for (int u = 0; u < num_units; ++u)
    if (live[u] && indegree[u] == 0) ready.push({first_node[u], u});
  while (!ready.empty()) {
    int u = ready.top().second;
    ready.pop();
    if (u < static_cast<int>(p.groups.size())) {
      p.schedule.push_back({true, u});
    } else {
      p.schedule.push_back({false, u - static_cast<int>(p.groups.size())});
    }
    for (int v : succ[u])
      if (--indegree[v] == 0) ready.push({first_node[v], v});
  }
  int live_units = static_cast<int>(std::count(live.begin(), live.end(), true));
  RET_CHECK(static_cast<int>(p.schedule.size()) == live_units);  // no cycle between units
  return absl::OkStatus();
}

std::string PrintPartition(const ir::Graph& graph, const Partition& partition) {
  std::string out;
  for (const ScheduleEntry& e : partition.schedule) {
    if (e.fused) {
      const FusionGroup& g = partition.groups[e.index];
      out += "fused";
      if (g.num_reduced_dims > 0)
        absl::StrAppend(&out, g.reduce_leading ? "(columns, reduce " : "(rows, reduce ",
                        g.num_reduced_dims, ")");
      for (int m : g.nodes) absl::StrAppend(&out, " %", m);
      out += " ->";
      for (const ir::ValueRef& r : g.outputs) absl::StrAppend(&out, " ", ir::PrintValueRef(r));
      out += "\n";
    } else {
      absl::StrAppend(&out, "extern %", e.index, " ", graph.nodes[e.index].target, "\n");
    }
  }
  return out;
}

}  // namespace tccd::codegen

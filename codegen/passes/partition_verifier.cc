// VerifyPartition (see partition_verifier.h).
#include "codegen/passes/partition_verifier.h"

#include <vector>

#include "absl/strings/str_cat.h"

namespace tccd::codegen {

std::string VerifyPartition(const ir::Graph& graph, const Partition& partition) {
  const int num_nodes = static_cast<int>(graph.nodes.size());
  const int num_groups = static_cast<int>(partition.groups.size());
  if (static_cast<int>(partition.group_of.size()) != num_nodes)
    return absl::StrCat("group_of has ", partition.group_of.size(), " entries for ", num_nodes,
                        " nodes");
  for (int n = 0; n < num_nodes; ++n) {
    const int g = partition.group_of[n];
    if (g < -1 || g >= num_groups)
      return absl::StrCat("node %", n, " names group ", g, " of ", num_groups);
  }
  std::vector<int> members(num_groups, 0);
  for (int g = 0; g < num_groups; ++g) {
    const std::vector<int>& nodes = partition.groups[g].nodes;
    if (nodes.empty()) return absl::StrCat("group ", g, " is empty");
    for (size_t i = 0; i < nodes.size(); ++i) {
      const int n = nodes[i];
      if (n < 0 || n >= num_nodes || partition.group_of[n] != g)
        return absl::StrCat("group ", g, " lists node %", n, ", which is not its member");
      if (i > 0 && nodes[i - 1] >= n)
        return absl::StrCat("group ", g, "'s nodes are not ascending");
    }
    members[g] = static_cast<int>(nodes.size());
  }
  for (int n = 0; n < num_nodes; ++n)
    if (const int g = partition.group_of[n]; g >= 0 && --members[g] < 0)
      return absl::StrCat("node %", n, " names group ", g, ", which does not list it");

  // Walk the schedule, defining what each entry makes.
  std::vector<std::vector<bool>> defined(num_nodes);
  for (int n = 0; n < num_nodes; ++n) defined[n].assign(graph.nodes[n].outputs.size(), false);
  auto is_defined = [&](const ir::ValueRef& r) {
    if (r.is_input()) return r.output >= 0 && r.output < static_cast<int>(graph.inputs.size());
    return r.node >= 0 && r.node < num_nodes && r.output >= 0 &&
           r.output < static_cast<int>(defined[r.node].size()) && defined[r.node][r.output];
  };
  auto define_node = [&](int n) { defined[n].assign(defined[n].size(), true); };
  std::vector<bool> group_run(num_groups, false), node_run(num_nodes, false);
  for (size_t e = 0; e < partition.schedule.size(); ++e) {
    const ScheduleEntry& entry = partition.schedule[e];
    if (entry.fused) {
      if (entry.index < 0 || entry.index >= num_groups)
        return absl::StrCat("schedule entry ", e, " runs group ", entry.index, " of ", num_groups);
      if (group_run[entry.index]) return absl::StrCat("group ", entry.index, " is scheduled twice");
      group_run[entry.index] = true;
      const FusionGroup& group = partition.groups[entry.index];
      for (const ir::ValueRef& r : group.inputs) {
        if (!r.is_input() && r.node >= 0 && r.node < num_nodes &&
            partition.group_of[r.node] == entry.index)
          return absl::StrCat("group ", entry.index, " lists its own member %", r.node,
                              " as an input");
        if (!is_defined(r))
          return absl::StrCat("group ", entry.index, " reads %", r.node, ":", r.output,
                              " before it is made");
      }
      for (int n : group.nodes) define_node(n);
    } else {
      const int n = entry.index;
      if (n < 0 || n >= num_nodes)
        return absl::StrCat("schedule entry ", e, " runs node %", n, " of ", num_nodes);
      if (partition.group_of[n] != -1)
        return absl::StrCat("node %", n, " is scheduled alone but belongs to group ",
                            partition.group_of[n]);
      if (node_run[n]) return absl::StrCat("node %", n, " is scheduled twice");
      node_run[n] = true;
      std::string error;
      ir::ForEachInput(graph.nodes[n], [&](const ir::ValueRef& r) {
        if (error.empty() && !is_defined(r))
          error =
              absl::StrCat("node %", n, " reads %", r.node, ":", r.output, " before it is made");
      });
      if (!error.empty()) return error;
      define_node(n);
    }
  }
  for (int g = 0; g < num_groups; ++g)
    if (!group_run[g]) return absl::StrCat("group ", g, " is never scheduled");
  for (int n = 0; n < num_nodes; ++n)
    if (partition.group_of[n] == -1 && !node_run[n])
      return absl::StrCat("node %", n, " is never scheduled");
  std::string error;
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) {
      if (error.empty() && !is_defined(r))
        error = absl::StrCat("graph output %", r.node, ":", r.output, " is never made");
    });
  return error;
}

}  // namespace tccd::codegen

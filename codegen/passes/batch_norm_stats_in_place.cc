// BatchNormStatsInPlace (see batch_norm_stats_in_place.h).
#include "codegen/passes/batch_norm_stats_in_place.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "codegen/ops/op_properties.h"
#include "codegen/passes/graph_rebuild.h"

namespace tccd::codegen {
namespace {

constexpr char kFunctional[] = "aten::_native_batch_norm_legit_functional.default";
constexpr char kInPlace[] = "aten::_native_batch_norm_legit.default";
constexpr char kCopy[] = "aten::copy_.default";

// Values as (node, output); an input is (kInput, index).
using Refs = absl::flat_hash_set<std::pair<int, int>>;

// Input `input` and the values that view it.
Refs AliasesOfInput(const ir::Graph& graph, int input) {
  Refs set = {{ir::ValueRef::kInput, input}};
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    const ir::Node& node = graph.nodes[id];
    if (!(IsViewOp(node.target) || node.target == kCopy) || node.args.empty() ||
        !node.args[0].is_ref() ||
        !set.contains(std::make_pair(node.args[0].ref().node, node.args[0].ref().output)))
      continue;
    for (size_t o = 0; o < node.outputs.size(); ++o)
      set.insert({static_cast<int>(id), static_cast<int>(o)});
  }
  return set;
}

bool ReadsAny(const ir::Node& node, const Refs& values) {
  bool any = false;
  ir::ForEachInput(node, [&](const ir::ValueRef& r) {
    any = any || values.contains(std::make_pair(r.node, r.output));
  });
  return any;
}

}  // namespace

absl::StatusOr<bool> BatchNormStatsInPlace::Run(ir::Graph& graph) {
  const int n = static_cast<int>(graph.nodes.size());
  // copy_ nodes per graph input, and which node output each copies.
  absl::flat_hash_map<int, std::vector<int>> copies_into;
  for (int id = 0; id < n; ++id) {
    const ir::Node& node = graph.nodes[id];
    if (node.target == kCopy && node.args.size() >= 2 && node.args[0].is_ref() &&
        node.args[0].ref().is_input())
      copies_into[node.args[0].ref().output].push_back(id);
  }
  // norm id -> its two copy_ nodes; copy_ id -> the input it writes.
  absl::flat_hash_map<int, std::pair<int, int>> chosen;
  absl::flat_hash_map<int, int> dropped_copy;
  for (int id = 0; id < n; ++id) {
    const ir::Node& node = graph.nodes[id];
    if (node.target != kFunctional || node.args.size() != 8 || node.outputs.size() != 5 ||
        !node.kwargs.empty())
      continue;
    const bool* training = std::get_if<bool>(&node.args[5].v);
    if (training == nullptr || !*training) continue;
    std::optional<int> copy_of[2];
    bool ok = true;
    for (int s = 0; s < 2 && ok; ++s) {
      const ir::Arg& stat = node.args[3 + s];
      ok = stat.is_ref() && stat.ref().is_input();
      if (!ok) break;
      const int input = stat.ref().output;
      auto it = copies_into.find(input);
      ok = it != copies_into.end() && it->second.size() == 1 &&
           graph.inputs[input] == node.outputs[3 + s];
      if (!ok) break;
      const int c = it->second.front();
      const ir::Arg& src = graph.nodes[c].args[1];
      ok = c > id && src.is_ref() && src.ref() == ir::ValueRef{id, 3 + s};
      if (!ok) break;
      // Nobody between the norm and the copy reads the old statistics.
      const Refs aliases = AliasesOfInput(graph, input);
      for (int j = id + 1; j < c && ok; ++j) ok = !ReadsAny(graph.nodes[j], aliases);
      copy_of[s] = c;
    }
    if (!ok) continue;
    chosen[id] = {*copy_of[0], *copy_of[1]};
    dropped_copy[*copy_of[0]] = node.args[3].ref().output;
    dropped_copy[*copy_of[1]] = node.args[4].ref().output;
  }
  if (chosen.empty()) return false;
  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        if (chosen.contains(id)) {
          ir::Node norm = node;
          norm.target = kInPlace;
          norm.outputs.resize(3);
          const ir::Arg mean = node.args[3], var = node.args[4];  // remapped: the inputs
          const ir::Arg first = AppendNode(out, std::move(norm));
          const int new_id = first.ref().node;
          return std::vector<ir::Arg>{first, ir::Arg{ir::ValueRef{new_id, 1}},
                                      ir::Arg{ir::ValueRef{new_id, 2}}, mean, var};
        }
        if (auto it = dropped_copy.find(id); it != dropped_copy.end())
          return std::vector<ir::Arg>{ir::Arg{ir::ValueRef{ir::ValueRef::kInput, it->second}}};
        return std::nullopt;
      });
}

}  // namespace tccd::codegen

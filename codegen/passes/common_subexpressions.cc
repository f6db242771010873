// CommonSubexpressions (see common_subexpressions.h).
#include "codegen/passes/common_subexpressions.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "codegen/ir/printer.h"
#include "codegen/ops/op_properties.h"
#include "codegen/passes/graph_rebuild.h"

namespace tccd::codegen {
namespace {

// The node as text with its (remapped) arguments: equal keys compute equal values.
std::string KeyOf(const ir::Node& node) {
  std::string key = node.target + "(";
  for (const ir::Arg& a : node.args) absl::StrAppend(&key, ir::PrintArg(a), ",");
  for (const ir::NamedArg& kw : node.kwargs)
    absl::StrAppend(&key, kw.name, "=", ir::PrintArg(kw.value), ",");
  key += ")->";
  for (const ir::TensorType& t : node.outputs) absl::StrAppend(&key, ir::PrintTensorType(t), ",");
  return key;
}

// empty/empty_like/new_empty/empty_strided: distinct buffers by contract (a graph may fill each
// in place), never one tensor.
bool AllocatesOnly(const ir::Node& node) { return node.target.find("empty") != std::string::npos; }

}  // namespace

absl::StatusOr<bool> CommonSubexpressions::Run(ir::Graph& graph) {
  const std::set<int> graph_outputs = ReturnedNodes(graph);
  absl::flat_hash_map<std::string, std::vector<ir::Arg>> seen;  // key -> values in the new graph
  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        if (node.outputs.empty() || !IsSideEffectFree(node.target) || AllocatesOnly(node))
          return std::nullopt;
        const std::string key = KeyOf(node);
        auto it = seen.find(key);
        if (it != seen.end() && !graph_outputs.count(id)) return it->second;
        if (it == seen.end()) {
          // This node is copied as the next one of `out`: its values are (next id, output k).
          const int next = static_cast<int>(out.nodes.size());
          std::vector<ir::Arg> values;
          for (size_t k = 0; k < node.outputs.size(); ++k)
            values.push_back(ir::Arg{ir::ValueRef{next, static_cast<int>(k)}});
          seen.emplace(key, std::move(values));
        }
        return std::nullopt;
      });
}

}  // namespace tccd::codegen

// Known-op registry (see known_ops.h).
#include "codegen/ir/known_ops.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace tccd::ir {

bool IsKnownOp(const std::string& target) {
  static const auto* kOps = new absl::flat_hash_set<std::string>{
#include "codegen/ir/known_ops.inc"
  };
  return kOps->contains(target);
}

std::vector<std::string> UnknownOps(const Graph& graph) {
  std::vector<std::string> unknown;
  absl::flat_hash_set<std::string> seen;
  for (const Node& node : graph.nodes)
    if (!IsKnownOp(node.target) && seen.insert(node.target).second) unknown.push_back(node.target);
  return unknown;
}

}  // namespace tccd::ir

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

absl::Status CheckKnownOps(const Graph& graph) {
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    const std::string& target = graph.nodes[id].target;
    if (!IsKnownOp(target))
      return absl::UnimplementedError(absl::StrCat(
          "node ", id, ": unknown op '", target.substr(0, 120),
          "' (tccd accepts aten::, prims:: and _c10d_functional:: op overloads it knows; "
          "this graph runs eagerly)"));
  }
  return absl::OkStatus();
}

}  // namespace tccd::ir

// IntegerIdentities (see integer_identities.h).
#include "codegen/passes/integer_identities.h"

#include <optional>
#include <set>
#include <vector>

#include "codegen/passes/graph_rebuild.h"

namespace tccd::codegen {
namespace {

// Integers and bool: no -0.0 or NaN, so the identities are exact.
bool IsExactIdentityDType(ir::DType d) { return d == ir::DType::kBool || ir::IsIntegral(d); }

// The int (or bool) value of a number argument, or nullopt (a float, a tensor, absent).
std::optional<int64_t> IntValue(const ir::Arg* a) {
  if (a == nullptr) return std::nullopt;
  if (auto* i = std::get_if<int64_t>(&a->v)) return *i;
  if (auto* b = std::get_if<bool>(&a->v)) return *b ? 1 : 0;
  return std::nullopt;
}

// The identity element `node`'s second operand must be, or nullopt when it is no such op.
std::optional<int64_t> IdentityOf(const ir::Node& node) {
  if (node.target == "aten::add.Tensor" || node.target == "aten::sub.Tensor" ||
      node.target == "aten::add.Scalar" || node.target == "aten::sub.Scalar") {
    const ir::Arg* alpha = node.args.size() > 2 ? &node.args[2] : node.kwarg("alpha");
    if (alpha != nullptr && IntValue(alpha) != 1) return std::nullopt;
    return 0;
  }
  if (node.target == "aten::mul.Tensor" || node.target == "aten::mul.Scalar") return 1;
  return std::nullopt;
}

}  // namespace

absl::StatusOr<bool> IntegerIdentities::Run(ir::Graph& graph) {
  const std::set<int> graph_outputs = ReturnedNodes(graph);
  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        if (graph_outputs.count(id) || node.outputs.size() != 1 || node.args.size() < 2 ||
            !node.args[0].is_ref())
          return std::nullopt;
        const std::optional<int64_t> identity = IdentityOf(node);
        if (!identity || IntValue(&node.args[1]) != *identity) return std::nullopt;
        // Only keyword: alpha (checked above).
        for (const ir::NamedArg& kw : node.kwargs)
          if (kw.name != "alpha") return std::nullopt;
        const ir::TensorType& x = out.type_of(node.args[0].ref());
        const ir::TensorType& type = node.outputs[0];
        if (!IsExactIdentityDType(x.dtype) || x.dtype != type.dtype || x.sizes != type.sizes ||
            x.device != type.device)
          return std::nullopt;
        return std::vector<ir::Arg>{node.args[0]};
      });
}

}  // namespace tccd::codegen

// FloatUnitScales (see float_unit_scales.h).
#include "codegen/passes/float_unit_scales.h"

#include <optional>
#include <set>
#include <vector>

#include "codegen/ops/op_properties.h"
#include "codegen/passes/graph_rebuild.h"

namespace tccd::codegen {
namespace {

// Whether `node` multiplies or divides its first operand by the number 1 (no other arguments).
bool IsUnitScale(const ir::Node& node) {
  if (node.target != "aten::mul.Scalar" && node.target != "aten::mul.Tensor" &&
      node.target != "aten::div.Scalar" && node.target != "aten::div.Tensor")
    return false;
  if (node.args.size() != 2 || !node.kwargs.empty() || !node.args[0].is_ref()) return false;
  if (const auto* d = std::get_if<double>(&node.args[1].v)) return *d == 1.0;
  if (const auto* i = std::get_if<int64_t>(&node.args[1].v)) return *i == 1;
  return false;
}

// Whether `ref`, followed back through views, is made by a pointwise op: then the multiply
// would only ride along in that op's kernel, and dropping it changes the layouts the partition
// sees for nothing (T5's forward: q and k cast to f32 and scaled in one kernel; read directly, the
// casts kept their permuted layouts and cost a clone each, 8 kernels more than the 8 saved).
bool MadePointwise(const ir::Graph& graph, ir::ValueRef ref) {
  while (!ref.is_input()) {
    const ir::Node& node = graph.nodes[ref.node];
    if (!IsViewOp(node.target)) return PropertiesOf(node.target).category == OpCategory::kPointwise;
    if (node.args.empty() || !node.args[0].is_ref()) return false;
    ref = node.args[0].ref();
  }
  return false;
}

}  // namespace

absl::StatusOr<bool> FloatUnitScales::Run(ir::Graph& graph) {
  const std::set<int> graph_outputs = ReturnedNodes(graph);
  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        if (graph_outputs.count(id) || node.outputs.size() != 1 || !IsUnitScale(node) ||
            MadePointwise(out, node.args[0].ref()))
          return std::nullopt;
        const ir::TensorType& x = out.type_of(node.args[0].ref());
        const ir::TensorType& type = node.outputs[0];
        if (!ir::IsFloatingPoint(x.dtype) || x.dtype != type.dtype || x.sizes != type.sizes ||
            x.strides != type.strides || x.device != type.device)
          return std::nullopt;
        return std::vector<ir::Arg>{node.args[0]};
      });
}

}  // namespace tccd::codegen

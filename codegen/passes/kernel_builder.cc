// Fusion group -> PointwiseKernel (see kernel_builder.h).
#include "codegen/passes/kernel_builder.h"

#include <map>
#include <set>

#include "codegen/passes/index_ops.h"
#include "codegen/passes/pointwise_ops.h"
#include "codegen/passes/scatter_ops.h"
#include "base/status_macros.h"

namespace tccd::codegen {

absl::StatusOr<PointwiseKernel> BuildPointwiseKernel(const ir::Graph& graph,
                                                     const FusionGroup& group,
                                                     const std::string& name) {
  if (group.num_reduced_dims > 0) return BuildRowReductionKernel(graph, group, name);
  PointwiseKernel kernel;
  kernel.name = name;
  kernel.shape = group.shape;
  PwBuilder b(&kernel.body);

  // Gather operands (index_ops.h) are read only by their gathers: no load.
  std::set<ir::ValueRef> gathered;
  for (int m : group.nodes) {
    for (const ir::ValueRef& r : GatheredRefs(graph.nodes[m])) gathered.insert(r);
    for (const ir::ValueRef& r : ScatterGatheredRefs(graph.nodes[m])) gathered.insert(r);
  }
  std::map<ir::ValueRef, int> input_index;
  // Held value of every tensor the body has produced or loaded so far.
  std::map<ir::ValueRef, int> held;
  for (size_t i = 0; i < group.inputs.size(); ++i) {
    const ir::TensorType& t = graph.type_of(group.inputs[i]);
    kernel.input_dtypes.push_back(t.dtype);
    input_index[group.inputs[i]] = static_cast<int>(i);
    if (gathered.contains(group.inputs[i])) continue;
    PwInstr load;
    load.op = PwOp::kLoad;
    load.dtype = t.dtype;
    load.operand = static_cast<int>(i);
    held[group.inputs[i]] = b.Coerce(b.Emit(load), HeldDType(t.dtype));
  }
  auto value_of = [&](const ir::ValueRef& r) { return held.at(r); };
  auto input_of = [&](const ir::ValueRef& r) { return input_index.at(r); };
  for (int m : group.nodes) {
    const ir::Node& node = graph.nodes[m];
    int v;
    if (IsScatterOp(graph, node)) {
      // A scatter group is the node alone (fusion.cc), so its output is the kernel's only one;
      // it has no held value and no store.
      const ir::ValueRef self{m, 0};
      RET_CHECK(group.nodes.size() == 1 && group.outputs.size() == 1 && group.outputs[0] == self);
      kernel.output_dtypes.push_back(node.outputs[0].dtype);
      RETURN_IF_ERROR(LowerScatterOp(graph, node, 0, input_of, value_of, b));
      kernel.scatter_elements = node.outputs[0].numel();
      kernel.fused_ops.push_back(node.target);
      std::string problem = VerifyPointwiseKernel(kernel);
      if (!problem.empty())
        return absl::InternalError("generated an invalid kernel " + name + ": " + problem);
      return kernel;
    }
    if (IsIndexOp(graph, node)) {
      ASSIGN_OR_RETURN(v, LowerIndexOp(graph, node, input_of, b));
    } else {
      ASSIGN_OR_RETURN(v, LowerPointwiseOp(node, value_of, b));
    }
    RETURN_IF_ERROR(CheckDeclaredDType(node, m, b.dtype(v)));
    held[{m, 0}] = v;
    kernel.fused_ops.push_back(node.target);
  }
  for (size_t o = 0; o < group.outputs.size(); ++o) {
    ir::DType dtype = graph.type_of(group.outputs[o]).dtype;
    kernel.output_dtypes.push_back(dtype);
    PwInstr store;
    store.op = PwOp::kStore;
    store.dtype = dtype;
    store.operand = static_cast<int>(o);
    store.args = {b.Coerce(held.at(group.outputs[o]), dtype)};
    b.Emit(store);
  }
  std::string problem = VerifyPointwiseKernel(kernel);
  if (!problem.empty())
    return absl::InternalError("generated an invalid kernel " + name + ": " + problem);
  return kernel;
}

}  // namespace tccd::codegen

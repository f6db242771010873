// Partition -> tccd.v1.Plan (see plan_builder.h).
#include "codegen/passes/plan_builder.h"

#include <map>

#include "codegen/ir/proto_convert.h"
#include "codegen/passes/reduction_fusion.h"
#include "proto/status_macros.h"

namespace tccd::codegen {
using ir::ForEachInput;
using ir::ForEachRef;

std::vector<int64_t> IterationStrides(const ir::TensorType& type, const std::vector<int64_t>& shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> strides(rank, 0);
  for (int64_t d = 0; d < type.rank(); ++d) {
    int64_t out_dim = rank - type.rank() + d;
    strides[out_dim] = type.sizes[d] == 1 ? 0 : type.strides[d];
  }
  return strides;
}

std::vector<int64_t> GatherOperandStrides(const ir::TensorType& type, const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 0);
  for (int64_t d = 0; d < type.rank() && d < static_cast<int64_t>(shape.size()); ++d) strides[d] = type.strides[d];
  return strides;
}

absl::StatusOr<v1::Plan> BuildPlan(const ir::Graph& graph, const Partition& partition,
                                   const std::vector<PointwiseKernel>& kernels,
                                   const NativeTarget& native) {
  v1::Plan plan;
  std::map<ir::ValueRef, int> id_of;
  auto define = [&](const ir::ValueRef& r) {
    int id = plan.values_size();
    *plan.add_values() = ir::TensorTypeToProto(graph.type_of(r));
    id_of[r] = id;
    return id;
  };
  plan.set_num_inputs(static_cast<int>(graph.inputs.size()));
  for (size_t i = 0; i < graph.inputs.size(); ++i) define({ir::ValueRef::kInput, static_cast<int>(i)});

  // Which node outputs anything reads (unused extern outputs get id -1).
  std::map<ir::ValueRef, bool> used;
  for (const ir::Node& node : graph.nodes) ForEachInput(node, [&](const ir::ValueRef& r) { used[r] = true; });
  for (const ir::Arg& a : graph.outputs) ForEachRef(a, [&](const ir::ValueRef& r) { used[r] = true; });

  auto id = [&](const ir::ValueRef& r) { return id_of.at(r); };
  std::map<int, int> last_use;  // plan value id -> step index
  for (const ScheduleEntry& entry : partition.schedule) {
    const int step_index = plan.steps_size();
    v1::Step* step = plan.add_steps();
    if (entry.fused) {
      const FusionGroup& group = partition.groups[entry.index];
      const PointwiseKernel& kernel = kernels.at(entry.index);
      v1::NativeCall* call = step->mutable_native();
      call->set_artifact(native.artifact);
      call->set_symbol(kernel.name);
      call->set_abi(native.abi);
      for (int64_t s : group.shape) call->add_shape(s);
      for (size_t i = 0; i < group.inputs.size(); ++i) {
        const ir::ValueRef& r = group.inputs[i];
        RET_CHECK(id_of.count(r));
        call->add_inputs(id(r));
        last_use[id(r)] = step_index;
        std::vector<int64_t> strides = IsGatherOperand(kernel, static_cast<int>(i))
                                           ? GatherOperandStrides(graph.type_of(r), group.shape)
                                           : IterationStrides(graph.type_of(r), group.shape);
        for (int64_t s : strides) call->add_expected_strides(s);
      }
      for (const ir::ValueRef& r : group.outputs) {
        step->add_outputs(define(r));
        // Row-reduction outputs without keepdim map to the leading dims (reduction_fusion.h).
        for (int64_t s : GroupOperandStrides(graph, group, r, /*is_output=*/true)) call->add_expected_strides(s);
      }
      v1::KernelInfo* info = call->add_kernels();
      info->set_name(kernel.name);
      info->set_kind(kernel.is_row_reduction() ? native.row_reduction_kind
                     : HasIndexOps(kernel)      ? native.kernel_kind + "_index"
                                                : native.kernel_kind);
      for (const std::string& op : kernel.fused_ops) info->add_ops(op);
      for (int64_t d : kernel.shape) info->add_shape(d);
    } else {
      const ir::Node& node = graph.nodes[entry.index];
      v1::ExternCall* call = step->mutable_extern_call();
      call->set_target(node.target);
      absl::Status missing = absl::OkStatus();
      auto ref_id = [&](const ir::ValueRef& r) {
        auto it = id_of.find(r);
        if (it == id_of.end()) {
          missing = absl::InternalError("plan: extern step reads an undefined value");
          return -1;
        }
        last_use[it->second] = step_index;
        return it->second;
      };
      for (const ir::Arg& a : node.args) *call->add_args() = ir::ArgToProto(a, ref_id);
      for (const ir::NamedArg& kw : node.kwargs) {
        v1::NamedValue* nv = call->add_kwargs();
        nv->set_name(kw.name);
        *nv->mutable_value() = ir::ArgToProto(kw.value, ref_id);
      }
      RETURN_IF_ERROR(missing);
      for (size_t o = 0; o < node.outputs.size(); ++o) {
        ir::ValueRef r{entry.index, static_cast<int>(o)};
        step->add_outputs(used.count(r) ? define(r) : -1);
      }
    }
  }
  absl::Status missing = absl::OkStatus();
  std::map<int, bool> is_output;
  auto out_id = [&](const ir::ValueRef& r) {
    auto it = id_of.find(r);
    if (it == id_of.end()) {
      missing = absl::InternalError("plan: graph output is an undefined value");
      return -1;
    }
    is_output[it->second] = true;
    return it->second;
  };
  for (const ir::Arg& a : graph.outputs) *plan.add_outputs() = ir::ArgToProto(a, out_id);
  RETURN_IF_ERROR(missing);
  for (const auto& [value, step_index] : last_use) {
    if (is_output.count(value)) continue;
    plan.mutable_steps(step_index)->add_release(value);
  }
  return plan;
}

}  // namespace tccd::codegen

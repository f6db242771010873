// Partition -> schedule -> tccd.v1.Plan (see plan_builder.h).
#include "codegen/passes/plan_builder.h"

#include <functional>
#include <map>

#include "absl/strings/str_cat.h"
#include "codegen/passes/loop_order.h"
#include "codegen/passes/reduction_fusion.h"
#include "codegen/schedule/plan_serializer.h"
#include "codegen/schedule/release_after_last_use.h"
#include "base/status_macros.h"

namespace tccd::codegen {
using ir::ForEachInput;
using ir::ForEachRef;

std::vector<int64_t> IterationStrides(const ir::TensorType& type,
                                      const std::vector<int64_t>& shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> strides(rank, 0);
  for (int64_t d = 0; d < type.rank(); ++d) {
    int64_t out_dim = rank - type.rank() + d;
    strides[out_dim] = type.sizes[d] == 1 ? 0 : type.strides[d];
  }
  return strides;
}

std::vector<int64_t> GatherOperandStrides(const ir::TensorType& type,
                                          const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 0);
  for (int64_t d = 0; d < type.rank() && d < static_cast<int64_t>(shape.size()); ++d)
    strides[d] = type.strides[d];
  return strides;
}

absl::StatusOr<schedule::Schedule> BuildSchedule(const ir::Graph& graph, const Partition& partition,
                                                 const std::vector<PointwiseKernel>& kernels,
                                                 const NativeTarget& native) {
  schedule::Schedule out;
  std::map<ir::ValueRef, int> id_of;
  auto define = [&](const ir::ValueRef& r) {
    int id = static_cast<int>(out.values.size());
    out.values.push_back(graph.type_of(r));
    id_of[r] = id;
    return id;
  };
  out.num_inputs = static_cast<int>(graph.inputs.size());
  for (size_t i = 0; i < graph.inputs.size(); ++i)
    define({ir::ValueRef::kInput, static_cast<int>(i)});

  // Which node outputs anything reads (unused extern outputs get id -1).
  std::map<ir::ValueRef, bool> used;
  for (const ir::Node& node : graph.nodes)
    ForEachInput(node, [&](const ir::ValueRef& r) { used[r] = true; });
  for (const ir::Arg& a : graph.outputs)
    ForEachRef(a, [&](const ir::ValueRef& r) { used[r] = true; });

  // Graph refs become schedule refs (.node = value id); a ref to an undefined value is a bug.
  absl::Status missing = absl::OkStatus();
  auto remap = [&](const ir::Arg& arg, const char* what) {
    ir::Arg a = arg;
    std::function<void(ir::Arg&)> visit = [&](ir::Arg& x) {
      if (x.is_ref()) {
        auto it = id_of.find(x.ref());
        if (it == id_of.end())
          missing = absl::InternalError(absl::StrCat("plan: ", what, " is an undefined value"));
        x = schedule::Ref(it == id_of.end() ? -1 : it->second);
      } else if (auto* list = std::get_if<ir::ArgList>(&x.v)) {
        for (ir::Arg& item : *list) visit(item);
      }
    };
    visit(a);
    return a;
  };
  for (const ScheduleEntry& entry : partition.schedule) {
    schedule::Step step;
    if (entry.fused) {
      const FusionGroup& group = partition.groups[entry.index];
      const PointwiseKernel& kernel = kernels.at(entry.index);
      schedule::KernelLaunch launch;
      launch.entry = {native.artifact, kernel.name, native.abi};
      launch.shape = InLoopOrder(group.shape, group.loop_order);
      for (size_t i = 0; i < group.inputs.size(); ++i) {
        const ir::ValueRef& r = group.inputs[i];
        RET_CHECK(id_of.count(r));
        launch.inputs.push_back(id_of.at(r));
        std::vector<int64_t> strides = IsGatherOperand(kernel, static_cast<int>(i))
                                           ? GatherOperandStrides(graph.type_of(r), group.shape)
                                           : IterationStrides(graph.type_of(r), group.shape);
        strides = InLoopOrder(strides, group.loop_order);
        launch.expected_strides.insert(launch.expected_strides.end(), strides.begin(),
                                       strides.end());
      }
      for (size_t o = 0; o < group.outputs.size(); ++o) {
        const ir::ValueRef& r = group.outputs[o];
        step.outputs.push_back(define(r));
        // A scatter output's row holds its own strides, like a gather operand's (its shape is
        // not the iteration space). Row-reduction outputs without keepdim map to the leading
        // dims (reduction_fusion.h).
        for (int64_t s : InLoopOrder(IsScatterOutput(kernel, static_cast<int>(o))
                                         ? GatherOperandStrides(graph.type_of(r), group.shape)
                                         : GroupOperandStrides(graph, group, r, /*is_output=*/true),
                                     group.loop_order))
          launch.expected_strides.push_back(s);
      }
      schedule::KernelInfo info;
      info.name = kernel.name;
      info.kind = kernel.is_row_reduction() ? native.row_reduction_kind
                  : HasIndexOps(kernel)     ? native.kernel_kind + "_index"
                                            : native.kernel_kind;
      // A reordered kernel's strides are in its own dim order: runtimes copy inputs that arrive
      // in another layout into the declared one instead of recomputing strides (loop_order.h).
      if (!group.loop_order.empty()) info.kind += "_reordered";
      info.ops = kernel.fused_ops;
      info.shape = kernel.shape;
      launch.kernels.push_back(std::move(info));
      step.op = std::move(launch);
    } else {
      const ir::Node& node = graph.nodes[entry.index];
      schedule::ExternOp op;
      op.target = node.target;
      for (const ir::Arg& a : node.args) op.args.push_back(remap(a, "extern step reads"));
      for (const ir::NamedArg& kw : node.kwargs)
        op.kwargs.push_back({kw.name, remap(kw.value, "extern step reads")});
      RETURN_IF_ERROR(missing);
      for (size_t o = 0; o < node.outputs.size(); ++o) {
        ir::ValueRef r{entry.index, static_cast<int>(o)};
        step.outputs.push_back(used.count(r) ? define(r) : schedule::kUnused);
      }
      step.op = std::move(op);
    }
    out.steps.push_back(std::move(step));
  }
  for (const ir::Arg& a : graph.outputs) out.outputs.push_back(remap(a, "graph output"));
  RETURN_IF_ERROR(missing);
  return out;
}

absl::StatusOr<v1::Plan> BuildPlan(const ir::Graph& graph, const Partition& partition,
                                   const std::vector<PointwiseKernel>& kernels,
                                   const NativeTarget& native) {
  ASSIGN_OR_RETURN(schedule::Schedule s, BuildSchedule(graph, partition, kernels, native));
  RETURN_IF_ERROR(schedule::ReleaseAfterLastUse().Run(s).status());
  return schedule::PlanFromSchedule(s);
}

}  // namespace tccd::codegen

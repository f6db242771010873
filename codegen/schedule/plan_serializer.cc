// Schedule <-> tccd.v1.Plan (see plan_serializer.h).
#include "codegen/schedule/plan_serializer.h"

#include "absl/strings/str_cat.h"
#include "codegen/ir/proto_convert.h"
#include "base/status_macros.h"

namespace tccd::schedule {
namespace {

void KernelInfoToProto(const KernelInfo& k, v1::KernelInfo* out) {
  out->set_name(k.name);
  out->set_kind(k.kind);
  for (const std::string& op : k.ops) out->add_ops(op);
  for (int64_t g : k.grid) out->add_grid(g);
  for (int64_t b : k.block) out->add_block(b);
  out->set_shared_mem_bytes(k.shared_mem_bytes);
  for (int64_t d : k.shape) out->add_shape(d);
}

KernelInfo KernelInfoFromProto(const v1::KernelInfo& k) {
  KernelInfo out;
  out.name = k.name();
  out.kind = k.kind();
  out.ops.assign(k.ops().begin(), k.ops().end());
  out.grid.assign(k.grid().begin(), k.grid().end());
  out.block.assign(k.block().begin(), k.block().end());
  out.shared_mem_bytes = k.shared_mem_bytes();
  out.shape.assign(k.shape().begin(), k.shape().end());
  return out;
}

}  // namespace

absl::StatusOr<v1::Plan> PlanFromSchedule(const Schedule& schedule) {
  v1::Plan plan;
  plan.set_num_inputs(schedule.num_inputs);
  for (const ir::TensorType& t : schedule.values) *plan.add_values() = ir::TensorTypeToProto(t);
  const int num_values = static_cast<int>(schedule.values.size());
  absl::Status bad = absl::OkStatus();
  auto id = [&](ValueId v) {
    if (v < 0 || v >= num_values)
      bad = absl::InternalError(absl::StrCat("schedule refers to undeclared value %", v));
    return v;
  };
  auto ref_id = [&](const ir::ValueRef& r) { return id(r.node); };
  for (size_t i = 0; i < schedule.steps.size(); ++i) {
    const Step& step = schedule.steps[i];
    if (const auto* release = std::get_if<Release>(&step.op)) {
      if (plan.steps_size() == 0)
        return absl::InternalError("schedule releases values before its first step");
      for (ValueId v : release->values)
        plan.mutable_steps(plan.steps_size() - 1)->add_release(id(v));
      continue;
    }
    v1::Step* out = plan.add_steps();
    for (ValueId v : step.outputs) out->add_outputs(v == kUnused ? -1 : id(v));
    if (const std::vector<ValueId>* into = WriteIntoOf(step))
      for (ValueId v : *into) out->add_write_into(v == kUnused ? -1 : id(v));
    if (const auto* k = std::get_if<KernelLaunch>(&step.op)) {
      v1::NativeCall* call = out->mutable_native();
      call->set_artifact(k->entry.artifact);
      call->set_symbol(k->entry.symbol);
      call->set_abi(k->entry.abi);
      for (int64_t s : k->shape) call->add_shape(s);
      for (ValueId v : k->inputs) call->add_inputs(id(v));
      for (const KernelInfo& info : k->kernels) KernelInfoToProto(info, call->add_kernels());
      for (int64_t s : k->expected_strides) call->add_expected_strides(s);
    } else if (step.is<ExternOp>() || step.is<LibraryCall>()) {
      // A library call no segment took runs as the op it computes.
      const ExternOp* e = step.is<ExternOp>() ? &step.as<ExternOp>() : &step.as<LibraryCall>().op;
      v1::ExternCall* call = out->mutable_extern_call();
      call->set_target(e->target);
      for (const ir::Arg& a : e->args) *call->add_args() = ir::ArgToProto(a, ref_id);
      for (const ir::NamedArg& kw : e->kwargs) {
        v1::NamedValue* nv = call->add_kwargs();
        nv->set_name(kw.name);
        *nv->mutable_value() = ir::ArgToProto(kw.value, ref_id);
      }
    } else if (const auto* s = std::get_if<Segment>(&step.op)) {
      v1::NativeSegment* seg = out->mutable_segment();
      seg->set_artifact(s->entry.artifact);
      seg->set_symbol(s->entry.symbol);
      seg->set_abi(s->entry.abi);
      for (ValueId v : s->inputs) seg->add_inputs(id(v));
      seg->set_workspace_bytes(s->workspace_bytes);
      for (const KernelInfo& info : s->kernels) KernelInfoToProto(info, seg->add_kernels());
    } else if (const auto* a = std::get_if<Alias>(&step.op)) {
      out->mutable_alias()->set_base(id(a->base));
    }
  }
  for (const ir::Arg& a : schedule.outputs) *plan.add_outputs() = ir::ArgToProto(a, ref_id);
  RETURN_IF_ERROR(bad);
  return plan;
}

absl::StatusOr<Schedule> ScheduleFromPlan(const v1::Plan& plan) {
  Schedule schedule;
  schedule.num_inputs = plan.num_inputs();
  for (int v = 0; v < plan.values_size(); ++v) {
    ASSIGN_OR_RETURN(ir::TensorType t,
                     ir::TensorTypeFromProto(plan.values(v), absl::StrCat("plan value ", v)));
    schedule.values.push_back(std::move(t));
  }
  const int num_values = plan.values_size();
  absl::Status bad = absl::OkStatus();
  auto check = [&](int v, bool allow_unused) {
    if ((v < 0 && !(allow_unused && v == -1)) || v >= num_values)
      bad = absl::InvalidArgumentError(absl::StrCat("plan refers to undeclared value ", v));
    return v < 0 ? kUnused : v;
  };
  auto ids = [&](const auto& repeated) {
    std::vector<ValueId> out;
    for (int v : repeated) out.push_back(check(v, /*allow_unused=*/false));
    return out;
  };
  // Refs in plan arguments are value ids (node >= 0, output 0).
  auto arg = [&](const v1::Value& value, const std::string& where) -> absl::StatusOr<ir::Arg> {
    ASSIGN_OR_RETURN(ir::Arg a, ir::ArgFromProto(value, where));
    ir::ForEachRef(a, [&](const ir::ValueRef& r) {
      if (r.is_input() || r.output != 0)
        bad = absl::InvalidArgumentError(absl::StrCat(where, ": a ref is not a value id"));
      check(r.node, /*allow_unused=*/false);
    });
    return a;
  };
  for (int i = 0; i < plan.steps_size(); ++i) {
    const v1::Step& wire = plan.steps(i);
    const std::string where = absl::StrCat("plan step ", i);
    Step step;
    for (int v : wire.outputs()) step.outputs.push_back(check(v, /*allow_unused=*/true));
    switch (wire.kind_case()) {
      case v1::Step::kNative: {
        const v1::NativeCall& call = wire.native();
        KernelLaunch k;
        k.entry = {call.artifact(), call.symbol(), call.abi()};
        k.shape.assign(call.shape().begin(), call.shape().end());
        k.inputs = ids(call.inputs());
        k.expected_strides.assign(call.expected_strides().begin(), call.expected_strides().end());
        for (const v1::KernelInfo& info : call.kernels())
          k.kernels.push_back(KernelInfoFromProto(info));
        step.op = std::move(k);
        break;
      }
      case v1::Step::kExternCall: {
        const v1::ExternCall& call = wire.extern_call();
        ExternOp e;
        e.target = call.target();
        for (const v1::Value& a : call.args()) {
          ASSIGN_OR_RETURN(ir::Arg converted, arg(a, where));
          e.args.push_back(std::move(converted));
        }
        for (const v1::NamedValue& kw : call.kwargs()) {
          ASSIGN_OR_RETURN(ir::Arg converted, arg(kw.value(), where));
          e.kwargs.push_back({kw.name(), std::move(converted)});
        }
        step.op = std::move(e);
        break;
      }
      case v1::Step::kSegment: {
        const v1::NativeSegment& seg = wire.segment();
        Segment s;
        s.entry = {seg.artifact(), seg.symbol(), seg.abi()};
        s.inputs = ids(seg.inputs());
        s.workspace_bytes = seg.workspace_bytes();
        for (const v1::KernelInfo& info : seg.kernels())
          s.kernels.push_back(KernelInfoFromProto(info));
        step.op = std::move(s);
        break;
      }
      case v1::Step::kAlias:
        step.op = Alias{check(wire.alias().base(), /*allow_unused=*/false)};
        break;
      default:
        return absl::InvalidArgumentError(absl::StrCat(where, " has no kind"));
    }
    if (std::vector<ValueId>* into = WriteIntoOf(step)) {
      for (int v : wire.write_into()) into->push_back(check(v, /*allow_unused=*/true));
    } else if (wire.write_into_size() > 0) {
      return absl::InvalidArgumentError(absl::StrCat(where, " writes into an input but is not a "
                                                            "native call or segment"));
    }
    schedule.steps.push_back(std::move(step));
    if (wire.release_size() > 0) schedule.steps.push_back(Step{Release{ids(wire.release())}, {}});
  }
  for (const v1::Value& v : plan.outputs()) {
    ASSIGN_OR_RETURN(ir::Arg a, arg(v, "plan output"));
    schedule.outputs.push_back(std::move(a));
  }
  RETURN_IF_ERROR(bad);
  return schedule;
}

}  // namespace tccd::schedule

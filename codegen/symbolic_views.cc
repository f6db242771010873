// FoldSymbolicViewChains; see symbolic_views.h.
#include "codegen/symbolic_views.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_set.h"

namespace tccd::codegen {
namespace {

// Single-output views of their first argument that the plan runtimes make from metadata
// (client/tccd/native_plan.py _VIEW_OPS, less as_strided's own argument forms it keeps).
bool IsFoldableView(const std::string& target) {
  static const auto* views = new absl::flat_hash_set<std::string>{
      "aten::view.default",      "aten::_unsafe_view.default", "aten::t.default",
      "aten::transpose.int",     "aten::permute.default",      "aten::squeeze.dim",
      "aten::squeeze.dims",      "aten::squeeze.default",      "aten::unsqueeze.default",
      "aten::expand.default",    "aten::select.int",           "aten::slice.Tensor",
      "aten::detach.default",    "aten::alias.default",        "aten::_reshape_alias.default",
      "aten::as_strided.default"};
  return views->contains(target);
}

// Ops whose outputs are views of their first argument laid out from the base's layout: a
// declared base gives declared outputs (the splits of a fused qkv projection).
bool KeepsLayout(const std::string& target) {
  return IsFoldableView(target) || target == "aten::split.Tensor" ||
         target == "aten::split_with_sizes.default" || target == "aten::unbind.int";
}

void Refs(const v1::Value& v, std::vector<int>& out) {
  if (v.kind_case() == v1::Value::kRef) out.push_back(v.ref().node());
  if (v.kind_case() == v1::Value::kList)
    for (const v1::Value& item : v.list().items()) Refs(item, out);
}

std::vector<int> StepReads(const v1::Step& step) {
  std::vector<int> ids;
  if (step.has_extern_call()) {
    for (const v1::Value& a : step.extern_call().args()) Refs(a, ids);
    for (const v1::NamedValue& kv : step.extern_call().kwargs()) Refs(kv.value(), ids);
  } else if (step.has_native()) {
    ids.assign(step.native().inputs().begin(), step.native().inputs().end());
  } else if (step.has_segment()) {
    ids.assign(step.segment().inputs().begin(), step.segment().inputs().end());
  } else if (step.has_alias()) {
    ids.push_back(step.alias().base());
  }
  return ids;
}

// A view step's base (its first argument), or -1.
int ViewBase(const v1::Step& step) {
  if (!step.has_extern_call() || step.outputs_size() != 1 || step.outputs(0) < 0 ||
      !IsFoldableView(step.extern_call().target()) || step.extern_call().args_size() == 0 ||
      step.extern_call().args(0).kind_case() != v1::Value::kRef)
    return -1;
  return step.extern_call().args(0).ref().node();
}

void SetDim(v1::Value& v, const v1::Dim& d) {
  if (d.kind_case() == v1::Dim::kExpr)
    v.set_sym_expr(d.expr());
  else
    v.set_int_value(d.value());
}

}  // namespace

int FoldSymbolicViewChains(v1::Plan& plan) {
  const int num_values = plan.values_size();
  const int num_steps = plan.steps_size();
  std::vector<int> producer(num_values, -1);  // step defining each value
  std::vector<std::vector<int>> readers(num_values);
  for (int s = 0; s < num_steps; ++s) {
    const v1::Step& step = plan.steps(s);
    for (int id : StepReads(step))
      if (id >= 0 && id < num_values) readers[id].push_back(s);
    for (int id : step.outputs())
      if (id >= 0 && id < num_values) producer[id] = s;
  }
  std::vector<bool> returned(num_values, false);
  for (const v1::Value& v : plan.outputs()) {
    std::vector<int> ids;
    Refs(v, ids);
    for (int id : ids)
      if (id >= 0 && id < num_values) returned[id] = true;
  }
  // Laid out as declared at every call: outputs of native steps, and what keeps their layout.
  std::vector<bool> declared(num_values, false);
  for (int s = 0; s < num_steps; ++s) {
    const v1::Step& step = plan.steps(s);
    bool ok = step.has_native() && step.write_into_size() == 0;
    if (step.has_extern_call() && KeepsLayout(step.extern_call().target())) {
      const v1::ExternCall& call = step.extern_call();
      ok = call.args_size() > 0 && call.args(0).kind_case() == v1::Value::kRef &&
           call.args(0).ref().node() >= 0 && call.args(0).ref().node() < num_values &&
           declared[call.args(0).ref().node()];
    }
    for (int id : step.outputs())
      if (ok && id >= 0 && id < num_values) declared[id] = true;
  }
  // An intermediate: a view's output that only views read, each as its base, and nobody returns.
  // Computed before any step is rewritten (a rewritten end reads the root instead).
  std::vector<int> base_of(num_steps);
  for (int s = 0; s < num_steps; ++s) base_of[s] = ViewBase(plan.steps(s));
  std::vector<bool> intermediate(num_values, false);
  for (int id = 0; id < num_values; ++id) {
    if (returned[id] || producer[id] < 0 || readers[id].empty() || base_of[producer[id]] < 0)
      continue;
    bool only_views = true;
    for (int r : readers[id]) {
      std::vector<int> reads = StepReads(plan.steps(r));
      only_views =
          only_views && base_of[r] == id && std::count(reads.begin(), reads.end(), id) == 1;
    }
    intermediate[id] = only_views;
  }
  std::vector<bool> removed(num_steps, false);
  int folded = 0;
  for (int s = 0; s < num_steps; ++s) {
    const int base = base_of[s];
    if (base < 0 || intermediate[plan.steps(s).outputs(0)]) continue;  // folded into their ends
    int root = base, links = 0;
    while (root >= 0 && intermediate[root]) {
      root = base_of[producer[root]];
      ++links;
    }
    if (links == 0 || root < 0 || !declared[root]) continue;
    // The chain's last view as one as_strided of the root (the output's declared meta, which is
    // what the chain computes from the root's declared layout for every size).
    v1::Step& step = *plan.mutable_steps(s);
    const v1::TensorMeta& meta = plan.values(step.outputs(0));
    v1::ExternCall call;
    call.set_target("aten::as_strided.default");
    call.add_args()->mutable_ref()->set_node(root);
    v1::ValueList* sizes = call.add_args()->mutable_list();
    for (const v1::Dim& d : meta.sizes()) SetDim(*sizes->add_items(), d);
    v1::ValueList* strides = call.add_args()->mutable_list();
    for (const v1::Dim& d : meta.strides()) SetDim(*strides->add_items(), d);
    if (meta.has_storage_offset())
      SetDim(*call.add_args(), meta.storage_offset());
    else
      call.add_args()->set_int_value(0);
    *step.mutable_extern_call() = std::move(call);
    for (int id = base; id != root; id = base_of[producer[id]]) {
      if (!removed[producer[id]]) ++folded;
      removed[producer[id]] = true;
    }
  }
  if (folded == 0) return 0;
  google::protobuf::RepeatedPtrField<v1::Step> kept;
  for (int s = 0; s < num_steps; ++s)
    if (!removed[s]) *kept.Add() = std::move(*plan.mutable_steps(s));
  plan.mutable_steps()->Swap(&kept);
  // Releases: after each value's last reader; returned values never.
  std::vector<int> last(num_values, -1);
  for (int s = 0; s < plan.steps_size(); ++s)
    for (int id : StepReads(plan.steps(s)))
      if (id >= 0 && id < num_values) last[id] = s;
  for (v1::Step& step : *plan.mutable_steps()) step.clear_release();
  for (int id = 0; id < num_values; ++id)
    if (last[id] >= 0 && !returned[id]) plan.mutable_steps(last[id])->add_release(id);
  return folded;
}

}  // namespace tccd::codegen

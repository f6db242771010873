// Step helpers of the schedule IR (see schedule.h).
#include "codegen/schedule/schedule.h"

namespace tccd::schedule {

std::vector<ValueId> ReadsOf(const Step& step) {
  std::vector<ValueId> reads;
  if (const auto* k = std::get_if<KernelLaunch>(&step.op)) {
    reads = k->inputs;
  } else if (const auto* s = std::get_if<Segment>(&step.op)) {
    reads = s->inputs;
  } else if (const auto* a = std::get_if<Alias>(&step.op)) {
    reads.push_back(a->base);
  } else if (const auto* e = std::get_if<ExternOp>(&step.op)) {
    return ReadsOf(*e);
  } else if (const auto* l = std::get_if<LibraryCall>(&step.op)) {
    return ReadsOf(l->op);
  }
  // An input written in place must still be held at the step (it is the output's buffer).
  if (const std::vector<ValueId>* into = WriteIntoOf(step))
    for (ValueId v : *into)
      if (v != kUnused) reads.push_back(v);
  return reads;
}

namespace {

// Row-major contiguous, ignoring the strides of dims of size 1.
bool IsContiguous(const ir::TensorType& t) {
  const std::vector<int64_t> want = ir::ContiguousStrides(t.sizes);
  for (size_t d = 0; d < t.sizes.size(); ++d)
    if (t.sizes[d] != 1 && t.strides[d] != want[d]) return false;
  return true;
}

}  // namespace

bool CanWriteInto(const ir::TensorType& out, const ir::TensorType& in) {
  if (out == in) return true;
  return out.dtype == in.dtype && out.device == in.device &&
         out.storage_offset == in.storage_offset && out.numel() == in.numel() &&
         IsContiguous(out) && IsContiguous(in);
}

const std::vector<ValueId>* WriteIntoOf(const Step& step) {
  if (const auto* k = std::get_if<KernelLaunch>(&step.op)) return &k->write_into;
  if (const auto* s = std::get_if<Segment>(&step.op)) return &s->write_into;
  return nullptr;
}

std::vector<ValueId>* WriteIntoOf(Step& step) {
  return const_cast<std::vector<ValueId>*>(WriteIntoOf(static_cast<const Step&>(step)));
}

std::vector<ValueId> ReadsOf(const ExternOp& op) {
  std::vector<ValueId> reads;
  auto add = [&](ValueId v) { reads.push_back(v); };
  for (const ir::Arg& a : op.args) ForEachValue(a, add);
  for (const ir::NamedArg& kw : op.kwargs) ForEachValue(kw.value, add);
  return reads;
}

}  // namespace tccd::schedule

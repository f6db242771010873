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
  return reads;
}

std::vector<ValueId> ReadsOf(const ExternOp& op) {
  std::vector<ValueId> reads;
  auto add = [&](ValueId v) { reads.push_back(v); };
  for (const ir::Arg& a : op.args) ForEachValue(a, add);
  for (const ir::NamedArg& kw : op.kwargs) ForEachValue(kw.value, add);
  return reads;
}

}  // namespace tccd::schedule

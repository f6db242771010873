// SinkViewsToFirstReader (see sink_views_to_first_reader.h).
#include "codegen/schedule/sink_views_to_first_reader.h"

#include <set>

#include "codegen/ops/op_properties.h"

namespace tccd::schedule {

absl::StatusOr<bool> SinkViewsToFirstReader::Run(Schedule& schedule) {
  std::vector<Step>& steps = schedule.steps;
  bool moved = false;
  for (int i = static_cast<int>(steps.size()) - 1; i >= 0; --i) {
    if (!steps[i].is<ExternOp>() || !codegen::IsViewOp(steps[i].as<ExternOp>().target)) continue;
    std::set<ValueId> defined(steps[i].outputs.begin(), steps[i].outputs.end());
    int reader = -1;
    for (int j = i + 1; j < static_cast<int>(steps.size()) && reader < 0; ++j)
      for (ValueId v : ReadsOf(steps[j]))
        if (defined.count(v)) reader = j;
    if (reader <= i + 1) continue;  // read next, or only by the schedule's outputs
    Step view = std::move(steps[i]);
    steps.erase(steps.begin() + i);
    steps.insert(steps.begin() + (reader - 1), std::move(view));
    moved = true;
  }
  return moved;
}

}  // namespace tccd::schedule

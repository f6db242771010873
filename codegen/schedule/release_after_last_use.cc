// ReleaseAfterLastUse (see release_after_last_use.h).
#include "codegen/schedule/release_after_last_use.h"

#include <map>
#include <set>

namespace tccd::schedule {

absl::StatusOr<bool> ReleaseAfterLastUse::Run(Schedule& schedule) {
  std::set<ValueId> outputs;
  for (const ir::Arg& a : schedule.outputs) ForEachValue(a, [&](ValueId v) { outputs.insert(v); });
  std::vector<const Step*> steps;  // the schedule without its old release steps
  for (const Step& step : schedule.steps)
    if (!step.is<Release>()) steps.push_back(&step);
  std::map<size_t, std::set<ValueId>> released_after;  // step index -> values, by id
  {
    std::map<ValueId, size_t> last_use;
    for (size_t i = 0; i < steps.size(); ++i) {
      // A value nothing reads dies at the step defining it: a kernel output written into a
      // dying value's buffer (DyingInputsIntoOutputs: a batch norm + ReLU over a convolution's
      // output that only the same segment's max pool reads) would otherwise hold that buffer
      // to the end of the call; the runtimes keep every defined value until it is released.
      for (ValueId v : steps[i]->outputs)
        if (v != kUnused) last_use[v] = i;
      for (ValueId v : ReadsOf(*steps[i])) last_use[v] = i;
    }
    for (const auto& [v, i] : last_use)
      if (!outputs.count(v)) released_after[i].insert(v);
  }
  std::vector<Step> out;
  out.reserve(steps.size() + released_after.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    out.push_back(*steps[i]);
    if (auto it = released_after.find(i); it != released_after.end())
      out.push_back(Step{Release{std::vector<ValueId>(it->second.begin(), it->second.end())}, {}});
  }
  const bool changed = out != schedule.steps;
  schedule.steps = std::move(out);
  return changed;
}

}  // namespace tccd::schedule

// VerifySchedule (see verifier.h).
#include "codegen/schedule/verifier.h"

#include "absl/strings/str_cat.h"
#include "codegen/schedule/printer.h"

namespace tccd::schedule {

absl::Status VerifySchedule(const Schedule& schedule) {
  const int num_values = static_cast<int>(schedule.values.size());
  if (schedule.num_inputs < 0 || schedule.num_inputs > num_values)
    return absl::InternalError(
        absl::StrCat("schedule has ", schedule.num_inputs, " inputs but ", num_values, " values"));
  enum class State { kUndefined, kLive, kReleased };
  std::vector<State> state(num_values, State::kUndefined);
  for (int i = 0; i < schedule.num_inputs; ++i) state[i] = State::kLive;
  auto fail = [&](size_t step, const std::string& what) {
    return absl::InternalError(
        absl::StrCat("step ", step, " (", PrintStep(schedule.steps[step]), "): ", what));
  };
  auto declared = [&](ValueId v) { return v >= 0 && v < num_values; };
  for (size_t i = 0; i < schedule.steps.size(); ++i) {
    const Step& step = schedule.steps[i];
    for (ValueId v : ReadsOf(step)) {
      if (!declared(v)) return fail(i, absl::StrCat("reads undeclared %", v));
      if (state[v] == State::kUndefined)
        return fail(i, absl::StrCat("reads %", v, " before it is defined"));
      if (state[v] == State::kReleased)
        return fail(i, absl::StrCat("reads %", v, " after its release"));
    }
    if (const auto* release = std::get_if<Release>(&step.op)) {
      for (ValueId v : release->values) {
        if (!declared(v)) return fail(i, absl::StrCat("releases undeclared %", v));
        if (state[v] != State::kLive)
          return fail(i, absl::StrCat("releases %", v, ", which is not live"));
        state[v] = State::kReleased;
      }
      continue;
    }
    if (step.is<Alias>() && step.outputs.size() != 1) return fail(i, "an alias defines one value");
    if (const std::vector<ValueId>* into = WriteIntoOf(step); into && !into->empty()) {
      if (into->size() != step.outputs.size())
        return fail(i, "write_into does not have one entry per output");
      for (size_t o = 0; o < into->size(); ++o) {
        const ValueId k = (*into)[o];
        if (k == kUnused) continue;
        // A graph input (a kept mutation) or a value live here that dies at this step
        // (dying_inputs_into_outputs.h: the step's last read of it).
        if (k < 0 || !declared(k) || (k >= schedule.num_inputs && state[k] != State::kLive))
          return fail(i, absl::StrCat("writes into %", k, ", which is neither a graph input nor live"));
        if (step.outputs[o] == kUnused ||
            !CanWriteInto(schedule.values[step.outputs[o]], schedule.values[k]))
          return fail(i, absl::StrCat("writes output ", o, " into %", k,
                                      ", whose layout does not hold the output's"));
      }
    }
    for (ValueId v : step.outputs) {
      if (v == kUnused) continue;
      if (!declared(v)) return fail(i, absl::StrCat("defines undeclared %", v));
      if (state[v] != State::kUndefined) return fail(i, absl::StrCat("defines %", v, " again"));
      state[v] = State::kLive;
    }
  }
  for (const ir::Arg& a : schedule.outputs) {
    absl::Status bad = absl::OkStatus();
    ForEachValue(a, [&](ValueId v) {
      if (!declared(v) || state[v] != State::kLive)
        bad = absl::InternalError(absl::StrCat("schedule output %", v, " is not a live value"));
    });
    if (!bad.ok()) return bad;
  }
  return absl::OkStatus();
}

}  // namespace tccd::schedule

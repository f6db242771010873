// Structural checks of a schedule, run by the pass runner after every schedule pass that
// changed it (an INTERNAL error for that request names the pass):
//  * every value id a step or an output names is declared (0 <= id < values.size());
//  * inputs are defined up front; every other value by at most one step;
//  * a step reads only values defined before it and not yet released;
//  * an alias defines exactly one value; a value is released at most once, after it is defined.
// Values a segment keeps in its workspace are declared and never defined: nothing may read them.
#pragma once

#include "absl/status/status.h"
#include "codegen/schedule/schedule.h"

namespace tccd::schedule {

absl::Status VerifySchedule(const Schedule& schedule);

}  // namespace tccd::schedule

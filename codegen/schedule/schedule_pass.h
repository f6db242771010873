// A schedule-to-schedule pass, the schedule IR's counterpart of GraphPass (passes/pass.h): a
// name, and Run, which rewrites the schedule in place and says whether it changed anything.
// Timing, verification, dumps and skipping by name live in the runner (passes/pass_runner.h).
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "codegen/schedule/schedule.h"

namespace tccd::schedule {

class SchedulePass {
 public:
  virtual ~SchedulePass() = default;
  virtual std::string_view name() const = 0;
  virtual absl::StatusOr<bool> Run(Schedule& schedule) = 0;
};

}  // namespace tccd::schedule

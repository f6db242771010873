// Release steps: every value the schedule reads is released right after the step that reads it
// last, unless it is a schedule output, so the client frees each intermediate (and each input
// it was handed) as early as it can. A value nothing reads is released right after the step
// that defines it (the runtimes hold every value until its release). Replaces whatever release
// steps the schedule had; run it after
// any pass that moves, adds or removes steps. A release step lists its values by id.
//
//   %2 = extern aten::mm.default(%0, %1)       %2 = extern aten::mm.default(%0, %1)
//   %3 = kernel(%2) ...                  ->    release(%0, %1)
//   return (%3)                                %3 = kernel(%2) ...
//                                              release(%2)
//                                              return (%3)
#pragma once

#include "codegen/schedule/schedule_pass.h"

namespace tccd::schedule {

class ReleaseAfterLastUse : public SchedulePass {
 public:
  std::string_view name() const override { return "release-after-last-use"; }
  absl::StatusOr<bool> Run(Schedule& schedule) override;
};

}  // namespace tccd::schedule

// Moves every view extern step (op_properties.h: IsViewOp) to just before the first step that
// reads one of its outputs. Views are pure, so a later position is always correct; it puts a
// view next to the kernel that reads it, inside that kernel's run of native work (a norm
// decomposed into a row kernel views its input as soon as the producing convolution returns,
// while the kernel runs after the next convolution: the views would end the run and be left as
// dispatcher calls). A view read by the next step, or only by the schedule's outputs, stays.
// Views are visited from the last to the first, so a chain of views sinks as a whole. Release
// steps are not moved: run ReleaseAfterLastUse afterwards.
//
//   %2 = extern aten::t.default(%0)            %3 = extern aten::convolution.default(%1, ...)
//   %3 = extern aten::convolution.default(..)  ->  %2 = extern aten::t.default(%0)
//   %4 = kernel(%2, %3) ...                    %4 = kernel(%2, %3) ...
#pragma once

#include "codegen/schedule/schedule_pass.h"

namespace tccd::schedule {

class SinkViewsToFirstReader : public SchedulePass {
 public:
  std::string_view name() const override { return "sink-views-to-first-reader"; }
  absl::StatusOr<bool> Run(Schedule& schedule) override;
};

}  // namespace tccd::schedule

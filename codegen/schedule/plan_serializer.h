// The wire form of a schedule: tccd.v1.Plan is only its serialisation.
//
// Release steps become the `release` lists of the wire step before them; a library call no
// segment took becomes the ExternCall of the op it computes; everything else maps one to one
// (kernel -> NativeCall, extern -> ExternCall, segment -> NativeSegment, alias -> Alias).
// PlanFromSchedule(ScheduleFromPlan(p)) == p for every plan the daemon writes (its TensorMetas are
// static, its devices have index -1), which lets a pass still written over the wire Plan run
// between schedule passes while it moves.
#pragma once

#include "absl/status/statusor.h"
#include "codegen/schedule/schedule.h"
#include "tccd/v1/tccd.pb.h"

namespace tccd::schedule {

// INTERNAL when the schedule refers to values it does not declare or releases before any step.
absl::StatusOr<v1::Plan> PlanFromSchedule(const Schedule& schedule);

// INVALID_ARGUMENT / UNIMPLEMENTED for a plan no schedule can hold (symbolic sizes, refs to
// undeclared values, steps of no kind).
absl::StatusOr<Schedule> ScheduleFromPlan(const v1::Plan& plan);

}  // namespace tccd::schedule

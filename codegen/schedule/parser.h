// Parses the textual schedule IR written by PrintSchedule: ParseSchedule(PrintSchedule(s)) == s
// for every schedule. Schedule pass tests feed text in and compare text out.
#pragma once

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "codegen/schedule/schedule.h"

namespace tccd::schedule {

// INVALID_ARGUMENT naming the line on a syntax error. Checks value numbering, not dataflow.
absl::StatusOr<Schedule> ParseSchedule(absl::string_view text);

}  // namespace tccd::schedule

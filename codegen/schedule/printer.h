// The textual schedule IR (grammar in printer.cc, example in schedule.h). Deterministic: the
// text is what schedule pass tests compare and what TCCD_DUMP_DIR holds.
#pragma once

#include <string>

#include "codegen/schedule/schedule.h"

namespace tccd::schedule {

std::string PrintSchedule(const Schedule& schedule);
std::string PrintStep(const Step& step);

}  // namespace tccd::schedule

// Moved to base/status_macros.h (shared macros do not belong to the protocol's directory). This
// forwarder keeps the includes of branches in flight compiling; new code includes base/.
#pragma once

#include "base/status_macros.h"  // IWYU pragma: export

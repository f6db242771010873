// The native plan runtime (runtime/tccd_plan_runtime.c) as the bytes of an x86-64 ELF shared
// object, compiled when the daemon is built and embedded in it (see CMakeLists.txt). Every
// graph's manifest ships it unchanged as its PLAN_RUNTIME artifact.
#pragma once

#include <string_view>

namespace tccd::codegen {

// The .so's bytes (static storage; never empty).
std::string_view PlanRuntimeObject();

}  // namespace tccd::codegen

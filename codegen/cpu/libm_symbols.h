// The C math library functions a CPU kernel may call.
//
// Kernels are linked into a .so with no DT_NEEDED entries; the only undefined symbols it may
// have are libm functions, which resolve against the loading process. This list is the
// allow-list for that rule and, because a kernel's name becomes a symbol, also the list of
// names a kernel may not take.
#pragma once

#include <string_view>

namespace tccd::codegen {

// True for the double and float ("f"-suffixed) variants of the libm functions LLVM may emit
// calls to for our kernels (directly, through intrinsics, or through its libcall simplifier).
bool IsLibmSymbol(std::string_view name);

}  // namespace tccd::codegen

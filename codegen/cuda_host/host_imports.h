// What a kernels_cuda.so may import and export, and the check BuildCudaHostLibrary applies to
// every .so before returning it. Internal to tccd_cuda_host (tests use it too).
//
// The .so has no DT_NEEDED entries (in particular none on libcuda: it must load where there is
// no driver). Its undefined symbols resolve against the loading process and may only be the libc
// functions the runtime (runtime/tccd_cuda_runtime.c) calls, plus __tls_get_addr from the dynamic
// loader for the thread-local error message. Every process has those, Python included. (Before
// glibc 2.34, dlopen/dlsym/dlerror lived in libdl.so.2, which CPython and PyTorch load.)
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace tccd::codegen {

// The allow-list of imports, sorted.
absl::Span<const std::string_view> CudaHostImports();

// True for a name in CudaHostImports().
bool IsCudaHostImport(std::string_view name);

// True for a name the library defines itself and a kernel may therefore not take: its two C
// entry points and anything with the runtime's "tccd_rt_" or the library's "tccd_cuda_" prefix.
bool IsReservedCudaHostName(std::string_view name);

// INTERNAL unless `shared_object` is an ELF .so with no DT_NEEDED entries, imports only
// allow-listed names and exports exactly `exports` (in any order).
absl::Status CheckCudaHostLibrary(std::string_view shared_object,
                                  absl::Span<const std::string> exports);

}  // namespace tccd::codegen

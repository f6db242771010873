// The import allow-list and the artifact check (see host_imports.h).
#include "codegen/cuda_host/host_imports.h"

#include <algorithm>
#include <array>
#include <set>
#include <string>

#include "absl/strings/str_join.h"
#include "codegen/llvm/elf_symbols.h"
#include "base/status_macros.h"

namespace tccd::codegen {
namespace {

// What tccd_cuda_runtime.c calls, plus memset/memmove, which the C compiler may emit for struct
// copies and initialisers.
constexpr std::array<std::string_view, 12> kImports = {
    "__tls_get_addr",  // ld.so: the thread-local last-error buffer (global-dynamic TLS)
    "clock_gettime",   // the sized gemm cache's timers (tccd_cuda_gemm.c)
    "dlerror",
    "dlopen",
    "dlsym",
    "memcpy",
    "memmove",
    "memset",
    "pthread_mutex_lock",
    "pthread_mutex_unlock",
    "snprintf",
    "vsnprintf",
};
static_assert(std::is_sorted(kImports.begin(), kImports.end()), "IsCudaHostImport bisects");

}  // namespace

absl::Span<const std::string_view> CudaHostImports() { return kImports; }

bool IsCudaHostImport(std::string_view name) {
  return std::binary_search(kImports.begin(), kImports.end(), name);
}

bool IsReservedCudaHostName(std::string_view name) {
  return name.starts_with("tccd_rt_") || name.starts_with("tccd_cuda_");
}

absl::Status CheckCudaHostLibrary(std::string_view shared_object,
                                  absl::Span<const std::string> exports) {
  ASSIGN_OR_RETURN(DynamicSymbols symbols, ReadDynamicSymbols(shared_object));
  if (symbols.num_needed != 0) {
    return absl::InternalError("kernels_cuda.so has " + std::to_string(symbols.num_needed) +
                               " DT_NEEDED entries, expected none");
  }
  for (const std::string& name : symbols.undefined) {
    if (!IsCudaHostImport(name)) {
      return absl::InternalError("kernels_cuda.so imports '" + name +
                                 "', which is not on its libc allow-list");
    }
  }
  const std::set<std::string> defined(symbols.defined.begin(), symbols.defined.end());
  const std::set<std::string> expected(exports.begin(), exports.end());
  if (defined != expected) {
    return absl::InternalError("kernels_cuda.so exports {" + absl::StrJoin(defined, ", ") +
                               "}, expected {" + absl::StrJoin(expected, ", ") + "}");
  }
  return absl::OkStatus();
}

}  // namespace tccd::codegen

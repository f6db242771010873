// The kernels_cuda.so runtime (runtime/tccd_cuda_runtime.c) as an x86-64 ELF relocatable object,
// compiled when the daemon is built and embedded in it (see CMakeLists.txt); BuildCudaHostLibrary
// links it into every .so. Internal to tccd_cuda_host.
#pragma once

#include <string_view>

namespace tccd::codegen {

// The object's bytes (static storage; never empty).
std::string_view CudaRuntimeObject();

}  // namespace tccd::codegen

// nvJitLink, loaded with dlopen on first use: relocatable cubins (NVRTC -rdc=true, one per
// kernel) -> one loadable cubin. The one place where nvJitLink's C API lives.
//
// Why: kernel-level content addressing compiles and caches each CUDA kernel on its own, while
// the host library and the client load one cubin per graph. Linking a graph's 14 relocatable
// cubins takes ~15 ms (deploy/nvrtc_split_bench.py), against ~1.2 s of NVRTC for the same
// kernels as one program.
//
// Internal to the CUDA backend. Thread-safe: the library is loaded once; every link has its own
// nvJitLinkHandle.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/cuda/cuda_backend.h"

namespace tccd::codegen {

// Links `cubins` (relocatable, for exactly target.KeyString()) into one cubin.
// FAILED_PRECONDITION when no nvJitLink library is found (callers then compile the graph as one
// NVRTC program); INTERNAL with nvJitLink's error log when the link fails.
absl::StatusOr<std::string> LinkCubins(const std::vector<std::string>& cubins,
                                       const CudaTarget& target);

}  // namespace tccd::codegen

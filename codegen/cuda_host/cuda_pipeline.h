// The CUDA backend of the pipeline (codegen/backend.h): kernels compiled by NVRTC into one
// cubin, a host library ("kernels_cuda.so") that launches them (ABI "tccd-cuda-1") and runs
// segments of kernels and cuBLASLt matmuls ("tccd-cuda-segment-1"); its own graph passes
// (matmul padding, layer norm and batch norm rewrites, reductions as rows) and schedule passes
// (views sink to their readers, segments).
#pragma once

#include <memory>

#include "codegen/backend.h"
#include "codegen/cuda/cuda_backend.h"
#include "codegen/cuda_host/host_program.h"

namespace tccd::codegen {

// `program`: gemms and segments the host library runs besides the schedule passes' own (the
// sized gemms of a symbolic plan, symbolic_gemms.h, which runs no schedule passes). Default: none.
std::unique_ptr<Backend> MakeCudaBackend(const CudaTarget& target, BackendOptions options,
                                         HostProgram program = {});

}  // namespace tccd::codegen

// Index-aware pointwise kernels (kIndex/kGather) -> CUDA C. Internal to the CUDA backend.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "codegen/kernel/pointwise_kernel.h"

namespace tccd::codegen {

// Appends `kernel`'s namespace and its two entry points (<name>_contig, <name>_strided).
absl::Status EmitIndexKernel(const PointwiseKernel& kernel, std::string& out);

}  // namespace tccd::codegen

// The CPU backend of the pipeline (codegen/backend.h): kernels as one shared object of LLVM
// machine code for the host ISA ("kernels.so", ABI "tccd-cpu-1"); no backend-only passes.
#pragma once

#include <memory>

#include "codegen/backend.h"
#include "codegen/cpu/cpu_backend.h"

namespace tccd::codegen {

std::unique_ptr<Backend> MakeCpuBackend(const CpuTarget& target, BackendOptions options);

}  // namespace tccd::codegen

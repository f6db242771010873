// The per-graph part of a kernels_cuda.so as LLVM IR (see cuda_host.h): the cubin, the kernel
// descriptors and state the runtime (runtime/tccd_cuda_runtime.h) works on, and the exported
// entry points. Internal to tccd_cuda_host; LLVM types are only forward-declared.
#pragma once

#include "absl/status/status.h"
#include "codegen/cuda/cuda_backend.h"
#include "codegen/cuda_host/host_program.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace tccd::codegen {

// Emits everything into `module`, whose data layout must already be the target's; `cuda` and
// `program` are already validated (cuda_host.cc). INTERNAL if LLVM's layout of the runtime's
// structs differs from the C compiler's (a tccd bug: the generator and tccd_cuda_runtime.h
// disagree).
absl::Status EmitHostModule(const CudaModule& cuda, const HostProgram& program,
                            llvm::Module& module);

}  // namespace tccd::codegen

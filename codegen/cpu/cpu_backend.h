// The CPU backend: fused pointwise kernels -> LLVM IR -> optimised object code for the client's
// CPU -> one ELF shared object (linked in-process with LLD).
//
// Thread-safety: CompileCpuKernels may be called concurrently; each call uses its own
// LLVMContext and TargetMachine, and the (non-reentrant) LLD driver is serialised internally.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "codegen/kernel/pointwise_kernel.h"
#include "codegen/llvm/cpu_target.h"

namespace tccd::codegen {

struct CpuModule {
  std::string llvm_ir;        // optimised LLVM IR text, for dumps and golden tests
  std::string shared_object;  // ELF .so bytes exporting one symbol per kernel
};

// Compiles all kernels into one shared object. Each kernel's `name` becomes an exported
// symbol. The .so has no DT_NEEDED entries: libm functions (expf, tanhf, ...) resolve against
// the loading process, which always has libm.
//
// Calling contract of the exported kernels (beyond the ABI in pointwise_kernel.h): output
// buffers must not overlap any input or each other (inputs may alias one another), because the
// code is vectorised without runtime alias checks; data[] and strides[] are only read.
//
// INVALID_ARGUMENT for a kernel that fails VerifyPointwiseKernel, duplicate or libm-clashing
// kernel names, or a target LLVM cannot compile for; INTERNAL for LLVM/LLD failures (the
// message carries theirs). A failure affects only this call.
absl::StatusOr<CpuModule> CompileCpuKernels(absl::Span<const PointwiseKernel> kernels,
                                            const CpuTarget& target);

// The check CompileCpuKernels applies to its .so (every kernel exported, nothing imported but
// libm); INTERNAL naming what is wrong. Also used by CompileCpuKernelObjects.
absl::Status CheckKernelSharedObject(const std::string& shared_object,
                                     absl::Span<const PointwiseKernel> kernels);

}  // namespace tccd::codegen

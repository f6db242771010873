// Lowers one PointwiseKernel to an LLVM function (the loop nest and the per-point body).
//
// Internal to the CPU backend. LLVM types are only forward-declared here so that including this
// header does not pull LLVM into callers.
#pragma once

#include "absl/status/status.h"
#include "codegen/kernel/pointwise_kernel.h"
#include "codegen/llvm/cpu_target.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace tccd::codegen {

// Adds the exported definition
//   void @<kernel.name>(ptr %data, ptr %strides)   ; ABI "tccd-cpu-1"
// to `module`. Errors: INVALID_ARGUMENT if the kernel fails VerifyPointwiseKernel or its name is
// taken (by another kernel or a libm function); INTERNAL if the emitted IR fails LLVM's verifier.
//
// A kernel with run-time dims (kRuntimeDim) gets a third parameter, `ptr %shape` (ABI
// "tccd-cpu-sym-1"); the code below is the same with those sizes loaded at entry.
//
// Shape of the code:
//  * any zero-size dim: returns at once; rank 0: evaluates the body once.
//  * fast path: when every operand's strides are the row-major strides of `shape` (dims of size
//    1 ignored), one flat loop over numel indexes every operand with the same i.
//  * otherwise a loop nest over the dims of size > 1, with per-operand offsets advanced by the
//    operand's stride (no multiplications in the loops).
// Memory accesses carry alias-scope metadata saying that distinct operands do not overlap:
// outputs must not alias inputs or each other (inputs may alias each other; they are only read).
absl::Status EmitPointwiseKernel(const PointwiseKernel& kernel, llvm::Module& module);

// Gives every function defined in `module` the vector width `target` asks for (wide_vectors on
// an AVX-512 level: "prefer-vector-width"="512"); nothing otherwise. Call before optimising.
void SetKernelVectorWidth(const CpuTarget& target, llvm::Module& module);

}  // namespace tccd::codegen

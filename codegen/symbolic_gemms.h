// Matmuls of graphs with symbolic sizes as cuBLASLt gemms with run-time sizes (CUDA).
//
// A static plan's matmuls become cuBLASLt calls inside segments (cuda_host/match_gemms.h); a
// symbolic plan's stayed extern ATen steps, since every size, stride and leading dimension of
// a gemm was a number fixed at compile time. Here an extern aten::mm / addmm (1-D bias, beta 1:
// the bias epilogue) / bmm of a symbolic graph becomes a step of its own (ABI
// "tccd-cuda-sym-gemm-1") whose m, n, k, lda, ldb, ldd, batch and batch strides are size
// expressions over the graph's symbols (NativeCall.shape words naming its operands' sizes and
// strides, plan_descriptor.h GemmDimRef): the plan runtimes evaluate them
// at each call, as they evaluate kernels' sizes, and the host library makes the cuBLASLt
// descriptor, layouts and heuristic result per distinct sizes (a small cache,
// runtime/tccd_cuda_gemm.c). The transposes, dtype, epilogue and alpha are compile-time.
//
// A matmul becomes a gemm only when the formulation is right for every size, checked on the
// expressions (canonical texts; equal expressions printed differently fail safe, extern):
//  * operands and result f32, f16 or bf16, one dtype; rank 2 (mm, addmm) or 3 (bmm);
//  * the sizes agree: X [.., M, K], Y [.., K, N], Z [.., M, N] (same expression per dim);
//  * the result is row-major: Z's last stride is 1 and its row stride is N (the plan runtimes
//    allocate it as declared, so ldd is N);
//  * each operand is a dense matrix in one of the two orders: unit stride (the literal 1) in one
//    of its last two dims and the other stride equal to that dim's extent's partner (row-major
//    [R, C]: strides (C, 1); column-major: (1, R)), so its leading dimension is >= its rows for
//    every size; or a static leading dimension >= a static extent;
//  * static storage offsets, 16-byte aligned (a misaligned input at run time is copied into its
//    declared layout by the plan runtimes, as segment inputs are);
//  * addmm: beta 1 and a 1-D bias of N elements with unit stride (cuBLASLt's bias epilogue).
// The batch strides of bmm's operands are any expressions (cuBLASLt takes any).
//
// TCCD_DISABLE_PASSES=symbolic-gemms keeps them extern ATen steps (pipeline.cc).
#pragma once

#include <string>
#include <vector>

#include "codegen/cuda_host/host_program.h"
#include "codegen/symbolic_kernels.h"
#include "tccd/v1/tccd.pb.h"

namespace tccd::codegen {

struct SymbolicGemmOptions {
  // A gemm operand that is t(x) of a matrix x (mm, addmm: a linear layer's weight in the
  // forward, an activation in a weight gradient) reads x itself: the same first element, its
  // dims swapped in the words naming the operand's sizes and strides (GemmDimRef), the
  // transpose in the op flags as before. The t nothing reads any more is no step
  // (SymbolicLowering::elided): one extern view step and its release per call (eight per
  // training step of the dynamic bench). TCCD_DISABLE_PASSES=symbolic-gemm-transposes keeps
  // them. Default: true.
  bool transposes = true;
};

// Turns every extern unit of `lowering` that is such a matmul into a gemm unit
// (SymbolicUnit::gemm, SymbolicLowering::gemms, named tccd_sg<i>); a matmul that fails a check
// stays extern, with the reason in `lowering.rejected`. Returns how many became gemms.
int MatchSymbolicGemms(const SymbolicGraph& graph, SymbolicLowering& lowering,
                       const SymbolicGemmOptions& options = {});

// The host program of `lowering`'s gemms (GemmSpec::sized), for BuildCudaHostLibrary.
HostProgram SymbolicGemmProgram(const SymbolicLowering& lowering);

}  // namespace tccd::codegen

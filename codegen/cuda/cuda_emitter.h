// PointwiseKernel -> CUDA C (the source side of the CUDA backend; see cuda_backend.h for the
// kernel design and the parameter layout).
//
// Internal to the CUDA backend: CompileCudaKernels and the tests use the geometry to fill
// CudaKernelLaunchInfo and to check the source against it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "codegen/kernel/pointwise_kernel.h"

namespace tccd::codegen {

// Compile-time facts of one kernel's generated code.
struct CudaKernelGeometry {
  int64_t numel = 0;  // -1: run-time sizes (kRuntimeDim), known at each launch only
  bool runtime_shape = false;
  int vec = 1;           // elements per thread of the contig entry: 16 bytes / largest operand
  bool index64 = false;  // 64-bit flat indices (numel >= 2^31)
  int contig_param_bytes = 0;
  int strided_param_bytes = 0;
};

CudaKernelGeometry GeometryOf(const PointwiseKernel& kernel);

// VerifyPointwiseKernel plus the CUDA backend's own limits: INVALID_ARGUMENT for an invalid
// kernel, UNIMPLEMENTED for parameters beyond kCudaMaxParamBytes.
absl::Status CheckCudaKernel(const PointwiseKernel& kernel);

// Shared with the row-reduction emitter (cuda_row_emitter.h), so that both lower the kernel IR's
// ops identically:
// The C type of a value of `d` in memory / in registers.
const char* CudaMemType(ir::DType d);
const char* CudaRegType(ir::DType d);
// The C expression of body instruction `i` of `k` (not a load, store or reduction: ""), with
// argument value v spelled `arg_name(v)`; "" when the backend has no lowering for it.
std::string CudaInstrExpr(const PointwiseKernel& k, size_t i,
                          const std::function<std::string(int)>& arg_name);
// The kernel's `Point(in0, ..., out0&, ...)` function: the body for one element, inputs as
// stored, outputs by reference (the pointwise, index-free entries and the tiled kernels call it).
absl::Status CudaEmitPoint(const PointwiseKernel& k, std::string& out);
// The kernel IR printed as `// ` comment lines.
std::string CudaIrComment(const PointwiseKernel& k);

// A fixed-layout operand's element offset (PointwiseKernel::fixed_strides) at the flat index
// `var` (an unsigned C expression) over dims [first, rank) of k.shape, as a `long long`
// expression with the sizes and strides as constants: sum of ((var / inner_d) % size_d) *
// stride_d over the dims of size > 1 and nonzero stride, dims merged where the operand is
// contiguous across them (so [0, 0, 0, 1] over [N, H, W, C] is var % C). "0LL" when none.
std::string CudaFixedOffset(const PointwiseKernel& k, int o, const std::string& var, int first);

}  // namespace tccd::codegen

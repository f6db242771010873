// Row-reduction kernels (PointwiseKernel with a reduction section) -> CUDA C. Internal to the
// CUDA backend; the design is in cuda_backend.h ("Row reductions").
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "codegen/kernel/pointwise_kernel.h"

namespace tccd::codegen {

// Compile-time launch geometry of one row-reduction kernel (both entries share it).
struct CudaRowGeometry {
  int64_t rows = 0;         // M: product of the leading, unreduced dims
  int64_t row_length = 0;   // N: product of the reduced dims
  int vec = 1;              // elements per thread and chunk: 16 bytes / the widest element
                            // operand, halved until it divides N
  int threads_per_row = 1;  // T: 1..32 (power of two; rows share a warp) or 64..1024
                            // (multiple of 32; one row per block)
  int rows_per_block = 1;
  int block = 1;            // threads per block = T * rows_per_block
  int chunks = 1;           // C: vectors of `vec` elements each thread holds per row value
  int64_t grid = 0;         // blocks: ceil(M / rows_per_block)
  int param_bytes = 0;      // 8 * operands * (1 + rank): pointers, then strides
};

CudaRowGeometry RowGeometryOf(const PointwiseKernel& kernel);

// The reduction helpers (tccd_rt::row_reduce and friends); emitted once per module that has a
// row-reduction kernel, after the common prelude.
extern const char kCudaRowPrelude[];

// Appends `kernel`'s namespace and its two entry points (<name>_contig, <name>_strided).
// UNIMPLEMENTED when the row does not fit the register budget (chunks > 32).
absl::Status EmitRowReductionKernel(const PointwiseKernel& kernel, std::string& out);

}  // namespace tccd::codegen

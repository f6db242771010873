// Tiled kernels (PointwiseKernel::is_tile(); "Tiled kernels" in kernel/pointwise_kernel.h) ->
// CUDA C. Internal to the CUDA backend; the launch is in cuda_backend.h ("Tiled kernels").
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "codegen/kernel/pointwise_kernel.h"

namespace tccd::codegen {

// Points per tile along each of the two tiled dims. A block of kCudaBlockSize threads is
// kCudaTileDim lanes (one warp along the walked dim) by kCudaBlockSize / kCudaTileDim rows, so
// each thread takes kCudaTileDim * kCudaTileDim / kCudaBlockSize = 4 points per phase.
inline constexpr int kCudaTileDim = 32;

// Compile-time launch geometry of one tiled kernel.
struct CudaTileGeometry {
  int64_t tiles_read = 0;   // ceil(shape[read_dim] / kCudaTileDim)
  int64_t tiles_write = 0;  // ceil(shape[write_dim] / kCudaTileDim)
  int64_t outer = 0;        // product of the other dims (0 when numel is 0)
  int64_t grid = 0;         // blocks: tiles_read * tiles_write * outer, one tile each
  int param_bytes = 0;      // 8 * operands * (1 + rank): the strided block (cuda_backend.h)
};

// For a kernel that passes VerifyPointwiseKernel with is_tile().
CudaTileGeometry TileGeometryOf(const PointwiseKernel& kernel);

// Appends `kernel`'s namespace and its one entry point, <name>_tile.
absl::Status EmitTileKernel(const PointwiseKernel& kernel, std::string& out);

}  // namespace tccd::codegen

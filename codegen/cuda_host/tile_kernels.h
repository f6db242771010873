// ChooseTileKernels: which CUDA kernels of a plan become tiled kernels (TileTranspose in
// kernel/pointwise_kernel.h: 2-D tiles staged through shared memory, cuda_tile_emitter.cc).
//
// Runs after ChooseCudaEntries (entry_points.h), on the kernels it left with only the strided
// entry: one element per thread, adjacent threads along the iteration space's innermost dim. For
// a copy whose inputs and outputs are contiguous along different dims (a permute's clone, a cast
// through a transposed view, NCHW <-> NHWC), one side then moves one 32-byte sector per element.
// The declared layout of the kernel's one launch is what every launch sees (entry_points.h says
// why), so the choice is made here, where that layout is known, and compiled in.
//
// Cost rule (DRAM sectors of 32 bytes, what a memory-bound copy's time follows): an operand
// walked along the dim it is contiguous in (stride 1) costs its bytes / 32; walked along a dim
// where its stride is 0 it is re-read from L1/L2 and costs the same; walked along any other dim
// it costs one sector per element it moves. The strided entry walks the innermost dim of size
// > 1; a tiled kernel walks its inputs along read_dim and its outputs along write_dim. A kernel
// becomes tiled when
//   * it is a static plain pointwise kernel (no reduction section, no index ops) on the strided
//     entry only, launched with one layout, every operand's strides non-negative;
//   * every output is contiguous along one same dim W, and some input along a dim R != W (R: the
//     dim the most input bytes are contiguous along, W excluded);
//   * both tiled dims have >= kMinTiledDim points (a tile at least half full along each), and
//   * tile sectors * 4 <= strided sectors * 3: the tile saves at least a quarter of the traffic,
//     which pays for its shared-memory pass and its __syncthreads.
// TCCD_DISABLE_PASSES=tile-kernels keeps them on the strided entry (for A/B measurements).
//
// Pure: no NVRTC, no driver.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "codegen/kernel/pointwise_kernel.h"
#include "codegen/schedule/schedule.h"

namespace tccd::codegen {

inline constexpr int64_t kMinTiledDim = 16;

// Makes tiled kernels of `kernels` (as left by ChooseCudaEntries) where the rule above says so,
// from the kernel steps of `schedule`. Returns how many. INTERNAL when a step's operands do not
// match its kernel.
absl::StatusOr<int> ChooseTileKernels(const schedule::Schedule& schedule,
                                      std::vector<PointwiseKernel>& kernels);

// The tile section the rule above gives `kernel` launched with `strides` ([operands x rank]
// iteration-space strides), or nullopt. Exposed for tests.
std::optional<TileTranspose> TileFor(const PointwiseKernel& kernel,
                                     const std::vector<int64_t>& strides);

}  // namespace tccd::codegen

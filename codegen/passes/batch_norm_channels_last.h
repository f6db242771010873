// Training batch norm over a channels-last 4-D input (channels_last_layout.h), forward and
// backward, as column reductions and pointwise ops (CUDA). Called by BatchNormDecomposition for
// the norms whose input is channels-last; the NCHW ones take its row form.
//
// In channels-last memory x [N, C, H, W] is a row-major [M, C] matrix (M = N*H*W): a channel's
// values are a column, so the statistics are column reductions (every warp reads whole rows of
// adjacent channels; the row form would read one element per C). The normalisation stays a
// pointwise op over x's own shape and strides, so the relu and residual add after it, and the
// casts of the backward, fuse with it as with any pointwise chain:
//
//   x3 = view(permute(x, [0, 2, 3, 1]), [A, B, C])      views; A * B = M, see below
//   mean = colsum(f32(x3)) / M                            [1, C]
//   var = colsum((f32(x3) - mean)^2) / M                  two passes, as exact as the row form
//   out = (f32(x) - mean) * rsqrt(var + eps) * w + b      pointwise over x, channels-last
//   running stats: lerp(old, batch, momentum) (unbiased variance), as the row form
//
// backward (g channels-last too):
//   xhat3 = (f32(x3) - save_mean) * save_invstd
//   sum_g = colsum(f32(g3)); sum_gx = colsum(f32(g3) * xhat3)
//   grad_input = (f32(g) - sum_g / M - xhat * sum_gx / M) * invstd * w   pointwise over x
//
// colsum(v) of [A, B, C] is sum(v, [0]) -> [B, C] then sum(., [0], keepdim) -> [1, C]: with few
// channels (64 at 112 x 112) one column kernel would have 16 blocks for 132 SMs, so B splits the
// rows until B * C >= 512 columns (B a power of two dividing M, A >= 256 rows); B = 1 from 512
// channels on, and the second stage is skipped.
#pragma once

#include <optional>
#include <vector>

#include "codegen/ir/graph.h"

namespace tccd::codegen {

// A 4-D float CUDA tensor with exactly channels-last strides that differ from NCHW's, from offset
// 0.
bool IsChannelsLastNormInput(const ir::TensorType& t);

// The five outputs of _native_batch_norm_legit_functional(x, w, b, rm, rv, True, momentum, eps)
// as values appended to `out` (args already in `out`), or nullopt with `out` untouched.
std::optional<std::vector<ir::Arg>> DecomposeChannelsLastForward(ir::Graph& out,
                                                                 const ir::Node& node);

// The three outputs of native_batch_norm_backward (None where the mask is off; `used` says which
// of the original outputs are read), or nullopt with `out` untouched.
std::optional<std::vector<ir::Arg>> DecomposeChannelsLastBackward(ir::Graph& out,
                                                                  const ir::Node& node,
                                                                  const std::vector<bool>& used);

}  // namespace tccd::codegen

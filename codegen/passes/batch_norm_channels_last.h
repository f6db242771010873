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
//   K = x3[0, 0, :]                                      x's first pixel, a [C] view
//   s1 = colsum(f32(x3) - K); s2 = colsum((f32(x3) - K)^2)   one pass (one column kernel)
//   mean = K + s1 / M; var = max(s2 / M - (s1 / M)^2, 0)      shifted sums: exact enough
//   out = (f32(x) - mean) * rsqrt(var + eps) * w + b      pointwise over x, channels-last
//   running stats: lerp(old, batch, momentum) (unbiased variance), as the row form
//
// backward (g channels-last too):
//   xhat3 = (f32(x3) - save_mean) * save_invstd
//   sum_g = colsum(f32(g3)); sum_gx = colsum(f32(g3) * xhat3)   one pass
//   grad_input = (f32(g) - sum_g / M - xhat * sum_gx / M) * invstd * w   pointwise over x
// When the norm is g's only reader and g is a pointwise op's output (the relu backward), that
// op is re-emitted over [A, B, C] views of its operands for the sums, so g itself is read by
// the normalisation alone, which fuses it: g is never written.
//
// colsum(v) of [A, B, C] is sum(v, [0]) -> [B, C] then sum(., [0], keepdim) -> [1, C]: with few
// channels (64 at 112 x 112) one column kernel would have 16 blocks for 132 SMs, so B splits the
// rows until B * C >= 2048 columns (B a power of two dividing M, A >= 256 rows); B = 1 from 2048
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
// of the original outputs are read), or nullopt with `out` untouched. `recompute_grad`: the
// gradient is read by this norm only, so a pointwise producer of it (the relu backward) is
// recomputed inside the column kernel from its own operands rather than written out for it.
std::optional<std::vector<ir::Arg>> DecomposeChannelsLastBackward(ir::Graph& out,
                                                                  const ir::Node& node,
                                                                  const std::vector<bool>& used,
                                                                  bool recompute_grad);

}  // namespace tccd::codegen

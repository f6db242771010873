// Layer norm parameter gradients over many short rows (CUDA): the column half of a layer norm
// backward (layer_norm_backward_split.h: output_mask [false, w, b]) as explicit column sums,
// split in two stages when the norm has few columns. ConvNeXt's LayerNorm2d normalises 64..768
// channels per pixel of 64 x 112 x 112 maps: grad_weight and grad_bias are sums over 800k rows of
// 64 columns, which the column kernel gives 16 to 32 blocks (its tiles are 16..32 columns wide
// and a thread-block cluster splits the rows at most 8 ways) for 132 SMs. As the channels-last
// batch norm does (batch_norm_channels_last.h), the rows are seen as [A, B, N] (views, no copy)
// and summed in two column kernels, B chosen so that B * N >= kLayerNormSplitColumns:
//
//   %0 = native_layer_norm_backward(%g, %x, [N], %mean, %rstd, %w, %b, [false, true, true])
// becomes, for g, x contiguous [..., N] with M rows and mean, rstd [..., 1]:
//   g3 = f32(view(g, [A, B, N])); x3 = f32(view(x, [A, B, N]))
//   xhat3 = (x3 - f32(view(mean, [A, B, 1]))) * f32(view(rstd, [A, B, 1]))
//   grad_w = view(sum(sum(g3 * xhat3, [0]), [0]), [N])   stage 1 [B, N], stage 2 [N]
//   grad_b = view(sum(sum(g3, [0]), [0]), [N])           (shares stage 1's pass over the rows)
//
// Exactly ATen's sums (f32 accumulation of g * xhat and g), in another order. Wide norms (B = 1:
// N >= kLayerNormSplitColumns) and layouts other than contiguous rows keep the ATen node, which
// the column kernel takes as before.
//
// The sums read the narrowest exact form of g (Options::narrow_gradient): under autocast g is
// an f32 cast of the bf16 matmul gradient (`_to_copy(view(mm))`), and viewing that cast as
// [A, B, N] made the reshape passes move the product g * xhat onto the row kernel's shape, so
// that the row kernel (its prologue casts g) wrote g and g * xhat in f32 and a pointwise kernel
// wrote xhat in f32 for it, all for the column sums to read back: ViT-B/16 train large, the
// LN-backward row kernel at ~28 bytes per element where Inductor's moves ~16 (H200, eleventh
// session). Reading the 16-bit source instead (view, then the column kernel's own cast: the
// same f32 values), nothing the sums read is a kernel's output: their prologue (cast, x - mean,
// * rstd, g * xhat) stays theirs and the row kernel keeps its cast of g to itself. x likewise,
// where it is the f32 cast of a 16-bit tensor (CUDA autocast runs norms in f32).
#pragma once

#include <cstdint>

#include "codegen/passes/pass.h"

namespace tccd::codegen {

// Stage 1 has at least this many columns (B * N): 512 16-byte tiles of 4 threads, several
// blocks per SM of an H100 with the cluster split. The pass uses SplitColumnTarget()
// (split_columns.h: this value unless TCCD_SPLIT_COLUMNS overrides it).
inline constexpr int64_t kLayerNormSplitColumns = 2048;

class LayerNormParamGradSplit : public GraphPass {
 public:
  struct Options {
    // The column sums read the 16-bit tensor g (and x) is an f32 cast of (through reshapes of
    // contiguous tensors), not g. Default: true (false: TCCD_DISABLE_PASSES=
    // layer-norm-grad-narrow-reads, the sums read g as before, for A/B).
    bool narrow_gradient = true;
  };
  LayerNormParamGradSplit() = default;
  explicit LayerNormParamGradSplit(Options options) : options_(options) {}

  std::string_view name() const override { return "layer-norm-param-grad-split"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

 private:
  Options options_;
};

}  // namespace tccd::codegen

// Depthwise convolution templates: hand-written CUDA for the two index kernels the pass
// depthwise-conv-kernels makes (passes/depthwise_conv_kernels.h), in place of their generated
// index form. Internal to the CUDA backend; the launch is in cuda_backend.h ("Depthwise
// templates": launched as tiled kernels are, kind kTile, one entry <name>_dw).
//
// The index form computes every output point on its own: 49 masked x gathers and 49 tap
// gathers per 8 outputs of a 7x7 window, no reuse of a loaded column along W (H200, ConvNeXt-T
// train large: 2.2x cuDNN's GPU time). The templates compute the same sums in the same order
// (f32, taps row-major, one rounding), with
// - the convolution (forward, and the input gradient with the window flipped): a thread owns
//   TW consecutive outputs along W of one map row and two channels; per window row it loads the
//   TW + kw - 1 input columns once (zero outside the map) and the kw tap pairs once, and does
//   TW * kw FMAs per channel from registers (a sliding window). Lanes walk channel pairs, so
//   every warp load is one contiguous span of the map;
// - the weight partials: a thread owns one window row i, two channels and a block of R map
//   rows; along W it keeps the kw input columns of row h + i - ph in registers (one new load a
//   column) beside one gradient load, and accumulates all kw taps of that row in f32, writing
//   its kw partials once.
// Only kernels that are exactly one such op (nothing fused in), channels-last (C innermost), an
// even C, static shapes, the dense layouts the plan declares; anything else keeps the index
// form. TCCD_DEPTHWISE_TEMPLATES=0 (daemon environment, keyed in pipeline.cc): the index form
// everywhere (the A/B against session 18's kernels).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "codegen/kernel/pointwise_kernel.h"

namespace tccd::codegen {

// One recognised depthwise kernel.
struct CudaDepthwiseTemplate {
  enum class Kind { kConv, kWeightPartials };
  Kind kind = Kind::kConv;
  int64_t n = 0, h = 0, w = 0, c = 0;  // the map, [N, H, W, C]
  int64_t kh = 0, kw = 0;
  bool flip = false;   // kConv: the input gradient's window
  bool bias = false;   // kConv: input 2 is a [C] bias
  int64_t rows = 0;    // kWeightPartials: map rows per partial (H / shape[1])
  int64_t run = 1;     // kConv: outputs along W per thread (a divisor of W, <= 8)
  int64_t threads = 0; // threads in all; the grid is ceil(threads / kCudaBlockSize)
  int64_t grid = 0;
};

// Whether TCCD_DEPTHWISE_TEMPLATES leaves the templates on (the default).
bool DepthwiseTemplatesEnabled();

// The template for `kernel`, or nullopt (the index form) when it is not one of the two ops as
// the pass makes them, or the templates are off.
std::optional<CudaDepthwiseTemplate> DepthwiseTemplateOf(const PointwiseKernel& kernel);

// Appends `kernel`'s namespace and its one entry point, <name>_dw.
absl::Status EmitDepthwiseKernel(const PointwiseKernel& kernel, const CudaDepthwiseTemplate& t,
                                 std::string& out);

}  // namespace tccd::codegen

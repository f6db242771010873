// DepthwiseConvKernels: 2-D depthwise convolutions (ConvNeXt's 7x7) and their input gradients
// as generated index kernels (index_ops.h) instead of ATen extern steps:
//
//   %y = aten::convolution.default(x, w, b, [1, 1], [p, p], [1, 1], false, [0, 0], C)
// becomes (channels-last x and y: the [N, H, W, C] views, so the kernel walks C innermost)
//   %t = aten::permute.default(w, [2, 3, 0, 1])                  [kh, kw, C, 1]
//   %u = aten::_to_copy.default(%t, dtype=f32, memory_format=contiguous)  the taps, C innermost
//   %v = aten::view.default(%u, [kh, kw, C])
//   %xv = aten::permute.default(x, [0, 2, 3, 1])                 [N, H, W, C]
//   %o = tccd::depthwise_conv2d.default(%xv, %v, b, [kh, kw], [p, p], false, true)
//   %y = aten::permute.default(%o, [0, 3, 1, 2])                 y's type
// a pointwise kernel over the output whose points sum the window's kh*kw taps (unrolled, f32,
// one rounding), each an x gather (zero outside the map) times one of the weight's [C] vectors;
// on CUDA both are 16-byte vectors along C (cuda_index_emitter.cc's vector path).
//
//   %g = aten::convolution_backward.default(go, x, w, sizes, ..., C, [true, a, b])
// becomes the same kernel over go with the window flipped (stride 1 and the "same" padding
// k / 2 make the input gradient that convolution: gx[h] = sum_i go[h + p - i] w[i]
// = sum_i' go[h + i' - p] w[k - 1 - i']); the weight gradient a reduction in two stages:
//   %p = tccd::depthwise_conv2d_weight_partials.default(%gov, %xv, [kh, kw], [p, p], R, true)
//                                                   f32 [N, H / R, kh, kw, C]
//   %s = aten::sum.dim_IntList(%p, [0, 1])          f32 [kh, kw, C]: a column sum (CUDA)
//   %gw = aten::_to_copy(permute(%s viewed [kh, kw, C, 1], [2, 3, 0, 1]), dtype)   a's type
// the partials an index kernel whose point (n, b, i, j, c) sums go * (x shifted by the tap)
// over R map rows and all W columns (unrolled: R * W <= kMaxWeightPartialTerms, R the largest
// divisor of H that keeps it so), the taps and 16-byte channel vectors spread over the threads
// (each reads its rows of go and x from L1/L2: the map comes from DRAM about once). A map wider
// than kMaxWeightPartialTerms keeps ATen's weight gradient, as does everything with
// TCCD_DISABLE_PASSES=depthwise-conv-weight-grad. The bias gradient (b) stays ATen's, in a
// backward with [false, false, b] (CUDA's is a graph sum already: conv_backward_bias_grad.h).
//
// Why: ATen runs every channels-last depthwise convolution through cuDNN's depthwise engine,
// whose kernel cuDNN compiles at run time in every process and on every thread (README, "Warm
// start: ConvNeXt's first calls": ~150 ms a forward call per thread, 0.5-1.1 s a backward
// call, a one-time ~1.2 s; ~2.9 s of ConvNeXt-T's warm first step on the H200). A generated
// kernel is compiled once by the daemon and cached with the plan.
//
// On CUDA the backend emits both kernels from hand-written templates (cuda/
// cuda_depthwise_emitter.h: outputs along W reusing loaded columns, all taps of a window row per
// thread for the partials), the index form only with TCCD_DEPTHWISE_TEMPLATES=0 or where a
// kernel is not exactly the op; Options::templates then gives the partials more rows.
// Opt-in (the pipeline adds the pass with TCCD_DEPTHWISE_KERNELS=1 only). Measured (H200, r1 of
// session 18, ConvNeXt-T, this pass vs TCCD_DISABLE_PASSES=depthwise-conv-kernels): warm first
// step 1.98 vs 4.14 s, cold 8.08 vs 10.02 s, but the train-large step 22.37 vs 16.61 ms: these
// kernels took 6.91 ms (forward and input gradients) + 3.43 ms (weight partials) where cuDNN's
// took 1.25 + 2.44 + 0.93 ms (README, "Depthwise convolutions as generated kernels"). With the
// CUDA templates (session 18's final run): 19.12 ms against cuDNN's 16.94 (GPU busy 17.39 vs
// 15.18), the index form 23.33 ms; cold first step 10.04 vs 11.27 s; still opt-in.
//
// Which: depth multiplier 1 (groups == C == the weight's dim 0, its dim 1 one), 4-D, stride 1,
// dilation 1, not transposed, padding k / 2 with odd k <= 7 per dim, f32/bf16/f16 tensors of
// one dtype, a bias of C elements or none. CUDA takes channels-last activations only (an NCHW
// map would run one element per thread; cuDNN's NCHW depthwise path is not the run-time
// compiled one); the CPU takes either layout. Anything else stays the ATen op, as does
// everything without TCCD_DEPTHWISE_KERNELS=1 or with TCCD_DISABLE_PASSES=depthwise-conv-kernels.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

inline constexpr char kDepthwiseConvTarget[] = "tccd::depthwise_conv2d.default";
inline constexpr char kDepthwiseWeightPartialsTarget[] =
    "tccd::depthwise_conv2d_weight_partials.default";
// The most go * x terms one weight-gradient partial sums in its unrolled body (its rows * W): the
// kernel's size against the partials' (f32, 49 / this of the map's elements for a 7x7 window).
inline constexpr int64_t kMaxWeightPartialTerms = 64;
// With the CUDA templates (cuda/cuda_depthwise_emitter.h), whose partials loop over their rows:
// the most rows and terms one partial sums (fewer, larger partials: ConvNeXt-T's stage 1 writes
// 8.4 MB of f32 partials a call at batch 64 instead of 67 MB). Its rows stay <= 64 columns.
inline constexpr int64_t kMaxTemplatePartialRows = 8;
inline constexpr int64_t kMaxTemplatePartialTerms = 512;

class DepthwiseConvKernels : public GraphPass {
 public:
  struct Options {
    // Whether the weight gradient is rewritten too. Default: true
    // (TCCD_DISABLE_PASSES=depthwise-conv-weight-grad: false).
    bool weight_grad = true;
    // Whether the CUDA backend emits the kernels as its templates (TCCD_DEPTHWISE_TEMPLATES
    // unset or not 0, CUDA requests): weight partials of up to kMaxTemplatePartialRows rows and
    // kMaxTemplatePartialTerms terms where C is even (the templates' channel pairs), instead of
    // kMaxWeightPartialTerms. Default: false.
    bool templates = false;
  };
  DepthwiseConvKernels() = default;
  explicit DepthwiseConvKernels(Options options) : options_(options) {}
  std::string_view name() const override { return "depthwise-conv-kernels"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

 private:
  Options options_;
};

}  // namespace tccd::codegen

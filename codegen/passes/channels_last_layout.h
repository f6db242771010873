// ChannelsLastLayout: NHWC strides for the activations around CUDA convolutions.
//
// cuDNN runs bf16/f16 convolutions in NHWC. Given NCHW tensors (the strides eager traced), ATen
// asks cuDNN to transpose the input to NHWC and the output back around every convolution
// (nchwToNhwcKernel / nhwcToNchwKernel: on the H100, 158 + 68 launches and 3.5 ms of a ResNet-50
// bf16 training step at batch 64). Inductor keeps those activations channels-last instead
// (torch/_inductor/graph.py decide_layout_opt, the conv lowering's require_channels_last); this
// pass does the same by choosing the declared strides of the values between convolutions.
//
// ATen's rule, which the declared strides of extern outputs must match (a mismatch is still
// correct: the runtime copies an extern output that arrives in another layout into the declared
// one before a kernel reads it, but that is a copy): a CUDA convolution (cuDNN, 2-D) runs in
// channels-last when its input *or* its weight suggests it (cudnn_conv_suggest_memory_format; the
// meta kernel, torch/_meta_registrations.py meta_conv, says the same on CUDA), converts the other
// operands (weight.contiguous(channels_last): a copy kernel per call) and returns its output(s)
// in that format; convolution_backward likewise from input and weight (grad_input and
// grad_weight); max_pool2d_with_indices, its backward and batch norm (training, eval, backward)
// allocate their outputs in their input's suggested format. Those are the "followers" (the
// table in the .cc). Pointwise kernels are tccd's and write whatever strides are declared.
//
// The pass:
//  1. Regions: "movable" values (4-D, dense NCHW as traced, on CUDA, made by a pointwise op,
//     detach/alias, or a follower whose layout is not fixed by an input that is not ours),
//     joined when an op couples their layouts (a pointwise op's output with its same-shape
//     operands; a follower's outputs with its coupled operands). A follower reading a graph
//     input that is already channels-last (a backward's saved activations, a user's
//     channels_last model) *anchors* its region: ATen makes it channels-last whatever we declare.
//  2. A region goes channels-last when anchored, or when it holds 16-bit convolutions (bf16/f16:
//     cuDNN's NHWC kernels; f32 convolutions keep eager's layout, so f32 results stay comparable
//     with eager's algorithms) and needs fewer copies back to NCHW than it has convolutions (each
//     saves cuDNN's two transposes). A copy (clone, contiguous_format, right after the producer,
//     shared by all such readers) serves each value a reader needs in NCHW: a graph output
//     AOTAutograd promised, a view other than detach/alias, an extern op that is not a follower.
//     Reductions read any strides. So a training forward, whose activations are all saved for
//     the backward (graph outputs), stays NCHW unless the client declares those outputs free
//     (`free_outputs`; client/tccd/saved_layouts.py then compiles the backward for the strides
//     the plan chose).
//  3. Weight casts join their convolutions' region (convolution couples its weight), so the
//     cast kernel writes the weight channels-last and ATen copies nothing; the cast reads the
//     f32 parameter in NCHW (a small transposing kernel).
//
// A permute of a value in a channels-last region whose every reader is a kernel (a pointwise op, a
// reduction's input) follows the region too: its output's strides are the permuted channels-last
// ones (no copy back to NCHW for it). ConvNeXt's stem (conv, then LayerNorm2d: permute to NHWC,
// layer norm over the channels, permute back) was left NCHW for that permute's copy, so its norm
// read each pixel's 96 channels H*W elements apart (the H200's inference large: 179 us, a
// `_strided` row kernel, against Inductor's 55 us from its NHWC convolution). Off with
// `TCCD_DISABLE_PASSES=channels-last-permutes` (`permutes_follow` false: a permute reader needs
// NCHW, as before).
//
// Values whose channels-last strides equal their NCHW strides (C == 1, or H == W == 1) join
// regions but change nothing. Runs before the batch-norm rewrites: a training norm over a
// channels-last input becomes column reductions (batch_norm_channels_last.h), an eval-mode one
// pointwise ops in its input's layout (batch_norm_inference.h).
#pragma once

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "codegen/passes/pass.h"

namespace tccd::codegen {

// The channels-last strides of a 4-D tensor of `sizes` (c10's get_channels_last_strides_2d).
std::vector<int64_t> ChannelsLastStrides(const std::vector<int64_t>& sizes);

class ChannelsLastLayout : public GraphPass {
 public:
  // `free_outputs`: indices of graph outputs whose strides the pass may choose.
  // `permutes_follow`: permutes read only by kernels take the region's layout (above).
  explicit ChannelsLastLayout(std::vector<int> free_outputs = {}, bool permutes_follow = true)
      : free_outputs_(free_outputs.begin(), free_outputs.end()),
        permutes_follow_(permutes_follow) {}
  std::string_view name() const override { return "channels-last-layout"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

 private:
  absl::flat_hash_set<int> free_outputs_;
  bool permutes_follow_;
};

}  // namespace tccd::codegen

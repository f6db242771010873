// ChannelsLastLayout: NHWC strides for the activations around CUDA convolutions.
//
// cuDNN runs bf16/f16 convolutions in NHWC. Given NCHW tensors (the strides eager traced), ATen
// asks cuDNN to transpose the input to NHWC and the output back around every convolution
// (nchwToNhwcKernel / nhwcToNchwKernel: on the H100, 158 + 68 launches and 3.5 ms of a ResNet-50
// bf16 training step at batch 64). Inductor keeps those activations channels-last instead
// (torch/_inductor/graph.py decide_layout_opt, the conv lowering's require_channels_last); this
// pass does the same by choosing the declared strides of the values between convolutions.
//
// ATen's rule, which the chosen strides must match (a mismatch is still correct: the runtime
// copies an extern output that arrives in another layout into the declared one, but it costs a
// copy): a CUDA convolution (cuDNN, 2-D) runs in channels-last when its input *or* its weight
// suggests channels-last (at::native::cudnn_conv_suggest_memory_format; the meta kernel,
// torch/_meta_registrations.py meta_conv, says the same for CUDA) and returns its output in that
// format; the other operand is converted inside ATen (weight.contiguous(channels_last): one
// copy kernel per call). max_pool2d_with_indices returns both outputs in its input's suggested
// format. Pointwise kernels are tccd's and write whatever strides are declared.
//
// The pass:
//  1. Regions: the "movable" values (4-D, dense NCHW, on CUDA, made by a pointwise op, a 2-D
//     convolution with groups == 1, or max_pool2d_with_indices), joined when one op couples their
//     layouts (a pointwise op's output with its same-shape operands, a convolution's input with
//     its output, a pool's input with its outputs).
//  2. A region with a convolution becomes channels-last unless that costs more than it saves:
//     every value of it that a reader needs in NCHW (a graph output AOTAutograd promised, a view,
//     a reduction, any other extern op) gets one copy back (clone, contiguous_format) right
//     after its producer, so the region is converted only when it has fewer such copies than
//     convolutions (each convolution saves cuDNN's two transposes). A training forward whose
//     saved activations are all graph outputs therefore stays NCHW unless those outputs are
//     declared free (`free_outputs`: the client then reports the strides the plan chose to
//     AOTAutograd, TracingContext.report_output_strides, as Inductor does).
//  3. Weights: the bf16 cast of a weight (a pointwise kernel anyway) is written channels-last
//     when every reader is a convolution whose input became channels-last, so ATen needs no
//     weight copy; the cast reads the f32 parameter in NCHW (a small transposing kernel).
//
// Values whose channels-last strides equal their NCHW strides (C == 1, or H == W == 1) join
// regions but change nothing. Runs after the batch-norm rewrites (eval-mode norms are pointwise
// ops by then); training norms (their permuted views) stay NCHW readers, see the README.
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
  explicit ChannelsLastLayout(std::vector<int> free_outputs = {})
      : free_outputs_(free_outputs.begin(), free_outputs.end()) {}
  std::string_view name() const override { return "channels-last-layout"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

 private:
  absl::flat_hash_set<int> free_outputs_;
};

}  // namespace tccd::codegen

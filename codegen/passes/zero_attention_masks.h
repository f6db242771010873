// ZeroAttentionMasks: an attention call whose additive mask is all zeros runs without it.
//
// T5's cross-attention has no position bias: transformers passes
// `torch.zeros((1, n_heads, q_len, k_len))` as the mask of every cross-attention layer, which a
// graph makes per call (a fill kernel writing a bf16 [1, H, Q, K] tensor) and each attention
// reads and adds to its scores. Scores + 0 are the scores (-0 + 0 is +0, the same under
// softmax), so the call without the mask computes the same values, and cuDNN / flash attention
// take their mask-free path.
//
// Targets: _scaled_dot_product_flash_attention_for_cpu (attn_mask), _scaled_dot_product_
// efficient_attention and _scaled_dot_product_cudnn_attention (attn_bias, positional 3); the mask
// a zeros, zeros_like, new_zeros or full/full_like/new_full of 0 of a floating dtype. Backward
// ops keep theirs (a zero bias there adds nothing either, but their graph is another's).
// TCCD_DISABLE_PASSES=zero-attention-masks keeps the masks.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class ZeroAttentionMasks : public GraphPass {
 public:
  std::string_view name() const override { return "zero-attention-masks"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

// MathAttentionToFused: PyTorch's math attention over half-precision q, k, v, upcast to f32,
// becomes one scaled_dot_product_attention call in q's dtype.
//
// When scaled_dot_product_attention cannot use a fused kernel for its arguments (on the zoo's
// GPU: BERT's and T5's masks; T5's position bias is a permuted [1, H, Q, K] view whose last dim
// is not unit-stride), ATen runs `_scaled_dot_product_attention_math`, and for bf16/f16 inputs
// that upcasts q, k and v to f32 first (allow_fp16_bf16_reduction_math_sdp is off by default).
// AOTAutograd traces that decomposition, so the graph holds, per attention,
//
//   qf = _to_copy(q, f32) [* sqrt(scale)]        kf = transpose(_to_copy(k, f32)) [* sqrt(scale)]
//   s  = bmm(qf as [B*H, Q, D], kf as [B*H, D, K]) as [B, H, Q, K] [+ mask]
//   o  = _to_copy(bmm(_safe_softmax(s, -1) as [B*H, Q, K], _to_copy(v, f32) as [B*H, K, Dv])
//                 as [B, H, Q, Dv], q.dtype)
//
// which costs two f32 FFMA batched matmuls (BERT at the zoo's large batch: 1.56 ms of 4.5 ms
// GPU busy per inference step on the H100, under Inductor as under tccd) and a softmax that
// reads and writes the f32 [B, H, Q, K] scores (0.54 ms). The rewrite replaces the final cast
// with `aten::scaled_dot_product_attention(q, k, v, mask', 0.0, false, scale=s1*s2)`, which picks
// its backend at run time (cuDNN / flash / efficient attention; math again where none fits, so
// it is never wrong, at worst as slow as before); mask' is the mask, contiguous (a copy when it
// is not, T5's permuted bias: the fused kernels need unit-stride rows), reusing the add node.
// The rest of the chain is then dead.
//
// Numerics: the fused kernels multiply the half-precision q, k (exact products) with f32
// accumulation and an f32 online softmax, as the math path does, but round the probabilities
// to q's dtype before the second matmul (the math path keeps them f32). The result is rounded
// to q's dtype either way. The mask must be in q's dtype already (autocast casts SDPA's mask
// with q, k, v: T5's bias arrives in bf16) or be a boolean mask's select of constants q's dtype
// holds (the math path's where(mask, 0, -inf), cast exactly); any other keeps the math path
// rather than be rounded. A query row whose mask is -inf everywhere gives 0s
// in the math path (_safe_softmax) and what the fused kernel gives otherwise; transformers'
// masks use the dtype's finite minimum.
//
// Only when every intermediate has the chain as its one reader (a training forward saves the
// probabilities for its backward: that graph keeps the math path), q, k, v are f16/bf16 of rank 4
// and the mask (if any) is of their dtype and rank 4. No dropout (the math path's dropout is
// more nodes: no match). TCCD_DISABLE_PASSES=math-attention-to-fused keeps the math path.
#pragma once

#include <cstdint>

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class MathAttentionToFused : public GraphPass {
 public:
  // Attentions of fewer than this many scores (B x H x Q x K) keep the math path: the call's
  // host cost (the dispatcher's backend choice, the fused kernel's set-up; the math path's
  // matmuls run inside native segments) can outweigh the GPU time saved where the step is
  // host-bound. Measured (H200, session 15 r1, zoo infer large): BERT (16 x 12 x 512 x 512 =
  // 50M scores per attention) host 1.43 -> 1.50 ms, GPU busy 4.14 -> 2.35 ms; T5 (16 x 8 x
  // 256 x 256 = 8.4M) GPU busy 2.05 -> 1.47 ms. 2^23 takes both; the small batch's (BERT's
  // 6.3M, T5's 1M: host-bound cells) keep the math path (TCCD_MATH_ATTENTION_MIN_SCORES sets
  // it; 0: every attention).
  static constexpr int64_t kDefaultMinScores = int64_t{1} << 23;

  explicit MathAttentionToFused(int64_t min_scores = 0) : min_scores_(min_scores) {}
  std::string_view name() const override { return "math-attention-to-fused"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

 private:
  int64_t min_scores_;
};

}  // namespace tccd::codegen

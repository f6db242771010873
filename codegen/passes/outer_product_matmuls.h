// OuterProductMatmuls: a matmul whose reduction has length 1 is a broadcast multiply:
//
//   mm(a [M, 1], b [1, N])          -> mul(a, b)   [M, N]
//   bmm(a [B, M, 1], b [B, 1, N])   -> mul(a, b)   [B, M, N]
//
// transformers' rotary embedding computes its angles so on CUDA:
// `inv_freq[None, :, None].float().expand(B, -1, 1) @ position_ids[:, None, :].float()`, an
// f32 bmm with K = 1 (a cuBLAS sgemm launch per call, and a kernel casting the position ids
// before it). As a pointwise op the product joins the kernel of the cast, or of its readers.
//
// Each output element is one product a[m] * b[n]: the gemm's value (one fused multiply-add with
// a zero accumulator rounds once, as the multiply does; bf16/f16 operands multiply exactly in
// f32 in both). Only with TF32 matmuls allowed would cuBLAS round f32 operands first; the
// multiply keeps them, as eager's f32 multiply does. Floating operands of one dtype, the
// output's; no graph output (the caller's strides) is rewritten.
// TCCD_DISABLE_PASSES=outer-product-matmuls keeps the matmuls.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class OuterProductMatmuls : public GraphPass {
 public:
  std::string_view name() const override { return "outer-product-matmuls"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

// Large 16-bit matmuls whose leading dimensions are not multiples of 8 elements (a 50257-token
// vocabulary) run in cuBLAS's align-1 kernels, 4-5x slower than the aligned ones. This pass
// pads such operands with zeros to the next multiple of 8 (Inductor's pad_mm does the same):
//
//   K not aligned (an operand's leading dimension is K): both operands are zero-padded along K,
//     which adds zero products only:  mm(A[M,K], B[K,N]) -> mm(A'[M,K8], B'[K8,N])
//   M not aligned (A is column-major, leading dimension M): A's storage is padded along M and
//     the result's first M rows (a contiguous prefix, the very layout of the unpadded result)
//     are a slice:                      mm(A'[M8,K], B) [:M]
//
//   N not aligned (the result's leading dimension; B's too when row-major): B is padded along
//     N and the result is the first N columns of the padded product, cloned back to the
//     contiguous layout its readers expect:  clone(mm(A, B'[K,N8])[:, :N])
//
// The pads are constant_pad_nd index kernels (fused with the cast that usually produces the
// operand; autocast's cast of a weight, a graph input, is moved after the pad: the pad of the
// f32 weight, then its cast, one kernel writing only the padded bf16 copy, so that the unpadded
// cast is never made); the clone is a copy kernel, or the prologue of a kernel that reads the
// result (a log_softmax over logits). Applied to mm with f16/bf16 operands, each either row-major
// contiguous or the transpose of a contiguous tensor, when M * N * K >= kMinPaddedMatmulWork (below
// that the pad copies cost more than the faster kernel saves). Measured on an H100 (GPT-2's
// vocabulary projection backward, [1024, 50257] x [50257, 768] and its transpose): see the README.
#pragma once

#include <cstdint>

#include "codegen/passes/pass.h"

namespace tccd::codegen {

inline constexpr int64_t kMinPaddedMatmulWork = int64_t{1} << 32;

class PadMatmulOperands : public GraphPass {
 public:
  std::string_view name() const override { return "pad-matmul-operands"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

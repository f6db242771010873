// Rewrites training dropout, aten::native_dropout(x, p, train=True) -> (out, mask), into ops that
// fuse: one counter-based draw per element instead of ATen's generator-driven kernel.
//
//   %seed = aten::randint.low(0, 2^63 - 1, [], dtype=i64, device=x's)   once per graph, first
//   %u    = tccd::philox_uniform(%seed, k)     f32 in [0, 1): Philox4x32-10 keyed by the seed,
//                                              counter (element index, k = this dropout's ordinal)
//   %mask = aten::lt.Scalar(%u, 1 - p)         keep with probability 1 - p (the bool mask output)
//   %out  = aten::mul.Scalar(aten::mul.Tensor(x, %mask), 1 / (1 - p))   (0 when p == 1)
//
// so the mask and the scaled output are computed inside the kernels of their producers and
// consumers (Inductor does the same: torch/_inductor/lowering.py, inductor_random with
// inductor_seeds). The seed is drawn from torch's default generator by an ATen step, so
// torch.manual_seed still makes a run reproducible, but the random *stream* differs from eager's:
// the same distribution (each element kept independently with probability 1 - p), other draws.
// The backward (native_dropout_backward(grad, mask, scale)) reads the mask like any tensor.
//
// tccd::philox_uniform exists only inside the compiler: the pass runs only when fusion is on
// (every pointwise op then lands in a kernel), and not when the client asks for ATen's random
// numbers (CompileOptions.extra["fallback_random"], like torch._inductor.config.fallback_random).
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

inline constexpr char kPhiloxUniformTarget[] = "tccd::philox_uniform.default";

class DropoutToPhilox : public GraphPass {
 public:
  std::string_view name() const override { return "dropout-to-philox"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

// MaxPoolKernels: 2-D max pooling, forward and backward, as generated index kernels (index_ops.h)
// instead of ATen extern steps, the way Inductor lowers them (torch/_inductor/lowering.py
// max_pool2d_with_indices, max_pool2d_with_indices_backward):
//
//   %v, %i = aten::max_pool2d_with_indices(x, k, s, p, [1, 1], false)
// becomes
//   %v = tccd::max_pool2d_values(x, k, s, p, [1], false, false)    the old value output's type
//   %i = tccd::max_pool2d_offsets(x, k, s, p, [1], false, false)   the old index output's type
// each a pointwise kernel over the output that visits the window's kh*kw points (unrolled):
// ATen's rule, the first maximum in row-major window order, a NaN taking over (val > max ||
// isnan(val)), padding never chosen, the index h * W + w within the (n, c) plane. The two share
// the iteration space, so horizontal fusion may put them in one kernel; a dead index output (an
// inference graph) is dropped by dead-code elimination.
//
//   %gx = aten::max_pool2d_with_indices_backward(g, x, k, s, p, [1, 1], false, %i)
// becomes
//   %gx = tccd::max_pool2d_gather_backward(g, %i, k, s, p, [1, 1], false, false)  the old type
// a pointwise kernel over the input (gather form, no atomics, deterministic): each input point
// visits the ceil(k/s) x ceil(k/s) windows that can hold it, and sums (in f32) the gradients of
// those whose saved index is its own. Its consumers (the ReLU backward before the stem's max
// pool) fuse with it; its gradient operand is gathered, so a producer of g (the residual sum) is
// a kernel of its own.
//
// Channels-last tensors (4-D, dense, the strides the CUDA channels-last pass chose): the new ops
// run over the [N, H, W, C] permuted views of their operands and write [N, H, W, C] outputs read
// back through [N, C, H, W] views, so a kernel walks C innermost (index kernels keep their loop
// order, loop_order.h; the NCHW order would read a channels-last map 64 elements apart per
// thread). The trailing bool argument of the new ops says which dims pool (H, W at 1, 2).
//
// Applied to 3-D and 4-D f32/bf16/f16 inputs with dilation 1, ceil_mode false and at most 64
// window points (and ceil(k/s)^2 <= 16 candidate windows in the backward); anything else stays
// the ATen extern step, as does everything with this pass disabled
// (TCCD_DISABLE_PASSES=max-pool-kernels). Both backends (CUDA and CPU) lower the new ops.
//
// Measured (H200, r2 integration build with a6c8e53, zoo ResNet-50 train large, bf16, batch 64,
// this pass on vs TCCD_DISABLE_PASSES=max-pool-kernels): the stem's backward 436.3 us against
// ATen's max_pool_backward_nhwc 457.3 (Inductor's fused one: 366), the forward's values+offsets
// kernel 181.2 us against ATen's max_pool_forward_nhwc 214.2; GPU busy 11.83 vs 11.93 ms/step,
// 623 vs 624 kernels, peak memory equal (2937 MiB). Both kernels run the strided entry (their
// gathered operands have another shape than the iteration space, so the launcher's dense test
// fails) with two points per thread (the i64 indices' 16-byte vectors) and i64 index math:
// far from bandwidth. Since then (branch pool2) index kernels with one declared layout take a
// dense entry with their strides fixed and 8 bf16 lanes (cuda_host/entry_points.h,
// TCCD_DISABLE_PASSES=index-fixed-entries). Measured (H200, int1 build, same binary, that knob
// on vs off): backward 181.3 vs 432.3 us (Inductor's fused one: 366), forward 160.8 vs 180.6
// (Inductor's: 94); GPU busy 10.92 vs 11.17 ms/step. Left: int8 window offsets as Inductor saves
// them instead of i64 indices, and the backward's gradient gather masked per lane (scalar loads).
//
// CPU: the pipeline keeps the backward ATen's op there (MaxPoolKernels(/*backward=*/false)):
// the gather form compiles to a scalar loop with a data-dependent branch per input point (the
// saved index compared with the point's own), while ATen's CPU kernel scatters once per output
// point. Measured (deploy/cpu_training_bench.py's CNN, 16x16x32x32 input to a 2x2 pool, 1
// thread, perf): the gather kernel fused with the ReLU backward took ~2.3 ms of an 8.8 ms
// training step, ATen's max_pool2d_with_indices_backward 0.12 ms plus its threshold_backward.
// The forward kernels stay (faster than ATen's cpu_max_pool there: the CNN's forward 2.2 vs
// 4.3 ms with them). TCCD_DISABLE_PASSES=cpu-max-pool-backward-extern rewrites the CPU
// backward too, as before.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

inline constexpr char kMaxPoolValuesTarget[] = "tccd::max_pool2d_values.default";
inline constexpr char kMaxPoolOffsetsTarget[] = "tccd::max_pool2d_offsets.default";
inline constexpr char kMaxPoolGatherBackwardTarget[] = "tccd::max_pool2d_gather_backward.default";

class MaxPoolKernels : public GraphPass {
 public:
  // `backward`: whether the backward is rewritten too. Default: true. The pipeline passes false
  // for CPU graphs (see the CPU note above).
  explicit MaxPoolKernels(bool backward = true) : backward_(backward) {}
  std::string_view name() const override { return "max-pool-kernels"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

 private:
  bool backward_;
};

}  // namespace tccd::codegen

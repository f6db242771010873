// Rewrites a reduction over a set of dims the row and column kernels do not take (middle dims,
// a scattered set: sum over [1] of [N,C,L], amax over [0,2], a var over leading dims) into a
// permute view that moves the reduced dims to the end, the same reduction over those trailing
// dims (a row reduction, reduction_ops.h) and, when keepdim was set, a view that puts the
// size-1 dims back:
//
//   %3 = aten::sum.dim_IntList(%x, [1], true) -> f32[4,1,16]
// becomes
//   %3 = aten::permute.default(%x, [0, 2, 1]) -> f32[4,16,8]{128,1,16}
//   %4 = aten::sum.dim_IntList(%3, [2]) -> f32[4,16]{16,1}
//   %5 = aten::view.default(%4, [4, 1, 16]) -> f32[4,1,16]{16,16,1}
//
// When the input's memory order has the kept dims innermost, in their own order (a sum over
// [0, 2, 3] of a channels-last [N, C, H, W] map, a mean over [2, 3] of one), the permute puts the
// reduced dims first instead, in memory order, and the reduction becomes a column reduction over
// those leading dims (whole rows of C read per step instead of one element every C):
//
//   %3 = aten::sum.dim_IntList(%x, [0, 2, 3]) -> f32[C]     x: [N,C,H,W]{HWC,1,WC,C}
// becomes
//   %3 = aten::permute.default(%x, [0, 2, 3, 1]) -> f32[N,H,W,C]{HWC,WC,C,1}
//   %4 = aten::sum.dim_IntList(%3, [0, 1, 2]) -> f32[C]
//
// The permute and view are metadata only (aliases: no data moves); the row kernel reads the
// permuted input through its strides. A node is rewritten only when the rewritten reduction is
// one ReductionAxesOf accepts (dtypes, sizes, row length), so whatever is not lowered stays the
// original ATen call. Sums and means over leading dims are column reductions already and are
// left alone.
//
// CUDA only: the CPU target runs reductions as ATen calls, where a permute would only cost.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class ReductionDimsToRows : public GraphPass {
 public:
  std::string_view name() const override { return "reduction-dims-to-rows"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

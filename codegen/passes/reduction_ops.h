// The library of ATen reductions and normalisations the CUDA backend fuses as row reductions
// (a reduction over the trailing, "row" dims of one input; see codegen/kernel/pointwise_kernel.h),
// and how each lowers to kernel IR. The counterpart of pointwise_ops.h for the reduction anchors:
//
//   aten::sum.dim_IntList, aten::mean.dim, aten::amax.default, aten::amin.default,
//   aten::var.correction, aten::var_mean.correction     over trailing dims, keepdim or not
//   aten::_softmax.default, aten::_log_softmax.default  over the last dim
//   aten::_softmax_backward_data.default, aten::_log_softmax_backward_data.default
//   aten::native_layer_norm.default -> (out, mean, rstd)
//   aten::_fused_rms_norm.default   -> (out, rstd)
//   aten::native_layer_norm_backward.default with output_mask [true, false, false] (grad_input)
//
// and as *column* reductions (over the leading dims; RowReduction::Axis::kLeading):
//
//   aten::sum.dim_IntList, aten::mean.dim                over leading dims, keepdim or not
//   aten::native_layer_norm_backward.default with output_mask [false, w, b] (grad_weight,
//                                                        grad_bias; w or b)
//
// A layer norm backward that wants grad_input and a parameter gradient is split into one node
// of each kind first (layer_norm_backward_split.h).
//
// Formulas follow ATen's CUDA kernels (two passes over a row held in registers, accumulation in
// f32 for f16/bf16/f32 inputs); f64 and integral inputs stay extern steps.
#pragma once

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/ir/graph.h"
#include "codegen/passes/pointwise_ops.h"

namespace tccd::codegen {

// Row reductions of any length up to kMaxRowReductionLength become kernels; rows longer than
// kMaxFewRowsLength only when there are at least kMinRowsForLongRows rows, because a row is one
// thread block (the CUDA backend streams long rows, see kMaxPersistentRowLength): a handful of
// very long rows (a full reduction) would leave the GPU idle, and ATen splits those over blocks.
inline constexpr int64_t kMaxRowReductionLength = int64_t{1} << 24;
inline constexpr int64_t kMaxFewRowsLength = 32768;
inline constexpr int64_t kMinRowsForLongRows = 128;

// The dims a reduction anchor reduces: the trailing or the leading `num_reduced_dims` (0: not an
// anchor).
struct ReductionAxes {
  int num_reduced_dims = 0;
  bool leading = false;
  bool operator==(const ReductionAxes&) const = default;
};

// The dims `node` reduces if it is a row or column reduction this library lowers, on CUDA, with
// supported dtypes and arguments, and fewer than 2^31 rows and columns (rows: see
// kMaxRowReductionLength); otherwise {0}. Its iteration space is the shape of its
// first tensor argument. With `allow_few_long_rows`, the few-long-rows limit (kMaxFewRowsLength,
// kMinRowsForLongRows) is not applied: what SplitReductions (split_reductions.h) asks of a node
// it may split into two stages that each pass it.
ReductionAxes ReductionAxesOf(const ir::Graph& graph, const ir::Node& node,
                              bool allow_few_long_rows = false);

// ReductionAxesOf's count for row reductions (trailing dims), else 0.
int RowReductionDims(const ir::Graph& graph, const ir::Node& node);

// Every target this library lowers (for the op-properties consistency test).
std::vector<std::string> ReductionOpTargets();

// Lowers a node ReductionAxesOf accepted into `builder`; `value_of` gives the held value of a
// tensor operand (element-level for the reduced input, row- or element-level for the others,
// as their shapes broadcast). Returns the held value of each node output (kernel-IR values; the
// caller stores the ones used), in HeldDType of each output's dtype; -1 for an output the node
// does not produce (a masked-off output of a layer norm backward).
absl::StatusOr<std::vector<int>> LowerRowReductionOp(
    const ir::Graph& graph, const ir::Node& node,
    const std::function<int(const ir::ValueRef&)>& value_of, PwBuilder& builder);

}  // namespace tccd::codegen

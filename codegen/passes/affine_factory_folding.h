// AffineFactoryFolding: integer and bool tensors that the graph computes from factories alone
// (arange, full, new_ones, ...) through shape ops and integer arithmetic are affine functions of
// their coordinates, value = offset + sum_d coeff[d] * c[d]; where that function is a constant
// (every coefficient 0) the value is known at compile time and the node becomes a full of it, and
// `x & true`, `x | false` and `where(true/false, a, b)` of such constants become their operand.
//
// Why: transformers builds its causal mask from the position ids (`arange(n) + past_seen_tokens`)
// even when there is no padding: masking_utils' find_packed_sequence_indices computes
// `(diff(position_ids, prepend=position_ids[:, :1] - 1) != 1).cumsum(-1)` (all zeros for an
// arange: the diff is 1 everywhere) and and-s `packed[b, q] == packed[b, kv]` (all true) into the
// mask, after `new_ones((), bool) & (kv <= q)`. On Llama and GPT-2 inference graphs that was an
// ATen cumsum (no scan lowering) with its i64 copy, the diff's index kernel and the mask's
// second gather-and-compare, per call; Inductor runs the cumsum and its producers as one kernel.
// Folded, the mask is `kv_idx <= q_idx` read through the position ids, and the cumsum, the
// diff and the eq are dead code.
//
// Tracked (output dtype integral or bool, static sizes; anything else is unknown):
//   sources  arange (.default/.start/.start_step), full, zeros, ones, new_zeros/new_ones/new_full,
//            scalar_tensor, zeros_like/ones_like/full_like, with integer or bool numbers
//   shape    unsqueeze, squeeze.dim, expand, slice.Tensor, select.int, permute/transpose/t,
//            view/reshape/_unsafe_view of constants, cat (pieces that line up along the dim),
//            index.Tensor (every dim indexed, indices in range: no negative wrap), clone, alias,
//            detach, lift_fresh_copy, _to_copy to an integral dtype (values in its range)
//   math     add/sub (alpha an int), mul by a constant, neg (integral outputs); comparisons of two
//            values whose difference is constant; and/or/not of bool constants; cumsum of a
//            constant c (c * (i + 1)); where with a constant condition
// Values stay exact: int64 arithmetic on offsets and coefficients bounded by 2^28 (beyond:
// unknown). Graph outputs keep their nodes (the caller gets the strides it traced). Floating values
// are never tracked. Only for fused graphs (the pipeline adds it beside InlineScalarFills, before
// it: a 0-dim constant made here becomes a number of its readers).
// TCCD_DISABLE_PASSES=affine-factory-folding keeps the graph as traced.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class AffineFactoryFolding : public GraphPass {
 public:
  std::string_view name() const override { return "affine-factory-folding"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen

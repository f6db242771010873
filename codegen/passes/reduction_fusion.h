// Row-reduction fusion (CUDA target): regroups a pointwise partition (fusion.h) so that every
// supported reduction or normalisation (reduction_ops.h) becomes one row-reduction group with
// its pointwise prologue and epilogue, i.e. one kernel that holds each row in registers
// (Inductor's "persistent reductions").
//
// Rules, for an anchor (a node RowReductionDims accepts) with iteration space S (its input's
// shape) reducing the trailing k dims; K = S with the reduced dims set to 1 (keepdim row shape),
// D = S without them:
//  * the anchor starts a group, or joins the row group of its input's producer when that group
//    has the same S and k (a decomposed layer norm: mean, sub, pow, mean -> one kernel);
//  * prologue: pointwise groups of shape S producing a tensor argument of the anchor merge in;
//  * epilogue: pointwise groups of shape S, K or D that read a value of the group merge in,
//    repeatedly (softmax -> mul; mean -> add eps -> rsqrt -> mul x -> mul w);
//  * a merge never creates a cycle between units (groups and extern nodes), and keeps the
//    operand limits of FusionOptions;
//  * value levels must be unambiguous: a D-shaped value (one per row, reduced dims dropped) is
//    only read by D-shaped members, and D-shaped members read no outside tensors (a D-shaped
//    tensor would broadcast against S right-aligned, i.e. along the row, not per row).
// Column reductions (an anchor reducing the *leading* k dims; K keeps them as 1s, D drops them)
// follow the same rules, except that an anchor never joins the group of its input's producer but
// joins an earlier, independent column group of the same shape and k (siblings: one pass),
// iteration-shaped members may not depend on a reduction of the group (the kernel streams over
// the rows once and holds nothing), and D-shaped values broadcast like K-shaped ones (the kept
// dims are the trailing ones, so right-aligned broadcasting is per column).
// Row gathers (FusionOptions::row_gathers, TCCD_DISABLE_PASSES=row-gathers): index ops
// (index_ops.h: embedding, index_select, gather, pad, cat, ...) join row groups (never column
// groups) like pointwise members, when their output is S-shaped or D-shaped (their coordinates
// are then the iteration space's: leading dims a row's, trailing ones an element's; a K-shaped
// output would take the element's coordinate for its size-1 dims) and no member produces or
// loads a tensor one of them gathers (a gather operand is a kernel input read only by its
// gathers). In the kernel, the gathers whose coordinates are the row's are read once per row;
// the others per element (cuda_row_emitter.cc). The case it is for: the LMs' token embedding,
// gathered in a kernel of its own and read back by the first norm; Inductor gathers inside the
// norm (session 13/14 kernel tables: Llama's `idx_embedding_pow`, T5's embedding kernels).
// Scatter ops and dropout's random draw stay in pointwise kernels.
// Everything else keeps its pointwise group or extern step. The CPU target does not run this
// pass: its reductions stay extern steps.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "codegen/ir/graph.h"
#include "codegen/passes/fusion.h"

namespace tccd::codegen {

// Regroups `partition` in place as above. Returns whether anything changed.
absl::StatusOr<bool> FuseRowReductions(const ir::Graph& graph, const FusionOptions& options,
                                       Partition& partition);

// Strides of operand `r` of group `group` in the group's iteration space, for the plan: as
// IterationStrides (right-aligned broadcasting), except for an output of a row-reduction group
// whose rank is the iteration rank minus the reduced dims (a reduction without keepdim): its
// dims map to the leading, unreduced dims, with stride 0 along the reduced ones.
std::vector<int64_t> GroupOperandStrides(const ir::Graph& graph, const FusionGroup& group,
                                         const ir::ValueRef& r, bool is_output);

}  // namespace tccd::codegen

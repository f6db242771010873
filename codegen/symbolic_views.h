// View chains of symbolic plans folded into one view step each.
//
// A symbolic plan (symbolic_kernels.h) keeps every ATen view as an extern step, which the native
// runtime makes from the plan's metadata when the base is laid out as declared
// (tccd_plan_bind_view) and the dispatcher runs otherwise. Chains of them (view -> transpose ->
// expand before a batched matmul, a gemm's output viewed back to [b, t, d] and transposed) cost a
// step, a tensor handle and a release each. FoldSymbolicViewChains replaces each chain whose
// intermediate views nothing else reads by one `aten::as_strided` of the chain's root with the last
// view's sizes, strides and storage offset (expressions evaluated per call), and drops the
// intermediate steps.
//
// Only where that is right for every call: the root must be laid out as declared, which the plan
// guarantees for outputs of its own kernels and gemms (allocated from the declared metas) and for
// views of those (their layouts follow the base's); a chain rooted at a graph input (which may
// arrive in any layout, where the dispatcher would compute another view) is left alone.
#pragma once

#include "tccd/v1/tccd.pb.h"

namespace tccd::codegen {

// Folds the chains in place; returns how many view steps it removed. Releases are recomputed
// (each value released after its last reader, graph outputs never).
int FoldSymbolicViewChains(v1::Plan& plan);

}  // namespace tccd::codegen

// Horizontal fusion: independent pointwise groups of one iteration shape and device become one
// kernel (one launch instead of several). Typical wins: the running-stat clones of every batch
// norm of a channel count, autocast's casts of same-shaped weights, per-parameter updates. Two
// groups merge only when neither depends on the other through any path (kernels or ATen steps),
// and within the node and operand budgets of FusionOptions. Row and column reduction groups keep
// their own kernels. Runs after every vertical fusion decision (it never blocks one).
#pragma once

#include "absl/status/statusor.h"
#include "codegen/ir/graph.h"
#include "codegen/passes/fusion.h"

namespace tccd::codegen {

// Merges groups of `partition` in place and recompletes it; returns whether anything merged.
absl::StatusOr<bool> FuseHorizontally(const ir::Graph& graph, const FusionOptions& options,
                                      Partition& partition);

}  // namespace tccd::codegen

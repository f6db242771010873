// Horizontal fusion: independent pointwise groups of one iteration shape and device become one
// kernel (one launch instead of several). Typical wins: the running-stat clones of every batch
// norm of a channel count, autocast's casts of same-shaped weights, per-parameter updates. Two
// groups merge only when neither depends on the other through any path (kernels or ATen steps),
// and within the node and operand budgets of FusionOptions. Row and column reduction groups keep
// their own kernels. Runs after every vertical fusion decision (it never blocks one).
//
// The merged kernel runs where the earlier group ran, so the later group's values are made there
// and held until their readers run. A later group whose values (those the graph does not return:
// returned values are held to the end anyway) exceed kMaxHoistedBytes keeps its own kernel:
// autocast's bf16 casts of a transformer's same-shaped weights, merged, were all live from the
// first layer on in an inference graph, the sum of the model's casts instead of one layer's
// (ViT-B: 162 MiB; BERT with 4 layers: 54 MiB; tests/tools/plan_memory.py shows them). Inductor
// too casts each weight in its own kernel. Small values (biases, norm weights, per-channel
// statistics) still merge: a launch saved for at most 256 KiB held early. So do groups a few
// nodes apart (FusionOptions::near_merge_nodes) when the later one reads nothing made after the
// earlier one's first node: its values are made a few steps early, not a layer early, and
// neither group waits for the other's inputs (holding its own inputs longer).
//
// Groups with index ops (gathers) merge by one rule over what each group gathers and what it
// loads (MayMerge in horizontal_fusion.cc): never when one gathers what the other loads; two
// groups that load nothing when they gather a common tensor (a max pool's values and offsets);
// otherwise only index groups of at most FusionOptions::max_index_merge_numel points.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "codegen/ir/graph.h"
#include "codegen/passes/fusion.h"

namespace tccd::codegen {

inline constexpr int64_t kMaxHoistedBytes = int64_t{256} << 10;

// Merges groups of `partition` in place and recompletes it; returns whether anything merged.
absl::StatusOr<bool> FuseHorizontally(const ir::Graph& graph, const FusionOptions& options,
                                      Partition& partition);

}  // namespace tccd::codegen

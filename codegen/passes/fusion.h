// Pointwise fusion: partitions a graph into fused groups (runs of pointwise ops over one
// iteration space, each becoming one kernel) and extern nodes (run as ATen ops by the client),
// and orders them into a schedule.
//
// Rules:
//  * a group holds pointwise ops (pointwise_ops.h) and index-aware ops (index_ops.h: cat, pad,
//    embedding, ...) of one output shape and device; a tensor an index op gathers is never also
//    produced or loaded by another member of its group (gather operands are kernel inputs read
//    only by gathers);
//  * a node joins the group of one of its pointwise producers when that creates no cycle between
//    groups and externs (tracked as "which groups does this value depend on through outside
//    nodes"); otherwise it starts a group;
//  * the schedule is a topological order of the condensed graph that keeps the original order
//    wherever it can.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/ir/graph.h"

namespace tccd::codegen {

struct FusionOptions {
  // Fuse at all; off turns every op into an extern step (for bisecting). Default: true.
  bool enable = true;
  // Largest number of ATen nodes in one kernel. Default: 64.
  int max_nodes_per_group = 64;
  // Largest number of tensor operands (inputs + outputs) of one kernel. Default: 32.
  int max_operands = 32;
  // Static shared memory a column-reduction kernel may spend on its per-reduction tiles (CUDA's
  // static limit on every target, 48 KiB): independent column sums merge into one pass only
  // while their tiles fit (reduction_fusion.h). Default: 48 KiB.
  int column_shared_memory_bytes = 48 * 1024;
  // Row fusion takes a row kernel's pointwise siblings (groups that read only what it reads,
  // reduction_fusion.cc) as extra outputs; off with TCCD_DISABLE_PASSES=row-siblings (to bisect
  // or measure). Default: true.
  bool merge_row_siblings = true;
  // Independent full reductions of one vector shape (every dim reduced: one row) share one row
  // kernel, with their common epilogue: a mean loss's sum of losses, count of targets and their
  // quotient (3 launches per step on the LMs, Inductor's one). Off with
  // TCCD_DISABLE_PASSES=full-reduction-siblings. Default: true.
  bool merge_full_reduction_siblings = true;
  // Horizontal fusion merges a group with index ops (gathers: one point per thread) only up to
  // this many points (the LMs' [B, S] mask and position kernels); 0 keeps every index group
  // apart, as before (TCCD_DISABLE_PASSES=horizontal-index-groups). Default: 65536.
  int64_t max_index_merge_numel = 65536;
  // Horizontal fusion merges two index groups of one shape above that size when one node reads
  // both (attention reads the rotary embeddings of q and k, each an index kernel over
  // [B, H, S, D]: one launch per layer instead of two, as Inductor's small-batch Llama). Their
  // values are live together at that reader anyway. Off with
  // TCCD_DISABLE_PASSES=index-reader-siblings. Default: true.
  bool merge_index_reader_siblings = true;
  // Horizontal fusion's hoisting limit (kMaxHoistedBytes, horizontal_fusion.h) counts a value
  // the graph returns through views (a training forward's autocast weight cast, saved for the
  // backward as its `t`) as returned: its storage is held to the end either way, so making it
  // early costs nothing (T5's forward: 64 weight-cast kernels -> 5). Off with
  // TCCD_DISABLE_PASSES=horizontal-returned-views (only directly returned values count, as
  // before). Default: true.
  bool returned_views_held = true;
  // Horizontal fusion's hoisting limit does not apply to a later group whose first node is at
  // most this many nodes (ids, views included) after the earlier group's first node and that
  // reads nothing made after that node: its values are made a few steps early, not a layer
  // early, and neither group waits for the other's inputs (T5's attention backward: the casts of
  // dq, dk and dv, adjacent nodes, 512 KiB each, were three kernels per layer). Measured from the
  // earlier group's first node, so a chain of merges spans at most this window. 0 keeps the limit
  // for every pair (TCCD_DISABLE_PASSES=horizontal-near-groups). Default: 16.
  int near_merge_nodes = 16;
  // Whether a column reduction takes a pointwise prologue whose values are also stored (read by
  // other ops or returned): one kernel then reads the prologue's operands once, stores its values
  // and sums them. kTranscendental (the default) keeps such a prologue out of the column kernel
  // when it computes erf/exp/tanh/log/sigmoid (a GELU backward that the matmuls read): that
  // column kernel is ALU-bound, and a pointwise kernel plus a column sum of what it wrote was
  // faster (H200, deploy/column_bench.py, fwd+bwd us per step, fused -> split: ConvNeXt stage 1
  // 927 -> 884, ViT 695 -> 672, GPT-2's tanh GELU 463 -> 457; Inductor 738, 755, 471).
  // TCCD_COLUMN_STORED_PROLOGUE=1 takes every one (kAlways), =0 none (kNever) (pipeline.cc).
  enum class StoredPrologues { kAlways, kTranscendental, kNever };
  StoredPrologues column_stored_prologues = StoredPrologues::kTranscendental;
  // A max-pool gather backward (max_pool_kernels.h) whose gradient has more than one reader
  // takes no pointwise consumers: in a ResNet stem the batch norm's backward sums read the
  // gradient anyway, so a fused ReLU backward (and its f32 cast) would be written beside it, 6
  // bytes per element, where the consumers' own kernel recomputes it from the 2-byte gradient.
  // Off with TCCD_DISABLE_PASSES=max-pool-backward-alone. Default: true.
  bool max_pool_backward_alone = true;
  // Row fusion takes index ops (gathers: embedding, index_select, pads, cats) into row kernels
  // as prologue or epilogue members, their gathers recomputed per row (reduction_fusion.h, "Row
  // gathers"): the token embedding feeding the first norm of T5/Llama/GPT-2/BERT becomes part
  // of the norm's kernel, as in Inductor. CUDA: pipeline.cc sets it unless
  // TCCD_DISABLE_PASSES=row-gathers; symbolic graphs' row regrouping sets it for their lone
  // embeddings (symbolic_kernels.h, SymbolicKernelOptions::row_gathers). Default: false.
  bool row_gathers = false;
};

struct FusionGroup {
  std::vector<int> nodes;  // member node ids, ascending
  std::vector<int64_t> shape;
  // > 0: a row-reduction group (reduction_fusion.h) reducing the trailing dims of `shape`, or
  // with reduce_leading its leading dims (a column reduction).
  int num_reduced_dims = 0;
  bool reduce_leading = false;
  ir::DeviceType device = ir::DeviceType::kCpu;
  std::vector<ir::ValueRef> inputs;   // tensors read from outside, in first-use order
  std::vector<ir::ValueRef> outputs;  // member values used outside the group or returned
  // Set with the kernel (loop_order.h): kernel dim i is dim loop_order[i] of `shape`; empty when
  // the kernel walks `shape` as it is.
  std::vector<int> loop_order;
};

struct ScheduleEntry {
  bool fused = false;
  int index = 0;  // group index if fused, else node id
};

struct Partition {
  std::vector<FusionGroup> groups;
  std::vector<int> group_of;  // per node: group index or -1
  std::vector<ScheduleEntry> schedule;
};

absl::StatusOr<Partition> PartitionForFusion(const ir::Graph& graph, const FusionOptions& options);

// Recomputes every group's inputs and outputs (every output of a member node that is used
// outside the group or returned) and the schedule from `groups[*].nodes` and `group_of`; drops
// empty groups. For passes that regroup a partition (reduction_fusion.h). INTERNAL on a cycle
// between units.
absl::Status CompletePartition(const ir::Graph& graph, Partition& partition);

// Every group holding one of `nodes` is dissolved: all its members become extern nodes (a
// kernel that failed to compile for the target runs as ATen ops; pipeline.cc). The partition
// is completed again. Returns whether any group was dissolved.
absl::StatusOr<bool> DissolveGroups(const ir::Graph& graph, const std::vector<int>& nodes,
                                    Partition& partition);

// One line per schedule entry, e.g. "fused %0 %1 %3 -> %3" / "extern %2 aten::mm.default".
std::string PrintPartition(const ir::Graph& graph, const Partition& partition);

}  // namespace tccd::codegen

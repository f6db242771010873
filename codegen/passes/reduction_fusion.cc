// Row-reduction fusion (see reduction_fusion.h).
#include "codegen/passes/reduction_fusion.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "codegen/passes/index_ops.h"
#include "codegen/passes/plan_builder.h"
#include "codegen/passes/pointwise_ops.h"
#include "codegen/passes/reduction_ops.h"
#include "base/status_macros.h"

namespace tccd::codegen {
namespace {

using ir::ForEachInput;

class RowFusion {
 public:
  RowFusion(const ir::Graph& graph, const FusionOptions& options, Partition& p)
      : graph_(graph), options_(options), p_(p), consumers_(graph.nodes.size()) {
    for (size_t id = 0; id < graph.nodes.size(); ++id) {
      ForEachInput(graph.nodes[id], [&](const ir::ValueRef& r) {
        if (!r.is_input()) consumers_[r.node].push_back(static_cast<int>(id));
      });
    }
  }

  bool Run();

 private:
  // Units (groups and extern nodes) by code: a group index (>= 0), or ~node (< 0) for an extern
  // node, so that a code stays valid when groups are added.
  int CodeOf(int node) const { return p_.group_of[node] >= 0 ? p_.group_of[node] : ~node; }
  // The codes of the units that read unit `code`'s values, sorted. Cached: IndirectPath walks
  // them for every merge tried, and rebuilding them from the members' consumers at every visit
  // was most of row fusion's time on large graphs (ResNet-50's training forward).
  const std::vector<int>& Successors(int code) const;
  // `nodes` changed units (a new group, a merge): drops the cached successors of their old and
  // new units and of every unit feeding them (whose lists name the old units).
  void Invalidate(const std::vector<int>& nodes, std::initializer_list<int> codes);
  // A path from group a to group b through at least one other unit.
  bool IndirectPath(int a, int b) const;
  // Every reduction among `nodes` (one would-be kernel) reduces a value that varies along its
  // row; see the definition.
  bool ReducesVaryingValues(const std::vector<int>& nodes, const FusionGroup& group) const;
  // Whether index op `m` gathers a tensor that a member of `nodes` produces or loads, or a
  // member gathers what m produces or loads: gather operands are kernel inputs read by gathers
  // only (fusion.cc's GatherConflict, for row groups).
  bool GathersFromMembers(const std::vector<int>& nodes, int m) const;
  // Whether the union of groups a and b is a valid row group of iteration space shape/k.
  bool ValidRowGroup(const std::vector<int>& nodes, const std::vector<int64_t>& shape, int k) const;
  bool ValidColumnGroup(const std::vector<int>& nodes, const std::vector<int64_t>& shape,
                        int k) const;
  // Merges group `from` into row group `into` when the rules allow; returns whether it did.
  bool TryMerge(int into, int from);
  // Takes in the pointwise siblings of row group `g` (see the definition).
  void MergeSiblings(int g);
  // Whether group h's values are read by anything but node `anchor` outside h, or returned: a
  // kernel that takes h in still stores them.
  bool StoredBeyond(int h, int anchor) const;
  // Whether FusionOptions::column_stored_prologues keeps pointwise group h out of a column
  // kernel that would also store its values.
  bool KeepsStoredPrologueOut(int h) const;
  // Moves the members of pointwise group h that only node `anchor` (of column group g) reads
  // into g: the f32 cast of a bf16 GELU backward that column-sum-split's stage one sums then
  // reads the stored bf16 instead of making h write an f32 copy too.
  void TakeAnchorOnlyMembers(int g, int h, int anchor);

  const ir::Graph& graph_;
  const FusionOptions& options_;
  Partition& p_;
  std::vector<std::vector<int>> consumers_;
  mutable absl::flat_hash_map<int, std::vector<int>> successors_;  // by unit code
};

const std::vector<int>& RowFusion::Successors(int code) const {
  auto [it, inserted] = successors_.try_emplace(code);
  if (!inserted) return it->second;
  std::vector<int>& out = it->second;
  auto add = [&](int m) {
    for (int c : consumers_[m])
      if (CodeOf(c) != code) out.push_back(CodeOf(c));
  };
  if (code >= 0) {
    for (int m : p_.groups[code].nodes) add(m);
  } else {
    add(~code);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void RowFusion::Invalidate(const std::vector<int>& nodes, std::initializer_list<int> codes) {
  for (int code : codes) successors_.erase(code);
  for (int m : nodes)
    ForEachInput(graph_.nodes[m], [&](const ir::ValueRef& r) {
      if (!r.is_input()) successors_.erase(CodeOf(r.node));
    });
}

bool RowFusion::IndirectPath(int a, int b) const {
  std::vector<int> stack;
  absl::flat_hash_set<int> seen;
  for (int s : Successors(a))
    if (s != b && seen.insert(s).second) stack.push_back(s);
  while (!stack.empty()) {
    const int u = stack.back();
    stack.pop_back();
    for (int s : Successors(u)) {
      if (s == b) return true;
      if (s != a && seen.insert(s).second) stack.push_back(s);
    }
  }
  return false;
}

bool RowFusion::GathersFromMembers(const std::vector<int>& nodes, int m) const {
  auto conflict = [&](int a, int b) {  // does a gather what b produces or reads?
    for (const ir::ValueRef& r : GatheredRefs(graph_.nodes[a])) {
      if (!r.is_input() && r.node == b) return true;
      bool read = false;
      if (a != b && GatheredRefs(graph_.nodes[b]).empty())
        ForEachInput(graph_.nodes[b], [&](const ir::ValueRef& x) { read |= x == r; });
      if (read) return true;
    }
    return false;
  };
  for (int n : nodes)
    if (n != m && (conflict(m, n) || conflict(n, m))) return true;
  return false;
}

bool RowFusion::ValidRowGroup(const std::vector<int>& nodes, const std::vector<int64_t>& shape,
                              int k) const {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> keep(shape), drop(shape.begin(), shape.end() - k);
  for (int64_t d = rank - k; d < rank; ++d) keep[d] = 1;
  const std::set<int> members(nodes.begin(), nodes.end());
  auto is_member = [&](const ir::ValueRef& r) { return !r.is_input() && members.count(r.node); };
  for (int m : nodes) {
    const ir::Node& node = graph_.nodes[m];
    const bool anchor = ReductionAxesOf(graph_, node).num_reduced_dims > 0;
    const std::vector<int64_t>& out = node.outputs[0].sizes;
    if (node.outputs[0].device != ir::DeviceType::kCuda) return false;
    if (NeedsCoordinates(graph_, node)) {
      // Row gathers (see the header): index ops whose output dims are the iteration space's.
      if (!options_.row_gathers || !IsIndexOp(graph_, node) || (out != shape && out != drop))
        return false;
      if (GathersFromMembers(nodes, m)) return false;
    }
    if (anchor) {
      const ir::TensorType& x = graph_.type_of(node.args[0].ref());
      if (x.sizes != shape || !(ReductionAxesOf(graph_, node) == ReductionAxes{k, false}))
        return false;
    } else if (out != shape && out != keep && out != drop) {
      return false;
    }
    const bool row_dropped = !anchor && out == drop && drop != shape;
    // A row gather's gathered tensors are read at computed coordinates, not broadcast.
    const std::vector<ir::ValueRef> gathered =
        NeedsCoordinates(graph_, node) ? GatheredRefs(node) : std::vector<ir::ValueRef>{};
    bool ok = true;
    ForEachInput(node, [&](const ir::ValueRef& r) {
      if (std::find(gathered.begin(), gathered.end(), r) != gathered.end()) return;
      const std::vector<int64_t>& in = graph_.type_of(r).sizes;
      const bool in_dropped = is_member(r) && in == drop && drop != shape && in != keep;
      if (row_dropped) {
        // One value per row, dims dropped: reads only its own kind (outside tensors would be
        // indexed per row, not broadcast the way torch broadcasts them).
        if (!is_member(r) || in != drop) ok = false;
      } else if (in_dropped) {
        ok = false;
      }
    });
    if (!ok) return false;
  }
  return true;
}

bool RowFusion::ValidColumnGroup(const std::vector<int>& nodes, const std::vector<int64_t>& shape,
                                 int k) const {
  std::vector<int64_t> keep(shape), drop(shape.begin() + k, shape.end());
  for (int d = 0; d < k; ++d) keep[d] = 1;
  const std::set<int> members(nodes.begin(), nodes.end());
  std::set<int> after_reduction;  // members computed from a reduction of the group
  for (int m : nodes) {           // ascending ids: a topological order
    const ir::Node& node = graph_.nodes[m];
    const ReductionAxes axes = ReductionAxesOf(graph_, node);
    const std::vector<int64_t>& out = node.outputs[0].sizes;
    if (node.outputs[0].device != ir::DeviceType::kCuda) return false;
    if (NeedsCoordinates(graph_, node)) return false;  // index-aware ops: pointwise kernels only
    bool after = axes.num_reduced_dims > 0;
    if (after) {
      if (graph_.type_of(node.args[0].ref()).sizes != shape || !(axes == ReductionAxes{k, true}))
        return false;
    } else if (out != shape && out != keep && out != drop) {
      return false;
    }
    ForEachInput(node, [&](const ir::ValueRef& r) {
      if (!r.is_input() && members.count(r.node) && after_reduction.count(r.node)) after = true;
    });
    if (after && axes.num_reduced_dims == 0 && out == shape && keep != shape) return false;
    if (after) after_reduction.insert(m);
  }
  return true;
}

// The kernel IR cannot reduce a value that is the same for a whole row (the verifier rejects
// it): fill.Scalar / *_like / full members take their input for its shape only, so their value
// is a constant, and a sum over one in the same kernel (found by the request fuzzer, and
// reachable from `x.fill_(1).sum(0)`) made an invalid kernel. Such a reduction keeps its
// prologue in another kernel, which stores the constant as a tensor. A value varies along the
// reduced dims when it reads an outside tensor that has an extent above 1 in one of them
// (aligned from the right, as torch broadcasts: a [C] vector varies along rows of [N, C]) or a
// member that varies.
bool RowFusion::ReducesVaryingValues(const std::vector<int>& nodes,
                                     const FusionGroup& group) const {
  const std::vector<int64_t>& shape = group.shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t full = 1;
  for (int64_t d : shape) full *= d;
  const int64_t first = group.reduce_leading ? 0 : rank - group.num_reduced_dims;
  const int64_t last =
      group.reduce_leading ? group.num_reduced_dims : rank;  // reduced dims [first, last)
  auto varies_along_rows = [&](const ir::TensorType& t) {
    for (int64_t d = first; d < last; ++d) {
      const int64_t td = d - (rank - t.rank());
      if (td >= 0 && td < t.rank() && t.sizes[td] > 1) return true;
    }
    return false;
  };
  std::map<int, bool> varies;  // member -> its output varies along rows
  for (int m : nodes) {        // ascending ids: a topological order
    const ir::Node& node = graph_.nodes[m];
    const ReductionAxes axes = ReductionAxesOf(graph_, node);
    bool v = false;
    if (!PointwiseValueIgnoresOperands(node)) {
      ForEachInput(node, [&](const ir::ValueRef& r) {
        auto it = r.is_input() ? varies.end() : varies.find(r.node);
        if (it != varies.end())
          v = v || it->second;
        else
          v = v || varies_along_rows(graph_.type_of(r));
      });
    }
    if (axes.num_reduced_dims > 0) {
      if (node.args.empty() || !node.args[0].is_ref()) return false;
      const ir::ValueRef& x = node.args[0].ref();
      auto it = x.is_input() ? varies.end() : varies.find(x.node);
      if (it != varies.end() && !it->second) return false;
      v = node.outputs[0].numel() == full;  // softmax-like outputs vary, sums do not
    }
    varies[m] = v;
  }
  return true;
}

// The column emitter's tile per reduction (cuda_column_emitter.cc: `__shared__ float
// part[nred][kTY][kTX * kVec]` with kTY * kTX = the 256 threads of a block, ColumnGeometryOf):
// 256 * vec floats, vec = 16 bytes / the widest dtype among the kernel's operands streamed over
// the rows (not kept-broadcast, not per-column), halved until it divides the columns.
constexpr int64_t kColumnBlockThreads = 256;

// An upper bound of the shared memory the column kernel of `nodes` (iteration space `shape`,
// leading k dims reduced) declares for its tiles. Both factors are bounds that later merges
// cannot break: every output of a reduction node counts as one tile (a masked-off layer norm
// output has 0 elements and none), and vec is taken from the *narrowest* dtype the members touch
// outside per-row values. Which tensors end up as operands (hence the widest) changes as
// epilogues merge in after this check (a bf16 sum whose f32 cast joins: the bf16 output goes),
// but the inputs read from outside now stay operands (an epilogue never produces them), and the
// narrowest dtype is no wider than any of them.
int64_t ColumnTileBytes(const ir::Graph& graph, const std::vector<int>& nodes,
                        const std::vector<int64_t>& shape, int k) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t cols = 1;
  for (int64_t d = k; d < rank; ++d) cols *= shape[d];
  int narrowest = 16;
  int tiles = 0;
  // Per-row values (constant along the kept, trailing dims) are kept-broadcast operands, which
  // the emitter leaves out of vec.
  auto consider = [&](const ir::TensorType& t) {
    for (int64_t d = k; d < rank; ++d) {
      const int64_t td = d - (rank - t.rank());
      if (td >= 0 && t.sizes[td] != 1) {
        narrowest = std::min(narrowest, ir::DTypeBytes(t.dtype));
        return;
      }
    }
  };
  for (int m : nodes) {
    const ir::Node& node = graph.nodes[m];
    ForEachInput(node, [&](const ir::ValueRef& r) { consider(graph.type_of(r)); });
    for (const ir::TensorType& t : node.outputs) consider(t);
    if (ReductionAxesOf(graph, node).num_reduced_dims > 0)
      for (const ir::TensorType& t : node.outputs) tiles += t.numel() > 0 ? 1 : 0;
  }
  int64_t vec = 16 / std::max(narrowest, 1);
  while (vec > 1 && cols % vec != 0) vec /= 2;
  return tiles * kColumnBlockThreads * vec * static_cast<int64_t>(sizeof(float));
}

bool RowFusion::TryMerge(int into, int from) {
  FusionGroup& a = p_.groups[into];
  FusionGroup& b = p_.groups[from];
  if (b.nodes.empty() || a.device != b.device) return false;
  if (static_cast<int>(a.nodes.size() + b.nodes.size()) > options_.max_nodes_per_group)
    return false;
  std::vector<int> nodes = a.nodes;
  nodes.insert(nodes.end(), b.nodes.begin(), b.nodes.end());
  std::sort(nodes.begin(), nodes.end());
  if (a.reduce_leading ? !ValidColumnGroup(nodes, a.shape, a.num_reduced_dims)
                       : !ValidRowGroup(nodes, a.shape, a.num_reduced_dims)) {
    return false;
  }
  if (!ReducesVaryingValues(nodes, a)) return false;
  // Operand budget: distinct outside tensors the merged kernel reads.
  const std::set<int> members(nodes.begin(), nodes.end());
  std::set<ir::ValueRef> outside;
  for (int m : nodes)
    ForEachInput(graph_.nodes[m], [&](const ir::ValueRef& r) {
      if (r.is_input() || !members.count(r.node)) outside.insert(r);
    });
  if (static_cast<int>(outside.size()) > options_.max_operands) return false;
  if (IndirectPath(into, from) || IndirectPath(from, into)) return false;
  for (int m : b.nodes) p_.group_of[m] = into;
  Invalidate(b.nodes, {into, from});
  a.nodes = std::move(nodes);
  b.nodes.clear();
  return true;
}

// Siblings: a pointwise group of the row group's iteration shape that reads only tensors the row
// kernel reads already, and whose values go only to extern steps (matmuls, views) or leave the
// graph, is one more output of the row kernel: its loads are free there, and a launch and a full
// read of its operands go. The case it is for: attention's backward under bf16 autocast, where
// the saved f32 probabilities are cast to bf16 for the dV matmul beside the softmax backward
// that reads them (casts_before_views.h puts the cast on the probabilities' shape). A sibling
// whose values feed other kernels is left where it is: it may be the prologue of one of them.
void RowFusion::MergeSiblings(int g) {
  std::set<ir::ValueRef> reads;  // tensors the row kernel reads from outside
  {
    const std::set<int> members(p_.groups[g].nodes.begin(), p_.groups[g].nodes.end());
    for (int m : p_.groups[g].nodes)
      ForEachInput(graph_.nodes[m], [&](const ir::ValueRef& r) {
        if (r.is_input() || !members.count(r.node)) reads.insert(r);
      });
  }
  for (int h = 0; h < static_cast<int>(p_.groups.size()); ++h) {
    const FusionGroup& sibling = p_.groups[h];
    if (h == g || sibling.nodes.empty() || sibling.num_reduced_dims > 0 ||
        sibling.shape != p_.groups[g].shape)
      continue;
    const std::set<int> members(sibling.nodes.begin(), sibling.nodes.end());
    bool ok = true;
    for (int m : sibling.nodes) {
      ForEachInput(graph_.nodes[m], [&](const ir::ValueRef& r) {
        if ((r.is_input() || !members.count(r.node)) && !reads.count(r)) ok = false;
      });
      // A reduction not grouped yet (a later anchor: row fusion walks the nodes in order) is
      // a kernel to be, not an extern step: the sibling may be its prologue. ViT's layer-norm
      // backward: the column half's own cast of the gradient (column-prologue-recompute) was
      // taken in here by the row half, which then wrote it for the column half to read.
      for (int c : consumers_[m])
        if (!members.count(c) &&
            (p_.group_of[c] >= 0 || ReductionAxesOf(graph_, graph_.nodes[c]).num_reduced_dims > 0))
          ok = false;
    }
    if (ok) TryMerge(g, h);
  }
}

bool RowFusion::StoredBeyond(int h, int anchor) const {
  const FusionGroup& group = p_.groups[h];
  const std::set<int> members(group.nodes.begin(), group.nodes.end());
  for (int m : group.nodes)
    for (int c : consumers_[m])
      if (c != anchor && !members.count(c)) return true;
  bool returned = false;
  for (const ir::Arg& a : graph_.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) {
      returned = returned || (!r.is_input() && members.count(r.node));
    });
  return returned;
}

bool RowFusion::KeepsStoredPrologueOut(int h) const {
  using Policy = FusionOptions::StoredPrologues;
  if (options_.column_stored_prologues != Policy::kTranscendental)
    return options_.column_stored_prologues == Policy::kNever;
  static const absl::flat_hash_set<std::string> kTranscendental = {
      "aten::gelu.default",    "aten::gelu_backward.default", "aten::erf.default",
      "aten::exp.default",     "aten::tanh.default",          "aten::log.default",
      "aten::sigmoid.default", "aten::silu.default",          "aten::silu_backward.default"};
  for (int m : p_.groups[h].nodes)
    if (kTranscendental.count(graph_.nodes[m].target)) return true;
  return false;
}

void RowFusion::TakeAnchorOnlyMembers(int g, int h, int anchor) {
  std::set<int> returned;
  for (const ir::Arg& a : graph_.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) {
      if (!r.is_input()) returned.insert(r.node);
    });
  std::vector<int> take;
  for (int m : p_.groups[h].nodes) {
    bool only = !consumers_[m].empty() && !returned.count(m);
    for (int c : consumers_[m]) only = only && c == anchor;
    if (only) take.push_back(m);
  }
  if (take.empty() || take.size() == p_.groups[h].nodes.size()) return;
  std::vector<int> merged = p_.groups[g].nodes;
  merged.insert(merged.end(), take.begin(), take.end());
  std::sort(merged.begin(), merged.end());
  if (!ValidColumnGroup(merged, p_.groups[g].shape, p_.groups[g].num_reduced_dims)) return;
  std::vector<int>& rest = p_.groups[h].nodes;
  for (int m : take) {
    rest.erase(std::find(rest.begin(), rest.end(), m));
    p_.group_of[m] = g;
  }
  Invalidate(take, {g, h});
  p_.groups[g].nodes = std::move(merged);
}

bool RowFusion::Run() {
  bool changed = false;
  const int n = static_cast<int>(graph_.nodes.size());
  for (int id = 0; id < n; ++id) {
    if (p_.group_of[id] >= 0) continue;
    const ir::Node& node = graph_.nodes[id];
    const ReductionAxes axes = ReductionAxesOf(graph_, node);
    const int k = axes.num_reduced_dims;
    if (k == 0) continue;
    changed = true;
    FusionGroup group;
    group.nodes = {id};
    group.shape = graph_.type_of(node.args[0].ref()).sizes;
    group.num_reduced_dims = k;
    group.reduce_leading = axes.leading;
    group.device = ir::DeviceType::kCuda;
    int g = static_cast<int>(p_.groups.size());
    p_.groups.push_back(std::move(group));
    p_.group_of[id] = g;
    Invalidate({id}, {~id, g});

    // Join the row group that produces an argument, when it has the same rows (never for
    // columns: a reduced value cannot feed a reduction in the same pass); then absorb the
    // pointwise groups of the iteration shape that produce arguments (the prologue).
    ForEachInput(node, [&](const ir::ValueRef& r) {
      if (axes.leading || r.is_input() || p_.group_of[r.node] < 0 || p_.group_of[r.node] == g)
        return;
      const int h = p_.group_of[r.node];
      const FusionGroup& producer = p_.groups[h];
      if (producer.num_reduced_dims > 0 && !producer.reduce_leading) {
        if (producer.shape == p_.groups[g].shape && producer.num_reduced_dims == k &&
            TryMerge(h, g)) {
          g = h;
        }
      }
    });
    ForEachInput(node, [&](const ir::ValueRef& r) {
      if (r.is_input() || p_.group_of[r.node] < 0 || p_.group_of[r.node] == g) return;
      const int h = p_.group_of[r.node];
      if (p_.groups[h].num_reduced_dims == 0 && p_.groups[h].shape == p_.groups[g].shape) {
        if (axes.leading && KeepsStoredPrologueOut(h) && StoredBeyond(h, id)) {
          TakeAnchorOnlyMembers(g, h, id);
          return;
        }
        TryMerge(g, h);
      }
    });
    // Columns: an earlier column group over the same rows that this one does not depend on (nor
    // it on this one) takes it, so one streaming pass computes both (a channels-last batch norm
    // backward's sum(g) and sum(g * xhat); bias gradients of equal shapes).
    // The merged kernel's reduction tiles must fit the target's static shared memory
    // (FusionOptions::column_shared_memory_bytes): ViT's twelve layers of equal-shaped bias
    // gradients merged into one kernel needed 88 KiB and failed to link on the H200.
    if (axes.leading) {
      for (int h = 0; h < g; ++h) {
        const FusionGroup& sibling = p_.groups[h];
        if (sibling.nodes.empty() || !sibling.reduce_leading ||
            sibling.shape != p_.groups[g].shape || sibling.num_reduced_dims != k)
          continue;
        std::vector<int> merged = sibling.nodes;
        merged.insert(merged.end(), p_.groups[g].nodes.begin(), p_.groups[g].nodes.end());
        if (ColumnTileBytes(graph_, merged, sibling.shape, k) > options_.column_shared_memory_bytes)
          continue;
        if (TryMerge(h, g)) {
          g = h;
          break;
        }
      }
    }
    // Full reductions (one row: all dims reduced) over the same shape that do not depend on each
    // other: one kernel computes both (the loss's sum of losses and count of targets, whose
    // quotient then joins as the epilogue below). Only full reductions: for a batch of rows the
    // merged kernel would hold every reduction's loads per row.
    if (!axes.leading && options_.merge_full_reduction_siblings &&
        k == static_cast<int>(p_.groups[g].shape.size())) {
      for (int h = 0; h < g; ++h) {
        const FusionGroup& sibling = p_.groups[h];
        if (sibling.nodes.empty() || sibling.reduce_leading || sibling.num_reduced_dims != k ||
            sibling.shape != p_.groups[g].shape)
          continue;
        if (TryMerge(h, g)) {
          g = h;
          break;
        }
      }
    }
    // The epilogue: pointwise consumers, until none merges.
    for (bool grew = true; grew;) {
      grew = false;
      std::set<int> candidates;
      for (int m : p_.groups[g].nodes)
        for (int c : consumers_[m])
          if (p_.group_of[c] >= 0 && p_.group_of[c] != g &&
              p_.groups[p_.group_of[c]].num_reduced_dims == 0)
            candidates.insert(p_.group_of[c]);
      for (int h : candidates) grew |= TryMerge(g, h);
    }
    if (!axes.leading && options_.merge_row_siblings) MergeSiblings(g);
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> FuseRowReductions(const ir::Graph& graph, const FusionOptions& options,
                                       Partition& partition) {
  if (!options.enable) return false;
  RET_CHECK(partition.group_of.size() == graph.nodes.size());
  const bool changed = RowFusion(graph, options, partition).Run();
  if (changed) RETURN_IF_ERROR(CompletePartition(graph, partition));
  return changed;
}

std::vector<int64_t> GroupOperandStrides(const ir::Graph& graph, const FusionGroup& group,
                                         const ir::ValueRef& r, bool is_output) {
  const ir::TensorType& type = graph.type_of(r);
  const int64_t rank = static_cast<int64_t>(group.shape.size());
  const int k = group.num_reduced_dims;
  // Column groups: a dropped output keeps the trailing dims, which right-aligned broadcasting
  // maps correctly.
  if (k == 0 || group.reduce_leading || !is_output || type.rank() != rank - k) {
    return IterationStrides(type, group.shape);
  }
  std::vector<int64_t> strides(rank, 0);
  for (int64_t d = 0; d < type.rank(); ++d) strides[d] = type.sizes[d] == 1 ? 0 : type.strides[d];
  return strides;
}

}  // namespace tccd::codegen

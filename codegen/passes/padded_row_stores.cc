// ReadThroughZeroPads and AbsorbZeroTailPads (see padded_row_stores.h).
#include "codegen/passes/padded_row_stores.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "codegen/ops/op_properties.h"
#include "codegen/passes/graph_rebuild.h"
#include "base/status_macros.h"

namespace tccd::codegen {
namespace {

bool IsZero(const ir::Arg& a) {
  if (a.is_none()) return true;
  if (auto* i = std::get_if<int64_t>(&a.v)) return *i == 0;
  // -0.0 would pad with the sign bit set: not the zero bits the kernel writes.
  if (auto* f = std::get_if<double>(&a.v)) return *f == 0 && !std::signbit(*f);
  return false;
}

}  // namespace

int64_t ZeroTailPadWidth(const ir::Graph& graph, const ir::Node& node) {
  if (node.target != "aten::constant_pad_nd.default" || node.outputs.size() != 1 ||
      node.args.size() < 2 || node.args.size() > 3 || !node.kwargs.empty() ||
      !node.args[0].is_ref())
    return 0;
  const auto* pad = std::get_if<ir::ArgList>(&node.args[1].v);
  // [0, d] or [0, d, 0, 0, ...]: pairs (low, high) from the innermost dim outwards.
  if (pad == nullptr || pad->size() < 2 || pad->size() % 2 != 0) return 0;
  for (size_t i = 0; i < pad->size(); ++i) {
    const auto* v = std::get_if<int64_t>(&(*pad)[i].v);
    if (v == nullptr || (i == 1 ? *v <= 0 : *v != 0)) return 0;
  }
  const auto* high = std::get_if<int64_t>(&(*pad)[1].v);
  if (node.args.size() == 3 && !IsZero(node.args[2])) return 0;
  const ir::TensorType& x = graph.type_of(node.args[0].ref());
  const ir::TensorType& p = node.outputs[0];
  if (x.rank() < 1 || p.rank() != x.rank() || p.dtype != x.dtype || p.device != x.device ||
      p.storage_offset != 0 || p.strides != ir::ContiguousStrides(p.sizes))
    return 0;
  for (int64_t d = 0; d + 1 < x.rank(); ++d)
    if (p.sizes[d] != x.sizes[d]) return 0;
  if (p.sizes.back() != x.sizes.back() + *high) return 0;
  return *high;
}

namespace {

bool SameLayout(const ir::TensorType& a, const ir::TensorType& b) {
  return a.dtype == b.dtype && a.device == b.device && a.sizes == b.sizes &&
         a.strides == b.strides && a.storage_offset == b.storage_offset;
}

// A reshape or an identity view (alias, detach).
bool IsReshape(const ir::Node& n) {
  const ViewKind kind = ViewKindOf(n.target);
  return (kind == ViewKind::kReshape || kind == ViewKind::kIdentity) && !n.args.empty() &&
         n.args[0].is_ref();
}

// The contiguous copy PadMatmulOperands makes of a padded product's first N columns:
// clone(slice(...)).
bool IsColumnsCopy(const ir::Graph& graph, const ir::ValueRef& r) {
  if (r.is_input()) return false;
  const ir::Node& n = graph.nodes[r.node];
  if (n.target != "aten::clone.default" || n.args.empty() || !n.args[0].is_ref() ||
      n.args[0].ref().is_input())
    return false;
  return graph.nodes[n.args[0].ref().node].target == "aten::slice.Tensor";
}

// A chain of reshapes/aliases that ends in the very layout it started from is its base under
// another name. Two such names are read at their base instead (same values, same layout):
//  * a pad's operand (BERT's logits gradient: view [16, 512, V] then view [8192, V] of a
//    [8192, V] kernel output), so that the pad reads the kernel's output;
//  * the contiguous copy of a padded product's columns (the forward's logits, reshaped for the
//    loss), so that the loss row kernel reads the copy itself and takes it as its prologue: it
//    then reads the padded rows and writes the copy, and the copy is no kernel of its own.
// The views left without readers are dropped by the caller. Returns whether a reader moved.
bool ReadReshapeChainsAtTheirBase(ir::Graph& graph) {
  std::set<ir::ValueRef> returned, pad_operands;
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) { returned.insert(r); });
  for (const ir::Node& n : graph.nodes)
    if (ZeroTailPadWidth(graph, n) > 0) pad_operands.insert(n.args[0].ref());
  std::map<ir::ValueRef, ir::ValueRef> base_of;
  for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i) {
    const ir::ValueRef x{i, 0};
    if (!IsReshape(graph.nodes[i])) continue;
    ir::ValueRef b = x;
    while (!b.is_input() && IsReshape(graph.nodes[b.node])) b = graph.nodes[b.node].args[0].ref();
    if (b.is_input() || !SameLayout(graph.type_of(b), graph.type_of(x))) continue;
    // Only nodes are redirected: a returned name stays the graph's output (BERT's forward saves
    // the reshaped logits for the backward and reads them for the loss).
    if ((pad_operands.contains(x) && !returned.contains(x)) || IsColumnsCopy(graph, b))
      base_of[x] = b;
  }
  if (base_of.empty()) return false;
  std::function<void(ir::Arg&)> visit = [&](ir::Arg& a) {
    if (a.is_ref()) {
      if (auto it = base_of.find(a.ref()); it != base_of.end()) a = ir::Arg{it->second};
    } else if (auto* list = std::get_if<ir::ArgList>(&a.v)) {
      for (ir::Arg& item : *list) visit(item);
    }
  };
  for (ir::Node& node : graph.nodes) {
    for (ir::Arg& a : node.args) visit(a);
    for (ir::NamedArg& kw : node.kwargs) visit(kw.value);
  }
  return true;
}

// Views nobody reads any more (the reshapes ReadReshapeChainsAtTheirBase bypassed; the DCE that
// runs before this pass left no others), removed here so that the pad is its operand's only
// reader when the partition is built.
void DropUnreadViews(ir::Graph& graph) {
  for (bool again = true; again;) {
    again = false;
    std::set<int> read;
    for (const ir::Node& node : graph.nodes)
      ir::ForEachInput(node, [&](const ir::ValueRef& r) {
        if (!r.is_input()) read.insert(r.node);
      });
    for (const ir::Arg& a : graph.outputs)
      ir::ForEachRef(a, [&](const ir::ValueRef& r) {
        if (!r.is_input()) read.insert(r.node);
      });
    std::vector<int> new_id(graph.nodes.size(), -1);
    ir::Graph out;
    out.inputs = graph.inputs;
    for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i) {
      const OpCategory category = PropertiesOf(graph.nodes[i].target).category;
      if (!read.contains(i) &&
          (category == OpCategory::kView || category == OpCategory::kReshape)) {
        again = true;
        continue;
      }
      new_id[i] = static_cast<int>(out.nodes.size());
      out.nodes.push_back(graph.nodes[i]);
    }
    if (!again) return;
    std::function<void(ir::Arg&)> visit = [&](ir::Arg& a) {
      if (a.is_ref()) {
        if (!a.ref().is_input()) a = ir::Arg{ir::ValueRef{new_id[a.ref().node], a.ref().output}};
      } else if (auto* list = std::get_if<ir::ArgList>(&a.v)) {
        for (ir::Arg& item : *list) visit(item);
      }
    };
    for (ir::Node& node : out.nodes) {
      for (ir::Arg& a : node.args) visit(a);
      for (ir::NamedArg& kw : node.kwargs) visit(kw.value);
    }
    out.outputs = graph.outputs;
    for (ir::Arg& a : out.outputs) visit(a);
    graph = std::move(out);
  }
}

}  // namespace

absl::StatusOr<bool> ReadThroughZeroPads::Run(ir::Graph& graph) {
  const bool rebased = ReadReshapeChainsAtTheirBase(graph);
  if (rebased) DropUnreadViews(graph);
  const int num_nodes = static_cast<int>(graph.nodes.size());
  std::map<ir::ValueRef, std::vector<int>> readers;
  for (int i = 0; i < num_nodes; ++i) {
    std::set<ir::ValueRef> read;
    ir::ForEachInput(graph.nodes[i], [&](const ir::ValueRef& r) { read.insert(r); });
    for (const ir::ValueRef& r : read) readers[r].push_back(i);
  }
  std::set<ir::ValueRef> returned;
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) { returned.insert(r); });

  // Producer node -> the pad of its output to move right after it.
  std::map<int, int> pad_after;
  for (int p = 0; p < num_nodes; ++p) {
    const ir::Node& pad = graph.nodes[p];
    if (ZeroTailPadWidth(graph, pad) == 0 || pad.outputs[0].device != ir::DeviceType::kCuda)
      continue;
    const ir::ValueRef x = pad.args[0].ref();
    // x must be a kernel's output for the pad to be absorbed: made by a pointwise op or a
    // reduction (a row kernel or its epilogue; an extern op's readers would only trade their
    // contiguous operand for a strided one). It must not leave the graph (its readers there
    // expect it contiguous) and must have readers besides the pad.
    const OpCategory producer =
        x.is_input() ? OpCategory::kUnknown : PropertiesOf(graph.nodes[x.node].target).category;
    if ((producer != OpCategory::kPointwise && producer != OpCategory::kReduction) ||
        returned.contains(x) || graph.nodes[x.node].outputs.size() != 1 || readers[x].size() < 2 ||
        pad_after.contains(x.node))
      continue;
    // A view of x declared contiguous would become a view of the strided slice: keep x then.
    bool viewed = false;
    for (int r : readers[x]) {
      const OpCategory c = PropertiesOf(graph.nodes[r].target).category;
      viewed |= r != p && (c == OpCategory::kView || c == OpCategory::kReshape);
    }
    if (viewed) continue;
    pad_after[x.node] = p;
  }
  if (pad_after.empty()) return rebased;

  std::set<int> moved;
  for (const auto& [producer, p] : pad_after) moved.insert(p);
  ir::Graph out;
  out.inputs = graph.inputs;
  std::map<ir::ValueRef, ir::ValueRef> new_ref;      // old node outputs -> new
  std::map<ir::ValueRef, ir::ValueRef> through_pad;  // x -> slice(P), for x's other readers
  auto remap = [&](ir::Arg& arg, bool is_pad) {
    std::function<void(ir::Arg&)> visit = [&](ir::Arg& a) {
      if (a.is_ref()) {
        const ir::ValueRef r = a.ref();
        if (r.is_input()) return;
        auto via = through_pad.find(r);
        a = ir::Arg{!is_pad && via != through_pad.end() ? via->second : new_ref.at(r)};
      } else if (auto* list = std::get_if<ir::ArgList>(&a.v)) {
        for (ir::Arg& item : *list) visit(item);
      }
    };
    visit(arg);
  };
  auto copy = [&](int i, bool is_pad) {
    ir::Node node = graph.nodes[i];
    for (ir::Arg& a : node.args) remap(a, is_pad);
    for (ir::NamedArg& kw : node.kwargs) remap(kw.value, is_pad);
    out.nodes.push_back(std::move(node));
    const int id = static_cast<int>(out.nodes.size()) - 1;
    for (int o = 0; o < static_cast<int>(out.nodes[id].outputs.size()); ++o)
      new_ref[{i, o}] = {id, o};
    return id;
  };
  for (int i = 0; i < num_nodes; ++i) {
    if (moved.contains(i)) continue;
    copy(i, false);
    auto it = pad_after.find(i);
    if (it == pad_after.end()) continue;
    // The pad right after its operand's producer, then the view of its first columns that every
    // other reader of the operand reads (the pad's own readers still name the pad).
    const int p = copy(it->second, true);
    const ir::TensorType& x = graph.nodes[i].outputs[0];
    ir::TensorType view = x;
    view.strides = out.nodes[p].outputs[0].strides;
    const int64_t last = x.rank() - 1;
    const ir::Arg slice = EmitOp(out, "aten::slice.Tensor",
                                 {ir::Arg{ir::ValueRef{p, 0}}, ir::Arg{last}, ir::Arg{int64_t{0}},
                                  ir::Arg{x.sizes.back()}, ir::Arg{int64_t{1}}},
                                 view);
    through_pad[{i, 0}] = slice.ref();
  }
  out.outputs = graph.outputs;
  for (ir::Arg& a : out.outputs) remap(a, false);
  graph = std::move(out);
  return true;
}

absl::StatusOr<bool> AbsorbZeroTailPads(const ir::Graph& graph, Partition& partition) {
  const int num_nodes = static_cast<int>(graph.nodes.size());
  std::map<ir::ValueRef, int> num_readers;
  for (int i = 0; i < num_nodes; ++i) {
    std::set<ir::ValueRef> read;
    ir::ForEachInput(graph.nodes[i], [&](const ir::ValueRef& r) { read.insert(r); });
    for (const ir::ValueRef& r : read) ++num_readers[r];
  }
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) { ++num_readers[r]; });

  bool changed = false;
  for (int p = 0; p < num_nodes; ++p) {
    const int gp = partition.group_of[p];
    if (gp < 0 || partition.groups[gp].nodes != std::vector<int>{p} ||
        ZeroTailPadWidth(graph, graph.nodes[p]) == 0)
      continue;
    const ir::ValueRef x = graph.nodes[p].args[0].ref();
    if (x.is_input() || num_readers[x] != 1) continue;
    const int gx = partition.group_of[x.node];
    if (gx < 0 || gx == gp) continue;
    FusionGroup& group = partition.groups[gx];
    const int rank = static_cast<int>(group.shape.size());
    if (group.num_reduced_dims == 0 || group.reduce_leading ||
        graph.type_of(x).sizes != group.shape)
      continue;
    // The row must be the innermost dim alone (PointwiseKernel::output_zero_tail).
    bool innermost_row = true;
    for (int d = rank - group.num_reduced_dims; d + 1 < rank; ++d)
      innermost_row &= group.shape[d] == 1;
    if (!innermost_row) continue;
    group.nodes.insert(std::upper_bound(group.nodes.begin(), group.nodes.end(), p), p);
    partition.group_of[p] = gx;
    partition.groups[gp].nodes.clear();
    changed = true;
  }
  if (changed) RETURN_IF_ERROR(CompletePartition(graph, partition));
  return changed;
}

}  // namespace tccd::codegen

// ExpandSinking (see expand_sinking.h).
#include "codegen/passes/expand_sinking.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "codegen/passes/graph_rebuild.h"
#include "codegen/passes/index_ops.h"
#include "codegen/passes/pointwise_ops.h"

namespace tccd::codegen {
namespace {

constexpr char kExpand[] = "aten::expand.default";

// Right-aligned broadcast of a and b (torch's rule), or nullopt when they do not broadcast.
std::optional<std::vector<int64_t>> Broadcast(const std::vector<int64_t>& a,
                                              const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

// The value an expand node expands, when `arg` (in the rebuilt graph) is one whose input
// broadcasts to its output (the expand is then implied by broadcasting).
std::optional<ir::Arg> Unexpanded(const ir::Graph& out, const ir::Arg& arg) {
  if (!arg.is_ref() || arg.ref().is_input()) return std::nullopt;
  const ir::Node& e = out.nodes[arg.ref().node];
  if (e.target != kExpand || e.args.empty() || !e.args[0].is_ref() || e.outputs.size() != 1)
    return std::nullopt;
  const ir::TensorType& in = out.type_of(e.args[0].ref());
  const std::optional<std::vector<int64_t>> b = Broadcast(in.sizes, e.outputs[0].sizes);
  if (!b || *b != e.outputs[0].sizes || in.dtype != e.outputs[0].dtype) return std::nullopt;
  return e.args[0];
}

// Strides of `t` (rank <= sizes.size(), right-aligned) expanded to `sizes`.
std::vector<int64_t> ExpandedStrides(const ir::TensorType& t, const std::vector<int64_t>& sizes) {
  const size_t rank = sizes.size(), lead = rank - t.sizes.size();
  std::vector<int64_t> strides(rank, 0);
  for (size_t i = lead; i < rank; ++i)
    strides[i] = t.sizes[i - lead] == sizes[i] ? t.strides[i - lead] : 0;
  return strides;
}

}  // namespace

absl::StatusOr<bool> ExpandSinking::Run(ir::Graph& graph) {
  const int n = static_cast<int>(graph.nodes.size());
  // Whether every reader of a node is a pointwise op (graph outputs are not).
  std::vector<bool> pointwise_readers(n, true);
  for (const ir::Node& node : graph.nodes) {
    const bool pw = IsPointwiseOp(graph, node) && !NeedsCoordinates(graph, node) &&
                    !PointwiseValueIgnoresOperands(node);
    ir::ForEachInput(node, [&](const ir::ValueRef& r) {
      if (!r.is_input() && !pw) pointwise_readers[r.node] = false;
    });
  }
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) {
      if (!r.is_input()) pointwise_readers[r.node] = false;
    });
  const ir::Graph& old = graph;
  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        if (node.outputs.size() != 1 || !IsPointwiseOp(old, old.nodes[id]) ||
            NeedsCoordinates(old, old.nodes[id]) || PointwiseValueIgnoresOperands(node))
          return std::nullopt;
        for (const ir::NamedArg& kw : node.kwargs)
          if (kw.value.is_ref()) return std::nullopt;
        const int operands = std::min<int>(PointwiseOperandCount(node), node.args.size());
        // The operands with every sinkable expand replaced by its input, and the shape they
        // broadcast to.
        ir::Node rewritten = node;
        bool any = false;
        std::vector<int64_t> shape;
        for (int i = 0; i < operands; ++i) {
          ir::Arg& a = rewritten.args[i];
          if (std::optional<ir::Arg> u = Unexpanded(out, a)) {
            a = *u;
            any = true;
          }
          if (!a.is_ref()) continue;
          const std::optional<std::vector<int64_t>> b =
              Broadcast(shape, out.type_of(a.ref()).sizes);
          if (!b) return std::nullopt;
          shape = *b;
        }
        for (size_t i = operands; i < node.args.size(); ++i) {
          bool ref = false;
          ir::ForEachRef(node.args[i], [&](const ir::ValueRef&) { ref = true; });
          if (ref) return std::nullopt;
        }
        if (!any) return std::nullopt;
        const ir::TensorType& type = node.outputs[0];
        if (shape == type.sizes) {
          // The op broadcasts the unexpanded values to its own shape.
          return std::vector<ir::Arg>{AppendNode(out, std::move(rewritten))};
        }
        // Computed on the smaller shape and expanded: only for pointwise readers.
        if (!pointwise_readers[id] || shape.size() > type.sizes.size()) return std::nullopt;
        const std::optional<std::vector<int64_t>> b = Broadcast(shape, type.sizes);
        if (!b || *b != type.sizes) return std::nullopt;
        const ir::TensorType small = DenseType(type.dtype, shape, type.device);
        rewritten.outputs[0] = small;
        const ir::Arg v = AppendNode(out, std::move(rewritten));
        ir::TensorType expanded = type;
        expanded.strides = ExpandedStrides(small, type.sizes);
        expanded.storage_offset = 0;
        return std::vector<ir::Arg>{EmitOp(out, kExpand, {v, IntListArg(type.sizes)}, expanded)};
      });
}

}  // namespace tccd::codegen

// IndexOpsToReaderShape (see index_ops_to_reader_shape.h).
#include "codegen/passes/index_ops_to_reader_shape.h"

#include <optional>
#include <vector>

#include "codegen/passes/graph_rebuild.h"
#include "codegen/passes/index_ops.h"
#include "codegen/passes/pointwise_ops.h"

namespace tccd::codegen {
namespace {

constexpr char kIndexTensor[] = "aten::index.Tensor";
constexpr char kEmbedding[] = "aten::embedding.default";
constexpr char kExpand[] = "aten::expand.default";

// Whether `small` broadcasts to `large` of the same rank (each dim equal or 1).
bool BroadcastsTo(const std::vector<int64_t>& small, const std::vector<int64_t>& large) {
  if (small.size() != large.size()) return false;
  for (size_t i = 0; i < small.size(); ++i)
    if (small[i] != large[i] && small[i] != 1) return false;
  return true;
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

absl::StatusOr<bool> IndexOpsToReaderShape::Run(ir::Graph& graph) {
  const int n = static_cast<int>(graph.nodes.size());
  // Per node: how many times it is read, and the shape of its reader when that is one
  // pointwise op (nullopt otherwise).
  std::vector<int> reads(n, 0);
  std::vector<std::optional<std::vector<int64_t>>> reader_shape(n);
  for (const ir::Node& node : graph.nodes) {
    const bool pw = node.outputs.size() == 1 && IsPointwiseOp(graph, node) &&
                    !NeedsCoordinates(graph, node) && !PointwiseValueIgnoresOperands(node);
    ir::ForEachInput(node, [&](const ir::ValueRef& r) {
      if (r.is_input()) return;
      ++reads[r.node];
      if (pw) reader_shape[r.node] = node.outputs[0].sizes;
    });
  }
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) {
      if (!r.is_input()) reads[r.node] += 2;  // returned: keeps its shape
    });
  const ir::Graph& old = graph;
  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        const bool embedding = embeddings_ && node.target == kEmbedding;
        if ((node.target != kIndexTensor && !embedding) || reads[id] != 1 || !reader_shape[id] ||
            !IsIndexOp(old, old.nodes[id]))
          return std::nullopt;
        const std::vector<int64_t>& shape = *reader_shape[id];
        const ir::TensorType& type = node.outputs[0];
        if (shape == type.sizes || !BroadcastsTo(type.sizes, shape)) return std::nullopt;
        if (embedding) {
          // [ids..., E]: the ids grow to the reader's leading dims; E stays.
          if (shape.back() != type.sizes.back()) return std::nullopt;
          const std::vector<int64_t> index_shape(shape.begin(), shape.end() - 1);
          const ir::TensorType& t = out.type_of(node.args[1].ref());
          ir::TensorType e = t;
          e.sizes = index_shape;
          e.strides = ExpandedStrides(t, index_shape);
          ir::Node rewritten = node;
          rewritten.args[1] = EmitOp(out, kExpand, {node.args[1], IntListArg(index_shape)}, e);
          rewritten.outputs[0] = DenseType(type.dtype, shape, type.device);
          return std::vector<ir::Arg>{AppendNode(out, std::move(rewritten))};
        }
        const ir::TensorType& self = out.type_of(node.args[0].ref());
        const auto& list = std::get<ir::ArgList>(node.args[1].v);
        // The output is [broadcast index shape..., self's unindexed dims...]: only the index
        // part may grow (the rest is read from self as it is).
        const size_t rest = self.sizes.size() - list.size();
        const size_t rb = shape.size() - rest;
        for (size_t k = rb; k < shape.size(); ++k)
          if (shape[k] != type.sizes[k]) return std::nullopt;
        const std::vector<int64_t> index_shape(shape.begin(), shape.begin() + rb);
        ir::Node rewritten = node;
        ir::ArgList expanded;
        for (const ir::Arg& a : list) {
          const ir::TensorType& t = out.type_of(a.ref());
          ir::TensorType e = t;
          e.sizes = index_shape;
          e.strides = ExpandedStrides(t, index_shape);
          expanded.push_back(EmitOp(out, kExpand, {a, IntListArg(index_shape)}, e));
        }
        rewritten.args[1] = ir::Arg{expanded};
        rewritten.outputs[0] = DenseType(type.dtype, shape, type.device);
        return std::vector<ir::Arg>{AppendNode(out, std::move(rewritten))};
      });
}

}  // namespace tccd::codegen

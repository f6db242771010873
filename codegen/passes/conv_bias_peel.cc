// ConvBiasPeel (see conv_bias_peel.h).
#include "codegen/passes/conv_bias_peel.h"

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "codegen/passes/graph_rebuild.h"

namespace tccd::codegen {
namespace {

constexpr char kConvolution[] = "aten::convolution.default";
constexpr size_t kBias = 2;

// args: input, weight, bias, stride, padding, dilation, transposed, output_padding, groups.
bool Peelable(const ir::Graph& graph, const ir::Node& node) {
  if (node.target != kConvolution || node.args.size() != 9 || !node.kwargs.empty() ||
      node.outputs.size() != 1)
    return false;
  if (!node.args[0].is_ref() || !node.args[1].is_ref() || !node.args[kBias].is_ref()) return false;
  const ir::TensorType& y = node.outputs[0];
  const ir::TensorType& x = graph.type_of(node.args[0].ref());
  const ir::TensorType& w = graph.type_of(node.args[1].ref());
  const ir::TensorType& b = graph.type_of(node.args[kBias].ref());
  if (y.device != ir::DeviceType::kCuda || !IsF32OrHalf(y.dtype) || y.numel() == 0) return false;
  // Batched: dim 1 of the output is the channel (an unbatched input has it at dim 0).
  if (x.rank() != w.rank() || y.rank() != x.rank() || y.rank() < 3) return false;
  return b.device == y.device && b.dtype == y.dtype && b.rank() == 1 && b.sizes[0] == y.sizes[1] &&
         y.sizes[1] > 0;
}

// The bias as a stride-0 broadcast over `sizes` along `channel_dim`: view [.., C, ..], expand.
ir::Arg BroadcastBias(ir::Graph& out, const ir::Arg& bias, const std::vector<int64_t>& sizes,
                      int64_t channel_dim) {
  const ir::TensorType& b = out.type_of(bias.ref());
  const int64_t rank = static_cast<int64_t>(sizes.size());
  ir::TensorType viewed = b;
  // Right-aligned broadcasting: the view needs no leading 1s.
  viewed.sizes.assign(rank - channel_dim, 1);
  viewed.sizes[0] = b.sizes[0];
  viewed.strides = ir::ContiguousStrides(viewed.sizes);
  viewed.strides[0] = b.strides[0];
  ir::Arg column = bias;
  if (viewed.sizes != b.sizes)
    column = EmitOp(out, "aten::view.default", {bias, IntListArg(viewed.sizes)}, viewed);
  ir::TensorType expanded = b;
  expanded.sizes = sizes;
  expanded.strides.assign(rank, 0);
  expanded.strides[channel_dim] = b.strides[0];
  return EmitOp(out, "aten::expand.default", {column, IntListArg(sizes)}, expanded);
}

// Where dim 1 (the channel) goes in a permute node's output: a positional list of dims that is
// a permutation of the output's rank. nullopt for any other node.
std::optional<int64_t> ChannelDimAfter(const ir::Node& node) {
  if (node.target != "aten::permute.default" || node.args.size() != 2 || !node.args[0].is_ref() ||
      node.outputs.size() != 1)
    return std::nullopt;
  const auto* list = std::get_if<ir::ArgList>(&node.args[1].v);
  const int64_t rank = node.outputs[0].rank();
  if (list == nullptr || static_cast<int64_t>(list->size()) != rank) return std::nullopt;
  std::vector<bool> seen(rank);
  std::optional<int64_t> channel_dim;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t* v = std::get_if<int64_t>(&(*list)[d].v);
    if (v == nullptr || *v < -rank || *v >= rank) return std::nullopt;
    const int64_t dim = *v < 0 ? *v + rank : *v;
    if (seen[dim]) return std::nullopt;
    seen[dim] = true;
    if (dim == 1) channel_dim = d;
  }
  return channel_dim;
}

}  // namespace

absl::StatusOr<bool> ConvBiasPeel::Run(ir::Graph& graph) {
  const int n = static_cast<int>(graph.nodes.size());
  std::vector<bool> peel(n), only_permuted(n);
  bool any = false;
  for (int id = 0; id < n; ++id) {
    peel[id] = Peelable(graph, graph.nodes[id]);
    only_permuted[id] = peel[id];
    any = any || peel[id];
  }
  if (!any) return false;
  // A convolution read only by permutes (ConvNeXt: conv -> permute -> layer norm) gets its bias
  // added after each permute, in the permuted space: the add then has the norm's iteration
  // space and becomes its prologue (one kernel) instead of a kernel of its own.
  for (const ir::Node& node : graph.nodes) {
    const bool permute = ChannelDimAfter(node).has_value();
    ir::ForEachInput(node, [&](const ir::ValueRef& r) {
      if (!r.is_input() && !permute) only_permuted[r.node] = false;
    });
  }
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) {
      if (!r.is_input()) only_permuted[r.node] = false;
    });
  // New convolution value -> the bias its permuted readers add.
  std::map<ir::ValueRef, ir::Arg> pending_bias;
  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        if (peel[id]) {
          ir::Node conv = node;
          conv.args[kBias] = ir::Arg{ir::NoneArg{}};
          const ir::Arg bias = node.args[kBias];
          const ir::TensorType y = node.outputs[0];
          const ir::Arg unbiased = AppendNode(out, std::move(conv));
          if (only_permuted[id]) {
            pending_bias.emplace(unbiased.ref(), bias);
            return std::vector<ir::Arg>{unbiased};
          }
          const ir::Arg broadcast = BroadcastBias(out, bias, y.sizes, 1);
          return std::vector<ir::Arg>{EmitOp(out, "aten::add.Tensor", {unbiased, broadcast}, y)};
        }
        const std::optional<int64_t> channel_dim = ChannelDimAfter(node);
        if (!channel_dim) return std::nullopt;
        auto it = pending_bias.find(node.args[0].ref());
        if (it == pending_bias.end()) return std::nullopt;
        const ir::TensorType& p = node.outputs[0];
        const ir::Arg permuted = AppendNode(out, node);
        const ir::Arg broadcast = BroadcastBias(out, it->second, p.sizes, *channel_dim);
        return std::vector<ir::Arg>{EmitOp(out, "aten::add.Tensor", {permuted, broadcast}, p)};
      });
}

}  // namespace tccd::codegen

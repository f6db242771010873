// NllLossBackwardToPointwise (see nll_loss_backward_to_pointwise.h).
#include "codegen/passes/nll_loss_backward_to_pointwise.h"

#include <functional>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "codegen/passes/graph_rebuild.h"

namespace tccd::codegen {
namespace {

// Contiguous CUDA tensors: what the rewrite emits.
ir::TensorType Dense(ir::DType dtype, std::vector<int64_t> sizes) {
  return DenseType(dtype, std::move(sizes), ir::DeviceType::kCuda);
}

constexpr char kNllBackward[] = "aten::nll_loss_backward.default";
constexpr char kLogSoftmaxBackward[] = "aten::_log_softmax_backward_data.default";
constexpr int64_t kReductionNone = 0, kReductionMean = 1, kReductionSum = 2;

// Whether `node` is an nll_loss_backward this pass rewrites (its readers checked separately).
bool Rewritable(const ir::Graph& graph, const ir::Node& node) {
  if (node.target != kNllBackward || node.args.size() < 7 || node.outputs.size() != 1) return false;
  for (int i : {0, 1, 2, 6})
    if (!node.args[i].is_ref()) return false;
  if (!node.args[3].is_none()) return false;  // class weights: the index kernel keeps them
  const std::optional<int64_t> reduction = IntArgAt(node, 4);
  if (!reduction || !IntArgAt(node, 5) || *reduction < kReductionNone || *reduction > kReductionSum)
    return false;
  const ir::TensorType& out = node.outputs[0];
  const ir::TensorType& target = graph.type_of(node.args[2].ref());
  const ir::TensorType& grad = graph.type_of(node.args[0].ref());
  const ir::TensorType& total = graph.type_of(node.args[6].ref());
  return out.device == ir::DeviceType::kCuda && IsF32OrHalf(out.dtype) && out.rank() == 2 &&
         out.IsContiguous() && out.storage_offset == 0 && out.sizes[1] > 0 && target.rank() == 1 &&
         target.sizes[0] == out.sizes[0] && IsIndexDType(target.dtype) &&
         target.device == out.device && grad.dtype == out.dtype && grad.device == out.device &&
         grad.rank() == (*reduction == kReductionNone ? 1 : 0) && total.rank() == 0 &&
         total.device == out.device;
}

// `node` (args already in `out`) as the pointwise ops above; the new value of its output.
ir::Arg Decompose(ir::Graph& out, const ir::Node& node) {
  const ir::TensorType& result = node.outputs[0];
  const int64_t rows = result.sizes[0], classes = result.sizes[1];
  const int64_t reduction = *IntArgAt(node, 4), ignore_index = *IntArgAt(node, 5);
  const ir::DType index_dtype = out.type_of(node.args[2].ref()).dtype;
  const ir::Arg arange = EmitArange(out, classes, index_dtype, ir::DeviceType::kCuda);
  const ir::Arg target = EmitColumn(out, node.args[2]);
  ir::Arg hit =
      EmitOp(out, "aten::eq.Tensor", {arange, target}, Dense(ir::DType::kBool, {rows, classes}));
  // An ignore_index outside [0, C) (the usual -100) never equals a class: nothing to mask.
  if (ignore_index >= 0 && ignore_index < classes) {
    const ir::Arg counted = EmitOp(out, "aten::ne.Scalar", {target, ir::Arg{ignore_index}},
                                   Dense(ir::DType::kBool, {rows, 1}));
    hit = EmitOp(out, "aten::logical_and.default", {hit, counted},
                 Dense(ir::DType::kBool, {rows, classes}));
  }
  const ir::Arg grad = reduction == kReductionNone ? EmitColumn(out, node.args[0]) : node.args[0];
  ir::Arg value =
      EmitOp(out, "aten::mul.Tensor", {hit, grad}, Dense(result.dtype, {rows, classes}));
  if (reduction == kReductionMean)
    value = EmitOp(out, "aten::div.Tensor", {value, node.args[6]},
                   Dense(result.dtype, {rows, classes}));
  return EmitOp(out, "aten::neg.default", {value}, Dense(result.dtype, {rows, classes}));
}

}  // namespace

// A `_to_copy` that changes only the dtype: CUDA autocast runs nll_loss in f32, so its gradient
// reaches a bf16 log_softmax backward through one.
bool IsDtypeCast(const ir::Node& node) {
  if (node.target != "aten::_to_copy.default" || node.args.size() != 1 || node.outputs.size() != 1)
    return false;
  for (const ir::NamedArg& kw : node.kwargs)
    if (kw.name != "dtype" && kw.name != "layout" && kw.name != "device") return false;
  return true;
}

absl::StatusOr<bool> NllLossBackwardToPointwise::Run(ir::Graph& graph) {
  // Old node ids to rewrite: rewritable, not a graph output, read only by log_softmax backwards,
  // directly or through dtype casts read only by them (the casts fuse into the row kernel too).
  std::set<int> chosen;
  for (int id = 0; id < static_cast<int>(graph.nodes.size()); ++id)
    if (Rewritable(graph, graph.nodes[id])) chosen.insert(id);
  if (chosen.empty()) return false;
  std::vector<std::vector<int>> readers(graph.nodes.size());
  for (int id = 0; id < static_cast<int>(graph.nodes.size()); ++id)
    ir::ForEachInput(graph.nodes[id], [&](const ir::ValueRef& r) {
      if (!r.is_input()) readers[r.node].push_back(id);
    });
  std::vector<bool> is_output(graph.nodes.size(), false);
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) {
      if (!r.is_input()) is_output[r.node] = true;
    });
  // Whether every use of node `id`'s value ends in a log_softmax backward (casts in between).
  std::function<bool(int, int)> feeds_only_log_softmax_backward = [&](int id, int depth) {
    if (is_output[id] || depth > 4) return false;
    for (int reader : readers[id]) {
      const ir::Node& node = graph.nodes[reader];
      if (node.target == kLogSoftmaxBackward) continue;
      if (!IsDtypeCast(node) || !feeds_only_log_softmax_backward(reader, depth + 1)) return false;
    }
    return true;
  };
  for (auto it = chosen.begin(); it != chosen.end();)
    it = feeds_only_log_softmax_backward(*it, 0) ? std::next(it) : chosen.erase(it);
  if (chosen.empty()) return false;
  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        if (!chosen.count(id)) return std::nullopt;
        return std::vector<ir::Arg>{Decompose(out, node)};
      });
}

}  // namespace tccd::codegen

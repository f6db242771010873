// NllLossForwardToRows (see nll_loss_forward_to_rows.h).
#include "codegen/passes/nll_loss_forward_to_rows.h"

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

constexpr char kNllForward[] = "aten::nll_loss_forward.default";
constexpr int64_t kReductionMean = 1, kReductionSum = 2;

// Whether `node` is an nll_loss_forward this pass rewrites (who reads `self` checked separately).
bool Rewritable(const ir::Graph& graph, const ir::Node& node) {
  if (node.target != kNllForward || node.args.size() != 5 || !node.kwargs.empty() ||
      node.outputs.size() != 2)
    return false;
  if (!node.args[0].is_ref() || !node.args[1].is_ref() || !node.args[2].is_none()) return false;
  const std::optional<int64_t> reduction = IntArgAt(node, 3), ignore_index = IntArgAt(node, 4);
  if (!reduction || !ignore_index || (*reduction != kReductionMean && *reduction != kReductionSum))
    return false;
  const ir::ValueRef& self_ref = node.args[0].ref();
  if (self_ref.is_input()) return false;
  const ir::TensorType& self = graph.type_of(self_ref);
  const ir::TensorType& target = graph.type_of(node.args[1].ref());
  if (self.device != ir::DeviceType::kCuda || self.dtype != ir::DType::kF32 || self.rank() != 2 ||
      self.sizes[1] < 2 || self.sizes[0] < 1)
    return false;
  if (*ignore_index >= 0 && *ignore_index < self.sizes[1])
    return false;  // an ignored class: ATen's kernel
  if (target.rank() != 1 || target.sizes[0] != self.sizes[0] || target.device != self.device ||
      !IsIndexDType(target.dtype))
    return false;
  for (const ir::TensorType& out : node.outputs)
    if (out.rank() != 0 || out.dtype != ir::DType::kF32 || out.device != self.device) return false;
  return true;
}

// self = a - b, b one value per row ([N, 1]: the logsumexp of log_softmax's decomposition),
// maybe cast to f32 (CUDA autocast runs nll_loss in f32 on bf16 log-probabilities). A 16-bit
// log_softmax is decomposed in f32 and cast back (client/tccd/decompositions.py), so up to two
// casts sit between the subtraction and nll_loss: f32(bf16(a - b)).
struct RowShifted {
  ir::Arg a, b;
};
std::optional<RowShifted> RowShiftedSelf(const ir::Graph& g, const ir::ValueRef& self) {
  if (self.is_input()) return std::nullopt;
  const ir::Node* n = &g.nodes[self.node];
  for (int casts = 0; casts < 2 && n->target == "aten::_to_copy.default" && n->args.size() == 1 &&
                      n->args[0].is_ref() && !n->args[0].ref().is_input() &&
                      n->kwargs.size() == 1 && n->kwargs[0].name == "dtype";
       ++casts) {
    n = &g.nodes[n->args[0].ref().node];
  }
  if (n->target != "aten::sub.Tensor" || n->args.size() != 2 || !n->kwargs.empty() ||
      !n->args[0].is_ref() || !n->args[1].is_ref() || n->outputs.size() != 1)
    return std::nullopt;
  const ir::TensorType& out = n->outputs[0];
  const ir::TensorType& a = g.type_of(n->args[0].ref());
  const ir::TensorType& b = g.type_of(n->args[1].ref());
  if (out.rank() != 2 || a.sizes != out.sizes || b.rank() != 2 || b.sizes[0] != out.sizes[0] ||
      b.sizes[1] != 1 || !ir::IsFloatingPoint(a.dtype) || a.dtype != b.dtype ||
      a.dtype != out.dtype)
    return std::nullopt;
  return RowShifted{n->args[0], n->args[1]};
}

// `node` (args already in `out`) as the ops above; the new values of its two outputs.
std::vector<ir::Arg> Decompose(ir::Graph& out, const ir::Node& node) {
  const ir::TensorType self = out.type_of(node.args[0].ref());
  const int64_t rows = self.sizes[0], classes = self.sizes[1];
  const int64_t reduction = *IntArgAt(node, 3), ignore_index = *IntArgAt(node, 4);
  const ir::Arg& target = node.args[1];
  const ir::TensorType target_type = out.type_of(target.ref());
  const ir::DType f32 = ir::DType::kF32;
  const ir::Arg arange = EmitArange(out, classes, target_type.dtype, ir::DeviceType::kCuda);
  const ir::Arg target_column = EmitColumn(out, target);
  const ir::Arg other = EmitOp(out, "aten::ne.Tensor", {arange, target_column},
                               Dense(ir::DType::kBool, {rows, classes}));
  ir::Arg picked;
  if (std::optional<RowShifted> shifted = RowShiftedSelf(out, node.args[0].ref())) {
    // self[i, t] = a[i, t] - b[i]: pick a's value and subtract b after the row's sum, so the
    // pick needs no row value and shares the logits' one streamed pass with the logsumexp
    // (cuda_row_emitter.cc, "Looped rows"). Exact for an f32 self (the sum adds zeros to
    // a[i, t]); a bf16 self is no longer rounded to bf16 before the pick (like every fused
    // intermediate). A row without a class in [0, C) (ignored) picks 0, as before.
    auto to_f32 = [&](const ir::Arg& v, std::vector<int64_t> sizes) {
      if (out.type_of(v.ref()).dtype == f32) return v;
      return EmitOp(out, "aten::_to_copy.default", {v}, Dense(f32, std::move(sizes)),
                    {{"dtype", ir::Arg{f32}}});
    };
    const ir::Arg a = to_f32(shifted->a, {rows, classes}), b = to_f32(shifted->b, {rows, 1});
    const ir::Arg masked = EmitOp(out, "aten::masked_fill.Scalar", {a, other, ir::Arg{0.0}},
                                  Dense(f32, {rows, classes}));
    const ir::Arg picked_a =
        EmitOp(out, "aten::sum.dim_IntList", {masked, IntListArg({1}), ir::Arg{bool{true}}},
               Dense(f32, {rows, 1}));
    const ir::TensorType b8 = Dense(ir::DType::kBool, {rows, 1});
    const ir::Arg below = EmitOp(out, "aten::lt.Scalar", {target_column, ir::Arg{int64_t{0}}}, b8);
    const ir::Arg above = EmitOp(out, "aten::ge.Scalar", {target_column, ir::Arg{classes}}, b8);
    const ir::Arg miss = EmitOp(out, "aten::logical_or.default", {below, above}, b8);
    const ir::Arg shift =
        EmitOp(out, "aten::masked_fill.Scalar", {b, miss, ir::Arg{0.0}}, Dense(f32, {rows, 1}));
    const ir::Arg picked_k =
        EmitOp(out, "aten::sub.Tensor", {picked_a, shift}, Dense(f32, {rows, 1}));
    picked = EmitOp(out, "aten::view.default", {picked_k, IntListArg({rows})}, Dense(f32, {rows}));
  } else {
    const ir::Arg masked = EmitOp(out, "aten::masked_fill.Scalar",
                                  {node.args[0], other, ir::Arg{0.0}}, Dense(f32, {rows, classes}));
    picked = EmitOp(out, "aten::sum.dim_IntList", {masked, IntListArg({1})}, Dense(f32, {rows}));
  }
  const ir::Arg counted = EmitOp(out, "aten::ne.Scalar", {target, ir::Arg{ignore_index}},
                                 Dense(ir::DType::kBool, {rows}));
  const ir::Arg weights = EmitOp(out, "aten::_to_copy.default", {counted}, Dense(f32, {rows}),
                                 {{"dtype", ir::Arg{f32}}});
  const ir::Arg total =
      EmitOp(out, "aten::sum.dim_IntList", {weights, IntListArg({0})}, Dense(f32, {}));
  const ir::Arg sum =
      EmitOp(out, "aten::sum.dim_IntList", {picked, IntListArg({0})}, Dense(f32, {}));
  ir::Arg loss = EmitOp(out, "aten::neg.default", {sum}, Dense(f32, {}));
  if (reduction == kReductionMean)
    loss = EmitOp(out, "aten::div.Tensor", {loss, total}, Dense(f32, {}));
  return {loss, total};
}

}  // namespace

absl::StatusOr<bool> NllLossForwardToRows::Run(ir::Graph& graph) {
  // Node ids to rewrite: rewritable, and the only reader of their `self`, which is no output.
  std::set<int> chosen;
  for (int id = 0; id < static_cast<int>(graph.nodes.size()); ++id)
    if (Rewritable(graph, graph.nodes[id])) chosen.insert(id);
  if (chosen.empty()) return false;
  std::set<int> self_producers;
  for (int id : chosen) self_producers.insert(graph.nodes[id].args[0].ref().node);
  std::set<int> shared;  // producers of a chosen self that something else reads too
  for (int id = 0; id < static_cast<int>(graph.nodes.size()); ++id) {
    ir::ForEachInput(graph.nodes[id], [&](const ir::ValueRef& r) {
      if (!r.is_input() && self_producers.count(r.node) &&
          !(chosen.count(id) && graph.nodes[id].args[0].ref() == r))
        shared.insert(r.node);
    });
  }
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) {
      if (!r.is_input()) shared.insert(r.node);
    });
  for (auto it = chosen.begin(); it != chosen.end();) {
    it = shared.count(graph.nodes[*it].args[0].ref().node) ? chosen.erase(it) : std::next(it);
  }
  if (chosen.empty()) return false;
  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        if (!chosen.count(id)) return std::nullopt;
        return Decompose(out, node);
      });
}

}  // namespace tccd::codegen

// ReshapeSinking (see reshape_sinking.h).
#include "codegen/passes/reshape_sinking.h"

#include <optional>
#include <utility>
#include <vector>

#include "codegen/passes/graph_rebuild.h"
#include "codegen/passes/pointwise_ops.h"
#include "codegen/passes/reduction_ops.h"

namespace tccd::codegen {
namespace {

// How many trailing dims `a` and `b` share (equal sizes, from the end).
int64_t SharedTrailingDims(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  int64_t k = 0;
  while (k < static_cast<int64_t>(a.size()) && k < static_cast<int64_t>(b.size()) &&
         a[a.size() - 1 - k] == b[b.size() - 1 - k])
    ++k;
  return k;
}

class Sinker {
 public:
  Sinker(ir::Graph& out, ir::DeviceType device) : out_(out), device_(device) {}

  // `node` (args in `out`) re-emitted over the shape its reshaped operand had before the
  // reshape, followed by the reshape; the new value of its output, or nullopt (nothing emitted).
  std::optional<ir::Arg> Sink(const ir::Node& node) {
    if (node.outputs.size() != 1 || !IsPlain(node.outputs[0]) || !IsPointwiseOp(out_, node))
      return std::nullopt;
    // The reshaped operand: a plain reshape of a plain value that a kernel produces.
    std::optional<ir::ValueRef> view;
    ir::ForEachInput(node, [&](const ir::ValueRef& r) {
      if (!view && IsPlainReshapeOfKernelOutput(r)) view = r;
    });
    if (!view) return std::nullopt;
    const ir::Arg base = out_.nodes[view->node].args[0];
    const std::vector<int64_t>& from = out_.type_of(base.ref()).sizes;
    const std::vector<int64_t>& to = out_.type_of(*view).sizes;
    if (node.outputs[0].sizes != to) return std::nullopt;
    const int64_t shared = SharedTrailingDims(from, to);
    // Every tensor operand: the reshaped value, a plain tensor of its shape, 0-dim, or a
    // broadcast over shared trailing dims.
    bool ok = true;
    ir::ForEachInput(node, [&](const ir::ValueRef& r) {
      const ir::TensorType& t = out_.type_of(r);
      ok = ok &&
           (r == *view || t.rank() == 0 || (t.sizes == to && IsPlain(t)) || t.rank() <= shared);
    });
    if (!ok) return std::nullopt;
    ir::Node moved = node;
    auto rewrite = [&](ir::Arg& a) {
      if (!a.is_ref()) return;
      const ir::TensorType& t = out_.type_of(a.ref());
      if (a.ref() == *view) {
        a = base;
      } else if (t.rank() > 0 && t.sizes == to && t.rank() > shared) {
        ir::TensorType viewed = t;
        viewed.sizes = from;
        viewed.strides = ir::ContiguousStrides(from);
        a = Emit("aten::view.default", {a, IntListArg(from)}, viewed);
      }
    };
    for (ir::Arg& a : moved.args) rewrite(a);
    for (ir::NamedArg& kw : moved.kwargs) rewrite(kw.value);
    ir::TensorType before = node.outputs[0];
    before.sizes = from;
    before.strides = ir::ContiguousStrides(from);
    moved.outputs = {before};
    out_.nodes.push_back(std::move(moved));
    const ir::Arg computed{ir::ValueRef{static_cast<int>(out_.nodes.size()) - 1, 0}};
    return Emit("aten::view.default", {computed, IntListArg(to)}, node.outputs[0]);
  }

 private:
  bool IsPlainReshapeOfKernelOutput(const ir::ValueRef& r) const {
    if (r.is_input()) return false;
    const ir::Node& v = out_.nodes[r.node];
    if (!IsReshapeTarget(v.target) || v.args.empty() || !v.args[0].is_ref() ||
        !IsPlain(v.outputs[0]))
      return false;
    const ir::ValueRef& u = v.args[0].ref();
    if (u.is_input() || !IsPlain(out_.type_of(u)) || out_.type_of(u).dtype != v.outputs[0].dtype)
      return false;
    const ir::Node& producer = out_.nodes[u.node];
    if (IsPointwiseOp(out_, producer)) return true;
    return device_ == ir::DeviceType::kCuda && ReductionAxesOf(out_, producer).num_reduced_dims > 0;
  }

  ir::Arg Emit(std::string target, std::vector<ir::Arg> args, ir::TensorType type) {
    out_.nodes.push_back(ir::Node{
        .target = std::move(target), .args = std::move(args), .outputs = {std::move(type)}});
    return ir::Arg{ir::ValueRef{static_cast<int>(out_.nodes.size()) - 1, 0}};
  }

  ir::Graph& out_;
  ir::DeviceType device_;
};

// CUDA: pointwise nodes that are a row reduction's prologue and stay so: every reader of the
// node is a row reduction, and the reshape it reads feeds a row reduction too, which absorbs
// the reshaped value's producer through that reshape (reshape_hoisting.h). Cross-entropy's
// target pick, masked_fill(view(logits as f32)) summed per row beside the logsumexp of the same
// view: sunk, the masked_fill would fuse with the cast into a kernel writing an f32 copy of the
// logits and the pick would read it back.
std::vector<bool> RowPrologues(const ir::Graph& graph) {
  const int n = static_cast<int>(graph.nodes.size());
  std::vector<int> readers(n, 0), row_readers(n, 0);
  for (int id = 0; id < n; ++id) {
    const bool rows = ReductionAxesOf(graph, graph.nodes[id]).num_reduced_dims > 0;
    ir::ForEachInput(graph.nodes[id], [&](const ir::ValueRef& r) {
      if (r.is_input()) return;
      ++readers[r.node];
      if (rows) ++row_readers[r.node];
    });
  }
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) {
      if (!r.is_input()) ++readers[r.node];
    });
  std::vector<bool> keep(n, false);
  for (int id = 0; id < n; ++id) {
    if (readers[id] == 0 || readers[id] != row_readers[id]) continue;
    ir::ForEachInput(graph.nodes[id], [&](const ir::ValueRef& r) {
      if (!r.is_input() && IsReshapeTarget(graph.nodes[r.node].target) && row_readers[r.node] > 0)
        keep[id] = true;
    });
  }
  return keep;
}

}  // namespace

absl::StatusOr<bool> ReshapeSinking::Run(ir::Graph& graph) {
  const std::vector<bool> keep = device_ == ir::DeviceType::kCuda
                                     ? RowPrologues(graph)
                                     : std::vector<bool>(graph.nodes.size(), false);
  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        if (keep[++id]) return std::nullopt;
        std::optional<ir::Arg> moved = Sinker(out, device_).Sink(node);
        if (!moved) return std::nullopt;
        return std::vector<ir::Arg>{*moved};
      });
}

}  // namespace tccd::codegen

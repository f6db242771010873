// ReshapeSinking (see reshape_sinking.h).
#include "codegen/passes/reshape_sinking.h"

#include <map>
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

// (graph input, shape it is reshaped to): reshapes of graph inputs that pointwise ops may sink
// through (InputReshapesToSink).
using InputReshapes = std::map<std::pair<int, std::vector<int64_t>>, bool>;

class Sinker {
 public:
  Sinker(ir::Graph& out, ir::DeviceType device, const InputReshapes& inputs)
      : out_(out), device_(device), inputs_(inputs) {}

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
    if (!IsPlain(out_.type_of(u)) || out_.type_of(u).dtype != v.outputs[0].dtype) return false;
    if (u.is_input()) {
      auto it = inputs_.find({u.output, v.outputs[0].sizes});
      return it != inputs_.end() && it->second;
    }
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
  const InputReshapes& inputs_;
};

// Whether `node` may move from shape `to` onto `from` (sharing `shared` trailing dims): Sink's
// conditions, on the original graph.
bool Movable(const ir::Graph& graph, const ir::Node& node, const std::vector<int64_t>& to,
             int64_t shared) {
  if (node.outputs.size() != 1 || !IsPlain(node.outputs[0]) || node.outputs[0].sizes != to ||
      !IsPointwiseOp(graph, node))
    return false;
  bool ok = true;
  ir::ForEachInput(node, [&](const ir::ValueRef& r) {
    const ir::TensorType& t = graph.type_of(r);
    ok = ok && (t.rank() == 0 || (t.sizes == to && IsPlain(t)) || t.rank() <= shared);
  });
  return ok;
}

// Reshapes of a graph input that the pointwise ops reading them may sink through: a graph input
// has no kernel to join, so sinking only pays where the ops' values go back to the input's shape
// (AOTAutograd's backward: a saved [tokens, N] matmul output viewed as [batch, seq, N] for the
// recomputed forward ops, whose results are viewed back to [tokens, N] for the gradient's). So:
// every pointwise op reached from the reshape through pointwise readers of its shape can move
// (else sinking would split them), they have no other readers but reshapes and graph outputs,
// and one of those reshapes goes back to the input's shape. GPT-2's GELU backward recomputes
// its tanh that way; left in [batch, seq, N] it was a kernel writing three f32 tensors.
InputReshapes InputReshapesToSink(const ir::Graph& graph) {
  const int n = static_cast<int>(graph.nodes.size());
  std::vector<std::vector<int>> readers(n);
  std::vector<bool> is_output(n, false);
  for (int id = 0; id < n; ++id)
    ir::ForEachInput(graph.nodes[id], [&](const ir::ValueRef& r) {
      if (!r.is_input()) readers[r.node].push_back(id);
    });
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) {
      if (!r.is_input()) is_output[r.node] = true;
    });
  InputReshapes result;
  for (int id = 0; id < n; ++id) {
    const ir::Node& v = graph.nodes[id];
    if (!IsReshapeTarget(v.target) || v.outputs.size() != 1 || v.args.empty() ||
        !v.args[0].is_ref() || !v.args[0].ref().is_input() || is_output[id])
      continue;
    const ir::TensorType& from = graph.type_of(v.args[0].ref());
    const std::vector<int64_t>& to = v.outputs[0].sizes;
    const int64_t shared = SharedTrailingDims(from.sizes, to);
    bool ok = IsPlain(from) && IsPlain(v.outputs[0]) && from.dtype == v.outputs[0].dtype;
    bool back = false;
    std::vector<int> work = readers[id];
    std::vector<bool> seen(n, false);
    while (ok && !work.empty()) {
      const int r = work.back();
      work.pop_back();
      if (seen[r]) continue;
      seen[r] = true;
      const ir::Node& reader = graph.nodes[r];
      if (IsReshapeTarget(reader.target)) {
        back = back || (reader.outputs.size() == 1 && reader.outputs[0].sizes == from.sizes);
        continue;
      }
      ok = Movable(graph, reader, to, shared) && !is_output[r];
      for (int next : readers[r]) work.push_back(next);
    }
    auto [it, inserted] = result.insert({{v.args[0].ref().output, to}, ok && back});
    if (!inserted) it->second = it->second && ok && back;
  }
  return result;
}

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
  const InputReshapes inputs = InputReshapesToSink(graph);
  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        if (keep[++id]) return std::nullopt;
        std::optional<ir::Arg> moved = Sinker(out, device_, inputs).Sink(node);
        if (!moved) return std::nullopt;
        return std::vector<ir::Arg>{*moved};
      });
}

}  // namespace tccd::codegen

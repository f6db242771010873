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
    if (node.outputs.size() != 1 || !IsPlain(node.outputs[0]) || !IsPointwiseOp(out_, node)) return std::nullopt;
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
      ok = ok && (r == *view || t.rank() == 0 || (t.sizes == to && IsPlain(t)) || t.rank() <= shared);
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
    if (!IsReshapeTarget(v.target) || v.args.empty() || !v.args[0].is_ref() || !IsPlain(v.outputs[0])) return false;
    const ir::ValueRef& u = v.args[0].ref();
    if (u.is_input() || !IsPlain(out_.type_of(u)) || out_.type_of(u).dtype != v.outputs[0].dtype) return false;
    const ir::Node& producer = out_.nodes[u.node];
    if (IsPointwiseOp(out_, producer)) return true;
    return device_ == ir::DeviceType::kCuda && ReductionAxesOf(out_, producer).num_reduced_dims > 0;
  }

  ir::Arg Emit(std::string target, std::vector<ir::Arg> args, ir::TensorType type) {
    out_.nodes.push_back(ir::Node{.target = std::move(target), .args = std::move(args), .outputs = {std::move(type)}});
    return ir::Arg{ir::ValueRef{static_cast<int>(out_.nodes.size()) - 1, 0}};
  }

  ir::Graph& out_;
  ir::DeviceType device_;
};

}  // namespace

absl::StatusOr<bool> ReshapeSinking::Run(ir::Graph& graph) {
  return RebuildGraph(graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
    std::optional<ir::Arg> moved = Sinker(out, device_).Sink(node);
    if (!moved) return std::nullopt;
    return std::vector<ir::Arg>{*moved};
  });
}

}  // namespace tccd::codegen

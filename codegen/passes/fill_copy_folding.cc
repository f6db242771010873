// FillCopyFolding (see fill_copy_folding.h).
#include "codegen/passes/fill_copy_folding.h"

#include <algorithm>
#include <optional>
#include <set>
#include <vector>

#include "codegen/passes/graph_rebuild.h"
#include "codegen/passes/index_ops.h"

namespace tccd::codegen {
namespace {

// full(sizes, value, dtype=, device=) of `type` (contiguous): the value of a sized fill.
std::vector<ir::Arg> EmitFull(ir::Graph& out, const ir::TensorType& type, const ir::Arg& value) {
  return {EmitOp(out, "aten::full.default", {IntListArg(type.sizes), value}, type,
                 {{"dtype", ir::Arg{type.dtype}}, {"device", ir::Arg{type.device}}})};
}

bool IsNumber(const ir::Arg& a) {
  return std::holds_alternative<int64_t>(a.v) || std::holds_alternative<double>(a.v) ||
         std::holds_alternative<bool>(a.v);
}

// The fill value of new_zeros/new_ones/new_full(self, size[, value]) with a non-empty size.
std::optional<ir::Arg> NewFillValue(const ir::Node& node) {
  if (node.args.size() < 2) return std::nullopt;
  const auto* size = std::get_if<ir::ArgList>(&node.args[1].v);
  if (size == nullptr || size->empty()) return std::nullopt;  // 0-dim: InlineScalarFills
  if (node.target == "aten::new_zeros.default") return ir::Arg{int64_t{0}};
  if (node.target == "aten::new_ones.default") return ir::Arg{int64_t{1}};
  if (node.target == "aten::new_full.default" && node.args.size() >= 3 && IsNumber(node.args[2]))
    return node.args[2];
  return std::nullopt;
}

// The number a value of the rebuilt graph holds everywhere: a full(sizes, number) of `type`'s
// sizes and dtype, or a number argument itself.
std::optional<ir::Arg> ConstantOf(const ir::Graph& out, const ir::Arg& a,
                                  const std::vector<int64_t>& sizes, ir::DType dtype) {
  if (IsNumber(a)) return a;
  if (!a.is_ref() || a.ref().is_input()) return std::nullopt;
  const ir::Node& n = out.nodes[a.ref().node];
  if (n.target != "aten::full.default" || n.args.size() < 2 || !IsNumber(n.args[1]) ||
      n.outputs[0].sizes != sizes || n.outputs[0].dtype != dtype)
    return std::nullopt;
  return n.args[1];
}

double NumberOf(const ir::Arg& a) {
  if (auto* i = std::get_if<int64_t>(&a.v)) return static_cast<double>(*i);
  if (auto* b = std::get_if<bool>(&a.v)) return *b ? 1 : 0;
  return std::get<double>(a.v);
}

int64_t IntAt(const ir::Node& n, size_t i, const char* name, int64_t fallback) {
  const ir::Arg* a = i < n.args.size() ? &n.args[i] : n.kwarg(name);
  if (a == nullptr || a->is_none()) return fallback;
  const auto* v = std::get_if<int64_t>(&a->v);
  return v ? *v : fallback;
}

int64_t WrapDim(int64_t d, int64_t rank) { return d < 0 ? d + rank : d; }

// slice_scatter / select_scatter with constant operands (full of the operand's shape) take the
// number instead (index_ops.cc lowers it as a constant): the fill is then no kernel of its own.
// Applied only when the rewritten node is still an index op (otherwise it would be an extern
// step, and ATen wants a tensor there).
std::optional<ir::Node> InlineScatterConstants(const ir::Graph& out, const ir::Node& node) {
  const bool slice = node.target == "aten::slice_scatter.default";
  if (!slice && node.target != "aten::select_scatter.default") return std::nullopt;
  if (node.args.size() < 2) return std::nullopt;
  const ir::TensorType& type = node.outputs[0];
  ir::Node rewritten = node;
  bool changed = false;
  if (node.args[0].is_ref()) {
    if (auto c = ConstantOf(out, node.args[0], type.sizes, type.dtype)) {
      rewritten.args[0] = *c;
      changed = true;
    }
  }
  if (!slice && node.args[1].is_ref()) {
    const ir::TensorType& src = out.type_of(node.args[1].ref());
    if (auto c = ConstantOf(out, node.args[1], src.sizes, type.dtype)) {
      rewritten.args[1] = *c;
      changed = true;
    }
  }
  if (!changed || !IsIndexOp(out, rewritten)) return std::nullopt;
  return rewritten;
}

// select_scatter(Y, c, d, i) where Y = slice_scatter(c, src, d, start, end) and i lies outside
// [start, end): row i of Y already holds c (the shift's `shifted[..., 0] = start_token` when the
// start token is the pad value the zeros hold). Y's value, or nullopt.
std::optional<ir::Arg> RedundantSelectScatter(const ir::Graph& out, const ir::Node& node) {
  if (node.target != "aten::select_scatter.default" || node.args.size() < 4 ||
      !node.args[0].is_ref() || node.args[0].ref().is_input() || !IsNumber(node.args[1]))
    return std::nullopt;
  const ir::Node& y = out.nodes[node.args[0].ref().node];
  if (y.target != "aten::slice_scatter.default" || y.args.size() < 2 || !IsNumber(y.args[0]) ||
      !y.args[1].is_ref() || NumberOf(y.args[0]) != NumberOf(node.args[1]))
    return std::nullopt;
  const int64_t rank = node.outputs[0].rank();
  const int64_t d = WrapDim(IntAt(node, 2, "dim", 0), rank);
  if (WrapDim(IntAt(y, 2, "dim", 0), rank) != d || d < 0 || d >= rank) return std::nullopt;
  const int64_t size = node.outputs[0].sizes[d];
  int64_t i = IntAt(node, 3, "index", -1 - size);
  if (i < 0) i += size;
  int64_t start = IntAt(y, 3, "start", 0);
  start = std::clamp<int64_t>(start < 0 ? start + size : start, 0, size);
  const int64_t end = start + out.type_of(y.args[1].ref()).sizes[d];
  if (i < 0 || i >= size || (i >= start && i < end)) return std::nullopt;
  return node.args[0];
}

// A scatter's `src` that is clone(x) (contiguous or preserved format) reads x: the gather takes
// any strides, and the clone, if nothing else reads it, is dead (one kernel less).
std::optional<ir::Node> ScatterSourceThroughClone(const ir::Graph& out, const ir::Node& node) {
  if ((node.target != "aten::slice_scatter.default" &&
       node.target != "aten::select_scatter.default") ||
      node.args.size() < 2 || !node.args[1].is_ref() || node.args[1].ref().is_input())
    return std::nullopt;
  const ir::Node& c = out.nodes[node.args[1].ref().node];
  if (c.target != "aten::clone.default" || c.args.size() != 1 || !c.args[0].is_ref())
    return std::nullopt;
  for (const ir::NamedArg& kw : c.kwargs)
    if (kw.name != "memory_format") return std::nullopt;
  const ir::TensorType& x = out.type_of(c.args[0].ref());
  if (x.dtype != c.outputs[0].dtype || x.sizes != c.outputs[0].sizes ||
      x.device != c.outputs[0].device)
    return std::nullopt;
  ir::Node rewritten = node;
  rewritten.args[1] = c.args[0];
  if (!IsIndexOp(out, rewritten)) return std::nullopt;
  return rewritten;
}

}  // namespace

absl::StatusOr<bool> FillCopyFolding::Run(ir::Graph& graph) {
  const std::set<int> graph_outputs = ReturnedNodes(graph);
  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        if (node.outputs.size() != 1) return std::nullopt;
        const ir::TensorType& type = node.outputs[0];
        if (ir::TouchesExternOnlyDType(out, node)) return std::nullopt;
        if (std::optional<ir::Arg> value = NewFillValue(node); value && IsPlain(type))
          return EmitFull(out, type, *value);
        // A fill keeps its input's strides (a select of the ids: stride S); its value does not
        // depend on them, so the full is dense unless the caller sees the strides (an output).
        if (node.target == "aten::fill.Scalar" && node.args.size() == 2 && node.args[0].is_ref() &&
            IsNumber(node.args[1]) && type.rank() > 0 &&
            (IsPlain(type) || !graph_outputs.count(id)))
          return EmitFull(out, DenseType(type.dtype, type.sizes, type.device), node.args[1]);
        if (node.target == "aten::slice_scatter.default" ||
            node.target == "aten::select_scatter.default") {
          ir::Node n = node;
          bool rewritten = false;
          if (auto r = InlineScatterConstants(out, n)) n = *r, rewritten = true;
          // Dropped only where no caller sees it: a returned value would alias Y.
          if (!graph_outputs.count(id))
            if (auto r = RedundantSelectScatter(out, n)) return std::vector<ir::Arg>{*r};
          if (auto r = ScatterSourceThroughClone(out, n)) n = *r, rewritten = true;
          if (rewritten) return std::vector<ir::Arg>{AppendNode(out, std::move(n))};
          return std::nullopt;
        }
        if (node.target == "aten::copy.default" && node.args.size() >= 2 && node.args[1].is_ref() &&
            !graph_outputs.count(id)) {
          const ir::TensorType& src = out.type_of(node.args[1].ref());
          if (src.sizes == type.sizes && src.dtype == type.dtype && src.device == type.device)
            return std::vector<ir::Arg>{node.args[1]};
        }
        return std::nullopt;
      });
}

}  // namespace tccd::codegen

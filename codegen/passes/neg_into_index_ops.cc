// NegIntoIndexOps (see neg_into_index_ops.h).
#include "codegen/passes/neg_into_index_ops.h"

#include <optional>
#include <set>
#include <vector>

#include "codegen/passes/graph_rebuild.h"

namespace tccd::codegen {
namespace {

constexpr char kNeg[] = "aten::neg.default";
constexpr char kCat[] = "aten::cat.default";
constexpr char kSliceBackward[] = "aten::slice_backward.default";
constexpr char kAdd[] = "aten::add.Tensor";

const ir::Arg* ArgOf(const ir::Node& node, size_t index, const char* name) {
  if (index < node.args.size()) return &node.args[index];
  return node.kwarg(name);
}

std::optional<int64_t> IntOf(const ir::Arg* a) {
  if (a == nullptr) return std::nullopt;
  if (const auto* i = std::get_if<int64_t>(&a->v)) return *i;
  return std::nullopt;
}

// The value a negated ref negates, when `ref` (in the rebuilt graph) is a single-reader neg.
std::optional<ir::Arg> Negated(const ir::Graph& out, const std::set<int>& single_use_negs,
                               const ir::Arg& arg) {
  if (!arg.is_ref() || arg.ref().is_input() || !single_use_negs.contains(arg.ref().node))
    return std::nullopt;
  const ir::Node& neg = out.nodes[arg.ref().node];
  if (neg.args.size() != 1 || !neg.args[0].is_ref() || !neg.kwargs.empty()) return std::nullopt;
  return neg.args[0];
}

ir::Arg EmitSliceBackward(ir::Graph& out, const ir::Arg& grad, const ir::TensorType& type,
                          int64_t dim, int64_t start, int64_t end) {
  return EmitOp(out, kSliceBackward,
                {grad, IntListArg(type.sizes), ir::Arg{dim}, ir::Arg{start}, ir::Arg{end},
                 ir::Arg{int64_t{1}}},
                type);
}

// cat([.., neg(a), ..], dim) as the sum of every part placed by slice_backward, the negated
// ones negated after their placement; nullopt when the cat does not qualify.
std::optional<ir::Arg> RewriteCat(ir::Graph& out, const std::set<int>& single_use_negs,
                                  const ir::Node& cat) {
  const ir::Arg* list = ArgOf(cat, 0, "tensors");
  if (list == nullptr || cat.outputs.size() != 1) return std::nullopt;
  const auto* parts = std::get_if<ir::ArgList>(&list->v);
  const ir::TensorType& type = cat.outputs[0];
  const int64_t rank = type.rank();
  int64_t dim = IntOf(ArgOf(cat, 1, "dim")).value_or(0);
  if (dim < 0) dim += rank;
  if (parts == nullptr || parts->size() < 2 || dim < 0 || dim >= rank) return std::nullopt;
  bool any_neg = false;
  for (const ir::Arg& p : *parts) {
    if (!p.is_ref()) return std::nullopt;
    const ir::TensorType& t = out.type_of(p.ref());
    if (t.rank() != rank || t.dtype != type.dtype || t.sizes[dim] == 0) return std::nullopt;
    any_neg = any_neg || Negated(out, single_use_negs, p).has_value();
  }
  if (!any_neg) return std::nullopt;
  std::optional<ir::Arg> sum;
  int64_t offset = 0;
  for (const ir::Arg& p : *parts) {
    const int64_t len = out.type_of(p.ref()).sizes[dim];
    const std::optional<ir::Arg> a = Negated(out, single_use_negs, p);
    ir::Arg placed = EmitSliceBackward(out, a ? *a : p, type, dim, offset, offset + len);
    if (a) placed = EmitOp(out, kNeg, {placed}, type);
    sum = sum ? EmitOp(out, kAdd, {*sum, placed}, type) : placed;
    offset += len;
  }
  return sum;
}

}  // namespace

absl::StatusOr<bool> NegIntoIndexOps::Run(ir::Graph& graph) {
  // Readers of every node's outputs (graph outputs count as readers).
  std::vector<int> readers(graph.nodes.size(), 0);
  for (const ir::Node& node : graph.nodes)
    ir::ForEachInput(node, [&](const ir::ValueRef& r) {
      if (!r.is_input()) ++readers[r.node];
    });
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) {
      if (!r.is_input()) readers[r.node] += 2;  // never single-use
    });
  // Single-reader negs, by their index in the rebuilt graph (copied nodes are appended there as
  // they are seen).
  std::set<int> single_use_negs;
  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        if (node.target == kNeg && readers[id] == 1 && node.outputs.size() == 1) {
          single_use_negs.insert(static_cast<int>(out.nodes.size()));
          return std::nullopt;
        }
        if (node.target == kCat) {
          if (std::optional<ir::Arg> v = RewriteCat(out, single_use_negs, node))
            return std::vector<ir::Arg>{*v};
          return std::nullopt;
        }
        if (node.target != kSliceBackward || node.outputs.size() != 1 || node.args.empty())
          return std::nullopt;
        const std::optional<ir::Arg> a = Negated(out, single_use_negs, node.args[0]);
        if (!a || out.type_of(a->ref()).dtype != node.outputs[0].dtype) return std::nullopt;
        ir::Node placed = node;
        placed.args[0] = *a;
        const ir::Arg v = AppendNode(out, std::move(placed));
        return std::vector<ir::Arg>{EmitOp(out, kNeg, {v}, node.outputs[0])};
      });
}

}  // namespace tccd::codegen

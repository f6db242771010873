// PaddedOutputViews (see padded_output_views.h).
#include "codegen/passes/padded_output_views.h"

#include <optional>

#include "base/status_macros.h"
#include "codegen/passes/dead_code_elimination.h"
#include "codegen/passes/graph_rebuild.h"

namespace tccd::codegen {
namespace {

std::optional<int64_t> IntAt(const ir::Node& n, size_t i) {
  if (i >= n.args.size()) return std::nullopt;
  if (const auto* v = std::get_if<int64_t>(&n.args[i].v)) return *v;
  return std::nullopt;
}

// Views that only rename the layout (no copy ever): the chain between the copy and the output.
// reshape is left out on purpose: on a strided input it may copy.
bool IsPureView(const ir::Node& n) {
  return (n.target == "aten::view.default" || n.target == "aten::_unsafe_view.default" ||
          n.target == "aten::alias.default") &&
         !n.args.empty() && n.args[0].is_ref() && n.outputs.size() == 1;
}

// The strided slice [T, N] {N8, 1} whose contiguous copy `r` is (clone(slice(p, 1, 0, N, 1)) of
// a 2-D contiguous [T, N8] value, as PadMatmulOperands emits it), or nullopt.
std::optional<ir::ValueRef> PaddedColumnsOf(const ir::Graph& graph, const ir::ValueRef& r) {
  if (r.is_input()) return std::nullopt;
  const ir::Node& clone = graph.nodes[r.node];
  if (clone.target != "aten::clone.default" || clone.args.size() != 1 || !clone.args[0].is_ref() ||
      clone.args[0].ref().is_input() || clone.outputs.size() != 1)
    return std::nullopt;
  if (const ir::Arg* mf = clone.kwarg("memory_format");
      mf != nullptr && !std::holds_alternative<ir::NoneArg>(mf->v))
    return std::nullopt;
  const ir::ValueRef s = clone.args[0].ref();
  const ir::Node& slice = graph.nodes[s.node];
  if (slice.target != "aten::slice.Tensor" || !slice.args[0].is_ref() || IntAt(slice, 1) != 1 ||
      IntAt(slice, 2) != 0 || (slice.args.size() > 4 && IntAt(slice, 4) != 1))
    return std::nullopt;
  const ir::TensorType& st = graph.type_of(s);
  const ir::TensorType& ct = clone.outputs[0];
  const ir::TensorType& pt = graph.type_of(slice.args[0].ref());
  if (st.rank() != 2 || pt.rank() != 2 || !pt.IsContiguous() || pt.storage_offset != 0 ||
      st.storage_offset != 0 || st.sizes != ct.sizes ||
      st.strides != std::vector<int64_t>{pt.sizes[1], 1} || pt.sizes[0] != st.sizes[0] ||
      pt.sizes[1] <= st.sizes[1] || !ct.IsContiguous())
    return std::nullopt;
  return s;
}

}  // namespace

absl::StatusOr<bool> PaddedOutputViews::Run(ir::Graph& graph) {
  if (free_outputs_.empty()) return false;
  // A value returned at a position whose strides are promised keeps them everywhere.
  std::set<ir::ValueRef> promised;
  for (size_t i = 0; i < graph.outputs.size(); ++i)
    if (!free_outputs_.contains(static_cast<int>(i)))
      ir::ForEachRef(graph.outputs[i], [&](const ir::ValueRef& r) { promised.insert(r); });
  // Readers of each node's values: nodes, and graph outputs (counted once per position).
  std::vector<int> readers(graph.nodes.size(), 0);
  for (const ir::Node& node : graph.nodes)
    ir::ForEachInput(node, [&](const ir::ValueRef& r) {
      if (!r.is_input()) ++readers[r.node];
    });
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) {
      if (!r.is_input()) ++readers[r.node];
    });
  bool changed = false;
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    if (!free_outputs_.contains(static_cast<int>(i)) || !graph.outputs[i].is_ref()) continue;
    const ir::ValueRef out = graph.outputs[i].ref();
    if (promised.contains(out)) continue;
    // out = view(...view(copy)...): walk to the copy. Each link must have one reader (the next
    // link, the output last): only then does the copy die. Were it kept for another reader, the
    // padded product would stay alive beside it (BERT's training forward saves a view of its
    // logits for the backward: 477 MiB more at batch 16 for nothing).
    ir::ValueRef base = out;
    int views = 0;
    bool single = true;
    while (!base.is_input() && IsPureView(graph.nodes[base.node])) {
      single = single && readers[base.node] == 1;
      base = graph.nodes[base.node].args[0].ref();
      ++views;
    }
    if (!single || base.is_input() || readers[base.node] != 1) continue;
    const std::optional<ir::ValueRef> columns = PaddedColumnsOf(graph, base);
    if (!columns) continue;
    const ir::TensorType& slice = graph.type_of(*columns);
    if (views == 0) {
      graph.outputs[i] = ir::Arg{*columns};
      changed = true;
      continue;
    }
    // The output becomes a view of the slice with the padded row stride (the old chain is dead).
    const ir::Node& last = graph.nodes[out.node];
    const std::optional<std::vector<int64_t>> strides = PaddedRowViewStrides(
        last.outputs[0].sizes, slice.sizes[0], slice.sizes[1], slice.strides[0]);
    if (!strides || last.outputs[0].storage_offset != 0) continue;
    ir::TensorType type = last.outputs[0];
    type.strides = *strides;
    const ir::Arg size_arg = IntListArg(type.sizes);
    graph.nodes.push_back(ir::Node{.target = "aten::view.default",
                                   .args = {ir::Arg{*columns}, size_arg},
                                   .outputs = {std::move(type)}});
    graph.outputs[i] = ir::Arg{ir::ValueRef{static_cast<int>(graph.nodes.size()) - 1, 0}};
    changed = true;
  }
  if (!changed) return false;
  // The copies (and views of them) nobody reads any more.
  RETURN_IF_ERROR(DeadCodeElimination().Run(graph).status());
  return true;
}

}  // namespace tccd::codegen

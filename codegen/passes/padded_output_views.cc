// PaddedOutputViews (see padded_output_views.h).
#include "codegen/passes/padded_output_views.h"

#include <functional>
#include <optional>

#include "base/status_macros.h"
#include "codegen/passes/dead_code_elimination.h"
#include "codegen/passes/graph_rebuild.h"
#include "codegen/ops/op_properties.h"

namespace tccd::codegen {
namespace {

std::optional<int64_t> IntAt(const ir::Node& n, size_t i) {
  if (i >= n.args.size()) return std::nullopt;
  if (const auto* v = std::get_if<int64_t>(&n.args[i].v)) return *v;
  return std::nullopt;
}

// Views that only rename the layout (no copy ever): the chain between the copy and the output.
// reshape is left out on purpose: on a strided input it may copy (category kReshape, not kView).
bool IsPureView(const ir::Node& n) {
  const OpProperties p = PropertiesOf(n.target);
  return p.category == OpCategory::kView &&
         (p.view == ViewKind::kReshape || p.view == ViewKind::kIdentity) && !n.args.empty() &&
         n.args[0].is_ref() && n.outputs.size() == 1;
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

// The copy's readers, rewritten to read the padded columns instead (see the header): pure views
// (re-declared with the padded row stride, and their own readers likewise) and kernels' ops
// (pointwise, reductions: they read any strides). Nothing when another reader (an extern view
// that might copy, a promised output) needs the contiguous copy.
struct Redirect {
  std::vector<std::pair<int, ir::TensorType>> views;  // view node -> its new output type
  std::vector<int> readers;                           // other nodes reading the copy or a view
};

std::optional<Redirect> PlanRedirect(const ir::Graph& graph, int copy,
                                     const ir::TensorType& columns,
                                     const std::vector<std::vector<int>>& readers,
                                     const std::set<ir::ValueRef>& promised) {
  Redirect r;
  std::vector<int> work = {copy};
  std::set<int> seen = {copy};
  while (!work.empty()) {
    const int v = work.back();
    work.pop_back();
    if (promised.contains(ir::ValueRef{v, 0})) return std::nullopt;
    for (int reader : readers[v]) {
      if (!seen.insert(reader).second) continue;
      const ir::Node& n = graph.nodes[reader];
      if (IsPureView(n) && n.args[0].ref() == ir::ValueRef{v, 0}) {
        const ir::TensorType& t = n.outputs[0];
        const std::optional<std::vector<int64_t>> strides =
            PaddedRowViewStrides(t.sizes, columns.sizes[0], columns.sizes[1], columns.strides[0]);
        if (!strides || t.storage_offset != 0) return std::nullopt;
        ir::TensorType padded = t;
        padded.strides = *strides;
        r.views.emplace_back(reader, std::move(padded));
        work.push_back(reader);
        continue;
      }
      const OpCategory c = PropertiesOf(n.target).category;
      if (c != OpCategory::kPointwise && c != OpCategory::kReduction) return std::nullopt;
      r.readers.push_back(reader);
    }
  }
  return r;
}

}  // namespace

absl::StatusOr<bool> PaddedOutputViews::Run(ir::Graph& graph) {
  if (free_outputs_.empty()) return false;
  // A value returned at a position whose strides are promised keeps them everywhere.
  std::set<ir::ValueRef> promised;
  for (size_t i = 0; i < graph.outputs.size(); ++i)
    if (!free_outputs_.contains(static_cast<int>(i)))
      ir::ForEachRef(graph.outputs[i], [&](const ir::ValueRef& r) { promised.insert(r); });
  // The nodes reading each node's values (once per reader).
  std::vector<std::vector<int>> readers(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    std::set<int> read;
    ir::ForEachInput(graph.nodes[i], [&](const ir::ValueRef& r) {
      if (!r.is_input()) read.insert(r.node);
    });
    for (int n : read) readers[n].push_back(static_cast<int>(i));
  }
  bool changed = false;
  std::set<int> redirected;  // copies already rewritten (two outputs may view one)
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    if (!free_outputs_.contains(static_cast<int>(i)) || !graph.outputs[i].is_ref()) continue;
    const ir::ValueRef out = graph.outputs[i].ref();
    if (promised.contains(out)) continue;
    // out = view(...view(copy)...): walk to the copy.
    ir::ValueRef base = out;
    while (!base.is_input() && IsPureView(graph.nodes[base.node]))
      base = graph.nodes[base.node].args[0].ref();
    if (base.is_input() || redirected.contains(base.node)) continue;
    const std::optional<ir::ValueRef> columns = PaddedColumnsOf(graph, base);
    if (!columns) continue;
    // Every reader of the copy reads the padded columns instead, so that the copy dies: were it
    // kept for one (BERT's loss reads its logits), the padded product would stay alive beside it
    // (477 MiB more at batch 16).
    const std::optional<Redirect> plan =
        PlanRedirect(graph, base.node, graph.type_of(*columns), readers, promised);
    if (!plan) continue;
    for (const auto& [view, type] : plan->views) {
      ir::Node& n = graph.nodes[view];
      if (n.args[0].ref() == base) n.args[0] = ir::Arg{*columns};
      n.outputs[0] = type;
    }
    const ir::ValueRef copy = base, slice = *columns;
    std::function<void(ir::Arg&)> to_columns = [&](ir::Arg& a) {
      if (a.is_ref() && a.ref() == copy) {
        a = ir::Arg{slice};
      } else if (auto* list = std::get_if<ir::ArgList>(&a.v)) {
        for (ir::Arg& item : *list) to_columns(item);
      }
    };
    for (int reader : plan->readers) {
      for (ir::Arg& a : graph.nodes[reader].args) to_columns(a);
      for (ir::NamedArg& kw : graph.nodes[reader].kwargs) to_columns(kw.value);
    }
    for (ir::Arg& a : graph.outputs) to_columns(a);
    redirected.insert(base.node);
    changed = true;
  }
  if (!changed) return false;
  // The copies nobody reads any more.
  RETURN_IF_ERROR(DeadCodeElimination().Run(graph).status());
  return true;
}

}  // namespace tccd::codegen

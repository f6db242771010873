// ReshapeHoisting (see reshape_hoisting.h).
#include "codegen/passes/reshape_hoisting.h"

#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "codegen/passes/graph_rebuild.h"
#include "codegen/passes/pointwise_ops.h"
#include "codegen/passes/reduction_ops.h"

namespace tccd::codegen {
namespace {

// Whether `node` becomes (part of) a generated kernel: its outputs are not what this pass reads.
bool BecomesKernel(const ir::Graph& graph, const ir::Node& node) {
  return IsPointwiseOp(graph, node) || ReductionAxesOf(graph, node).num_reduced_dims > 0;
}

// Whether `t` has padded rows (a graph input returned by a forward as the strided view of a
// padded product: GPT-2's logits with TCCD_PADDED_OUTPUTS) that a reshape to `to` keeps whole:
// the view then needs no copy either.
bool RowsKeptOver(const ir::TensorType& t, const std::vector<int64_t>& to) {
  const std::optional<int64_t> row_stride = PaddedRowStride(t);
  if (!row_stride) return false;
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < t.rank(); ++d) rows *= t.sizes[d];
  return PaddedRowViewStrides(to, rows, t.sizes.back(), *row_stride).has_value();
}

// The reshape nodes (ids of `graph`) to hoist their pointwise producer below.
std::set<int> Candidates(const ir::Graph& graph) {
  std::vector<std::vector<int>> readers(graph.nodes.size());
  for (int id = 0; id < static_cast<int>(graph.nodes.size()); ++id)
    ir::ForEachInput(graph.nodes[id], [&](const ir::ValueRef& r) {
      if (!r.is_input()) readers[r.node].push_back(id);
    });
  std::set<int> outputs;
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) {
      if (!r.is_input()) outputs.insert(r.node);
    });

  // Reshapes that qualify on their own; a producer read by several (a layer norm's gradient,
  // cast to f32, read as [batch, seq, width] by the norm's backward and as [chunks, rows, width]
  // by its weight-gradient partials) is copied below each of them: every reader's kernel then
  // casts the bf16 matmul output itself instead of reading an f32 copy written for them.
  std::set<int> qualified;
  for (int id = 0; id < static_cast<int>(graph.nodes.size()); ++id) {
    const ir::Node& reshape = graph.nodes[id];
    if (!IsReshapeTarget(reshape.target) || reshape.args.empty() || !reshape.args[0].is_ref())
      continue;
    if (reshape.outputs.size() != 1 || !IsPlain(reshape.outputs[0]) || outputs.count(id) ||
        readers[id].empty())
      continue;
    const ir::ValueRef source = reshape.args[0].ref();
    if (source.is_input() || outputs.count(source.node)) continue;
    const ir::Node& op = graph.nodes[source.node];
    if (op.outputs.size() != 1 || !IsPlain(op.outputs[0]) || !IsPointwiseOp(graph, op)) continue;
    bool ok = true;
    for (int reader : readers[id]) ok = ok && BecomesKernel(graph, graph.nodes[reader]);
    ir::ForEachInput(op, [&](const ir::ValueRef& r) {
      const ir::TensorType& t = graph.type_of(r);
      if (t.rank() == 0) return;
      ok = ok && t.sizes == op.outputs[0].sizes &&
           (IsPlain(t) || RowsKeptOver(t, reshape.outputs[0].sizes)) &&
           (r.is_input() || !BecomesKernel(graph, graph.nodes[r.node]));
    });
    for (const ir::NamedArg& kw : op.kwargs) ok = ok && !kw.value.is_ref();
    if (ok) qualified.insert(id);
  }
  std::set<int> chosen;
  for (int id : qualified) {
    bool all = true;
    for (int reader : readers[graph.nodes[id].args[0].ref().node])
      all = all && qualified.count(reader);
    if (all) chosen.insert(id);
  }
  return chosen;
}

}  // namespace

absl::StatusOr<bool> ReshapeHoisting::Run(ir::Graph& graph) {
  const std::set<int> chosen = Candidates(graph);
  if (chosen.empty()) return false;
  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& reshape) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        if (!chosen.count(id)) return std::nullopt;
        // The op was copied unchanged (read only by reshapes that each take a copy of it; DCE
        // drops it).
        ir::Node op = out.nodes[reshape.args[0].ref().node];
        const std::vector<int64_t>& to = reshape.outputs[0].sizes;
        for (ir::Arg& a : op.args) {
          if (!a.is_ref() || out.type_of(a.ref()).rank() == 0) continue;
          ir::TensorType viewed = out.type_of(a.ref());
          // Padded rows stay padded (RowsKeptOver): the same rows, regrouped.
          std::optional<std::vector<int64_t>> strides;
          if (const std::optional<int64_t> row_stride = PaddedRowStride(viewed);
              row_stride && !IsPlain(viewed))
            strides = PaddedRowViewStrides(to, viewed.numel() / viewed.sizes.back(),
                                           viewed.sizes.back(), *row_stride);
          viewed.sizes = to;
          viewed.strides = strides ? *strides : ir::ContiguousStrides(to);
          a = AppendNode(out, ir::Node{.target = "aten::view.default",
                                       .args = {a, IntListArg(to)},
                                       .outputs = {viewed}});
        }
        op.outputs[0].sizes = to;
        op.outputs[0].strides = ir::ContiguousStrides(to);
        return std::vector<ir::Arg>{AppendNode(out, std::move(op))};
      });
}

}  // namespace tccd::codegen

// ReductionDimsToRows (see reduction_dims_to_rows.h).
#include "codegen/passes/reduction_dims_to_rows.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "codegen/passes/reduction_ops.h"

namespace tccd::codegen {
namespace {

// The reductions whose args are (x, dims, [keepdim]) with keepdim positional or a keyword.
bool IsDimReduction(const std::string& target) {
  return target == "aten::sum.dim_IntList" || target == "aten::mean.dim" ||
         target == "aten::amax.default" || target == "aten::amin.default" ||
         target == "aten::var.correction" || target == "aten::var_mean.correction";
}

ir::Arg IntListArg(const std::vector<int64_t>& values) {
  ir::ArgList list;
  for (int64_t v : values) list.push_back(ir::Arg{v});
  return ir::Arg{std::move(list)};
}

// The sorted, normalised, distinct reduced dims of `node` (args[1] a list of ints); nullopt when
// the dims are not a non-empty positional int list in range.
std::optional<std::vector<int64_t>> ReducedDimSet(const ir::Node& node, int64_t rank) {
  if (node.args.size() < 2) return std::nullopt;
  const auto* list = std::get_if<ir::ArgList>(&node.args[1].v);
  if (list == nullptr || list->empty()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const ir::Arg& a : *list) {
    const auto* d = std::get_if<int64_t>(&a.v);
    if (d == nullptr || *d < -rank || *d >= rank) return std::nullopt;
    dims.push_back(*d < 0 ? *d + rank : *d);
  }
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  return dims;
}

// keepdim: positional index 2 or the keyword; false when absent. nullopt when it is not a bool.
std::optional<bool> KeepDim(const ir::Node& node) {
  const ir::Arg* a = node.args.size() > 2 ? &node.args[2] : node.kwarg("keepdim");
  if (a == nullptr) return false;
  if (const auto* b = std::get_if<bool>(&a->v)) return *b;
  return std::nullopt;
}

void SetKeepDimFalse(ir::Node& node) {
  if (node.args.size() > 2) {
    node.args[2] = ir::Arg{false};
    return;
  }
  std::erase_if(node.kwargs, [](const ir::NamedArg& kw) { return kw.name == "keepdim"; });
}

void Remap(ir::Arg& arg, const absl::flat_hash_map<std::pair<int, int>, ir::ValueRef>& map) {
  if (arg.is_ref()) {
    ir::ValueRef& r = std::get<ir::ValueRef>(arg.v);
    if (!r.is_input()) r = map.at({r.node, r.output});
  } else if (auto* list = std::get_if<ir::ArgList>(&arg.v)) {
    for (ir::Arg& a : *list) Remap(a, map);
  }
}

// The permutation [reduced dims by decreasing stride, then the kept dims] when x is dense (no
// overlap, no broadcast) and every kept dim is inner in memory to every reduced dim, with the kept
// dims in memory in their logical order (so the column kernel's [kept] output is the rows form's
// contiguous one); nullopt otherwise. The rows form would read such an x one element per kept
// stride (channels-last C apart); the column form reads whole rows of the kept dims.
std::optional<std::vector<int64_t>> MemoryOrderedColumns(const ir::TensorType& x,
                                                         const std::vector<int64_t>& dims,
                                                         const std::vector<int64_t>& kept) {
  const int64_t rank = x.rank();
  if (x.strides.size() != x.sizes.size() || x.numel() == 0) return std::nullopt;
  // Dense: some order of the dims of size > 1 makes x contiguous.
  std::vector<int64_t> order;
  for (int64_t d = 0; d < rank; ++d)
    if (x.sizes[d] > 1) order.push_back(d);
  std::sort(order.begin(), order.end(),
            [&](int64_t a, int64_t b) { return x.strides[a] > x.strides[b]; });
  int64_t expected = 1;
  for (size_t i = order.size(); i-- > 0;) {
    if (x.strides[order[i]] != expected) return std::nullopt;
    expected *= x.sizes[order[i]];
  }
  int64_t max_kept = -1, min_reduced = -1;
  for (int64_t d : kept)
    if (x.sizes[d] > 1) max_kept = std::max(max_kept, x.strides[d]);
  for (int64_t d : dims)
    if (x.sizes[d] > 1)
      min_reduced = min_reduced < 0 ? x.strides[d] : std::min(min_reduced, x.strides[d]);
  if (max_kept < 0 || min_reduced < 0 || max_kept >= min_reduced) return std::nullopt;
  // Kept dims in their logical order must be in memory order too (decreasing strides).
  int64_t last = -1;
  for (int64_t d : kept) {
    if (x.sizes[d] == 1) continue;
    if (last >= 0 && x.strides[d] >= last) return std::nullopt;
    last = x.strides[d];
  }
  std::vector<int64_t> perm = dims;
  std::stable_sort(perm.begin(), perm.end(),
                   [&](int64_t a, int64_t b) { return x.strides[a] > x.strides[b]; });
  perm.insert(perm.end(), kept.begin(), kept.end());
  return perm;
}

}  // namespace

absl::StatusOr<bool> ReductionDimsToRows::Run(ir::Graph& graph) {
  ir::Graph out;
  out.inputs = graph.inputs;
  // (old node, output) -> its value in `out`.
  absl::flat_hash_map<std::pair<int, int>, ir::ValueRef> map;
  bool changed = false;
  for (int id = 0; id < static_cast<int>(graph.nodes.size()); ++id) {
    ir::Node node = std::move(graph.nodes[id]);
    for (ir::Arg& a : node.args) Remap(a, map);
    for (ir::NamedArg& kw : node.kwargs) Remap(kw.value, map);
    auto keep_original = [&] {
      const int new_id = static_cast<int>(out.nodes.size());
      for (int o = 0; o < static_cast<int>(node.outputs.size()); ++o)
        map[{id, o}] = ir::ValueRef{new_id, o};
      out.nodes.push_back(std::move(node));
    };
    if (!IsDimReduction(node.target) || node.args.empty() || !node.args[0].is_ref() ||
        ReductionAxesOf(out, node).num_reduced_dims > 0) {
      keep_original();
      continue;
    }
    // A copy: out.nodes grows below.
    const ir::TensorType x = out.type_of(node.args[0].ref());
    const int64_t rank = x.rank();
    const std::optional<std::vector<int64_t>> dims = ReducedDimSet(node, rank);
    const std::optional<bool> keepdim = KeepDim(node);
    if (!dims || !keepdim || static_cast<int64_t>(dims->size()) >= rank) {
      keep_original();
      continue;
    }
    // Kept dims first, in order, then the reduced ones (rows); or, when x's memory order puts
    // the kept dims innermost in their own order (a sum over N, H, W of a channels-last map:
    // C innermost), the reduced dims in memory order, then the kept ones (columns).
    std::vector<int64_t> perm, kept_sizes, kept;
    for (int64_t d = 0; d < rank; ++d)
      if (!std::binary_search(dims->begin(), dims->end(), d)) {
        kept.push_back(d);
        kept_sizes.push_back(x.sizes[d]);
      }
    // The column form where x's layout asks for it and the backend lowers it, else the rows.
    std::vector<std::pair<std::vector<int64_t>, bool>> forms;
    if (std::optional<std::vector<int64_t>> column_order = MemoryOrderedColumns(x, *dims, kept))
      forms.emplace_back(*std::move(column_order), true);
    perm = kept;
    perm.insert(perm.end(), dims->begin(), dims->end());
    forms.emplace_back(perm, false);
    std::optional<ir::Node> rewritten;
    for (const auto& [form_perm, columns] : forms) {
      ir::Node permute{.target = "aten::permute.default",
                       .args = {node.args[0], IntListArg(form_perm)}};
      ir::TensorType permuted = x;
      for (int64_t i = 0; i < rank; ++i) {
        permuted.sizes[i] = x.sizes[form_perm[i]];
        permuted.strides[i] = x.strides[form_perm[i]];
      }
      permute.outputs = {permuted};
      ir::Node rows = node;
      const int permute_id = static_cast<int>(out.nodes.size());
      rows.args[0] = ir::Arg{ir::ValueRef{permute_id, 0}};
      std::vector<int64_t> reduced;
      const int64_t first = columns ? 0 : rank - static_cast<int64_t>(dims->size());
      for (int64_t d = first; d < first + static_cast<int64_t>(dims->size()); ++d)
        reduced.push_back(d);
      rows.args[1] = IntListArg(reduced);
      SetKeepDimFalse(rows);
      for (ir::TensorType& t : rows.outputs) {
        t.sizes = kept_sizes;
        t.strides = ir::ContiguousStrides(kept_sizes);
        t.storage_offset = 0;
      }
      // Only when the rewritten node is a row (column) reduction the backend lowers.
      out.nodes.push_back(std::move(permute));
      if (ReductionAxesOf(out, rows) == ReductionAxes{static_cast<int>(dims->size()), columns}) {
        rewritten = std::move(rows);
        break;
      }
      out.nodes.pop_back();
    }
    if (!rewritten) {
      keep_original();
      continue;
    }
    ir::Node& rows = *rewritten;
    const int rows_id = static_cast<int>(out.nodes.size());
    out.nodes.push_back(rows);
    for (int o = 0; o < static_cast<int>(node.outputs.size()); ++o) {
      if (!*keepdim) {
        map[{id, o}] = ir::ValueRef{rows_id, o};
        continue;
      }
      ir::Node view{.target = "aten::view.default",
                    .args = {ir::Arg{ir::ValueRef{rows_id, o}}, IntListArg(node.outputs[o].sizes)}};
      ir::TensorType viewed = node.outputs[o];
      viewed.strides = ir::ContiguousStrides(viewed.sizes);
      viewed.storage_offset = 0;
      view.outputs = {viewed};
      map[{id, o}] = ir::ValueRef{static_cast<int>(out.nodes.size()), 0};
      out.nodes.push_back(std::move(view));
    }
    changed = true;
  }
  if (!changed) {
    // Nodes were moved out; put them back untouched (every map entry is the identity).
    for (size_t id = 0; id < out.nodes.size(); ++id) graph.nodes[id] = std::move(out.nodes[id]);
    return false;
  }
  for (ir::Arg& a : graph.outputs) Remap(a, map);
  out.outputs = std::move(graph.outputs);
  graph = std::move(out);
  return true;
}

}  // namespace tccd::codegen

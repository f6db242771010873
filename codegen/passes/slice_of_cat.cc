// SliceOfCat (see slice_of_cat.h).
#include "codegen/passes/slice_of_cat.h"

#include <algorithm>
#include <optional>
#include <set>
#include <vector>

#include "codegen/passes/graph_rebuild.h"

namespace tccd::codegen {
namespace {

const ir::Arg* ArgOf(const ir::Node& node, size_t index, const char* name) {
  if (index < node.args.size()) return &node.args[index];
  return node.kwarg(name);
}

// An int argument; `fallback` when absent or None; nullopt when something else.
std::optional<int64_t> IntOr(const ir::Arg* a, int64_t fallback) {
  if (a == nullptr || a->is_none()) return fallback;
  if (const auto* i = std::get_if<int64_t>(&a->v)) return *i;
  return std::nullopt;
}

// slice(x, dim, lo, hi) of `x` (a value of `out`) as a view node; x itself for the whole dim.
ir::Arg EmitSlice(ir::Graph& out, const ir::Arg& x, int64_t dim, int64_t lo, int64_t hi) {
  ir::TensorType t = out.type_of(x.ref());
  if (lo == 0 && hi == t.sizes[dim]) return x;
  t.storage_offset += lo * t.strides[dim];
  t.sizes[dim] = hi - lo;
  return EmitOp(out, "aten::slice.Tensor", {x, ir::Arg{dim}, ir::Arg{lo}, ir::Arg{hi}}, t);
}

// The rewritten value of `slice` (its input a cat of `out`), or nullopt.
std::optional<ir::Arg> SliceThroughCat(ir::Graph& out, const ir::Node& slice) {
  if (slice.outputs.size() != 1 || slice.args.empty() || !slice.args[0].is_ref() ||
      slice.args[0].ref().is_input())
    return std::nullopt;
  const ir::Node& cat = out.nodes[slice.args[0].ref().node];
  if (cat.target != "aten::cat.default" || cat.outputs.size() != 1) return std::nullopt;
  const ir::TensorType& cat_type = cat.outputs[0];
  const int64_t rank = cat_type.rank();
  if (rank == 0) return std::nullopt;
  std::optional<int64_t> cat_dim = IntOr(ArgOf(cat, 1, "dim"), 0);
  std::optional<int64_t> dim = IntOr(ArgOf(slice, 1, "dim"), 0);
  std::optional<int64_t> start = IntOr(ArgOf(slice, 2, "start"), 0);
  std::optional<int64_t> end = IntOr(ArgOf(slice, 3, "end"), INT64_MAX);
  std::optional<int64_t> step = IntOr(ArgOf(slice, 4, "step"), 1);
  if (!cat_dim || !dim || !start || !end || step != 1) return std::nullopt;
  const int64_t d = *dim < 0 ? *dim + rank : *dim;
  if (d != (*cat_dim < 0 ? *cat_dim + rank : *cat_dim) || d < 0 || d >= rank) return std::nullopt;
  const int64_t size = cat_type.sizes[d];
  auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + size : v, 0, size); };
  const int64_t lo = clamp(*start), hi = std::max(lo, clamp(*end));
  if (hi - lo != slice.outputs[0].sizes[d]) return std::nullopt;  // metadata disagrees: leave it
  const ir::Arg* list = ArgOf(cat, 0, "tensors");
  const auto* parts = list ? std::get_if<ir::ArgList>(&list->v) : nullptr;
  if (parts == nullptr || parts->empty()) return std::nullopt;
  for (const ir::Arg& p : *parts) {
    if (!p.is_ref()) return std::nullopt;
    const ir::TensorType& t = out.type_of(p.ref());
    if (t.rank() != rank || t.dtype != cat_type.dtype || t.device != cat_type.device)
      return std::nullopt;
  }
  // The parts' slices that overlap [lo, hi).
  std::vector<ir::Arg> pieces;
  int64_t at = 0;
  for (const ir::Arg& p : *parts) {
    const int64_t n = out.type_of(p.ref()).sizes[d];
    const int64_t a = std::max(lo, at), b = std::min(hi, at + n);
    if (a < b) pieces.push_back(EmitSlice(out, p, d, a - at, b - at));
    at += n;
  }
  if (at != size || pieces.empty()) return std::nullopt;
  if (pieces.size() == 1) return pieces[0];
  ir::TensorType type = DenseType(cat_type.dtype, slice.outputs[0].sizes, cat_type.device);
  return EmitOp(out, "aten::cat.default", {ir::Arg{ir::ArgList(pieces)}, ir::Arg{d}}, type);
}

// The rewritten value of `slice` (its input a constant_pad_nd of `out`), or nullopt.
std::optional<ir::Arg> SliceThroughPad(ir::Graph& out, const ir::Node& slice) {
  if (slice.outputs.size() != 1 || slice.args.empty() || !slice.args[0].is_ref() ||
      slice.args[0].ref().is_input())
    return std::nullopt;
  const ir::Node& pad = out.nodes[slice.args[0].ref().node];
  if (pad.target != "aten::constant_pad_nd.default" || pad.outputs.size() != 1 ||
      pad.args.size() < 2 || !pad.args[0].is_ref() || !pad.kwargs.empty())
    return std::nullopt;
  const ir::TensorType& pad_type = pad.outputs[0];
  const ir::TensorType& x_type = out.type_of(pad.args[0].ref());
  const int64_t rank = pad_type.rank();
  const auto* pads_list = std::get_if<ir::ArgList>(&pad.args[1].v);
  if (rank == 0 || x_type.rank() != rank || pads_list == nullptr || pads_list->size() % 2 != 0 ||
      static_cast<int64_t>(pads_list->size()) > 2 * rank)
    return std::nullopt;
  std::vector<int64_t> pads;
  for (const ir::Arg& a : *pads_list) {
    const auto* v = std::get_if<int64_t>(&a.v);
    if (v == nullptr || *v < 0) return std::nullopt;  // negative pads crop: not handled
    pads.push_back(*v);
  }
  std::optional<int64_t> dim = IntOr(ArgOf(slice, 1, "dim"), 0);
  std::optional<int64_t> start = IntOr(ArgOf(slice, 2, "start"), 0);
  std::optional<int64_t> end = IntOr(ArgOf(slice, 3, "end"), INT64_MAX);
  std::optional<int64_t> step = IntOr(ArgOf(slice, 4, "step"), 1);
  if (!dim || !start || !end || step != 1) return std::nullopt;
  const int64_t d = *dim < 0 ? *dim + rank : *dim;
  if (d < 0 || d >= rank) return std::nullopt;
  // pads lists (low, high) pairs from the last dim backwards.
  const size_t k = static_cast<size_t>(2 * (rank - 1 - d));
  if (k >= pads.size()) return std::nullopt;  // an unpadded dim: an ordinary view
  const int64_t low = pads[k], length = x_type.sizes[d], size = pad_type.sizes[d];
  if (size != low + length + pads[k + 1]) return std::nullopt;  // metadata disagrees
  auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + size : v, 0, size); };
  const int64_t lo = clamp(*start), hi = std::max(lo, clamp(*end));
  if (hi - lo != slice.outputs[0].sizes[d]) return std::nullopt;
  // The tensor's part of the slice, in padded coordinates.
  const int64_t a = std::max(lo, low), b = std::min(hi, low + length);
  if (a >= b) return std::nullopt;  // all padding: left as it is
  ir::Arg part = EmitSlice(out, pad.args[0], d, a - low, b - low);
  pads[k] = a - lo;
  pads[k + 1] = hi - b;
  if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; })) return part;
  std::vector<ir::Arg> args = {part, IntListArg(pads)};
  for (size_t i = 2; i < pad.args.size(); ++i) args.push_back(pad.args[i]);
  return EmitOp(out, "aten::constant_pad_nd.default", std::move(args),
                DenseType(pad_type.dtype, slice.outputs[0].sizes, pad_type.device));
}

// Rewrites every slice that is no graph output through `through`.
bool RewriteSlices(ir::Graph& graph,
                   std::optional<ir::Arg> (*through)(ir::Graph&, const ir::Node&)) {
  const std::set<int> graph_outputs = ReturnedNodes(graph);
  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        if (node.target != "aten::slice.Tensor" || graph_outputs.count(id)) return std::nullopt;
        // Nodes appended by a failed attempt would stay: check first, then emit.
        const size_t before = out.nodes.size();
        std::optional<ir::Arg> v = through(out, node);
        if (!v) {
          out.nodes.resize(before);
          return std::nullopt;
        }
        return std::vector<ir::Arg>{*v};
      });
}

}  // namespace

absl::StatusOr<bool> SliceOfPad::Run(ir::Graph& graph) {
  return RewriteSlices(graph, SliceThroughPad);
}

absl::StatusOr<bool> SliceOfCat::Run(ir::Graph& graph) {
  return RewriteSlices(graph, SliceThroughCat);
}

}  // namespace tccd::codegen

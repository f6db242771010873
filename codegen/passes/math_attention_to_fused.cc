// MathAttentionToFused (see math_attention_to_fused.h).
#include "codegen/passes/math_attention_to_fused.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/ops/op_properties.h"
#include "codegen/passes/graph_rebuild.h"

namespace tccd::codegen {
namespace {

using ir::DType;

bool IsHalf(DType d) { return d == DType::kBF16 || d == DType::kF16; }

// Readers of each node output among the live nodes (graph outputs count as readers). Dead
// readers do not count: the math decomposition leaves an unused bf16 cast of the probabilities
// (dropped by dead-code elimination after this pass). Nodes that may mutate (an in-place
// target, `..._.`, or no outputs) count as live.
class UseCounts {
 public:
  explicit UseCounts(const ir::Graph& g) : counts_(g.nodes.size()) {
    std::vector<bool> live(g.nodes.size(), false);
    auto mark = [&](const ir::ValueRef& r) {
      if (!r.is_input()) live[r.node] = true;
    };
    for (const ir::Arg& a : g.outputs) ir::ForEachRef(a, mark);
    for (size_t i = g.nodes.size(); i-- > 0;) {
      const ir::Node& n = g.nodes[i];
      const size_t dot = n.target.rfind('.');
      const std::string_view base = std::string_view(n.target).substr(0, dot);
      if (n.outputs.empty() || (!base.empty() && base.back() == '_')) live[i] = true;
      if (!live[i]) continue;
      for (const ir::Arg& a : n.args) ir::ForEachRef(a, mark);
      for (const ir::NamedArg& kw : n.kwargs) ir::ForEachRef(kw.value, mark);
    }
    for (size_t i = 0; i < g.nodes.size(); ++i) counts_[i].resize(g.nodes[i].outputs.size());
    auto count = [&](const ir::ValueRef& r) {
      if (!r.is_input()) ++counts_[r.node][r.output];
    };
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (!live[i]) continue;
      for (const ir::Arg& a : g.nodes[i].args) ir::ForEachRef(a, count);
      for (const ir::NamedArg& kw : g.nodes[i].kwargs) ir::ForEachRef(kw.value, count);
    }
    for (const ir::Arg& a : g.outputs) ir::ForEachRef(a, count);
  }
  int of(const ir::ValueRef& r) const { return r.is_input() ? 0 : counts_[r.node][r.output]; }

 private:
  std::vector<std::vector<int>> counts_;
};

// Walks the chain backwards from the final cast; every node it steps into must have the chain
// as its one reader.
class Matcher {
 public:
  Matcher(const ir::Graph& g, const UseCounts& uses) : g_(g), uses_(uses) {}

  // The single-output node making `a`, read once; nullptr otherwise.
  const ir::Node* Producer(const ir::Arg& a) {
    if (!a.is_ref()) return nullptr;
    const ir::ValueRef& r = a.ref();
    if (r.is_input() || r.output != 0 || uses_.of(r) != 1) return nullptr;
    const ir::Node& n = g_.nodes[r.node];
    if (n.outputs.size() != 1 || n.args.empty()) return nullptr;
    return &n;
  }

  // Through same-shape copies and broadcasts that broadcast nothing (the math path's
  // expand + clone of each bmm operand).
  ir::Arg SkipCopies(ir::Arg a) {
    while (const ir::Node* n = Producer(a)) {
      const bool copy = n->target == "aten::clone.default" || n->target == "aten::alias.default" ||
                        (n->target == "aten::expand.default" && n->args[0].is_ref() &&
                         g_.type_of(n->args[0].ref()).sizes == n->outputs[0].sizes);
      if (!copy) break;
      a = n->args[0];
    }
    return a;
  }

  // `a` as the reshape of a rank-4 [B, H, X, Y] value into [B*H, X, Y] (or back): the value.
  std::optional<ir::Arg> Reshaped(const ir::Arg& a, int64_t want_rank) {
    const ir::Node* n = Producer(a);
    if (n == nullptr || !IsReshapeTarget(n->target) || !n->args[0].is_ref()) return std::nullopt;
    const ir::TensorType& in = g_.type_of(n->args[0].ref());
    const ir::TensorType& out = n->outputs[0];
    if (in.rank() != want_rank || in.rank() + out.rank() != 7) return std::nullopt;
    const ir::TensorType& four = in.rank() == 4 ? in : out;
    const ir::TensorType& three = in.rank() == 3 ? in : out;
    if (three.sizes[0] != four.sizes[0] * four.sizes[1] || three.sizes[1] != four.sizes[2] ||
        three.sizes[2] != four.sizes[3])
      return std::nullopt;
    return n->args[0];
  }

  // Strips an optional multiply by a number, folding it into *scale.
  ir::Arg SkipScale(const ir::Arg& a, double* scale) {
    const ir::Node* n = Producer(a);
    if (n == nullptr || (n->target != "aten::mul.Scalar" && n->target != "aten::mul.Tensor") ||
        n->args.size() != 2 || !n->kwargs.empty())
      return a;
    double s = 0.0;
    if (const auto* d = std::get_if<double>(&n->args[1].v)) {
      s = *d;
    } else if (const auto* i = std::get_if<int64_t>(&n->args[1].v)) {
      s = static_cast<double>(*i);
    } else {
      return a;
    }
    if (!n->args[0].is_ref() || g_.type_of(n->args[0].ref()).sizes != n->outputs[0].sizes)
      return a;
    *scale *= s;
    return n->args[0];
  }

  // `a` = _to_copy(x, dtype=f32) of a half-precision x of the same sizes: x.
  std::optional<ir::Arg> Upcast(const ir::Arg& a) {
    const ir::Node* n = Producer(a);
    if (n == nullptr || n->target != "aten::_to_copy.default" || n->args.size() != 1 ||
        !n->args[0].is_ref() || n->kwargs.size() != 1 || n->kwargs[0].name != "dtype" ||
        n->outputs[0].dtype != DType::kF32)
      return std::nullopt;
    const ir::TensorType& x = g_.type_of(n->args[0].ref());
    if (!IsHalf(x.dtype) || x.sizes != n->outputs[0].sizes) return std::nullopt;
    return n->args[0];
  }

  // The bmm operand `a` ([B*H, X, Y] f32) back to its half-precision rank-4 source; K's is
  // transposed (the source is [B, H, Y, X]).
  std::optional<ir::Arg> Operand(const ir::Arg& a, bool transposed, double* scale) {
    std::optional<ir::Arg> four = Reshaped(a, 4);
    if (!four) return std::nullopt;
    ir::Arg x = SkipScale(SkipCopies(*four), scale);
    if (transposed) {
      const ir::Node* t = Producer(x);
      if (t == nullptr || PermutationOf(*t, 4) != std::vector<int64_t>{0, 1, 3, 2})
        return std::nullopt;
      x = SkipScale(t->args[0], scale);
    }
    return Upcast(x);
  }

 private:
  const ir::Graph& g_;
  const UseCounts& uses_;
};

struct Match {
  ir::Arg q, k, v;
  std::optional<ir::Arg> mask;
  int add_node = -1;   // the scores + mask node: becomes the mask's copy where one is needed
  int bmm1_node = -1;  // probabilities @ v: becomes the attention call
  double scale = 1.0;
};

// Whether `v` is exactly representable in `dtype` (bf16: an f32 whose low 16 bits are zero;
// f16: only zero and the infinities are accepted).
bool ExactIn(double v, DType dtype) {
  if (v == 0.0 || std::isinf(v)) return true;
  if (dtype != DType::kBF16) return false;
  const float f = static_cast<float>(v);
  if (static_cast<double>(f) != v) return false;
  uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof(bits));
  return (bits & 0xffffu) == 0;
}

// A number argument, or a 0-dim scalar_tensor/full of a number: its value.
std::optional<double> ConstantOf(const ir::Graph& g, const ir::Arg& a) {
  if (const auto* d = std::get_if<double>(&a.v)) return *d;
  if (const auto* i = std::get_if<int64_t>(&a.v)) return static_cast<double>(*i);
  if (!a.is_ref() || a.ref().is_input()) return std::nullopt;
  const ir::Node& n = g.nodes[a.ref().node];
  if (n.outputs.size() != 1 || n.outputs[0].rank() != 0) return std::nullopt;
  size_t at = 0;
  if (n.target == "aten::full.default") at = 1;
  else if (n.target != "aten::scalar_tensor.default") return std::nullopt;
  if (n.args.size() <= at) return std::nullopt;
  return ConstantOf(g, n.args[at]);
}

// `mask` = where(boolean, x, y) of constants x, y that `dtype` holds exactly.
bool IsExactSelect(const ir::Graph& g, const ir::Arg& mask, DType dtype) {
  if (!mask.is_ref() || mask.ref().is_input()) return false;
  const ir::Node& n = g.nodes[mask.ref().node];
  if (n.target.rfind("aten::where.", 0) != 0 || n.args.size() != 3 || !n.args[0].is_ref() ||
      g.type_of(n.args[0].ref()).dtype != DType::kBool)
    return false;
  for (int i = 1; i < 3; ++i) {
    std::optional<double> v = ConstantOf(g, n.args[i]);
    if (!v || !ExactIn(*v, dtype)) return false;
  }
  return true;
}

bool IsBmm(const ir::Node* n) {
  return n != nullptr && n->target == "aten::bmm.default" && n->args.size() == 2 &&
         n->kwargs.empty() && n->outputs[0].dtype == DType::kF32;
}

bool IsLastDimSoftmax(const ir::Node* n) {
  if (n == nullptr || n->args.size() < 2 || n->outputs[0].dtype != DType::kF32) return false;
  const auto* dim = std::get_if<int64_t>(&n->args[1].v);
  if (dim == nullptr || (*dim != -1 && *dim != 3) || !n->kwargs.empty()) return false;
  if (n->target == "aten::_safe_softmax.default") return n->args.size() == 2;
  if (n->target == "aten::_softmax.default") {
    const auto* half_to_float = n->args.size() == 3 ? std::get_if<bool>(&n->args[2].v) : nullptr;
    return half_to_float != nullptr && !*half_to_float;
  }
  return false;
}

std::optional<Match> MatchAt(const ir::Graph& g, const UseCounts& uses, const ir::Node& out) {
  if (out.target != "aten::_to_copy.default" || out.args.size() != 1 || out.kwargs.size() != 1 ||
      out.kwargs[0].name != "dtype" || out.outputs.size() != 1 || !IsHalf(out.outputs[0].dtype) ||
      !out.outputs[0].IsContiguous() || out.outputs[0].storage_offset != 0)
    return std::nullopt;
  Matcher m(g, uses);
  std::optional<ir::Arg> pv = m.Reshaped(out.args[0], 3);
  const ir::Node* bmm1 = pv ? m.Producer(*pv) : nullptr;
  if (!IsBmm(bmm1)) return std::nullopt;
  std::optional<ir::Arg> probs = m.Reshaped(bmm1->args[0], 4);
  const ir::Node* softmax = probs ? m.Producer(m.SkipCopies(*probs)) : nullptr;
  if (!IsLastDimSoftmax(softmax)) return std::nullopt;

  Match match;
  match.bmm1_node = static_cast<int>(bmm1 - g.nodes.data());
  ir::Arg scores = softmax->args[0];
  if (const ir::Node* add = m.Producer(scores);
      add != nullptr && add->target == "aten::add.Tensor" && add->args.size() == 2 &&
      add->kwargs.empty()) {
    // scores + mask, in either order: the scores are the reshaped bmm.
    for (int side = 0; side < 2 && !match.mask; ++side) {
      std::optional<ir::Arg> qk = m.Reshaped(add->args[side], 3);
      if (!qk || !IsBmm(m.Producer(*qk)) || !add->args[1 - side].is_ref()) continue;
      match.mask = add->args[1 - side];
      scores = add->args[side];
      match.add_node = static_cast<int>(add - g.nodes.data());
    }
    if (!match.mask) return std::nullopt;
  }
  std::optional<ir::Arg> qk = m.Reshaped(scores, 3);
  const ir::Node* bmm0 = qk ? m.Producer(*qk) : nullptr;
  if (!IsBmm(bmm0)) return std::nullopt;
  std::optional<ir::Arg> q = m.Operand(bmm0->args[0], false, &match.scale);
  std::optional<ir::Arg> k = m.Operand(bmm0->args[1], true, &match.scale);
  std::optional<ir::Arg> v = m.Operand(bmm1->args[1], false, &match.scale);
  if (!q || !k || !v) return std::nullopt;
  match.q = *q;
  match.k = *k;
  match.v = *v;

  // Shapes: q [B, H, Q, D], k [B, H, K, D], v [B, H, K, Dv], all of the result's dtype.
  const ir::TensorType &tq = g.type_of(q->ref()), &tk = g.type_of(k->ref()),
                       &tv = g.type_of(v->ref());
  const ir::TensorType& to = out.outputs[0];
  if (tq.rank() != 4 || tk.rank() != 4 || tv.rank() != 4 || to.rank() != 4) return std::nullopt;
  if (tq.dtype != to.dtype || tk.dtype != to.dtype || tv.dtype != to.dtype) return std::nullopt;
  if (tq.sizes[0] != tk.sizes[0] || tq.sizes[1] != tk.sizes[1] || tq.sizes[3] != tk.sizes[3] ||
      tv.sizes[0] != tk.sizes[0] || tv.sizes[1] != tk.sizes[1] || tv.sizes[2] != tk.sizes[2] ||
      to.sizes != std::vector<int64_t>{tq.sizes[0], tq.sizes[1], tq.sizes[2], tv.sizes[3]})
    return std::nullopt;
  if (!std::isfinite(match.scale) || match.scale == 0.0) return std::nullopt;
  if (match.mask) {
    const ir::TensorType& tm = g.type_of(match.mask->ref());
    const std::vector<int64_t> full = {tq.sizes[0], tq.sizes[1], tq.sizes[2], tk.sizes[2]};
    // In q's dtype (autocast casts SDPA's floating mask with q, k, v: T5's bias arrives in
    // bf16), or a boolean mask's select of values q's dtype holds exactly (the math path's
    // where(mask, 0, -inf), in whichever dtype it makes it): another would be rounded to q's
    // dtype by the fused kernels, an f32 position bias of large magnitude (ALiBi's) by whole
    // units.
    if ((tm.dtype != to.dtype && !IsExactSelect(g, *match.mask, to.dtype)) || tm.rank() != 4 ||
        tm.device != to.device || !ir::IsFloatingPoint(tm.dtype))
      return std::nullopt;
    for (int d = 0; d < 4; ++d)
      if (tm.sizes[d] != full[d] && tm.sizes[d] != 1) return std::nullopt;
  }
  return match;
}

// The strides ATen's fused attention gives its result: q's dimension order, dense
// (alloc_with_matching_layout in torch/_meta_registrations.py).
std::vector<int64_t> MatchingLayout(const ir::TensorType& q, const std::vector<int64_t>& sizes) {
  std::vector<int> order(4);
  std::iota(order.begin(), order.end(), 0);
  auto key = [&](int d) {
    return q.strides[d] != 0 ? q.strides[d] : std::numeric_limits<int64_t>::max();
  };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
  std::vector<int64_t> strides(4);
  int64_t stride = 1;
  for (int d : order) {
    strides[d] = stride;
    stride *= sizes[d];
  }
  return strides;
}


// The nodes reading node `id`'s first output, or nullopt when a graph output is that value.
std::optional<std::vector<int>> ReadersOf(const ir::Graph& g, int id) {
  const ir::ValueRef value{id, 0};
  bool returned = false;
  for (const ir::Arg& a : g.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) { returned |= r == value; });
  if (returned) return std::nullopt;
  std::vector<int> readers;
  for (size_t j = id + 1; j < g.nodes.size(); ++j) {
    bool reads = false;
    for (const ir::Arg& a : g.nodes[j].args)
      ir::ForEachRef(a, [&](const ir::ValueRef& r) { reads |= r == value; });
    for (const ir::NamedArg& kw : g.nodes[j].kwargs)
      ir::ForEachRef(kw.value, [&](const ir::ValueRef& r) { reads |= r == value; });
    if (reads) readers.push_back(static_cast<int>(j));
  }
  return readers;
}

// Restrides the views reading node `id`, whose result now has `strides`: identity views
// (alias; a reshape to the same sizes, as transformers' `o.reshape(b, -1, q, d)`) keep them,
// permutes (its `o.transpose(1, 2)` before `.contiguous()`) permute them, and non-view ops read
// their operands at their declared strides, which is all the rest needs. False (nothing
// changed) when another view, or a graph output, is among the readers.
bool FollowLayout(ir::Graph& g, int id, const std::vector<int64_t>& strides, bool apply) {
  std::optional<std::vector<int>> readers = ReadersOf(g, id);
  if (!readers) return false;
  for (int r : *readers) {
    ir::Node& n = g.nodes[r];
    const ViewKind kind = ViewKindOf(n.target);
    if (kind == ViewKind::kNone) continue;
    if (n.outputs.size() != 1 || n.args.empty() || !n.args[0].is_ref() ||
        n.args[0].ref() != ir::ValueRef{id, 0})
      return false;
    std::vector<int64_t> next;
    if (kind == ViewKind::kIdentity ||
        (kind == ViewKind::kReshape && n.outputs[0].sizes == g.nodes[id].outputs[0].sizes)) {
      next = strides;
    } else if (std::optional<std::vector<int64_t>> perm = PermutationOf(n, 4);
               kind == ViewKind::kPermute && perm) {
      for (int d = 0; d < 4; ++d) next.push_back(strides[(*perm)[d]]);
    } else {
      return false;
    }
    if (!FollowLayout(g, r, next, apply)) return false;
    if (apply) {
      n.outputs[0].strides = next;
      n.outputs[0].storage_offset = 0;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> MathAttentionToFused::Run(ir::Graph& graph) {
  // Node slots of the dead chain take the new nodes, so the graph stays in topological order
  // without a rebuild: the add (after the mask, before the softmax) becomes the mask's
  // contiguous copy where one is needed (the fused kernels read unit-stride rows), the
  // final cast the attention, its result laid out as the fused kernels lay it out (q's dimension
  // order: [B, Q, H, Dv] in memory for transformers' q), where the views reading it can follow
  // (transformers' `o.reshape(..).transpose(1, 2).contiguous()`: the contiguous copy then reads
  // dense rows; FollowLayout). Otherwise the second bmm (after q, k, v and the mask) becomes
  // the attention and the final cast a contiguous copy of it, keeping the cast's declared type
  // for its readers. Dead nodes go with the next dead-code elimination.
  bool changed = false;
  std::optional<UseCounts> uses;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    // Counted again after each rewrite (the repurposed nodes read other values).
    if (!uses) uses.emplace(graph);
    std::optional<Match> match = MatchAt(graph, *uses, graph.nodes[i]);
    if (!match) continue;
    const ir::TensorType tq = graph.type_of(match->q.ref());
    const int64_t scores =
        tq.sizes[0] * tq.sizes[1] * tq.sizes[2] * graph.type_of(match->k.ref()).sizes[2];
    if (scores < min_scores_) continue;
    uses.reset();
    ir::Arg mask{ir::NoneArg{}};
    if (match->mask) {
      mask = *match->mask;
      const ir::TensorType tm = graph.type_of(match->mask->ref());
      if (tm.dtype != tq.dtype) {
        // A select of constants q's dtype holds exactly: the cast loses nothing.
        ir::Node& copy = graph.nodes[match->add_node];
        copy.target = "aten::_to_copy.default";
        copy.args = {*match->mask};
        copy.kwargs = {{"dtype", ir::Arg{tq.dtype}},
                       {"memory_format", ir::Arg{ir::MemoryFormatArg{0}}}};
        copy.outputs = {DenseType(tq.dtype, tm.sizes, tm.device)};
        mask = ir::Arg{ir::ValueRef{match->add_node, 0}};
      } else if (!tm.IsContiguous() || tm.storage_offset != 0) {
        ir::Node& copy = graph.nodes[match->add_node];
        copy.target = "aten::clone.default";
        copy.args = {*match->mask};
        copy.kwargs = {{"memory_format", ir::Arg{ir::MemoryFormatArg{0}}}};
        copy.outputs = {DenseType(tm.dtype, tm.sizes, tm.device)};
        mask = ir::Arg{ir::ValueRef{match->add_node, 0}};
      }
    }
    ir::TensorType result = graph.nodes[i].outputs[0];
    result.strides = MatchingLayout(tq, result.sizes);
    result.storage_offset = 0;
    if (FollowLayout(graph, static_cast<int>(i), result.strides, /*apply=*/false)) {
      // The readers' views take the attention's own layout: no copy.
      FollowLayout(graph, static_cast<int>(i), result.strides, /*apply=*/true);
      ir::Node& attention = graph.nodes[i];
      attention.target = "aten::scaled_dot_product_attention.default";
      attention.args = {match->q, match->k, match->v, mask, ir::Arg{0.0}, ir::Arg{false}};
      attention.kwargs = {{"scale", ir::Arg{match->scale}}};
      attention.outputs = {result};
      changed = true;
      continue;
    }
    ir::Node& out = graph.nodes[i];
    ir::Node& attention = graph.nodes[match->bmm1_node];
    attention.target = "aten::scaled_dot_product_attention.default";
    attention.args = {match->q, match->k, match->v, mask, ir::Arg{0.0}, ir::Arg{false}};
    attention.kwargs = {{"scale", ir::Arg{match->scale}}};
    attention.outputs = {result};
    out.target = "aten::clone.default";
    out.args = {ir::Arg{ir::ValueRef{match->bmm1_node, 0}}};
    out.kwargs = {{"memory_format", ir::Arg{ir::MemoryFormatArg{0}}}};
    changed = true;
  }
  return changed;
}

}  // namespace tccd::codegen

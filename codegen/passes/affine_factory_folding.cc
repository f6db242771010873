// AffineFactoryFolding (see affine_factory_folding.h).
#include "codegen/passes/affine_factory_folding.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codegen/passes/graph_rebuild.h"

namespace tccd::codegen {
namespace {

// Offsets and coefficients beyond this are unknown (Bounded is checked after every step): a
// product with another such number or with a dim size (< 2^31) and a sum of a few of those stay
// inside int64.
constexpr int64_t kMaxMagnitude = int64_t{1} << 28;

// value(c) = offset + sum_d coeff[d] * c[d] over the tensor's coordinates c; coeff[d] is 0 where
// sizes[d] is 1 (normalised), so a constant has every coefficient 0.
struct Affine {
  int64_t offset = 0;
  std::vector<int64_t> coeff;

  bool constant() const {
    return std::all_of(coeff.begin(), coeff.end(), [](int64_t c) { return c == 0; });
  }
};

bool Bounded(int64_t v) { return v > -kMaxMagnitude && v < kMaxMagnitude; }

bool Bounded(const Affine& a) {
  if (!Bounded(a.offset)) return false;
  return std::all_of(a.coeff.begin(), a.coeff.end(), [](int64_t c) { return Bounded(c); });
}

std::optional<Affine> Normalised(Affine a, const std::vector<int64_t>& sizes) {
  if (a.coeff.size() != sizes.size() || !Bounded(a)) return std::nullopt;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] == 1) a.coeff[d] = 0;
  return a;
}

Affine Constant(int64_t v, size_t rank) { return Affine{v, std::vector<int64_t>(rank, 0)}; }

struct Range {
  int64_t lo, hi;
};

// Smallest and largest value over a tensor of `sizes`, or nullopt where either leaves int64 (an
// arange's start or step is the client's number, unbounded until checked here): unknown rather
// than wrapped. Each term is below 2^126 in magnitude and the partial sums are checked as they
// grow, so the 128-bit sums cannot overflow.
std::optional<Range> RangeOf(const Affine& a, const std::vector<int64_t>& sizes) {
  constexpr __int128 kMin = std::numeric_limits<int64_t>::min();
  constexpr __int128 kMax = std::numeric_limits<int64_t>::max();
  __int128 lo = a.offset, hi = a.offset;
  for (size_t d = 0; d < sizes.size(); ++d) {
    const __int128 span = static_cast<__int128>(a.coeff[d]) * (sizes[d] - 1);
    (span < 0 ? lo : hi) += span;
    if (lo < kMin || hi > kMax) return std::nullopt;
  }
  return Range{static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

bool Tracked(const ir::TensorType& t) {
  if (t.dtype != ir::DType::kBool && !ir::IsIntegral(t.dtype)) return false;
  return std::all_of(t.sizes.begin(), t.sizes.end(), [](int64_t s) { return s >= 0; });
}

// Whether every value of `a` over a tensor of `sizes` is exact in `dtype` (bool: 0 and 1 only).
bool FitsDType(const Affine& a, const std::vector<int64_t>& sizes, ir::DType dtype) {
  const std::optional<Range> range = RangeOf(a, sizes);
  if (!range) return false;
  const auto [lo, hi] = *range;
  switch (dtype) {
    case ir::DType::kBool:
      return lo >= 0 && hi <= 1;
    case ir::DType::kU8:
      return lo >= 0 && hi <= 255;
    case ir::DType::kI8:
      return lo >= -128 && hi <= 127;
    case ir::DType::kI16:
      return lo >= -32768 && hi <= 32767;
    case ir::DType::kI32:
      return lo >= -2147483648LL && hi <= 2147483647LL;
    case ir::DType::kI64:
      return true;
    default:
      return false;
  }
}

// An int or bool number argument.
std::optional<int64_t> IntNumber(const ir::Arg* a) {
  if (a == nullptr) return std::nullopt;
  if (const auto* i = std::get_if<int64_t>(&a->v)) return *i;
  if (const auto* b = std::get_if<bool>(&a->v)) return *b ? 1 : 0;
  return std::nullopt;
}

const ir::Arg* ArgOf(const ir::Node& n, size_t i, const char* name) {
  if (i < n.args.size()) return &n.args[i];
  return n.kwarg(name);
}

int64_t WrapDim(int64_t dim, int64_t rank) { return dim < 0 ? dim + rank : dim; }

class Analysis {
 public:
  explicit Analysis(const ir::Graph& g) : g_(g), values_(g.nodes.size()) {
    for (size_t id = 0; id < g.nodes.size(); ++id) {
      const ir::Node& n = g.nodes[id];
      if (n.outputs.size() != 1 || !Tracked(n.outputs[0])) continue;
      std::optional<Affine> a = Of(n);
      if (a) a = Normalised(std::move(*a), n.outputs[0].sizes);
      // Integer arithmetic wraps in narrower dtypes: values outside the dtype are unknown.
      if (a && !FitsDType(*a, n.outputs[0].sizes, n.outputs[0].dtype))
        a.reset();
      values_[id] = std::move(a);
    }
  }

  // The affine value of `arg` broadcast to `sizes` (numbers are constants), or nullopt.
  std::optional<Affine> At(const ir::Arg& arg, const std::vector<int64_t>& sizes) const {
    // A number beyond kMaxMagnitude is unknown like any other value Bounded refuses: the
    // arithmetic below adds and scales operands unchecked (INT64_MAX + 1 from a client's add).
    if (auto v = IntNumber(&arg)) {
      if (!Bounded(*v)) return std::nullopt;
      return Constant(*v, sizes.size());
    }
    if (!arg.is_ref() || arg.ref().is_input() || arg.ref().output != 0) return std::nullopt;
    const std::optional<Affine>& a = values_[arg.ref().node];
    if (!a) return std::nullopt;
    const std::vector<int64_t>& from = g_.type_of(arg.ref()).sizes;
    if (from.size() > sizes.size()) return std::nullopt;
    const size_t lead = sizes.size() - from.size();
    Affine out = Constant(a->offset, sizes.size());
    for (size_t d = 0; d < from.size(); ++d) {
      if (from[d] != 1 && from[d] != sizes[lead + d]) return std::nullopt;
      out.coeff[lead + d] = from[d] == 1 ? 0 : a->coeff[d];
    }
    return out;
  }

  // The constant `arg` holds (a number, or a tensor whose value is one), or nullopt.
  std::optional<int64_t> ConstantOf(const ir::Arg& arg) const {
    if (auto v = IntNumber(&arg)) return v;
    if (!arg.is_ref()) return std::nullopt;
    auto a = At(arg, g_.type_of(arg.ref()).sizes);
    if (!a || !a->constant()) return std::nullopt;
    return a->offset;
  }

  const std::optional<Affine>& of(int id) const { return values_[id]; }

 private:
  std::optional<Affine> Of(const ir::Node& n) const {
    const ir::TensorType& out = n.outputs[0];
    const std::vector<int64_t>& sizes = out.sizes;
    const size_t rank = sizes.size();
    const std::string& t = n.target;
    auto ref_arg = [&](size_t i) -> const ir::Arg* {
      return i < n.args.size() && n.args[i].is_ref() ? &n.args[i] : nullptr;
    };
    auto in_sizes = [&](const ir::Arg* a) -> const std::vector<int64_t>& {
      return g_.type_of(a->ref()).sizes;
    };
    // Operands must be integral or bool too (a float operand rounds).
    auto exact_operand = [&](const ir::Arg& a) {
      if (!a.is_ref()) return IntNumber(&a).has_value();
      const ir::DType d = g_.type_of(a.ref()).dtype;
      return d == ir::DType::kBool || ir::IsIntegral(d);
    };

    // ---- sources
    if (t == "aten::arange.default" || t == "aten::arange.start" ||
        t == "aten::arange.start_step") {
      if (rank != 1 || !ir::IsIntegral(out.dtype)) return std::nullopt;
      std::optional<int64_t> start = 0, step = 1;
      if (t != "aten::arange.default") start = IntNumber(ArgOf(n, 0, "start"));
      if (t == "aten::arange.start_step") step = IntNumber(ArgOf(n, 2, "step"));
      if (!start || !step) return std::nullopt;
      Affine a = Constant(*start, 1);
      a.coeff[0] = *step;
      if (!FitsDType(a, sizes, out.dtype)) return std::nullopt;
      return a;
    }
    if (t == "aten::full.default" || t == "aten::full_like.default" ||
        t == "aten::new_full.default") {
      const size_t value_at = t == "aten::new_full.default" ? 2 : 1;
      auto v = IntNumber(ArgOf(n, value_at, "fill_value"));
      if (!v) return std::nullopt;
      return Constant(out.dtype == ir::DType::kBool ? (*v != 0) : *v, rank);
    }
    if (t == "aten::zeros.default" || t == "aten::new_zeros.default" ||
        t == "aten::zeros_like.default")
      return Constant(0, rank);
    if (t == "aten::ones.default" || t == "aten::new_ones.default" ||
        t == "aten::ones_like.default")
      return Constant(1, rank);
    if (t == "aten::scalar_tensor.default") {
      auto v = IntNumber(ArgOf(n, 0, "s"));
      if (!v) return std::nullopt;
      return Constant(out.dtype == ir::DType::kBool ? (*v != 0) : *v, rank);
    }

    // ---- shape ops and copies (the input's value, re-indexed)
    const ir::Arg* x = ref_arg(0);
    if (x == nullptr) return Math(n);  // cat (a list), or a number first
    if (t == "aten::clone.default" || t == "aten::alias.default" || t == "aten::detach.default" ||
        t == "aten::lift_fresh_copy.default" || t == "aten::_to_copy.default") {
      auto a = At(*x, sizes);
      if (!a || !exact_operand(*x)) return std::nullopt;
      if (!FitsDType(*a, sizes, out.dtype)) return std::nullopt;
      return a;
    }
    if (t == "aten::expand.default") return At(*x, sizes);
    const std::optional<Affine>& xa =
        x->ref().is_input() || x->ref().output != 0 ? kUnknown : values_[x->ref().node];
    const std::vector<int64_t>& xs = in_sizes(x);
    if (t == "aten::unsqueeze.default" || t == "aten::squeeze.dim") {
      if (!xa) return std::nullopt;
      auto dim = IntNumber(ArgOf(n, 1, "dim"));
      if (!dim) return std::nullopt;
      Affine a = Constant(xa->offset, rank);
      if (t == "aten::unsqueeze.default") {
        const int64_t d = WrapDim(*dim, static_cast<int64_t>(rank));
        if (d < 0 || d >= static_cast<int64_t>(rank) || xs.size() + 1 != rank) return std::nullopt;
        for (size_t k = 0, j = 0; k < rank; ++k)
          if (static_cast<int64_t>(k) != d) a.coeff[k] = xa->coeff[j++];
        return a;
      }
      // squeeze.dim: drops the dim only where it has size 1.
      const int64_t d = WrapDim(*dim, static_cast<int64_t>(xs.size()));
      if (d < 0 || d >= static_cast<int64_t>(xs.size())) return std::nullopt;
      if (xs.size() == rank) return xa;  // not of size 1: unchanged
      for (size_t k = 0, j = 0; k < xs.size(); ++k)
        if (static_cast<int64_t>(k) != d) a.coeff[j++] = xa->coeff[k];
      return a;
    }
    if (IsReshapeTarget(t)) {
      // Any reshape of a constant; other values only through size-1 dims (same coefficients in
      // the same order: the element order is unchanged).
      if (!xa) return std::nullopt;
      if (xa->constant()) return Constant(xa->offset, rank);
      std::vector<int64_t> from, to;
      for (size_t d = 0; d < xs.size(); ++d)
        if (xs[d] != 1) from.push_back(xa->coeff[d]);
      Affine a = Constant(xa->offset, rank);
      for (size_t d = 0, j = 0; d < rank; ++d)
        if (sizes[d] != 1) {
          if (j >= from.size()) return std::nullopt;
          a.coeff[d] = from[j++];
          to.push_back(a.coeff[d]);
        }
      std::vector<int64_t> xsizes, osizes;
      for (int64_t s : xs)
        if (s != 1) xsizes.push_back(s);
      for (int64_t s : sizes)
        if (s != 1) osizes.push_back(s);
      if (xsizes != osizes) return std::nullopt;
      return a;
    }
    if (auto perm = PermutationOf(n, static_cast<int64_t>(xs.size()))) {
      if (!xa || perm->size() != rank) return std::nullopt;
      Affine a = Constant(xa->offset, rank);
      for (size_t d = 0; d < rank; ++d) a.coeff[d] = xa->coeff[(*perm)[d]];
      return a;
    }
    if (t == "aten::slice.Tensor") {
      if (!xa) return std::nullopt;
      const int64_t d =
          WrapDim(IntNumber(ArgOf(n, 1, "dim")).value_or(0), static_cast<int64_t>(xs.size()));
      if (d < 0 || d >= static_cast<int64_t>(xs.size()) || xs.size() != rank) return std::nullopt;
      const ir::Arg* start_arg = ArgOf(n, 2, "start");
      int64_t start = 0;
      if (start_arg != nullptr && !start_arg->is_none()) {
        auto s = IntNumber(start_arg);
        if (!s) return std::nullopt;
        start = *s < 0 ? *s + xs[d] : *s;
        start = std::clamp<int64_t>(start, 0, xs[d]);
      }
      const int64_t step = IntNumber(ArgOf(n, 4, "step")).value_or(1);
      if (step <= 0) return std::nullopt;
      Affine a = *xa;
      a.offset += a.coeff[d] * start;
      a.coeff[d] *= step;
      return a;
    }
    if (t == "aten::select.int") {
      if (!xa) return std::nullopt;
      const int64_t d =
          WrapDim(IntNumber(ArgOf(n, 1, "dim")).value_or(0), static_cast<int64_t>(xs.size()));
      auto index = IntNumber(ArgOf(n, 2, "index"));
      if (d < 0 || d >= static_cast<int64_t>(xs.size()) || !index || xs.size() != rank + 1)
        return std::nullopt;
      const int64_t i = *index < 0 ? *index + xs[d] : *index;
      Affine a = Constant(xa->offset + xa->coeff[d] * i, rank);
      for (size_t k = 0, j = 0; k < xs.size(); ++k)
        if (static_cast<int64_t>(k) != d) a.coeff[j++] = xa->coeff[k];
      return a;
    }
    if (t == "aten::cumsum.default") {
      // cumsum of a constant v along d: v * (c[d] + 1).
      if (!xa || !xa->constant() || xs != sizes) return std::nullopt;
      const int64_t d =
          WrapDim(IntNumber(ArgOf(n, 1, "dim")).value_or(0), static_cast<int64_t>(rank));
      if (d < 0 || d >= static_cast<int64_t>(rank)) return std::nullopt;
      Affine a = Constant(xa->offset, rank);
      a.coeff[d] = xa->offset;
      if (!FitsDType(a, sizes, out.dtype)) return std::nullopt;
      return a;
    }
    return Math(n);
  }

  // cat, index, arithmetic, comparisons, logic, where.
  std::optional<Affine> Math(const ir::Node& n) const {
    const ir::TensorType& out = n.outputs[0];
    const std::vector<int64_t>& sizes = out.sizes;
    const size_t rank = sizes.size();
    const std::string& t = n.target;
    if (n.args.empty()) return std::nullopt;  // every op below reads its first argument
    auto operand_ok = [&](const ir::Arg& a) {
      if (!a.is_ref()) return IntNumber(&a).has_value();
      const ir::DType d = g_.type_of(a.ref()).dtype;
      return d == ir::DType::kBool || ir::IsIntegral(d);
    };

    if (t == "aten::cat.default") {
      const auto* list = std::get_if<ir::ArgList>(&n.args[0].v);
      if (list == nullptr || list->empty()) return std::nullopt;
      const int64_t d =
          WrapDim(IntNumber(ArgOf(n, 1, "dim")).value_or(0), static_cast<int64_t>(rank));
      if (d < 0 || d >= static_cast<int64_t>(rank)) return std::nullopt;
      // Pieces as affine functions of their own coordinates; along d piece k covers
      // [at_k, at_k + len_k). The cat is affine when some slope s along d makes every piece's
      // value offset_k + s * (c - at_k) + rest, with equal `rest` coefficients.
      struct Piece {
        Affine a;
        int64_t at, len;
      };
      std::vector<Piece> pieces;
      int64_t at = 0;
      std::optional<int64_t> slope;
      for (const ir::Arg& p : *list) {
        if (!p.is_ref() || !operand_ok(p)) return std::nullopt;
        const std::vector<int64_t>& ps = g_.type_of(p.ref()).sizes;
        if (ps.size() != rank) return std::nullopt;
        auto a = At(p, ps);
        if (!a) return std::nullopt;
        if (ps[d] > 1) {
          if (slope && *slope != a->coeff[d]) return std::nullopt;
          slope = a->coeff[d];
        }
        pieces.push_back({*a, at, ps[d]});
        at += ps[d];
      }
      if (!slope) {
        // Pieces of length 1: the slope is the step between the first two.
        slope = pieces.size() > 1 ? pieces[1].a.offset - pieces[0].a.offset : 0;
      }
      Affine a = Constant(pieces[0].a.offset - *slope * pieces[0].at, rank);
      for (size_t k = 0; k < rank; ++k)
        a.coeff[k] = static_cast<int64_t>(k) == d ? *slope : pieces[0].a.coeff[k];
      for (const Piece& p : pieces) {
        if (p.a.offset - *slope * p.at != a.offset) return std::nullopt;
        for (size_t k = 0; k < rank; ++k)
          if (static_cast<int64_t>(k) != d && p.a.coeff[k] != a.coeff[k]) return std::nullopt;
      }
      return a;
    }

    if (t == "aten::index.Tensor") {
      // x[i0, i1, ...] with every dim of x indexed by a tensor: value x(i0(c), i1(c), ...).
      if (n.args.size() < 2 || !n.args[0].is_ref()) return std::nullopt;
      const ir::Arg& x = n.args[0];
      const std::vector<int64_t>& xs = g_.type_of(x.ref()).sizes;
      auto xa = At(x, xs);
      const auto* list = std::get_if<ir::ArgList>(&n.args[1].v);
      if (!xa || list == nullptr || list->size() != xs.size()) return std::nullopt;
      Affine a = Constant(xa->offset, rank);
      for (size_t k = 0; k < list->size(); ++k) {
        const ir::Arg& i = (*list)[k];
        if (!i.is_ref() || !ir::IsIntegral(g_.type_of(i.ref()).dtype)) return std::nullopt;
        const std::vector<int64_t>& is = g_.type_of(i.ref()).sizes;
        auto ia = At(i, is);
        // In range: a negative index would wrap (not affine).
        if (!ia) return std::nullopt;
        const std::optional<Range> range = RangeOf(*ia, is);
        if (!range || range->lo < 0 || range->hi >= xs[k]) return std::nullopt;
        auto ib = At(i, sizes);
        if (!ib) return std::nullopt;
        a.offset += xa->coeff[k] * ib->offset;
        for (size_t d = 0; d < rank; ++d) a.coeff[d] += xa->coeff[k] * ib->coeff[d];
        if (!Bounded(a)) return std::nullopt;
      }
      return a;
    }

    if (t == "aten::where.self") {
      if (n.args.size() < 3) return std::nullopt;
      auto cond = ConstantOf(n.args[0]);
      if (!cond || !operand_ok(n.args[1]) || !operand_ok(n.args[2])) return std::nullopt;
      return At(n.args[*cond ? 1 : 2], sizes);
    }

    const bool bool_out = out.dtype == ir::DType::kBool;
    if (t == "aten::neg.default") {
      if (bool_out || !operand_ok(n.args[0])) return std::nullopt;
      auto a = At(n.args[0], sizes);
      if (!a) return std::nullopt;
      a->offset = -a->offset;
      for (int64_t& c : a->coeff) c = -c;
      return a;
    }
    if (t == "aten::bitwise_not.default" || t == "aten::logical_not.default") {
      auto v = ConstantOf(n.args[0]);
      if (!v || !bool_out) return std::nullopt;
      return Constant(*v == 0, rank);
    }

    if (n.args.size() < 2 || !operand_ok(n.args[0]) || !operand_ok(n.args[1])) return std::nullopt;
    auto a = At(n.args[0], sizes);
    auto b = At(n.args[1], sizes);
    if (!a || !b) return std::nullopt;
    auto combine = [&](int64_t sa, int64_t sb) -> std::optional<Affine> {
      Affine r = Constant(sa * a->offset + sb * b->offset, rank);
      for (size_t d = 0; d < rank; ++d) r.coeff[d] = sa * a->coeff[d] + sb * b->coeff[d];
      if (!Bounded(r)) return std::nullopt;
      return r;
    };

    if (t == "aten::add.Tensor" || t == "aten::add.Scalar" || t == "aten::sub.Tensor" ||
        t == "aten::sub.Scalar") {
      if (bool_out) return std::nullopt;  // bool + bool is a logical or
      const ir::Arg* alpha = ArgOf(n, 2, "alpha");
      const std::optional<int64_t> al =
          alpha == nullptr ? std::optional<int64_t>(1) : IntNumber(alpha);
      if (!al || !Bounded(*al)) return std::nullopt;
      const bool sub = t == "aten::sub.Tensor" || t == "aten::sub.Scalar";
      return combine(1, sub ? -*al : *al);
    }
    if (t == "aten::mul.Tensor" || t == "aten::mul.Scalar") {
      if (bool_out) return std::nullopt;
      if (a->constant()) return combine(0, a->offset);
      if (b->constant()) return combine(b->offset, 0);
      return std::nullopt;
    }
    static const char* const kCompares[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    for (const char* c : kCompares) {
      const std::string base = std::string("aten::") + c;
      if (t != base + ".Tensor" && t != base + ".Scalar") continue;
      auto diff = combine(1, -1);
      if (!diff || !diff->constant() || !bool_out) return std::nullopt;
      const int64_t v = diff->offset;
      const std::string op = c;
      const bool r = op == "eq"   ? v == 0
                     : op == "ne" ? v != 0
                     : op == "lt" ? v < 0
                     : op == "le" ? v <= 0
                     : op == "gt" ? v > 0
                                  : v >= 0;
      return Constant(r, rank);
    }
    const bool is_and = t == "aten::bitwise_and.Tensor" || t == "aten::logical_and.default";
    const bool is_or = t == "aten::bitwise_or.Tensor" || t == "aten::logical_or.default";
    if ((is_and || is_or) && bool_out && a->constant() && b->constant()) {
      const bool x = a->offset != 0, y = b->offset != 0;
      return Constant(is_and ? (x && y) : (x || y), rank);
    }
    return std::nullopt;
  }

  static inline const std::optional<Affine> kUnknown{};
  const ir::Graph& g_;
  std::vector<std::optional<Affine>> values_;
};

bool IsFull(const ir::Node& n) { return n.target == "aten::full.default"; }

}  // namespace

absl::StatusOr<bool> AffineFactoryFolding::Run(ir::Graph& graph) {
  const ir::Graph before = graph;
  const Analysis analysis(before);
  const std::set<int> graph_outputs = ReturnedNodes(before);
  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        if (graph_outputs.count(id) || node.outputs.size() != 1) return std::nullopt;
        const ir::TensorType& type = node.outputs[0];
        const ir::Node& old = before.nodes[id];
        // A known constant: full(sizes, v), contiguous (a full already is one).
        if (const std::optional<Affine>& a = analysis.of(id); a && a->constant()) {
          if (IsFull(node) && type.IsContiguous()) return std::nullopt;
          const ir::Arg value =
              type.dtype == ir::DType::kBool ? ir::Arg{a->offset != 0} : ir::Arg{a->offset};
          ir::TensorType dense = DenseType(type.dtype, type.sizes, type.device);
          return std::vector<ir::Arg>{
              EmitOp(out, "aten::full.default", {IntListArg(type.sizes), value}, dense,
                     {{"dtype", ir::Arg{type.dtype}}, {"device", ir::Arg{type.device}}})};
        }
        // x & true, x | false (bool), where(constant, a, b): the operand that decides, where it
        // already has the output's sizes and dtype.
        auto operand_if_same = [&](size_t i) -> std::optional<std::vector<ir::Arg>> {
          if (i >= node.args.size() || !node.args[i].is_ref()) return std::nullopt;
          const ir::TensorType& t = out.type_of(node.args[i].ref());
          if (t.sizes != type.sizes || t.dtype != type.dtype || t.device != type.device)
            return std::nullopt;
          return std::vector<ir::Arg>{node.args[i]};
        };
        const std::string& t = node.target;
        const bool is_and = t == "aten::bitwise_and.Tensor" || t == "aten::logical_and.default";
        const bool is_or = t == "aten::bitwise_or.Tensor" || t == "aten::logical_or.default";
        if ((is_and || is_or) && type.dtype == ir::DType::kBool && old.args.size() == 2) {
          const int64_t neutral = is_and ? 1 : 0;
          for (size_t k = 0; k < 2; ++k) {
            if (analysis.ConstantOf(old.args[k]) != neutral) continue;
            if (old.args[1 - k].is_ref() &&
                before.type_of(old.args[1 - k].ref()).dtype == ir::DType::kBool)
              if (auto r = operand_if_same(1 - k)) return r;
          }
        }
        if (t == "aten::where.self" && old.args.size() == 3)
          if (auto cond = analysis.ConstantOf(old.args[0])) return operand_if_same(*cond ? 1 : 2);
        return std::nullopt;
      });
}

}  // namespace tccd::codegen

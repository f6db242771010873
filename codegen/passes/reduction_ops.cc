// ATen reductions and normalisations -> row-reduction kernel IR (see reduction_ops.h).
#include "codegen/passes/reduction_ops.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "base/status_macros.h"

namespace tccd::codegen {
namespace {

using ir::DType;

enum class Op {
  kSum,
  kMean,
  kAmax,
  kAmin,
  kLogSumExp,
  kVar,
  kVarMean,
  kSoftmax,
  kSafeSoftmax,
  kLogSoftmax,
  kSoftmaxBackward,
  kLogSoftmaxBackward,
  kLayerNorm,
  kRmsNorm,
  kLayerNormBackward,
};

// Keyword arguments each op may carry (anything else keeps the node extern).
struct OpEntry {
  Op op;
  std::set<std::string> kwargs;
};

const absl::flat_hash_map<std::string, OpEntry>& Table() {
  static const auto* table = new absl::flat_hash_map<std::string, OpEntry>{
      {"aten::sum.dim_IntList", {Op::kSum, {"dim", "keepdim", "dtype"}}},
      {"aten::mean.dim", {Op::kMean, {"dim", "keepdim", "dtype"}}},
      {"aten::amax.default", {Op::kAmax, {"dim", "keepdim"}}},
      {"aten::amin.default", {Op::kAmin, {"dim", "keepdim"}}},
      // What a log_softmax saves for its backward when the client decomposes it
      // (log_softmax(x) = x - logsumexp(x)): one value per row instead of an f32 copy of x.
      {"aten::logsumexp.default", {Op::kLogSumExp, {"dim", "keepdim"}}},
      {"aten::var.correction", {Op::kVar, {"dim", "correction", "keepdim"}}},
      {"aten::var_mean.correction", {Op::kVarMean, {"dim", "correction", "keepdim"}}},
      {"aten::_softmax.default", {Op::kSoftmax, {}}},
      // softmax whose rows of only -inf give 0 instead of NaN (attention with fully masked rows)
      {"aten::_safe_softmax.default", {Op::kSafeSoftmax, {"dtype"}}},
      {"aten::_log_softmax.default", {Op::kLogSoftmax, {}}},
      {"aten::_softmax_backward_data.default", {Op::kSoftmaxBackward, {}}},
      {"aten::_log_softmax_backward_data.default", {Op::kLogSoftmaxBackward, {}}},
      {"aten::native_layer_norm.default", {Op::kLayerNorm, {}}},
      {"aten::_fused_rms_norm.default", {Op::kRmsNorm, {}}},
      {"aten::native_layer_norm_backward.default", {Op::kLayerNormBackward, {}}},
  };
  return *table;
}

}  // namespace

std::vector<std::string> ReductionOpTargets() {
  std::vector<std::string> targets;
  for (const auto& [target, entry] : Table()) targets.push_back(target);
  return targets;
}

namespace {

// Positional argument `index` or keyword `name`; nullptr when absent.
const ir::Arg* ArgOf(const ir::Node& node, size_t index, const char* name) {
  if (index < node.args.size()) return &node.args[index];
  return node.kwarg(name);
}

std::optional<double> Number(const ir::Arg* a) {
  if (a == nullptr) return std::nullopt;
  if (auto* i = std::get_if<int64_t>(&a->v)) return static_cast<double>(*i);
  if (auto* d = std::get_if<double>(&a->v)) return *d;
  return std::nullopt;
}

bool Bool(const ir::Arg* a, bool def) {
  if (a == nullptr) return def;
  if (auto* b = std::get_if<bool>(&a->v)) return *b;
  return def;
}

// Integers of an int or int-list argument; nullopt for anything else. None -> empty list.
std::optional<std::vector<int64_t>> IntList(const ir::Arg* a) {
  std::vector<int64_t> out;
  if (a == nullptr || a->is_none()) return out;
  if (auto* i = std::get_if<int64_t>(&a->v)) return std::vector<int64_t>{*i};
  auto* list = std::get_if<ir::ArgList>(&a->v);
  if (list == nullptr) return std::nullopt;
  for (const ir::Arg& e : *list) {
    auto* i = std::get_if<int64_t>(&e.v);
    if (i == nullptr) return std::nullopt;
    out.push_back(*i);
  }
  return out;
}

// The number of trailing dims `dims` names (each once, negative counted from the end), or 0
// when they are not exactly the trailing ones. An empty list means every dim.
int TrailingDims(std::vector<int64_t> dims, int64_t rank) {
  if (dims.empty()) return static_cast<int>(rank);
  std::set<int64_t> set;
  for (int64_t d : dims) {
    if (d < -rank || d >= rank) return 0;
    if (!set.insert(d < 0 ? d + rank : d).second) return 0;
  }
  const int k = static_cast<int>(set.size());
  return *set.begin() == rank - k ? k : 0;
}

// A list of bools (output_mask); nullopt for anything else.
std::optional<std::vector<bool>> BoolList(const ir::Arg* a) {
  if (a == nullptr) return std::nullopt;
  auto* list = std::get_if<ir::ArgList>(&a->v);
  if (list == nullptr) return std::nullopt;
  std::vector<bool> out;
  for (const ir::Arg& e : *list) {
    auto* b = std::get_if<bool>(&e.v);
    if (b == nullptr) return std::nullopt;
    out.push_back(*b);
  }
  return out;
}

// The number of leading dims `dims` names (each once, negative counted from the end), or 0
// when they are not exactly the leading ones or name every dim (a row reduction then).
int LeadingDims(const std::vector<int64_t>& dims, int64_t rank) {
  std::set<int64_t> set;
  for (int64_t d : dims) {
    if (d < -rank || d >= rank) return 0;
    if (!set.insert(d < 0 ? d + rank : d).second) return 0;
  }
  const int k = static_cast<int>(set.size());
  return k > 0 && k < rank && *set.rbegin() == k - 1 ? k : 0;
}

const ir::TensorType* TensorArg(const ir::Graph& graph, const ir::Node& node, size_t index) {
  if (index >= node.args.size() || !node.args[index].is_ref()) return nullptr;
  return &graph.type_of(node.args[index].ref());
}

// The reduced dims of `node` ({0} if unsupported), before the size and dtype checks.
ReductionAxes ReducedDims(const ir::Graph& graph, const ir::Node& node, Op op, int64_t rank) {
  switch (op) {
    case Op::kSum:
    case Op::kMean: {
      auto dims = IntList(ArgOf(node, 1, "dim"));
      if (!dims) return {};
      if (int k = TrailingDims(*dims, rank); k > 0) return {k, false};
      return {LeadingDims(*dims, rank), true};
    }
    case Op::kAmax:
    case Op::kAmin:
    case Op::kLogSumExp:
    case Op::kVar:
    case Op::kVarMean: {
      auto dims = IntList(ArgOf(node, 1, "dim"));
      return {dims ? TrailingDims(*dims, rank) : 0, false};
    }
    case Op::kSoftmax:
    case Op::kSafeSoftmax:
    case Op::kLogSoftmax:
    case Op::kSoftmaxBackward:
    case Op::kLogSoftmaxBackward: {
      const bool forward = op == Op::kSoftmax || op == Op::kSafeSoftmax || op == Op::kLogSoftmax;
      const ir::Arg* dim = ArgOf(node, forward ? 1 : 2, "dim");
      auto d = dim ? std::get_if<int64_t>(&dim->v) : nullptr;
      if (d == nullptr) return {};
      return {(*d == -1 || *d == rank - 1) ? 1 : 0, false};
    }
    case Op::kLayerNorm:
    case Op::kRmsNorm:
    case Op::kLayerNormBackward: {
      // The backward's first argument is grad_out, of the input's shape.
      const size_t shape_index = op == Op::kLayerNormBackward ? 2 : 1;
      auto shape = IntList(ArgOf(node, shape_index, "normalized_shape"));
      if (!shape || shape->empty() || static_cast<int64_t>(shape->size()) > rank) return {};
      const ir::TensorType& x = graph.type_of(node.args[0].ref());
      for (size_t i = 0; i < shape->size(); ++i) {
        if ((*shape)[i] != x.sizes[rank - shape->size() + i]) return {};
      }
      const int k = static_cast<int>(shape->size());
      if (op != Op::kLayerNormBackward) return {k, false};
      // grad_input alone: a row reduction; parameter gradients alone: a column reduction over
      // the leading dims; both: split first (layer_norm_backward_split.h).
      auto mask = BoolList(ArgOf(node, 7, "output_mask"));
      if (!mask || mask->size() != 3 || node.outputs.size() != 3) return {};
      const ir::TensorType* input = TensorArg(graph, node, 1);
      if (input == nullptr || input->sizes != x.sizes) return {};
      if ((*mask)[0] && !(*mask)[1] && !(*mask)[2]) return {k, false};
      if (!(*mask)[0] && ((*mask)[1] || (*mask)[2]) && k < rank)
        return {static_cast<int>(rank) - k, true};
      return {};
    }
  }
  return {};
}

}  // namespace

int RowReductionDims(const ir::Graph& graph, const ir::Node& node) {
  const ReductionAxes axes = ReductionAxesOf(graph, node);
  return axes.leading ? 0 : axes.num_reduced_dims;
}

namespace {

// The node's declared outputs have the shapes the op gives: one value per row for the reductions
// and the norms' statistics, x's shape for the rest. Client metadata that says otherwise (found
// by the request fuzzer: a sum declaring its input's shape, fused with a sum over it) would make
// the kernel builder emit an invalid kernel; such a node stays an extern ATen step.
bool DeclaredOutputsFit(Op op, const ir::Node& node, const ir::TensorType& x, int64_t rows) {
  auto per_row = [&](size_t o) {
    return o < node.outputs.size() && node.outputs[o].numel() == rows;
  };
  auto like_x = [&](size_t o) {
    return o < node.outputs.size() && node.outputs[o].sizes == x.sizes;
  };
  switch (op) {
    case Op::kSum:
    case Op::kMean:
    case Op::kAmax:
    case Op::kAmin:
    case Op::kLogSumExp:
    case Op::kVar:
      return node.outputs.size() == 1 && per_row(0);
    case Op::kVarMean:
      return node.outputs.size() == 2 && per_row(0) && per_row(1);
    case Op::kSoftmax:
    case Op::kSafeSoftmax:
    case Op::kLogSoftmax:
    case Op::kSoftmaxBackward:
    case Op::kLogSoftmaxBackward:
      return node.outputs.size() == 1 && like_x(0);
    case Op::kLayerNorm:
      return node.outputs.size() == 3 && like_x(0) && per_row(1) && per_row(2);
    case Op::kRmsNorm:
      return node.outputs.size() == 2 && like_x(0) && per_row(1);
    case Op::kLayerNormBackward:
      return node.outputs.size() == 3;  // shapes checked against output_mask below
  }
  return false;
}

}  // namespace

ReductionAxes ReductionAxesOf(const ir::Graph& graph, const ir::Node& node,
                              bool allow_few_long_rows) {
  auto it = Table().find(node.target);
  if (it == Table().end() || ir::TouchesExternOnlyDType(graph, node)) return {};
  const OpEntry& entry = it->second;
  for (const ir::NamedArg& kw : node.kwargs) {
    if (!entry.kwargs.count(kw.name) || kw.value.is_ref()) return {};
  }
  const ir::TensorType* x = TensorArg(graph, node, 0);
  if (x == nullptr || x->rank() == 0 || x->device != ir::DeviceType::kCuda) return {};
  if (!IsF32OrHalf(x->dtype)) return {};
  const ReductionAxes axes = ReducedDims(graph, node, entry.op, x->rank());
  const int k = axes.num_reduced_dims;
  if (k == 0) return {};
  // row: elements reduced into one value; rows: values produced.
  int64_t row = 1, rows = 1;
  for (int64_t d = 0; d < x->rank(); ++d) {
    const bool reduced = axes.leading ? d < k : d >= x->rank() - k;
    (reduced ? row : rows) *= x->sizes[d];
  }
  constexpr int64_t kMax32 = std::numeric_limits<int32_t>::max();
  // A row of one element (a mean over 1x1 maps) reduces nothing: the kernel IR would see its
  // input as a per-row value. ATen's op is a copy.
  if (row < 2 || rows < 1 || rows > kMax32 ||
      row > (axes.leading ? kMax32 : kMaxRowReductionLength)) {
    return {};
  }
  if (!allow_few_long_rows && !axes.leading && row > kMaxFewRowsLength &&
      rows < kMinRowsForLongRows)
    return {};
  // Every other tensor argument: same device, a float dtype, broadcastable to x (right-aligned).
  for (size_t i = 1; i < node.args.size(); ++i) {
    const ir::Arg& a = node.args[i];
    if (a.is_none() || !a.is_ref()) {
      if (std::holds_alternative<ir::ArgList>(a.v)) {
        bool has_ref = false;
        ir::ForEachRef(a, [&](const ir::ValueRef&) { has_ref = true; });
        if (has_ref) return {};
      }
      continue;
    }
    const ir::TensorType& t = graph.type_of(a.ref());
    if (t.device != x->device || !IsF32OrHalf(t.dtype) || t.rank() > x->rank()) return {};
    for (int64_t d = 0; d < t.rank(); ++d) {
      const int64_t size = t.sizes[t.rank() - 1 - d];
      if (size != 1 && size != x->sizes[x->rank() - 1 - d]) return {};
    }
  }
  for (const ir::TensorType& out : node.outputs) {
    if (out.device != x->device || !IsF32OrHalf(out.dtype)) return {};
  }
  if (!DeclaredOutputsFit(entry.op, node, *x, rows)) return {};
  if (entry.op == Op::kLayerNormBackward) {
    // mean and rstd: one value per row; every present output of its input's shape (grad_input)
    // or of normalized_shape (parameter gradients). Absent outputs are 0-element placeholders.
    for (size_t a : {3, 4}) {
      const ir::TensorType* t = TensorArg(graph, node, a);
      if (t == nullptr) return {};
      for (int64_t d = 0; d < t->rank(); ++d)
        if (d >= t->rank() - (axes.leading ? x->rank() - k : k) && t->sizes[d] != 1) return {};
    }
    auto mask = BoolList(ArgOf(node, 7, "output_mask"));
    const std::vector<int64_t> params(x->sizes.end() - (axes.leading ? x->rank() - k : k),
                                      x->sizes.end());
    for (int o = 0; o < 3; ++o) {
      if (!(*mask)[o]) continue;
      if (node.outputs[o].sizes != (o == 0 ? x->sizes : params)) return {};
    }
  }
  // The backward ops read `output` at x's shape too.
  if (entry.op == Op::kSoftmaxBackward || entry.op == Op::kLogSoftmaxBackward) {
    const ir::TensorType* y = TensorArg(graph, node, 1);
    if (y == nullptr || y->sizes != x->sizes) return {};
  }
  if (entry.op == Op::kVar || entry.op == Op::kVarMean) {
    const double correction = Number(node.kwarg("correction")).value_or(1.0);
    if (static_cast<double>(row) - correction <= 0) return {};  // inf/NaN semantics: leave to ATen
  }
  return axes;
}

absl::StatusOr<std::vector<int>> LowerRowReductionOp(
    const ir::Graph& graph, const ir::Node& node,
    const std::function<int(const ir::ValueRef&)>& value_of, PwBuilder& b) {
  auto it = Table().find(node.target);
  RET_CHECK(it != Table().end());
  const ReductionAxes axes = ReductionAxesOf(graph, node);
  const int k = axes.num_reduced_dims;
  RET_CHECK(k > 0);
  const ir::TensorType& x_type = graph.type_of(node.args[0].ref());
  double n = 1;  // elements reduced into one value
  for (int64_t d = 0; d < x_type.rank(); ++d) {
    if (axes.leading ? d < k : d >= x_type.rank() - k) n *= static_cast<double>(x_type.sizes[d]);
  }

  const DType f32 = DType::kF32;
  auto in = [&](size_t index) { return b.Coerce(value_of(node.args[index].ref()), f32); };
  auto c = [&](double v) { return b.Constant(v, f32); };
  auto add = [&](int x, int y) { return b.Binary(PwOp::kAdd, x, y); };
  auto sub = [&](int x, int y) { return b.Binary(PwOp::kSub, x, y); };
  auto mul = [&](int x, int y) { return b.Binary(PwOp::kMul, x, y); };
  auto div = [&](int x, int y) { return b.Binary(PwOp::kDiv, x, y); };
  auto reduce = [&](PwOp op, int x) {
    PwInstr r;
    r.op = op;
    r.dtype = f32;
    r.args = {x};
    return b.Emit(std::move(r));
  };
  auto optional_tensor = [&](size_t index, const char* name) -> int {
    const ir::Arg* a = ArgOf(node, index, name);
    if (a == nullptr || !a->is_ref()) return -1;
    return b.Coerce(value_of(a->ref()), f32);
  };
  // Two passes over the row, as ATen's persistent kernels: the mean first, then the centred
  // sum of squares (no cancellation, unlike E[x^2] - E[x]^2).
  auto mean_and_centred = [&](int x, int* mean, int* centred) {
    *mean = div(reduce(PwOp::kReduceSum, x), c(n));
    *centred = sub(x, *mean);
  };

  switch (it->second.op) {
    case Op::kSum:
      return std::vector<int>{reduce(PwOp::kReduceSum, in(0))};
    case Op::kMean:
      return std::vector<int>{div(reduce(PwOp::kReduceSum, in(0)), c(n))};
    case Op::kAmax:
      return std::vector<int>{reduce(PwOp::kReduceMax, in(0))};
    case Op::kAmin:
      return std::vector<int>{reduce(PwOp::kReduceMin, in(0))};
    case Op::kLogSumExp: {
      // ATen: log(sum(exp(x - m))) + m with m = max(x), or 0 where max(x) is infinite (a row of
      // -inf gives -inf, a row holding +inf gives +inf, instead of NaN from inf - inf).
      const int x = in(0);
      const int max = reduce(PwOp::kReduceMax, x);
      const double inf = std::numeric_limits<double>::infinity();
      int m = b.Where(b.Compare(PwOp::kEq, max, c(inf)), c(0), max);
      m = b.Where(b.Compare(PwOp::kEq, max, c(-inf)), c(0), m);
      const int sum = reduce(PwOp::kReduceSum, b.Unary(PwOp::kExp, sub(x, m)));
      return std::vector<int>{add(b.Unary(PwOp::kLog, sum), m)};
    }
    case Op::kVar:
    case Op::kVarMean: {
      const double correction = Number(node.kwarg("correction")).value_or(1.0);
      int mean, d;
      mean_and_centred(in(0), &mean, &d);
      const int var = div(reduce(PwOp::kReduceSum, mul(d, d)), c(n - correction));
      if (it->second.op == Op::kVar) return std::vector<int>{var};
      return std::vector<int>{var, mean};
    }
    case Op::kSoftmax:
    case Op::kLogSoftmax: {
      const int x = in(0);
      const int shifted = sub(x, reduce(PwOp::kReduceMax, x));
      const int e = b.Unary(PwOp::kExp, shifted);
      const int sum = reduce(PwOp::kReduceSum, e);
      if (it->second.op == Op::kSoftmax) return std::vector<int>{div(e, sum)};
      return std::vector<int>{sub(shifted, b.Unary(PwOp::kLog, sum))};
    }
    case Op::kSafeSoftmax: {
      // ATen: where(all(x == -inf, dim), 0, softmax(x)); a row is all -inf iff its max is.
      const int x = in(0);
      const int max = reduce(PwOp::kReduceMax, x);
      const int e = b.Unary(PwOp::kExp, sub(x, max));
      const int soft = div(e, reduce(PwOp::kReduceSum, e));
      const int masked = b.Compare(PwOp::kEq, max, c(-std::numeric_limits<double>::infinity()));
      return std::vector<int>{b.Where(masked, c(0), soft)};
    }
    case Op::kSoftmaxBackward: {
      // grad_input = y * (g - sum(g * y))
      const int g = in(0), y = in(1);
      const int dot = reduce(PwOp::kReduceSum, mul(g, y));
      return std::vector<int>{mul(y, sub(g, dot))};
    }
    case Op::kLogSoftmaxBackward: {
      // grad_input = g - exp(y) * sum(g)
      const int g = in(0), y = in(1);
      const int sum = reduce(PwOp::kReduceSum, g);
      return std::vector<int>{sub(g, mul(b.Unary(PwOp::kExp, y), sum))};
    }
    case Op::kLayerNorm: {
      // out = (x - mean) * rstd * w + b; rstd = rsqrt(var + eps), var biased.
      int mean, d;
      mean_and_centred(in(0), &mean, &d);
      const int var = div(reduce(PwOp::kReduceSum, mul(d, d)), c(n));
      const int rstd =
          b.Unary(PwOp::kRsqrt, add(var, c(Number(ArgOf(node, 4, "eps")).value_or(1e-5))));
      int out = mul(d, rstd);
      if (int w = optional_tensor(2, "weight"); w >= 0) out = mul(out, w);
      if (int bias = optional_tensor(3, "bias"); bias >= 0) out = add(out, bias);
      return std::vector<int>{out, mean, rstd};
    }
    case Op::kRmsNorm: {
      // out = x * rsqrt(mean(x^2) + eps) * w; eps defaults to f32's epsilon (ATen's opmath).
      const int x = in(0);
      const int ms = div(reduce(PwOp::kReduceSum, mul(x, x)), c(n));
      const double eps =
          Number(ArgOf(node, 3, "eps")).value_or(std::numeric_limits<float>::epsilon());
      const int rstd = b.Unary(PwOp::kRsqrt, add(ms, c(eps)));
      int out = mul(x, rstd);
      if (int w = optional_tensor(2, "weight"); w >= 0) out = mul(out, w);
      return std::vector<int>{out, rstd};
    }
    case Op::kLayerNormBackward: {
      // x_hat = (x - mean) * rstd. grad_input (rows; ATen's layer_norm_backward):
      //   rstd * (g*w - (sum(g*w) + x_hat * sum(g*w*x_hat)) / N);
      // grad_weight = sum over rows of g * x_hat, grad_bias = sum over rows of g (columns).
      const int g = in(0);
      const int x_hat = mul(sub(in(1), in(3)), in(4));
      if (!axes.leading) {
        int wg = g;
        if (int w = optional_tensor(5, "weight"); w >= 0) wg = mul(g, w);
        const int sum_wg = reduce(PwOp::kReduceSum, wg);
        const int sum_wgx = reduce(PwOp::kReduceSum, mul(wg, x_hat));
        const int inner = mul(add(sum_wg, mul(x_hat, sum_wgx)), c(1.0 / n));
        return std::vector<int>{mul(in(4), sub(wg, inner)), -1, -1};
      }
      auto mask = BoolList(ArgOf(node, 7, "output_mask"));
      RET_CHECK(mask && mask->size() == 3);
      return std::vector<int>{-1, (*mask)[1] ? reduce(PwOp::kReduceSum, mul(g, x_hat)) : -1,
                              (*mask)[2] ? reduce(PwOp::kReduceSum, g) : -1};
    }
  }
  return absl::InternalError("unreachable");
}

}  // namespace tccd::codegen

// ATen reductions and normalisations -> row-reduction kernel IR (see reduction_ops.h).
#include "codegen/passes/reduction_ops.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "proto/status_macros.h"

namespace tccd::codegen {
namespace {

using ir::DType;

enum class Op {
  kSum,
  kMean,
  kAmax,
  kAmin,
  kVar,
  kVarMean,
  kSoftmax,
  kLogSoftmax,
  kSoftmaxBackward,
  kLogSoftmaxBackward,
  kLayerNorm,
  kRmsNorm,
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
      {"aten::var.correction", {Op::kVar, {"dim", "correction", "keepdim"}}},
      {"aten::var_mean.correction", {Op::kVarMean, {"dim", "correction", "keepdim"}}},
      {"aten::_softmax.default", {Op::kSoftmax, {}}},
      {"aten::_log_softmax.default", {Op::kLogSoftmax, {}}},
      {"aten::_softmax_backward_data.default", {Op::kSoftmaxBackward, {}}},
      {"aten::_log_softmax_backward_data.default", {Op::kLogSoftmaxBackward, {}}},
      {"aten::native_layer_norm.default", {Op::kLayerNorm, {}}},
      {"aten::_fused_rms_norm.default", {Op::kRmsNorm, {}}},
  };
  return *table;
}

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

bool IsComputeFloat(DType d) { return d == DType::kF32 || d == DType::kF16 || d == DType::kBF16; }

const ir::TensorType* TensorArg(const ir::Graph& graph, const ir::Node& node, size_t index) {
  if (index >= node.args.size() || !node.args[index].is_ref()) return nullptr;
  return &graph.type_of(node.args[index].ref());
}

// The reduced dims of `node` (0 if unsupported), before the size and dtype checks.
int ReducedDims(const ir::Graph& graph, const ir::Node& node, Op op, int64_t rank) {
  switch (op) {
    case Op::kSum:
    case Op::kMean:
    case Op::kAmax:
    case Op::kAmin:
    case Op::kVar:
    case Op::kVarMean: {
      auto dims = IntList(ArgOf(node, 1, "dim"));
      return dims ? TrailingDims(*dims, rank) : 0;
    }
    case Op::kSoftmax:
    case Op::kLogSoftmax:
    case Op::kSoftmaxBackward:
    case Op::kLogSoftmaxBackward: {
      const ir::Arg* dim = ArgOf(node, 2 - (op == Op::kSoftmax || op == Op::kLogSoftmax), "dim");
      auto d = dim ? std::get_if<int64_t>(&dim->v) : nullptr;
      if (d == nullptr) return 0;
      return (*d == -1 || *d == rank - 1) ? 1 : 0;
    }
    case Op::kLayerNorm:
    case Op::kRmsNorm: {
      auto shape = IntList(ArgOf(node, 1, "normalized_shape"));
      if (!shape || shape->empty() || static_cast<int64_t>(shape->size()) > rank) return 0;
      const ir::TensorType& x = graph.type_of(node.args[0].ref());
      for (size_t i = 0; i < shape->size(); ++i) {
        if ((*shape)[i] != x.sizes[rank - shape->size() + i]) return 0;
      }
      return static_cast<int>(shape->size());
    }
  }
  return 0;
}

}  // namespace

int RowReductionDims(const ir::Graph& graph, const ir::Node& node) {
  auto it = Table().find(node.target);
  if (it == Table().end()) return 0;
  const OpEntry& entry = it->second;
  for (const ir::NamedArg& kw : node.kwargs) {
    if (!entry.kwargs.count(kw.name) || kw.value.is_ref()) return 0;
  }
  const ir::TensorType* x = TensorArg(graph, node, 0);
  if (x == nullptr || x->rank() == 0 || x->device != ir::DeviceType::kCuda) return 0;
  if (!IsComputeFloat(x->dtype)) return 0;
  const int k = ReducedDims(graph, node, entry.op, x->rank());
  if (k == 0) return 0;
  int64_t row = 1, rows = 1;
  for (int64_t d = 0; d < x->rank(); ++d) (d < x->rank() - k ? rows : row) *= x->sizes[d];
  if (row < 1 || row > kMaxRowReductionLength || rows < 1 ||
      rows > std::numeric_limits<int32_t>::max()) {
    return 0;
  }
  // Every other tensor argument: same device, a float dtype, broadcastable to x (right-aligned).
  for (size_t i = 1; i < node.args.size(); ++i) {
    const ir::Arg& a = node.args[i];
    if (a.is_none() || !a.is_ref()) {
      if (std::holds_alternative<ir::ArgList>(a.v)) {
        bool has_ref = false;
        ir::ForEachRef(a, [&](const ir::ValueRef&) { has_ref = true; });
        if (has_ref) return 0;
      }
      continue;
    }
    const ir::TensorType& t = graph.type_of(a.ref());
    if (t.device != x->device || !IsComputeFloat(t.dtype) || t.rank() > x->rank()) return 0;
    for (int64_t d = 0; d < t.rank(); ++d) {
      const int64_t size = t.sizes[t.rank() - 1 - d];
      if (size != 1 && size != x->sizes[x->rank() - 1 - d]) return 0;
    }
  }
  for (const ir::TensorType& out : node.outputs) {
    if (out.device != x->device || !IsComputeFloat(out.dtype)) return 0;
  }
  // The backward ops read `output` at x's shape too.
  if (entry.op == Op::kSoftmaxBackward || entry.op == Op::kLogSoftmaxBackward) {
    const ir::TensorType* y = TensorArg(graph, node, 1);
    if (y == nullptr || y->sizes != x->sizes) return 0;
  }
  if (entry.op == Op::kVar || entry.op == Op::kVarMean) {
    const double correction = Number(node.kwarg("correction")).value_or(1.0);
    if (static_cast<double>(row) - correction <= 0) return 0;  // inf/NaN semantics: leave to ATen
  }
  return k;
}

absl::StatusOr<std::vector<int>> LowerRowReductionOp(
    const ir::Graph& graph, const ir::Node& node,
    const std::function<int(const ir::ValueRef&)>& value_of, PwBuilder& b) {
  auto it = Table().find(node.target);
  RET_CHECK(it != Table().end());
  const int k = RowReductionDims(graph, node);
  RET_CHECK(k > 0);
  const ir::TensorType& x_type = graph.type_of(node.args[0].ref());
  double n = 1;
  for (int64_t d = x_type.rank() - k; d < x_type.rank(); ++d) n *= static_cast<double>(x_type.sizes[d]);

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
    case Op::kSum: return std::vector<int>{reduce(PwOp::kReduceSum, in(0))};
    case Op::kMean: return std::vector<int>{div(reduce(PwOp::kReduceSum, in(0)), c(n))};
    case Op::kAmax: return std::vector<int>{reduce(PwOp::kReduceMax, in(0))};
    case Op::kAmin: return std::vector<int>{reduce(PwOp::kReduceMin, in(0))};
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
      const int rstd = b.Unary(PwOp::kRsqrt, add(var, c(Number(ArgOf(node, 4, "eps")).value_or(1e-5))));
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
  }
  return absl::InternalError("unreachable");
}

}  // namespace tccd::codegen

// SplitReductions (see split_reductions.h).
#include "codegen/passes/split_reductions.h"

#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "codegen/passes/graph_rebuild.h"
#include "codegen/passes/pointwise_ops.h"
#include "codegen/passes/reduction_ops.h"

namespace tccd::codegen {
namespace {

using ir::DType;

enum class Kind { kSum, kMean, kAmax, kAmin, kVar, kVarMean };

std::optional<Kind> KindOf(const std::string& target) {
  static const auto* kinds = new std::map<std::string, Kind>{
      {"aten::sum.dim_IntList", Kind::kSum}, {"aten::mean.dim", Kind::kMean},
      {"aten::amax.default", Kind::kAmax},   {"aten::amin.default", Kind::kAmin},
      {"aten::var.correction", Kind::kVar},  {"aten::var_mean.correction", Kind::kVarMean},
  };
  auto it = kinds->find(target);
  if (it == kinds->end()) return std::nullopt;
  return it->second;
}

// What one split needs to know about the reduction: x's type, the first reduced dim p (the
// reduced dims are p..rank-1), and the element counts.
struct Shape {
  ir::TensorType x;
  int64_t p = 0;
  int64_t reduced = 1;  // R: elements reduced into one value
  int64_t rows = 1;     // values produced
};

std::optional<Shape> ShapeOf(const ir::Graph& graph, const ir::Node& node) {
  if (!KindOf(node.target) || node.args.empty() || !node.args[0].is_ref()) return std::nullopt;
  // Refused as it is, accepted but for the few-long-rows limit.
  if (ReductionAxesOf(graph, node).num_reduced_dims > 0) return std::nullopt;
  const ReductionAxes axes = ReductionAxesOf(graph, node, /*allow_few_long_rows=*/true);
  if (axes.num_reduced_dims == 0 || axes.leading) return std::nullopt;
  Shape s;
  s.x = graph.type_of(node.args[0].ref());
  s.p = s.x.rank() - axes.num_reduced_dims;
  for (int64_t d = 0; d < s.x.rank(); ++d) (d >= s.p ? s.reduced : s.rows) *= s.x.sizes[d];
  for (const ir::TensorType& o : node.outputs)
    if (!IsPlain(o) || o.numel() != s.rows) return std::nullopt;
  return s;
}

// S for a reduction of `shape`: a divisor of d0 that both stages' row kernels accept. The
// smallest that reaches kSplitTargetBlocks stage-1 rows with chunks short enough to be held in
// registers (kMaxFewRowsLength: read once, not streamed once per reduction); else the smallest
// that reaches the target; else the one with the most rows.
std::optional<int64_t> ChooseSplit(const Shape& shape) {
  const int64_t d0 = shape.x.sizes[shape.p];
  std::optional<int64_t> most_rows, enough_rows;
  for (int64_t s = 2; s <= d0; ++s) {
    if (d0 % s != 0) continue;
    const int64_t chunk = shape.reduced / s;
    if (chunk < kMinSplitChunkLength) break;  // only shorter from here
    const bool stage1_ok = chunk <= kMaxFewRowsLength || shape.rows * s >= kMinRowsForLongRows;
    const bool stage2_ok = s <= kMaxFewRowsLength || shape.rows >= kMinRowsForLongRows;
    if (!stage1_ok || !stage2_ok) continue;
    most_rows = s;
    if (shape.rows * s < kSplitTargetBlocks) continue;
    if (chunk <= kMaxFewRowsLength) return s;
    if (!enough_rows) enough_rows = s;
  }
  return enough_rows ? enough_rows : most_rows;
}

// A value over a split shape: (value, its split dim, S, x's sizes).
using SplitKey = std::tuple<ir::ValueRef, int64_t, int64_t, std::vector<int64_t>>;
using SplitMemo = std::map<SplitKey, ir::Arg>;

// Emits one split of `node` into `out` (its arguments are values of `out`). Values already split
// the same way for an earlier reduction (`memo`) are reused: the two sums of a batch norm
// backward then read one recomputed chain, and row fusion puts them in one kernel.
class Splitter {
 public:
  Splitter(ir::Graph& out, const ir::Node& node, const Shape& shape, int64_t s,
           const SplitMemo& memo)
      : out_(out), node_(node), shape_(shape), s_(s), memo_(memo) {
    const std::vector<int64_t>& x = shape.x.sizes;
    split_sizes_.assign(x.begin(), x.begin() + shape.p);
    split_sizes_.push_back(s);
    split_sizes_.push_back(x[shape.p] / s);
    split_sizes_.insert(split_sizes_.end(), x.begin() + shape.p + 1, x.end());
    partial_sizes_.assign(x.begin(), x.begin() + shape.p + 1);
    partial_sizes_.back() = s;
  }

  // The node's new output values, or nullopt (the caller drops what was emitted).
  std::optional<std::vector<ir::Arg>> Emit() {
    const Kind kind = *KindOf(node_.target);
    const int64_t k = shape_.x.rank() - shape_.p;  // reduced dims
    const std::vector<int64_t>& x = shape_.x.sizes;
    // Stage 2 gives the declared output shape itself (keepdim's size-1 dims included), so that
    // the ops reading it (a norm's rsqrt, its running-stat update) stay its epilogue.
    std::vector<int64_t> kept(x.begin(), x.begin() + shape_.p);
    const bool keepdim = node_.outputs[0].sizes.size() == x.size();
    if (keepdim) kept.resize(x.size(), 1);
    for (const ir::TensorType& o : node_.outputs)
      if (o.sizes != kept) return std::nullopt;
    std::vector<int64_t> kept_dims = kept;  // with keepdim's size-1 dims (a broadcast operand)
    kept_dims.resize(x.size(), 1);

    std::optional<ir::Arg> xs = Split(node_.args[0]);
    if (!xs) return std::nullopt;
    std::vector<int64_t> dims1, dims2;
    for (int64_t d = shape_.p + 1; d <= shape_.x.rank(); ++d) dims1.push_back(d);
    for (int64_t d = shape_.p; d < shape_.x.rank(); ++d) dims2.push_back(d);
    const DType f32 = DType::kF32;
    auto reduce = [&](std::string target, ir::Arg in, const std::vector<int64_t>& dims, bool keep,
                      std::vector<ir::TensorType> outputs, std::vector<ir::NamedArg> kwargs,
                      bool keepdim_arg) -> std::optional<ir::Arg> {
      ir::Node n{.target = std::move(target),
                 .args = {in, IntListArg(dims)},
                 .kwargs = std::move(kwargs),
                 .outputs = std::move(outputs)};
      if (keepdim_arg)
        n.args.push_back(ir::Arg{keep});
      else if (keep)
        n.kwargs.push_back({"keepdim", ir::Arg{true}});
      if (ReductionAxesOf(out_, n) != ReductionAxes{static_cast<int>(dims.size()), false})
        return std::nullopt;
      return AppendNode(out_, std::move(n));
    };
    auto with_dtype = [](DType d) { return std::vector<ir::NamedArg>{{"dtype", ir::Arg{d}}}; };
    // Stage 1's [rows.., S] partials seen as [rows.., S, 1, ..] (x's rank): stage 2 reduces the
    // same dims as the node and keeps its output shape.
    auto partials = [&](ir::Arg s1) {
      if (k == 1) return s1;
      ir::TensorType t = out_.type_of(s1.ref());
      t.sizes.resize(x.size(), 1);
      t.strides = ir::ContiguousStrides(t.sizes);
      return EmitOp(out_, "aten::view.default", {s1, IntListArg(t.sizes)}, t);
    };
    std::vector<ir::Arg> results;
    switch (kind) {
      case Kind::kSum:
      case Kind::kMean: {
        // Chunks are equal: the mean of the chunk means is the mean.
        const std::string target = node_.target;
        auto s1 =
            reduce(target, *xs, dims1, false, {Dense(f32, partial_sizes_)}, with_dtype(f32), true);
        if (!s1) return std::nullopt;
        auto s2 = reduce(target, partials(*s1), dims2, keepdim, {node_.outputs[0]},
                         with_dtype(node_.outputs[0].dtype), true);
        if (!s2) return std::nullopt;
        results.push_back(*s2);
        break;
      }
      case Kind::kAmax:
      case Kind::kAmin: {
        auto s1 = reduce(node_.target, *xs, dims1, false, {Dense(shape_.x.dtype, partial_sizes_)},
                         {}, true);
        if (!s1) return std::nullopt;
        auto s2 = reduce(node_.target, partials(*s1), dims2, keepdim, {node_.outputs[0]}, {}, true);
        if (!s2) return std::nullopt;
        results.push_back(*s2);
        break;
      }
      case Kind::kVar:
      case Kind::kVarMean: {
        ir::Arg xf = *xs;
        if (shape_.x.dtype != f32)
          xf = EmitOp(out_, "aten::_to_copy.default", {xf}, Dense(f32, split_sizes_),
                      with_dtype(f32));
        const std::vector<ir::NamedArg> biased = {{"correction", ir::Arg{int64_t{0}}}};
        auto s1 = reduce("aten::var_mean.correction", xf, dims1, false,
                         {Dense(f32, partial_sizes_), Dense(f32, partial_sizes_)}, biased, false);
        if (!s1) return std::nullopt;
        const ir::Arg chunk_var = partials(*s1),
                      chunk_mean = partials(ir::Arg{ir::ValueRef{s1->ref().node, 1}});
        // One row kernel: the mean of the chunk means, then the mean of (chunk variance +
        // squared deviation of the chunk mean) = the biased variance.
        auto mean =
            reduce("aten::mean.dim", chunk_mean, dims2, true, {Dense(f32, kept_dims)}, {}, true);
        if (!mean) return std::nullopt;
        const ir::TensorType chunk_type = out_.type_of(chunk_mean.ref());
        const ir::Arg dev = EmitOp(out_, "aten::sub.Tensor", {chunk_mean, *mean}, chunk_type);
        const ir::Arg sq = EmitOp(out_, "aten::mul.Tensor", {dev, dev}, chunk_type);
        const ir::Arg total = EmitOp(out_, "aten::add.Tensor", {chunk_var, sq}, chunk_type);
        auto var = reduce("aten::mean.dim", total, dims2, keepdim, {Dense(f32, kept)}, {}, true);
        if (!var) return std::nullopt;
        const double n = static_cast<double>(shape_.reduced);
        const double correction = CorrectionOf(node_);
        if (correction != 0)
          var = EmitOp(out_, "aten::mul.Tensor", {*var, ir::Arg{n / (n - correction)}},
                       Dense(f32, kept));
        results.push_back(*var);
        if (kind == Kind::kVarMean) {
          results.push_back(keepdim ? *mean
                                    : EmitOp(out_, "aten::view.default", {*mean, IntListArg(kept)},
                                             Dense(f32, kept)));
        }
        break;
      }
    }
    if (results.size() != node_.outputs.size()) return std::nullopt;
    // The declared dtypes (var/var_mean compute in f32).
    for (size_t o = 0; o < results.size(); ++o) {
      const ir::TensorType& want = node_.outputs[o];
      if (out_.type_of(results[o].ref()).dtype != want.dtype)
        results[o] =
            EmitOp(out_, "aten::_to_copy.default", {results[o]}, want, with_dtype(want.dtype));
    }
    return results;
  }

 private:
  static double CorrectionOf(const ir::Node& node) {
    const ir::Arg* c = node.kwarg("correction");
    if (c == nullptr) return 1.0;
    if (auto* i = std::get_if<int64_t>(&c->v)) return static_cast<double>(*i);
    if (auto* d = std::get_if<double>(&c->v)) return *d;
    return 1.0;
  }

  ir::TensorType Dense(DType dtype, const std::vector<int64_t>& sizes) const {
    return DenseType(dtype, sizes, shape_.x.device);
  }

  // Whether `n` is re-emitted over the split shape instead of being viewed: a pointwise op of
  // x's full shape whose value depends on its operands element by element (not a fill, whose
  // shape is an argument, and not a Philox draw, whose value depends on its element's index).
  bool Recomputable(const ir::Node& n) const {
    if (n.outputs.size() != 1 || n.outputs[0].sizes != shape_.x.sizes || !IsPointwiseOp(out_, n))
      return false;
    if (PointwiseValueIgnoresOperands(n) || absl::StartsWith(n.target, "tccd::philox"))
      return false;
    for (const ir::Arg& a : n.args)
      if (std::holds_alternative<ir::ArgList>(a.v)) return false;
    for (const ir::NamedArg& kw : n.kwargs)
      if (kw.value.is_ref() || std::holds_alternative<ir::ArgList>(kw.value.v)) return false;
    return true;
  }

  // `a` (broadcastable to x's shape) over the split shape: dim d0 (or its size-1 broadcast
  // dim) becomes two dims; operands that do not reach d0 broadcast as they are.
  std::optional<ir::Arg> Split(const ir::Arg& a) {
    if (!a.is_ref()) return a;
    const ir::ValueRef ref = a.ref();
    const ir::TensorType t = out_.type_of(ref);
    const int64_t q = shape_.p - (shape_.x.rank() - t.rank());
    if (t.rank() == 0 || q < 0) return a;
    const SplitKey key{ref, q, s_, shape_.x.sizes};
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    if (auto it = done_.find(key); it != done_.end()) return it->second;
    std::optional<ir::Arg> result;
    if (!ref.is_input() && recomputed_ < kMaxRecomputed && Recomputable(out_.nodes[ref.node])) {
      ++recomputed_;
      ir::Node n = out_.nodes[ref.node];
      for (ir::Arg& arg : n.args) {
        std::optional<ir::Arg> split = Split(arg);
        if (!split) return std::nullopt;
        arg = *std::move(split);
      }
      n.outputs[0] = Dense(n.outputs[0].dtype, split_sizes_);
      result = AppendNode(out_, std::move(n));
    } else {
      const int64_t d0 = shape_.x.sizes[shape_.p];
      const int64_t size = t.sizes[q], stride = t.strides[q];
      if (size != d0 && size != 1) return std::nullopt;
      ir::TensorType v = t;
      v.sizes.erase(v.sizes.begin() + q);
      v.strides.erase(v.strides.begin() + q);
      const std::vector<int64_t> sizes =
          size == 1 ? std::vector<int64_t>{1, 1} : std::vector<int64_t>{s_, d0 / s_};
      const std::vector<int64_t> strides = size == 1
                                               ? std::vector<int64_t>{stride, stride}
                                               : std::vector<int64_t>{stride * (d0 / s_), stride};
      v.sizes.insert(v.sizes.begin() + q, sizes.begin(), sizes.end());
      v.strides.insert(v.strides.begin() + q, strides.begin(), strides.end());
      // ATen's view of a contiguous tensor is contiguous (whatever the size-1 strides were).
      if (t.IsContiguous()) v.strides = ir::ContiguousStrides(v.sizes);
      result = EmitOp(out_, "aten::view.default", {a, IntListArg(v.sizes)}, v);
    }
    done_[key] = *result;
    return result;
  }

  // A bound on the pointwise ops one split recomputes (beyond it, values are viewed and read).
  static constexpr int kMaxRecomputed = 32;

  ir::Graph& out_;
  const ir::Node& node_;
  const Shape& shape_;
  const int64_t s_;
  std::vector<int64_t> split_sizes_, partial_sizes_;
  const SplitMemo& memo_;
  SplitMemo done_;  // this split's own; committed to the memo when the split succeeds
  int recomputed_ = 0;

 public:
  const SplitMemo& done() const { return done_; }
};

}  // namespace

std::optional<int64_t> SplitFactor(const ir::Graph& graph, const ir::Node& node) {
  std::optional<Shape> shape = ShapeOf(graph, node);
  if (!shape) return std::nullopt;
  return ChooseSplit(*shape);
}

absl::StatusOr<bool> SplitReductions::Run(ir::Graph& graph) {
  SplitMemo memo;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        std::optional<Shape> shape = ShapeOf(out, node);
        if (!shape) return std::nullopt;
        std::optional<int64_t> s = ChooseSplit(*shape);
        if (!s) return std::nullopt;
        const size_t mark = out.nodes.size();
        Splitter splitter(out, node, *shape, *s, memo);
        std::optional<std::vector<ir::Arg>> values = splitter.Emit();
        if (!values) {
          out.nodes.resize(mark);
          return std::nullopt;
        }
        memo.insert(splitter.done().begin(), splitter.done().end());
        return values;
      });
}

}  // namespace tccd::codegen

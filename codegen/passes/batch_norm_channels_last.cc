// Channels-last training batch norm (see batch_norm_channels_last.h).
#include "codegen/passes/batch_norm_channels_last.h"

#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "codegen/passes/channels_last_layout.h"
#include "codegen/passes/graph_rebuild.h"
#include "codegen/passes/pointwise_ops.h"
#include "codegen/passes/reduction_ops.h"
#include "codegen/passes/split_columns.h"

namespace tccd::codegen {
namespace {

constexpr ir::DType kF32 = ir::DType::kF32;
// The column count a split aims for (2048 bf16 columns are 256 16-byte vectors: 64 tiles of 4
// threads times the 8-block cluster split, 512 blocks, about 4 per SM of an H100, enough loads
// in flight for a kernel that streams one map; 2048 channels and more need no split, which
// saves the second launch), and the fewest rows a stage-one column keeps. It was 512 when the
// column kernels moved 8 bytes of bf16 per thread (twice the tiles for the same columns).
// SplitColumnTarget() (split_columns.h): 2048 unless TCCD_SPLIT_COLUMNS says otherwise.
constexpr int64_t kMinRows = 256;

std::optional<double> Number(const ir::Arg& arg) {
  if (const auto* d = std::get_if<double>(&arg.v)) return *d;
  if (const auto* i = std::get_if<int64_t>(&arg.v)) return static_cast<double>(*i);
  return std::nullopt;
}

// A [C] float vector on CUDA, dense (f32 only unless `any_float`); None passes when `optional`.
bool IsVector(const ir::Graph& g, const ir::Arg& a, int64_t c, bool any_float, bool optional) {
  if (a.is_none()) return optional;
  if (!a.is_ref()) return false;
  const ir::TensorType& t = g.type_of(a.ref());
  return t.device == ir::DeviceType::kCuda &&
         (any_float ? IsF32OrHalf(t.dtype) : t.dtype == kF32) && t.rank() == 1 && t.sizes[0] == c &&
         (c == 1 || t.strides[0] == 1) && t.storage_offset == 0;
}

// Emits the views, reductions and pointwise ops of one norm into `out`.
class Emitter {
 public:
  Emitter(ir::Graph& out, const ir::TensorType& x) : out_(out), x_(x) {
    c_ = x.sizes[1];
    m_ = x.numel() / c_;
    while (b_ * c_ < SplitColumnTarget() && m_ % (2 * b_) == 0 && m_ / (2 * b_) >= kMinRows)
      b_ *= 2;
    a_ = m_ / b_;
  }

  int64_t m() const { return m_; }

  ir::TensorType Dense(ir::DType dtype, std::vector<int64_t> sizes) const {
    return DenseType(dtype, std::move(sizes), ir::DeviceType::kCuda);
  }
  // x's shape and (channels-last) strides in `dtype`.
  ir::TensorType LikeX(ir::DType dtype) const {
    ir::TensorType t = x_;
    t.dtype = dtype;
    return t;
  }
  ir::TensorType Stat() const { return Dense(kF32, {1, c_}); }

  ir::Arg Emit(std::string target, std::vector<ir::Arg> args, ir::TensorType type,
               std::vector<ir::NamedArg> kwargs = {}) {
    return EmitOp(out_, std::move(target), std::move(args), std::move(type), std::move(kwargs));
  }
  ir::Arg Binary(const char* target, const ir::Arg& a, const ir::Arg& b,
                 const ir::TensorType& type) {
    return Emit(target, {a, b}, type);
  }
  ir::Arg F32(const ir::Arg& v, const ir::TensorType& type) {
    if (out_.type_of(v.ref()).dtype == kF32) return v;
    return Emit("aten::_to_copy.default", {v}, type, {{"dtype", ir::Arg{kF32}}});
  }

  // A channels-last [N, C, H, W] tensor as the f32 [A, B, C] rows of its memory (views, then a
  // cast that becomes the column kernel's prologue). With `recompute`, a pointwise producer of
  // it (Recomputable: the relu backward before a norm backward) is re-emitted over [A, B, C]
  // on views of its operands instead, so that the column kernel reads those and the tensor
  // itself is left to its one other reader, which fuses it: the threshold_backward output was
  // otherwise written twice (bf16 for the views, f32 for the normalisation's kernel) and read
  // back by both.
  ir::Arg Rows(const ir::Arg& s_tensor, bool recompute = false) {
    return F32(RowsIn(s_tensor, recompute ? kMaxRecomputeDepth : 0), Dense(kF32, {a_, b_, c_}));
  }

 private:
  // One level: the direct producer (a relu backward); its own operands are read.
  static constexpr int kMaxRecomputeDepth = 1;

  // Whether `n` is a pointwise op of x's shape and layout whose value depends on its operands
  // element by element (not a fill, not a Philox draw) and whose tensor operands have x's shape
  // and layout too (or are 0-dim).
  bool Recomputable(const ir::Node& n) const {
    if (n.outputs.size() != 1 || !IsPointwiseOp(out_, n) || PointwiseValueIgnoresOperands(n) ||
        absl::StartsWith(n.target, "tccd::philox"))
      return false;
    auto like_x = [&](const ir::TensorType& t) {
      return t.sizes == x_.sizes && t.strides == x_.strides && t.storage_offset == 0;
    };
    if (!like_x(n.outputs[0])) return false;
    for (const ir::NamedArg& kw : n.kwargs)
      if (kw.value.is_ref() || std::holds_alternative<ir::ArgList>(kw.value.v)) return false;
    for (const ir::Arg& a : n.args) {
      if (std::holds_alternative<ir::ArgList>(a.v)) return false;
      if (a.is_ref() && out_.type_of(a.ref()).rank() != 0 && !like_x(out_.type_of(a.ref())))
        return false;
    }
    return true;
  }

  // `s_tensor` as [A, B, C] in its own dtype: its producer re-emitted (up to `depth` levels)
  // or a view.
  ir::Arg RowsIn(const ir::Arg& s_tensor, int depth) {
    const ir::ValueRef r = s_tensor.ref();
    const ir::TensorType& t = out_.type_of(r);
    if (depth > 0 && !r.is_input() && Recomputable(out_.nodes[r.node])) {
      ir::Node n = out_.nodes[r.node];
      for (ir::Arg& a : n.args)
        if (a.is_ref() && out_.type_of(a.ref()).rank() != 0) a = RowsIn(a, depth - 1);
      n.outputs[0] = Dense(t.dtype, {a_, b_, c_});
      return AppendNode(out_, std::move(n));
    }
    ir::TensorType nhwc = t;
    nhwc.sizes = {t.sizes[0], t.sizes[2], t.sizes[3], t.sizes[1]};
    nhwc.strides = ir::ContiguousStrides(nhwc.sizes);
    const ir::Arg p = Emit("aten::permute.default", {s_tensor, IntListArg({0, 2, 3, 1})}, nhwc);
    const ir::Arg v =
        Emit("aten::view.default", {p, IntListArg({a_, b_, c_})}, Dense(t.dtype, {a_, b_, c_}));
    return v;
  }

 public:
  // Per-channel sums of an f32 [A, B, C] value, [1, C]: one column kernel, or two when B > 1.
  std::optional<ir::Arg> ColumnSum(const ir::Arg& rows) {
    ir::Node stage{.target = "aten::sum.dim_IntList",
                   .args = {rows, IntListArg({0})},
                   .outputs = {Dense(kF32, {b_, c_})}};
    if (ReductionAxesOf(out_, stage) != ReductionAxes{1, true}) return std::nullopt;
    ir::Arg partial = AppendNode(out_, std::move(stage));
    if (b_ == 1) return partial;  // already [1, C]
    ir::Node combine{.target = "aten::sum.dim_IntList",
                     .args = {partial, IntListArg({0}), ir::Arg{true}},
                     .outputs = {Stat()}};
    if (ReductionAxesOf(out_, combine) != ReductionAxes{1, true}) return std::nullopt;
    return AppendNode(out_, std::move(combine));
  }

  ir::TensorType RowsType() const { return Dense(kF32, {a_, b_, c_}); }

  // x[0, :, 0, 0] of a channels-last x as a [C] view (offset 0, unit stride: the first C
  // elements of its memory), in x's dtype.
  ir::Arg FirstPixel(const ir::Arg& s_tensor) {
    const ir::Arg rows = RowsIn(s_tensor, 0);
    ir::TensorType t = out_.type_of(rows.ref());
    t.sizes = {b_, c_};
    t.strides = {c_, 1};
    const ir::Arg first_row =
        Emit("aten::select.int", {rows, ir::Arg{int64_t{0}}, ir::Arg{int64_t{0}}}, t);
    t.sizes = {c_};
    t.strides = {1};
    return Emit("aten::select.int", {first_row, ir::Arg{int64_t{0}}, ir::Arg{int64_t{0}}}, t);
  }

  // A [1, C] statistic or a [C] vector as [C, 1, 1], to broadcast over x's [N, C, H, W].
  ir::Arg PerChannel(const ir::Arg& v) {
    ir::TensorType t = out_.type_of(v.ref());
    t.sizes = {c_, 1, 1};
    t.strides = {1, 1, 1};
    return Emit("aten::view.default", {v, IntListArg({c_, 1, 1})}, t);
  }
  // A [1, C] statistic as a [C] vector of `dtype`.
  ir::Arg Vector(ir::Arg stat, ir::DType dtype) {
    if (dtype != kF32) {
      ir::TensorType t = Stat();
      t.dtype = dtype;
      stat = Emit("aten::_to_copy.default", {stat}, t, {{"dtype", ir::Arg{dtype}}});
    }
    return Emit("aten::view.default", {stat, IntListArg({c_})}, Dense(dtype, {c_}));
  }
  ir::Arg AsStat(const ir::Arg& vector) {
    ir::TensorType t = Stat();
    t.dtype = out_.type_of(vector.ref()).dtype;
    return Emit("aten::view.default", {vector, IntListArg({1, c_})}, t);
  }

 private:
  ir::Graph& out_;
  ir::TensorType x_;
  int64_t c_ = 0, m_ = 0, a_ = 0, b_ = 1;
};

}  // namespace

bool IsChannelsLastNormInput(const ir::TensorType& t) {
  return t.device == ir::DeviceType::kCuda && IsF32OrHalf(t.dtype) && t.rank() == 4 &&
         t.numel() > 0 && t.storage_offset == 0 && t.strides == ChannelsLastStrides(t.sizes) &&
         t.strides != ir::ContiguousStrides(t.sizes);
}

std::optional<std::vector<ir::Arg>> DecomposeChannelsLastForward(ir::Graph& out,
                                                                 const ir::Node& node) {
  if (node.args.size() != 8 || !node.kwargs.empty() || node.outputs.size() != 5 ||
      !node.args[0].is_ref())
    return std::nullopt;
  const ir::TensorType x = out.type_of(node.args[0].ref());
  const bool* training = std::get_if<bool>(&node.args[5].v);
  const std::optional<double> momentum = Number(node.args[6]), eps = Number(node.args[7]);
  if (!IsChannelsLastNormInput(x) || training == nullptr || !*training || !momentum || !eps)
    return std::nullopt;
  if (node.outputs[0] != x) return std::nullopt;
  const int64_t c = x.sizes[1];
  if (!IsVector(out, node.args[1], c, false, true) ||
      !IsVector(out, node.args[2], c, false, true) ||
      !IsVector(out, node.args[3], c, false, false) ||
      !IsVector(out, node.args[4], c, false, false))
    return std::nullopt;
  for (int o = 1; o < 5; ++o) {
    const ir::TensorType& t = node.outputs[o];
    if (t.rank() != 1 || t.sizes[0] != c || !IsF32OrHalf(t.dtype)) return std::nullopt;
  }
  Emitter e(out, x);
  if (e.m() < 2) return std::nullopt;  // the unbiased running variance divides by n - 1
  const size_t mark = out.nodes.size();
  auto undo = [&] {
    out.nodes.resize(mark);
    return std::nullopt;
  };
  const double inv_m = 1.0 / static_cast<double>(e.m());
  const ir::TensorType stat = e.Stat();
  // One pass over x for both statistics, shifted by K = x's first pixel (a [C] view, read as a
  // per-column operand): with d = x - K, mean = K + sum(d) / M and var = sum(d^2) / M -
  // (sum(d) / M)^2. The shift keeps the cancellation of the sum-of-squares form to
  // (mean - K)^2 / var, about 1 for a sample of the channel (eps_f32 relative error), where
  // unshifted sums over post-convolution maps with a large mean would lose bits. Each sum casts
  // x itself (both are one column kernel; a value shared between them would be written out).
  const ir::Arg shift = e.FirstPixel(node.args[0]);
  const ir::Arg d1 = e.Binary("aten::sub.Tensor", e.Rows(node.args[0]), shift, e.RowsType());
  const ir::Arg d2 = e.Binary("aten::sub.Tensor", e.Rows(node.args[0]), shift, e.RowsType());
  std::optional<ir::Arg> sum = e.ColumnSum(d1);
  if (!sum) return undo();
  std::optional<ir::Arg> squares = e.ColumnSum(e.Binary("aten::mul.Tensor", d2, d2, e.RowsType()));
  if (!squares) return undo();
  const ir::Arg mean_d = e.Binary("aten::mul.Tensor", *sum, ir::Arg{inv_m}, stat);
  const ir::Arg mean = e.Binary("aten::add.Tensor", mean_d, e.AsStat(shift), stat);
  // Clamped at 0: rounding can leave a constant channel's variance slightly negative.
  const ir::Arg var = e.Emit(
      "aten::relu.default",
      {e.Binary("aten::sub.Tensor", e.Binary("aten::mul.Tensor", *squares, ir::Arg{inv_m}, stat),
                e.Binary("aten::mul.Tensor", mean_d, mean_d, stat), stat)},
      stat);
  const ir::Arg rs =
      e.Emit("aten::rsqrt.default", {e.Binary("aten::add.Tensor", var, ir::Arg{*eps}, stat)}, stat);

  const ir::TensorType f = e.LikeX(kF32);
  ir::Arg y = e.Binary("aten::sub.Tensor", e.F32(node.args[0], f), e.PerChannel(mean), f);
  y = e.Binary("aten::mul.Tensor", y, e.PerChannel(rs), f);
  if (!node.args[1].is_none()) y = e.Binary("aten::mul.Tensor", y, e.PerChannel(node.args[1]), f);
  if (!node.args[2].is_none()) y = e.Binary("aten::add.Tensor", y, e.PerChannel(node.args[2]), f);
  if (x.dtype != kF32) y = e.Emit("aten::_to_copy.default", {y}, x, {{"dtype", ir::Arg{x.dtype}}});

  const double m = *momentum, n = static_cast<double>(e.m());
  // lerp(old, batch, m) = old + m * (batch - old), as the row form: it joins the column kernel's
  // epilogue.
  auto running = [&](int arg, ir::Arg batch_value, double scale) {
    if (scale != 1.0) batch_value = e.Binary("aten::mul.Tensor", batch_value, ir::Arg{scale}, stat);
    const ir::Arg updated =
        e.Emit("aten::lerp.Scalar", {e.AsStat(node.args[arg]), batch_value, ir::Arg{m}}, stat);
    return e.Vector(updated, node.outputs[arg].dtype);
  };
  const ir::Arg new_rm = running(3, mean, 1.0);
  const ir::Arg new_rv = running(4, var, n / (n - 1.0));
  return std::vector<ir::Arg>{y, e.Vector(mean, node.outputs[1].dtype),
                              e.Vector(rs, node.outputs[2].dtype), new_rm, new_rv};
}

std::optional<std::vector<ir::Arg>> DecomposeChannelsLastBackward(ir::Graph& out,
                                                                  const ir::Node& node,
                                                                  const std::vector<bool>& used,
                                                                  bool recompute_grad) {
  if (node.args.size() != 10 || !node.kwargs.empty() || node.outputs.size() != 3 ||
      !node.args[0].is_ref() || !node.args[1].is_ref() || !node.args[5].is_ref() ||
      !node.args[6].is_ref())
    return std::nullopt;
  const ir::TensorType g = out.type_of(node.args[0].ref());
  const ir::TensorType x = out.type_of(node.args[1].ref());
  const bool* training = std::get_if<bool>(&node.args[7].v);
  const auto* mask_list = std::get_if<ir::ArgList>(&node.args[9].v);
  if (!IsChannelsLastNormInput(x) || training == nullptr || !*training || mask_list == nullptr ||
      mask_list->size() != 3)
    return std::nullopt;
  if (g.sizes != x.sizes || g.dtype != x.dtype || g.strides != x.strides || g.storage_offset != 0)
    return std::nullopt;
  bool mask[3];
  for (int i = 0; i < 3; ++i) {
    const bool* b = std::get_if<bool>(&(*mask_list)[i].v);
    if (b == nullptr || (!*b && used[i])) return std::nullopt;
    mask[i] = *b;
  }
  const int64_t c = x.sizes[1];
  if (!IsVector(out, node.args[2], c, false, true) ||
      !IsVector(out, node.args[5], c, true, false) || !IsVector(out, node.args[6], c, true, false))
    return std::nullopt;
  if (mask[0] && node.outputs[0] != x) return std::nullopt;
  for (int o = 1; o < 3; ++o)
    if (mask[o] && (node.args[2].is_none() || node.outputs[o] != out.type_of(node.args[2].ref())))
      return std::nullopt;

  Emitter e(out, x);
  const size_t mark = out.nodes.size();
  const ir::TensorType stat = e.Stat();
  const ir::Arg g3 = e.Rows(node.args[0], recompute_grad);
  const ir::TensorType rows = out.type_of(g3.ref());
  const ir::Arg x3 = e.Rows(node.args[1]);
  // [C] vectors broadcast over the trailing dim of [A, B, C] as they are.
  const ir::Arg xhat3 = e.Binary(
      "aten::mul.Tensor", e.Binary("aten::sub.Tensor", x3, node.args[5], rows), node.args[6], rows);
  std::optional<ir::Arg> sg = e.ColumnSum(g3);
  // g cast again for the second sum (see the forward).
  std::optional<ir::Arg> sgx =
      sg ? e.ColumnSum(
               e.Binary("aten::mul.Tensor", e.Rows(node.args[0], recompute_grad), xhat3, rows))
         : std::nullopt;
  if (!sg || !sgx) {
    out.nodes.resize(mark);
    return std::nullopt;
  }
  std::vector<ir::Arg> results(3, ir::Arg{ir::NoneArg{}});
  if (mask[0]) {
    const double inv_m = 1.0 / static_cast<double>(e.m());
    const ir::TensorType f = e.LikeX(kF32);
    const ir::Arg invstd = e.PerChannel(node.args[6]);
    const ir::Arg xhat = e.Binary(
        "aten::mul.Tensor",
        e.Binary("aten::sub.Tensor", e.F32(node.args[1], f), e.PerChannel(node.args[5]), f), invstd,
        f);
    const ir::Arg mean_g = e.PerChannel(e.Binary("aten::mul.Tensor", *sg, ir::Arg{inv_m}, stat));
    const ir::Arg mean_gx = e.PerChannel(e.Binary("aten::mul.Tensor", *sgx, ir::Arg{inv_m}, stat));
    const ir::Arg centred = e.Binary("aten::sub.Tensor", e.F32(node.args[0], f), mean_g, f);
    const ir::Arg t =
        e.Binary("aten::sub.Tensor", centred, e.Binary("aten::mul.Tensor", xhat, mean_gx, f), f);
    ir::Arg grad = e.Binary("aten::mul.Tensor", t, invstd, f);
    if (!node.args[2].is_none())
      grad = e.Binary("aten::mul.Tensor", grad, e.PerChannel(node.args[2]), f);
    if (x.dtype != kF32)
      grad = e.Emit("aten::_to_copy.default", {grad}, x, {{"dtype", ir::Arg{x.dtype}}});
    results[0] = grad;
  }
  if (mask[1]) results[1] = e.Vector(*sgx, kF32);
  if (mask[2]) results[2] = e.Vector(*sg, kF32);
  return results;
}

}  // namespace tccd::codegen

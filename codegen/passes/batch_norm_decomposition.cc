// BatchNormDecomposition (see batch_norm_decomposition.h).
#include "codegen/passes/batch_norm_decomposition.h"

#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "codegen/passes/batch_norm_channels_last.h"
#include "codegen/passes/graph_rebuild.h"
#include "codegen/passes/pointwise_ops.h"
#include "codegen/passes/reduction_ops.h"
#include "codegen/passes/split_reductions.h"

namespace tccd::codegen {
namespace {

constexpr char kForward[] = "aten::_native_batch_norm_legit_functional.default";
constexpr char kBackward[] = "aten::native_batch_norm_backward.default";

std::optional<double> Number(const ir::Arg& arg) {
  if (const auto* d = std::get_if<double>(&arg.v)) return *d;
  if (const auto* i = std::get_if<int64_t>(&arg.v)) return static_cast<double>(*i);
  return std::nullopt;
}

// A contiguous float tensor of rank >= 2 on CUDA with a non-empty channel dim: the norm's input.
bool IsNormInput(const ir::TensorType& t) {
  return t.device == ir::DeviceType::kCuda && IsF32OrHalf(t.dtype) && t.rank() >= 2 &&
         t.IsContiguous() && t.storage_offset == 0 && t.numel() > 0 && t.sizes[1] > 0;
}

// A float vector of `channels` contiguous elements on CUDA (f32 only unless `any_float`).
bool IsChannelVector(const ir::TensorType& t, int64_t channels, bool any_float) {
  return t.device == ir::DeviceType::kCuda &&
         (any_float ? IsF32OrHalf(t.dtype) : t.dtype == ir::DType::kF32) && t.rank() == 1 &&
         t.sizes[0] == channels && (channels == 1 || t.strides[0] == 1) && t.storage_offset == 0;
}

// Whether `arg` is None or a channel vector (a parameter or statistic). Saved statistics are f32
// on CUDA for every input dtype (ATen's accumulation type), but any float dtype is handled.
bool IsChannelVectorOrNone(const ir::Graph& graph, const ir::Arg& arg, int64_t channels,
                           bool any_float = false) {
  if (arg.is_none()) return true;
  return arg.is_ref() && IsChannelVector(graph.type_of(arg.ref()), channels, any_float);
}

// Emits the new nodes of one decomposed norm into `out`. Shapes: S is x's shape; F is S with the
// dims after the channel merged into one ([N, C, H*W]: a contiguous innermost run as long as
// possible, so the row kernel's loads are vectors and its index arithmetic is short); P = F with
// dims 0 and 1 swapped (the iteration space of the row kernel); K = [C, 1, 1] (one value per row).
class NormEmitter {
 public:
  // `single_use(ref)`: whether exactly one op (or graph output) reads ref (a value of `out`).
  using SingleUse = std::function<bool(const ir::ValueRef&)>;

  NormEmitter(ir::Graph& out, const ir::TensorType& x, SingleUse single_use)
      : out_(out), s_sizes_(x.sizes), single_use_(std::move(single_use)) {
    x_ = x;
    if (x.rank() > 3) {
      int64_t inner = 1;
      for (int64_t d = 2; d < x.rank(); ++d) inner *= x.sizes[d];
      x_.sizes = {x.sizes[0], x.sizes[1], inner};
      x_.strides = ir::ContiguousStrides(x_.sizes);
    }
    rank_ = x_.rank();
    channels_ = x_.sizes[1];
    perm_.resize(rank_);
    for (int64_t i = 0; i < rank_; ++i) perm_[i] = i;
    std::swap(perm_[0], perm_[1]);
    p_sizes_ = Permuted(x_.sizes);
    k_sizes_.assign(rank_, 1);
    k_sizes_[0] = channels_;
    for (int64_t d = 1; d < rank_; ++d) reduced_dims_.push_back(d);
    row_length_ = x_.numel() / channels_;
  }

  int64_t row_length() const { return row_length_; }
  int64_t channels() const { return channels_; }

  ir::TensorType Type(ir::DType dtype, const std::vector<int64_t>& sizes) const {
    return ir::TensorType{.dtype = dtype,
                          .sizes = sizes,
                          .strides = ir::ContiguousStrides(sizes),
                          .device = ir::DeviceType::kCuda};
  }
  ir::TensorType P(ir::DType dtype) const { return Type(dtype, p_sizes_); }
  ir::TensorType K() const { return Type(ir::DType::kF32, k_sizes_); }
  ir::TensorType Vector() const { return Type(ir::DType::kF32, {channels_}); }
  // P-shaped with the strides that make its permute back a contiguous S-shaped tensor.
  ir::TensorType PWithContiguousPermute(ir::DType dtype) const {
    ir::TensorType t = P(dtype);
    t.strides = Permuted(ir::ContiguousStrides(x_.sizes));
    return t;
  }

  ir::Arg Emit(std::string target, std::vector<ir::Arg> args, ir::TensorType type,
               std::vector<ir::NamedArg> kwargs = {}) {
    out_.nodes.push_back(ir::Node{.target = std::move(target),
                                  .args = std::move(args),
                                  .kwargs = std::move(kwargs),
                                  .outputs = {std::move(type)}});
    return ir::Arg{ir::ValueRef{static_cast<int>(out_.nodes.size()) - 1, 0}};
  }

  // A contiguous tensor of x's shape seen as P (views; no data moves).
  ir::Arg PermutedView(ir::Arg s_tensor) {
    ir::TensorType t = out_.type_of(s_tensor.ref());
    if (t.sizes != x_.sizes) {
      t.sizes = x_.sizes;
      t.strides = x_.strides;
      s_tensor = Emit("aten::view.default", {s_tensor, IntListArg(x_.sizes)}, t);
    }
    ir::TensorType view = t;
    view.sizes = Permuted(t.sizes);
    view.strides = Permuted(t.strides);
    return Emit("aten::permute.default", {s_tensor, IntListArg(perm_)}, view);
  }

  // Whether `node` is a pointwise op over x's shape that can be re-emitted in P: one contiguous
  // S-shaped output, tensor operands contiguous S-shaped or 0-dim.
  bool MovablePointwise(const ir::Node& node) const {
    if (node.outputs.size() != 1 || !IsPointwiseOp(out_, node)) return false;
    const ir::TensorType& o = node.outputs[0];
    if (o.sizes != s_sizes_ || !o.IsContiguous() || o.storage_offset != 0) return false;
    bool ok = true;
    ir::ForEachInput(node, [&](const ir::ValueRef& r) {
      const ir::TensorType& t = out_.type_of(r);
      ok = ok &&
           (t.rank() == 0 || (t.sizes == s_sizes_ && t.IsContiguous() && t.storage_offset == 0));
    });
    return ok;
  }

  // `node` (MovablePointwise) re-emitted over P, its S-shaped operands read through views, any
  // operand in `p_values` (an S value -> its P value) replaced by that; `type` is its output.
  ir::Arg EmitInP(const ir::Node& node, const std::map<ir::ValueRef, ir::Arg>& p_values,
                  ir::TensorType type) {
    ir::Node moved = node;
    auto rewrite = [&](ir::Arg& a) {
      if (!a.is_ref() || out_.type_of(a.ref()).rank() == 0) return;
      auto it = p_values.find(a.ref());
      a = it != p_values.end() ? it->second : PermutedView(a);
    };
    for (ir::Arg& a : moved.args) rewrite(a);
    for (ir::NamedArg& kw : moved.kwargs) rewrite(kw.value);
    moved.outputs = {std::move(type)};
    return Push(std::move(moved));
  }

  // A contiguous tensor of x's shape as a P-shaped f32 value. A pointwise producer read only
  // here (a relu backward before a norm backward) moves into P, so that it becomes part of the
  // row kernel instead of writing its result for the kernel to read back.
  ir::Arg PermutedF32(ir::Arg s_tensor) {
    const ir::ValueRef r = s_tensor.ref();
    ir::Arg p;
    if (!r.is_input() && single_use_(r) && MovablePointwise(out_.nodes[r.node])) {
      const ir::Node producer = out_.nodes[r.node];
      p = EmitInP(producer, {}, P(producer.outputs[0].dtype));
    } else {
      p = PermutedView(s_tensor);
    }
    if (out_.type_of(p.ref()).dtype == ir::DType::kF32) return p;
    return Emit("aten::_to_copy.default", {p}, P(ir::DType::kF32),
                {{"dtype", ir::Arg{ir::DType::kF32}}});
  }

  // A P-shaped f32 value as an S-shaped tensor of `dtype`, contiguous: the last op of the chain
  // is re-emitted with the permuted strides (a cast, or the op itself when no cast is needed).
  // `p_out` gets the P value the S tensor views.
  ir::Arg ToContiguousS(ir::Arg p_value, ir::DType dtype, ir::Arg* p_out = nullptr) {
    ir::Node& last = out_.nodes[p_value.ref().node];
    if (dtype == ir::DType::kF32) {
      last.outputs[0] = PWithContiguousPermute(dtype);
    } else {
      p_value = Emit("aten::_to_copy.default", {p_value}, PWithContiguousPermute(dtype),
                     {{"dtype", ir::Arg{dtype}}});
    }
    if (p_out != nullptr) *p_out = p_value;
    return PermuteBack(p_value);
  }

  // A P value with permuted-contiguous strides as the contiguous S tensor it is (views).
  ir::Arg PermuteBack(const ir::Arg& p_value) {
    const ir::DType dtype = out_.type_of(p_value.ref()).dtype;
    ir::Arg f = Emit("aten::permute.default", {p_value, IntListArg(perm_)}, Type(dtype, x_.sizes));
    if (s_sizes_ == x_.sizes) return f;
    return Emit("aten::view.default", {f, IntListArg(s_sizes_)}, Type(dtype, s_sizes_));
  }

  ir::Arg AsK(const ir::Arg& vector) {
    ir::TensorType k = K();
    k.dtype = out_.type_of(vector.ref()).dtype;
    return Emit("aten::view.default", {vector, IntListArg(k_sizes_)}, k);
  }
  // A K-shaped f32 value as a [C] vector of `dtype`.
  ir::Arg AsVector(ir::Arg k, ir::DType dtype = ir::DType::kF32) {
    if (dtype != ir::DType::kF32) {
      ir::TensorType t = K();
      t.dtype = dtype;
      k = Emit("aten::_to_copy.default", {k}, t, {{"dtype", ir::Arg{dtype}}});
    }
    ir::TensorType v = Vector();
    v.dtype = dtype;
    return Emit("aten::view.default", {k, IntListArg({channels_})}, v);
  }

  ir::Arg Binary(const char* target, const ir::Arg& a, const ir::Arg& b,
                 const ir::TensorType& type) {
    return Emit(target, {a, b}, type);
  }

  // The row reduction `target` (var_mean or sum) of a P-shaped f32 value, keepdim; nullopt (and
  // nothing emitted) when the backend would not lower it.
  std::optional<ir::Node> RowReduction(const std::string& target, const ir::Arg& p_value) {
    ir::Node node{.target = target, .args = {p_value, IntListArg(reduced_dims_)}};
    if (target == "aten::var_mean.correction") {
      node.kwargs = {{"correction", ir::Arg{int64_t{0}}}, {"keepdim", ir::Arg{true}}};
      node.outputs = {K(), K()};
    } else {
      node.args.push_back(ir::Arg{true});
      node.outputs = {K()};
    }
    // Few very long rows (64 channels of big maps) are split into two stages later
    // (split_reductions.h).
    if (ReductionAxesOf(out_, node) !=
            ReductionAxes{static_cast<int>(reduced_dims_.size()), false} &&
        !SplitFactor(out_, node))
      return std::nullopt;
    return node;
  }
  ir::Arg Push(ir::Node node) {
    out_.nodes.push_back(std::move(node));
    return ir::Arg{ir::ValueRef{static_cast<int>(out_.nodes.size()) - 1, 0}};
  }

 private:
  std::vector<int64_t> Permuted(const std::vector<int64_t>& v) const {
    std::vector<int64_t> p(v.size());
    for (size_t i = 0; i < v.size(); ++i) p[i] = v[perm_[i]];
    return p;
  }

  ir::Graph& out_;
  std::vector<int64_t> s_sizes_;  // x's own shape
  SingleUse single_use_;
  ir::TensorType x_;  // x's type in F
  int64_t rank_ = 0, channels_ = 0, row_length_ = 0;
  std::vector<int64_t> perm_, p_sizes_, k_sizes_, reduced_dims_;
};

ir::Arg Ref1(const ir::Arg& a, int output) { return ir::Arg{ir::ValueRef{a.ref().node, output}}; }

// Decomposes a forward norm (args already remapped into `out`); the new values of its five
// outputs, or nullopt with `out` untouched.
// `p_out` gets the P value the normalised output views (for consumers that move into P).
std::optional<std::vector<ir::Arg>> DecomposeForward(ir::Graph& out, const ir::Node& node,
                                                     const NormEmitter::SingleUse& single_use,
                                                     ir::Arg* p_out) {
  if (node.args.size() != 8 || !node.kwargs.empty() || node.outputs.size() != 5 ||
      !node.args[0].is_ref())
    return std::nullopt;
  const ir::TensorType x = out.type_of(node.args[0].ref());
  const bool* training = std::get_if<bool>(&node.args[5].v);
  const std::optional<double> momentum = Number(node.args[6]), eps = Number(node.args[7]);
  if (!IsNormInput(x) || training == nullptr || !*training || !momentum || !eps)
    return std::nullopt;
  const int64_t c = x.sizes[1];
  for (int i = 1; i <= 4; ++i)
    if (!IsChannelVectorOrNone(out, node.args[i], c)) return std::nullopt;
  if (node.args[3].is_none() || node.args[4].is_none()) return std::nullopt;
  if (node.outputs[0] !=
      ir::TensorType{x.dtype, x.sizes, ir::ContiguousStrides(x.sizes), 0, x.device})
    return std::nullopt;

  const size_t mark = out.nodes.size();
  NormEmitter e(out, x, single_use);
  for (int o = 1; o < 5; ++o)
    if (!IsChannelVector(node.outputs[o], c, /*any_float=*/true)) return std::nullopt;
  if (e.row_length() < 2) return std::nullopt;  // the unbiased running variance divides by n - 1
  const ir::Arg xf = e.PermutedF32(node.args[0]);
  std::optional<ir::Node> stats = e.RowReduction("aten::var_mean.correction", xf);
  if (!stats) {
    out.nodes.resize(mark);
    return std::nullopt;
  }
  const ir::Arg vm = e.Push(*std::move(stats));
  const ir::Arg var = Ref1(vm, 0), mean = Ref1(vm, 1);
  const ir::TensorType k = e.K(), p = e.P(ir::DType::kF32);
  const ir::Arg rs =
      e.Emit("aten::rsqrt.default", {e.Binary("aten::add.Tensor", var, ir::Arg{*eps}, k)}, k);
  ir::Arg y = e.Binary("aten::mul.Tensor", e.Binary("aten::sub.Tensor", xf, mean, p), rs, p);
  if (!node.args[1].is_none()) y = e.Binary("aten::mul.Tensor", y, e.AsK(node.args[1]), p);
  if (!node.args[2].is_none()) y = e.Binary("aten::add.Tensor", y, e.AsK(node.args[2]), p);
  const ir::Arg y_s = e.ToContiguousS(y, x.dtype, p_out);

  const double m = *momentum, n = static_cast<double>(e.row_length());
  // lerp(old, batch, m) = old + m * (batch - old): one op that reads the group's statistic, so it
  // joins the row kernel as an epilogue ((1 - m) * old on its own would be a separate kernel).
  auto running = [&](int stat, ir::Arg batch_value, double scale) {
    if (scale != 1.0) batch_value = e.Binary("aten::mul.Tensor", batch_value, ir::Arg{scale}, k);
    const ir::Arg updated =
        e.Emit("aten::lerp.Scalar", {e.AsK(node.args[stat]), batch_value, ir::Arg{m}}, k);
    return e.AsVector(updated, node.outputs[stat].dtype);
  };
  const ir::Arg new_rm = running(3, mean, 1.0);
  const ir::Arg new_rv = running(4, var, n / (n - 1.0));
  return std::vector<ir::Arg>{y_s, e.AsVector(mean, node.outputs[1].dtype),
                              e.AsVector(rs, node.outputs[2].dtype), new_rm, new_rv};
}

// Decomposes a training backward; nullopt with `out` untouched when it does not apply. Outputs
// the mask turns off must be unread (`used` says which outputs of the original node are read).
std::optional<std::vector<ir::Arg>> DecomposeBackward(ir::Graph& out, const ir::Node& node,
                                                      const std::vector<bool>& used,
                                                      const NormEmitter::SingleUse& single_use) {
  if (node.args.size() != 10 || !node.kwargs.empty() || node.outputs.size() != 3 ||
      !node.args[0].is_ref() || !node.args[1].is_ref() || !node.args[5].is_ref() ||
      !node.args[6].is_ref())
    return std::nullopt;
  const ir::TensorType g = out.type_of(node.args[0].ref());
  const ir::TensorType x = out.type_of(node.args[1].ref());
  const bool* training = std::get_if<bool>(&node.args[7].v);
  const auto* mask_list = std::get_if<ir::ArgList>(&node.args[9].v);
  if (!IsNormInput(x) || training == nullptr || !*training || mask_list == nullptr ||
      mask_list->size() != 3)
    return std::nullopt;
  if (g.sizes != x.sizes || g.dtype != x.dtype || g.device != x.device || !g.IsContiguous() ||
      g.storage_offset != 0)
    return std::nullopt;
  bool mask[3];
  for (int i = 0; i < 3; ++i) {
    const bool* b = std::get_if<bool>(&(*mask_list)[i].v);
    if (b == nullptr) return std::nullopt;
    mask[i] = *b;
    if (!mask[i] && used[i]) return std::nullopt;
  }
  const int64_t c = x.sizes[1];
  if (!IsChannelVectorOrNone(out, node.args[2], c)) return std::nullopt;
  for (int i : {5, 6})
    if (!IsChannelVectorOrNone(out, node.args[i], c, /*any_float=*/true)) return std::nullopt;
  if (mask[0] && node.outputs[0] !=
                     ir::TensorType{x.dtype, x.sizes, ir::ContiguousStrides(x.sizes), 0, x.device})
    return std::nullopt;

  const size_t mark = out.nodes.size();
  NormEmitter e(out, x, single_use);
  for (int o = 1; o < 3; ++o)
    if (mask[o] && (node.args[2].is_none() || node.outputs[o] != out.type_of(node.args[2].ref())))
      return std::nullopt;
  const ir::TensorType k = e.K(), p = e.P(ir::DType::kF32);
  const ir::Arg gf = e.PermutedF32(node.args[0]);
  const ir::Arg xf = e.PermutedF32(node.args[1]);
  const ir::Arg invstd = e.AsK(node.args[6]);
  const ir::Arg xhat = e.Binary(
      "aten::mul.Tensor", e.Binary("aten::sub.Tensor", xf, e.AsK(node.args[5]), p), invstd, p);
  std::optional<ir::Node> sum_g = e.RowReduction("aten::sum.dim_IntList", gf);
  if (!sum_g) {
    out.nodes.resize(mark);
    return std::nullopt;
  }
  const ir::Arg sg = e.Push(*std::move(sum_g));
  const ir::Arg sgx =
      e.Push(*e.RowReduction("aten::sum.dim_IntList", e.Binary("aten::mul.Tensor", gf, xhat, p)));

  // Masked-off gradients are unread (checked above): None stands in for them.
  std::vector<ir::Arg> results(3, ir::Arg{ir::NoneArg{}});
  if (mask[0]) {
    const double inv_n = 1.0 / static_cast<double>(e.row_length());
    const ir::Arg mean_g = e.Binary("aten::mul.Tensor", sg, ir::Arg{inv_n}, k);
    const ir::Arg mean_gx = e.Binary("aten::mul.Tensor", sgx, ir::Arg{inv_n}, k);
    const ir::Arg centred = e.Binary("aten::sub.Tensor", gf, mean_g, p);
    const ir::Arg t =
        e.Binary("aten::sub.Tensor", centred, e.Binary("aten::mul.Tensor", xhat, mean_gx, p), p);
    // invstd and w applied per element (not as one per-channel product): a product of two
    // outside tensors would be a kernel of its own instead of part of the row kernel.
    ir::Arg grad = e.Binary("aten::mul.Tensor", t, invstd, p);
    if (!node.args[2].is_none()) grad = e.Binary("aten::mul.Tensor", grad, e.AsK(node.args[2]), p);
    results[0] = e.ToContiguousS(grad, x.dtype);
  }
  if (mask[1]) results[1] = e.AsVector(sgx);
  if (mask[2]) results[2] = e.AsVector(sg);
  return results;
}

}  // namespace

absl::StatusOr<bool> BatchNormDecomposition::Run(ir::Graph& graph) {
  // How many ops (and graph outputs) read each output of each node: a masked-off gradient must
  // be unread, and only single-use values move into a norm's permuted space.
  absl::flat_hash_map<std::pair<int, int>, int> reads;
  auto note = [&](const ir::ValueRef& r) {
    if (!r.is_input()) ++reads[{r.node, r.output}];
  };
  for (const ir::Node& n : graph.nodes) ir::ForEachInput(n, note);
  for (const ir::Arg& a : graph.outputs) ir::ForEachRef(a, note);

  ir::Graph out;
  out.inputs = graph.inputs;
  RebuildMap map;                              // (old node, output) -> value in `out`
  std::map<ir::ValueRef, int> reads_in_out;    // the same counts, for values of `out`
  std::map<ir::ValueRef, ir::Arg> p_value_of;  // S output of a norm -> its P value
  const NormEmitter::SingleUse single_use = [&](const ir::ValueRef& r) {
    auto it = reads_in_out.find(r);
    return it != reads_in_out.end() && it->second == 1;
  };
  auto bind = [&](int id, int o, const ir::Arg& value) {
    map[{id, o}] = value;
    if (value.is_ref()) {
      auto it = reads.find({id, o});
      reads_in_out[value.ref()] = it == reads.end() ? 0 : it->second;
    }
  };
  bool changed = false;
  for (int id = 0; id < static_cast<int>(graph.nodes.size()); ++id) {
    ir::Node node = graph.nodes[id];
    for (ir::Arg& a : node.args) RemapRefs(a, map);
    for (ir::NamedArg& kw : node.kwargs) RemapRefs(kw.value, map);
    std::optional<std::vector<ir::Arg>> values;
    ir::Arg p_out;
    // A channels-last input (channels_last_layout.h) takes the column form
    // (batch_norm_channels_last.h); its normalisation is a plain pointwise op over x.
    const size_t x_arg = node.target == kBackward ? 1 : 0;
    const bool channels_last = (node.target == kForward || node.target == kBackward) &&
                               node.args.size() > x_arg && node.args[x_arg].is_ref() &&
                               IsChannelsLastNormInput(out.type_of(node.args[x_arg].ref()));
    if (node.target == kForward && channels_last) {
      values = DecomposeChannelsLastForward(out, node);
    } else if (node.target == kForward) {
      values = DecomposeForward(out, node, single_use, &p_out);
      if (values) p_value_of[(*values)[0].ref()] = p_out;
    } else if (node.target == kBackward) {
      std::vector<bool> used(3);
      for (int o = 0; o < 3; ++o) used[o] = reads.contains({id, o});
      values = channels_last
                   ? DecomposeChannelsLastBackward(
                         out, node, used, node.args[0].is_ref() && single_use(node.args[0].ref()))
                   : DecomposeBackward(out, node, used, single_use);
    } else if (node.outputs.size() == 1) {
      // A pointwise consumer of a norm's output, its only reader (the relu after a norm, the
      // residual add): it moves into the norm's P space and becomes the row kernel's epilogue.
      std::optional<ir::Arg> moved_from;
      ir::ForEachInput(node, [&](const ir::ValueRef& r) {
        if (!moved_from && p_value_of.contains(r) && single_use(r)) moved_from = ir::Arg{r};
      });
      if (moved_from) {
        NormEmitter e(out, out.type_of(moved_from->ref()), single_use);
        if (e.MovablePointwise(node)) {
          std::map<ir::ValueRef, ir::Arg> p_values;
          ir::ForEachInput(node, [&](const ir::ValueRef& r) {
            if (p_value_of.contains(r) && single_use(r)) p_values[r] = p_value_of[r];
          });
          const ir::Arg p =
              e.EmitInP(node, p_values, e.PWithContiguousPermute(node.outputs[0].dtype));
          const ir::Arg s_value = e.PermuteBack(p);
          p_value_of[s_value.ref()] = p;
          values = std::vector<ir::Arg>{s_value};
        }
      }
    }
    if (values) {
      for (int o = 0; o < static_cast<int>(values->size()); ++o) bind(id, o, (*values)[o]);
      changed = true;
      continue;
    }
    const int new_id = static_cast<int>(out.nodes.size());
    for (int o = 0; o < static_cast<int>(node.outputs.size()); ++o)
      bind(id, o, ir::Arg{ir::ValueRef{new_id, o}});
    out.nodes.push_back(std::move(node));
  }
  if (!changed) return false;
  out.outputs = graph.outputs;
  for (ir::Arg& a : out.outputs) RemapRefs(a, map);
  graph = std::move(out);
  return true;
}

}  // namespace tccd::codegen

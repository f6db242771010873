// LayerNormParamGradSplit (see layer_norm_param_grad_split.h).
#include "codegen/passes/layer_norm_param_grad_split.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/passes/graph_rebuild.h"
#include "codegen/passes/pointwise_ops.h"
#include "codegen/passes/reduction_ops.h"
#include "codegen/passes/split_columns.h"

namespace tccd::codegen {
namespace {

constexpr char kTarget[] = "aten::native_layer_norm_backward.default";
constexpr ir::DType kF32 = ir::DType::kF32;
// The fewest rows (A) a stage-one column keeps: shorter columns would spend their time on the
// second stage.
constexpr int64_t kMinRows = 256;

bool IsFloatCuda(const ir::TensorType& t) {
  return t.device == ir::DeviceType::kCuda && IsF32OrHalf(t.dtype) && t.numel() > 0;
}

// The parameter-gradient half's mask bits (w, b), or nullopt unless it is [false, w, b] with
// at least one of them set.
std::optional<std::pair<bool, bool>> ParamMask(const ir::Node& node) {
  if (node.args.size() != 8) return std::nullopt;
  const auto* list = std::get_if<ir::ArgList>(&node.args[7].v);
  if (list == nullptr || list->size() != 3) return std::nullopt;
  bool bits[3];
  for (int i = 0; i < 3; ++i) {
    const bool* b = std::get_if<bool>(&(*list)[i].v);
    if (b == nullptr) return std::nullopt;
    bits[i] = *b;
  }
  if (bits[0] || !(bits[1] || bits[2])) return std::nullopt;
  return std::make_pair(bits[1], bits[2]);
}

// A `_to_copy` to f32 that changes nothing but the dtype: `dtype=` and, as CPU-traced autocast
// casts carry them, the strided layout and the input's device.
bool IsValueCastToF32(const ir::Graph& graph, const ir::Node& node) {
  if (node.target != "aten::_to_copy.default" || node.args.size() != 1 || !node.args[0].is_ref() ||
      node.outputs.size() != 1 || node.outputs[0].dtype != kF32)
    return false;
  const ir::TensorType& in = graph.type_of(node.args[0].ref());
  const ir::TensorType& result = node.outputs[0];
  if (in.sizes != result.sizes || in.strides != result.strides ||
      in.storage_offset != result.storage_offset || in.device != result.device)
    return false;
  bool dtype = false;
  for (const ir::NamedArg& kw : node.kwargs) {
    if (kw.name == "dtype") {
      dtype = true;
    } else if (kw.name == "layout") {
      const auto* layout = std::get_if<ir::LayoutArg>(&kw.value.v);
      if (layout == nullptr || layout->value != 0) return false;  // torch.strided
    } else if (kw.name == "device") {
      const auto* device = std::get_if<ir::DeviceType>(&kw.value.v);
      if (device == nullptr || *device != in.device) return false;
    } else {
      return false;
    }
  }
  return dtype;
}

// The 16-bit tensor that `g` (f32) is an exact cast of: g reached from it through one
// dtype-only `_to_copy` and reshapes of contiguous tensors, the source itself contiguous with
// g's element count, so that viewing it as g's rows and casting gives g's values. nullopt
// otherwise (g a kernel's arithmetic, an f32 graph input, ...), and for a source a pointwise op
// or a row reduction makes: reshape-sinking would move the cast of its view onto that kernel,
// which would then store the f32 copy beside the 16-bit one.
std::optional<ir::Arg> NarrowSource(const ir::Graph& out, const ir::Arg& g) {
  const ir::TensorType& type = out.type_of(g.ref());
  if (type.dtype != kF32) return std::nullopt;
  ir::ValueRef r = g.ref();
  for (int views = 0; !r.is_input() && views < 8; ++views) {
    const ir::Node& node = out.nodes[r.node];
    if (IsReshapeTarget(node.target) && !node.args.empty() && node.args[0].is_ref() &&
        IsPlain(out.type_of(node.args[0].ref()))) {
      r = node.args[0].ref();
      continue;
    }
    if (!IsValueCastToF32(out, node)) return std::nullopt;
    const ir::TensorType& source = out.type_of(node.args[0].ref());
    if (!IsHalf(source.dtype) || !IsPlain(source) || source.numel() != type.numel() ||
        source.device != type.device)
      return std::nullopt;
    ir::ValueRef base = node.args[0].ref();  // below the source's reshapes
    while (!base.is_input() && IsReshapeTarget(out.nodes[base.node].target) &&
           !out.nodes[base.node].args.empty() && out.nodes[base.node].args[0].is_ref())
      base = out.nodes[base.node].args[0].ref();
    if (!base.is_input() && (IsPointwiseOp(out, out.nodes[base.node]) ||
                             RowReductionDims(out, out.nodes[base.node]) > 0))
      return std::nullopt;
    return node.args[0];
  }
  return std::nullopt;
}

std::optional<std::vector<ir::Arg>> Rewrite(ir::Graph& out, const ir::Node& node,
                                            bool narrow_gradient) {
  if (node.target != kTarget || !node.kwargs.empty() || node.outputs.size() != 3)
    return std::nullopt;
  const std::optional<std::pair<bool, bool>> mask = ParamMask(node);
  if (!mask) return std::nullopt;
  for (int a : {0, 1, 3, 4})
    if (!node.args[a].is_ref()) return std::nullopt;
  const ir::TensorType g = out.type_of(node.args[0].ref());
  const ir::TensorType x = out.type_of(node.args[1].ref());
  const ir::TensorType mean = out.type_of(node.args[3].ref());
  const ir::TensorType rstd = out.type_of(node.args[4].ref());
  const auto* shape = std::get_if<ir::ArgList>(&node.args[2].v);
  if (shape == nullptr || shape->empty() || !IsFloatCuda(x) || !IsFloatCuda(g) ||
      !IsFloatCuda(mean) || !IsFloatCuda(rstd) || g.sizes != x.sizes || !IsPlain(g) ||
      !IsPlain(x) || !IsPlain(mean) || !IsPlain(rstd) ||
      static_cast<int64_t>(shape->size()) >= x.rank())
    return std::nullopt;
  // N: the normalised (trailing) dims' elements, the columns; M rows.
  int64_t n = 1;
  std::vector<int64_t> norm_sizes;
  for (size_t i = 0; i < shape->size(); ++i) {
    const auto* d = std::get_if<int64_t>(&(*shape)[i].v);
    const int64_t at = x.rank() - static_cast<int64_t>(shape->size()) + static_cast<int64_t>(i);
    if (d == nullptr || *d != x.sizes[at]) return std::nullopt;
    n *= *d;
    norm_sizes.push_back(*d);
  }
  const int64_t m = x.numel() / n;
  if (mean.numel() != m || rstd.numel() != m) return std::nullopt;
  for (int o = 1; o < 3; ++o) {
    const bool wanted = o == 1 ? mask->first : mask->second;
    if (wanted && (!IsFloatCuda(node.outputs[o]) || node.outputs[o].sizes != norm_sizes))
      return std::nullopt;
  }
  int64_t b = 1;
  while (b * n < SplitColumnTarget() && m % (2 * b) == 0 && m / (2 * b) >= kMinRows) b *= 2;
  if (b == 1) return std::nullopt;  // wide enough: the ATen node's column kernel fills the GPU
  const int64_t a = m / b;

  const size_t mark = out.nodes.size();
  auto emit = [&](std::string target, std::vector<ir::Arg> args, ir::TensorType type,
                  std::vector<ir::NamedArg> kwargs = {}) {
    return EmitOp(out, std::move(target), std::move(args), std::move(type), std::move(kwargs));
  };
  auto dense = [&](ir::DType dtype, std::vector<int64_t> sizes) {
    return DenseType(dtype, std::move(sizes), ir::DeviceType::kCuda);
  };
  // `v` viewed as [A, B, cols] in f32 (the cast becomes the column kernel's prologue; each use
  // casts again, as batch_norm_channels_last.cc does, so no f32 copy is written). Per-row
  // statistics (cols 1) stay in their dtype: type promotion makes the arithmetic f32 inside
  // the kernel, where a cast of its own would be a kernel writing them out in f32.
  // With narrow_gradient the view of a value is emitted once: g's two sums then read one
  // kernel operand (two views of one tensor were two operands, each loaded; the casts stay one
  // per use). Without it, one view per use, as before.
  std::map<std::pair<ir::ValueRef, int64_t>, ir::Arg> views;  // (value, cols) -> its view
  auto rows = [&](const ir::Arg& v, int64_t cols) {
    const ir::TensorType& t = out.type_of(v.ref());
    auto known = views.find({v.ref(), cols});
    const ir::Arg view = known != views.end()
                             ? known->second
                             : emit("aten::view.default", {v, IntListArg({a, b, cols})},
                                    dense(t.dtype, {a, b, cols}));
    if (narrow_gradient) views.emplace(std::make_pair(v.ref(), cols), view);
    if (t.dtype == kF32 || cols == 1) return view;
    return emit("aten::_to_copy.default", {view}, dense(kF32, {a, b, cols}),
                {{"dtype", ir::Arg{kF32}}});
  };
  const ir::TensorType rows_type = dense(kF32, {a, b, n});
  // Per-column sums of an f32 [A, B, N] value: stage 1 [B, N], stage 2 [N] (f32), then the
  // gradient's shape and dtype.
  auto column_sum = [&](const ir::Arg& v, const ir::TensorType& result) -> std::optional<ir::Arg> {
    ir::Node one{.target = "aten::sum.dim_IntList",
                 .args = {v, IntListArg({0})},
                 .outputs = {dense(kF32, {b, n})}};
    if (ReductionAxesOf(out, one) != ReductionAxes{1, true}) return std::nullopt;
    const ir::Arg partial = AppendNode(out, std::move(one));
    ir::Node two{.target = "aten::sum.dim_IntList",
                 .args = {partial, IntListArg({0})},
                 .outputs = {dense(kF32, {n})}};
    if (ReductionAxesOf(out, two) != ReductionAxes{1, true}) return std::nullopt;
    ir::Arg total = AppendNode(out, std::move(two));
    if (norm_sizes.size() != 1)
      total = emit("aten::view.default", {total, IntListArg(norm_sizes)}, dense(kF32, norm_sizes));
    if (result.dtype != kF32)
      total = emit("aten::_to_copy.default", {total}, result, {{"dtype", ir::Arg{result.dtype}}});
    return total;
  };
  // What the sums read as g: its 16-bit source where there is one (see the header).
  // So is x where CUDA autocast casts a bf16 input up for the norm (ConvNeXt's blocks, the
  // cast recomputed in the backward from the saved bf16 tensor).
  ir::Arg grad = node.args[0], x_arg = node.args[1];
  if (narrow_gradient) {
    if (std::optional<ir::Arg> source = NarrowSource(out, grad)) grad = *source;
    if (std::optional<ir::Arg> source = NarrowSource(out, x_arg)) x_arg = *source;
  }
  std::vector<ir::Arg> results(3, ir::Arg{ir::NoneArg{}});
  bool ok = true;
  if (mask->first) {
    const ir::Arg centred =
        emit("aten::sub.Tensor", {rows(x_arg, n), rows(node.args[3], 1)}, rows_type);
    const ir::Arg xhat = emit("aten::mul.Tensor", {centred, rows(node.args[4], 1)}, rows_type);
    const ir::Arg gx = emit("aten::mul.Tensor", {rows(grad, n), xhat}, rows_type);
    std::optional<ir::Arg> w = column_sum(gx, node.outputs[1]);
    ok = w.has_value();
    if (ok) results[1] = *w;
  }
  if (ok && mask->second) {
    std::optional<ir::Arg> bias = column_sum(rows(grad, n), node.outputs[2]);
    ok = bias.has_value();
    if (ok) results[2] = *bias;
  }
  if (!ok) {
    out.nodes.resize(mark);
    return std::nullopt;
  }
  return results;
}

}  // namespace

absl::StatusOr<bool> LayerNormParamGradSplit::Run(ir::Graph& graph) {
  return RebuildGraph(graph, [&](ir::Graph& out, const ir::Node& node) {
    return Rewrite(out, node, options_.narrow_gradient);
  });
}

}  // namespace tccd::codegen

// DepthwiseConvKernels (see depthwise_conv_kernels.h).
#include "codegen/passes/depthwise_conv_kernels.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "codegen/passes/graph_rebuild.h"
#include "codegen/passes/index_ops.h"
#include "codegen/passes/output_mask.h"

namespace tccd::codegen {
namespace {

constexpr char kConvolution[] = "aten::convolution.default";
constexpr char kConvolutionBackward[] = "aten::convolution_backward.default";

std::optional<std::vector<int64_t>> Ints(const ir::Arg& a) {
  const auto* list = std::get_if<ir::ArgList>(&a.v);
  if (list == nullptr) return std::nullopt;
  std::vector<int64_t> out;
  for (const ir::Arg& e : *list) {
    const int64_t* i = std::get_if<int64_t>(&e.v);
    if (i == nullptr) return std::nullopt;
    out.push_back(*i);
  }
  return out;
}

// Whether a pair argument (one value stands for both, as ATen expands it) is (h, w).
bool PairIs(const ir::Arg& a, int64_t h, int64_t w) {
  const std::optional<std::vector<int64_t>> v = Ints(a);
  if (!v) return false;
  if (v->size() == 1) return (*v)[0] == h && (*v)[0] == w;
  return v->size() == 2 && (*v)[0] == h && (*v)[1] == w;
}

// A 4-D dense channels-last type from offset 0 (strides [HWC, 1, WC, C]).
bool IsChannelsLast(const ir::TensorType& t) {
  if (t.rank() != 4 || t.storage_offset != 0) return false;
  const auto& s = t.sizes;
  return t.strides == std::vector<int64_t>{s[1] * s[2] * s[3], 1, s[3] * s[1], s[1]};
}

// A depthwise convolution's window and whether the kernels run over [N, H, W, C] views.
struct Window {
  int64_t kh, kw;
  bool nhwc;
};

// Whether `node` is a depthwise convolution the kernels take, its weight at `weight` and then
// (both ops alike) bias or bias_sizes, stride, padding, dilation, transposed, output_padding,
// groups; `x` is the activation the window slides over (the input, or the output gradient) and
// `y` a map of the same kind (what the kernel writes, or the backward's input). Returns its
// Window; nullopt when the rewrite does not apply.
std::optional<Window> DepthwiseWindow(const ir::Graph& graph, const ir::Node& node, size_t weight,
                                      const ir::TensorType& x, const ir::TensorType& y) {
  if (!node.args[weight].is_ref()) return std::nullopt;
  const ir::TensorType& w = graph.type_of(node.args[weight].ref());
  if (x.rank() != 4 || w.rank() != 4 || y.sizes != x.sizes || !IsF32OrHalf(x.dtype) ||
      w.dtype != x.dtype || y.dtype != x.dtype || w.device != x.device || y.device != x.device)
    return std::nullopt;
  const int64_t channels = x.sizes[1];
  const int64_t kh = w.sizes[2], kw = w.sizes[3];
  const ir::Arg* options = &node.args[weight + 2];  // stride, padding, dilation, ...
  const int64_t* groups = std::get_if<int64_t>(&options[5].v);
  const bool* transposed = std::get_if<bool>(&options[3].v);
  if (groups == nullptr || *groups != channels || channels < 1 || w.sizes[0] != channels ||
      w.sizes[1] != 1 || transposed == nullptr || *transposed)
    return std::nullopt;
  for (int64_t k : {kh, kw})
    if (k < 1 || k > 7 || k % 2 == 0) return std::nullopt;
  if (!PairIs(options[0], 1, 1) || !PairIs(options[1], kh / 2, kw / 2) ||
      !PairIs(options[2], 1, 1) || !PairIs(options[4], 0, 0))
    return std::nullopt;
  const bool nhwc = IsChannelsLast(x) && IsChannelsLast(y);
  // CUDA: channels-last only (depthwise_conv_kernels.h).
  if (x.device == ir::DeviceType::kCuda && !nhwc) return std::nullopt;
  return Window{kh, kw, nhwc};
}

// The weight [C, 1, kh, kw] as a contiguous f32 [kh, kw, C]: one [C] vector per tap, in f32 so
// that the kernel's every point does not widen the same taps again (a bf16 tap vector would be
// eight conversions per tap and thread; the copy is kh*kw*C elements).
ir::Arg Taps(ir::Graph& out, const ir::Arg& weight, const Window& window) {
  const ir::TensorType& w = out.type_of(weight.ref());
  const int64_t channels = w.sizes[0];
  ir::TensorType permuted = w;
  permuted.sizes = {window.kh, window.kw, channels, 1};
  permuted.strides = {w.strides[2], w.strides[3], w.strides[0], w.strides[1]};
  const ir::Arg p =
      EmitOp(out, "aten::permute.default", {weight, IntListArg({2, 3, 0, 1})}, permuted);
  const ir::Arg copy = EmitOp(
      out, "aten::_to_copy.default", {p},
      DenseType(ir::DType::kF32, {window.kh, window.kw, channels, 1}, w.device),
      {{"dtype", ir::Arg{ir::DType::kF32}}, {"memory_format", ir::Arg{ir::MemoryFormatArg{0}}}});
  return EmitOp(out, "aten::view.default", {copy, IntListArg({window.kh, window.kw, channels})},
                DenseType(ir::DType::kF32, {window.kh, window.kw, channels}, w.device));
}

// The [N, H, W, C] view of a channels-last [N, C, H, W] value (contiguous).
ir::Arg Nhwc(ir::Graph& out, const ir::Arg& value) {
  ir::TensorType t = out.type_of(value.ref());
  t.sizes = {t.sizes[0], t.sizes[2], t.sizes[3], t.sizes[1]};
  t.strides = ir::ContiguousStrides(t.sizes);
  return EmitOp(out, "aten::permute.default", {value, IntListArg({0, 2, 3, 1})}, t);
}

// The map the kernels read for an activation: its [N, H, W, C] view, or itself.
ir::Arg KernelView(ir::Graph& out, const ir::Arg& value, const Window& window) {
  return window.nhwc ? Nhwc(out, value) : value;
}

// The depthwise kernel over `x` (KernelView of the activation the window slides over) writing
// `type`, with `bias` (a tensor or None), appended when IsIndexOp takes it; nullopt (and `out`
// as it was) otherwise.
std::optional<ir::Arg> EmitDepthwise(ir::Graph& out, const ir::Arg& x, const ir::Arg& weight,
                                     const ir::Arg& bias, const Window& window, bool flip,
                                     const ir::TensorType& type) {
  const size_t mark = out.nodes.size();
  ir::Node conv;
  conv.target = kDepthwiseConvTarget;
  conv.args = {x,
               Taps(out, weight, window),
               bias,
               IntListArg({window.kh, window.kw}),
               IntListArg({window.kh / 2, window.kw / 2}),
               ir::Arg{flip},
               ir::Arg{window.nhwc}};
  ir::TensorType result = type;
  if (window.nhwc) {
    const auto& s = type.sizes;
    result = DenseType(type.dtype, {s[0], s[2], s[3], s[1]}, type.device);
  }
  conv.outputs = {result};
  out.nodes.push_back(conv);
  const bool ok = IsIndexOp(out, out.nodes.back());
  out.nodes.pop_back();
  if (!ok) {
    out.nodes.resize(mark);
    return std::nullopt;
  }
  const ir::Arg value = AppendNode(out, std::move(conv));
  if (!window.nhwc) return value;
  return EmitOp(out, "aten::permute.default", {value, IntListArg({0, 3, 1, 2})}, type);
}

// convolution(x, w, b, stride, padding, dilation, transposed, output_padding, groups).
std::optional<std::vector<ir::Arg>> RewriteForward(ir::Graph& out, const ir::Node& node) {
  if (node.args.size() != 9 || !node.kwargs.empty() || node.outputs.size() != 1 ||
      !node.args[0].is_ref())
    return std::nullopt;
  const ir::TensorType x = out.type_of(node.args[0].ref());
  const std::optional<Window> window = DepthwiseWindow(out, node, 1, x, node.outputs[0]);
  if (!window) return std::nullopt;
  const ir::Arg& bias = node.args[2];
  if (!bias.is_none()) {
    if (!bias.is_ref()) return std::nullopt;
    const ir::TensorType& b = out.type_of(bias.ref());
    if (b.dtype != x.dtype || b.sizes != std::vector<int64_t>{x.sizes[1]}) return std::nullopt;
  }
  const size_t mark = out.nodes.size();
  std::optional<ir::Arg> y =
      EmitDepthwise(out, KernelView(out, node.args[0], *window), node.args[1], bias, *window,
                    /*flip=*/false, node.outputs[0]);
  if (!y) {
    out.nodes.resize(mark);
    return std::nullopt;
  }
  return std::vector<ir::Arg>{*y};
}

// The rows of the map one weight-gradient partial sums: the largest divisor of `height` whose
// rows hold at most kMaxWeightPartialTerms terms; nullopt when one row holds more.
// With `templates`: at most kMaxTemplatePartialRows rows and kMaxTemplatePartialTerms terms (the
// template loops over its rows), rows still of at most kMaxWeightPartialTerms columns.
std::optional<int64_t> PartialRows(int64_t height, int64_t width, bool templates) {
  if (width > kMaxWeightPartialTerms) return std::nullopt;
  const int64_t terms = templates ? kMaxTemplatePartialTerms : kMaxWeightPartialTerms;
  int64_t most = std::min(height, terms / std::max<int64_t>(width, 1));
  if (templates) most = std::min(most, kMaxTemplatePartialRows);
  for (int64_t rows = most; rows >= 1; --rows)
    if (height % rows == 0) return rows;
  return std::nullopt;
}

// The weight gradient (`type`: [C, 1, kh, kw]) from partial sums over blocks of map rows, summed
// (depthwise_conv_kernels.h), `grad` and `x` the KernelViews of the maps; nullopt (and `out` as
// it was) when the partials kernel does not take them.
std::optional<ir::Arg> EmitWeightGrad(ir::Graph& out, const ir::Arg& grad, const ir::Arg& x,
                                      const Window& window, const ir::TensorType& type,
                                      bool templates) {
  const ir::TensorType& g = out.type_of(grad.ref());
  const int64_t c_axis = window.nhwc ? 3 : 1, h_axis = window.nhwc ? 1 : 2;
  const int64_t n = g.sizes[0], channels = g.sizes[c_axis], height = g.sizes[h_axis],
                width = g.sizes[h_axis + 1];
  // The templates take channels-last CUDA maps of an even C (cuda_depthwise_emitter.h).
  const bool template_rows = templates && window.nhwc && g.device == ir::DeviceType::kCuda &&
                             channels % 2 == 0;
  const std::optional<int64_t> rows = PartialRows(height, width, template_rows);
  if (!rows) return std::nullopt;
  const size_t mark = out.nodes.size();
  ir::Node partials;
  partials.target = kDepthwiseWeightPartialsTarget;
  partials.args = {grad,
                   x,
                   IntListArg({window.kh, window.kw}),
                   IntListArg({window.kh / 2, window.kw / 2}),
                   ir::Arg{*rows},
                   ir::Arg{window.nhwc}};
  partials.outputs = {
      DenseType(ir::DType::kF32, {n, height / *rows, window.kh, window.kw, channels}, type.device)};
  out.nodes.push_back(partials);
  const bool ok = IsIndexOp(out, out.nodes.back());
  out.nodes.pop_back();
  if (!ok) {
    out.nodes.resize(mark);
    return std::nullopt;
  }
  const ir::Arg p = AppendNode(out, std::move(partials));
  const ir::Arg sum =
      EmitOp(out, "aten::sum.dim_IntList", {p, IntListArg({0, 1})},
             DenseType(ir::DType::kF32, {window.kh, window.kw, channels}, type.device));
  const ir::Arg taps =
      EmitOp(out, "aten::view.default", {sum, IntListArg({window.kh, window.kw, channels, 1})},
             DenseType(ir::DType::kF32, {window.kh, window.kw, channels, 1}, type.device));
  ir::TensorType permuted = out.type_of(taps.ref());
  permuted.sizes = {channels, 1, window.kh, window.kw};
  permuted.strides = {1, 1, window.kw * channels, channels};
  const ir::Arg nchw =
      EmitOp(out, "aten::permute.default", {taps, IntListArg({2, 3, 0, 1})}, permuted);
  return EmitOp(out, "aten::_to_copy.default", {nchw}, type, {{"dtype", ir::Arg{type.dtype}}});
}

// convolution_backward(go, x, w, bias_sizes, stride, padding, dilation, transposed,
// output_padding, groups, output_mask).
std::optional<std::vector<ir::Arg>> RewriteBackward(ir::Graph& out, const ir::Node& node,
                                                    bool weight_grad, bool templates) {
  if (node.args.size() != 11 || !node.kwargs.empty() || node.outputs.size() != 3 ||
      !node.args[0].is_ref() || !node.args[1].is_ref())
    return std::nullopt;
  const std::optional<std::vector<bool>> mask = OutputMaskAt(node, 10);
  if (!mask) return std::nullopt;
  const ir::TensorType go = out.type_of(node.args[0].ref());
  const ir::TensorType x = out.type_of(node.args[1].ref());
  // The gradient and the input are the same kind of map (sizes, dtype, layout).
  const std::optional<Window> window = DepthwiseWindow(out, node, 2, go, x);
  if (!window) return std::nullopt;
  // The input gradient is written through the [N, C, H, W] view of an [N, H, W, C] kernel output.
  if ((*mask)[0] && window->nhwc && !IsChannelsLast(node.outputs[0])) return std::nullopt;
  const size_t mark = out.nodes.size();
  const ir::Arg grad = KernelView(out, node.args[0], *window);  // both kernels read it
  std::vector<ir::Arg> values(3);
  if ((*mask)[0]) {
    std::optional<ir::Arg> gx = EmitDepthwise(out, grad, node.args[2], ir::Arg{}, *window,
                                              /*flip=*/true, node.outputs[0]);
    if (!gx) {
      out.nodes.resize(mark);  // the gradient's view
      return std::nullopt;
    }
    values[0] = *gx;
  }
  if ((*mask)[1] && weight_grad) {
    std::optional<ir::Arg> gw =
        EmitWeightGrad(out, grad, KernelView(out, node.args[1], *window), *window, node.outputs[1],
                       templates);
    if (gw) values[1] = *gw;
  }
  if (values[0].is_none() && values[1].is_none()) {
    out.nodes.resize(mark);
    return std::nullopt;
  }
  // What is left (a weight gradient the partials do not take, the bias gradient) stays ATen's.
  const bool aten_weight = (*mask)[1] && values[1].is_none();
  if (aten_weight || (*mask)[2]) {
    ir::Node rest = node;
    ir::ArgList& bits = std::get<ir::ArgList>(rest.args[10].v);
    bits[0] = ir::Arg{false};
    bits[1] = ir::Arg{aten_weight};
    rest.outputs[0] = AbsentOutput(node.outputs[0]);
    if (!aten_weight) rest.outputs[1] = AbsentOutput(node.outputs[1]);
    const ir::Arg first = AppendNode(out, std::move(rest));
    if (aten_weight) values[1] = ir::Arg{ir::ValueRef{first.ref().node, 1}};
    values[2] = ir::Arg{ir::ValueRef{first.ref().node, 2}};
  }
  // Masked-off outputs are 0-element placeholders nothing reads.
  const ir::Arg any = values[0].is_none() ? values[1] : values[0];
  for (ir::Arg& v : values)
    if (v.is_none()) v = any;
  return values;
}

}  // namespace

absl::StatusOr<bool> DepthwiseConvKernels::Run(ir::Graph& graph) {
  bool any = false;
  for (const ir::Node& node : graph.nodes)
    any = any || node.target == kConvolution || node.target == kConvolutionBackward;
  if (!any) return false;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        if (node.target == kConvolution) return RewriteForward(out, node);
        if (node.target == kConvolutionBackward)
          return RewriteBackward(out, node, options_.weight_grad, options_.templates);
        return std::nullopt;
      });
}

}  // namespace tccd::codegen

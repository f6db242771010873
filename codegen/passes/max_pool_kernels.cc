// MaxPoolKernels (see max_pool_kernels.h).
#include "codegen/passes/max_pool_kernels.h"

#include <optional>
#include <vector>

#include "codegen/passes/graph_rebuild.h"
#include "codegen/passes/index_ops.h"

namespace tccd::codegen {
namespace {

constexpr char kMaxPoolForward[] = "aten::max_pool2d_with_indices.default";
constexpr char kMaxPoolBackward[] = "aten::max_pool2d_with_indices_backward.default";

// Whether IsIndexOp takes `node`, checked on the new graph (whose arguments are remapped)
// without appending it.
bool Accepts(ir::Graph& out, const ir::Node& node) {
  out.nodes.push_back(node);
  const bool ok = IsIndexOp(out, out.nodes.back());
  out.nodes.pop_back();
  return ok;
}

// The pooling arguments (kernel_size, stride, padding, dilation, ceil_mode) of an ATen max pool
// from position `first`, with ATen's defaults written out (stride [] = kernel_size, padding 0,
// dilation 1, ceil_mode false).
std::vector<ir::Arg> PoolArgs(const ir::Node& node, size_t first) {
  static const ir::Arg kDefaults[] = {IntListArg({}), IntListArg({}), IntListArg({0}),
                                      IntListArg({1}), ir::Arg{false}};
  std::vector<ir::Arg> args;
  for (size_t i = 0; i < 5; ++i)
    args.push_back(first + i < node.args.size() ? node.args[first + i] : kDefaults[i]);
  return args;
}

// A 4-D dense channels-last type from offset 0 (strides [HWC, 1, WC, C]).
bool IsChannelsLast(const ir::TensorType& t) {
  if (t.rank() != 4 || t.storage_offset != 0) return false;
  const auto& s = t.sizes;
  return t.strides == std::vector<int64_t>{s[1] * s[2] * s[3], 1, s[3] * s[1], s[1]};
}

// The [N, H, W, C] view of a channels-last [N, C, H, W] value (contiguous).
ir::Arg Nhwc(ir::Graph& out, const ir::Arg& value) {
  ir::TensorType t = out.type_of(value.ref());
  t.sizes = {t.sizes[0], t.sizes[2], t.sizes[3], t.sizes[1]};
  t.strides = ir::ContiguousStrides(t.sizes);
  return EmitOp(out, "aten::permute.default", {value, IntListArg({0, 2, 3, 1})}, t);
}

// `node` (whose output is [N, H, W, C], contiguous) appended, and its [N, C, H, W] view of
// `type` (channels-last).
ir::Arg AppendNchw(ir::Graph& out, ir::Node node, const ir::TensorType& type) {
  ir::Arg nhwc = AppendNode(out, std::move(node));
  return EmitOp(out, "aten::permute.default", {nhwc, IntListArg({0, 3, 1, 2})}, type);
}

ir::TensorType NhwcType(const ir::TensorType& nchw) {
  const auto& s = nchw.sizes;
  return DenseType(nchw.dtype, {s[0], s[2], s[3], s[1]}, nchw.device);
}

}  // namespace

absl::StatusOr<bool> MaxPoolKernels::Run(ir::Graph& graph) {
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        if (node.target == kMaxPoolForward && node.outputs.size() == 2 && node.kwargs.empty() &&
            node.args.size() >= 2 && node.args[0].is_ref()) {
          // (x, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False)
          const ir::TensorType& x = out.type_of(node.args[0].ref());
          const bool nhwc = IsChannelsLast(x) && IsChannelsLast(node.outputs[0]) &&
                            IsChannelsLast(node.outputs[1]);
          ir::Node values, offsets;
          values.target = kMaxPoolValuesTarget;
          offsets.target = kMaxPoolOffsetsTarget;
          values.args = {node.args[0]};
          for (ir::Arg& a : PoolArgs(node, 1)) values.args.push_back(std::move(a));
          values.args.push_back(ir::Arg{nhwc});
          offsets.args = values.args;
          values.outputs = {nhwc ? NhwcType(node.outputs[0]) : node.outputs[0]};
          offsets.outputs = {nhwc ? NhwcType(node.outputs[1]) : node.outputs[1]};
          if (!nhwc) {
            if (!Accepts(out, values) || !Accepts(out, offsets)) return std::nullopt;
            ir::Arg v = AppendNode(out, std::move(values));
            ir::Arg i = AppendNode(out, std::move(offsets));
            return std::vector<ir::Arg>{v, i};
          }
          // Checked with the view's type standing in for the view (appended only on success).
          const size_t mark = out.nodes.size();
          values.args[0] = offsets.args[0] = Nhwc(out, node.args[0]);
          if (!Accepts(out, values) || !Accepts(out, offsets)) {
            out.nodes.resize(mark);
            return std::nullopt;
          }
          ir::Arg v = AppendNchw(out, std::move(values), node.outputs[0]);
          ir::Arg i = AppendNchw(out, std::move(offsets), node.outputs[1]);
          return std::vector<ir::Arg>{v, i};
        }
        if (backward_ && node.target == kMaxPoolBackward && node.outputs.size() == 1 &&
            node.kwargs.empty() &&
            node.args.size() == 8 && node.args[0].is_ref() && node.args[7].is_ref()) {
          // (grad, x, kernel_size, stride, padding, dilation, ceil_mode, indices): x gives only
          // the output's shape, which the node's type carries.
          const bool nhwc = IsChannelsLast(node.outputs[0]) &&
                            IsChannelsLast(out.type_of(node.args[0].ref())) &&
                            IsChannelsLast(out.type_of(node.args[7].ref()));
          ir::Node back;
          back.target = kMaxPoolGatherBackwardTarget;
          back.args = {node.args[0], node.args[7]};
          for (ir::Arg& a : PoolArgs(node, 2)) back.args.push_back(std::move(a));
          back.args.push_back(ir::Arg{nhwc});
          back.outputs = {nhwc ? NhwcType(node.outputs[0]) : node.outputs[0]};
          if (!nhwc) {
            if (!Accepts(out, back)) return std::nullopt;
            return std::vector<ir::Arg>{AppendNode(out, std::move(back))};
          }
          const size_t mark = out.nodes.size();
          back.args[0] = Nhwc(out, node.args[0]);
          back.args[1] = Nhwc(out, node.args[7]);
          if (!Accepts(out, back)) {
            out.nodes.resize(mark);
            return std::nullopt;
          }
          return std::vector<ir::Arg>{AppendNchw(out, std::move(back), node.outputs[0])};
        }
        return std::nullopt;
      });
}

}  // namespace tccd::codegen

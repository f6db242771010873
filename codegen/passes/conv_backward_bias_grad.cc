// ConvBackwardBiasGrad (see conv_backward_bias_grad.h).
#include "codegen/passes/conv_backward_bias_grad.h"

#include <optional>
#include <utility>
#include <vector>

#include "codegen/passes/graph_rebuild.h"
#include "codegen/passes/output_mask.h"

namespace tccd::codegen {
namespace {

constexpr char kConvolutionBackward[] = "aten::convolution_backward.default";
// args: grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
// output_padding, groups, output_mask.
constexpr size_t kMask = 10;

// The output_mask, when it is a positional list of three bools.
std::optional<std::vector<bool>> MaskOf(const ir::Node& node) {
  if (node.args.size() != kMask + 1) return std::nullopt;
  return OutputMaskAt(node, kMask);
}

bool Rewritable(const ir::Graph& graph, const ir::Node& node) {
  if (node.target != kConvolutionBackward || !node.kwargs.empty() || node.outputs.size() != 3)
    return false;
  const std::optional<std::vector<bool>> mask = MaskOf(node);
  if (!mask || !(*mask)[2] || !node.args[0].is_ref() || !node.args[2].is_ref()) return false;
  const ir::TensorType& go = graph.type_of(node.args[0].ref());
  const ir::TensorType& w = graph.type_of(node.args[2].ref());
  const ir::TensorType& gb = node.outputs[2];
  if (go.device != ir::DeviceType::kCuda || !IsF32OrHalf(go.dtype) || go.rank() < 3 ||
      go.rank() != w.rank())
    return false;
  return gb.device == go.device && gb.dtype == go.dtype && gb.rank() == 1 &&
         gb.sizes[0] == go.sizes[1] && go.sizes[1] > 0;
}

// sum(go, all dims but 1) -> `type`. A channels-last gradient (the channel dim innermost, the
// others dense in order) is summed as [N, spatial..., C] over its leading dims: a column
// reduction that reads it once, coalesced, where the sum over [0, 2, 3] of the NCHW-ordered view
// would become rows of C-strided elements (ReductionDimsToRows).
ir::Arg SumAllButChannels(ir::Graph& out, const ir::Arg& grad, const ir::TensorType& go,
                          const ir::TensorType& type) {
  const int64_t rank = go.rank();
  std::vector<int64_t> perm = {0};
  for (int64_t d = 2; d < rank; ++d) perm.push_back(d);
  perm.push_back(1);
  ir::TensorType permuted = go;
  for (int64_t d = 0; d < rank; ++d) {
    permuted.sizes[d] = go.sizes[perm[d]];
    permuted.strides[d] = go.strides[perm[d]];
  }
  const bool channels_last =
      go.sizes[1] > 1 && permuted.strides == ir::ContiguousStrides(permuted.sizes);
  std::vector<int64_t> dims;
  ir::Arg summed = grad;
  if (channels_last) {
    summed = EmitOp(out, "aten::permute.default", {grad, IntListArg(perm)}, permuted);
    for (int64_t d = 0; d + 1 < rank; ++d) dims.push_back(d);
  } else {
    dims = perm;
    dims.pop_back();
  }
  return EmitOp(out, "aten::sum.dim_IntList", {summed, IntListArg(dims)}, type);
}

}  // namespace

absl::StatusOr<bool> ConvBackwardBiasGrad::Run(ir::Graph& graph) {
  bool any = false;
  for (const ir::Node& node : graph.nodes) any = any || Rewritable(graph, node);
  if (!any) return false;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        if (!Rewritable(out, node)) return std::nullopt;
        const std::vector<bool> mask = *MaskOf(node);
        const ir::TensorType go = out.type_of(node.args[0].ref());
        std::vector<ir::Arg> values(3);
        if (mask[0] || mask[1]) {
          ir::Node rest = node;
          std::get<bool>(std::get<ir::ArgList>(rest.args[kMask].v)[2].v) = false;
          rest.outputs[2] = AbsentOutput(node.outputs[2]);
          values[0] = AppendNode(out, std::move(rest));
          values[1] = ir::Arg{ir::ValueRef{values[0].ref().node, 1}};
        }
        values[2] = SumAllButChannels(out, node.args[0], go, node.outputs[2]);
        // Masked-off outputs are 0-element placeholders nothing reads; with the node gone they map
        // to the sum (as BatchNormInference maps its unused statistics).
        if (values[0].is_none()) values[0] = values[1] = values[2];
        return values;
      });
}

}  // namespace tccd::codegen

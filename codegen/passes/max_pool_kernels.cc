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

}  // namespace

absl::StatusOr<bool> MaxPoolKernels::Run(ir::Graph& graph) {
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        if (node.target == kMaxPoolForward && node.outputs.size() == 2 && node.kwargs.empty() &&
            node.args.size() >= 2) {
          // (x, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False)
          ir::Node values, offsets;
          values.target = kMaxPoolValuesTarget;
          offsets.target = kMaxPoolOffsetsTarget;
          values.args = offsets.args = node.args;
          values.outputs = {node.outputs[0]};
          offsets.outputs = {node.outputs[1]};
          if (!Accepts(out, values) || !Accepts(out, offsets)) return std::nullopt;
          ir::Arg v = AppendNode(out, std::move(values));
          ir::Arg i = AppendNode(out, std::move(offsets));
          return std::vector<ir::Arg>{v, i};
        }
        if (node.target == kMaxPoolBackward && node.outputs.size() == 1 && node.kwargs.empty() &&
            node.args.size() == 8 && node.args[0].is_ref() && node.args[7].is_ref()) {
          // (grad, x, kernel_size, stride, padding, dilation, ceil_mode, indices): x gives only
          // the output's shape, which the node's type carries.
          ir::Node back;
          back.target = kMaxPoolGatherBackwardTarget;
          back.args = {node.args[0], node.args[7], node.args[2], node.args[3],
                       node.args[4], node.args[5], node.args[6]};
          back.outputs = {node.outputs[0]};
          if (!Accepts(out, back)) return std::nullopt;
          return std::vector<ir::Arg>{AppendNode(out, std::move(back))};
        }
        return std::nullopt;
      });
}

}  // namespace tccd::codegen

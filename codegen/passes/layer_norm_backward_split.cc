// LayerNormBackwardSplit (see layer_norm_backward_split.h).
#include "codegen/passes/layer_norm_backward_split.h"

#include <vector>

#include "codegen/passes/output_mask.h"

namespace tccd::codegen {
namespace {

constexpr char kTarget[] = "aten::native_layer_norm_backward.default";
constexpr size_t kMaskIndex = 7;

// The output_mask of `node`, when it is a positional list of three bools.
ir::ArgList* MaskOf(ir::Node& node) {
  if (node.args.size() <= kMaskIndex) return nullptr;
  auto* list = std::get_if<ir::ArgList>(&node.args[kMaskIndex].v);
  if (list == nullptr || list->size() != 3) return nullptr;
  for (const ir::Arg& a : *list)
    if (!std::holds_alternative<bool>(a.v)) return nullptr;
  return list;
}

bool MaskBit(const ir::ArgList& mask, int o) { return std::get<bool>(mask[o].v); }

void Remap(ir::Arg& arg, const std::vector<int>& new_id, int split_from, int split_to) {
  if (arg.is_ref()) {
    ir::ValueRef& r = std::get<ir::ValueRef>(arg.v);
    if (r.is_input()) return;
    // Parameter gradients now come from the second half.
    r.node = (r.node == split_from && r.output > 0) ? split_to : new_id[r.node];
  } else if (auto* list = std::get_if<ir::ArgList>(&arg.v)) {
    for (ir::Arg& a : *list) Remap(a, new_id, split_from, split_to);
  }
}

}  // namespace

absl::StatusOr<bool> LayerNormBackwardSplit::Run(ir::Graph& graph) {
  bool changed = false;
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    ir::Node& node = graph.nodes[id];
    if (node.target != kTarget || node.outputs.size() != 3 || !node.kwargs.empty()) continue;
    ir::ArgList* mask = MaskOf(node);
    if (mask == nullptr || !MaskBit(*mask, 0) || !(MaskBit(*mask, 1) || MaskBit(*mask, 2)))
      continue;
    ir::Node params = node;
    std::get<bool>((*MaskOf(params))[0].v) = false;
    params.outputs[0] = AbsentOutput(node.outputs[0]);
    std::get<bool>((*mask)[1].v) = false;
    std::get<bool>((*mask)[2].v) = false;
    node.outputs[1] = AbsentOutput(node.outputs[1]);
    node.outputs[2] = AbsentOutput(node.outputs[2]);

    const int n = static_cast<int>(graph.nodes.size());
    std::vector<int> new_id(n);
    for (int i = 0; i < n; ++i) new_id[i] = i <= static_cast<int>(id) ? i : i + 1;
    const int from = static_cast<int>(id), to = from + 1;
    for (ir::Node& other : graph.nodes) {
      for (ir::Arg& a : other.args) Remap(a, new_id, from, to);
      for (ir::NamedArg& kw : other.kwargs) Remap(kw.value, new_id, from, to);
    }
    for (ir::Arg& a : graph.outputs) Remap(a, new_id, from, to);
    graph.nodes.insert(graph.nodes.begin() + to, std::move(params));
    changed = true;
    ++id;  // skip the new node
  }
  return changed;
}

}  // namespace tccd::codegen

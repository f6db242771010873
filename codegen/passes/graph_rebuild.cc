// Graph rebuilding (see graph_rebuild.h).
#include "codegen/passes/graph_rebuild.h"

namespace tccd::codegen {

ir::Arg IntListArg(const std::vector<int64_t>& values) {
  ir::ArgList list;
  for (int64_t v : values) list.push_back(ir::Arg{v});
  return ir::Arg{std::move(list)};
}

ir::Arg AppendNode(ir::Graph& out, ir::Node node) {
  out.nodes.push_back(std::move(node));
  return ir::Arg{ir::ValueRef{static_cast<int>(out.nodes.size()) - 1, 0}};
}

bool IsF32OrHalf(ir::DType dtype) {
  return dtype == ir::DType::kF32 || dtype == ir::DType::kBF16 || dtype == ir::DType::kF16;
}

bool IsReshapeTarget(const std::string& target) {
  return target == "aten::view.default" || target == "aten::_unsafe_view.default" ||
         target == "aten::reshape.default";
}

bool IsPlain(const ir::TensorType& t) { return t.IsContiguous() && t.storage_offset == 0; }

void RemapRefs(ir::Arg& arg, const RebuildMap& map) {
  if (arg.is_ref()) {
    const ir::ValueRef& r = arg.ref();
    if (!r.is_input()) arg = map.at({r.node, r.output});
  } else if (auto* list = std::get_if<ir::ArgList>(&arg.v)) {
    for (ir::Arg& a : *list) RemapRefs(a, map);
  }
}

bool RebuildGraph(ir::Graph& graph,
                  const std::function<std::optional<std::vector<ir::Arg>>(ir::Graph& out, const ir::Node& node)>& rewrite) {
  ir::Graph out;
  out.inputs = graph.inputs;
  RebuildMap map;
  bool changed = false;
  for (int id = 0; id < static_cast<int>(graph.nodes.size()); ++id) {
    ir::Node node = graph.nodes[id];
    for (ir::Arg& a : node.args) RemapRefs(a, map);
    for (ir::NamedArg& kw : node.kwargs) RemapRefs(kw.value, map);
    if (std::optional<std::vector<ir::Arg>> values = rewrite(out, node)) {
      for (int o = 0; o < static_cast<int>(values->size()); ++o) map[{id, o}] = (*values)[o];
      changed = true;
      continue;
    }
    const int new_id = static_cast<int>(out.nodes.size());
    for (int o = 0; o < static_cast<int>(node.outputs.size()); ++o) map[{id, o}] = ir::Arg{ir::ValueRef{new_id, o}};
    out.nodes.push_back(std::move(node));
  }
  if (!changed) return false;
  out.outputs = graph.outputs;
  for (ir::Arg& a : out.outputs) RemapRefs(a, map);
  graph = std::move(out);
  return true;
}

}  // namespace tccd::codegen

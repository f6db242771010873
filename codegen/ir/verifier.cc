// Structural verification of the graph IR (see verifier.h).
#include "codegen/ir/verifier.h"

#include <regex>

#include "absl/strings/str_cat.h"
#include "codegen/ir/printer.h"
#include "base/status_macros.h"

namespace tccd::ir {
namespace {

absl::Status CheckRef(const Graph& graph, const ValueRef& ref, int current_node,
                      const std::string& where) {
  if (ref.is_input()) {
    if (ref.output < 0 || ref.output >= static_cast<int>(graph.inputs.size()))
      return absl::InvalidArgumentError(absl::StrCat(where, ": reference to graph input ",
                                                     ref.output, " but the graph has ",
                                                     graph.inputs.size(), " inputs"));
    return absl::OkStatus();
  }
  if (ref.node < 0 || ref.node >= current_node)
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": reference to node ", ref.node,
                     " which is not an earlier node (nodes must be in topological order)"));
  const Node& producer = graph.nodes[ref.node];
  if (ref.output < 0 || ref.output >= static_cast<int>(producer.outputs.size()))
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": reference to output ", ref.output, " of node ", ref.node, " (",
                     producer.target, ") which has ", producer.outputs.size(), " outputs"));
  return absl::OkStatus();
}

absl::Status CheckArg(const Graph& graph, const Arg& arg, int current_node,
                      const std::string& where, int depth = 0) {
  if (depth > 8)
    return absl::InvalidArgumentError(absl::StrCat(where, ": lists nested too deeply"));
  if (arg.is_ref()) return CheckRef(graph, arg.ref(), current_node, where);
  if (const auto* list = std::get_if<ArgList>(&arg.v)) {
    for (const Arg& item : *list)
      RETURN_IF_ERROR(CheckArg(graph, item, current_node, where, depth + 1));
  }
  return absl::OkStatus();
}

bool IsValidTarget(const std::string& target) {
  // namespace::name.overload, e.g. aten::add.Tensor, aten::relu.default,
  // prims::convert_element_type.default
  static const std::regex kTarget("[A-Za-z_][A-Za-z0-9_]*::[A-Za-z_][A-Za-z0-9_]*\\.[A-Za-z0-9_]+");
  return target.size() < 256 && std::regex_match(target, kTarget);
}

}  // namespace

absl::Status VerifyTensorType(const TensorType& type) {
  const std::string text = PrintTensorType(type);
  if (type.rank() > kMaxRank)
    return absl::InvalidArgumentError(absl::StrCat("tensor ", text, " has rank ", type.rank(),
                                                   "; at most ", kMaxRank, " is supported"));
  if (type.strides.size() != type.sizes.size())
    return absl::InvalidArgumentError(absl::StrCat("tensor ", text, " has ", type.sizes.size(),
                                                   " sizes but ", type.strides.size(), " strides"));
  if (type.storage_offset < 0)
    return absl::InvalidArgumentError(
        absl::StrCat("tensor ", text, " has a negative storage offset"));
  // Guard every product against overflow: absurd sizes are hostile input, not a crash.
  bool empty = false;
  for (size_t d = 0; d < type.sizes.size(); ++d) {
    if (type.sizes[d] < 0)
      return absl::InvalidArgumentError(absl::StrCat("tensor ", text, " has a negative size"));
    if (type.strides[d] < 0)
      return absl::InvalidArgumentError(absl::StrCat("tensor ", text, " has a negative stride"));
    empty |= type.sizes[d] == 0;
  }
  if (empty) return absl::OkStatus();  // an empty tensor touches no memory, whatever its sizes
  __int128 numel = 1;
  __int128 extent = type.storage_offset;
  for (size_t d = 0; d < type.sizes.size(); ++d) {
    numel *= type.sizes[d];
    if (numel * DTypeBytes(type.dtype) > kMaxTensorBytes)
      return absl::InvalidArgumentError(
          absl::StrCat("tensor ", text, " is larger than ", kMaxTensorBytes >> 40, " TiB"));
    extent += static_cast<__int128>(type.sizes[d] - 1) * type.strides[d];
    if (extent * DTypeBytes(type.dtype) > kMaxTensorBytes)
      return absl::InvalidArgumentError(
          absl::StrCat("tensor ", text, " spans more than ", kMaxTensorBytes >> 40, " TiB"));
  }
  return absl::OkStatus();
}

absl::Status VerifyGraph(const Graph& graph) {
  if (graph.nodes.size() > kMaxNodes)
    return absl::InvalidArgumentError(absl::StrCat(
        "graph has ", graph.nodes.size(), " nodes; at most ", kMaxNodes, " are supported"));
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    absl::Status s = VerifyTensorType(graph.inputs[i]);
    if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat("input %a", i, ": ", s.message()));
  }
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    const Node& node = graph.nodes[id];
    const std::string where = absl::StrCat("node %", id, " (", node.target.substr(0, 80), ")");
    if (!IsValidTarget(node.target))
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": target must look like 'namespace::op.overload' (e.g. aten::add.Tensor)"));
    for (const Arg& a : node.args) RETURN_IF_ERROR(CheckArg(graph, a, id, where));
    for (const NamedArg& kw : node.kwargs) {
      if (kw.name.empty())
        return absl::InvalidArgumentError(absl::StrCat(where, ": empty keyword name"));
      RETURN_IF_ERROR(CheckArg(graph, kw.value, id, where));
    }
    for (const TensorType& t : node.outputs) {
      absl::Status s = VerifyTensorType(t);
      if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", s.message()));
    }
  }
  for (const Arg& out : graph.outputs)
    RETURN_IF_ERROR(CheckArg(graph, out, static_cast<int>(graph.nodes.size()), "graph output"));
  return absl::OkStatus();
}

}  // namespace tccd::ir

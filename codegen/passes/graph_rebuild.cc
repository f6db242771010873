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

ir::Arg EmitOp(ir::Graph& out, std::string target, std::vector<ir::Arg> args, ir::TensorType type,
               std::vector<ir::NamedArg> kwargs) {
  return AppendNode(out, ir::Node{.target = std::move(target),
                                  .args = std::move(args),
                                  .kwargs = std::move(kwargs),
                                  .outputs = {std::move(type)}});
}

ir::TensorType DenseType(ir::DType dtype, std::vector<int64_t> sizes, ir::DeviceType device) {
  ir::TensorType t{.dtype = dtype, .sizes = std::move(sizes), .device = device};
  t.strides = ir::ContiguousStrides(t.sizes);
  return t;
}

ir::Arg EmitArange(ir::Graph& out, int64_t n, ir::DType dtype, ir::DeviceType device) {
  return EmitOp(out, "aten::arange.default", {ir::Arg{n}}, DenseType(dtype, {n}, device),
                {{"dtype", ir::Arg{dtype}},
                 {"layout", ir::Arg{ir::LayoutArg{0}}},
                 {"device", ir::Arg{device}},
                 {"pin_memory", ir::Arg{false}}});
}

ir::Arg EmitColumn(ir::Graph& out, const ir::Arg& vector) {
  ir::TensorType t = out.type_of(vector.ref());
  const int64_t stride = t.strides.empty() ? 1 : t.strides[0];
  t.sizes = {t.sizes[0], 1};
  t.strides = {stride, 1};
  return EmitOp(out, "aten::unsqueeze.default", {vector, ir::Arg{int64_t{1}}}, t);
}

std::optional<int64_t> IntArgAt(const ir::Node& node, size_t i) {
  if (i >= node.args.size()) return std::nullopt;
  if (const auto* v = std::get_if<int64_t>(&node.args[i].v)) return *v;
  return std::nullopt;
}

bool IsReshapeTarget(const std::string& target) { return ViewKindOf(target) == ViewKind::kReshape; }

std::optional<std::vector<int64_t>> PermutationOf(const ir::Node& node, int64_t rank) {
  if (ViewKindOf(node.target) != ViewKind::kPermute) return std::nullopt;
  auto arg = [&](size_t index, const char* name) -> const ir::Arg* {
    return index < node.args.size() ? &node.args[index] : node.kwarg(name);
  };
  auto wrap = [rank](int64_t d) { return d < 0 ? d + rank : d; };
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i) perm.push_back(i);
  if (node.target == "aten::t.default") {
    if (rank >= 2) std::swap(perm[0], perm[1]);  // t of a 0-d or 1-d tensor is the identity
    return perm;
  }
  if (node.target == "aten::transpose.int") {
    const ir::Arg* a0 = arg(1, "dim0");
    const ir::Arg* a1 = arg(2, "dim1");
    const auto* d0 = a0 ? std::get_if<int64_t>(&a0->v) : nullptr;
    const auto* d1 = a1 ? std::get_if<int64_t>(&a1->v) : nullptr;
    if (d0 == nullptr || d1 == nullptr) return std::nullopt;
    const int64_t x = wrap(*d0), y = wrap(*d1);
    if (x < 0 || x >= rank || y < 0 || y >= rank) return std::nullopt;
    std::swap(perm[x], perm[y]);
    return perm;
  }
  const ir::Arg* a = arg(1, "dims");  // permute
  const auto* list = a ? std::get_if<ir::ArgList>(&a->v) : nullptr;
  if (list == nullptr || static_cast<int64_t>(list->size()) != rank) return std::nullopt;
  perm.clear();
  std::vector<bool> seen(rank, false);
  for (const ir::Arg& e : *list) {
    const auto* i = std::get_if<int64_t>(&e.v);
    if (i == nullptr) return std::nullopt;
    const int64_t d = wrap(*i);
    if (d < 0 || d >= rank || seen[d]) return std::nullopt;
    seen[d] = true;
    perm.push_back(d);
  }
  return perm;
}

bool IsPlain(const ir::TensorType& t) { return t.IsContiguous() && t.storage_offset == 0; }

std::optional<int64_t> PaddedRowStride(const ir::TensorType& t) {
  const int64_t rank = t.rank();
  if (rank < 2 || t.strides[rank - 1] != 1 || t.strides[rank - 2] <= t.sizes[rank - 1])
    return std::nullopt;
  for (int64_t d = 0; d + 2 < rank; ++d)
    if (t.sizes[d] > 1 && t.strides[d] != t.strides[d + 1] * t.sizes[d + 1]) return std::nullopt;
  return t.strides[rank - 2];
}

std::optional<std::vector<int64_t>> PaddedRowViewStrides(const std::vector<int64_t>& sizes,
                                                         int64_t rows, int64_t n,
                                                         int64_t row_stride) {
  if (sizes.size() < 2 || sizes.back() != n) return std::nullopt;
  int64_t count = 1;
  for (size_t d = 0; d + 1 < sizes.size(); ++d) count *= sizes[d];
  if (count != rows) return std::nullopt;
  std::vector<int64_t> strides(sizes.size(), 1);
  int64_t stride = row_stride;
  for (size_t d = sizes.size() - 1; d-- > 0;) {
    strides[d] = stride;
    stride *= sizes[d];
  }
  return strides;
}

void RemapRefs(ir::Arg& arg, const RebuildMap& map) {
  if (arg.is_ref()) {
    const ir::ValueRef& r = arg.ref();
    if (!r.is_input()) arg = map.at({r.node, r.output});
  } else if (auto* list = std::get_if<ir::ArgList>(&arg.v)) {
    for (ir::Arg& a : *list) RemapRefs(a, map);
  }
}

std::set<int> ReturnedNodes(const ir::Graph& graph) {
  std::set<int> nodes;
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) {
      if (!r.is_input()) nodes.insert(r.node);
    });
  return nodes;
}

bool RebuildGraph(ir::Graph& graph, const std::function<std::optional<std::vector<ir::Arg>>(
                                        ir::Graph& out, const ir::Node& node)>& rewrite) {
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
    for (int o = 0; o < static_cast<int>(node.outputs.size()); ++o)
      map[{id, o}] = ir::Arg{ir::ValueRef{new_id, o}};
    out.nodes.push_back(std::move(node));
  }
  if (!changed) return false;
  out.outputs = graph.outputs;
  for (ir::Arg& a : out.outputs) RemapRefs(a, map);
  graph = std::move(out);
  return true;
}

}  // namespace tccd::codegen

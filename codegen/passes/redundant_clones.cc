// RedundantClones (see redundant_clones.h).
#include "codegen/passes/redundant_clones.h"

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/ops/op_properties.h"
#include "codegen/passes/graph_rebuild.h"

namespace tccd::codegen {
namespace {

// Readers of each node output; graph outputs count.
std::vector<std::vector<int>> ReaderCounts(const ir::Graph& g) {
  std::vector<std::vector<int>> counts(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) counts[i].resize(g.nodes[i].outputs.size());
  auto count = [&](const ir::ValueRef& r) {
    if (!r.is_input()) ++counts[r.node][r.output];
  };
  for (const ir::Node& n : g.nodes) {
    for (const ir::Arg& a : n.args) ir::ForEachRef(a, count);
    for (const ir::NamedArg& kw : n.kwargs) ir::ForEachRef(kw.value, count);
  }
  for (const ir::Arg& a : g.outputs) ir::ForEachRef(a, count);
  return counts;
}

bool MayMutate(const ir::Node& n) {
  const std::string_view base = std::string_view(n.target).substr(0, n.target.rfind('.'));
  return n.outputs.empty() || (!base.empty() && base.back() == '_');
}

// Ops whose result has its declared layout when the plan runs: those lowered to kernels or
// matmuls, which write where the plan says (and, left to ATen, lay their result out as the
// trace's meta did). Not other extern ops: an attention call picks its backend, and with it
// its result's layout, at run time (math-attention-to-fused's declares the fused kernels' one),
// and the clone is then what makes the readers' views valid.
bool WritesDeclaredLayout(const std::string& target) {
  switch (PropertiesOf(target).category) {
    case OpCategory::kPointwise:
    case OpCategory::kReduction:
    case OpCategory::kIndex:
    case OpCategory::kGemm:
    case OpCategory::kScatter:
      return true;
    default:
      return false;
  }
}

// Whether clone node `c` only copies a fresh value that it alone reads, in that value's layout.
bool IsRedundant(const ir::Graph& g, const std::vector<std::vector<int>>& readers,
                 const std::set<int>& returned, int c) {
  const ir::Node& clone = g.nodes[c];
  if (clone.target != "aten::clone.default" || clone.args.size() != 1 ||
      !clone.args[0].is_ref() || clone.outputs.size() != 1 || returned.count(c))
    return false;
  for (const ir::NamedArg& kw : clone.kwargs)
    if (kw.name != "memory_format") return false;
  const ir::ValueRef x = clone.args[0].ref();
  if (x.is_input() || !(g.type_of(x) == clone.outputs[0])) return false;
  // Down through views that only the chain reads, to the op that made the bytes.
  ir::ValueRef r = x;
  while (true) {
    if (r.is_input() || readers[r.node][r.output] != 1) return false;
    const ir::Node& n = g.nodes[r.node];
    if (MayMutate(n)) return false;
    if (ViewKindOf(n.target) == ViewKind::kNone) return WritesDeclaredLayout(n.target);
    if (n.args.empty() || !n.args[0].is_ref()) return false;
    r = n.args[0].ref();
  }
}

}  // namespace

absl::StatusOr<bool> RedundantClones::Run(ir::Graph& graph) {
  const std::vector<std::vector<int>> readers = ReaderCounts(graph);
  const std::set<int> returned = ReturnedNodes(graph);
  std::set<int> redundant;
  for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i)
    if (IsRedundant(graph, readers, returned, i)) redundant.insert(i);
  if (redundant.empty()) return false;
  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph&, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        if (!redundant.count(id)) return std::nullopt;
        return std::vector<ir::Arg>{node.args[0]};  // already remapped
      });
}

}  // namespace tccd::codegen

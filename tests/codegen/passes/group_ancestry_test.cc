// GroupAncestry (the cycle test of pointwise fusion) against the definition: a unit depends on a
// group when a chain of units leads from the group to it (units: groups and extern nodes; one
// unit reads another when one of its members reads one of the other's). Random graphs grow and
// merge groups the way fusion does; after every step every answer is compared with a walk of the
// condensed graph.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/ir/parser.h"
#include "codegen/passes/group_ancestry.h"

namespace tccd::codegen {
namespace {

// Does the unit of node `x` (its group, or x alone) depend on group g, over nodes [0, upto]? A
// walk of the condensed graph: a unit's predecessors are the units its members read from (a
// kernel runs whole, so a group that reads a value depends on all its producer unit depends on).
bool UnitDependsOn(const ir::Graph& graph, const std::vector<int>& group_of, int x, int g,
                   int upto) {
  auto members = [&](int node) {
    std::vector<int> out;
    for (int m = 0; m <= upto; ++m)
      if (m == node || (group_of[node] >= 0 && group_of[m] == group_of[node])) out.push_back(m);
    return out;
  };
  std::vector<bool> seen(upto + 1, false);  // per node: its unit was visited
  std::vector<int> stack = {x};
  for (int m : members(x)) seen[m] = true;
  while (!stack.empty()) {
    const int unit = stack.back();
    stack.pop_back();
    for (int m : members(unit)) {
      ir::ForEachInput(graph.nodes[m], [&](const ir::ValueRef& r) {
        if (r.is_input() || seen[r.node]) return;
        for (int y : members(r.node)) seen[y] = true;
        stack.push_back(r.node);
      });
    }
  }
  for (int m = 0; m <= upto; ++m)
    if (seen[m] && group_of[m] == g && group_of[x] != g) return true;
  return false;
}

ir::Graph RandomGraph(std::mt19937& rng, int n) {
  std::string text = "graph(%a0: f32[4]{1}@cpu) {\n";
  for (int id = 0; id < n; ++id) {
    auto pick = [&] {
      return id == 0 ? std::string("%a0")
                     : absl::StrCat("%", std::uniform_int_distribution<int>(0, id - 1)(rng));
    };
    absl::StrAppend(&text, "  %", id, " = aten::add.Tensor(", pick(), ", ", pick(),
                    ") -> f32[4]{1}@cpu\n");
  }
  absl::StrAppend(&text, "  return (%", n - 1, ")\n}");
  absl::StatusOr<ir::Graph> graph = ir::ParseGraph(text);
  REQUIRE(graph.ok());
  return *std::move(graph);
}

TEST_CASE("group ancestry answers as a walk of the node graph while groups grow and merge",
          "[fusion]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 30;
    const ir::Graph graph = RandomGraph(rng, n);
    std::vector<int> group_of(n, -1);
    std::vector<std::vector<int>> groups;
    GroupAncestry ancestry(n);
    for (int id = 0; id < n; ++id) {
      // Join a group none of the node's other inputs depends on (as fusion does), start one, or
      // stay an extern node.
      const int choice = std::uniform_int_distribution<int>(0, 3)(rng);
      if (choice == 0 && !groups.empty()) {
        const int g = std::uniform_int_distribution<int>(0, groups.size() - 1)(rng);
        bool cycle = groups[g].empty();
        ir::ForEachInput(graph.nodes[id], [&](const ir::ValueRef& r) {
          if (!r.is_input() && group_of[r.node] != g &&
              UnitDependsOn(graph, group_of, r.node, g, id - 1))
            cycle = true;
        });
        if (!cycle) {
          group_of[id] = g;
          groups[g].push_back(id);
        }
      } else if (choice <= 2) {
        group_of[id] = static_cast<int>(groups.size());
        groups.push_back({id});
      }
      ancestry.AddNode(graph, group_of, id);
      // Sometimes merge two groups neither of which depends on the other.
      if (groups.size() >= 2 && std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
        const int a = std::uniform_int_distribution<int>(0, groups.size() - 1)(rng);
        const int b = std::uniform_int_distribution<int>(0, groups.size() - 1)(rng);
        if (a != b && !groups[a].empty() && !groups[b].empty() &&
            !UnitDependsOn(graph, group_of, groups[a][0], b, id) &&
            !UnitDependsOn(graph, group_of, groups[b][0], a, id)) {
          for (int m : groups[a]) group_of[m] = b;
          groups[b].insert(groups[b].end(), groups[a].begin(), groups[a].end());
          groups[a].clear();
          ancestry.MergeGroups(/*from=*/a, /*into=*/b);
        }
      }
      for (int x = 0; x <= id; ++x) {
        for (int g = 0; g < static_cast<int>(groups.size()); ++g) {
          if (groups[g].empty()) continue;
          const bool want = group_of[x] == g || UnitDependsOn(graph, group_of, x, g, id);
          INFO("trial " << trial << " after node " << id << ": node " << x << " on group " << g);
          CHECK(ancestry.ValueDependsOn(group_of, ir::ValueRef{x, 0}, g) == want);
          if (group_of[x] >= 0 && group_of[x] != g)
            CHECK(ancestry.GroupDependsOn(group_of[x], g) == want);
        }
      }
    }
  }
}

TEST_CASE("group sets grow on demand and report what they lack", "[fusion]") {
  GroupSet a, b;
  CHECK_FALSE(a.contains(1000));
  b.insert(3);
  b.insert(200);
  CHECK(a.Lacks(b));
  a.InsertAll(b);
  CHECK(a.contains(3));
  CHECK(a.contains(200));
  CHECK_FALSE(a.Lacks(b));
  a.erase(200);
  CHECK_FALSE(a.contains(200));
  CHECK(a.Lacks(b));
  CHECK_FALSE(b.Lacks(a));
}

}  // namespace
}  // namespace tccd::codegen

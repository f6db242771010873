// Which fusion groups each unit of a partition being built depends on: the cycle test of
// pointwise fusion (fusion.h), kept transitively closed so that a test is one bit.
//
// Units are groups (fused kernels) and extern nodes (ATen steps). A unit depends on a group when
// a chain of nodes leads from a member of the group to (a member of) the unit. Fusion visits
// nodes in graph order; groups grow (a node joins one) and merge (two become one), and both can
// give a unit new ancestors: a group that gains a member reading a later extern's output, and
// everything that already depended on it, now depends on what that extern depends on.
//
// Why closed sets: fusion asks "does this value depend on group g?" for every candidate group of
// every node. Walking the dependency sets of every member of every group reached (the earlier
// form) made each question cost about (nodes x groups) and the partition quadratic to cubic in
// graph size (1.5 s of ResNet-50's training forward on the dev machine, 4-5 s on a loaded one).
// Here a question is one bit test; the price is paid when a unit gains ancestors, by the units
// that depend on it (rare: most members read what their group already depends on).
//
// Sets are bitsets over group indices, grown on demand: N nodes make at most N groups, so memory
// is at most N^2 / 8 bytes (the per-node std::set<int> of the earlier form held the same
// information at ~40 bytes an entry).
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/ir/graph.h"

namespace tccd::codegen {

// A set of group indices.
class GroupSet {
 public:
  bool contains(int g) const {
    const size_t w = static_cast<size_t>(g) >> 6;
    return w < words_.size() && ((words_[w] >> (g & 63)) & 1) != 0;
  }
  void insert(int g);
  void erase(int g);
  // Adds every member of `other`.
  void InsertAll(const GroupSet& other);
  // Whether `other` has a member this set lacks.
  bool Lacks(const GroupSet& other) const;
  void clear() { words_.clear(); }

 private:
  std::vector<uint64_t> words_;
};

class GroupAncestry {
 public:
  explicit GroupAncestry(int num_nodes) : extern_ancestors_(num_nodes) {}

  // Whether value `r` depends on group `g`, through any chain of units; a value of group g
  // itself counts. Graph inputs depend on nothing.
  bool ValueDependsOn(const std::vector<int>& group_of, const ir::ValueRef& r, int g) const;
  // Whether group `h` depends on group `g` (h != g).
  bool GroupDependsOn(int h, int g) const { return h < Size() && group_ancestors_[h].contains(g); }

  // Records node `id` once its unit is final for this visit (group_of[id]: its group, or -1 for
  // an extern node): its unit depends on the groups its inputs come from and on theirs, and so
  // does every unit that depends on its group. Nodes are recorded in graph order.
  void AddNode(const ir::Graph& graph, const std::vector<int>& group_of, int id);
  // Group `from` was merged into group `into` (neither depended on the other): every unit that
  // depended on either depends on the union and on what either depended on.
  void MergeGroups(int from, int into);

 private:
  int Size() const { return static_cast<int>(group_ancestors_.size()); }
  // Adds `delta` to the ancestors of every unit (but `except`) that depends on group `g`.
  void AddToDependents(int g, int except, const GroupSet& delta);

  std::vector<GroupSet> group_ancestors_;   // per group index
  std::vector<GroupSet> extern_ancestors_;  // per node id; only extern nodes' are filled
  std::vector<int> externs_;                // extern nodes recorded so far
};

}  // namespace tccd::codegen

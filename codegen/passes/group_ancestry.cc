// Transitively closed group dependencies for pointwise fusion (see group_ancestry.h).
#include "codegen/passes/group_ancestry.h"

#include <algorithm>

namespace tccd::codegen {

void GroupSet::insert(int g) {
  const size_t w = static_cast<size_t>(g) >> 6;
  if (w >= words_.size()) words_.resize(w + 1, 0);
  words_[w] |= uint64_t{1} << (g & 63);
}

void GroupSet::erase(int g) {
  const size_t w = static_cast<size_t>(g) >> 6;
  if (w < words_.size()) words_[w] &= ~(uint64_t{1} << (g & 63));
}

void GroupSet::InsertAll(const GroupSet& other) {
  if (other.words_.size() > words_.size()) words_.resize(other.words_.size(), 0);
  for (size_t w = 0; w < other.words_.size(); ++w) words_[w] |= other.words_[w];
}

bool GroupSet::Lacks(const GroupSet& other) const {
  for (size_t w = 0; w < other.words_.size(); ++w) {
    const uint64_t mine = w < words_.size() ? words_[w] : 0;
    if ((other.words_[w] & ~mine) != 0) return true;
  }
  return false;
}

bool GroupAncestry::ValueDependsOn(const std::vector<int>& group_of, const ir::ValueRef& r,
                                   int g) const {
  if (r.is_input()) return false;
  const int own = group_of[r.node];
  if (own < 0) return extern_ancestors_[r.node].contains(g);
  return own == g || GroupDependsOn(own, g);
}

void GroupAncestry::AddNode(const ir::Graph& graph, const std::vector<int>& group_of, int id) {
  const int own = group_of[id];
  GroupSet ancestors;
  ir::ForEachInput(graph.nodes[id], [&](const ir::ValueRef& r) {
    if (r.is_input()) return;
    const int g = group_of[r.node];
    if (g < 0) {
      ancestors.InsertAll(extern_ancestors_[r.node]);
    } else if (g != own) {
      // An input of the node's own group adds nothing: the group holds its ancestors already.
      ancestors.insert(g);
      if (g < Size()) ancestors.InsertAll(group_ancestors_[g]);
    }
  });
  if (own < 0) {
    extern_ancestors_[id] = std::move(ancestors);
    externs_.push_back(id);
    return;
  }
  if (own >= Size()) group_ancestors_.resize(own + 1);
  if (!group_ancestors_[own].Lacks(ancestors)) return;  // the common case: nothing new
  group_ancestors_[own].InsertAll(ancestors);
  AddToDependents(own, own, ancestors);
}

void GroupAncestry::MergeGroups(int from, int into) {
  if (std::max(from, into) >= Size()) group_ancestors_.resize(std::max(from, into) + 1);
  GroupSet merged = group_ancestors_[into];
  merged.InsertAll(group_ancestors_[from]);
  merged.erase(from);
  merged.erase(into);
  group_ancestors_[from].clear();
  // A unit that depended on either group depends on the merged one (named `into`) and on all
  // it depends on; transitivity makes one pass enough (a unit that depends on such a unit
  // depends on the group too, and is visited here as well).
  auto update = [&](GroupSet& s) {
    if (!s.contains(from) && !s.contains(into)) return;
    s.erase(from);
    s.insert(into);
    s.InsertAll(merged);
  };
  for (int u = 0; u < Size(); ++u)
    if (u != into) update(group_ancestors_[u]);
  for (int e : externs_) update(extern_ancestors_[e]);
  group_ancestors_[into] = std::move(merged);
}

void GroupAncestry::AddToDependents(int g, int except, const GroupSet& delta) {
  for (int u = 0; u < Size(); ++u)
    if (u != except && group_ancestors_[u].contains(g)) group_ancestors_[u].InsertAll(delta);
  for (int e : externs_)
    if (extern_ancestors_[e].contains(g)) extern_ancestors_[e].InsertAll(delta);
}

}  // namespace tccd::codegen

// OrderStepsForMemory: a list scheduler per run of movable steps (see order_steps_for_memory.h).
#include "codegen/schedule/order_steps_for_memory.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "codegen/ops/op_properties.h"

namespace tccd::schedule {
namespace {

bool IsView(const Step& step) {
  return step.is<ExternOp>() && codegen::IsViewOp(step.as<ExternOp>().target);
}

bool Movable(const Step& step) {
  // A kernel that writes into a graph input's buffer stays where MutationsIntoProducers found
  // it legal: after every reader of the input's old value.
  if (step.is<KernelLaunch>())
    for (ValueId v : step.as<KernelLaunch>().write_into)
      if (v != kUnused) return false;
  return step.is<KernelLaunch>() || step.is<LibraryCall>() || IsView(step);
}

// Bytes from a value's first element to one past its last (0 when empty).
int64_t ExtentBytes(const ir::TensorType& t) {
  if (t.numel() == 0 || t.sizes.size() != t.strides.size()) return 0;
  int64_t last = 0;
  for (size_t d = 0; d < t.sizes.size(); ++d) last += (t.sizes[d] - 1) * std::abs(t.strides[d]);
  return (last + 1) * ir::DTypeBytes(t.dtype);
}

// One run [begin, end) of movable steps, in the memory model of the header: the roots it
// defines that may die inside it, who reads them, and who depends on whom.
class RunModel {
 public:
  RunModel(const std::vector<Step>& steps, int begin, int end, const std::vector<ValueId>& root,
           const std::vector<int>& last_read, const std::vector<int64_t>& bytes)
      : steps_(steps), n_(end - begin), root_(root), bytes_(bytes) {
    std::map<ValueId, int> def;  // value -> run position of its defining step
    for (int p = 0; p < n_; ++p)
      for (ValueId v : steps_[begin + p].outputs)
        if (v >= 0) def[v] = p;
    deps_.resize(n_);
    reads_.resize(n_);
    allocs_.resize(n_);
    for (int p = 0; p < n_; ++p) {
      const Step& step = steps_[begin + p];
      std::set<int> deps;
      for (ValueId v : ReadsOf(step))
        if (auto it = def.find(v); it != def.end()) deps.insert(it->second);
      deps_[p].assign(deps.begin(), deps.end());
      if (IsView(step)) continue;  // no bytes of its own; its readers read its base's
      std::set<ValueId> roots;
      for (ValueId v : ReadsOf(step)) roots.insert(root_[v]);
      for (ValueId r : roots)
        if (Dies(r, def, end, last_read)) reads_[p].push_back(r);
      for (ValueId v : step.outputs)
        if (v >= 0 && root_[v] == v && Dies(v, def, end, last_read)) allocs_[p].push_back(v);
    }
  }

  int size() const { return n_; }

  // Run positions in the scheduler's order: among the steps whose dependencies have run, the one
  // with the most bytes freed minus bytes allocated, the earliest on a tie; when every ready
  // step would add bytes, the earliest. (Picking the smallest allocation then, as a pure
  // free-minus-allocate greedy does, pulls allocations forward, and what is allocated early
  // lives longer: BERT's padded decoder weight ended up live beside both logits gradients.)
  std::vector<int> ListSchedule() const {
    std::map<ValueId, int> readers_left;
    for (int p = 0; p < n_; ++p)
      for (ValueId r : reads_[p]) ++readers_left[r];
    std::vector<int> deps_left(n_);
    std::vector<std::vector<int>> users(n_);
    for (int p = 0; p < n_; ++p) {
      deps_left[p] = static_cast<int>(deps_[p].size());
      for (int d : deps_[p]) users[d].push_back(p);
    }
    std::set<int> ready;
    for (int p = 0; p < n_; ++p)
      if (deps_left[p] == 0) ready.insert(p);
    std::vector<int> order;
    order.reserve(n_);
    while (!ready.empty()) {
      int best = -1;
      int64_t best_score = 0;
      for (int p : ready) {  // ascending: the first of equal scores wins
        int64_t score = 0;
        for (ValueId r : reads_[p])
          if (readers_left.at(r) == 1) score += bytes_[r];
        for (ValueId v : allocs_[p])
          if (readers_left.count(v)) score -= bytes_[v];  // one nothing reads dies at once
        if (best < 0 || score > best_score) best = p, best_score = score;
      }
      if (best_score < 0) best = *ready.begin();
      ready.erase(best);
      order.push_back(best);
      for (ValueId r : reads_[best]) --readers_left.at(r);
      for (int u : users[best])
        if (--deps_left[u] == 0) ready.insert(u);
    }
    return order;
  }

  // The most bytes of the run's own values live at one step when the run executes in `order`
  // (run positions): each from its defining step to its last reader, inclusive.
  int64_t Peak(const std::vector<int>& order) const {
    std::vector<int> at(n_);
    for (int t = 0; t < n_; ++t) at[order[t]] = t;
    std::map<ValueId, std::pair<int, int>> span;  // root -> (first, last) time
    for (int p = 0; p < n_; ++p)
      for (ValueId v : allocs_[p]) span[v] = {at[p], at[p]};
    for (int p = 0; p < n_; ++p)
      for (ValueId r : reads_[p])
        if (auto it = span.find(r); it != span.end())
          it->second.second = std::max(it->second.second, at[p]);
    std::vector<int64_t> delta(n_ + 1, 0);
    for (const auto& [r, s] : span) {
      delta[s.first] += bytes_[r];
      delta[s.second + 1] -= bytes_[r];
    }
    int64_t live = 0, peak = 0;
    for (int t = 0; t < n_; ++t) peak = std::max(peak, live += delta[t]);
    return peak;
  }

 private:
  // Whether root `r` can die inside the run: the run defines it and nothing after it reads it.
  bool Dies(ValueId r, const std::map<ValueId, int>& def, int end,
            const std::vector<int>& last_read) const {
    return def.count(r) && last_read[r] < end;
  }

  const std::vector<Step>& steps_;
  const int n_;
  const std::vector<ValueId>& root_;
  const std::vector<int64_t>& bytes_;
  std::vector<std::vector<int>> deps_;        // run positions each step waits for
  std::vector<std::vector<ValueId>> reads_;   // roots it reads that may die in the run (distinct)
  std::vector<std::vector<ValueId>> allocs_;  // roots it defines that may die in the run
};

}  // namespace

absl::StatusOr<bool> OrderStepsForMemory::Run(Schedule& schedule) {
  std::vector<Step> steps;  // without release steps, which ReleaseAfterLastUse rebuilds
  for (const Step& step : schedule.steps)
    if (!step.is<Release>()) steps.push_back(step);
  const int n = static_cast<int>(steps.size());
  const int num_values = static_cast<int>(schedule.values.size());
  // The storage each value lives in: its own, or (views, aliases) its base's.
  std::vector<ValueId> root(num_values);
  for (int v = 0; v < num_values; ++v) root[v] = v;
  for (const Step& step : steps) {
    const bool view = IsView(step) || step.is<Alias>();
    const std::vector<ValueId> reads = ReadsOf(step);
    for (ValueId v : step.outputs)
      if (v >= 0 && view && !reads.empty()) root[v] = root[reads.front()];
  }
  std::vector<int64_t> bytes(num_values);
  for (int v = 0; v < num_values; ++v) bytes[v] = ExtentBytes(schedule.values[v]);
  // The last step index reading each root (n: the schedule returns it).
  std::vector<int> last_read(num_values, -1);
  for (int i = 0; i < n; ++i)
    for (ValueId v : ReadsOf(steps[i])) last_read[root[v]] = std::max(last_read[root[v]], i);
  for (const ir::Arg& a : schedule.outputs)
    ForEachValue(a, [&](ValueId v) { last_read[root[v]] = n; });

  std::vector<Step> out;
  out.reserve(n);
  bool moved = false;
  for (int i = 0; i < n;) {
    int end = i;
    while (end < n && Movable(steps[end])) ++end;
    if (end - i < 2) {
      out.push_back(steps[i]);
      i = std::max(end, i + 1);
      continue;
    }
    RunModel run(steps, i, end, root, last_read, bytes);
    std::vector<int> order = run.ListSchedule();
    std::vector<int> identity(run.size());
    for (int p = 0; p < run.size(); ++p) identity[p] = p;
    if (order != identity && run.Peak(order) < run.Peak(identity)) {
      moved = true;
    } else {
      order = identity;
    }
    for (int p : order) out.push_back(steps[i + p]);
    i = end;
  }
  if (!moved) return false;
  schedule.steps = std::move(out);
  return true;
}

}  // namespace tccd::schedule

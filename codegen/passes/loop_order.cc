// ChooseLoopOrder (see loop_order.h).
#include "codegen/passes/loop_order.h"

#include <algorithm>
#include <numeric>

#include "codegen/passes/plan_builder.h"

namespace tccd::codegen {
namespace {

// True when `strides` (one operand, in iteration order `order`) never grows from one dim to an
// inner one, ignoring broadcast (stride-0) dims.
bool RowMajorUnder(const std::vector<int64_t>& strides, const std::vector<int>& order) {
  int64_t outer = -1;
  for (int d : order) {
    const int64_t s = strides[d] < 0 ? -strides[d] : strides[d];
    if (s == 0) continue;
    if (outer >= 0 && s > outer) return false;
    outer = s;
  }
  return true;
}

}  // namespace

std::vector<int> ChooseLoopOrder(const ir::Graph& graph, const FusionGroup& group,
                                 const PointwiseKernel& kernel) {
  if (kernel.is_row_reduction() || HasIndexOps(kernel) || group.num_reduced_dims > 0) return {};
  const int rank = static_cast<int>(group.shape.size());
  if (rank < 2 || group.outputs.empty()) return {};
  std::vector<std::vector<int64_t>> operands;
  for (const ir::ValueRef& r : group.inputs)
    operands.push_back(IterationStrides(graph.type_of(r), group.shape));
  for (const ir::ValueRef& r : group.outputs)
    operands.push_back(IterationStrides(graph.type_of(r), group.shape));

  std::vector<int> identity(rank);
  std::iota(identity.begin(), identity.end(), 0);
  auto all_row_major = [&](const std::vector<int>& order) {
    return std::all_of(operands.begin(), operands.end(),
                       [&](const std::vector<int64_t>& s) { return RowMajorUnder(s, order); });
  };
  if (all_row_major(identity)) return {};

  // Candidate: the dims of size > 1 sorted by the first output's strides, largest outermost
  // (stable, so equal strides keep the graph's order); size-1 dims keep their places.
  const std::vector<int64_t>& reference = operands[group.inputs.size()];
  std::vector<int> movable;
  for (int d = 0; d < rank; ++d)
    if (group.shape[d] > 1) movable.push_back(d);
  std::vector<int> sorted = movable;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](int a, int b) { return std::abs(reference[a]) > std::abs(reference[b]); });
  std::vector<int> order = identity;
  for (size_t i = 0; i < movable.size(); ++i) order[movable[i]] = sorted[i];
  if (order == identity || !all_row_major(order)) return {};
  return order;
}

std::vector<int64_t> InLoopOrder(const std::vector<int64_t>& v, const std::vector<int>& order) {
  if (order.empty()) return v;
  std::vector<int64_t> out(order.size());
  for (size_t i = 0; i < order.size(); ++i) out[i] = v[order[i]];
  return out;
}

}  // namespace tccd::codegen

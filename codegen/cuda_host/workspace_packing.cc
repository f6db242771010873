// PackWorkspace: two first-fit placements, the smaller kept (see workspace_packing.h).
#include "codegen/cuda_host/workspace_packing.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

namespace tccd::codegen {
namespace {

bool Overlap(const WorkspaceBuffer& a, const WorkspaceBuffer& b) {
  return !(a.last < b.first || b.last < a.first);
}

// Places the buffers in `order`, each at the lowest offset where it overlaps no placed buffer
// whose lifetime meets its own.
WorkspaceLayout FirstFit(absl::Span<const WorkspaceBuffer> buffers,
                         const std::vector<size_t>& order) {
  WorkspaceLayout layout;
  layout.offsets.assign(buffers.size(), 0);
  std::vector<size_t> placed;
  std::vector<std::pair<int64_t, int64_t>> busy;
  for (size_t i : order) {
    const WorkspaceBuffer& b = buffers[i];
    busy.clear();
    for (size_t p : placed)
      if (Overlap(buffers[p], b))
        busy.push_back({layout.offsets[p], layout.offsets[p] + buffers[p].bytes});
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [lo, hi] : busy) {
      if (offset + b.bytes <= lo) break;
      offset = std::max(offset, hi);
    }
    layout.offsets[i] = offset;
    layout.bytes = std::max(layout.bytes, offset + b.bytes);
    placed.push_back(i);
  }
  return layout;
}

}  // namespace

WorkspaceLayout PackWorkspace(absl::Span<const WorkspaceBuffer> buffers) {
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  WorkspaceLayout by_definition = FirstFit(buffers, order);
  // Largest first; equal sizes by definition order, so the result does not depend on the sort.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return buffers[a].bytes > buffers[b].bytes; });
  WorkspaceLayout by_size = FirstFit(buffers, order);
  return by_size.bytes < by_definition.bytes ? by_size : by_definition;
}

int64_t WorkspaceLowerBound(absl::Span<const WorkspaceBuffer> buffers) {
  std::map<int, int64_t> delta;  // step -> change of live bytes at its start
  for (const WorkspaceBuffer& b : buffers) {
    delta[b.first] += b.bytes;
    delta[b.last + 1] -= b.bytes;
  }
  int64_t live = 0, peak = 0;
  for (const auto& [step, d] : delta) peak = std::max(peak, live += d);
  return peak;
}

}  // namespace tccd::codegen

// Workspace packing: byte offsets inside one segment's workspace for the values that live and
// die inside it (segment_builder.h), from when each is first written and last read.
//
// Two buffers may share bytes only when their lifetimes, inclusive step ranges in the segment,
// are disjoint: a step never writes in place over what it reads (kernels and cuBLASLt both
// assume distinct operands), so a buffer read last by step i and one written by step i overlap.
// Packing is interval colouring with sizes, NP-hard in general; two greedy placements are run and
// the smaller result kept:
//  * first fit in definition order (what segments used alone before): each buffer at the lowest
//    offset free of every earlier-placed buffer whose lifetime meets its own;
//  * first fit, largest buffer first ("greedy by size", Pisarchyk & Lee 2020, TFLite's arena
//    planner): big buffers placed first leave the gaps for small ones instead of being pushed
//    above a pile of small ones. It wins on backward graphs, where many activation-sized
//    gradients die at different steps.
// On a tie the definition-order layout is kept, so a segment that gains nothing keeps the exact
// bytes of plans made before this choice existed.
//
// Pure and deterministic; thread-compatible.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace tccd::codegen {

struct WorkspaceBuffer {
  int64_t bytes = 0;  // already rounded up to the workspace's alignment by the caller
  int first = 0;      // segment position of the step that writes it
  int last = 0;       // segment position of its last reader (>= first)
};

struct WorkspaceLayout {
  std::vector<int64_t> offsets;  // per buffer, in the input's order
  int64_t bytes = 0;             // the workspace's size: the highest offset + size
};

// Offsets for `buffers` in a workspace no larger than either greedy placement above gives.
WorkspaceLayout PackWorkspace(absl::Span<const WorkspaceBuffer> buffers);

// The most bytes live at one step: no layout is smaller (how far a layout is from the optimum).
int64_t WorkspaceLowerBound(absl::Span<const WorkspaceBuffer> buffers);

}  // namespace tccd::codegen

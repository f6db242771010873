// Structural checks every graph must pass before a pass sees it, and after each pass that changed
// it: refs point backwards and in range, types are well formed and of sane size, targets look
// like ATen overload names. Violations in client input are INVALID_ARGUMENT.
#pragma once

#include "absl/status/status.h"
#include "codegen/ir/graph.h"

namespace tccd::ir {

// Limits on what a request may describe; larger is treated as hostile input.
inline constexpr int kMaxRank = 16;
inline constexpr int64_t kMaxTensorBytes = int64_t{1} << 42;  // 4 TiB
inline constexpr int kMaxNodes = 200000;

absl::Status VerifyGraph(const Graph& graph);
absl::Status VerifyTensorType(const TensorType& type);

}  // namespace tccd::ir

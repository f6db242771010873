// The ATen/prims op overloads tccd accepts in a graph (generated from torch by
// gen_known_ops.py). Unknown targets are refused with UNIMPLEMENTED.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "codegen/ir/graph.h"

namespace tccd::ir {

bool IsKnownOp(const std::string& target);

// UNIMPLEMENTED naming the first node whose target is not a known op.
absl::Status CheckKnownOps(const Graph& graph);

}  // namespace tccd::ir

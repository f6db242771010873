// The ATen/prims op overloads of the torch this daemon was built against (generated from torch
// by gen_known_ops.py). An op missing here is not an error: a newer torch's op, a custom op
// (torch.library) or one of another namespace runs as an extern step, which the client resolves
// through torch.ops; only a malformed target is refused (proto_convert). The list only tells
// logs which ops this daemon has never heard of.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "codegen/ir/graph.h"

namespace tccd::ir {

bool IsKnownOp(const std::string& target);

// The distinct targets of `graph` that are not known ops, in first-use order.
std::vector<std::string> UnknownOps(const Graph& graph);

}  // namespace tccd::ir

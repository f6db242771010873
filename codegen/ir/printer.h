// The textual form of the graph IR (see graph.h for an example). PrintGraph's output is also the
// canonical form the compile key is computed from, so it must be deterministic and must not
// depend on anything but the graph's structure and types.
#pragma once

#include <string>

#include "codegen/ir/graph.h"

namespace tccd::ir {

std::string PrintGraph(const Graph& graph);
std::string PrintTensorType(const TensorType& type);
std::string PrintArg(const Arg& arg);
std::string PrintValueRef(const ValueRef& ref);

}  // namespace tccd::ir

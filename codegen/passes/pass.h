// A graph-to-graph pass (after XLA's HloPassInterface): a name, and Run, which rewrites the graph
// in place and says whether it changed anything. Cross-cutting work (timing, verification after a
// change, IR dumps, disabling a pass by name) lives in PassRunner, not in the passes.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "codegen/ir/graph.h"

namespace tccd::codegen {

class GraphPass {
 public:
  virtual ~GraphPass() = default;
  virtual std::string_view name() const = 0;
  virtual absl::StatusOr<bool> Run(ir::Graph& graph) = 0;
};

}  // namespace tccd::codegen

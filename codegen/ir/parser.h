// Parses the textual graph IR written by PrintGraph. ParseGraph(PrintGraph(g)) == g for every
// graph; IR tests feed text in and compare text out.
#pragma once

#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "codegen/ir/graph.h"

namespace tccd::ir {

// INVALID_ARGUMENT with line and column on a syntax error. Does not verify (see verifier.h).
absl::StatusOr<Graph> ParseGraph(absl::string_view text);

}  // namespace tccd::ir

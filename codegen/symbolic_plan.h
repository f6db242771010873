// Graphs with symbolic sizes (torch.compile dynamic=True, mark_dynamic, automatic dynamic):
// validation, the canonical text their compile key is computed from, and their plan.
//
// The graph IR (codegen/ir/graph.h) and every pass and kernel after it work on static sizes, so
// a symbolic graph does not enter that pipeline: each of its ops becomes one ExternCall step
// and the plan's value metas, SymInt arguments and scalar outputs carry the size expressions
// (codegen/ir/sym_expr.h, canonical text) that the client evaluates from the actual inputs'
// sizes at every call. One plan therefore serves every size the graph's guards allow, and no
// kernel specialises on the example sizes (the ShapeEnv hints never enter the key or the plan).
// Runs of pointwise ops become fused kernels with run-time sizes (symbolic_kernels.h), on CUDA
// norms, softmax and row reductions too; the rest stay extern steps (matmuls: ATen's).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tccd/v1/tccd.pb.h"

namespace tccd::codegen {

// True when a size, stride, storage offset or argument anywhere in the graph is an expression.
bool HasSymbols(const v1::Graph& graph);

struct SymbolicGraph {
  v1::Graph graph;                 // the request's graph, every expression in canonical text
  std::vector<std::string> facts;  // the shape facts (guards), canonical, sorted, unique
  int num_symbols = 0;             // symbols s0 .. s(num_symbols - 1) appear in the graph
  std::string canonical_text;      // the graph part of the compile key (PrepareSymbolicGraph)
};

// Validates the graph (refs, dtypes, devices, expressions; INVALID_ARGUMENT naming the place),
// rewrites its expressions canonically and adds the facts of `shape_env` (its guards; never its
// hints, which are the example sizes). Guards must mention only the graph's symbols s0, s1, ...
// (the client drops the others and renames these); a guard the daemon cannot parse enters the key
// as its text, trimmed.
absl::StatusOr<SymbolicGraph> PrepareSymbolicGraph(const v1::Graph& graph,
                                                   const v1::ShapeEnv& shape_env);

// The plan without kernels: one ExternCall per node in graph order, values released after their
// last use (symbolic_kernels.cc; the plan with kernels is SymbolicKernelPlan there).
absl::StatusOr<v1::Plan> SymbolicExternPlan(const SymbolicGraph& graph);

}  // namespace tccd::codegen

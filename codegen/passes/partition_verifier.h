// VerifyPartition: the invariants every stage that builds or regroups a fusion partition
// (fusion.h, reduction_fusion.h, horizontal_fusion.h) must keep, checked by the pipeline after
// each of them as the pass runner checks the graph after each pass:
//  * group_of has one entry per node, and a group's `nodes` are exactly the nodes naming it,
//    ascending, never empty;
//  * the schedule runs every group once and every other node once, nothing else;
//  * every value a schedule entry reads (a group's inputs, an extern node's arguments) is a
//    graph input or made by an earlier entry, and a group never lists its own members'
//    values as inputs;
//  * every graph output is a graph input, or made by some entry.
// Returns "" or a description of the first violation (the caller makes it INTERNAL: a broken
// partition is a tccd bug, never the user's).
#pragma once

#include <string>

#include "codegen/ir/graph.h"
#include "codegen/passes/fusion.h"

namespace tccd::codegen {

std::string VerifyPartition(const ir::Graph& graph, const Partition& partition);

}  // namespace tccd::codegen

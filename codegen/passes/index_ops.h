// Index-aware ops: view materialisations (cat, constant_pad_nd, slice/select backward,
// slice_scatter) and gathers (embedding, index_select) as kernel IR with kIndex/kGather (see
// "Index-aware kernels" in kernel/pointwise_kernel.h). Each output point computes which input
// element it reads (or that it reads none and takes a constant), so these ops fuse with their
// pointwise consumers like any pointwise op; every tensor they read is a gather operand.
//
// Both backends implement kIndex/kGather (CUDA: cuda_index_emitter.cc; CPU: the loop nest of
// llvm_emitter.cc, which branches around masked-off gathers).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/ir/graph.h"
#include "codegen/passes/pointwise_ops.h"

namespace tccd::codegen {

// True if `node` is an index-aware op this library lowers with the arguments it has (tensors on
// the output's device, one dense output, supported options; e.g. slice_backward with step 1
// only).
bool IsIndexOp(const ir::Graph& graph, const ir::Node& node);

// IsIndexOp, or an op whose lowering needs the point's coordinates all the same (the random
// draw of dropout_to_philox.h): such nodes only go into pointwise kernels.
bool NeedsCoordinates(const ir::Graph& graph, const ir::Node& node);

// The tensors an index op reads, all by gather (empty for other nodes).
std::vector<ir::ValueRef> GatheredRefs(const ir::Node& node);

// Every target this library lowers.
std::vector<std::string> IndexOpTargets();

// Lowers a node IsIndexOp accepted. `input_of` gives the kernel input index of a gathered
// tensor. Returns the held value of the node's output (HeldDType of its dtype).
absl::StatusOr<int> LowerIndexOp(const ir::Graph& graph, const ir::Node& node,
                                 const std::function<int(const ir::ValueRef&)>& input_of,
                                 PwBuilder& builder);

}  // namespace tccd::codegen

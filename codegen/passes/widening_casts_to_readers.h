// WideningCastsToReaders (CUDA, after the row-reduction regrouping): a widening cast of a value
// its group writes anyway moves to the one group that reads the cast, which then loads the
// narrow value and widens it itself, instead of the producer writing a wide copy.
//
// A batch norm's backward in bf16 (ResNet-50, issue 7) casts its incoming gradient to f32 for
// the pointwise input-gradient step: %g = threshold_backward(add(...)) in bf16, read by the
// norm's column sums (which cast their own copy: column_prologue_recompute.h) and by
// %c = _to_copy(%g, f32), read by the input-gradient kernel. The input-gradient kernel depends
// on the column sums, so it cannot take %g's group; the partition gave the cast to its producer,
// whose kernel then stored %g in bf16 *and* %c in f32 (two f32 copies where two norms read it:
// a downsampling block), and the input-gradient kernel read the f32 copy back: per element
// 4 bytes written and 4 read where 2 read would do (H200, zoo ResNet-50 train large: the
// `add_threshold_backward_to_copy` kernels ~150 us at [64, 56, 56, 256], the
// `to_copy_sub_mul` readers ~95 us). The CPU-traced census graphs have the pattern; the
// GPU-traced graphs of the branches' integration build (r1, H200) did not, and there this pass
// changed nothing (BN kernels within 1% on vs off): its saving is not measured on a GPU.
//
// The rule: a node n = _to_copy(x) to a wider floating dtype, x's layout, in group G with x's
// producer, where G writes x anyway (read outside G or returned), n not returned, and every
// reader of n in one plain pointwise group H (no reduction, n's shape, the same device) that
// gathers nothing from x: n moves to H. Values change only where the producer had kept x's
// unrounded wide value for n: n is now widen(x) as stored, which is what eager computes.
// TCCD_DISABLE_PASSES=widening-casts-to-readers keeps the cast with its producer.
#pragma once

#include "absl/status/statusor.h"
#include "codegen/ir/graph.h"
#include "codegen/passes/fusion.h"

namespace tccd::codegen {

// Moves such casts in place and completes the partition again; returns whether any moved.
absl::StatusOr<bool> MoveWideningCastsToReaders(const ir::Graph& graph, Partition& partition);

}  // namespace tccd::codegen

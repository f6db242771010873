// Row kernels that write a zero-padded layout themselves (CUDA target).
//
// PadMatmulOperands (pad_matmul_operands.h) gives big 16-bit matmuls with an odd K a zero-padded
// copy of their operands: P = constant_pad_nd(x, [0, d], 0), x [M, K] -> P [M, K + d]. When x is
// made by a row kernel (BERT's and GPT-2's logits gradient: the log_softmax backward with the
// nll one-hot fused) that copy costs a pass over x and, worse, x and P are live together
// (477 MiB each for BERT at batch 16). Two steps remove both:
//
//  * ReadThroughZeroPads (graph pass "read-through-zero-pads", before the partition): every
//    other reader of x (the bias gradient's column sum) reads slice(P, -1, 0, K) instead, a
//    strided view of the padded buffer, so the pad is x's only reader. The same values: the
//    first K columns of P are x. (It also reads identity reshape chains at their base: a pad's
//    operand, and in the forward the contiguous copy of a padded product's columns, the logits,
//    which the loss row kernel then takes as its prologue: it reads the padded rows and writes
//    the copy, which stays because the logits leave the graph, returned or saved.)
//  * AbsorbZeroTailPads (after the row-reduction regrouping): a pad that is then x's only
//    reader, alone in its group, with x an element-level output of a row-reduction group whose
//    row is the innermost dim, joins that group: the kernel stores x's rows into P at P's row
//    stride and writes the d elements after each row as zeros (PointwiseKernel::
//    output_zero_tail). x is never written; the pad step is gone.
//
// Bit-identical to the pad: the same values land in the same places. The CPU target runs
// neither step (PadMatmulOperands is CUDA-only, so no such pads exist there).
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "codegen/ir/graph.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/pass.h"

namespace tccd::codegen {

// d when `node` is constant_pad_nd(x, [0, d], 0) (or [0, d, 0, 0, ...]) with d > 0 that pads only
// the end of x's innermost dim with zeros into a contiguous result of x's dtype; else 0.
int64_t ZeroTailPadWidth(const ir::Graph& graph, const ir::Node& node);

class ReadThroughZeroPads : public GraphPass {
 public:
  std::string_view name() const override { return "read-through-zero-pads"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

// Regroups `partition` as above; returns whether a pad was absorbed. The kernel builder turns an
// absorbed pad into its group's zero-tail output (reduction_kernel_builder.cc).
absl::StatusOr<bool> AbsorbZeroTailPads(const ir::Graph& graph, Partition& partition);

}  // namespace tccd::codegen

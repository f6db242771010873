// Step order for peak memory: inside every run of steps that may move (kernel launches, library
// calls and views, all pure and free of RNG state: Philox kernels take their seed and offset as
// operands), a list scheduler picks the next step among the ready ones by the bytes it lets die
// minus the bytes it allocates (the earliest step of the current order when every ready step
// would add bytes: allocating early only lengthens lifetimes), so a big intermediate dies as
// soon as its last reader can run instead of where the graph's topological order happened to
// put that reader.
//
// BERT's loss backward is the case it was written for: the logits gradient g is read by its
// zero-padding copy gp (for the matmuls) and by the bias-gradient reduction, which the graph
// order puts after both matmuls, so g (477 MiB at 16 x 512 tokens) stays live across them:
//
//   %g  = kernel(...)                 %g  = kernel(...)
//   %gp = kernel(%g)       (pad)      %db = kernel(%g)        (bias gradient: allocates
//   %wp = kernel(%w)       (pad)  ->  %gp = kernel(%g)         nothing the run frees; then
//   %dx = library gemm(%gp, %wp)      %wp = kernel(%w)         the pad frees g)
//   %db = kernel(%g)                  %dx = library gemm(%gp, %wp)
//
// The pad step itself still holds g and gp together (477 MiB each there): only a producer that
// writes the padded layout itself removes that pair. What the order saves is what was live
// beside the pair: here the padded decoder weight (45 MiB at BERT's 30522 x 768).
//
// What moves and what does not:
//  * every other step (extern ATen ops, segments, aliases, and kernels that write into a graph
//    input's buffer: mutations_into_producers.h) is a barrier: nothing moves across
//    it, so side effects, in-place ops, RNG draws and the runs the segment builder forms stay as
//    they were (a run of movable steps is exactly what one segment may take);
//  * a step moves only after the steps defining what it reads (values are SSA; a view's readers
//    depend on the view step);
//  * a view allocates nothing and frees nothing: its base's bytes die with the view's readers.
// Bytes are a value's extent (views share their base's). Values a run did not define stay live
// through it (inside a segment the client holds them for the whole call), and values read after
// the run or returned by the schedule never die in it, so neither counts as freed.
// The new order of a run is kept only when it lowers the run's peak of live bytes (each value
// live from its defining step to its last reader, inclusive, as workspace_packing.h packs
// them); otherwise the run keeps its order, so schedules with nothing to gain are unchanged.
// Ties go to the earlier step of the current order, so the result is deterministic.
//
// Drops the schedule's release steps when it moves anything: run ReleaseAfterLastUse after it
// (the pipeline does, after all schedule passes). Cost: O(n^2) per run of n steps.
#pragma once

#include "codegen/schedule/schedule_pass.h"

namespace tccd::schedule {

class OrderStepsForMemory : public SchedulePass {
 public:
  // TCCD_DISABLE_PASSES=memory-order keeps the graph's topological step order.
  std::string_view name() const override { return "memory-order"; }
  absl::StatusOr<bool> Run(Schedule& schedule) override;
};

}  // namespace tccd::schedule

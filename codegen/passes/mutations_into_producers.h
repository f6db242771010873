// MutationsIntoProducers: a graph input's kept mutation (AOTAutograd's
// keep_inference_input_mutations: `copy_(input, value)`, batch norm's running statistics and
// num_batches_tracked) is written by the kernel that computes `value`, into the input's buffer,
// and the copy_ step disappears.
//
//   %7 = kernel(%2, %5) ... kernels=[{name="tccd_k3", ...}]        (%7 = %2 * 0.9 + %5 * 0.1)
//   _ = extern aten::copy_.default(%2, %7)
// becomes
//   %7 = kernel(%2, %5) ... kernels=[{name="tccd_k3", ...}] into=[2]
//
// The copied value may also be a view over the same bytes of the kernel's output (batch norm's
// decomposition computes the running statistics as [C, 1, 1] and views them as [C]): the
// output is written into the input (schedule::CanWriteInto) and the views go with the copy.
//
// The kernel's output %7 is then not allocated: the runtimes bind it to the input's buffer
// (tccd.v1.Step.write_into), so every later reader of %7 reads the new value there, as readers
// of the input after the copy_ did. ResNet-50's forward had 159 such copy_ steps per call
// (1.28 ms of host time on the H200, README "Host time").
//
// Legal only where nobody can tell the difference:
//  * across steps: the input is a graph input of the value's exact layout, copied into once,
//    and no step strictly between the producer and the copy_ reads it (or a view of it): those
//    saw the old value; steps after the copy_ saw the new one before and still do;
//  * inside the kernel (the producer usually reads the input: running_mean * 0.9 + ..., or a
//    view of it at the same offset, as batch norm's [C, 1, 1]): every operand that is the
//    input or such a view has the output's iteration-space strides (a point reads the input
//    where it writes the output), the input is not a gather operand, every store that
//    depends on a load of the input is the one store to that output, every such load comes
//    before it in the body, and the output has no zero tail. A point's thread then reads the
//    old value before it overwrites it, and no other store depends on it. (Row and column
//    kernels store a row-level value from one thread, the one that loaded it; see
//    cuda_row_emitter.cc and cuda_column_emitter.cc.)
// Only kernel launches are producers here: the segment builder runs later and keeps a written
// value a segment output (segment_builder.cc). Extern producers are graph rewrites
// (batch_norm_stats_in_place.h).
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "codegen/kernel/pointwise_kernel.h"
#include "codegen/schedule/schedule_pass.h"

namespace tccd::codegen {

class MutationsIntoProducers : public schedule::SchedulePass {
 public:
  // `kernels`: the graph's kernels, found by their KernelInfo name; outlives the pass.
  explicit MutationsIntoProducers(const std::vector<PointwiseKernel>& kernels);
  // TCCD_DISABLE_PASSES=mutations-into-producers keeps the copy_ steps.
  std::string_view name() const override { return "mutations-into-producers"; }
  absl::StatusOr<bool> Run(schedule::Schedule& schedule) override;

 private:
  absl::flat_hash_map<std::string, const PointwiseKernel*> by_name_;
};

// The kernel-level condition above: may output `output` of `kernel` be written where input
// operand `input` is read, given the launch's iteration-space strides ([operands x rank],
// inputs then outputs)? Exposed for tests.
bool CanWriteOutputOverInput(const PointwiseKernel& kernel, const std::vector<int64_t>& strides,
                             int input, int output);

// Values that share value `k`'s memory: k, its views (extern view ops and reshapes, aliases) and
// what copy_ returns (self), transitively, in schedule order.
absl::flat_hash_set<schedule::ValueId> AliasesOf(const schedule::Schedule& schedule,
                                                 schedule::ValueId k);

}  // namespace tccd::codegen

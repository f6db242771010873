// DyingInputsIntoOutputs: a pointwise CUDA kernel writes an output into the buffer of an input
// that dies at it (its last reader), instead of a fresh allocation, where the two have the same
// layout and the kernel reads each element of the input only where it writes the output's.
//
//   %5 = kernel(...)  ...  (f32 [30522, 768]: BERT's embedding gradient, a scatter)
//   %6 = kernel(%4, %5) ... kernels=[{name="tccd_k7", kind="cuda_pointwise", ...}]
//                           (%6 = %4 (the tied decoder's gradient, cast) + %5; last read of %5)
// becomes
//   %6 = kernel(%4, %5) ... into=[5]
//
// The runtimes bind %6 to %5's storage (tccd.v1.Step.write_into, as for kept input mutations,
// mutations_into_producers.h, whose kernel-level condition this pass shares), so the step holds
// one such buffer where it held two: BERT's tied-embedding gradient sum held the embedding
// gradient, the decoder's and the f32 sum at once, the backward's peak (census: 335.6 MiB of
// plan allocations at batch 2, 89.4 MiB of it the sum's new buffer). Inductor reuses a dying
// input's buffer the same way (its "in_out_ptr" kernels).
//
// Legal only where nobody can tell the difference:
//  * the input is a value the plan allocated itself, a whole output of a kernel step or of an
//    extern op that returns tensors of its own (side-effect free in the op table, not a view
//    or reshape, not a factory: a convolution, a pool, ...), not a graph input, which is the
//    caller's; not a view; not itself written into another buffer; with exactly the output's
//    type and layout, at least kMinBytes. The runtimes check the extern output's layout when
//    they bind (a different one: a fresh output, copied into the input after the step);
//  * no later step reads it or a view of it, and it is not a plan output;
//  * the kernel is a plain CUDA pointwise kernel (KernelInfo kind "cuda_pointwise" or
//    "cuda_pointwise_reordered": no reduction, gather, scatter or tile), and
//    CanWriteOutputOverInput holds for every operand that is the input or a view of it: a point's
//    thread reads the old value before it writes the new one there, and nothing else reads it.
// Extern outputs: ResNet-50 inference at batch 64 held a bottleneck's two [64, 256, 56, 56]
// convolution outputs (conv3 and the downsample, 98 MiB each in bf16) and the BN + add + ReLU
// kernel's new output at once, its static peak (census 309.6 MiB of plan allocations, GPU 445
// MiB vs Inductor's 388); every conv -> BN (-> ReLU) kernel held two such buffers where
// Inductor's in-place epilogue holds one.
// Runs before the segment builder, which keeps a written value a segment output and drops the
// write where the input is computed inside the same segment (its workspace packs those).
// CPU plans (branch cpu13): the same rule for a CPU pointwise loop (abi "tccd-cpu-1", kind
// "cpu_pointwise_loop"), from kCpuMinBytes up. There the gain is not the peak but the cache:
// a ReLU after a GEMM writes over the GEMM output it just read (hot in L2) instead of a fresh
// buffer whose lines must be fetched before they are written (eager's relu after an addmm on a
// cache-streaming loop: 13.7-14.1 us into a new tensor, 8.8-9.4 in place; the MLP's two ReLU
// and two ReLU-backward kernels). The loop reads a point's input before it stores the point's
// output (CanWriteOutputOverInput: the store depends on the load), so the operands' noalias
// scopes (llvm_emitter.cc) cannot move the store above the load.
// TCCD_DISABLE_PASSES=dying-inputs-into-outputs turns it off; =dying-extern-outputs only for
// the extern ops' outputs, =dying-reordered-kernels only for reordered kernels (both: the pass
// as before them), =dying-cpu-kernels only for CPU kernels (the CPU plans as before cpu13).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "codegen/kernel/pointwise_kernel.h"
#include "codegen/schedule/schedule_pass.h"

namespace tccd::codegen {

class DyingInputsIntoOutputs : public schedule::SchedulePass {
 public:
  // Smaller buffers are left alone: the caching allocator reuses them anyway, and each write
  // into another value's buffer is a plan fact the runtimes must check.
  static constexpr int64_t kMinBytes = int64_t{1} << 20;
  // CPU: a buffer under an L1 data cache (32 KiB) is hot wherever the allocator puts it; from
  // there up a fresh one may not be (the MLP's [64, 512] f32 activations: 128 KiB).
  static constexpr int64_t kCpuMinBytes = int64_t{32} << 10;

  struct Options {
    // Also write over the fresh outputs of extern ops (a convolution's).
    // Default: true (TCCD_DISABLE_PASSES=dying-extern-outputs: false).
    bool extern_outputs = true;
    // Also let kernels of KernelInfo kind "cuda_pointwise_reordered" write (loop_order.h: a
    // channels-last batch norm + ReLU over a convolution's output).
    // Default: true (TCCD_DISABLE_PASSES=dying-reordered-kernels: false).
    bool reordered_kernels = true;
    // Also let CPU pointwise loops (abi "tccd-cpu-1") write, from kCpuMinBytes.
    // Default: true (TCCD_DISABLE_PASSES=dying-cpu-kernels: false).
    bool cpu_kernels = true;
  };

  // `kernels`: the graph's kernels, found by their KernelInfo name; outlives the pass.
  explicit DyingInputsIntoOutputs(const std::vector<PointwiseKernel>& kernels)
      : DyingInputsIntoOutputs(kernels, Options{}) {}
  DyingInputsIntoOutputs(const std::vector<PointwiseKernel>& kernels, Options options);
  std::string_view name() const override { return "dying-inputs-into-outputs"; }
  absl::StatusOr<bool> Run(schedule::Schedule& schedule) override;

 private:
  absl::flat_hash_map<std::string, const PointwiseKernel*> by_name_;
  Options options_;
};

}  // namespace tccd::codegen

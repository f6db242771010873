// Segments: one native call per run of native work in a CUDA schedule.
//
// The schedule builder emits one step per fused kernel and one extern op per other op, so a
// transformer block costs the client dozens of Python calls per run, and on a fast GPU those
// calls, not the kernels, set the step time. This pass rewrites a CUDA schedule so that every
// maximal run of consecutive steps that the host library can execute by itself becomes one
// segment step (a NativeSegment on the wire, ABI "tccd-cuda-segment-1"):
//  * fused kernels (kernel steps, ABI tccd-cuda-1);
//  * matmuls: cuBLASLt library calls (MatchGemms, match_gemms.h, made them from extern ops);
//  * views (view, _unsafe_view, t, transpose, permute, expand, (un)squeeze, slice, select,
//    split, unbind, alias, as_strided, detach): no work at all, only another byte offset into
//    their base's buffer, since every value's layout is static.
// Inside a segment, values nobody outside reads live in one workspace, packed by lifetime
// (workspace_packing.h: dead values' bytes are reused);
// values read later become the segment's outputs (allocated by the client as before); a view
// read later becomes an alias step of the segment output it views (one as_strided call,
// whatever the chain of views was), or, when it views a value from before the segment, is
// re-emitted after the segment as the extern ops it was.
// Run MatchGemms and SinkViewsToFirstReader before it (so that a view taken early, right after
// the op producing its base, joins its reader's run) and ReleaseAfterLastUse after it: this
// pass drops the schedule's release steps, which would end every run.
//
// A segment holds more memory than its steps would one by one: its outputs are allocated before
// the call, the values from before it that die inside are released after it, and its workspace
// lives for the whole call. Where that would raise the schedule's peak (each value held from its
// step to its last reader, the caller's inputs not counted unless released) by more than
// kSegmentMemorySlack and 1/32 of the peak, the run is cut (greedily, each segment as long as it
// stays within): BERT's
// last segment, the tail of its last layer and the LM head, held the decoder weight's bf16 cast,
// its zero-padded copy and the layer's activations in its workspace beside the [tokens, 30528]
// logits it returns (tests/tools/plan_memory.py shows the peaks). Segments away from the peak
// stay whole: a cut costs a call.
// The caller's inputs count only where the caller released them to the plan (`released_inputs`:
// a backward's saved activations, which the runtime frees at their last reader), and a segment
// holds those to its end: without them BERT's backward was one segment holding every saved
// activation (324.5 MiB at the zoo's train-small batch) to its end beside all the gradients.
// A run that is a single fused kernel stays a NativeCall (already one call, no workspace).
// Anything else (convolutions, attention, reductions not lowered yet, symbolic shapes) stays a
// step of its own and ends the run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/cuda_host/host_program.h"
#include "codegen/schedule/schedule_pass.h"

namespace tccd::codegen {

inline constexpr char kCudaSegmentAbi[] = "tccd-cuda-segment-1";

// How far a segment may raise the schedule's stepwise peak (see above), besides 1/32 of it.
inline constexpr int64_t kSegmentMemorySlack = int64_t{4} << 20;

// `kernel_symbols[i]` is the kernel step symbol of kernel i of the CudaModule; `artifact` the
// host library's name; `released_inputs` the schedule inputs the caller gives up (freed at their
// last reader; BackendOptions::released_inputs); `gemm_workspace_bytes` the cuBLASLt scratch a
// segment with matmuls reserves (kGemmWorkspaceBytes unless TCCD_GEMM_WORKSPACE_MB). program()
// holds the gemms and segments to emit into that library (empty when nothing was segmented).
class SegmentBuilder : public schedule::SchedulePass {
 public:
  SegmentBuilder(std::vector<std::string> kernel_symbols, std::string artifact,
                 std::vector<int> released_inputs = {},
                 int64_t gemm_workspace_bytes = kGemmWorkspaceBytes)
      : kernel_symbols_(std::move(kernel_symbols)),
        artifact_(std::move(artifact)),
        released_inputs_(std::move(released_inputs)),
        gemm_workspace_bytes_(gemm_workspace_bytes) {}
  // TCCD_DISABLE_PASSES=segments keeps a CUDA plan at one step per kernel and ATen op.
  std::string_view name() const override { return "segments"; }
  absl::StatusOr<bool> Run(schedule::Schedule& schedule) override;
  const HostProgram& program() const { return program_; }

 private:
  std::vector<std::string> kernel_symbols_;
  std::string artifact_;
  std::vector<int> released_inputs_;
  int64_t gemm_workspace_bytes_;
  HostProgram program_;
};

}  // namespace tccd::codegen

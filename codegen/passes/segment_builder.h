// Segments: one native call per run of native work in a CUDA plan.
//
// The plan builder emits one step per fused kernel and one ExternCall per other op, so a
// transformer block costs the client dozens of Python calls per run, and on a fast GPU those
// calls, not the kernels, set the step time. This pass rewrites a CUDA plan so that every
// maximal run of consecutive steps that the host library can execute by itself becomes one
// NativeSegment step (ABI "tccd-cuda-segment-1"):
//  * fused kernels (NativeCall, ABI tccd-cuda-1);
//  * matmuls: ExternCalls of aten::mm / addmm (1-D bias, beta 1: cuBLASLt's bias epilogue; its
//    RELU_BIAS epilogue measured slower than bias + a relu kernel on the H100) / bmm whose operands are f32/f16/bf16 matrices with a unit stride in one dim and a
//    row-major contiguous result, lowered to cuBLASLt (GemmSpec);
//  * views (view, _unsafe_view, t, transpose, permute, expand, (un)squeeze, slice, select,
//    split, unbind, alias, as_strided, detach): no work at all, only another byte offset into
//    their base's buffer, since every value's layout is static.
// Inside a segment, values nobody outside reads live in one workspace, packed by lifetime;
// values read later become the segment's outputs (allocated by the client as before); a view
// read later becomes an Alias step of the segment output it views (one as_strided call,
// whatever the chain of views was), or, when it views a value from before the segment, is
// re-emitted after the segment as the ExternCalls it was.
// Before that, every view ExternCall moves to just before its first reader (views are pure), so
// that a view taken early (right after the op producing its base) joins its reader's run.
// Release lists are recomputed for the whole plan.
//
// A run that is a single fused kernel stays a NativeCall (already one call, no workspace).
// Anything else (convolutions, attention, reductions not lowered yet, symbolic shapes) stays a
// step of its own and ends the run.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/cuda_host/host_program.h"
#include "tccd/v1/tccd.pb.h"

namespace tccd::codegen {

inline constexpr char kCudaSegmentAbi[] = "tccd-cuda-segment-1";

// Rewrites `plan` in place. `kernel_symbols[i]` is the NativeCall symbol of kernel i of the
// CudaModule; `artifact` the host library's name. Returns the gemms and segments to emit into
// that library (empty when nothing was segmented: the plan is then unchanged).
absl::StatusOr<HostProgram> BuildSegments(v1::Plan& plan, const std::vector<std::string>& kernel_symbols,
                                          const std::string& artifact);

}  // namespace tccd::codegen

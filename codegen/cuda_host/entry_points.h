// ChooseCudaEntries: which of its two entry points each CUDA kernel of a plan needs.
//
// Every CUDA kernel can have <name>_contig (vectorised; every operand dense and 16-byte
// aligned) and <name>_strided (strides passed at run time; any layout). Compiling both doubled
// NVRTC's time per kernel (README, "Cold first step: where it goes": the same kernels without
// their strided entries took 36-37% of the CPU time), and a kernel of a plan only ever runs
// with its operands' declared layouts:
//  * plan-internal buffers are allocated by the client with their declared strides (16-byte
//    aligned bases: PyTorch's allocators), views of them sit at their declared offsets;
//  * graph inputs and extern ops' outputs that arrive with other strides, or misaligned where
//    the plan declared them aligned, are copied into the declared layout before the kernel
//    (client/tccd/runtime.py, the native plan runtime; as Inductor copies misaligned inputs).
// So the declared layout of the kernel's one launch decides: dense and aligned -> kDense,
// anything else -> kStrided, by the launcher's own test (tccd_cuda_runtime.c is_contiguous /
// rows_are_contiguous). A kernel launched from several steps gets the union; a kernel no
// step launches keeps kBoth.
//
// Fixed layouts (issue 7): "anything else" was most of a channels-last conv net's batch-norm
// kernels. Their big operands are dense in the kernel's (memory-ordered, loop_order.h) dims, but
// a per-channel vector broadcast over them (strides [0, 0, 0, 1] over [N, H, W, C]) or a [C]
// statistic over a batch norm's [B, C] column split (strides [0, 1] over the kept dims) is not
// row-major, so the whole kernel took the strided entry: one element per thread with index math
// over every dim and run-time strides (column kernels: scalar loads). Since the declared layout
// is what every launch sees, the dense entry is compiled for it instead: such operands become
// fixed-layout operands (PointwiseKernel::fixed_strides) whose offsets the dense entry computes
// from the flat index with compile-time strides, moved with the same 16-byte vectors.
// TCCD_DISABLE_PASSES=fixed-layout-entries turns this off (the strided entry, as before).
//
// Index kernels (pool2, issue 7): a gather operand's stride row is its own strides, never the
// iteration space's row-major ones, so every kernel with one (ResNet-50's max pool forward and
// backward over channels-last maps) took the strided entry: run-time strides in 64-bit index
// math for every operand and window point. With one declared layout they get the dense entry
// with those strides as compile-time constants instead (the index emitter folds them, and its
// vector path takes 16 bytes of the narrowest per-lane operand: cuda_index_emitter.cc).
// TCCD_DISABLE_PASSES=index-fixed-entries keeps them on the strided entry, as before.
//
// Pure: no NVRTC, no driver.
#pragma once

#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "codegen/kernel/pointwise_kernel.h"
#include "codegen/schedule/schedule.h"

namespace tccd::codegen {

// Sets kernels[i].entries from the kernel steps of `schedule` (as built: one KernelLaunch per
// kernel, entry.symbol == kernel name). cc_major: the target's (column reductions' vector width
// depends on it). With `fixed_layouts` (default), a kernel the dense entry cannot take as
// declared, launched with one layout, gets the dense entry with fixed-layout operands where
// FixedLayoutsFor allows (kernels[i].fixed_strides); `index_fixed_layouts` (default) lets index
// kernels have them too. INTERNAL when a step's strides or operands do not match its kernel.
absl::Status ChooseCudaEntries(const schedule::Schedule& schedule, int cc_major,
                               std::vector<PointwiseKernel>& kernels, bool fixed_layouts = true,
                               bool index_fixed_layouts = true);

// The fixed_strides that let the dense entry take `kernel` launched with `strides` ([operands x
// rank]) and `aligned` (per operand) — `strides` itself — or nullopt when it cannot: a row,
// scatter or run-time-sized kernel; an index kernel whose outputs broadcast or whose other
// operands are not dense (the rest below is for loop kernels); the innermost dim the dense entry
// vectorises (all dims of a pointwise kernel, the kept dims of a column kernel) not a multiple of
// its vector; a non-dense operand whose innermost stride is not 1 (nor 0 for an input: one value
// per vector), any of whose strides is negative, or which is read as vectors (innermost stride 1)
// from a misaligned start (its pointer, or another stride not a multiple of the vector); an output
// that broadcasts. Exposed for tests.
std::optional<std::vector<int64_t>> FixedLayoutsFor(const PointwiseKernel& kernel, int cc_major,
                                                    const std::vector<int64_t>& strides,
                                                    const std::vector<bool>& aligned);

// The launcher's test for the dense entry over a declared layout: `strides` [operands x rank]
// as in tccd.v1.NativeCall.expected_strides, `aligned[o]` whether operand o's address is a
// multiple of 16 bytes. Exposed for tests.
bool DenseEntryApplies(const PointwiseKernel& kernel, int cc_major,
                       const std::vector<int64_t>& strides, const std::vector<bool>& aligned);

}  // namespace tccd::codegen

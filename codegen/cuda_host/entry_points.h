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
// Pure: no NVRTC, no driver.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "codegen/kernel/pointwise_kernel.h"
#include "codegen/schedule/schedule.h"

namespace tccd::codegen {

// Sets kernels[i].entries from the kernel steps of `schedule` (as built: one KernelLaunch per
// kernel, entry.symbol == kernel name). cc_major: the target's (column reductions' vector width
// depends on it). INTERNAL when a step's strides or operands do not match its kernel.
absl::Status ChooseCudaEntries(const schedule::Schedule& schedule, int cc_major,
                               std::vector<PointwiseKernel>& kernels);

// The launcher's test for the dense entry over a declared layout: `strides` [operands x rank]
// as in tccd.v1.NativeCall.expected_strides, `aligned[o]` whether operand o's address is a
// multiple of 16 bytes. Exposed for tests.
bool DenseEntryApplies(const PointwiseKernel& kernel, int cc_major, const std::vector<int64_t>& strides,
                       const std::vector<bool>& aligned);

}  // namespace tccd::codegen

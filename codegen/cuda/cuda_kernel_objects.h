// The CUDA backend with kernel-level content addressing: one NVRTC program per distinct kernel
// (relocatable, -rdc=true), keyed by the kernel's content (kernel_cache.h), compiled in
// parallel threads, reused from a KernelObjectCache when the daemon has it; the graph's cubin is
// then linked from the per-kernel cubins with nvJitLink (~1 ms per kernel), so the host library
// and the client still load one cubin per graph.
//
// Each kernel is compiled under a content-derived name ("tccd_kernel_<key prefix>"), so that the
// same cubin serves every graph; the CudaModule's kernels keep the graph's IR and names, and
// their launch infos point at those entries. Identical kernels within one graph compile once and
// share entries. Without nvJitLink (FAILED_PRECONDITION from LinkCubins) the graph compiles as one
// program (CompileCudaKernels), reusing nothing.
//
// Thread-safety: any number of calls at once (NVRTC programs are independent).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "codegen/cuda/cuda_backend.h"
#include "codegen/kernel/compile_progress.h"
#include "codegen/kernel/kernel_cache.h"
#include "codegen/kernel/pointwise_kernel.h"

namespace tccd::codegen {

struct CudaKernelObjectsOptions {
  // Identifies the compiler (CompilerFingerprint()) and the NVRTC version; part of every kernel
  // key. Required.
  std::string fingerprint;
  // Where known kernel cubins come from; nullptr compiles every kernel. Default: nullptr.
  KernelObjectCache* cache = nullptr;
  // Threads compiling missing kernels at once (capped by their number). Default: 1.
  int threads = 1;
  // Told the distinct kernels done (reused ones count from the start) as they finish.
  // Default: nullptr (none).
  CompileProgress* progress = nullptr;
  // Test only (TCCD_TEST_REJECT_KERNEL_OPS, pipeline.cc): kernels that fuse one of these ops get
  // an `#error` line in their source, so NVRTC rejects them. Default: none.
  std::vector<std::string> test_reject_ops;
};

struct CudaKernelObjectsResult {
  CudaModule module;  // cuda_source and ptx hold what was compiled here only
  std::vector<KernelObject>
      new_objects;  // relocatable cubins compiled here, for the caller to store
  int kernels_compiled = 0;
  int kernels_reused = 0;
};

// Errors as CompileCudaKernels. Cached cubins that fail to link are not trusted: every kernel is
// compiled afresh and linked once more. A kernel NVRTC rejects, or whose cubin alone fails to
// link (each distinct cubin is linked alone when the graph's link fails), is named in the error's
// payload (kernel_failure.h: every graph kernel of that content), so that the caller can run
// its ops some other way.
absl::StatusOr<CudaKernelObjectsResult> CompileCudaKernelObjects(
    absl::Span<const PointwiseKernel> kernels, const CudaTarget& target,
    const CudaKernelObjectsOptions& options);

// The order in which the missing kernels start compiling, given their CUDA sources' lengths
// (indices into them). `longest_first` (the default; TCCD_LONGEST_KERNELS_FIRST=0 turns it off):
// the longest source first, since its length is the best cheap estimate of NVRTC's time (0.75
// correlated over GPT-2's forward kernels, the row reductions the longest and slowest), so that
// with more kernels than threads (81 distinct in ConvNeXt's backward, 16 cores on an H100 host)
// the slowest kernel does not start last and set the graph's wall time alone (longest
// processing time first). Ties, and every kernel without `longest_first`, in first-use order.
// The output does not depend on it: each result lands in its kernel's slot.
std::vector<size_t> KernelCompileOrder(const std::vector<size_t>& source_lengths,
                                       bool longest_first);

}  // namespace tccd::codegen

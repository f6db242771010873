// The CPU backend with kernel-level content addressing: one object file per distinct kernel,
// keyed by the kernel's content (kernel_cache.h), compiled in parallel threads, reused from a
// KernelObjectCache when the daemon has it; the graph's .so is then linked from the objects
// with LLD (the link stays per graph and takes milliseconds).
//
// Each object defines its kernel under a content-derived symbol ("tccd_kernel_<key prefix>"),
// so that the same bytes serve every graph; the link exports each kernel's graph-local name as
// an alias of it. Identical kernels within one graph compile once and share one object.
//
// Thread-safety: as CompileCpuKernels (each thread owns its LLVMContext and TargetMachine).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "codegen/cpu/cpu_backend.h"
#include "codegen/kernel/compile_progress.h"
#include "codegen/kernel/kernel_cache.h"
#include "codegen/kernel/pointwise_kernel.h"

namespace tccd::codegen {

struct CpuKernelObjectsOptions {
  // Identifies the compiler (CompilerFingerprint()); part of every kernel key. Required.
  std::string fingerprint;
  // Where known kernel objects come from; nullptr compiles every kernel. Default: nullptr.
  KernelObjectCache* cache = nullptr;
  // Threads compiling missing kernels at once (capped by their number). Default: 1.
  int threads = 1;
  // Told the distinct kernels done (reused ones count from the start) as they finish.
  // Default: nullptr (none).
  CompileProgress* progress = nullptr;
};

struct CpuKernelObjectsResult {
  CpuModule module;                       // llvm_ir holds the IR of the kernels compiled here only
  std::vector<KernelObject> new_objects;  // compiled here, for the caller to store
  int kernels_compiled = 0;               // distinct kernels compiled here
  int kernels_reused = 0;                 // distinct kernels whose object came from the cache
};

// Errors as CompileCpuKernels. A cached object that fails to link is not trusted: the kernels
// are compiled afresh and the link is retried once (a cache read error never fails a compile).
absl::StatusOr<CpuKernelObjectsResult> CompileCpuKernelObjects(
    absl::Span<const PointwiseKernel> kernels, const CpuTarget& target,
    const CpuKernelObjectsOptions& options);

}  // namespace tccd::codegen

// What a compile produces (CompileOutput: the plan, its artifacts, kernel-cache results): filled
// by the pipeline (pipeline.h) and by the backend it drives (backend.h), which sits below the
// pipeline and so cannot include pipeline.h.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel/kernel_cache.h"
#include "tccd/v1/tccd.pb.h"

namespace tccd::codegen {

struct ArtifactBytes {
  std::string name;
  v1::ArtifactKind kind = v1::ARTIFACT_UNSPECIFIED;
  std::string bytes;
};

struct CompileOutput {
  v1::Plan plan;  // NativeCall.artifact names refer to `artifacts[].name`
  std::vector<ArtifactBytes> artifacts;
  int num_fused_kernels = 0;
  int num_extern_steps = 0;
  // Kernel-level content addressing (kernel_cache.h): objects of the kernels compiled here, for
  // the daemon to store under their keys, and how many distinct kernels were compiled or reused.
  std::vector<KernelObject> new_kernel_objects;
  int kernels_compiled = 0;
  int kernels_reused = 0;
};

}  // namespace tccd::codegen

// CpuPipelineBackend (see cpu_pipeline.h).
#include "codegen/cpu/cpu_pipeline.h"

#include "codegen/cpu/cpu_kernel_objects.h"
#include "base/status_macros.h"

namespace tccd::codegen {
namespace {

class CpuPipelineBackend : public Backend {
 public:
  CpuPipelineBackend(const CpuTarget& target, BackendOptions options)
      : target_(target), options_(std::move(options)) {}

  const NativeTarget& native() const override { return native_; }
  // The CPU keeps ATen's kernels for layer norms, batch norms and matmuls.
  void AddGraphPasses(PassRunner&) override {}
  // Reductions and norms stay extern steps on the CPU.
  absl::Status RegroupPartition(const ir::Graph&, const FusionOptions&, Partition&) override {
    return absl::OkStatus();
  }

  absl::Status CompileKernels(const std::vector<PointwiseKernel>& kernels,
                              CompileOutput& out) override {
    if (kernels.empty() || !options_.machine_code) return absl::OkStatus();
    // One object per distinct kernel, keyed by its content: reused ones are only linked.
    ASSIGN_OR_RETURN(CpuKernelObjectsResult objects,
                     CompileCpuKernelObjects(kernels, target_,
                                             {.fingerprint = options_.fingerprint,
                                              .cache = options_.kernel_cache,
                                              .threads = options_.threads,
                                              .progress = options_.progress}));
    options_.dump("kernels.ll", objects.module.llvm_ir);
    out.artifacts.push_back(
        {native_.artifact, v1::CPU_SHARED_OBJECT, std::move(objects.module.shared_object)});
    out.new_kernel_objects = std::move(objects.new_objects);
    out.kernels_compiled = objects.kernels_compiled;
    out.kernels_reused = objects.kernels_reused;
    return absl::OkStatus();
  }

  absl::Status RunSchedulePasses(PassRunner&, schedule::Schedule&) override {
    return absl::OkStatus();
  }
  absl::Status Finish(const std::vector<PointwiseKernel>&, CompileOutput&) override {
    return absl::OkStatus();
  }

 private:
  const NativeTarget native_{
      .artifact = "kernels.so", .abi = "tccd-cpu-1", .kernel_kind = "cpu_pointwise_loop"};
  CpuTarget target_;
  BackendOptions options_;
};

}  // namespace

std::unique_ptr<Backend> MakeCpuBackend(const CpuTarget& target, BackendOptions options) {
  return std::make_unique<CpuPipelineBackend>(target, std::move(options));
}

}  // namespace tccd::codegen

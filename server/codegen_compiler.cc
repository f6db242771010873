// NewCodegenCompiler: the Compiler backed by codegen/ (the only file in server/
// that calls it).
#include <memory>

#include "base/status_macros.h"
#include "codegen/cuda/cuda_backend.h"
#include "codegen/pipeline.h"
#include "server/compiler.h"

namespace tccd::server {
namespace {

// CompileOptions.extra[kPlanOnlyOption] = "1": lower only, no machine code (the client's
// TCCD_EARLY_SAVED_LAYOUT, backend.py).
constexpr char kPlanOnlyOption[] = "tccd_plan_only";

class CodegenCompiler final : public Compiler {
 public:
  std::string Fingerprint() const override { return codegen::CompilerFingerprint(); }
  absl::StatusOr<codegen::Prepared> Prepare(const codegen::CompileInput& input) override {
    return codegen::Prepare(input);
  }
  absl::StatusOr<codegen::CompileOutput> Compile(const codegen::Prepared& prepared) override {
    return codegen::Compile(prepared);
  }
  absl::StatusOr<codegen::CompileOutput> Compile(const codegen::Prepared& prepared,
                                                 const v1::CompileRequest& request,
                                                 codegen::KernelObjectCache* kernels,
                                                 codegen::CompileProgress* progress) override {
    if (PlanOnly(request)) {
      // The plan without machine code (graph passes to schedule: tens of milliseconds where the
      // kernels take seconds): a client reads the strides the plan gives a forward's saved
      // tensors from it and starts the backward's compile beside the forward's. The option is in
      // the key, so this artifact-less manifest is never another request's answer.
      ASSIGN_OR_RETURN(codegen::Lowered lowered, codegen::Lower(prepared));
      codegen::CompileOutput out;
      out.plan = std::move(lowered.plan);
      return out;
    }
    return codegen::Compile(prepared, kernels, progress);
  }

 private:
  static bool PlanOnly(const v1::CompileRequest& request) {
    auto it = request.options().extra().find(kPlanOnlyOption);
    return it != request.options().extra().end() && it->second == "1";
  }
};

}  // namespace

std::unique_ptr<Compiler> NewCodegenCompiler() { return std::make_unique<CodegenCompiler>(); }

void AllowForkedCodegen() { codegen::AllowNvrtcChildProcesses(); }

}  // namespace tccd::server

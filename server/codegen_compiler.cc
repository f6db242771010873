// NewCodegenCompiler: the Compiler backed by codegen/ (the only file in server/
// that calls it).
#include <memory>

#include "codegen/pipeline.h"
#include "server/compiler.h"

namespace tccd::server {
namespace {

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
                                                 const v1::CompileRequest&,
                                                 codegen::KernelObjectCache* kernels,
                                                 codegen::CompileProgress* progress) override {
    return codegen::Compile(prepared, kernels, progress);
  }
};

}  // namespace

std::unique_ptr<Compiler> NewCodegenCompiler() { return std::make_unique<CodegenCompiler>(); }

}  // namespace tccd::server

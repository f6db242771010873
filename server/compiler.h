// Compiler: the seam between the server and codegen/.
//
// CompileService calls codegen through this interface so that its tests can
// substitute a fake compiler (deterministic, instant, countable) for the real
// LLVM pipeline. NewCodegenCompiler() is the production implementation:
// codegen::Prepare and codegen::Compile, unchanged.
//
// Thread-safety: implementations must allow concurrent calls from many threads.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "codegen/pipeline.h"

namespace tccd::server {

class Compiler {
 public:
  virtual ~Compiler() = default;
  // Parses and validates; cheap compared with Compile. See codegen::Prepare.
  virtual absl::StatusOr<codegen::Prepared> Prepare(
      const codegen::CompileInput& input) = 0;
  // Lowers and generates code; may take seconds. See codegen::Compile.
  virtual absl::StatusOr<codegen::CompileOutput> Compile(
      const codegen::Prepared& prepared) = 0;
  // Identifies what this compiler produces; enters every compile key, so a
  // different compiler build never serves another's artifacts. See
  // codegen::CompilerFingerprint.
  virtual std::string Fingerprint() const = 0;
};

// codegen::Prepare / codegen::Compile.
std::unique_ptr<Compiler> NewCodegenCompiler();

}  // namespace tccd::server

// Compiler: the seam between the server and codegen/.
//
// CompileService calls codegen through this interface so that its tests can
// substitute a fake compiler (deterministic, instant, countable) for the real
// LLVM pipeline. NewCodegenCompiler() is the production implementation:
// codegen::Prepare and codegen::Compile, unchanged.
//
// Thread-safety: implementations must allow concurrent calls from many threads.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "codegen/pipeline.h"
#include "server/request_checks.h"  // CompileInputOf
#include "tccd/v1/tccd.pb.h"

namespace tccd::server {

class Compiler {
 public:
  virtual ~Compiler() = default;
  // Parses and validates; cheap compared with Compile. See codegen::Prepare.
  virtual absl::StatusOr<codegen::Prepared> Prepare(const codegen::CompileInput& input) = 0;
  // Lowers and generates code; may take seconds. See codegen::Compile.
  virtual absl::StatusOr<codegen::CompileOutput> Compile(const codegen::Prepared& prepared) = 0;
  // The same, for compilers that need the request itself (the worker pool sends it to another
  // process). `request` is the one `prepared` came from; `kernels` (may be null) has the kernel
  // objects the daemon stores (codegen/kernel/kernel_cache.h); `progress` (may be null) is told
  // the graph's kernels done as they finish. Default: Compile(prepared).
  virtual absl::StatusOr<codegen::CompileOutput> Compile(const codegen::Prepared& prepared,
                                                         const v1::CompileRequest& request,
                                                         codegen::KernelObjectCache* kernels,
                                                         codegen::CompileProgress* progress) {
    (void)request;
    (void)kernels;
    (void)progress;
    return Compile(prepared);
  }
  // Counters of this compiler for GetStats (the worker pool's). Default: none.
  virtual void AddStats(std::map<std::string, int64_t>* counters) const { (void)counters; }
  // Identifies what this compiler produces; enters every compile key, so a
  // different compiler build never serves another's artifacts. See
  // codegen::CompilerFingerprint.
  virtual std::string Fingerprint() const = 0;
};

// codegen::Prepare / codegen::Compile, in this process.
std::unique_ptr<Compiler> NewCodegenCompiler();

// For a compile worker process (compile_worker.cc), once at its start: codegen may fork child
// processes for a graph's NVRTC compiles (codegen/cuda/nvrtc_processes.h; TCCD_NVRTC_PROCESSES=0
// keeps threads). Never in the daemon's own process: its gRPC threads make a fork unsafe.
void AllowForkedCodegen();

}  // namespace tccd::server

// A code generation backend (CPU, CUDA): what the target-independent pipeline (pipeline.cc)
// asks of one. A backend owns its ABI strings and artifact names (native()), the graph and
// schedule passes only it runs, how its kernels become machine code and which artifacts it
// ships. One Backend object serves one compile; pipeline.cc calls its methods in the order they
// are declared here, and a backend may keep state from one call to the next (the CUDA backend
// keeps its module between CompileKernels and Finish). Not thread-safe; compiles on other
// threads make their own.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "codegen/compile_output.h"
#include "codegen/kernel/kernel_cache.h"
#include "codegen/kernel/pointwise_kernel.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/pass_runner.h"
#include "codegen/passes/plan_builder.h"
#include "codegen/kernel/compile_progress.h"
#include "codegen/schedule/schedule.h"

namespace tccd::codegen {

struct BackendOptions {
  // Kernels are fused (TCCD_DISABLE_FUSION unset). Default: true.
  bool fusion = true;
  // TCCD_CUDA_ONE_PROGRAM=1 (CUDA). Default: false.
  bool cuda_one_program = false;
  // Objects of kernels compiled before (nullptr: compile every kernel). Default: nullptr.
  KernelObjectCache* kernel_cache = nullptr;
  // Part of every kernel object key (CompilerFingerprint()). Default: "".
  std::string fingerprint;
  // Threads compiling one graph's kernels (KernelCompileThreads()). Default: 1.
  int threads = 1;
  // Told about every kernel compiled or reused (a long compile's progress). Default: none.
  CompileProgress* progress = nullptr;
  // False: lower only (codegen::Lower): kernels are named for the schedule but not compiled, and
  // no artifacts are built. Default: true.
  bool machine_code = true;
  // Graph outputs whose strides the compiler may choose (CompileInput.free_layout_outputs: a
  // training forward's saved activations, whose strides the client reports to AOTAutograd).
  // Default: none (every output keeps the strides the graph declares).
  std::vector<int> free_layout_outputs;
  // Graph inputs the caller gives up to the plan, freed at their last reader
  // (CompileInput.released_inputs): counted by the CUDA segment builder's memory model.
  // Default: none (every input is the caller's for the whole call).
  std::vector<int> released_inputs;
  // Test only (TCCD_TEST_REJECT_KERNEL_OPS): CUDA kernels fusing one of these ops fail to
  // compile (cuda_kernel_objects.h). Default: none.
  std::vector<std::string> test_reject_kernel_ops;
  // CUDA: kernels whose declared layout the dense entry cannot take as it is get it with
  // fixed-layout operands where it can (entry_points.h). False: TCCD_DISABLE_PASSES=
  // fixed-layout-entries (the strided entry, as before; for A/B measurements). Default: true.
  bool fixed_layout_entries = true;
  // CUDA: index kernels (gathers) with one declared layout get that dense entry too, their
  // gather operands' strides compile-time constants (entry_points.h). False:
  // TCCD_DISABLE_PASSES=index-fixed-entries (the strided entry, as before). Default: true.
  bool index_fixed_entries = true;
  // CUDA: kernels left on the strided entry whose inputs and outputs are contiguous along
  // different dims become tiled kernels where it pays (cuda_host/tile_kernels.h). The daemon
  // clears it with TCCD_TILE_KERNELS=0 or TCCD_DISABLE_PASSES=tile-kernels. Default: true.
  bool tile_kernels = true;
  // CUDA: cuBLASLt algorithms each matmul times at load to keep the fastest (GemmSpec::tune,
  // cuda_host/runtime/tccd_cuda_tune.h); 0 takes the heuristic's first, as before. The daemon
  // sets it from TCCD_GEMM_AUTOTUNE (default 0: off) and to 0 for deterministic requests (a
  // timed choice is shared through the daemon, but not reproducible from scratch). Default: 0.
  int gemm_autotune = 0;
  // CUDA: the cuBLASLt scratch a segment with static matmuls reserves and their algorithms may
  // use (kGemmWorkspaceBytes: 32 MiB, cuBLAS's recommendation for Hopper; TCCD_GEMM_WORKSPACE_MB
  // sets it, 8 the size before the thirteenth session). A whole number of MiB, 1..255.
  int64_t gemm_workspace_bytes = int64_t{32} << 20;
  // Writes a named debugging dump (a no-op without TCCD_DUMP_DIR). Default: no-op.
  std::function<void(const std::string& name, const std::string& text)> dump =
      [](const std::string&, const std::string&) {};
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Artifact, ABI and KernelInfo kinds of this backend's kernel steps.
  virtual const NativeTarget& native() const = 0;
  // Graph passes only this backend runs, between the shared clean-up passes and reshape sinking.
  virtual void AddGraphPasses(PassRunner& passes) = 0;
  // Regroups the fusion partition before horizontal fusion (CUDA: row reductions absorb their
  // pointwise prologue and epilogue groups).
  virtual absl::Status RegroupPartition(const ir::Graph& graph, const FusionOptions& fusion,
                                        Partition& partition) = 0;
  // Specialises the kernels to how the schedule as built launches them, before their machine
  // code (CUDA: only the entry point each kernel's declared layout takes). Default: nothing.
  virtual absl::Status SpecializeKernels(const schedule::Schedule& schedule,
                                         std::vector<PointwiseKernel>& kernels) {
    return absl::OkStatus();
  }
  // Machine code for the graph's kernels (none is a valid input): artifacts and kernel cache
  // results go into `out`.
  virtual absl::Status CompileKernels(const std::vector<PointwiseKernel>& kernels,
                                      CompileOutput& out) = 0;
  // Schedule passes only this backend runs, before release steps are placed.
  virtual absl::Status RunSchedulePasses(PassRunner& passes, schedule::Schedule& schedule) = 0;
  // Artifacts that depend on the final schedule (CUDA: the host library running its segments).
  virtual absl::Status Finish(const std::vector<PointwiseKernel>& kernels, CompileOutput& out) = 0;
  // Native operations besides the kernels (CUDA: cuBLASLt matmuls), counted as fused kernels.
  virtual int NumLibraryCalls() const { return 0; }
};

}  // namespace tccd::codegen

// NVRTC compiles of one graph's kernels on forked child processes instead of threads of one
// process (TCCD_NVRTC_PROCESSES, issue 11).
//
// Why: on the GPU hosts a T5 forward's 26 kernels took 386-490 ms of machine code on 16 compile
// threads where the kernels' NVRTC times measured one at a time (32-112 ms each here) say ~0.15
// s. An NVRTC compile allocates and frees hundreds of MB; the threads of one process share one
// address space, whose mapping changes (mmap/munmap, page faults) serialise on its lock and
// interrupt every core running one of its threads (TLB shootdowns). Processes share none of it.
// That is the hypothesis the GPU run's A/B checks; the output is byte-identical either way (the
// same NVRTC, source and options).
//
// Only a compile worker (server/compile_worker.cc) may fork: it runs one compile at a time and,
// while the kernels compile, no other thread of it holds a lock (its main thread waits in a
// join). The daemon's own process (--compile-in-process, tests) never forks: gRPC's threads.
// Internal to the CUDA backend.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/cuda/cuda_backend.h"
#include "codegen/cuda/nvrtc_compiler.h"

namespace tccd::codegen {

// Called once by a compile worker at start: this process may fork NVRTC children. Default:
// not allowed. TCCD_NVRTC_PROCESSES=0 in the daemon's environment keeps threads anyway.
void AllowNvrtcProcesses();

// Whether CompileWithNvrtcProcesses is to be used in this process (allowed, and the knob is
// not 0).
bool UseNvrtcProcesses();

// Starts NVRTC's set-up (one trivial compile) on a thread of its own, once per process, unless
// TCCD_NVRTC_WARM_UP=0 or there is no NVRTC. AllowNvrtcChildProcesses calls it; a fork joins it
// first (CompileWithNvrtcProcesses), and warms synchronously when none was started.
void StartNvrtcWarmUp();

// One program: what CompileWithNvrtc takes.
struct NvrtcJob {
  const std::string* source = nullptr;
  std::string program_name;
};

// One job's result, and the NVRTC milliseconds it took in its child.
struct NvrtcProcessResult {
  absl::StatusOr<NvrtcOutput> output = absl::InternalError("not compiled");
  double ms = 0;
};

// Compiles every job with CompileWithNvrtc(source, program_name, target, relocatable) on up to
// `processes` forked children, which take jobs in `order` (a permutation of the job indices)
// from a shared counter; `on_done(i)` runs on the calling thread as job i's result arrives.
// A job whose child died before answering keeps the INTERNAL "not compiled" status with
// `answered` false: the caller compiles it again in process. UNAVAILABLE when no child could be
// forked (the caller then uses threads).
struct NvrtcProcessesResult {
  std::vector<NvrtcProcessResult> results;
  std::vector<bool> answered;
  int children = 0;
};
absl::StatusOr<NvrtcProcessesResult> CompileWithNvrtcProcesses(
    const std::vector<NvrtcJob>& jobs, const std::vector<size_t>& order, const CudaTarget& target,
    bool relocatable, int processes, const std::function<void(size_t)>& on_done);

}  // namespace tccd::codegen

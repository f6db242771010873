// The compile worker: the daemon's binary started in a hidden mode (worker_pool.cc spawns
// /proc/self/exe with kCompileWorkerFlag), so that LLVM, LLD and NVRTC run in a process whose
// crash, hang or runaway allocation costs one compile, not the daemon.
//
// A worker serves compiles one at a time on the socket at fd kCompileWorkerFd: it reads a
// CompileRequest frame, runs Prepare and Compile, writes the result frame (worker_protocol.h),
// and repeats until the daemon closes the socket. It dies with the daemon (PR_SET_PDEATHSIG).
#pragma once

namespace tccd::server {

inline constexpr char kCompileWorkerFlag[] = "--tccd-compile-worker";
inline constexpr int kCompileWorkerFd = 3;

// CompileOptions.extra key honoured only by workers of a daemon started with
// --enable-test-faults: "crash" (SIGSEGV), "hang" (never answers), "alloc" (allocates until the
// memory limit stops it). Tests use it to check that the daemon survives its compiler.
inline constexpr char kTestFaultOption[] = "tccd_test_fault";

// main() for the worker mode. argv: tccd --tccd-compile-worker MEMORY_LIMIT_MB TEST_FAULTS(0|1)
// PARENT_PID NICE_INCREMENT (0: none) LOG_LEVEL (debug or trace: each compile's graph and stage
// times; anything else: warn). Returns the process exit status.
int RunCompileWorker(int argc, char** argv);

}  // namespace tccd::server

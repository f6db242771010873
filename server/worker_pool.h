// NewWorkerCompiler: a Compiler whose code generation runs in a pool of supervised worker
// processes (compile_worker.h), so that a crash, hang or runaway allocation in LLVM, LLD or NVRTC
// fails one compile instead of taking the daemon (and every waiting rank) down.
//
// Prepare (parsing, validation, the compile key) stays in the daemon; Compile sends the request
// to an idle worker over its socketpair and waits for the result. Workers are started ahead of
// time (prefork: spawn of /proc/self/exe in worker mode, never fork() of the threaded daemon) and
// reused, so a compile pays a request/result transfer, not a process start; GetStats reports
// that overhead (worker_overhead_us_*). A worker that crashes, is killed or exceeds the time
// limit fails that compile with INTERNAL naming what happened (single-flight followers get the
// same answer) and is replaced.
//
// Thread-safety: Compile may be called from many threads at once; each call has a worker to
// itself (the pool grows past `workers` if more calls come at once).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "server/compiler.h"

namespace tccd::server {

struct WorkerPoolOptions {
  // Workers started up front and kept idle for reuse. Default: 1.
  int workers = 1;
  // Wall-clock limit of one compile in a worker; past it the worker is killed. Default: 600 s.
  absl::Duration time_limit = absl::Seconds(600);
  // RLIMIT_DATA of each worker in MiB (heap and private mappings); 0: none. Default: 16384.
  int64_t memory_limit_mb = 16384;
  // Nice increment (0-19; 0: none) of a compile ahead of its use (CompileRequest.background):
  // the worker runs it on a thread at that priority. Default: 10.
  int nice = 10;
  // The same for a compile a client waits for (every other request). Default: 0.
  int waited_nice = 0;
  // Workers honour CompileOptions.extra["tccd_test_fault"] (tests only). Default: false.
  bool enable_test_faults = false;
  // The workers' log level (their stderr is the daemon's): "debug" or "trace" logs every
  // compile's graph name and stage times (pipeline.cc's "compile stages"); any other level
  // keeps workers at "warn". Default: "warn".
  std::string log_level = "warn";
};

std::unique_ptr<Compiler> NewWorkerCompiler(const WorkerPoolOptions& options);

}  // namespace tccd::server

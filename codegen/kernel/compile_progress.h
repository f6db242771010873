// CompileProgress: how a graph's compile reports kernels done while it runs, so that a compile
// taking seconds can say where it is (the daemon logs it and clients poll it; issue 11 item 5).
//
//   KernelProgress progress(sink, /*done=*/reused, /*total=*/distinct kernels);
//   ... each compile thread, after each kernel: progress.KernelDone();
//
// The backends (cpu_kernel_objects, cuda_kernel_objects) count distinct kernels: those reused
// from the kernel store are done from the start.
//
// Thread-safety: KernelProgress may be called from many threads; it calls its sink from one
// thread at a time, so a sink need not be thread-safe.
#pragma once

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace tccd::codegen {

class CompileProgress {
 public:
  virtual ~CompileProgress() = default;
  // `done` of the graph's `total` distinct kernels are compiled or reused.
  virtual void KernelsDone(int done, int total) = 0;
};

// Counts kernels done for one compile and reports every change to a sink (may be null).
class KernelProgress {
 public:
  // Reports (done, total) at once.
  KernelProgress(CompileProgress* sink, int done, int total);
  // One more kernel is done. Test only: when TCCD_TEST_KERNEL_DELAY_MS is set, sleeps that many
  // milliseconds first, so that tests can make a compile slow on purpose (the progress tests).
  void KernelDone();

 private:
  CompileProgress* const sink_;
  const int total_;
  absl::Mutex mu_;
  int done_ ABSL_GUARDED_BY(mu_);
};

// TCCD_TEST_KERNEL_DELAY_MS, read once (0 when unset). Test only.
int TestKernelDelayMs();

}  // namespace tccd::codegen

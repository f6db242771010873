// KernelProgress; see compile_progress.h.
#include "codegen/kernel/compile_progress.h"

#include <chrono>
#include <cstdlib>
#include <thread>

namespace tccd::codegen {

int TestKernelDelayMs() {
  static const int delay_ms = [] {
    const char* env = std::getenv("TCCD_TEST_KERNEL_DELAY_MS");
    const int v = env == nullptr ? 0 : std::atoi(env);
    return v > 0 ? v : 0;
  }();
  return delay_ms;
}

KernelProgress::KernelProgress(CompileProgress* sink, int done, int total)
    : sink_(sink), total_(total), done_(done) {
  if (sink_ != nullptr) sink_->KernelsDone(done, total);
}

void KernelProgress::KernelDone() {
  if (const int delay_ms = TestKernelDelayMs(); delay_ms > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  absl::MutexLock lock(&mu_);
  ++done_;
  if (sink_ != nullptr) sink_->KernelsDone(done_, total_);
}

}  // namespace tccd::codegen

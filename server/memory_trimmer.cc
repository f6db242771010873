// MemoryTrimmer; see memory_trimmer.h.
#include "server/memory_trimmer.h"

#include <malloc.h>
#include <pthread.h>

namespace tccd::server {

MemoryTrimmer::MemoryTrimmer(absl::Duration period)
    : thread_([this, period] {
        pthread_setname_np(pthread_self(), "tccd-trim");
        while (!stop_.WaitForNotificationWithTimeout(period)) {
          // The return value only says whether anything was released.
          (void)malloc_trim(0);
        }
      }) {}

MemoryTrimmer::~MemoryTrimmer() {
  stop_.Notify();
  thread_.join();
}

}  // namespace tccd::server

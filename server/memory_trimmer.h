// MemoryTrimmer: gives the heap's free pages back to the kernel now and then.
//
// Why: glibc's malloc keeps memory that was freed in its per-thread arenas
// instead of returning it. After a burst of traffic (many peers sending large
// or never-finished messages) gRPC frees its buffers, but the daemon's RSS stays
// at the burst's peak: measured with tests/tools/hostile_peer.py, ~950 MB after
// the connections had closed against ~72 MB before; malloc_trim(0) brought it
// back to ~80 MB. malloc_trim walks every arena and madvises free pages away;
// it costs milliseconds, so once per period is cheap.
//
// Thread-safety: construct and destroy on one thread; the trimming runs on the
// trimmer's own thread.
#pragma once

#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace tccd::server {

class MemoryTrimmer {
 public:
  // Starts trimming every `period`.
  explicit MemoryTrimmer(absl::Duration period);
  ~MemoryTrimmer();  // stops the thread; returns once it has exited

  MemoryTrimmer(const MemoryTrimmer&) = delete;
  MemoryTrimmer& operator=(const MemoryTrimmer&) = delete;

 private:
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace tccd::server

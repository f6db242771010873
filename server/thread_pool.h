// ThreadPool: a fixed set of named worker threads draining one FIFO queue.
//
// tccd runs two: the request pool (parsing, cache lookups, blob reads: work
// that may block on disk but is short) and the compile pool (codegen, whose
// size --compile-threads bounds how many compiles run at once).
//
// Thread-safety: every method may be called from any thread. A task that throws
// is logged and dropped; it never takes a worker (or the daemon) down.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"

namespace tccd::server {

class ThreadPool {
 public:
  // Starts `num_threads` (at least 1) workers named "<name>-<i>" (truncated to
  // 15 characters, the kernel's limit, as `top -H` shows them).
  ThreadPool(std::string name, int num_threads);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  // Shutdown().
  ~ThreadPool();

  // Queues `task`. After Shutdown() the task runs on the caller's thread
  // instead, so work is never silently dropped (a dropped task could leave an
  // RPC unanswered).
  void Schedule(absl::AnyInvocable<void()> task);

  // Runs every queued task, then joins the workers. Idempotent.
  void Shutdown();

  // Tasks queued and not yet started; for stats.
  int64_t queued() const;
  int num_threads() const { return static_cast<int>(workers_.size()); }

 private:
  void WorkerLoop();

  const std::string name_;
  std::vector<std::thread> workers_;
  mutable absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace tccd::server

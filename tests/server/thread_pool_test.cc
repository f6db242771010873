// ThreadPool: bounded concurrency, drain on Shutdown, survival of throwing
// tasks.
#include "server/thread_pool.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <stdexcept>

#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

namespace tccd::server {
namespace {

TEST_CASE("ThreadPool: runs at most num_threads tasks at once") {
  constexpr int kThreads = 3;
  constexpr int kTasks = 12;
  ThreadPool pool("test", kThreads);
  absl::Mutex mu;
  int running = 0;
  int max_running = 0;
  int started = 0;
  bool release = false;
  for (int i = 0; i < kTasks; ++i) {
    pool.Schedule([&] {
      absl::MutexLock lock(&mu);
      ++started;
      max_running = std::max(max_running, ++running);
      mu.Await(absl::Condition(&release));
      --running;
    });
  }
  {
    absl::MutexLock lock(&mu);
    // All workers are busy; the rest of the tasks must be queued, not running.
    mu.Await(absl::Condition(
        +[](int* s) { return *s == kThreads; }, &started));
    CHECK(running == kThreads);
    release = true;
  }
  pool.Shutdown();
  CHECK(started == kTasks);
  CHECK(max_running == kThreads);
}

TEST_CASE("ThreadPool: Shutdown runs every queued task; later tasks run inline") {
  std::atomic<int> ran{0};
  ThreadPool pool("test", 1);
  absl::Notification gate;
  pool.Schedule([&] { gate.WaitForNotification(); });
  for (int i = 0; i < 100; ++i) pool.Schedule([&] { ran.fetch_add(1); });
  gate.Notify();
  pool.Shutdown();
  CHECK(ran.load() == 100);
  pool.Schedule([&] { ran.fetch_add(1); });
  CHECK(ran.load() == 101);
}

TEST_CASE("ThreadPool: a throwing task does not kill its worker") {
  ThreadPool pool("test", 1);
  absl::Notification done;
  pool.Schedule([] { throw std::runtime_error("boom"); });
  pool.Schedule([&] { done.Notify(); });
  done.WaitForNotification();
  CHECK(done.HasBeenNotified());
}

}  // namespace
}  // namespace tccd::server

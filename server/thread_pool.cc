// ThreadPool; see thread_pool.h.
#include "server/thread_pool.h"

#include <pthread.h>

#include <algorithm>
#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace tccd::server {
namespace {

void RunGuarded(absl::AnyInvocable<void()>& task, const std::string& pool) {
  try {
    task();
  } catch (const std::exception& e) {
    spdlog::error("{}: a task threw and was dropped: {}", pool, e.what());
  } catch (...) {
    spdlog::error("{}: a task threw a non-std exception and was dropped", pool);
  }
}

}  // namespace

ThreadPool::ThreadPool(std::string name, int num_threads) : name_(std::move(name)) {
  num_threads = std::max(1, num_threads);
  workers_.reserve(num_threads);
  for (int i = 0; i < num_threads; ++i) {
    workers_.emplace_back([this] { WorkerLoop(); });
    std::string thread_name = absl::StrCat(name_, "-", i).substr(0, 15);
    pthread_setname_np(workers_.back().native_handle(), thread_name.c_str());
  }
}

ThreadPool::~ThreadPool() { Shutdown(); }

void ThreadPool::Schedule(absl::AnyInvocable<void()> task) {
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) {
      queue_.push_back(std::move(task));
      return;
    }
  }
  RunGuarded(task, name_);
}

void ThreadPool::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  for (std::thread& worker : workers_) worker.join();
}

int64_t ThreadPool::queued() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(queue_.size());
}

void ThreadPool::WorkerLoop() {
  // Evaluated by Await with mu_ held.
  auto has_work_or_stopping = [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return !queue_.empty() || stopping_;
  };
  while (true) {
    absl::AnyInvocable<void()> task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(&has_work_or_stopping));
      // Drain before exiting: Shutdown() promises that every queued task runs.
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    RunGuarded(task, name_);
  }
}

}  // namespace tccd::server

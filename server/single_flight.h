// SingleFlight<Result>: coalesces concurrent work on one key, after Go's
// x/sync/singleflight, but with callbacks instead of blocked threads.
//
// At job start hundreds of ranks ask for the same graph within milliseconds.
// The first Join for a key makes the caller the leader, who must do the work
// and call Complete(key, result); every Join for that key until then queues its
// callback as a follower. Complete hands the one result to every queued
// callback (the leader's first) and forgets the key, so a later Join starts a
// new flight (by then the result is normally in the cache).
//
//   if (flights.Join(key, std::move(on_result)) ==
//   SingleFlight<R>::Role::kLeader) {
//     pool.Schedule([&flights, key] { flights.Complete(key, DoWork(key)); });
//   }
//
// Waiting costs no thread: a follower is a queued callback, which is what lets
// the gRPC transport hold thousands of waiting RPCs with a handful of threads.
//
// Contract: the leader calls Complete exactly once per flight, on every path
// (errors included), or its followers are never answered. Callbacks run on the
// thread that calls Complete, outside the lock, in Join order; they must not
// throw.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace tccd::server {

template <typename Result>
class SingleFlight {
 public:
  enum class Role { kLeader, kFollower };
  using Callback = absl::AnyInvocable<void(const Result& result, Role role)>;

  // Optional hook run (outside the lock) each time a caller joins a flight as a
  // follower, after its callback is queued. A named sync point for tests: a
  // test's leader can wait until N followers are queued, with no sleeps.
  using FollowerHook = std::function<void(absl::string_view key)>;
  void SetFollowerHookForTesting(FollowerHook hook) { follower_hook_ = std::move(hook); }

  // Joins the flight for `key`, starting one if none is in progress. Returns
  // kLeader if the caller must do the work and call Complete(key, ...);
  // kFollower if `callback` was queued. Either way `callback` runs exactly
  // once, from Complete.
  Role Join(absl::string_view key, Callback callback) {
    Role role;
    {
      absl::MutexLock lock(&mu_);
      auto [it, inserted] = flights_.try_emplace(key);
      it->second.push_back(std::move(callback));
      role = inserted ? Role::kLeader : Role::kFollower;
    }
    if (role == Role::kFollower && follower_hook_) follower_hook_(key);
    return role;
  }

  // Ends the flight for `key`: runs every queued callback with `result`, the
  // leader's first. Returns how many callbacks ran (0 if no flight for `key`
  // was in progress).
  int64_t Complete(absl::string_view key, const Result& result) {
    std::vector<Callback> callbacks;
    {
      absl::MutexLock lock(&mu_);
      auto it = flights_.find(key);
      if (it == flights_.end()) return 0;
      callbacks = std::move(it->second);
      flights_.erase(it);
    }
    for (size_t i = 0; i < callbacks.size(); ++i) {
      callbacks[i](result, i == 0 ? Role::kLeader : Role::kFollower);
    }
    return static_cast<int64_t>(callbacks.size());
  }

  // Flights in progress; for stats.
  int64_t in_flight() const {
    absl::MutexLock lock(&mu_);
    return static_cast<int64_t>(flights_.size());
  }

  // Followers queued on `key`'s flight; for stats and tests.
  int64_t followers(absl::string_view key) const {
    absl::MutexLock lock(&mu_);
    auto it = flights_.find(key);
    return it == flights_.end() ? 0 : static_cast<int64_t>(it->second.size()) - 1;
  }

 private:
  mutable absl::Mutex mu_;
  // key -> callbacks of the flight's callers; the leader's first.
  absl::flat_hash_map<std::string, std::vector<Callback>> flights_ ABSL_GUARDED_BY(mu_);
  FollowerHook follower_hook_;  // set before concurrent use
};

}  // namespace tccd::server

// SingleFlight: one leader per key, every joiner answered once with the
// leader's result. Races are made deterministic with the follower hook (a named
// sync point), never with sleeps.
#include "server/single_flight.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace tccd::server {
namespace {

using Flights = SingleFlight<int>;

TEST_CASE(
    "SingleFlight: first joiner leads, later joiners follow, all get the "
    "result") {
  Flights flights;
  std::vector<std::pair<int, Flights::Role>> got;
  auto record = [&got](const int& result, Flights::Role role) { got.emplace_back(result, role); };

  REQUIRE(flights.Join("k", record) == Flights::Role::kLeader);
  REQUIRE(flights.Join("k", record) == Flights::Role::kFollower);
  REQUIRE(flights.Join("k", record) == Flights::Role::kFollower);
  CHECK(flights.followers("k") == 2);
  CHECK(flights.in_flight() == 1);
  CHECK(got.empty());  // nobody is answered before the leader completes

  CHECK(flights.Complete("k", 42) == 3);
  REQUIRE(got.size() == 3);
  CHECK(got[0] == std::make_pair(42, Flights::Role::kLeader));
  CHECK(got[1] == std::make_pair(42, Flights::Role::kFollower));
  CHECK(got[2] == std::make_pair(42, Flights::Role::kFollower));
  CHECK(flights.in_flight() == 0);
}

TEST_CASE("SingleFlight: a join after Complete starts a new flight") {
  Flights flights;
  int calls = 0;
  auto count = [&calls](const int&, Flights::Role) { ++calls; };
  REQUIRE(flights.Join("k", count) == Flights::Role::kLeader);
  flights.Complete("k", 1);
  REQUIRE(flights.Join("k", count) == Flights::Role::kLeader);
  flights.Complete("k", 2);
  CHECK(calls == 2);
}

TEST_CASE("SingleFlight: different keys fly independently") {
  Flights flights;
  int a = 0, b = 0;
  REQUIRE(flights.Join("a", [&a](const int& r, Flights::Role) { a = r; }) ==
          Flights::Role::kLeader);
  REQUIRE(flights.Join("b", [&b](const int& r, Flights::Role) { b = r; }) ==
          Flights::Role::kLeader);
  flights.Complete("b", 2);
  CHECK(a == 0);
  CHECK(b == 2);
  flights.Complete("a", 1);
  CHECK(a == 1);
  CHECK(flights.Complete("a", 3) == 0);  // no such flight any more: a no-op
}

TEST_CASE("SingleFlight: N threads, one key: exactly one leader, N answers") {
  constexpr int kThreads = 32;
  Flights flights;

  // Sync point: the leader completes only once all other threads are queued as
  // followers, so every thread is guaranteed to join the same flight.
  absl::Mutex mu;
  int followers_joined = 0;
  flights.SetFollowerHookForTesting([&](absl::string_view) {
    absl::MutexLock lock(&mu);
    ++followers_joined;
  });

  std::atomic<int> leaders{0};
  std::atomic<int> work_runs{0};
  std::atomic<int> answers{0};
  std::atomic<int> wrong_results{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      auto on_result = [&](const int& result, Flights::Role) {
        if (result != 7) wrong_results.fetch_add(1);
        answers.fetch_add(1);
      };
      if (flights.Join("graph", on_result) == Flights::Role::kLeader) {
        leaders.fetch_add(1);
        {
          absl::MutexLock lock(&mu);
          mu.Await(absl::Condition(
              +[](int* joined) { return *joined == kThreads - 1; }, &followers_joined));
        }
        work_runs.fetch_add(1);  // "compile"
        flights.Complete("graph", 7);
      }
    });
  }
  for (std::thread& t : threads) t.join();

  CHECK(leaders.load() == 1);
  CHECK(work_runs.load() == 1);
  CHECK(answers.load() == kThreads);
  CHECK(wrong_results.load() == 0);
  CHECK(flights.in_flight() == 0);
}

}  // namespace
}  // namespace tccd::server

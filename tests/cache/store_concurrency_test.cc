// Many threads on one Store: blobs shared between threads and private to each,
// and job-use counting (a read-modify-write) that must not lose updates.
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cache/store.h"
#include "tests/cache/test_util.h"

namespace tccd::cache {
namespace {

using testing::OpenOrDie;
using testing::TempDir;

TEST_CASE("8 threads PutBlob, GetBlob and RecordJobUse concurrently",
          "[cache][store][concurrency]") {
  TempDir dir;
  auto store = OpenOrDie(dir.path());
  constexpr int kThreads = 8;
  constexpr int kRounds = 200;
  constexpr int kShared = 20;
  const std::string key = Sha256Hex("shared key");

  std::vector<std::vector<std::string>> failures(kThreads);  // per thread: no shared state
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::string>& failed = failures[t];
      for (int i = 0; i < kRounds; ++i) {
        // Every thread writes the shared blobs (same digests) and its own.
        const std::string bytes =
            i % 2 == 0 ? absl::StrCat("shared blob ", i % kShared)
                       : absl::StrCat("thread ", t, " blob ", i, std::string(i * 50, 'x'));
        absl::StatusOr<std::string> digest = store->PutBlob(bytes);
        if (!digest.ok()) {
          failed.push_back(digest.status().ToString());
          continue;
        }
        absl::StatusOr<std::string> read = store->GetBlob(*digest);
        if (!read.ok() || *read != bytes) failed.push_back("read back " + *digest);
        if (!store->HasBlob(*digest)) failed.push_back("HasBlob " + *digest);
        absl::Status used = store->RecordJobUse("job", key, i == 0, t * 1000 + i);
        if (!used.ok()) failed.push_back(used.ToString());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  for (const std::vector<std::string>& failed : failures) {
    for (const std::string& f : failed) FAIL_CHECK(f);
  }
  CHECK(store->GetUsage().blobs == kShared / 2 + kThreads * kRounds / 2);
  absl::StatusOr<std::vector<v1::JobEntry>> job = store->GetJob("job");
  TCCD_REQUIRE_OK(job);
  REQUIRE(job->size() == 1);
  CHECK((*job)[0].uses() == kThreads * kRounds);
  CHECK((*job)[0].first_used_unix_ms() == 0);
  CHECK((*job)[0].last_used_unix_ms() == (kThreads - 1) * 1000 + kRounds - 1);
  CHECK((*job)[0].compiled_here());
}

}  // namespace
}  // namespace tccd::cache

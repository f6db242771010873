// The job index: use counts, first/last times, sticky compiled_here, per-job
// isolation.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cache/store.h"
#include "tests/cache/test_util.h"

namespace tccd::cache {
namespace {

using testing::OpenOrDie;
using testing::TempDir;

const std::string kKey1 = Sha256Hex("key 1");
const std::string kKey2 = Sha256Hex("key 2");

std::vector<v1::JobEntry> JobOrDie(Store& store, const std::string& job_id) {
  absl::StatusOr<std::vector<v1::JobEntry>> entries = store.GetJob(job_id);
  TCCD_REQUIRE_OK(entries);
  return *std::move(entries);
}

TEST_CASE("RecordJobUse counts uses and keeps first and last times", "[cache][store][jobs]") {
  TempDir dir;
  auto store = OpenOrDie(dir.path());
  TCCD_REQUIRE_OK(store->RecordJobUse("job", kKey1, /*compiled=*/true, 1000));
  TCCD_REQUIRE_OK(store->RecordJobUse("job", kKey1, /*compiled=*/false, 3000));
  TCCD_REQUIRE_OK(store->RecordJobUse("job", kKey1, /*compiled=*/false,
                                      2000));  // late arrival
  TCCD_REQUIRE_OK(store->RecordJobUse("job", kKey2, /*compiled=*/false, 2500));

  std::vector<v1::JobEntry> entries = JobOrDie(*store, "job");
  REQUIRE(entries.size() == 2);
  const v1::JobEntry& e1 = entries[0].key() == kKey1 ? entries[0] : entries[1];
  const v1::JobEntry& e2 = entries[0].key() == kKey1 ? entries[1] : entries[0];
  CHECK(e1.key() == kKey1);
  CHECK(e1.uses() == 3);
  CHECK(e1.first_used_unix_ms() == 1000);
  CHECK(e1.last_used_unix_ms() == 3000);
  CHECK(e1.compiled_here());  // sticky: later hits did not clear it
  CHECK(e2.key() == kKey2);
  CHECK(e2.uses() == 1);
  CHECK(e2.first_used_unix_ms() == 2500);
  CHECK(e2.last_used_unix_ms() == 2500);
  CHECK_FALSE(e2.compiled_here());
}

TEST_CASE("compiled_here becomes true on a later compile", "[cache][store][jobs]") {
  TempDir dir;
  auto store = OpenOrDie(dir.path());
  TCCD_REQUIRE_OK(store->RecordJobUse("job", kKey1, false, 1));
  CHECK_FALSE(JobOrDie(*store, "job")[0].compiled_here());
  TCCD_REQUIRE_OK(store->RecordJobUse("job", kKey1, true, 2));
  CHECK(JobOrDie(*store, "job")[0].compiled_here());
}

TEST_CASE("jobs are isolated, even when one id prefixes another", "[cache][store][jobs]") {
  TempDir dir;
  auto store = OpenOrDie(dir.path());
  TCCD_REQUIRE_OK(store->RecordJobUse("a", kKey1, true, 1));
  TCCD_REQUIRE_OK(store->RecordJobUse("ab", kKey2, true, 2));
  TCCD_REQUIRE_OK(store->RecordJobUse("a\x01", kKey2, true, 3));

  std::vector<v1::JobEntry> a = JobOrDie(*store, "a");
  REQUIRE(a.size() == 1);
  CHECK(a[0].key() == kKey1);
  std::vector<v1::JobEntry> ab = JobOrDie(*store, "ab");
  REQUIRE(ab.size() == 1);
  CHECK(ab[0].key() == kKey2);
  CHECK(JobOrDie(*store, "b").empty());
  CHECK(JobOrDie(*store, "unknown job").empty());
}

TEST_CASE("an empty job id means no job", "[cache][store][jobs]") {
  TempDir dir;
  auto store = OpenOrDie(dir.path());
  TCCD_REQUIRE_OK(store->RecordJobUse("", kKey1, true, 1));
  TCCD_REQUIRE_CODE(store->GetJob(""), absl::StatusCode::kInvalidArgument);
}

TEST_CASE("malformed job ids and keys are INVALID_ARGUMENT", "[cache][store][jobs]") {
  TempDir dir;
  auto store = OpenOrDie(dir.path());
  SECTION("NUL in the job id") {
    const std::string job("a\0b", 3);
    TCCD_REQUIRE_CODE(store->RecordJobUse(job, kKey1, true, 1), absl::StatusCode::kInvalidArgument);
    TCCD_REQUIRE_CODE(store->GetJob(job), absl::StatusCode::kInvalidArgument);
  }
  SECTION("overlong job id") {
    const std::string job(100000, 'j');
    TCCD_REQUIRE_CODE(store->RecordJobUse(job, kKey1, true, 1), absl::StatusCode::kInvalidArgument);
    TCCD_REQUIRE_CODE(store->GetJob(job), absl::StatusCode::kInvalidArgument);
  }
  SECTION("malformed key") {
    TCCD_REQUIRE_CODE(store->RecordJobUse("job", "key", true, 1),
                      absl::StatusCode::kInvalidArgument);
    CHECK(JobOrDie(*store, "job").empty());
  }
}

TEST_CASE("job entries persist across reopen", "[cache][store][jobs]") {
  TempDir dir;
  {
    auto store = OpenOrDie(dir.path());
    TCCD_REQUIRE_OK(store->RecordJobUse("job", kKey1, true, 10));
  }
  auto store = OpenOrDie(dir.path());
  TCCD_REQUIRE_OK(store->RecordJobUse("job", kKey1, false, 20));
  std::vector<v1::JobEntry> entries = JobOrDie(*store, "job");
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].uses() == 2);
  CHECK(entries[0].first_used_unix_ms() == 10);
  CHECK(entries[0].last_used_unix_ms() == 20);
  CHECK(entries[0].compiled_here());
}

}  // namespace
}  // namespace tccd::cache

// Store with a size cap (StoreOptions.max_bytes) on a real RocksDB: the cap holds after every
// write, recently used entries stay, protections hold, the index survives reopening, and no
// manifest is ever left naming an evicted blob (also under concurrent writers and readers, and
// after a SIGKILL in the middle of evictions).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cache/schema.h"
#include "cache/store.h"
#include "tests/cache/test_util.h"

namespace tccd::cache {
namespace {

using testing::MakeManifest;
using testing::RawScan;
using testing::TempDir;

constexpr int64_t kBlobBytes = 10'000;

std::string Key(int i) { return Sha256Hex(absl::StrCat("key ", i)); }
std::string BlobBytes(int i) {
  std::string bytes = absl::StrCat("blob ", i, " ");
  bytes.resize(kBlobBytes, static_cast<char>('a' + i % 26));
  return bytes;
}

// Stores entry i: one 10 kB blob and a manifest naming it, as a compile does.
absl::Status PutEntry(Store& store, int i) {
  absl::StatusOr<std::string> digest = store.PutBlob(BlobBytes(i));
  if (!digest.ok()) return digest.status();
  return store.PutManifest(Key(i), MakeManifest(Key(i), {*digest}));
}

std::unique_ptr<Store> OpenCapped(const std::string& path, int64_t max_bytes,
                                  std::function<int64_t()> clock = nullptr,
                                  int64_t min_age_ms = 0) {
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::Open({.path = path,
                   .max_bytes = max_bytes,
                   .min_age_ms = min_age_ms,
                   .now_ms_for_testing = std::move(clock)});
  TCCD_REQUIRE_OK(store);
  return *std::move(store);
}

// Every manifest in the closed cache dir names only stored blobs.
void RequireNoDanglingManifests(const std::string& dir) {
  const std::map<std::string, std::string> blobs = RawScan(dir, kBlobsColumnFamily);
  for (const auto& [key, value] : RawScan(dir, kActionsColumnFamily)) {
    v1::Manifest manifest;
    REQUIRE(manifest.ParseFromString(value));
    for (const v1::Artifact& artifact : manifest.artifacts()) {
      INFO("manifest " << key << " names blob " << artifact.digest());
      REQUIRE(blobs.count(artifact.digest()) == 1);
    }
  }
}

// An entry is about 10 kB of blob plus ~200 bytes of manifest and keys.
constexpr int64_t kCap = 100'000;

TEST_CASE("a capped store stays under its cap and keeps the newest entries",
          "[cache][store][eviction]") {
  TempDir dir;
  {
    auto store = OpenCapped(dir.path(), kCap);
    for (int i = 0; i < 50; ++i) {
      TCCD_REQUIRE_OK(PutEntry(*store, i));
      const Store::Usage usage = store->GetUsage();
      INFO("after entry " << i << ": " << usage.logical_bytes << " bytes");
      REQUIRE(usage.logical_bytes <= kCap);
    }
    const Store::Usage usage = store->GetUsage();
    CHECK(usage.max_bytes == kCap);
    CHECK(usage.evicted_manifests > 0);
    CHECK(usage.evicted_blobs == usage.evicted_manifests);
    CHECK(usage.evicted_bytes >= usage.evicted_manifests * kBlobBytes);
    for (int i = 45; i < 50; ++i) TCCD_REQUIRE_OK(store->GetManifest(Key(i)));
    TCCD_REQUIRE_CODE(store->GetManifest(Key(0)), absl::StatusCode::kNotFound);
  }
  RequireNoDanglingManifests(dir.path());
  // What is stored matches the count: 50 entries, at most ~9 of them fit.
  CHECK(RawScan(dir.path(), kActionsColumnFamily).size() < 10);
}

TEST_CASE("entries that keep being hit are not evicted", "[cache][store][eviction]") {
  TempDir dir;
  std::atomic<int64_t> now{1'000'000};
  auto store = OpenCapped(dir.path(), kCap, [&] { return now.load(); });
  TCCD_REQUIRE_OK(PutEntry(*store, 0));
  for (int i = 1; i < 50; ++i) {
    now += 10;
    TCCD_REQUIRE_OK(store->GetManifest(Key(0)));  // a hit on entry 0 before every write
    now += 10;
    TCCD_REQUIRE_OK(PutEntry(*store, i));
  }
  TCCD_REQUIRE_OK(store->GetManifest(Key(0)));
  TCCD_REQUIRE_CODE(store->GetManifest(Key(1)), absl::StatusCode::kNotFound);
}

TEST_CASE("entries younger than the minimum age are kept even over the cap",
          "[cache][store][eviction]") {
  TempDir dir;
  std::atomic<int64_t> now{1'000'000};
  auto store = OpenCapped(
      dir.path(), kCap, [&] { return now.load(); }, /*min_age_ms=*/60'000);
  for (int i = 0; i < 20; ++i) TCCD_REQUIRE_OK(PutEntry(*store, i));
  Store::Usage usage = store->GetUsage();
  CHECK(usage.logical_bytes > kCap);
  CHECK(usage.evicted_manifests == 0);
  CHECK(usage.evictions_blocked > 0);
  for (int i = 0; i < 20; ++i) TCCD_REQUIRE_OK(store->GetManifest(Key(i)));

  now += 61'000;
  TCCD_REQUIRE_OK(PutEntry(*store, 20));  // the next write evicts what has aged
  usage = store->GetUsage();
  CHECK(usage.logical_bytes <= kCap);
  CHECK(usage.evicted_manifests > 0);
  TCCD_REQUIRE_OK(store->GetManifest(Key(20)));  // just written: younger than the min age
}

TEST_CASE("a reopened store rebuilds the index: sizes, orphans and access times",
          "[cache][store][eviction]") {
  TempDir dir;
  // After MakeManifest's created_unix_ms, which is a manifest's last use until it is hit.
  std::atomic<int64_t> now{1'800'000'000'000};
  {
    // Uncapped: 20 entries (over the later cap) and a blob no manifest names.
    auto store = testing::OpenOrDie(dir.path());
    for (int i = 0; i < 20; ++i) TCCD_REQUIRE_OK(PutEntry(*store, i));
    TCCD_REQUIRE_OK(store->PutBlob(std::string(5000, 'o')));
  }
  {
    auto store = OpenCapped(dir.path(), 1'000'000, [&] { return now.load(); });
    CHECK(store->GetUsage().logical_bytes > 20 * kBlobBytes);
    // Hits in the order 0, 1, 2, 4, ..., 19, 3: entry 3 is the most recently used, then 19.
    // Close persists the access times.
    for (int i : {0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 3}) {
      now += 1000;
      TCCD_REQUIRE_OK(store->GetManifest(Key(i)));
    }
  }
  now += 1000;
  auto store = OpenCapped(dir.path(), kCap, [&] { return now.load(); });
  TCCD_REQUIRE_OK(PutEntry(*store, 100));  // over the cap: evicts
  const Store::Usage usage = store->GetUsage();
  CHECK(usage.logical_bytes <= kCap);
  CHECK(usage.evicted_blobs == usage.evicted_manifests + 1);  // the orphan went too
  TCCD_REQUIRE_OK(store->GetManifest(Key(3)));
  TCCD_REQUIRE_OK(store->GetManifest(Key(19)));
  TCCD_REQUIRE_OK(store->GetManifest(Key(100)));
  TCCD_REQUIRE_CODE(store->GetManifest(Key(4)), absl::StatusCode::kNotFound);
}

TEST_CASE("concurrent writers and readers never see a manifest without its blobs",
          "[cache][store][eviction]") {
  TempDir dir;
  {
    auto store = OpenCapped(dir.path(), kCap);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int n = 0; n < 60; ++n) {
          // Writers share entries (same blobs, same keys) so that re-puts race evictions.
          const int i = (n * 7 + t) % 40;
          absl::Status put = PutEntry(*store, i);
          if (!put.ok()) {
            UNSCOPED_INFO(put.ToString());
            ++failures;
          }
          absl::StatusOr<v1::Manifest> hit = store->GetManifest(Key((i + 3) % 40));
          if (hit.ok()) {
            // Served manifests have their blobs (GetManifest checks); fetching right after
            // may miss only if the entry was evicted meanwhile, never return wrong bytes.
            absl::StatusOr<std::string> blob = store->GetBlob(hit->artifacts(0).digest());
            if (blob.ok() && Sha256Hex(*blob) != hit->artifacts(0).digest()) ++failures;
          } else if (!absl::IsNotFound(hit.status())) {
            ++failures;
          }
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    CHECK(failures == 0);
    CHECK(store->GetUsage().logical_bytes <= kCap);
    CHECK(store->GetUsage().evicted_manifests > 0);
  }
  RequireNoDanglingManifests(dir.path());
}

#ifdef TCCD_CACHE_STORE_HOLDER
TEST_CASE("SIGKILL during evictions leaves no manifest without its blobs",
          "[cache][store][eviction]") {
  TempDir dir;
  for (int round = 0; round < 5; ++round) {
    // The holder's churn mode writes capped entries in a loop until killed.
    int out[2];
    REQUIRE(pipe(out) == 0);
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      execl(TCCD_CACHE_STORE_HOLDER, TCCD_CACHE_STORE_HOLDER, dir.path().c_str(), "churn",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    close(out[1]);
    char line[16] = {};
    REQUIRE(read(out[0], line, 6) == 6);  // "ready\n": it is evicting by now
    usleep(static_cast<useconds_t>(20'000 + 37'000 * round));
    REQUIRE(kill(pid, SIGKILL) == 0);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status));
    close(out[0]);
    RequireNoDanglingManifests(dir.path());
  }
  auto store = OpenCapped(dir.path(), kCap);
  TCCD_REQUIRE_OK(PutEntry(*store, 0));
  CHECK(store->GetUsage().logical_bytes <= kCap);
}
#endif

TEST_CASE("bad eviction options are INVALID_ARGUMENT", "[cache][store][eviction]") {
  TempDir dir;
  TCCD_REQUIRE_CODE(Store::Open({.path = dir.path(), .max_bytes = -1}),
                    absl::StatusCode::kInvalidArgument);
  TCCD_REQUIRE_CODE(Store::Open({.path = dir.path(), .max_bytes = 1, .low_watermark = 0}),
                    absl::StatusCode::kInvalidArgument);
  TCCD_REQUIRE_CODE(Store::Open({.path = dir.path(), .max_bytes = 1, .min_age_ms = -1}),
                    absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tccd::cache

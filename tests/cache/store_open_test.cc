// Open and Close: persistence, the lock against a second opener (in this
// process and another), surviving SIGKILL, schema versions, unusable paths, and
// a closed store.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>

#include "cache/schema.h"
#include "cache/store.h"
#include "tests/cache/test_util.h"

namespace tccd::cache {
namespace {

using testing::MakeManifest;
using testing::OpenOrDie;
using testing::RawPut;
using testing::TempDir;

bool Contains(absl::string_view haystack, absl::string_view needle) {
  return haystack.find(needle) != absl::string_view::npos;
}

TEST_CASE("data persists across Close and reopen", "[cache][store][open]") {
  TempDir dir;
  const std::string key = Sha256Hex("key");
  std::string digest;
  {
    auto store = OpenOrDie(dir.path());
    digest = *store->PutBlob("persistent bytes");
    TCCD_REQUIRE_OK(store->PutManifest(key, MakeManifest(key, {digest})));
    TCCD_REQUIRE_OK(store->RecordJobUse("job", key, true, 5));
    TCCD_REQUIRE_OK(store->Close());
  }
  auto store = OpenOrDie(dir.path());
  CHECK(*store->GetBlob(digest) == "persistent bytes");
  TCCD_REQUIRE_OK(store->GetManifest(key));
  CHECK(store->GetJob("job")->size() == 1);
  Store::Usage usage = store->GetUsage();
  CHECK(usage.blobs == 1);
  CHECK(usage.manifests == 1);
  CHECK(usage.blob_bytes > 0);
}

TEST_CASE("a second Open of an open cache dir fails clearly", "[cache][store][open]") {
  TempDir dir;
  auto first = OpenOrDie(dir.path());
  absl::StatusOr<std::unique_ptr<Store>> second = Store::Open({.path = dir.path()});
  TCCD_REQUIRE_CODE(second, absl::StatusCode::kFailedPrecondition);
  CHECK(Contains(second.status().message(), dir.path()));
  CHECK(Contains(second.status().message(), "in use by another tccd"));

  // The first store is unaffected, and once it closes the dir can be opened
  // again.
  TCCD_REQUIRE_OK(first->PutBlob("still works"));
  TCCD_REQUIRE_OK(first->Close());
  OpenOrDie(dir.path());
}

TEST_CASE("another process's lock is reported, and its writes survive SIGKILL",
          "[cache][store][open]") {
  TempDir dir;
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    execl(TCCD_CACHE_STORE_HOLDER, TCCD_CACHE_STORE_HOLDER, dir.path().c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(pipe_fds[1]);
  char buf[16] = {};
  const ssize_t n = read(pipe_fds[0], buf, sizeof(buf) - 1);  // blocks until "ready" or exit
  close(pipe_fds[0]);
  const bool ready = n > 0 && std::string(buf, n) == "ready\n";

  absl::StatusOr<std::unique_ptr<Store>> locked = Store::Open({.path = dir.path()});
  kill(pid, SIGKILL);
  int wait_status = 0;
  REQUIRE(waitpid(pid, &wait_status, 0) == pid);
  REQUIRE(ready);
  CHECK(WIFSIGNALED(wait_status));

  TCCD_REQUIRE_CODE(locked, absl::StatusCode::kFailedPrecondition);
  CHECK(Contains(locked.status().message(), dir.path()));
  CHECK(Contains(locked.status().message(), "in use by another tccd"));

  // The holder never flushed or closed: its writes come back from the WAL.
  auto store = OpenOrDie(dir.path());
  const std::string key = Sha256Hex("holder key");
  absl::StatusOr<v1::Manifest> manifest = store->GetManifest(key);
  TCCD_REQUIRE_OK(manifest);
  REQUIRE(manifest->artifacts_size() == 1);
  CHECK(*store->GetBlob(manifest->artifacts(0).digest()) == "written by the holder");
  absl::StatusOr<std::vector<v1::JobEntry>> job = store->GetJob("holder job");
  TCCD_REQUIRE_OK(job);
  REQUIRE(job->size() == 1);
  CHECK((*job)[0].uses() == 1);
}

TEST_CASE("a cache dir from a newer schema is refused", "[cache][store][open]") {
  TempDir dir;
  { OpenOrDie(dir.path()); }
  SECTION("newer version") {
    RawPut(dir.path(), kMetaColumnFamily, kSchemaVersionKey, std::to_string(kSchemaVersion + 1));
  }
  SECTION("newer version with a column family this tccd does not know") {
    RawPut(dir.path(), "from_the_future", "k", "v");
    RawPut(dir.path(), kMetaColumnFamily, kSchemaVersionKey, std::to_string(kSchemaVersion + 1));
  }
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open({.path = dir.path()});
  TCCD_REQUIRE_CODE(store, absl::StatusCode::kFailedPrecondition);
  CHECK(Contains(store.status().message(), dir.path()));
  CHECK(Contains(store.status().message(), "newer tccd"));
}

TEST_CASE("an unknown schema version is refused", "[cache][store][open]") {
  TempDir dir;
  { OpenOrDie(dir.path()); }
  const std::string version = GENERATE(std::string("garbage"), std::string("0"));
  RawPut(dir.path(), kMetaColumnFamily, kSchemaVersionKey, version);
  TCCD_REQUIRE_CODE(Store::Open({.path = dir.path()}), absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("a RocksDB database that is not a tccd cache is refused", "[cache][store][open]") {
  TempDir dir;
  RawPut(dir.path(), "default", "someone else's", "data");
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open({.path = dir.path()});
  TCCD_REQUIRE_CODE(store, absl::StatusCode::kFailedPrecondition);
  CHECK(Contains(store.status().message(), "schema version"));
}

TEST_CASE("unusable paths give errors naming the path", "[cache][store][open]") {
  TempDir dir;
  SECTION("empty path") {
    TCCD_REQUIRE_CODE(Store::Open({.path = ""}), absl::StatusCode::kInvalidArgument);
  }
  SECTION("a regular file") {
    const std::string file = dir.Sub("file");
    std::ofstream(file) << "not a directory";
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open({.path = file});
    REQUIRE_FALSE(store.ok());
    CHECK(Contains(store.status().message(), file));
  }
  SECTION("below a regular file") {
    const std::string file = dir.Sub("file");
    std::ofstream(file) << "not a directory";
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open({.path = file + "/cache"});
    REQUIRE_FALSE(store.ok());
    CHECK(Contains(store.status().message(), file));
  }
  SECTION("not writable") {
    if (geteuid() == 0)
      SUCCEED("root writes anywhere; nothing to check");
    else {
      const std::string ro = dir.Sub("ro");
      REQUIRE(mkdir(ro.c_str(), 0555) == 0);
      absl::StatusOr<std::unique_ptr<Store>> store = Store::Open({.path = ro});
      TCCD_REQUIRE_CODE(store, absl::StatusCode::kPermissionDenied);
      CHECK(Contains(store.status().message(), ro));
    }
  }
}

TEST_CASE("a new cache dir is created, parents included", "[cache][store][open]") {
  TempDir dir;
  auto store = OpenOrDie(dir.Sub("a/b/cache"));
  TCCD_REQUIRE_OK(store->PutBlob("x"));
}

TEST_CASE("a closed store refuses work and Close is idempotent", "[cache][store][open]") {
  TempDir dir;
  auto store = OpenOrDie(dir.path());
  const std::string digest = *store->PutBlob("x");
  TCCD_REQUIRE_OK(store->Close());
  TCCD_REQUIRE_OK(store->Close());
  TCCD_REQUIRE_CODE(store->GetBlob(digest), absl::StatusCode::kFailedPrecondition);
  TCCD_REQUIRE_CODE(store->PutBlob("y"), absl::StatusCode::kFailedPrecondition);
  TCCD_REQUIRE_CODE(store->GetManifest(digest), absl::StatusCode::kFailedPrecondition);
  TCCD_REQUIRE_CODE(store->RecordJobUse("job", digest, true, 1),
                    absl::StatusCode::kFailedPrecondition);
  TCCD_REQUIRE_CODE(store->GetJob("job"), absl::StatusCode::kFailedPrecondition);
  CHECK_FALSE(store->HasBlob(digest));
  CHECK(store->GetUsage().blobs == 0);
}

TEST_CASE("negative block cache size is INVALID_ARGUMENT", "[cache][store][open]") {
  TempDir dir;
  TCCD_REQUIRE_CODE(Store::Open({.path = dir.path(), .block_cache_bytes = -1}),
                    absl::StatusCode::kInvalidArgument);
  // Zero disables the block cache.
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::Open({.path = dir.path(), .block_cache_bytes = 0});
  TCCD_REQUIRE_OK(store);
  TCCD_REQUIRE_OK((*store)->PutBlob("x"));
}

}  // namespace
}  // namespace tccd::cache

// Blobs: round trip, idempotence, digest checks on write and read, hostile
// digests.
#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "cache/schema.h"
#include "cache/store.h"
#include "tests/cache/test_util.h"

namespace tccd::cache {
namespace {

using testing::OpenOrDie;
using testing::RawGet;
using testing::RawPut;
using testing::TempDir;

std::string RandomBytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string bytes(n, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  return bytes;
}

TEST_CASE("PutBlob then GetBlob returns the bytes", "[cache][store][blobs]") {
  TempDir dir;
  auto store = OpenOrDie(dir.path());
  // Small values stay in SSTs; large ones go to RocksDB blob files.
  const std::string bytes =
      GENERATE(std::string(""), std::string("hello\0world", 11), RandomBytes(1 << 20, 7));

  absl::StatusOr<std::string> digest = store->PutBlob(bytes);
  TCCD_REQUIRE_OK(digest);
  CHECK(*digest == Sha256Hex(bytes));
  CHECK(store->HasBlob(*digest));
  absl::StatusOr<std::string> read = store->GetBlob(*digest);
  TCCD_REQUIRE_OK(read);
  CHECK(*read == bytes);
}

TEST_CASE("PutBlob is idempotent", "[cache][store][blobs]") {
  TempDir dir;
  auto store = OpenOrDie(dir.path());
  absl::StatusOr<std::string> first = store->PutBlob("same bytes");
  absl::StatusOr<std::string> second = store->PutBlob("same bytes", Sha256Hex("same bytes"));
  TCCD_REQUIRE_OK(first);
  TCCD_REQUIRE_OK(second);
  CHECK(*first == *second);
  CHECK(*store->GetBlob(*first) == "same bytes");
  CHECK(store->GetUsage().blobs == 1);
}

TEST_CASE("PutBlob with a wrong expected digest stores nothing", "[cache][store][blobs]") {
  TempDir dir;
  auto store = OpenOrDie(dir.path());
  const std::string wrong = Sha256Hex("other bytes");
  TCCD_REQUIRE_CODE(store->PutBlob("bytes", wrong), absl::StatusCode::kDataLoss);
  CHECK_FALSE(store->HasBlob(Sha256Hex("bytes")));
  CHECK_FALSE(store->HasBlob(wrong));
  TCCD_REQUIRE_CODE(store->GetBlob(Sha256Hex("bytes")), absl::StatusCode::kNotFound);
  CHECK(store->GetUsage().blobs == 0);
}

TEST_CASE("GetBlob of an unknown digest is NOT_FOUND", "[cache][store][blobs]") {
  TempDir dir;
  auto store = OpenOrDie(dir.path());
  TCCD_REQUIRE_CODE(store->GetBlob(Sha256Hex("never stored")), absl::StatusCode::kNotFound);
  CHECK_FALSE(store->HasBlob(Sha256Hex("never stored")));
}

TEST_CASE("malformed digests are INVALID_ARGUMENT, never a crash", "[cache][store][blobs]") {
  TempDir dir;
  auto store = OpenOrDie(dir.path());
  const std::string good = *store->PutBlob("x");
  std::string upper = good;
  for (char& c : upper) c = static_cast<char>(toupper(c));
  const std::string bad =
      GENERATE_COPY(std::string(""), good.substr(1), good + "0", upper, std::string(64, 'g'),
                    std::string(63, '0') + std::string(1, '\0'), std::string(64, '\xff'),
                    std::string("../../../../etc/passwd"), std::string(1 << 16, 'a'));

  TCCD_REQUIRE_CODE(store->GetBlob(bad), absl::StatusCode::kInvalidArgument);
  CHECK_FALSE(store->HasBlob(bad));
  if (!bad.empty()) {  // an empty expected digest means "not given"
    TCCD_REQUIRE_CODE(store->PutBlob("x", bad), absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("a blob corrupted on disk is detected, dropped and reported NOT_FOUND",
          "[cache][store][blobs]") {
  TempDir dir;
  const std::string bytes = GENERATE(std::string("the real artifact"), RandomBytes(100000, 3));
  const std::string digest = Sha256Hex(bytes);
  {
    auto store = OpenOrDie(dir.path());
    TCCD_REQUIRE_OK(store->PutBlob(bytes));
  }
  RawPut(dir.path(), kBlobsColumnFamily, digest, "tampered bytes");

  SECTION("GetBlob") {
    auto store = OpenOrDie(dir.path());
    absl::StatusOr<std::string> read = store->GetBlob(digest);
    TCCD_REQUIRE_CODE(read, absl::StatusCode::kNotFound);
    CHECK(read.status().message().find("corrupt") != absl::string_view::npos);
    CHECK_FALSE(store->HasBlob(digest));
    TCCD_REQUIRE_OK(store->Close());
    CHECK_FALSE(RawGet(dir.path(), kBlobsColumnFamily, digest).has_value());  // deleted
  }
  SECTION("HasBlob") {
    auto store = OpenOrDie(dir.path());
    CHECK_FALSE(store->HasBlob(digest));
    TCCD_REQUIRE_OK(store->Close());
    CHECK_FALSE(RawGet(dir.path(), kBlobsColumnFamily, digest).has_value());
  }
  SECTION("PutBlob of the right bytes repairs it") {
    auto store = OpenOrDie(dir.path());
    TCCD_REQUIRE_OK(store->PutBlob(bytes));
    absl::StatusOr<std::string> read = store->GetBlob(digest);
    TCCD_REQUIRE_OK(read);
    CHECK(*read == bytes);
  }
  SECTION("verify_on_read=false serves what is stored") {
    absl::StatusOr<std::unique_ptr<Store>> store =
        Store::Open({.path = dir.path(), .verify_on_read = false});
    TCCD_REQUIRE_OK(store);
    absl::StatusOr<std::string> read = (*store)->GetBlob(digest);
    TCCD_REQUIRE_OK(read);
    CHECK(*read == "tampered bytes");
  }
}

}  // namespace
}  // namespace tccd::cache

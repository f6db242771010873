// Manifests: stored only when their blobs are, served only while their blobs
// are intact.
#include <catch2/catch.hpp>
#include <string>

#include "cache/schema.h"
#include "cache/store.h"
#include "google/protobuf/util/message_differencer.h"
#include "tests/cache/test_util.h"

namespace tccd::cache {
namespace {

using google::protobuf::util::MessageDifferencer;
using testing::MakeManifest;
using testing::OpenOrDie;
using testing::RawGet;
using testing::RawPut;
using testing::TempDir;

const std::string kKey = Sha256Hex("compile key");

TEST_CASE("PutManifest then GetManifest returns it", "[cache][store][manifests]") {
  TempDir dir;
  auto store = OpenOrDie(dir.path());
  const std::string a = *store->PutBlob("kernels.so bytes");
  const std::string b = *store->PutBlob("ir dump");
  v1::Manifest manifest = MakeManifest(kKey, {a, b});
  manifest.mutable_artifacts(0)->set_size(16);  // sizes, when given, must match

  TCCD_REQUIRE_OK(store->PutManifest(kKey, manifest));
  absl::StatusOr<v1::Manifest> read = store->GetManifest(kKey);
  TCCD_REQUIRE_OK(read);
  CHECK(MessageDifferencer::Equals(*read, manifest));
  CHECK(store->GetUsage().manifests == 1);
}

TEST_CASE("GetManifest of an unknown key is NOT_FOUND", "[cache][store][manifests]") {
  TempDir dir;
  auto store = OpenOrDie(dir.path());
  TCCD_REQUIRE_CODE(store->GetManifest(kKey), absl::StatusCode::kNotFound);
}

TEST_CASE("PutManifest naming a missing blob is FAILED_PRECONDITION", "[cache][store][manifests]") {
  TempDir dir;
  auto store = OpenOrDie(dir.path());
  const std::string present = *store->PutBlob("present");
  const std::string missing = Sha256Hex("never stored");
  absl::Status status = store->PutManifest(kKey, MakeManifest(kKey, {present, missing}));
  TCCD_REQUIRE_CODE(status, absl::StatusCode::kFailedPrecondition);
  CHECK(status.message().find(missing) != absl::string_view::npos);
  TCCD_REQUIRE_CODE(store->GetManifest(kKey), absl::StatusCode::kNotFound);
}

TEST_CASE("PutManifest rejects malformed input", "[cache][store][manifests]") {
  TempDir dir;
  auto store = OpenOrDie(dir.path());
  const std::string blob = *store->PutBlob("blob");

  SECTION("malformed key") {
    TCCD_REQUIRE_CODE(store->PutManifest("KEY", MakeManifest("", {blob})),
                      absl::StatusCode::kInvalidArgument);
    TCCD_REQUIRE_CODE(store->GetManifest("KEY"), absl::StatusCode::kInvalidArgument);
  }
  SECTION("manifest.key differs from the key") {
    TCCD_REQUIRE_CODE(store->PutManifest(kKey, MakeManifest(Sha256Hex("other"), {blob})),
                      absl::StatusCode::kInvalidArgument);
  }
  SECTION("malformed artifact digest") {
    TCCD_REQUIRE_CODE(store->PutManifest(kKey, MakeManifest(kKey, {blob, "not-a-digest"})),
                      absl::StatusCode::kInvalidArgument);
  }
  SECTION("declared size differs from the blob's") {
    v1::Manifest manifest = MakeManifest(kKey, {blob});
    manifest.mutable_artifacts(0)->set_size(5);
    TCCD_REQUIRE_CODE(store->PutManifest(kKey, manifest), absl::StatusCode::kInvalidArgument);
  }
  TCCD_REQUIRE_CODE(store->GetManifest(kKey), absl::StatusCode::kNotFound);
}

TEST_CASE("a manifest whose blob is corrupt on disk is NOT_FOUND", "[cache][store][manifests]") {
  TempDir dir;
  std::string good;
  std::string bad;
  {
    auto store = OpenOrDie(dir.path());
    good = *store->PutBlob("good artifact");
    bad = *store->PutBlob("artifact to corrupt");
    TCCD_REQUIRE_OK(store->PutManifest(kKey, MakeManifest(kKey, {good, bad})));
  }
  RawPut(dir.path(), kBlobsColumnFamily, bad, "artifact to c0rrupt");

  auto store = OpenOrDie(dir.path());
  absl::StatusOr<v1::Manifest> read = store->GetManifest(kKey);
  TCCD_REQUIRE_CODE(read, absl::StatusCode::kNotFound);
  CHECK(read.status().message().find(bad) != absl::string_view::npos);
  CHECK_FALSE(store->HasBlob(bad));  // dropped by GetManifest
  CHECK(store->HasBlob(good));

  // Recompiling rewrites the blob; the manifest is served again.
  TCCD_REQUIRE_OK(store->PutBlob("artifact to corrupt"));
  TCCD_REQUIRE_OK(store->GetManifest(kKey));
}

TEST_CASE("an unreadable manifest is NOT_FOUND and dropped", "[cache][store][manifests]") {
  TempDir dir;
  { auto store = OpenOrDie(dir.path()); }
  RawPut(dir.path(), kActionsColumnFamily, kKey, std::string("\xff\xff\xff\xff garbage", 13));
  auto store = OpenOrDie(dir.path());
  TCCD_REQUIRE_CODE(store->GetManifest(kKey), absl::StatusCode::kNotFound);
  TCCD_REQUIRE_OK(store->Close());
  CHECK_FALSE(RawGet(dir.path(), kActionsColumnFamily, kKey).has_value());
}

}  // namespace
}  // namespace tccd::cache

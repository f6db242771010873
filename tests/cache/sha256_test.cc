// Sha256Hex against FIPS 180-2 vectors, the incremental hasher, and digest
// validation.
#include <catch2/catch.hpp>
#include <string>

#include "cache/digest.h"
#include "cache/store.h"
#include "tests/cache/test_util.h"

namespace tccd::cache {
namespace {

TEST_CASE("Sha256Hex matches known vectors", "[cache][sha256]") {
  CHECK(Sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(Sha256Hex(std::string("a\0b", 3)) != Sha256Hex("a"));
}

TEST_CASE("Sha256Hasher fed in pieces equals one-shot", "[cache][sha256]") {
  const std::string data(100000, 'x');
  Sha256Hasher hasher;
  hasher.Update(absl::string_view(data).substr(0, 1));
  hasher.Update(absl::string_view(data).substr(1, 4095));
  hasher.Update(absl::string_view(data).substr(4096));
  absl::StatusOr<std::string> digest = hasher.FinishHex();
  TCCD_REQUIRE_OK(digest);
  CHECK(*digest == Sha256Hex(data));
  CHECK_FALSE(hasher.FinishHex().ok());  // a finished hasher does not hash again
}

TEST_CASE("IsDigestHex accepts only 64 lowercase hex characters", "[cache][sha256]") {
  CHECK(IsDigestHex(Sha256Hex("abc")));
  CHECK(IsDigestHex(std::string(64, '0')));
  CHECK_FALSE(IsDigestHex(""));
  CHECK_FALSE(IsDigestHex(std::string(63, 'a')));
  CHECK_FALSE(IsDigestHex(std::string(65, 'a')));
  CHECK_FALSE(IsDigestHex(std::string(64, 'A')));
  CHECK_FALSE(IsDigestHex(std::string(64, 'g')));
  CHECK_FALSE(IsDigestHex(std::string(63, 'a') + '\0'));
  CHECK_FALSE(IsDigestHex(std::string(62, 'a') + "/."));

  absl::Status status = ValidateDigestHex("blob digest", std::string(1000, '\xff'));
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(status.message().size() < 400);  // hostile input is shown truncated
}

}  // namespace
}  // namespace tccd::cache

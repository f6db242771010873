// ParseRedisUrl: the --shared-cache forms accepted, and errors that say what is wrong.
#include <catch2/catch.hpp>

#include "cache/redis_client.h"

namespace tccd::cache {
namespace {

TEST_CASE("redis URLs: host, port, database", "[cache][redis]") {
  absl::StatusOr<RedisEndpoint> e = ParseRedisUrl("redis://10.0.0.5:7000/3");
  REQUIRE(e.ok());
  CHECK(e->host == "10.0.0.5");
  CHECK(e->port == 7000);
  CHECK(e->db == 3);
  CHECK(e->ToString() == "redis://10.0.0.5:7000/3");

  e = ParseRedisUrl("redis://cache.internal");
  REQUIRE(e.ok());
  CHECK(e->host == "cache.internal");
  CHECK(e->port == 6379);
  CHECK(e->db == 0);

  e = ParseRedisUrl("redis://tccd:s3cr/t@p@10.0.0.5:7000/1");
  REQUIRE(e.ok());
  CHECK(e->user == "tccd");
  CHECK(e->password == "s3cr/t@p");
  CHECK(e->host == "10.0.0.5");
  CHECK(e->db == 1);
  CHECK(e->ToString() == "redis://tccd:***@10.0.0.5:7000/1");  // never the password

  e = ParseRedisUrl("redis://:pw@h");
  REQUIRE(e.ok());
  CHECK(e->user.empty());
  CHECK(e->password == "pw");

  e = ParseRedisUrl("redis://[::1]:6380/");
  REQUIRE(e.ok());
  CHECK(e->host == "::1");
  CHECK(e->port == 6380);
  CHECK(e->ToString() == "redis://[::1]:6380/0");
}

TEST_CASE("redis URLs: rediss:// is TLS", "[cache][redis]") {
  absl::StatusOr<RedisEndpoint> e = ParseRedisUrl("rediss://:pw@cache.example:6380/1");
  REQUIRE(e.ok());
  CHECK(e->tls);
  CHECK(e->host == "cache.example");
  CHECK(e->port == 6380);
  CHECK(e->db == 1);
  CHECK(e->ToString() == "rediss://:***@cache.example:6380/1");
  CHECK_FALSE(ParseRedisUrl("redis://h:6379")->tls);
}

TEST_CASE("redis URLs: bad ones are INVALID_ARGUMENT with a reason", "[cache][redis]") {
  auto message_of = [](const char* url) {
    absl::StatusOr<RedisEndpoint> e = ParseRedisUrl(url);
    REQUIRE_FALSE(e.ok());
    CHECK(e.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(e.status().message());
  };
  CHECK_THAT(message_of("http://h:6379"), Catch::Contains("redis://HOST:PORT"));
  CHECK_THAT(message_of("redis://:6379"), Catch::Contains("no host"));
  CHECK_THAT(message_of("redis://h:0"), Catch::Contains("bad port"));
  CHECK_THAT(message_of("redis://h:99999"), Catch::Contains("bad port"));
  CHECK_THAT(message_of("redis://h:6379/x"), Catch::Contains("database"));
  CHECK_THAT(message_of("redis://[::1:6379"), Catch::Contains("redis://HOST:PORT"));
  const std::string no_colon = message_of("redis://secretpw@h:6379");
  CHECK_THAT(no_colon, Catch::Contains("PASSWORD@"));
  CHECK(no_colon.find("secretpw") == std::string::npos);
}

}  // namespace
}  // namespace tccd::cache

// TokenAuthorizer: the --tokens file format, bearer headers, and the per-method rules.
#include "server/auth_tokens.h"

#include <catch2/catch.hpp>

namespace tccd::server {
namespace {

constexpr char kFile[] = R"(# comment
compile-token-0123456789 compile
read-token-0123456789    read
admin-token-0123456789   admin

team-a-token-0123456789  compile  team-a/
)";

TEST_CASE("tokens: roles and prefixes from the file", "[auth]") {
  auto tokens = TokenAuthorizer::Parse(kFile, "tokens");
  REQUIRE(tokens.ok());
  CHECK((*tokens)->size() == 4);
  auto who = (*tokens)->Authenticate("Bearer team-a-token-0123456789");
  REQUIRE(who.ok());
  CHECK(who->role == Role::kCompile);
  CHECK(who->job_prefix == "team-a/");
  CHECK(who->name == "tokens:6");
  CHECK((*tokens)->Authenticate("Bearer read-token-0123456789")->role == Role::kRead);
  CHECK((*tokens)->Authenticate("Bearer admin-token-0123456789")->role == Role::kAdmin);
}

TEST_CASE("tokens: missing, malformed and unknown are UNAUTHENTICATED", "[auth]") {
  auto tokens = TokenAuthorizer::Parse(kFile, "tokens");
  REQUIRE(tokens.ok());
  for (const char* header : {"", "compile-token-0123456789", "Basic compile-token-0123456789",
                             "Bearer compile-token-012345678", "Bearer "}) {
    INFO(header);
    CHECK((*tokens)->Authenticate(header).status().code() == absl::StatusCode::kUnauthenticated);
  }
}

TEST_CASE("tokens: bad files are refused with the line", "[auth]") {
  auto message = [](const char* text) {
    auto tokens = TokenAuthorizer::Parse(text, "f");
    REQUIRE_FALSE(tokens.ok());
    CHECK(tokens.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(tokens.status().message());
  };
  CHECK_THAT(message("only-one-field-0123456789\n"), Catch::Contains("f:1"));
  CHECK_THAT(message("# x\nshort compile\n"), Catch::Contains("shorter than 16"));
  CHECK_THAT(message("token-0123456789abc root\n"), Catch::Contains("unknown role"));
  CHECK_THAT(message("token-0123456789abc read\ntoken-0123456789abc admin\n"),
             Catch::Contains("twice"));
  CHECK_THAT(message("# nothing\n"), Catch::Contains("no tokens"));
}

TEST_CASE("tokens: per-method rules", "[auth]") {
  const Identity any{.role = Role::kCompile, .job_prefix = "", .name = "t:1"};
  const Identity team{.role = Role::kCompile, .job_prefix = "team-a/", .name = "t:2"};
  const Identity reader{.role = Role::kRead, .job_prefix = "", .name = "t:3"};
  const Identity admin{.role = Role::kAdmin, .job_prefix = "", .name = "t:4"};
  CHECK(AllowCompile(any, "").ok());
  CHECK(AllowCompile(team, "team-a/x").ok());
  CHECK(AllowCompile(team, "team-b/x").code() == absl::StatusCode::kPermissionDenied);
  CHECK(AllowCompile(team, "").code() == absl::StatusCode::kPermissionDenied);
  CHECK(AllowStats(admin).ok());
  for (const Identity* who : {&any, &team, &reader}) {
    CHECK(AllowStats(*who).code() == absl::StatusCode::kPermissionDenied);
  }
  CHECK(AllowJob(admin, "team-b/x").ok());
  CHECK(AllowJob(team, "team-b/x").code() == absl::StatusCode::kPermissionDenied);
  CHECK(AllowJob(team, "team-a/x").ok());
}

}  // namespace
}  // namespace tccd::server

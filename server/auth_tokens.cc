// TokenAuthorizer; see auth_tokens.h.
#include "server/auth_tokens.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cache/store.h"
#include "spdlog/spdlog.h"

namespace tccd::server {
namespace {

const char* RoleName(Role role) {
  switch (role) {
    case Role::kRead:
      return "read";
    case Role::kCompile:
      return "compile";
    case Role::kAdmin:
      return "admin";
  }
  return "?";
}

absl::Status CheckJobPrefix(const Identity& who, absl::string_view job_id, absl::string_view what) {
  if (who.job_prefix.empty()) return absl::OkStatus();
  if (job_id.empty()) {
    return absl::PermissionDeniedError(
        absl::StrCat("this token (", who.name, ") is limited to job ids starting with \"",
                     who.job_prefix, "\"; the ", what, " names no job (set TCCD_JOB_ID)"));
  }
  if (!absl::StartsWith(job_id, who.job_prefix)) {
    return absl::PermissionDeniedError(
        absl::StrCat("this token (", who.name, ") is limited to job ids starting with \"",
                     who.job_prefix, "\"; the ", what, " names another job"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<TokenAuthorizer>> TokenAuthorizer::LoadFile(
    const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("--tokens ", path, ": cannot be read"));
  }
  std::stringstream text;
  text << in.rdbuf();
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    spdlog::warn("--tokens {}: readable by group or others (mode {:o}); chmod 600 it", path,
                 st.st_mode & 0777);
  }
  return Parse(text.str(), path);
}

absl::StatusOr<std::unique_ptr<TokenAuthorizer>> TokenAuthorizer::Parse(absl::string_view text,
                                                                        absl::string_view source) {
  auto authorizer = std::unique_ptr<TokenAuthorizer>(new TokenAuthorizer());
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    const std::string where = absl::StrCat(source, ":", line_number);
    if (fields.size() < 2 || fields.size() > 3) {
      return absl::InvalidArgumentError(absl::StrCat("--tokens ", where,
                                                     ": expected \"TOKEN ROLE [JOB_PREFIX]\", got ",
                                                     fields.size(), " fields"));
    }
    if (fields[0].size() < 16) {
      return absl::InvalidArgumentError(
          absl::StrCat("--tokens ", where,
                       ": the token is shorter than 16 characters (use e.g. "
                       "`openssl rand -hex 32`)"));
    }
    Identity identity;
    identity.name = where;
    if (fields[1] == "compile") {
      identity.role = Role::kCompile;
    } else if (fields[1] == "read") {
      identity.role = Role::kRead;
    } else if (fields[1] == "admin") {
      identity.role = Role::kAdmin;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("--tokens ", where, ": unknown role \"",
                                                     fields[1], "\" (compile, read or admin)"));
    }
    if (fields.size() == 3) identity.job_prefix = std::string(fields[2]);
    if (!authorizer->tokens_.emplace(cache::Sha256Hex(fields[0]), std::move(identity)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("--tokens ", where, ": the token appears twice"));
    }
  }
  if (authorizer->tokens_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tokens ", source, ": no tokens (every call would be refused)"));
  }
  return authorizer;
}

absl::StatusOr<Identity> TokenAuthorizer::Authenticate(absl::string_view header) const {
  if (header.empty()) {
    return absl::UnauthenticatedError(
        "this tccd requires a token: send \"authorization: Bearer TOKEN\" (the client reads "
        "TCCD_TOKEN or TCCD_TOKEN_FILE)");
  }
  absl::string_view token = header;
  if (!absl::ConsumePrefix(&token, "Bearer ") && !absl::ConsumePrefix(&token, "bearer ")) {
    return absl::UnauthenticatedError("the authorization header is not \"Bearer TOKEN\"");
  }
  auto it = tokens_.find(cache::Sha256Hex(absl::StripAsciiWhitespace(token)));
  if (it == tokens_.end()) return absl::UnauthenticatedError("unknown token");
  return it->second;
}

absl::Status AllowCompile(const Identity& who, absl::string_view job_id) {
  return CheckJobPrefix(who, job_id, "request");
}

absl::Status AllowStats(const Identity& who) {
  if (who.role == Role::kAdmin) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat("GetStats needs an admin token; this one (",
                                                  who.name, ") has role ", RoleName(who.role)));
}

absl::Status AllowWrite(const Identity& who) {
  if (who.role != Role::kRead) return absl::OkStatus();
  return absl::PermissionDeniedError(
      absl::StrCat("a read token (", who.name, ") cannot store anything"));
}

absl::Status AllowJobWrite(const Identity& who, absl::string_view job_id) {
  if (absl::Status allowed = AllowWrite(who); !allowed.ok()) return allowed;
  return CheckJobPrefix(who, job_id, "profile");
}

absl::Status AllowJob(const Identity& who, absl::string_view job_id) {
  if (who.role == Role::kAdmin) return absl::OkStatus();
  return CheckJobPrefix(who, job_id, "job listing");
}

}  // namespace tccd::server

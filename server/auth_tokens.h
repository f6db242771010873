// TokenAuthorizer: who may call what, from `--tokens FILE` (transport-neutral: grpc_server.cc
// hands it the `authorization` header and the request's job id).
//
// The file has one token per line, `TOKEN ROLE [JOB_PREFIX]`; blank lines and lines starting
// with '#' are ignored. Roles:
//   compile  compile and read (Compile, FetchArtifact, GetJob of its jobs)
//   read     cache hits only: a Compile that misses is PERMISSION_DENIED and compiles nothing
//   admin    everything, for every job: GetStats, GetJob of any job
// Dynamic profiles: PutDynamicProfile needs compile or admin (AllowJobWrite), GetDynamicProfile
// is open to every role (AllowJob); both within the token's JOB_PREFIX.
// JOB_PREFIX limits the job ids a token may use (Compile's job_id, GetJob's job_id): a request
// naming another job, or no job, is PERMISSION_DENIED. Clients send
// `authorization: Bearer TOKEN`; no header or an unknown token is UNAUTHENTICATED.
//
// Tokens are kept only as SHA-256 digests, so a lookup's timing says nothing about how much of
// a wrong token matched.
//
// Thread-safety: immutable after Load; safe from any thread.
#pragma once

#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tccd::server {

enum class Role { kRead, kCompile, kAdmin };

struct Identity {
  Role role = Role::kRead;
  std::string job_prefix;  // empty: any job
  std::string name;        // for logs: "<file>:<line>", never the token
};

class TokenAuthorizer {
 public:
  // Reads and parses `path`. INVALID_ARGUMENT naming the line for a malformed one,
  // NOT_FOUND/PERMISSION_DENIED if it cannot be read. Warns if the file is readable by others.
  static absl::StatusOr<std::unique_ptr<TokenAuthorizer>> LoadFile(const std::string& path);
  // Parses the file's text; `source` names it in errors.
  static absl::StatusOr<std::unique_ptr<TokenAuthorizer>> Parse(absl::string_view text,
                                                                absl::string_view source);

  // The caller of a request whose `authorization` metadata is `header` (empty if absent).
  absl::StatusOr<Identity> Authenticate(absl::string_view header) const;

  size_t size() const { return tokens_.size(); }

 private:
  absl::flat_hash_map<std::string, Identity> tokens_;  // SHA-256 of the token -> identity
};

// Per-method rules (see the file comment). OK or PERMISSION_DENIED with a message naming what
// the token lacks.
absl::Status AllowCompile(const Identity& who, absl::string_view job_id);
absl::Status AllowStats(const Identity& who);
// Writes that are not compiles (PutAotRecipe): compile or admin tokens.
absl::Status AllowWrite(const Identity& who);
absl::Status AllowJob(const Identity& who, absl::string_view job_id);
// PutDynamicProfile: compile or admin tokens, for a job their prefix allows.
absl::Status AllowJobWrite(const Identity& who, absl::string_view job_id);

}  // namespace tccd::server

// Small filesystem helpers shared by the daemon's startup code.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tccd::server {

// mkdir -p: creates `dir` and any missing parents, each with mode 0700 (tccd's
// socket and cache directories are private to their user). OK if `dir` already
// is a directory; FAILED_PRECONDITION, naming the path and the reason,
// otherwise.
absl::Status MakeDirectories(const std::string& dir);

// The contents of a small file (a certificate, a key): NOT_FOUND naming the path if it cannot
// be read, INVALID_ARGUMENT if it is empty or over 1 MiB.
absl::StatusOr<std::string> ReadSmallFile(const std::string& path);

}  // namespace tccd::server

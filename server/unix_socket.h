// UnixSocketClaim: makes a unix socket path safe to bind, and cleans it up
// afterwards.
//
// gRPC unlinks whatever socket file is at the path when it binds, which would
// silently steal the socket of a live tccd. So before binding, tccd claims the
// path:
//   1. creates the parent directory (0700) if missing; for the default socket,
//   checks that the
//      directory is a real directory owned by this user (it may sit in a shared
//      /tmp);
//   2. takes an exclusive flock on "PATH.lock" (kept for the daemon's lifetime;
//   the lock file
//      itself stays, as removing lock files races), so two tccds starting at
//      once cannot both win;
//   3. if PATH exists: a socket that accepts a connection means a live server
//   (an error); a
//      socket that refuses is stale and removed; anything else is an error
//      (never deleted).
// After a successful bind, MarkBound() records the socket file's identity, and
// Release() (or the destructor) removes the file only if it is still that one.
#pragma once

#include <sys/types.h>

#include <string>

#include "absl/status/statusor.h"

namespace tccd::server {

class UnixSocketClaim {
 public:
  // FAILED_PRECONDITION if another server holds or answers on `path`, or the
  // path or its directory is unusable; the message says which and what to do.
  static absl::StatusOr<UnixSocketClaim> Claim(const std::string& path, bool private_directory);

  UnixSocketClaim(UnixSocketClaim&& other) noexcept;
  UnixSocketClaim& operator=(UnixSocketClaim&& other) noexcept;
  UnixSocketClaim(const UnixSocketClaim&) = delete;
  UnixSocketClaim& operator=(const UnixSocketClaim&) = delete;
  ~UnixSocketClaim();  // Release()

  // Call once the server is bound: remembers which file to remove at Release.
  void MarkBound();
  // Removes the socket file if it is still the one we bound, and drops the
  // lock. Idempotent.
  void Release();

  const std::string& path() const { return path_; }

 private:
  UnixSocketClaim(std::string path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}

  std::string path_;
  int lock_fd_ = -1;
  bool bound_ = false;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

}  // namespace tccd::server

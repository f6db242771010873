// UnixSocketClaim; see unix_socket.h.
#include "server/unix_socket.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/fs_util.h"
#include "spdlog/spdlog.h"

namespace tccd::server {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

// The default socket directory may be /tmp/tccd-$UID, in a world-writable /tmp:
// refuse one that another user created or that is a symlink, and make ours
// private.
absl::Status CheckPrivateDirectory(const std::filesystem::path& dir) {
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot stat ", dir.string(), ": ", ErrnoText(errno)));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(dir.string(), " is not a directory (a symlink?); remove it or pass --listen"));
  }
  if (st.st_uid != getuid()) {
    return absl::FailedPreconditionError(absl::StrCat(dir.string(), " belongs to uid ", st.st_uid,
                                                      ", not to this user (uid ", getuid(),
                                                      "); remove it or pass --listen"));
  }
  if ((st.st_mode & 077) != 0 && chmod(dir.c_str(), 0700) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot chmod 0700 ", dir.string(), ": ", ErrnoText(errno)));
  }
  return absl::OkStatus();
}

// True if something accepts connections on the unix socket `path`.
bool SomethingListens(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), std::min(path.size(), sizeof(addr.sun_path) - 1));
  // A unix-socket connect does not wait for accept(): it succeeds at once when
  // a listener exists (even with a full backlog it fails with EAGAIN, not
  // ECONNREFUSED).
  int rc = connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  int err = errno;
  close(fd);
  return rc == 0 || err == EAGAIN;
}

}  // namespace

absl::StatusOr<UnixSocketClaim> UnixSocketClaim::Claim(const std::string& path,
                                                       bool private_directory) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (absl::Status made = MakeDirectories(dir.string()); !made.ok()) return made;
  if (private_directory) {
    if (absl::Status checked = CheckPrivateDirectory(dir); !checked.ok()) return checked;
  }

  const std::string lock_path = path + ".lock";
  int lock_fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock_fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open lock file ", lock_path, ": ", ErrnoText(errno)));
  }
  UnixSocketClaim claim(path,
                        lock_fd);  // closes the lock on every error path below
  if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return absl::FailedPreconditionError(
          absl::StrCat("another tccd is already serving unix:", path, " (it holds ", lock_path,
                       "); stop it first or pass a different --listen"));
    }
    return absl::FailedPreconditionError(
        absl::StrCat("cannot lock ", lock_path, ": ", ErrnoText(errno)));
  }

  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat(path,
                       " exists and is not a socket; refusing to replace it "
                       "(remove it yourself or pass a different --listen)"));
    }
    if (SomethingListens(path)) {
      return absl::FailedPreconditionError(
          absl::StrCat("a server is already listening on unix:", path,
                       " (another tccd?); stop it first or pass a different --listen"));
    }
    if (unlink(path.c_str()) != 0 && errno != ENOENT) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot remove stale socket ", path, ": ", ErrnoText(errno)));
    }
    spdlog::info("removed stale socket {} (nothing was listening on it)", path);
  } else if (errno != ENOENT) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot stat ", path, ": ", ErrnoText(errno)));
  }
  return claim;
}

UnixSocketClaim::UnixSocketClaim(UnixSocketClaim&& other) noexcept
    : path_(std::move(other.path_)),
      lock_fd_(std::exchange(other.lock_fd_, -1)),
      bound_(std::exchange(other.bound_, false)),
      dev_(other.dev_),
      ino_(other.ino_) {}

UnixSocketClaim& UnixSocketClaim::operator=(UnixSocketClaim&& other) noexcept {
  if (this != &other) {
    Release();
    path_ = std::move(other.path_);
    lock_fd_ = std::exchange(other.lock_fd_, -1);
    bound_ = std::exchange(other.bound_, false);
    dev_ = other.dev_;
    ino_ = other.ino_;
  }
  return *this;
}

UnixSocketClaim::~UnixSocketClaim() { Release(); }

void UnixSocketClaim::MarkBound() {
  struct stat st;
  if (lstat(path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
    bound_ = true;
    dev_ = st.st_dev;
    ino_ = st.st_ino;
  }
}

void UnixSocketClaim::Release() {
  if (bound_) {
    bound_ = false;
    struct stat st;
    // gRPC may have removed it already at shutdown; never remove a file someone
    // else made.
    if (lstat(path_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_) {
      if (unlink(path_.c_str()) != 0 && errno != ENOENT) {
        spdlog::warn("cannot remove socket {}: {}", path_, ErrnoText(errno));
      }
    }
  }
  if (lock_fd_ >= 0) {
    close(lock_fd_);  // drops the flock
    lock_fd_ = -1;
  }
}

}  // namespace tccd::server

// rocksdb::Status -> absl::Status.
#include "cache/rocks_interop.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tccd::cache {

absl::Status FromRocks(const rocksdb::Status& status, absl::string_view context) {
  if (status.ok()) return absl::OkStatus();
  std::string message = absl::StrCat(context, ": ", status.ToString());
  if (status.IsNotFound()) return absl::NotFoundError(message);
  if (status.IsCorruption()) return absl::DataLossError(message);
  if (status.IsNoSpace()) return absl::ResourceExhaustedError(message);
  if (status.IsBusy() || status.IsTimedOut() || status.IsTryAgain()) {
    return absl::UnavailableError(message);
  }
  return absl::InternalError(message);
}

bool IsLockHeldError(const rocksdb::Status& status) {
  if (!status.IsIOError()) return false;
  const std::string message = status.ToString();
  // env/fs_posix.cc LockFile: "lock hold by current process, ..." when this
  // process already holds it; "While lock file: <dir>/LOCK: <errno text>" when
  // fcntl(F_SETLK) fails because another process does.
  return absl::StrContains(message, "lock hold by current process") ||
         absl::StrContains(message, "While lock file");
}

}  // namespace tccd::cache

// Filesystem helpers; see fs_util.h.
#include "server/fs_util.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"

namespace tccd::server {

absl::Status MakeDirectories(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(dir, " exists and is not a directory"));
  }
  const std::filesystem::path parent = std::filesystem::path(dir).parent_path();
  if (!parent.empty() && parent.string() != dir) {
    if (absl::Status made = MakeDirectories(parent.string()); !made.ok()) return made;
  }
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create directory ", dir, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.empty() || text.size() > (1u << 20)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is ", text.empty() ? "empty" : "over 1 MiB"));
  }
  return text;
}

}  // namespace tccd::server

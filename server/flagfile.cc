// ExpandFlagfiles; see flagfile.h.
#include "server/flagfile.h"

#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace tccd::server {
namespace {

constexpr int kMaxDepth = 8;

absl::Status Expand(const std::vector<std::string>& args, size_t first, int depth,
                    std::vector<std::string>* out) {
  bool literal = false;  // after "--"
  for (size_t i = first; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (literal || arg == "--") {
      literal = true;
      out->push_back(arg);
      continue;
    }
    std::string path;
    if (arg == "--flagfile" || arg == "-flagfile") {
      if (i + 1 >= args.size()) return absl::InvalidArgumentError("--flagfile needs a file");
      path = args[++i];
    } else if (absl::StartsWith(arg, "--flagfile=") || absl::StartsWith(arg, "-flagfile=")) {
      path = arg.substr(arg.find('=') + 1);
    } else {
      out->push_back(arg);
      continue;
    }
    if (path.empty()) return absl::InvalidArgumentError("--flagfile needs a file");
    if (depth >= kMaxDepth) {
      return absl::InvalidArgumentError(
          absl::StrCat("--flagfile ", path, ": flagfiles nested more than ", kMaxDepth, " deep"));
    }
    std::ifstream in(path);
    if (!in) return absl::NotFoundError(absl::StrCat("--flagfile ", path, ": cannot be read"));
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
      std::string trimmed(absl::StripAsciiWhitespace(line));
      if (trimmed.empty() || trimmed[0] == '#') continue;
      lines.push_back(std::move(trimmed));
    }
    RETURN_IF_ERROR(Expand(lines, 0, depth + 1, out));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandFlagfiles(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  if (args.empty()) return out;
  out.push_back(args[0]);
  RETURN_IF_ERROR(Expand(args, 1, 0, &out));
  return out;
}

}  // namespace tccd::server

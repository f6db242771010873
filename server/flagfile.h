// --flagfile FILE: the daemon's config file. absl reads flagfiles itself, but only after our own
// argv handling (dash spellings such as --cache-dir, repeatable --listen), so tccd expands them
// first: every --flagfile=FILE (or --flagfile FILE) in argv is replaced by FILE's lines, one
// argument per line, blank lines and lines starting with '#' skipped, surrounding whitespace
// trimmed. A flagfile may name further flagfiles (up to 8 levels). Arguments after a bare "--"
// are left alone.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tccd::server {

// `args` (argv, program name first) with every flagfile expanded in place. NOT_FOUND naming the
// file if one cannot be read; INVALID_ARGUMENT for --flagfile without a file or nesting too deep.
absl::StatusOr<std::vector<std::string>> ExpandFlagfiles(const std::vector<std::string>& args);

}  // namespace tccd::server

// A structure-aware mutation of a CompileRequest for the request fuzzer: random bytes mostly fail
// to parse as a proto, and a parsed one mostly fails the first graph check, so this changes one
// field of a valid-looking request instead (a size, a stride, a dtype, an argument, a reference,
// an op name seen elsewhere in the corpus, the target...). libprotobuf-mutator is not packaged in
// Debian; this is the part of it we need.
#pragma once

#include <cstdint>
#include <random>

#include "tccd/v1/tccd.pb.h"

namespace tccd::fuzz {

// Applies 1 to 4 random field mutations to `request`. Remembers the op names it sees (in any
// request passed here) and uses them as replacements.
void MutateRequest(v1::CompileRequest& request, std::mt19937_64& rng);

}  // namespace tccd::fuzz

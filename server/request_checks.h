// What the daemon does to a CompileRequest before any compiling: field checks, the CompileInput
// for codegen::Prepare, and the compile key. Transport-free and store-free, so that the request
// fuzzer (tests/fuzz/request_fuzzer.cc) runs exactly this code without a daemon.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "codegen/pipeline.h"
#include "tccd/v1/tccd.pb.h"

namespace tccd::server {

// Field checks that need no parsing (presence, size limits); codegen::Prepare validates the
// graph itself. INVALID_ARGUMENT naming the field.
absl::Status ValidateCompileRequest(const v1::CompileRequest& request);

// What Prepare needs from a request: its graph, target, normalized mode (unset means
// "default"), CompileOptions.extra["fallback_random"] and ["deterministic_algorithms"]. Points
// into `request`.
codegen::CompileInput CompileInputOf(const v1::CompileRequest& request);

// The request's compile key (cache/compile_key.h) from its prepared graph and target, its
// constants' digests, mode and extra options, and the compiler's fingerprint.
std::string ComputeRequestKey(const v1::CompileRequest& request, const codegen::Prepared& prepared,
                              const std::string& compiler_fingerprint);

// The parts of the request's key (see v1::KeyComponents), stored with its entry so that a
// later miss can be explained. Computed from the same inputs as ComputeRequestKey.
v1::KeyComponents ComputeKeyComponents(const v1::CompileRequest& request,
                                       const codegen::Prepared& prepared,
                                       const std::string& compiler_fingerprint);

// A client-supplied string made safe and short for one log line: control bytes become \xNN
// (so a request cannot forge log lines), everything else is kept.
std::string ForLog(absl::string_view text, size_t max_chars = 64);

}  // namespace tccd::server

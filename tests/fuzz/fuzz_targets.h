// The checks the fuzzers run on one input, shared by the libFuzzer entry points
// (*_fuzzer.cc, clang build) and the corpus replay test (replay_test.cc, the normal build, so
// every seed and every past finding is re-checked by CI even where libFuzzer is missing).
//
// Each returns OK when the input was handled correctly (accepted, or rejected with a specific
// code), and an error describing the bug otherwise. Crashes and sanitizer reports are findings
// too, reported by the process itself.
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"

namespace tccd::fuzz {

// bytes -> v1::CompileRequest -> ValidateCompileRequest -> codegen::Prepare -> the compile key
// -> codegen::Lower -> WritePlanDescriptor: everything the daemon does before machine code.
// A finding: INTERNAL or UNKNOWN from any stage, or a malformed key.
absl::Status CheckRequest(const uint8_t* data, size_t size);

// text -> ir::ParseGraph -> PrintGraph -> ParseGraph -> PrintGraph, ir::VerifyGraph. A finding:
// a parse or verifier error that is not INVALID_ARGUMENT, or a printed graph that does not read
// back to the same text.
absl::Status CheckIrText(const uint8_t* data, size_t size);

}  // namespace tccd::fuzz

// The compile key: what makes two Compile requests produce the same artifacts.
//
// Everything that changes the output is in the key: the canonical graph IR (which includes every
// input's and node's sizes, strides, dtype and device type), the codegen target, the options and
// the tccd version. Nothing that does not is: FX placeholder/node names never reach the
// canonical IR, and job id, rank, device index and client host are left out on purpose, so all
// ranks of a job and all jobs of a cluster share one entry.
#pragma once

#include <map>
#include <string>

namespace tccd::cache {

// Bump when the key's composition changes (not when codegen changes: tccd_version covers that).
//   1: initial layout.
inline constexpr int kCompileKeyVersion = 1;

struct CompileKeyParts {
  std::string canonical_graph;  // ir::PrintGraph of the parsed request graph
  std::string target;           // e.g. "cpu:x86_64-unknown-linux-gnu/x86-64-v3"
  std::string mode;             // torch.compile mode
  std::map<std::string, std::string> options;
  std::string tccd_version;
};

// Lowercase hex SHA-256 over a length-prefixed encoding of the parts (so no two different part
// lists can collide by concatenation). The encoding is spelled out in compile_key.cc and pinned by
// tests/cache/compile_key_test.cc. Empty (never a valid key) only if OpenSSL fails.
std::string ComputeCompileKey(const CompileKeyParts& parts);

}  // namespace tccd::cache

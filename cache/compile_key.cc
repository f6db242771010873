// ComputeCompileKey: SHA-256 over an unambiguous, length-prefixed encoding of
// the key parts.
//
// Encoding (all integers are 8-byte little-endian):
//   field("tccd-compile-key") u64(kCompileKeyVersion)
//   field(canonical_graph) field(target) field(mode)
//   u64(options.size()) { field(name) field(value) }*   in std::map (byte-wise
//   sorted) order field(tccd_version)
// where field(s) = u64(s.size()) s. Every variable-length piece carries its
// length, so no two different part lists encode to the same bytes.
#include "cache/compile_key.h"

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "cache/digest.h"
#include "spdlog/spdlog.h"

namespace tccd::cache {
namespace {

void HashU64(Sha256Hasher& hasher, uint64_t v) {
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  hasher.Update(absl::string_view(bytes, sizeof(bytes)));
}

void HashField(Sha256Hasher& hasher, absl::string_view s) {
  HashU64(hasher, s.size());
  hasher.Update(s);
}

}  // namespace

std::string ComputeCompileKey(const CompileKeyParts& parts) {
  Sha256Hasher hasher;
  HashField(hasher, "tccd-compile-key");
  HashU64(hasher, kCompileKeyVersion);
  HashField(hasher, parts.canonical_graph);
  HashField(hasher, parts.target);
  HashField(hasher, parts.mode);
  HashU64(hasher, parts.options.size());
  for (const auto& [name, value] : parts.options) {  // std::map: already sorted
    HashField(hasher, name);
    HashField(hasher, value);
  }
  HashField(hasher, parts.tccd_version);
  absl::StatusOr<std::string> key = hasher.FinishHex();
  if (!key.ok()) {
    // OpenSSL allocation failure only. "" is not a valid key: Store rejects it,
    // so the request fails instead of sharing an entry with another graph.
    spdlog::error("ComputeCompileKey: {}", key.status().ToString());
    return "";
  }
  return *std::move(key);
}

}  // namespace tccd::cache

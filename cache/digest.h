// SHA-256 digests as tccd uses them: lowercase hex strings of 64 characters.
//
// Internal to cache/: the public entry point is Sha256Hex in store.h. These
// helpers return a Status where OpenSSL can fail (allocation), so that a
// failure becomes an INTERNAL error for one request instead of a wrong digest
// (which would make a good blob look corrupt).
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX; keeps <openssl/evp.h> out of
                       // this header.

namespace tccd::cache {

inline constexpr size_t kDigestHexLength = 64;

// True if `s` is exactly 64 lowercase hex characters.
bool IsDigestHex(absl::string_view s);

// OK if IsDigestHex(digest); otherwise INVALID_ARGUMENT naming `what` ("blob
// digest", "compile key", ...) and a printable prefix of the offending value.
absl::Status ValidateDigestHex(absl::string_view what, absl::string_view digest);

// Incremental SHA-256, for inputs assembled from several pieces (the compile
// key).
class Sha256Hasher {
 public:
  Sha256Hasher();
  ~Sha256Hasher();
  Sha256Hasher(const Sha256Hasher&) = delete;
  Sha256Hasher& operator=(const Sha256Hasher&) = delete;

  void Update(absl::string_view bytes);
  // The lowercase hex digest of everything passed to Update. Call once.
  absl::StatusOr<std::string> FinishHex();

 private:
  struct CtxDeleter {
    void operator()(evp_md_ctx_st* ctx) const;
  };
  std::unique_ptr<evp_md_ctx_st, CtxDeleter> ctx_;
  bool ok_ = true;  // false once any OpenSSL call failed; FinishHex then reports it
};

// One-shot lowercase hex SHA-256.
absl::StatusOr<std::string> Sha256HexOrError(absl::string_view bytes);

}  // namespace tccd::cache

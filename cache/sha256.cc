// SHA-256 through OpenSSL's EVP interface, and digest-string validation.
#include <openssl/evp.h>

#include <array>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "cache/digest.h"
#include "cache/store.h"
#include "spdlog/spdlog.h"

namespace tccd::cache {
namespace {

std::string ToLowerHex(const unsigned char* bytes, size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(2 * n, '\0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kHex[bytes[i] >> 4];
    out[2 * i + 1] = kHex[bytes[i] & 0xf];
  }
  return out;
}

// OpenSSL 3's EVP_sha256() is a legacy handle: every EVP_DigestInit_ex on it
// looks the implementation up in the provider store again (locks, a hash
// lookup), which showed as ~2% of a cache hit's CPU (compile key, token and blob
// hashes). Fetched once here instead, for the life of the process; nullptr (no
// provider) falls back to the legacy handle, which then reports the failure.
const EVP_MD* Sha256Md() {
  static const EVP_MD* const md = [] {
    const EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return fetched != nullptr ? fetched : EVP_sha256();
  }();
  return md;
}

}  // namespace

bool IsDigestHex(absl::string_view s) {
  if (s.size() != kDigestHexLength) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

absl::Status ValidateDigestHex(absl::string_view what, absl::string_view digest) {
  if (IsDigestHex(digest)) return absl::OkStatus();
  // The value may be hostile: show a bounded, escaped prefix only.
  constexpr size_t kShown = 64;
  return absl::InvalidArgumentError(absl::StrCat(
      what, " must be 64 lowercase hex characters (a SHA-256), got ", digest.size(), " bytes: \"",
      absl::CHexEscape(digest.substr(0, kShown)), digest.size() > kShown ? "...\"" : "\""));
}

void Sha256Hasher::CtxDeleter::operator()(evp_md_ctx_st* ctx) const { EVP_MD_CTX_free(ctx); }

Sha256Hasher::Sha256Hasher() : ctx_(EVP_MD_CTX_new()) {
  ok_ = ctx_ != nullptr && EVP_DigestInit_ex(ctx_.get(), Sha256Md(), nullptr) == 1;
}

Sha256Hasher::~Sha256Hasher() = default;

void Sha256Hasher::Update(absl::string_view bytes) {
  if (!ok_ || bytes.empty()) return;
  ok_ = EVP_DigestUpdate(ctx_.get(), bytes.data(), bytes.size()) == 1;
}

absl::StatusOr<std::string> Sha256Hasher::FinishHex() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md;
  unsigned int md_len = 0;
  if (ok_) ok_ = EVP_DigestFinal_ex(ctx_.get(), md.data(), &md_len) == 1 && md_len == 32;
  if (!ok_) return absl::InternalError("OpenSSL SHA-256 failed");
  ok_ = false;  // the context is finalized; a second FinishHex is an error
  return ToLowerHex(md.data(), md_len);
}

absl::StatusOr<std::string> Sha256HexOrError(absl::string_view bytes) {
  Sha256Hasher hasher;
  hasher.Update(bytes);
  return hasher.FinishHex();
}

std::string Sha256Hex(absl::string_view bytes) {
  absl::StatusOr<std::string> digest = Sha256HexOrError(bytes);
  if (!digest.ok()) {
    // Only an OpenSSL allocation failure gets here. An empty string is never a
    // valid digest, so callers that validate digests turn it into an error
    // rather than a false match.
    spdlog::error("Sha256Hex: {}", digest.status().ToString());
    return "";
  }
  return *std::move(digest);
}

}  // namespace tccd::cache

// The action index: PutManifest and GetManifest. A manifest is only as good as
// its blobs, so both check every artifact blob it names.
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "cache/digest.h"
#include "cache/rocks_interop.h"
#include "cache/store_impl.h"
#include "base/status_macros.h"
#include "spdlog/spdlog.h"

namespace tccd::cache {
namespace {

std::string ArtifactLabel(const v1::Artifact& artifact) {
  return absl::StrCat("artifact \"", absl::CHexEscape(artifact.name()), "\"");
}

}  // namespace

absl::Status StoreImpl::PutManifest(absl::string_view key, const v1::Manifest& manifest) {
  RETURN_IF_ERROR(ValidateDigestHex("compile key", key));
  if (!manifest.key().empty() && manifest.key() != key) {
    return absl::InvalidArgumentError(
        absl::StrCat("manifest.key ", absl::CHexEscape(manifest.key()),
                     " differs from the key it is stored under, ", key));
  }
  for (const v1::Artifact& artifact : manifest.artifacts()) {
    RETURN_IF_ERROR(
        ValidateDigestHex(absl::StrCat("digest of ", ArtifactLabel(artifact)), artifact.digest()));
  }
  std::string value;
  if (!manifest.SerializeToString(&value)) {
    return absl::InternalError(absl::StrCat("cannot serialize the manifest for key ", key));
  }

  absl::ReaderMutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckOpenLocked());
  absl::Status stored = PutManifestLocked(key, manifest, value);
  if (stored.ok()) EvictIfOverLocked();
  return stored;
}

absl::Status StoreImpl::PutManifestLocked(absl::string_view key, const v1::Manifest& manifest,
                                          const std::string& value) {
  if (eviction_enabled()) {
    // Reference the blobs before checking they are there (store_impl.h: lru_mu_ says why), and
    // pin the entry so that no eviction deletes it before its row is written.
    std::vector<std::string> digests;
    for (const v1::Artifact& artifact : manifest.artifacts()) digests.push_back(artifact.digest());
    absl::MutexLock lru_lock(&lru_mu_);
    lru_.AddManifest(key, static_cast<int64_t>(value.size()), digests, NowMs());
    lru_.PinManifest(key);
  }
  bool written = false;
  absl::Cleanup settle_index = [&] {
    if (!eviction_enabled()) return;
    absl::MutexLock lru_lock(&lru_mu_);
    if (written) {
      lru_.UnpinManifest(key, NowMs());
    } else {
      // Any manifest stored under the key before stays in RocksDB, uncounted until the next
      // Open (rare: a failed write replacing a manifest).
      lru_.RemoveManifest(key);
    }
  };
  for (const v1::Artifact& artifact : manifest.artifacts()) {
    rocksdb::PinnableSlice blob;
    absl::Status status = LoadBlobLocked(artifact.digest(), &blob);
    if (absl::IsNotFound(status)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "manifest for key ", key, " names ", ArtifactLabel(artifact), ", blob ",
          artifact.digest(), ", which is not stored (", status.message(), "); PutBlob it first"));
    }
    RETURN_IF_ERROR(status);
    if (artifact.size() != 0 && static_cast<uint64_t>(artifact.size()) != blob.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "manifest for key ", key, ": ", ArtifactLabel(artifact), " declares ", artifact.size(),
          " bytes but blob ", artifact.digest(), " has ", blob.size()));
    }
  }
  RETURN_IF_ERROR(CheckWritableLocked());
  rocksdb::Status s = db_->Put(write_options_, actions_, ToSlice(key), value);
  RETURN_IF_ERROR(WriteError(s, absl::StrCat("storing the manifest for key ", key)));
  written = true;
  return absl::OkStatus();
}

absl::StatusOr<v1::Manifest> StoreImpl::GetManifest(absl::string_view key) {
  RETURN_IF_ERROR(ValidateDigestHex("compile key", key));
  absl::ReaderMutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckOpenLocked());
  rocksdb::PinnableSlice value;
  rocksdb::Status s = db_->Get(read_options_, actions_, ToSlice(key), &value);
  if (s.IsNotFound()) return absl::NotFoundError(absl::StrCat("no manifest for key ", key));
  RETURN_IF_ERROR(FromRocks(s, absl::StrCat("reading the manifest for key ", key)));

  v1::Manifest manifest;
  bool readable = manifest.ParseFromArray(value.data(), static_cast<int>(value.size()));
  for (int i = 0; readable && i < manifest.artifacts_size(); ++i) {
    readable = IsDigestHex(manifest.artifacts(i).digest());  // PutManifest checked them
  }
  if (!readable) {
    spdlog::error("cache: manifest for key {} in {} is unreadable; deleting it", std::string(key),
                  options_.path);
    value.Reset();
    // While writing is stopped it stays: every read rejects it the same way.
    rocksdb::Status deleted = CheckWritableLocked().ok()
                                  ? db_->Delete(write_options_, actions_, ToSlice(key))
                                  : rocksdb::Status::Incomplete("writing to the cache is stopped");
    if (!deleted.ok()) {
      spdlog::error("cache: could not delete manifest {}: {}", std::string(key),
                    deleted.ToString());
    }
    if (deleted.ok() && eviction_enabled()) {
      absl::MutexLock lru_lock(&lru_mu_);
      lru_.RemoveManifest(key);
    }
    return absl::NotFoundError(
        absl::StrCat("manifest for key ", key, " was unreadable and has been dropped"));
  }

  // The manifest itself stays: a recompile usually rewrites the same blobs and
  // the same manifest. A blob this process has verified since the open is not
  // read again (the verified-blob memo, store_impl.h says why that is safe).
  for (const v1::Artifact& artifact : manifest.artifacts()) {
    if (IsVerifiedBlob(artifact.digest())) continue;
    rocksdb::PinnableSlice blob;
    absl::Status status = LoadBlobLocked(artifact.digest(), &blob);
    if (absl::IsNotFound(status)) {
      return absl::NotFoundError(absl::StrCat("manifest for key ", key, " names ",
                                              ArtifactLabel(artifact), ", which is missing (",
                                              status.message(), ")"));
    }
    RETURN_IF_ERROR(status);
  }
  if (eviction_enabled()) {
    // A hit: recorded in memory only (store_eviction.cc says why).
    absl::MutexLock lru_lock(&lru_mu_);
    lru_.Touch(key, NowMs());
  }
  return manifest;
}

}  // namespace tccd::cache

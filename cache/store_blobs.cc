// Content-addressed blobs: PutBlob, GetBlob, HasBlob, and dropping corrupt
// blobs.
#include <string>

#include "absl/strings/str_cat.h"
#include "cache/digest.h"
#include "cache/rocks_interop.h"
#include "cache/store_impl.h"
#include "base/status_macros.h"
#include "spdlog/spdlog.h"

namespace tccd::cache {

namespace {
// Bounds the memo's memory (~100 bytes a digest); at the bound it starts over.
constexpr size_t kMaxVerifiedBlobs = 1 << 16;
}  // namespace

bool StoreImpl::IsVerifiedBlob(absl::string_view digest) {
  absl::MutexLock lock(&verified_mu_);
  return verified_blobs_.contains(digest);
}

void StoreImpl::MarkVerifiedBlob(absl::string_view digest) {
  absl::MutexLock lock(&verified_mu_);
  if (verified_blobs_.size() >= kMaxVerifiedBlobs) verified_blobs_.clear();
  verified_blobs_.emplace(digest);
}

void StoreImpl::ForgetVerifiedBlobs() {
  absl::MutexLock lock(&verified_mu_);
  verified_blobs_.clear();
}

absl::Mutex& StoreImpl::BlobStripe(absl::string_view digest) {
  // Digests are validated hex, so the first character is uniform over 16
  // values; "& 15" keeps the index in range even if that were ever not so.
  const char c = digest.empty() ? '0' : digest[0];
  const unsigned nibble =
      c >= 'a' ? static_cast<unsigned>(c - 'a' + 10) : static_cast<unsigned>(c - '0');
  return blob_stripe_mu_[nibble & 15];
}

absl::StatusOr<std::string> StoreImpl::PutBlob(absl::string_view bytes,
                                               absl::string_view expected_digest) {
  if (!expected_digest.empty()) {
    RETURN_IF_ERROR(ValidateDigestHex("expected blob digest", expected_digest));
  }
  // Hash before taking any lock: artifacts can be large.
  ASSIGN_OR_RETURN(std::string digest, Sha256HexOrError(bytes));
  if (!expected_digest.empty() && digest != expected_digest) {
    return absl::DataLossError(absl::StrCat("blob of ", bytes.size(), " bytes hashes to ", digest,
                                            ", not the expected ", expected_digest,
                                            "; not stored"));
  }

  absl::ReaderMutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckOpenLocked());
  // Whether this call wrote the blob (then eviction may have to make room).
  absl::StatusOr<bool> wrote = [&]() -> absl::StatusOr<bool> {
    absl::MutexLock stripe(&BlobStripe(digest));
    if (eviction_enabled()) {
      // Before looking for an existing copy: from here on eviction leaves the blob alone until
      // a manifest names it (or the grace period ends), so "already stored, skip the write"
      // cannot turn into "evicted before our PutManifest".
      absl::MutexLock lru_lock(&lru_mu_);
      lru_.AddBlob(digest, static_cast<int64_t>(bytes.size()), /*pending=*/true, NowMs());
    }
    rocksdb::PinnableSlice existing;
    rocksdb::Status s = db_->Get(read_options_, blobs_, ToSlice(digest), &existing);
    if (s.ok()) {
      // Same key means same bytes, unless the stored copy is corrupt: then
      // overwrite (repair) it.
      if (existing == ToSlice(bytes)) {
        MarkVerifiedBlob(digest);  // the stored bytes are the ones we hashed
        return false;
      }
      spdlog::warn("cache: blob {} was stored with wrong bytes; rewriting it", digest);
    } else if (s.IsCorruption()) {
      spdlog::warn("cache: blob {} is unreadable ({}); rewriting it", digest, s.ToString());
    } else if (!s.IsNotFound()) {
      return FromRocks(s, absl::StrCat("reading blob ", digest));
    }
    existing.Reset();
    absl::Status written = CheckWritableLocked();
    if (written.ok()) {
      written = WriteError(db_->Put(write_options_, blobs_, digest, ToSlice(bytes)),
                           absl::StrCat("storing blob ", digest));
    }
    if (!written.ok() && eviction_enabled()) {
      absl::MutexLock lru_lock(&lru_mu_);
      lru_.RemoveBlob(digest);
    }
    RETURN_IF_ERROR(written);
    MarkVerifiedBlob(digest);
    return true;
  }();
  RETURN_IF_ERROR(wrote.status());
  if (*wrote) EvictIfOverLocked();
  return digest;
}

absl::StatusOr<std::string> StoreImpl::GetBlob(absl::string_view digest) {
  RETURN_IF_ERROR(ValidateDigestHex("blob digest", digest));
  absl::ReaderMutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckOpenLocked());
  rocksdb::PinnableSlice value;
  RETURN_IF_ERROR(LoadBlobLocked(digest, &value));
  return value.ToString();
}

bool StoreImpl::HasBlob(absl::string_view digest) {
  if (!IsDigestHex(digest)) return false;
  absl::ReaderMutexLock lock(&mu_);
  if (!CheckOpenLocked().ok()) return false;
  rocksdb::PinnableSlice value;
  return LoadBlobLocked(digest, &value).ok();
}

absl::Status StoreImpl::LoadBlobLocked(absl::string_view digest, rocksdb::PinnableSlice* value) {
  rocksdb::Status s = db_->Get(read_options_, blobs_, ToSlice(digest), value);
  if (s.IsNotFound()) {
    return absl::NotFoundError(absl::StrCat("blob ", digest, " is not stored"));
  }
  if (s.IsCorruption()) return DropCorruptBlobLocked(digest, s.ToString());
  RETURN_IF_ERROR(FromRocks(s, absl::StrCat("reading blob ", digest)));
  if (!options_.verify_on_read) return absl::OkStatus();

  ASSIGN_OR_RETURN(std::string actual,
                   Sha256HexOrError(absl::string_view(value->data(), value->size())));
  if (actual == digest) {
    MarkVerifiedBlob(digest);
    return absl::OkStatus();
  }
  const size_t size = value->size();
  value->Reset();
  return DropCorruptBlobLocked(digest, absl::StrCat("its ", size, " bytes hash to ", actual));
}

absl::Status StoreImpl::DropCorruptBlobLocked(absl::string_view digest, absl::string_view problem) {
  spdlog::error("cache: blob {} in {} is corrupt ({}); deleting it", std::string(digest),
                options_.path, std::string(problem));
  ForgetVerifiedBlobs();  // rare; it may have been memoized before RocksDB saw the corruption
  absl::MutexLock stripe(&BlobStripe(digest));
  // Re-read under the stripe lock: a PutBlob may have rewritten good bytes
  // since our read, and those must survive.
  rocksdb::PinnableSlice current;
  rocksdb::Status s = db_->Get(read_options_, blobs_, ToSlice(digest), &current);
  bool repaired = false;
  if (s.ok()) {
    absl::StatusOr<std::string> actual =
        Sha256HexOrError(absl::string_view(current.data(), current.size()));
    repaired = actual.ok() && *actual == digest;
  }
  if (!repaired && !s.IsNotFound()) {
    // While writing is stopped it stays: every read verifies it again and fails the same way.
    rocksdb::Status deleted = CheckWritableLocked().ok()
                                  ? db_->Delete(write_options_, blobs_, ToSlice(digest))
                                  : rocksdb::Status::Incomplete("writing to the cache is stopped");
    if (!deleted.ok()) {
      // Still never served: every read verifies it again and fails the same
      // way.
      spdlog::error("cache: could not delete corrupt blob {}: {}", std::string(digest),
                    deleted.ToString());
    }
    if (deleted.ok() && eviction_enabled()) {
      absl::MutexLock lru_lock(&lru_mu_);
      lru_.RemoveBlob(digest);
    }
  }
  return absl::NotFoundError(
      absl::StrCat("blob ", digest, " was corrupt (", problem, ") and has been dropped"));
}

}  // namespace tccd::cache

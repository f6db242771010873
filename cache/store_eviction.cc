// The size cap (StoreOptions.max_bytes): loading the eviction index at Open, evicting after
// writes, persisting access times, and reclaiming the space of evicted blobs.
//
// Why access times are not written per hit: a hit is a read, and turning every read into a
// RocksDB write would make the WAL the bottleneck of the hot path. Hits update the in-memory
// index (a mutex and a map update); the maintenance thread writes the changed times in one batch
// every kMaintenanceInterval. A SIGKILL loses at most that much recency, which only makes the
// next eviction slightly less well informed.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cache/digest.h"
#include "cache/rocks_interop.h"
#include "cache/schema.h"
#include "cache/store_impl.h"
#include "base/status_macros.h"
#include "rocksdb/write_batch.h"
#include "spdlog/spdlog.h"

namespace tccd::cache {
namespace {

constexpr absl::Duration kMaintenanceInterval = absl::Seconds(5);

std::string EncodeMillis(int64_t ms) {
  std::string out(8, '\0');
  const uint64_t value = static_cast<uint64_t>(ms);
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xff);
  return out;
}

bool DecodeMillis(rocksdb::Slice bytes, int64_t* ms) {
  if (bytes.size() != 8) return false;
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= uint64_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
  *ms = static_cast<int64_t>(value);
  return true;
}

}  // namespace

int64_t StoreImpl::NowMs() const {
  if (options_.now_ms_for_testing) return options_.now_ms_for_testing();
  return absl::ToUnixMillis(absl::Now());
}

absl::Status StoreImpl::LoadEvictionIndexLocked() {
  if (!eviction_enabled()) return absl::OkStatus();
  const int64_t now = NowMs();
  absl::Time started = absl::Now();

  absl::flat_hash_map<std::string, int64_t> access;
  if (access_ != nullptr) {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read_options_, access_));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      int64_t ms = 0;
      if (DecodeMillis(it->value(), &ms)) access[it->key().ToString()] = ms;
    }
    RETURN_IF_ERROR(FromRocks(it->status(), "reading access times"));
  }

  absl::MutexLock lock(&lru_mu_);
  lru_ = EvictionIndex();
  {
    // Every blob's value is read once here (RocksDB 7.8 iterators load blob-file values);
    // that is the cost of starting with a cap on a large cache.
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read_options_, blobs_));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      lru_.AddBlob(absl::string_view(it->key().data(), it->key().size()),
                   static_cast<int64_t>(it->value().size()),
                   /*pending=*/false, now);
    }
    RETURN_IF_ERROR(FromRocks(it->status(), "reading blobs for the eviction index"));
  }
  {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read_options_, actions_));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      v1::Manifest manifest;
      std::vector<std::string> digests;
      if (manifest.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
        for (const v1::Artifact& artifact : manifest.artifacts()) {
          digests.push_back(artifact.digest());
        }
      }
      // An unreadable manifest still counts (with no blobs); GetManifest deletes it when read.
      const std::string key = it->key().ToString();
      int64_t last_used = manifest.created_unix_ms() > 0 ? manifest.created_unix_ms() : now;
      if (auto found = access.find(key); found != access.end()) {
        last_used = std::max(last_used, found->second);
        access.erase(found);
      }
      lru_.AddManifest(key, static_cast<int64_t>(it->value().size()), digests, last_used);
    }
    RETURN_IF_ERROR(FromRocks(it->status(), "reading manifests for the eviction index"));
  }

  // Access rows of manifests that are gone (evicted before the row was flushed, or by a crash).
  if (!access.empty() && !read_only_ && CheckWritableLocked().ok()) {  // access_ is set
    rocksdb::WriteBatch batch;
    for (const auto& [key, ms] : access) batch.Delete(access_, key).PermitUncheckedError();
    absl::Status deleted = WriteError(db_->Write(write_options_, &batch), "pruning access times");
    if (!deleted.ok()) spdlog::warn("cache: {}", deleted.ToString());
  }
  spdlog::info(
      "cache: eviction index of {}: {} manifests, {} blobs, {:.1f} of {:.1f} MiB, loaded in "
      "{:.0f} ms",
      options_.path, lru_.manifests(), lru_.blobs(), lru_.total_bytes() / 1048576.0,
      options_.max_bytes / 1048576.0, absl::ToDoubleMilliseconds(absl::Now() - started));
  return absl::OkStatus();
}

void StoreImpl::EvictIfOverLocked() {
  if (!eviction_enabled()) return;
  absl::MutexLock lock(&lru_mu_);
  if (lru_.total_bytes() <= options_.max_bytes) {
    over_cap_logged_ = false;
    return;
  }
  if (!CheckWritableLocked().ok()) return;  // the store logged why; deletes would fail too

  const int64_t target =
      static_cast<int64_t>(options_.low_watermark * static_cast<double>(options_.max_bytes));
  const EvictionIndex::Limits limits{.min_age_ms = options_.min_age_ms,
                                     .pending_blob_grace_ms = options_.pending_blob_grace_ms};
  const int64_t now = NowMs();
  rocksdb::WriteBatch batch;
  int64_t manifests = 0, blobs = 0, bytes = 0;
  while (lru_.total_bytes() > target) {
    std::optional<EvictionIndex::Victim> victim = lru_.TakeVictim(now, limits);
    if (!victim.has_value()) break;
    // One batch, applied atomically (also across a SIGKILL: the WAL replays it whole), so no
    // reader ever sees a manifest whose blob is already gone. The manifest's delete comes first
    // anyway, for anyone reading the batch.
    if (!victim->manifest_key.empty()) {
      batch.Delete(actions_, victim->manifest_key).PermitUncheckedError();
      if (access_ != nullptr) batch.Delete(access_, victim->manifest_key).PermitUncheckedError();
      ++manifests;
    }
    for (const std::string& digest : victim->blobs) {
      batch.Delete(blobs_, digest).PermitUncheckedError();
      ++blobs;
    }
    bytes += victim->bytes;
  }
  if (batch.Count() > 0) {
    absl::Status written = WriteError(db_->Write(write_options_, &batch), "evicting");
    // Whether or not the batch landed: a memoized digest must never outlive its blob.
    if (blobs > 0) ForgetVerifiedBlobs();
    if (!written.ok()) {
      // The victims are out of the index but still stored: uncounted until the next Open
      // rebuilds the index. Nothing is left half-deleted (the batch is atomic).
      spdlog::error("cache: eviction in {} failed: {}", options_.path, written.ToString());
      return;
    }
    evicted_manifests_ += manifests;
    evicted_blobs_ += blobs;
    evicted_bytes_ += bytes;
    evicted_bytes_since_compaction_ += bytes;
    spdlog::debug("cache: evicted {} manifests and {} blobs ({} bytes); {} bytes stored", manifests,
                  blobs, bytes, lru_.total_bytes());
  }
  if (lru_.total_bytes() > options_.max_bytes) {
    ++evictions_blocked_;
    if (!over_cap_logged_) {
      over_cap_logged_ = true;
      spdlog::warn(
          "cache: {} holds {:.1f} MiB, over its cap of {:.1f} MiB, and nothing more can be "
          "evicted now: everything left was used in the last {} s or belongs to a compile "
          "still being stored. The cap is too small for the working set (logged once until "
          "the store is back under its cap)",
          options_.path, lru_.total_bytes() / 1048576.0, options_.max_bytes / 1048576.0,
          options_.min_age_ms / 1000);
    }
  } else {
    over_cap_logged_ = false;
  }
}

void StoreImpl::FlushAccessTimesLocked() {
  if (!eviction_enabled() || access_ == nullptr || read_only_ || !CheckWritableLocked().ok()) {
    return;
  }
  std::vector<std::pair<std::string, int64_t>> dirty;
  {
    absl::MutexLock lock(&lru_mu_);
    dirty = lru_.TakeDirtyAccessTimes();
  }
  if (dirty.empty()) return;
  rocksdb::WriteBatch batch;
  for (const auto& [key, ms] : dirty)
    batch.Put(access_, key, EncodeMillis(ms)).PermitUncheckedError();
  // A row for a manifest evicted since TakeDirtyAccessTimes is harmless: the next Open drops it.
  absl::Status written = WriteError(db_->Write(write_options_, &batch), "storing access times");
  if (!written.ok()) spdlog::warn("cache: {}", written.ToString());
}

void StoreImpl::CompactAfterEvictionsLocked() {
  if (!eviction_enabled() || read_only_ || !CheckWritableLocked().ok()) return;
  {
    absl::MutexLock lock(&lru_mu_);
    // Blob files only shrink when compaction rewrites them; do it once a good share of the cap
    // has been evicted, not after every eviction.
    if (evicted_bytes_since_compaction_ < options_.max_bytes / 4) return;
    evicted_bytes_since_compaction_ = 0;
  }
  rocksdb::CompactRangeOptions compact;
  compact.blob_garbage_collection_policy = rocksdb::BlobGarbageCollectionPolicy::kForce;
  compact.blob_garbage_collection_age_cutoff = 1.0;
  rocksdb::Status s = db_->CompactRange(compact, blobs_, nullptr, nullptr);
  if (!s.ok())
    spdlog::warn("cache: compacting {} after evictions: {}", options_.path, s.ToString());
}

void StoreImpl::StartMaintenance() {
  if (!eviction_enabled()) return;
  maintenance_ = std::thread([this] { MaintenanceLoop(); });
}

void StoreImpl::StopMaintenance() {
  if (!maintenance_.joinable()) return;
  {
    absl::MutexLock lock(&maintenance_mu_);
    stop_maintenance_ = true;
  }
  maintenance_.join();
  absl::ReaderMutexLock lock(&mu_);
  if (CheckOpenLocked().ok()) FlushAccessTimesLocked();
}

void StoreImpl::MaintenanceLoop() {
  while (true) {
    {
      absl::MutexLock lock(&maintenance_mu_);
      const absl::Condition stopping(
          +[](bool* stop) { return *stop; }, &stop_maintenance_);
      if (maintenance_mu_.AwaitWithTimeout(stopping, kMaintenanceInterval)) {
        return;
      }
    }
    absl::ReaderMutexLock lock(&mu_);
    if (!CheckOpenLocked().ok()) continue;
    FlushAccessTimesLocked();
    CompactAfterEvictionsLocked();
  }
}

}  // namespace tccd::cache

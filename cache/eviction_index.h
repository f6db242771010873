// EvictionIndex: the in-memory picture of a size-capped Store that decides what to evict.
//
// It knows every manifest (its size, the blobs it names, when it was last used) and every blob
// (its size, how many manifests name it), and keeps them ordered so that the victim is found in
// O(log n):
//
//   1. orphan blobs first: blobs no manifest names (left by a crash between a compile's PutBlob
//      and its PutManifest, or by a manifest that was replaced). They serve nothing.
//   2. then the least recently used manifest, together with every blob that no remaining manifest
//      names. The Store deletes the manifest and those blobs in one atomic RocksDB write batch, so
//      no manifest ever names an evicted blob, even across a SIGKILL.
//
// Protection, so that eviction never breaks a request in flight:
//   - a manifest used (stored or hit) less than `min_age_ms` ago is not evicted: a client that got
//     a hit fetches its artifacts right after;
//   - a blob put less than `pending_blob_grace_ms` ago and not named by a manifest since is
//     "pending" (its compile's PutManifest is coming) and is not evicted;
//   - a manifest being stored is pinned (PinManifest) until its row is written or abandoned.
//
// Sizes are logical: value bytes plus key bytes. The index does no I/O.
//
// Thread-compatible: the Store guards it with one mutex (store_impl.h: lru_mu_).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"

namespace tccd::cache {

class EvictionIndex {
 public:
  struct Limits {
    // A manifest used less than this long ago is never evicted.
    int64_t min_age_ms = 60'000;
    // A blob put less than this long ago, and not named by any manifest since, is never evicted.
    int64_t pending_blob_grace_ms = 600'000;
  };

  // What one eviction step removes: a manifest (empty `manifest_key` for an orphan blob) and the
  // blobs that go with it.
  struct Victim {
    std::string manifest_key;
    std::vector<std::string> blobs;
    int64_t bytes = 0;  // logical bytes freed
  };

  // A blob of `value_bytes` exists (or is about to be written). `pending` (a PutBlob) protects
  // it for the grace period until a manifest names it, even if the manifests naming it now are
  // evicted meanwhile; false for blobs found when loading the store. Re-adding updates its size.
  void AddBlob(absl::string_view digest, int64_t value_bytes, bool pending, int64_t now_ms);
  // The blob is gone (deleted as corrupt, or its write failed). Manifests naming it stay; the
  // Store never serves them (GetManifest checks every blob).
  void RemoveBlob(absl::string_view digest);

  // A manifest of `value_bytes` naming `digests` (duplicates allowed), last used at
  // `last_used_ms`, exists or is being written. Replaces an entry under the same key. The blobs
  // it names stop being orphans or pending. A blob not in the index counts with 0 bytes.
  void AddManifest(absl::string_view key, int64_t value_bytes,
                   const std::vector<std::string>& digests, int64_t last_used_ms);
  // The manifest is gone; blobs it alone named become orphans (evicted first).
  void RemoveManifest(absl::string_view key);
  // A pinned manifest is never chosen as a victim; pins nest. Unpinning sets its last use.
  void PinManifest(absl::string_view key);
  void UnpinManifest(absl::string_view key, int64_t now_ms);
  // A hit: moves the manifest to the most recently used end and marks its access time for
  // persisting. Unknown keys are ignored (evicted meanwhile).
  void Touch(absl::string_view key, int64_t now_ms);
  bool HasManifest(absl::string_view key) const { return manifests_.contains(key); }

  // Removes the next victim from the index and returns it, or nullopt if everything left is
  // protected (or the index is empty).
  std::optional<Victim> TakeVictim(int64_t now_ms, const Limits& limits);

  // Access times changed by Touch since the last call, for the Store to persist in a batch.
  std::vector<std::pair<std::string, int64_t>> TakeDirtyAccessTimes();

  int64_t total_bytes() const { return total_bytes_; }
  int64_t manifests() const { return static_cast<int64_t>(manifests_.size()); }
  int64_t blobs() const { return static_cast<int64_t>(blobs_.size()); }

 private:
  struct BlobInfo {
    int64_t bytes = 0;  // key + value
    int refs = 0;       // manifests naming it
    // PutBlobs not yet followed by a manifest naming the blob (each AddManifest naming it
    // consumes one), and when the blob was last put (0: found at load time). Pending while
    // pending_puts > 0 and the last put is younger than the grace period.
    int pending_puts = 0;
    int64_t last_put_ms = 0;
    // Not stored (dropped as corrupt, or named by a manifest before it was put): kept only while
    // manifests name it, and never a victim of its own.
    bool absent = false;
  };
  static bool IsPending(const BlobInfo& blob, int64_t now_ms, const Limits& limits) {
    return blob.pending_puts > 0 && now_ms - blob.last_put_ms < limits.pending_blob_grace_ms;
  }
  struct ManifestInfo {
    int64_t bytes = 0;                 // key + value
    std::vector<std::string> digests;  // deduplicated
    int64_t last_used_ms = 0;
    uint64_t use_seq = 0;  // orders uses within one millisecond
    int pins = 0;
  };

  void Ref(const std::string& digest);
  // Drops one reference; a blob left unnamed becomes an orphan.
  void Unref(const std::string& digest);
  void EraseManifest(absl::string_view key, bool make_orphans);

  absl::flat_hash_map<std::string, ManifestInfo> manifests_;
  // (last_used_ms, use_seq, key) of every unpinned manifest: begin() is the LRU victim.
  using LruKey = std::tuple<int64_t, uint64_t, std::string>;
  std::set<LruKey> lru_;
  uint64_t next_use_seq_ = 0;
  // Records a use at `now_ms` (never moving backwards) and re-links the entry into lru_.
  void MarkUsed(const std::string& key, ManifestInfo& info, int64_t now_ms);
  absl::flat_hash_map<std::string, BlobInfo> blobs_;
  // (last_put_ms, digest) of every blob with refs == 0.
  std::set<std::pair<int64_t, std::string>> orphans_;
  absl::flat_hash_set<std::string> dirty_access_;
  int64_t total_bytes_ = 0;
};

}  // namespace tccd::cache

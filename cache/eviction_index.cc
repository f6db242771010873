// EvictionIndex; see eviction_index.h.
#include "cache/eviction_index.h"

#include <algorithm>

namespace tccd::cache {

void EvictionIndex::AddBlob(absl::string_view digest, int64_t value_bytes, bool pending,
                            int64_t now_ms) {
  const int64_t bytes = static_cast<int64_t>(digest.size()) + value_bytes;
  auto [it, inserted] = blobs_.try_emplace(digest);
  BlobInfo& blob = it->second;
  total_bytes_ += bytes - blob.bytes;
  blob.bytes = bytes;
  blob.absent = false;
  const bool orphan = blob.refs == 0;
  if (orphan && !inserted) orphans_.erase({blob.last_put_ms, it->first});
  if (pending) {
    ++blob.pending_puts;
    blob.last_put_ms = std::max<int64_t>(now_ms, 1);  // 0 means "found at load time"
  }
  if (orphan) orphans_.emplace(blob.last_put_ms, it->first);
}

void EvictionIndex::RemoveBlob(absl::string_view digest) {
  auto it = blobs_.find(digest);
  if (it == blobs_.end()) return;
  BlobInfo& blob = it->second;
  total_bytes_ -= blob.bytes;
  if (blob.refs > 0) {
    blob.bytes = 0;  // its manifests still name it; it goes when they do
    blob.pending_puts = 0;
    blob.absent = true;
    return;
  }
  orphans_.erase({blob.last_put_ms, it->first});
  blobs_.erase(it);
}

void EvictionIndex::Ref(const std::string& digest) {
  auto [it, inserted] = blobs_.try_emplace(digest);
  BlobInfo& blob = it->second;
  if (inserted) blob.absent = true;  // PutBlob will say otherwise
  if (blob.refs == 0 && !inserted) orphans_.erase({blob.last_put_ms, digest});
  if (blob.pending_puts > 0) --blob.pending_puts;  // the manifest that PutBlob was for
  ++blob.refs;
}

void EvictionIndex::Unref(const std::string& digest) {
  auto it = blobs_.find(digest);
  if (it == blobs_.end()) return;
  BlobInfo& blob = it->second;
  if (--blob.refs > 0) return;
  blob.refs = 0;
  if (blob.absent) {
    blobs_.erase(it);
    return;
  }
  orphans_.emplace(blob.last_put_ms, digest);
}

void EvictionIndex::AddManifest(absl::string_view key, int64_t value_bytes,
                                const std::vector<std::string>& digests, int64_t last_used_ms) {
  ManifestInfo info;
  info.bytes = static_cast<int64_t>(key.size()) + value_bytes;
  info.digests = digests;
  std::sort(info.digests.begin(), info.digests.end());
  info.digests.erase(std::unique(info.digests.begin(), info.digests.end()), info.digests.end());
  info.last_used_ms = last_used_ms;
  info.use_seq = next_use_seq_++;
  // Reference the new blobs before dropping the old entry's references, so that blobs both
  // versions name never pass through "orphan".
  for (const std::string& digest : info.digests) Ref(digest);
  int pins = 0;
  if (auto old = manifests_.find(key); old != manifests_.end()) {
    pins = old->second.pins;
    EraseManifest(key, /*make_orphans=*/true);
  }
  info.pins = pins;
  total_bytes_ += info.bytes;
  if (info.pins == 0) lru_.emplace(info.last_used_ms, info.use_seq, std::string(key));
  manifests_.emplace(key, std::move(info));
}

void EvictionIndex::EraseManifest(absl::string_view key, bool make_orphans) {
  auto it = manifests_.find(key);
  if (it == manifests_.end()) return;
  ManifestInfo& info = it->second;
  if (info.pins == 0) lru_.erase({info.last_used_ms, info.use_seq, it->first});
  total_bytes_ -= info.bytes;
  if (make_orphans) {
    for (const std::string& digest : info.digests) Unref(digest);
  }
  dirty_access_.erase(it->first);
  manifests_.erase(it);
}

void EvictionIndex::RemoveManifest(absl::string_view key) {
  EraseManifest(key, /*make_orphans=*/true);
}

void EvictionIndex::PinManifest(absl::string_view key) {
  auto it = manifests_.find(key);
  if (it == manifests_.end()) return;
  ManifestInfo& info = it->second;
  if (info.pins++ == 0) lru_.erase({info.last_used_ms, info.use_seq, it->first});
}

void EvictionIndex::MarkUsed(const std::string& key, ManifestInfo& info, int64_t now_ms) {
  if (info.pins == 0) lru_.erase({info.last_used_ms, info.use_seq, key});
  // Racing uses may arrive with an older clock reading; the entry never moves back in time.
  info.last_used_ms = std::max(info.last_used_ms, now_ms);
  info.use_seq = next_use_seq_++;
  if (info.pins == 0) lru_.emplace(info.last_used_ms, info.use_seq, key);
}

void EvictionIndex::UnpinManifest(absl::string_view key, int64_t now_ms) {
  auto it = manifests_.find(key);
  if (it == manifests_.end() || it->second.pins == 0) return;
  ManifestInfo& info = it->second;
  --info.pins;
  MarkUsed(it->first, info, now_ms);  // links it into lru_ once the last pin is gone
}

void EvictionIndex::Touch(absl::string_view key, int64_t now_ms) {
  auto it = manifests_.find(key);
  if (it == manifests_.end()) return;
  MarkUsed(it->first, it->second, now_ms);
  dirty_access_.insert(it->first);
}

std::optional<EvictionIndex::Victim> EvictionIndex::TakeVictim(int64_t now_ms,
                                                               const Limits& limits) {
  // Orphans first, oldest put first; pending ones (a compile's blobs before its manifest) are
  // skipped until their grace period ends. There are few pending blobs at any time.
  for (const auto& [last_put_ms, digest] : orphans_) {
    auto it = blobs_.find(digest);
    if (IsPending(it->second, now_ms, limits)) continue;
    Victim victim;
    victim.blobs.push_back(digest);
    victim.bytes = it->second.bytes;
    total_bytes_ -= it->second.bytes;
    orphans_.erase({last_put_ms, victim.blobs.back()});  // invalidates the loop: return now
    blobs_.erase(it);
    return victim;
  }

  if (lru_.empty()) return std::nullopt;
  const auto [last_used_ms, use_seq, key] = *lru_.begin();
  if (now_ms - last_used_ms < limits.min_age_ms) return std::nullopt;
  auto it = manifests_.find(key);
  Victim victim;
  victim.manifest_key = key;
  victim.bytes = it->second.bytes;
  const std::vector<std::string> digests = std::move(it->second.digests);
  it->second.digests.clear();
  EraseManifest(key, /*make_orphans=*/false);
  for (const std::string& digest : digests) {
    auto blob = blobs_.find(digest);
    if (blob == blobs_.end()) continue;
    if (--blob->second.refs > 0) continue;  // another manifest still names it
    blob->second.refs = 0;
    if (blob->second.absent) {
      blobs_.erase(blob);  // nothing stored to delete
      continue;
    }
    if (IsPending(blob->second, now_ms, limits)) {
      // Re-put by a compile that has not stored its manifest yet: keep it for that one.
      orphans_.emplace(blob->second.last_put_ms, digest);
      continue;
    }
    victim.bytes += blob->second.bytes;
    total_bytes_ -= blob->second.bytes;
    victim.blobs.push_back(digest);
    blobs_.erase(blob);
  }
  return victim;
}

std::vector<std::pair<std::string, int64_t>> EvictionIndex::TakeDirtyAccessTimes() {
  std::vector<std::pair<std::string, int64_t>> out;
  out.reserve(dirty_access_.size());
  for (const std::string& key : dirty_access_) {
    auto it = manifests_.find(key);
    if (it != manifests_.end()) out.emplace_back(key, it->second.last_used_ms);
  }
  dirty_access_.clear();
  return out;
}

}  // namespace tccd::cache

// EvictionIndex: victim order (orphans, then least recently used manifests with the blobs only
// they name), the protections (min age, pending blobs, pins) and byte accounting.
#include "cache/eviction_index.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace tccd::cache {
namespace {

using Limits = EvictionIndex::Limits;

constexpr Limits kNoProtection{.min_age_ms = 0, .pending_blob_grace_ms = 0};

// A 64-character digest or key whose first character is `c`.
std::string Id(char c) { return std::string(64, c); }

// Adds blob Id(blob) (100 bytes, as a PutBlob would) and manifest Id(key) naming it.
void AddEntry(EvictionIndex& index, char key, char blob, int64_t now_ms) {
  index.AddBlob(Id(blob), 100, /*pending=*/true, now_ms);
  index.AddManifest(Id(key), 10, {Id(blob)}, now_ms);
}

TEST_CASE("victims are the least recently used manifests, with their blobs", "[cache][eviction]") {
  EvictionIndex index;
  AddEntry(index, 'a', '1', 1000);
  AddEntry(index, 'b', '2', 2000);
  AddEntry(index, 'c', '3', 3000);
  index.Touch(Id('a'), 4000);  // a is now the most recently used

  std::optional<EvictionIndex::Victim> first = index.TakeVictim(5000, kNoProtection);
  REQUIRE(first.has_value());
  CHECK(first->manifest_key == Id('b'));
  CHECK(first->blobs == std::vector<std::string>{Id('2')});
  CHECK(first->bytes == (64 + 10) + (64 + 100));
  CHECK(index.TakeVictim(5000, kNoProtection)->manifest_key == Id('c'));
  CHECK(index.TakeVictim(5000, kNoProtection)->manifest_key == Id('a'));
  CHECK_FALSE(index.TakeVictim(5000, kNoProtection).has_value());
  CHECK(index.total_bytes() == 0);
}

TEST_CASE("a blob another manifest still names is not evicted with the first",
          "[cache][eviction]") {
  EvictionIndex index;
  index.AddBlob(Id('1'), 100, /*pending=*/true, 1000);
  index.AddManifest(Id('a'), 10, {Id('1'), Id('1')}, 1000);  // duplicates count once
  index.AddBlob(Id('1'), 100, /*pending=*/true, 2000);
  index.AddManifest(Id('b'), 10, {Id('1')}, 2000);

  std::optional<EvictionIndex::Victim> a = index.TakeVictim(3000, kNoProtection);
  REQUIRE(a.has_value());
  CHECK(a->manifest_key == Id('a'));
  CHECK(a->blobs.empty());
  std::optional<EvictionIndex::Victim> b = index.TakeVictim(3000, kNoProtection);
  REQUIRE(b.has_value());
  CHECK(b->blobs == std::vector<std::string>{Id('1')});
  CHECK(index.total_bytes() == 0);
}

TEST_CASE("manifests younger than the minimum age are not evicted", "[cache][eviction]") {
  EvictionIndex index;
  const Limits limits{.min_age_ms = 60'000, .pending_blob_grace_ms = 0};
  AddEntry(index, 'a', '1', 1000);
  CHECK_FALSE(index.TakeVictim(60'999, limits).has_value());
  index.Touch(Id('a'), 50'000);  // a hit restarts the clock
  CHECK_FALSE(index.TakeVictim(100'000, limits).has_value());
  CHECK(index.TakeVictim(110'000, limits).has_value());
}

TEST_CASE("orphan blobs go first; pending ones wait for their grace period", "[cache][eviction]") {
  EvictionIndex index;
  const Limits limits{.min_age_ms = 0, .pending_blob_grace_ms = 1000};
  AddEntry(index, 'a', '1', 100);
  index.AddBlob(Id('2'), 50, /*pending=*/false, 100);  // found at load: a crash's leftover
  index.AddBlob(Id('3'), 50, /*pending=*/true, 5000);  // a compile's, manifest coming

  std::optional<EvictionIndex::Victim> leftover = index.TakeVictim(5500, limits);
  REQUIRE(leftover.has_value());
  CHECK(leftover->manifest_key.empty());
  CHECK(leftover->blobs == std::vector<std::string>{Id('2')});
  // Next the LRU manifest, not the pending blob.
  CHECK(index.TakeVictim(5500, limits)->manifest_key == Id('a'));
  CHECK_FALSE(index.TakeVictim(5500, limits).has_value());
  // Its compile never stored a manifest: after the grace period it goes too.
  std::optional<EvictionIndex::Victim> stale = index.TakeVictim(6000, limits);
  REQUIRE(stale.has_value());
  CHECK(stale->blobs == std::vector<std::string>{Id('3')});
  CHECK(index.total_bytes() == 0);
}

TEST_CASE("a blob re-put by a compile survives the eviction of the manifest that named it",
          "[cache][eviction]") {
  EvictionIndex index;
  const Limits limits{.min_age_ms = 0, .pending_blob_grace_ms = 1000};
  AddEntry(index, 'a', '1', 100);
  // A new compile produced the same bytes: PutBlob found them stored, its manifest is coming.
  index.AddBlob(Id('1'), 100, /*pending=*/true, 5000);
  std::optional<EvictionIndex::Victim> a = index.TakeVictim(5100, limits);
  REQUIRE(a.has_value());
  CHECK(a->manifest_key == Id('a'));
  CHECK(a->blobs.empty());
  index.AddManifest(Id('b'), 10, {Id('1')}, 5200);
  // Named again: no longer pending, and it goes with b.
  std::optional<EvictionIndex::Victim> b = index.TakeVictim(5300, limits);
  REQUIRE(b.has_value());
  CHECK(b->blobs == std::vector<std::string>{Id('1')});
}

TEST_CASE("a blob named by a manifest stops being pending", "[cache][eviction]") {
  EvictionIndex index;
  const Limits limits{.min_age_ms = 0, .pending_blob_grace_ms = 1'000'000};
  AddEntry(index, 'a', '1', 100);  // put and named at once: what a compile does
  std::optional<EvictionIndex::Victim> a = index.TakeVictim(200, limits);
  REQUIRE(a.has_value());
  CHECK(a->blobs == std::vector<std::string>{Id('1')});  // not held back for the grace period
}

TEST_CASE("a pinned manifest is never a victim", "[cache][eviction]") {
  EvictionIndex index;
  AddEntry(index, 'a', '1', 100);
  AddEntry(index, 'b', '2', 200);
  index.PinManifest(Id('a'));
  index.PinManifest(Id('a'));
  CHECK(index.TakeVictim(1000, kNoProtection)->manifest_key == Id('b'));
  CHECK_FALSE(index.TakeVictim(1000, kNoProtection).has_value());
  index.UnpinManifest(Id('a'), 300);
  CHECK_FALSE(index.TakeVictim(1000, kNoProtection).has_value());  // pins nest
  index.UnpinManifest(Id('a'), 300);
  CHECK(index.TakeVictim(1000, kNoProtection)->manifest_key == Id('a'));
}

TEST_CASE("replacing and removing entries keeps the byte count exact", "[cache][eviction]") {
  EvictionIndex index;
  AddEntry(index, 'a', '1', 100);
  const int64_t one_entry = index.total_bytes();
  CHECK(one_entry == (64 + 10) + (64 + 100));
  index.AddBlob(Id('2'), 300, /*pending=*/true, 200);
  index.AddManifest(Id('a'), 20, {Id('2')}, 200);  // a now names blob 2; blob 1 is an orphan
  CHECK(index.total_bytes() == (64 + 20) + (64 + 300) + (64 + 100));
  index.RemoveBlob(Id('2'));  // dropped as corrupt while a still names it
  CHECK(index.total_bytes() == (64 + 20) + (64 + 100));
  index.RemoveManifest(Id('a'));
  index.RemoveBlob(Id('1'));
  CHECK(index.total_bytes() == 0);
  CHECK(index.blobs() == 0);
  CHECK(index.manifests() == 0);
}

TEST_CASE("only touched access times are handed out for persisting", "[cache][eviction]") {
  EvictionIndex index;
  AddEntry(index, 'a', '1', 100);
  AddEntry(index, 'b', '2', 100);
  index.Touch(Id('b'), 500);
  index.Touch(Id('z'), 500);  // unknown (evicted meanwhile): ignored
  auto dirty = index.TakeDirtyAccessTimes();
  REQUIRE(dirty.size() == 1);
  CHECK(dirty[0] == std::make_pair(Id('b'), int64_t{500}));
  CHECK(index.TakeDirtyAccessTimes().empty());
}

}  // namespace
}  // namespace tccd::cache

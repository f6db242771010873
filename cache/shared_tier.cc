// SharedTier; see shared_tier.h.
#include "cache/shared_tier.h"

#include <openssl/rand.h>
#include <unistd.h>

#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cache/digest.h"
#include "base/status_macros.h"
#include "spdlog/spdlog.h"

namespace tccd::cache {
namespace {

constexpr char kManifestPrefix[] = "tccd:v1:m:";
constexpr char kBlobPrefix[] = "tccd:v1:b:";
constexpr char kLeasePrefix[] = "tccd:v1:l:";

// Compare-and-act on a lease, so that a daemon whose lease expired (and was taken by another)
// never extends or deletes the new holder's.
constexpr char kRenewScript[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then "
    "return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end";
constexpr char kReleaseScript[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then "
    "return redis.call('DEL', KEYS[1]) else return 0 end";

std::string NewToken() {
  unsigned char random[16];
  if (RAND_bytes(random, sizeof(random)) != 1) {
    // Unique enough among daemons that are alive at once: host, pid, time.
    return absl::StrCat(gethostid(), ":", getpid(), ":", absl::ToUnixNanos(absl::Now()));
  }
  char host[64] = {};
  gethostname(host, sizeof(host) - 1);
  return absl::StrCat(host, ":", getpid(), ":",
                      absl::BytesToHexString(absl::string_view(
                          reinterpret_cast<const char*>(random), sizeof(random))));
}

std::string Millis(absl::Duration d) { return std::to_string(absl::ToInt64Milliseconds(d)); }

}  // namespace

absl::StatusOr<std::unique_ptr<SharedTier>> SharedTier::Open(const SharedTierOptions& options) {
  ASSIGN_OR_RETURN(RedisEndpoint endpoint, ParseRedisUrl(options.url));
  if (!endpoint.tls && (!options.tls.ca.empty() || !options.tls.cert.empty())) {
    return absl::InvalidArgumentError(
        "--shared-cache-tls-* need a rediss:// URL in --shared-cache (redis:// is plaintext)");
  }
  if (endpoint.tls) {
    endpoint.tls_files = options.tls;
    // Unreadable or mismatched files are a startup error, not an unreachable tier.
    RETURN_IF_ERROR(RedisTlsContext::Make(endpoint.tls_files).status());
  }
  if (options.timeout <= absl::ZeroDuration() || options.lease_ttl < absl::Seconds(1) ||
      options.max_wait < absl::ZeroDuration() || options.poll_interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "shared cache: timeout and poll interval must be > 0, the lease TTL >= 1 s, the "
        "wait >= 0");
  }
  return std::unique_ptr<SharedTier>(new SharedTier(options, std::move(endpoint)));
}

SharedTier::SharedTier(const SharedTierOptions& options, RedisEndpoint endpoint)
    : options_(options), redis_(std::move(endpoint), options.timeout) {
  renewer_ = std::thread([this] { RenewLoop(); });
}

SharedTier::~SharedTier() {
  {
    absl::MutexLock lock(&leases_mu_);
    stopping_ = true;
  }
  renewer_.join();
}

SharedTier::Lease::~Lease() { tier_->Release(key_, token_); }

bool SharedTier::Available() {
  absl::MutexLock lock(&health_mu_);
  return !down_ || absl::Now() >= retry_at_;
}

void SharedTier::NoteFailure(const absl::Status& status) {
  counters_.errors.fetch_add(1, std::memory_order_relaxed);
  absl::MutexLock lock(&health_mu_);
  retry_at_ = absl::Now() + options_.retry_after;
  if (down_) return;
  down_ = true;
  spdlog::warn(
      "shared cache {}: {}; serving from the local cache alone, retrying every {} ms (logged "
      "once until it is back)",
      redis_.endpoint().ToString(), status.ToString(),
      absl::ToInt64Milliseconds(options_.retry_after));
}

void SharedTier::NoteSuccess() {
  absl::MutexLock lock(&health_mu_);
  if (!down_) return;
  down_ = false;
  spdlog::info("shared cache {}: reachable again", redis_.endpoint().ToString());
}

SharedTier::Lookup SharedTier::FetchInto(const std::string& key, Store& store,
                                         v1::Manifest* manifest) {
  absl::StatusOr<RedisReply> reply = redis_.Command({"GET", absl::StrCat(kManifestPrefix, key)});
  if (!reply.ok()) {
    NoteFailure(reply.status());
    return Lookup::kFailed;
  }
  NoteSuccess();
  if (reply->type != RedisReply::Type::kString) return Lookup::kMissing;
  if (!manifest->ParseFromString(reply->str) || manifest->key() != key) {
    spdlog::error("shared cache: the manifest stored for key {} is unreadable; ignoring it",
                  key.substr(0, 12));
    return Lookup::kMissing;
  }
  for (const v1::Artifact& artifact : manifest->artifacts()) {
    if (!IsDigestHex(artifact.digest())) return Lookup::kMissing;
    if (store.HasBlob(artifact.digest())) continue;
    const std::string blob_key = absl::StrCat(kBlobPrefix, artifact.digest());
    absl::StatusOr<RedisReply> blob = redis_.Command({"GET", blob_key});
    if (!blob.ok()) {
      NoteFailure(blob.status());
      return Lookup::kFailed;
    }
    // Evicted by Redis (maxmemory) or never written (the publisher died): the entry is
    // incomplete, a miss.
    if (blob->type != RedisReply::Type::kString) return Lookup::kMissing;
    absl::StatusOr<std::string> stored = store.PutBlob(blob->str, artifact.digest());
    if (absl::IsDataLoss(stored.status())) {
      counters_.corrupt_blobs.fetch_add(1, std::memory_order_relaxed);
      spdlog::error(
          "shared cache: blob {} of key {} does not match its digest ({}); deleting "
          "it from Redis and compiling the key",
          artifact.digest(), key.substr(0, 12), stored.status().ToString());
      absl::StatusOr<RedisReply> deleted = redis_.Command({"DEL", blob_key});
      if (!deleted.ok()) NoteFailure(deleted.status());
      return Lookup::kMissing;
    }
    if (!stored.ok()) {
      spdlog::warn("shared cache: storing blob {} locally: {}", artifact.digest(),
                   stored.status().ToString());
      return Lookup::kFailed;
    }
    counters_.blobs_fetched.fetch_add(1, std::memory_order_relaxed);
    counters_.bytes_fetched.fetch_add(static_cast<int64_t>(blob->str.size()),
                                      std::memory_order_relaxed);
  }
  absl::Status stored = store.PutManifest(key, *manifest);
  if (!stored.ok()) {
    spdlog::warn("shared cache: storing the manifest of key {} locally: {}", key.substr(0, 12),
                 stored.ToString());
    return Lookup::kFailed;
  }
  return Lookup::kFound;
}

absl::StatusOr<bool> SharedTier::TryAcquire(const std::string& key, const std::string& token) {
  ASSIGN_OR_RETURN(RedisReply reply, redis_.Command({"SET", absl::StrCat(kLeasePrefix, key), token,
                                                     "NX", "PX", Millis(options_.lease_ttl)}));
  return reply.type == RedisReply::Type::kStatus;  // "OK"; nil when someone holds it
}

absl::StatusOr<bool> SharedTier::LeaseExists(const std::string& key) {
  ASSIGN_OR_RETURN(RedisReply reply, redis_.Command({"EXISTS", absl::StrCat(kLeasePrefix, key)}));
  return reply.integer > 0;
}

std::optional<v1::Manifest> SharedTier::Fetch(const std::string& key, Store& store) {
  if (!Available()) {
    counters_.skipped.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  v1::Manifest manifest;
  if (FetchInto(key, store, &manifest) != Lookup::kFound) return std::nullopt;
  counters_.hits.fetch_add(1, std::memory_order_relaxed);
  return manifest;
}

std::optional<v1::Manifest> SharedTier::FetchOrLease(const std::string& key, Store& store,
                                                     std::unique_ptr<Lease>* lease) {
  lease->reset();
  if (!Available()) {
    counters_.skipped.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  v1::Manifest manifest;
  Lookup found = FetchInto(key, store, &manifest);
  if (found == Lookup::kFound) {
    counters_.hits.fetch_add(1, std::memory_order_relaxed);
    return manifest;
  }
  if (found == Lookup::kFailed) return std::nullopt;

  const absl::Time deadline = absl::Now() + options_.max_wait;
  const std::string token = NewToken();
  bool waited = false;
  while (true) {
    absl::StatusOr<bool> taken = TryAcquire(key, token);
    if (!taken.ok()) {
      NoteFailure(taken.status());
      break;
    }
    if (*taken) {
      {
        absl::MutexLock lock(&leases_mu_);
        held_[key] = token;
      }
      auto held = std::unique_ptr<Lease>(new Lease(this, key, token));
      // The previous holder may have published and released between our lookup and SET NX.
      found = FetchInto(key, store, &manifest);
      if (found == Lookup::kFound) {
        counters_.hits.fetch_add(1, std::memory_order_relaxed);
        if (waited) counters_.wait_hits.fetch_add(1, std::memory_order_relaxed);
        return manifest;  // `held` releases the lease
      }
      *lease = std::move(held);
      break;
    }
    // Another daemon is compiling the key: wait for its result.
    if (!waited) {
      waited = true;
      counters_.lease_waits.fetch_add(1, std::memory_order_relaxed);
    }
    if (absl::Now() >= deadline) {
      counters_.wait_timeouts.fetch_add(1, std::memory_order_relaxed);
      spdlog::warn(
          "shared cache: waited {} s for another daemon's compile of key {}; compiling "
          "it here",
          absl::ToInt64Seconds(options_.max_wait), key.substr(0, 12));
      break;
    }
    absl::SleepFor(options_.poll_interval);
    found = FetchInto(key, store, &manifest);
    if (found == Lookup::kFound) {
      counters_.hits.fetch_add(1, std::memory_order_relaxed);
      counters_.wait_hits.fetch_add(1, std::memory_order_relaxed);
      return manifest;
    }
    if (found == Lookup::kFailed) break;
    // No result yet: loop to SET NX again, which takes the lease if its holder released it
    // (failed compile) or died (expired).
  }
  counters_.misses.fetch_add(1, std::memory_order_relaxed);
  return std::nullopt;
}

void SharedTier::Publish(const std::string& key, const v1::Manifest& manifest, Store& store) {
  if (!Available()) return;
  std::string value;
  if (!manifest.SerializeToString(&value)) return;
  // Blobs first: a daemon that sees the manifest finds its blobs (unless Redis evicts them).
  for (const v1::Artifact& artifact : manifest.artifacts()) {
    const std::string blob_key = absl::StrCat(kBlobPrefix, artifact.digest());
    absl::StatusOr<RedisReply> exists = redis_.Command({"EXISTS", blob_key});
    if (!exists.ok()) return NoteFailure(exists.status());
    if (exists->integer > 0) continue;
    absl::StatusOr<std::string> bytes = store.GetBlob(artifact.digest());
    if (!bytes.ok()) {
      spdlog::warn("shared cache: not publishing key {}: {}", key.substr(0, 12),
                   bytes.status().ToString());
      return;
    }
    absl::StatusOr<RedisReply> set = redis_.Command({"SET", blob_key, *bytes});
    if (!set.ok()) return NoteFailure(set.status());
  }
  absl::StatusOr<RedisReply> set =
      redis_.Command({"SET", absl::StrCat(kManifestPrefix, key), value});
  if (!set.ok()) return NoteFailure(set.status());
  NoteSuccess();
  counters_.publishes.fetch_add(1, std::memory_order_relaxed);
}

void SharedTier::Release(const std::string& key, const std::string& token) {
  {
    absl::MutexLock lock(&leases_mu_);
    auto it = held_.find(key);
    if (it != held_.end() && it->second == token) held_.erase(it);
  }
  absl::StatusOr<RedisReply> released =
      redis_.Command({"EVAL", kReleaseScript, "1", absl::StrCat(kLeasePrefix, key), token});
  // If Redis is unreachable the lease expires by itself after its TTL.
  if (!released.ok()) NoteFailure(released.status());
}

void SharedTier::RenewLoop() {
  const absl::Duration period = options_.lease_ttl / 3;
  while (true) {
    std::vector<std::pair<std::string, std::string>> held;
    {
      absl::MutexLock lock(&leases_mu_);
      const absl::Condition stopping(
          +[](bool* stop) { return *stop; }, &stopping_);
      if (leases_mu_.AwaitWithTimeout(stopping, period)) return;
      held.assign(held_.begin(), held_.end());
    }
    for (const auto& [key, token] : held) {
      absl::StatusOr<RedisReply> renewed =
          redis_.Command({"EVAL", kRenewScript, "1", absl::StrCat(kLeasePrefix, key), token,
                          Millis(options_.lease_ttl)});
      if (!renewed.ok()) {
        NoteFailure(renewed.status());
      } else if (renewed->integer == 0) {
        spdlog::warn(
            "shared cache: lost the compile lease of key {} (expired); another daemon "
            "may compile it too",
            key.substr(0, 12));
      }
    }
  }
}

std::map<std::string, int64_t> SharedTier::Stats() const {
  auto get = [](const std::atomic<int64_t>& c) { return c.load(std::memory_order_relaxed); };
  return {
      {"shared_hits", get(counters_.hits)},
      {"shared_misses", get(counters_.misses)},
      {"shared_lease_waits", get(counters_.lease_waits)},
      {"shared_wait_hits", get(counters_.wait_hits)},
      {"shared_wait_timeouts", get(counters_.wait_timeouts)},
      {"shared_publishes", get(counters_.publishes)},
      {"shared_blobs_fetched", get(counters_.blobs_fetched)},
      {"shared_bytes_fetched", get(counters_.bytes_fetched)},
      {"shared_corrupt_blobs", get(counters_.corrupt_blobs)},
      {"shared_errors", get(counters_.errors)},
      {"shared_skipped", get(counters_.skipped)},
  };
}

}  // namespace tccd::cache

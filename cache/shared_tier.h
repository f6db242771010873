// SharedTier: the second cache level, shared by every daemon of a cluster, on Redis.
//
// The local Store stays the first level. On a local miss the flight leader calls FetchOrLease:
//
//   std::unique_ptr<SharedTier::Lease> lease;
//   std::optional<v1::Manifest> found = shared->FetchOrLease(key, *store, &lease);
//   if (found) return *found;          // now in the local store too
//   ... compile, store locally ...
//   shared->Publish(key, manifest, *store);   // before `lease` is dropped
//
// Redis layout (namespace "tccd:v1:"):
//   tccd:v1:m:<compile key>   serialized tccd.v1.Manifest
//   tccd:v1:b:<digest>        the blob's bytes
//   tccd:v1:l:<compile key>   compile lease: a random token, with an expiry
// Publish writes blobs before the manifest. Fetching reads the manifest, then each blob the local
// store lacks, and stores every blob through Store::PutBlob with its digest as the expected one:
// a blob whose bytes do not hash to its digest is never stored or served (it is deleted from
// Redis and the key is compiled). The digest proves the bytes match the manifest, not who wrote
// them: Redis must be as trusted as the daemons (README, "Running tccd for a cluster").
//
// Cluster-wide single flight: on a shared miss the leader takes the key's lease (SET NX PX).
// With it, it checks the tier once more (the previous holder may have published and released in
// between) and compiles; a background thread renews every held lease at a third of its TTL; the
// lease is released (only if still ours) when the Lease is destroyed, after Publish, or after a
// failed compile. Without it, the leader polls for the manifest while the lease exists, for at
// most `max_wait`; when the lease disappears without a manifest (the holder failed or died) it
// tries to take it; past `max_wait` it compiles without a lease.
//
// Redis down or slow (no answer within `timeout`): every operation fails fast, the daemon works
// on its local level alone, and the tier is retried after `retry_after`. Each such episode is
// logged once when it starts and once when it ends.
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cache/redis_client.h"
#include "cache/store.h"
#include "tccd/v1/tccd.pb.h"

namespace tccd::cache {

struct SharedTierOptions {
  // redis://HOST:PORT[/DB], or rediss:// for TLS. Required.
  std::string url;
  // With rediss://: the CA that signed Redis' certificate (empty: the system's CAs), and a
  // client certificate and key for a Redis that requires one. Default: none.
  RedisTlsFiles tls;
  // Bound on connecting and on each Redis command. Default: 500 ms.
  absl::Duration timeout = absl::Milliseconds(500);
  // Expiry of a compile lease; renewed every third of it while compiling. Default: 30 s.
  absl::Duration lease_ttl = absl::Seconds(30);
  // How long a daemon waits for another daemon's compile of the same key before compiling
  // itself. Default: 600 s.
  absl::Duration max_wait = absl::Seconds(600);
  // How often a waiting daemon looks for the other's result. Default: 20 ms.
  absl::Duration poll_interval = absl::Milliseconds(20);
  // After a failed Redis operation, how long the tier is skipped. Default: 1 s.
  absl::Duration retry_after = absl::Seconds(1);
};

class SharedTier {
 public:
  // A held compile lease; destroying it releases it (if Redis still says it is ours).
  class Lease {
   public:
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;

   private:
    friend class SharedTier;
    Lease(SharedTier* tier, std::string key, std::string token)
        : tier_(tier), key_(std::move(key)), token_(std::move(token)) {}
    SharedTier* const tier_;
    const std::string key_;    // the compile key
    const std::string token_;  // our value of the lease
  };

  // Validates options (INVALID_ARGUMENT naming --shared-cache); does not need Redis to be up.
  static absl::StatusOr<std::unique_ptr<SharedTier>> Open(const SharedTierOptions& options);
  ~SharedTier();

  // See the file comment. Returns the manifest when the shared tier had the key or another
  // daemon compiled it while we waited (it is then in `store`, blobs verified); nullopt when the
  // caller should compile, holding `*lease` when the lease could be taken.
  std::optional<v1::Manifest> FetchOrLease(const std::string& key, Store& store,
                                           std::unique_ptr<Lease>* lease);

  // Looks the key up without taking a lease or waiting (a caller that may not compile): the
  // manifest, stored in `store`, or nullopt.
  std::optional<v1::Manifest> Fetch(const std::string& key, Store& store);

  // Writes the locally stored `manifest` and the blobs it names that Redis lacks. Best effort:
  // failures are counted and logged (once per episode).
  void Publish(const std::string& key, const v1::Manifest& manifest, Store& store);

  // Counters for GetStats, all prefixed "shared_".
  std::map<std::string, int64_t> Stats() const;

  const RedisEndpoint& endpoint() const { return redis_.endpoint(); }

 private:
  SharedTier(const SharedTierOptions& options, RedisEndpoint endpoint);

  enum class Lookup { kFound, kMissing, kFailed };
  // Copies the key's manifest and missing blobs from Redis into `store`.
  Lookup FetchInto(const std::string& key, Store& store, v1::Manifest* manifest);
  // OK(true) when taken, OK(false) when another holds it.
  absl::StatusOr<bool> TryAcquire(const std::string& key, const std::string& token);
  absl::StatusOr<bool> LeaseExists(const std::string& key);
  void Release(const std::string& key, const std::string& token);
  void RenewLoop();

  // Health (once-per-episode logging and fail-fast while down).
  bool Available();
  void NoteFailure(const absl::Status& status);
  void NoteSuccess();

  const SharedTierOptions options_;
  RedisClient redis_;

  absl::Mutex health_mu_;
  bool down_ ABSL_GUARDED_BY(health_mu_) = false;
  absl::Time retry_at_ ABSL_GUARDED_BY(health_mu_);

  absl::Mutex leases_mu_;
  absl::flat_hash_map<std::string, std::string> held_ ABSL_GUARDED_BY(leases_mu_);  // key -> token
  bool stopping_ ABSL_GUARDED_BY(leases_mu_) = false;
  std::thread renewer_;

  struct Counters {
    std::atomic<int64_t> hits{0};           // served from the shared tier
    std::atomic<int64_t> misses{0};         // leader compiled (with or without the lease)
    std::atomic<int64_t> lease_waits{0};    // leaders that waited for another daemon's compile
    std::atomic<int64_t> wait_hits{0};      // ... and got its result
    std::atomic<int64_t> wait_timeouts{0};  // ... and gave up after max_wait
    std::atomic<int64_t> publishes{0};
    std::atomic<int64_t> blobs_fetched{0};
    std::atomic<int64_t> bytes_fetched{0};
    std::atomic<int64_t> corrupt_blobs{0};  // bytes that did not match their digest
    std::atomic<int64_t> errors{0};         // failed Redis operations
    std::atomic<int64_t> skipped{0};        // lookups skipped while Redis was down
  };
  Counters counters_;
};

}  // namespace tccd::cache

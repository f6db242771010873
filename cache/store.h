// tccd's artifact cache on RocksDB: content-addressed blobs, an action index (compile key ->
// manifest) and a job index (job id -> keys the job compiled or used).
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Store> store, Store::Open({.path = dir}));
//   ASSIGN_OR_RETURN(std::string digest, store->PutBlob(bytes));
//   RETURN_IF_ERROR(store->PutManifest(key, manifest));   // all its blobs must be present
//   absl::StatusOr<v1::Manifest> hit = store->GetManifest(key);
//
// Integrity: a blob's key is the SHA-256 of its bytes. It is verified when written and when read;
// a blob whose bytes do not match is logged, deleted and reported as NOT_FOUND (a miss), never
// served. A manifest is served only if every artifact blob it names is present and intact.
//
// Thread-safety: a Store is safe to use from many threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tccd/v1/tccd.pb.h"

namespace tccd::cache {

struct StoreOptions {
  // Directory of the RocksDB database; created if missing. Required.
  std::string path;
  // Verify blob digests on every read. Default: true.
  bool verify_on_read = true;
  // RocksDB block cache size in bytes. Default: 256 MiB.
  int64_t block_cache_bytes = 256ll << 20;
};

class Store {
 public:
  static absl::StatusOr<std::unique_ptr<Store>> Open(const StoreOptions& options);
  virtual ~Store() = default;

  // Stores `bytes` and returns their lowercase hex SHA-256. If `expected_digest` is not empty
  // and differs from the computed digest, nothing is stored and DATA_LOSS is returned.
  virtual absl::StatusOr<std::string> PutBlob(absl::string_view bytes,
                                              absl::string_view expected_digest = "") = 0;
  // NOT_FOUND if absent or corrupt (corrupt blobs are logged and deleted).
  virtual absl::StatusOr<std::string> GetBlob(absl::string_view digest) = 0;
  virtual bool HasBlob(absl::string_view digest) = 0;

  // FAILED_PRECONDITION if an artifact blob named by `manifest` is not stored.
  virtual absl::Status PutManifest(absl::string_view key, const v1::Manifest& manifest) = 0;
  // NOT_FOUND if the key is unknown or any of its blobs is missing or corrupt.
  virtual absl::StatusOr<v1::Manifest> GetManifest(absl::string_view key) = 0;

  // Records that `job_id` used `key` at `now_unix_ms`; `compiled` when this use compiled it.
  virtual absl::Status RecordJobUse(absl::string_view job_id, absl::string_view key,
                                    bool compiled, int64_t now_unix_ms) = 0;
  virtual absl::StatusOr<std::vector<v1::JobEntry>> GetJob(absl::string_view job_id) = 0;

  // Counts for stats: number of blobs, manifests, total blob bytes (estimates are fine).
  struct Usage {
    int64_t blobs = 0;
    int64_t manifests = 0;
    int64_t blob_bytes = 0;
  };
  virtual Usage GetUsage() = 0;

  // Flushes memtables and closes the database; later calls fail. Also done by the destructor.
  virtual absl::Status Close() = 0;
};

// Lowercase hex SHA-256 of `bytes`.
std::string Sha256Hex(absl::string_view bytes);

}  // namespace tccd::cache

// tccd's artifact cache on RocksDB: content-addressed blobs, an action index (compile key ->
// manifest), a job index (job id -> keys the job compiled or used) and the jobs'
// automatic-dynamic profiles.
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
// Input: digests and compile keys must be 64 lowercase hex characters (what Sha256Hex and
// ComputeCompileKey return); anything else is INVALID_ARGUMENT, never a crash. Job ids are opaque
// strings of at most 512 bytes without NUL.
//
// Full disk: see WritesStopped. RocksDB's own diagnostic log goes to the daemon's log, never to a
// file in the cache dir (rocks_logger.h says why).
//
// Durability: writes are not fsynced one by one, but they are in RocksDB's write-ahead log before
// a call returns, so they survive the daemon being SIGKILLed (not necessarily a power loss).
//
// Thread-safety: a Store is safe to use from many threads at once.
#pragma once

#include <cstdint>
#include <functional>
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
  // RocksDB memtable size per column family, in bytes. After a full disk, writing resumes only
  // once this much space is free (RocksDB reserves room to flush one memtable). Default: 64 MiB.
  int64_t write_buffer_bytes = 64ll << 20;

  // Eviction (eviction_index.h explains the order and the protections). The store's logical size
  // (blob and manifest bytes, keys included; the job index is not counted) is kept at most
  // max_bytes by evicting least recently used entries after every write, down to
  // low_watermark * max_bytes. 0: no cap, the cache only grows. Default: 0.
  int64_t max_bytes = 0;
  // Fraction of max_bytes that an eviction run stops at, in (0, 1]. Default: 0.9.
  double low_watermark = 0.9;
  // A manifest stored or hit less than this long ago is never evicted (a client that got a hit
  // fetches its artifacts next). If every entry is that young the store stays over max_bytes and
  // says so in the log. Default: 60 s.
  int64_t min_age_ms = 60'000;
  // A blob put less than this long ago that no manifest has named since belongs to a compile
  // whose PutManifest is still coming; it is not evicted. Default: 10 min.
  int64_t pending_blob_grace_ms = 600'000;
  // Tests only: the clock eviction uses, in Unix ms. Default: the system clock.
  std::function<int64_t()> now_ms_for_testing;
};

class Store {
 public:
  // Opens the cache at options.path, creating it (and its parents) if missing. Errors name the
  // path: INVALID_ARGUMENT for bad options; PERMISSION_DENIED if the directory is not writable;
  // FAILED_PRECONDITION if it is not a directory, is in use by another tccd (RocksDB lock held,
  // in this or another process), or holds a cache of a newer/unknown schema or a foreign RocksDB.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const StoreOptions& options);
  virtual ~Store() = default;

  // Stores `bytes` and returns their lowercase hex SHA-256. If `expected_digest` is not empty
  // and differs from the computed digest, nothing is stored and DATA_LOSS is returned; a
  // malformed one is INVALID_ARGUMENT. Re-putting a stored blob is a no-op (no write); re-putting
  // a corrupt one repairs it.
  virtual absl::StatusOr<std::string> PutBlob(absl::string_view bytes,
                                              absl::string_view expected_digest = "") = 0;
  // NOT_FOUND if absent or corrupt (corrupt blobs are logged and deleted).
  virtual absl::StatusOr<std::string> GetBlob(absl::string_view digest) = 0;
  // Whether GetBlob would succeed (it reads and, if verify_on_read, hashes the blob). False for a
  // malformed digest or a closed store.
  virtual bool HasBlob(absl::string_view digest) = 0;

  // FAILED_PRECONDITION if an artifact blob named by `manifest` is not stored. INVALID_ARGUMENT if
  // manifest.key is set and differs from `key`, or an artifact's size is set (non-zero) and
  // differs from its blob's. Replaces any manifest stored under `key`.
  virtual absl::Status PutManifest(absl::string_view key, const v1::Manifest& manifest) = 0;
  // NOT_FOUND if the key is unknown or any of its blobs is missing or corrupt.
  virtual absl::StatusOr<v1::Manifest> GetManifest(absl::string_view key) = 0;

  // Records that `job_id` used `key` at `now_unix_ms`; `compiled` when this use compiled it
  // (compiled_here then stays true). An empty `job_id` means "no job": a no-op returning OK.
  virtual absl::Status RecordJobUse(absl::string_view job_id, absl::string_view key, bool compiled,
                                    int64_t now_unix_ms) = 0;
  // The job's entries, ordered by key; empty for an unknown job. An empty job id is
  // INVALID_ARGUMENT.
  virtual absl::StatusOr<std::vector<v1::JobEntry>> GetJob(absl::string_view job_id) = 0;

  // The automatic-dynamic profile stored for `job_id` (server/dynamic_profile_store.h merges
  // into it); NOT_FOUND when none is. Never evicted. INVALID_ARGUMENT for a malformed job id.
  virtual absl::StatusOr<v1::DynamicProfile> GetDynamicProfile(absl::string_view job_id) = 0;
  // Replaces the profile stored for `job_id`. Callers that merge serialise their
  // read-modify-write themselves.
  virtual absl::Status PutDynamicProfile(absl::string_view job_id,
                                         const v1::DynamicProfile& profile) = 0;

  // Matmul autotuning's choices of one identity (server/gemm_tune_store.h), by its row key
  // (64 lowercase hex); NOT_FOUND when none is stored, DATA_LOSS when unreadable. Kept in the
  // "profiles" column family under a key no job id can have; never evicted. The defaults
  // (stores without them) are UNIMPLEMENTED.
  virtual absl::StatusOr<v1::GemmTuneTable> GetGemmTunes(absl::string_view row);
  // Replaces the table stored under `row`; callers that merge serialise themselves.
  virtual absl::Status PutGemmTunes(absl::string_view row, const v1::GemmTuneTable& table);

  // Counts for stats: number of blobs, manifests, total blob bytes. RocksDB estimates: exact for
  // counts until blobs or manifests are deleted; bytes are approximate. Zeros once closed.
  struct Usage {
    int64_t blobs = 0;
    int64_t manifests = 0;
    int64_t blob_bytes = 0;
    // With StoreOptions.max_bytes (else all 0): the exact logical size eviction works on, the
    // cap, and what eviction removed since Open. `evictions_blocked` counts eviction runs that
    // ended above the cap because everything left was protected (min age, pending blobs).
    int64_t logical_bytes = 0;
    int64_t max_bytes = 0;
    int64_t evicted_manifests = 0;
    int64_t evicted_blobs = 0;
    int64_t evicted_bytes = 0;
    int64_t evictions_blocked = 0;
  };
  virtual Usage GetUsage() = 0;

  // Whether writes fail now because the file system is full or failing: RocksDB stopped writes
  // after an I/O error, or Open found the disk full and opened the cache read-only. Reads keep
  // working meanwhile, and writing resumes by itself once there is room (ENOSPC: RocksDB polls
  // the free space every 5 s; other errors: the store retries every 5 s). While stopped, writes
  // fail with RESOURCE_EXHAUSTED (no space) or UNAVAILABLE (other I/O errors) naming the cause.
  virtual bool WritesStopped() = 0;

  // Flushes memtables and closes the database, after waiting for calls in flight. Idempotent;
  // other calls afterwards fail with FAILED_PRECONDITION. Also done by the destructor.
  virtual absl::Status Close() = 0;
};

// Lowercase hex SHA-256 of `bytes`. Empty (never a valid digest) only if OpenSSL fails.
std::string Sha256Hex(absl::string_view bytes);

}  // namespace tccd::cache

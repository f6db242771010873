// StoreImpl: the RocksDB-backed Store. Declared here, defined by concern:
//   store_open.cc       Open, schema check, Close, GetUsage
//   store_blobs.cc      PutBlob, GetBlob, HasBlob
//   store_manifests.cc  PutManifest, GetManifest
//   store_jobs.cc       RecordJobUse, GetJob
//   store_profiles.cc   GetDynamicProfile, PutDynamicProfile, GetGemmTunes, PutGemmTunes
//   store_writable.cc   refusing writes while the disk is full, resuming them
//   store_eviction.cc   the size cap: loading the eviction index, evicting, access times
// The on-disk layout is in schema.h.
//
// Locking. `mu_` guards the database handle: every operation holds it shared
// for its whole duration; Close holds it exclusively, so Close waits for
// operations in flight and later operations see a closed store. Under `mu_`:
//   - blob_stripe_mu_[digest[0]] makes "check then write" on one blob atomic
//   (PutBlob's skip of an
//     intact copy, and the re-check before deleting a corrupt one, so a
//     concurrent PutBlob of good bytes is never deleted);
//   - jobs_mu_ makes RecordJobUse's read-modify-write atomic and guards the pending hits;
//   - verified_mu_ guards the verified-blob memo; it is a leaf (nothing is taken under it);
//   - lru_mu_ guards the eviction index and is always taken last (after a blob stripe). An
//     eviction decides its victims and writes their deletes in one batch while holding it, and
//     PutManifest adds its entry (referencing its blobs) under it before checking the blobs are
//     there: so either the eviction's batch came first and PutManifest finds a blob missing, or
//     the blob is referenced and not evicted. Never a manifest naming an evicted blob.
// Methods named *Locked require `mu_` held as annotated and never take it; all
// but CheckOpenLocked and CloseLocked also require the store open
// (CheckOpenLocked said OK).
#pragma once

#include <array>
#include <memory>
#include <thread>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cache/eviction_index.h"
#include "cache/store.h"
#include "cache/store_health.h"
#include "rocksdb/db.h"
#include "rocksdb/file_system.h"
#include "rocksdb/options.h"

namespace tccd::cache {

// INVALID_ARGUMENT unless `job_id` is a job id the store accepts (store.h); store_jobs.cc.
absl::Status ValidateJobId(absl::string_view job_id);

class StoreImpl final : public Store {
 public:
  // `fs` null means RocksDB's default (POSIX) file system; tests pass one that injects errors.
  StoreImpl(const StoreOptions& options, std::shared_ptr<rocksdb::FileSystem> fs);
  ~StoreImpl() override;

  // Opens (creating if needed) the database and checks its schema version.
  // Called once, by Open.
  absl::Status Init();

  absl::StatusOr<std::string> PutBlob(absl::string_view bytes,
                                      absl::string_view expected_digest) override;
  absl::StatusOr<std::string> GetBlob(absl::string_view digest) override;
  bool HasBlob(absl::string_view digest) override;

  absl::Status PutManifest(absl::string_view key, const v1::Manifest& manifest) override;
  absl::StatusOr<v1::Manifest> GetManifest(absl::string_view key) override;

  absl::Status RecordJobUse(absl::string_view job_id, absl::string_view key, bool compiled,
                            int64_t now_unix_ms) override;
  absl::StatusOr<std::vector<v1::JobEntry>> GetJob(absl::string_view job_id) override;

  absl::StatusOr<v1::DynamicProfile> GetDynamicProfile(absl::string_view job_id) override;
  absl::Status PutDynamicProfile(absl::string_view job_id,
                                 const v1::DynamicProfile& profile) override;
  absl::StatusOr<v1::GemmTuneTable> GetGemmTunes(absl::string_view row) override;
  absl::Status PutGemmTunes(absl::string_view row, const v1::GemmTuneTable& table) override;

  Usage GetUsage() override;
  bool WritesStopped() override;
  absl::Status Close() override;

 private:
  // store_open.cc
  absl::Status PrepareDirectory();
  rocksdb::DBOptions MakeDbOptions();
  std::vector<rocksdb::ColumnFamilyDescriptor> MakeDescriptors();
  // Opens the database: read-write, or, if that fails for lack of space, read-only (hits are
  // still served; the reopener thread upgrades it once there is room).
  absl::Status OpenDb();
  // Opens the database into db_/handles_ (which must be empty).
  absl::Status OpenRocksLocked(bool read_only) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Closes db_ (flushing first if it is writable and healthy) and clears the handles.
  absl::Status CloseDbLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckSchemaLocked() ABSL_SHARED_LOCKS_REQUIRED(mu_);
  absl::Status CloseLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckOpenLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  int64_t IntPropertyLocked(rocksdb::ColumnFamilyHandle* cf, const std::string& name) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);

  // store_writable.cc
  // OK if writes may be attempted now; RESOURCE_EXHAUSTED (full disk) or UNAVAILABLE (another
  // write error) naming the cause while writing is stopped. No write may reach RocksDB after a
  // failed one until the reopener has reopened the database.
  absl::Status CheckWritableLocked() ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // A failed write's status: RESOURCE_EXHAUSTED for no space, UNAVAILABLE for other I/O errors.
  absl::Status WriteError(const rocksdb::Status& s, absl::string_view context);
  // The reopener thread, running while the store is open: whenever writing is stopped (a failed
  // write, or a read-only open on a full disk) and the file system has room for a memtable, it
  // closes and reopens the database read-write (readers wait, briefly).
  void ReopenWhenSpaceIsBack();
  // Free bytes on the cache's file system, as RocksDB's file system reports them; 0 if unknown.
  uint64_t FreeBytes();
  void StartReopener();
  void StopReopener();

  // store_blobs.cc
  // Reads the blob `digest` (already validated) into `value`. NOT_FOUND if it
  // is absent, or if it is corrupt: bytes that do not hash to `digest` (checked
  // when options_.verify_on_read) or a RocksDB Corruption; a corrupt blob is
  // logged and deleted.
  absl::Status LoadBlobLocked(absl::string_view digest, rocksdb::PinnableSlice* value)
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // store_jobs.cc
  // Uses of one job row not yet written: hits are counted here and written at most every
  // kJobUseFlushInterval (by the hit that finds the batch due), by GetJob before it reads,
  // and at close. A hit used to cost a RocksDB read and a WAL write (~8% of its CPU at
  // 300 hits/s); a SIGKILL now loses at most that interval of hit counts, never an entry
  // (a use that compiled is written at once).
  struct PendingJobUse {
    int64_t uses = 0;
    int64_t first_ms = 0;
    int64_t last_ms = 0;
  };
  // Merges `uses` uses between first_ms and last_ms into the row `row` of `job_id`.
  absl::Status WriteJobUseLocked(absl::string_view job_id, absl::string_view key,
                                 const std::string& row, const PendingJobUse& use, bool compiled)
      ABSL_SHARED_LOCKS_REQUIRED(mu_) ABSL_EXCLUSIVE_LOCKS_REQUIRED(jobs_mu_);
  // Writes every pending hit; the first error is returned, the rest are dropped with it.
  absl::Status FlushJobUsesLocked() ABSL_SHARED_LOCKS_REQUIRED(mu_)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(jobs_mu_);

  // The verified-blob memo: digests whose bytes this process hashed (PutBlob, or a verified
  // read) since the database was opened and that no delete has touched since. GetManifest
  // checks a memoized blob without reading and hashing it again: a cache hit's manifest names
  // every artifact (~45 kB for a small graph, ~120 us of SHA-256 on this VM's cores), and
  // every hit paid that before. Anything that deletes blobs (eviction, a corrupt blob dropped)
  // or reopens the database clears the memo, so a memoized blob is a stored, intact one;
  // corruption RocksDB can see (checksums) is still reported by RocksDB on the next real read,
  // and bytes changed behind our back by another writer are caught by the first read after
  // the next open, as before. FetchArtifact (GetBlob) still verifies every read.
  bool IsVerifiedBlob(absl::string_view digest);
  void MarkVerifiedBlob(absl::string_view digest);
  void ForgetVerifiedBlobs();
  // Logs and deletes the corrupt blob `digest` unless a concurrent PutBlob has
  // already replaced it with intact bytes; returns the NOT_FOUND that
  // LoadBlobLocked reports.
  absl::Status DropCorruptBlobLocked(absl::string_view digest, absl::string_view problem)
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  absl::Mutex& BlobStripe(absl::string_view digest);

  // store_manifests.cc: PutManifest after validation; `value` is `manifest` serialized.
  absl::Status PutManifestLocked(absl::string_view key, const v1::Manifest& manifest,
                                 const std::string& value) ABSL_SHARED_LOCKS_REQUIRED(mu_);

  // store_eviction.cc. All no-ops unless eviction_enabled().
  bool eviction_enabled() const { return options_.max_bytes > 0; }
  int64_t NowMs() const;
  // Builds the eviction index from the database (every manifest, blob and access time; reads
  // every blob once) and deletes access rows whose manifest is gone.
  absl::Status LoadEvictionIndexLocked() ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // If the store is over max_bytes, evicts down to the low watermark in one write batch.
  void EvictIfOverLocked() ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Writes the access times hits changed since the last flush.
  void FlushAccessTimesLocked() ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Reclaims the space of evicted blobs in RocksDB blob files (a forced blob garbage collection)
  // once enough has been evicted since the last time.
  void CompactAfterEvictionsLocked() ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The maintenance thread: flushes access times and compacts, every few seconds.
  void StartMaintenance();
  void StopMaintenance();  // flushes access times a last time
  void MaintenanceLoop();

  const StoreOptions options_;
  const std::shared_ptr<rocksdb::FileSystem> fs_;  // null: RocksDB's default
  std::unique_ptr<rocksdb::Env> env_;              // wraps fs_; null when fs_ is
  const std::shared_ptr<StoreHealth> health_;      // registered as RocksDB's listener
  const rocksdb::WriteOptions write_options_;  // sync=false: the WAL makes writes survive SIGKILL
  const rocksdb::ReadOptions read_options_;

  mutable absl::Mutex mu_;
  std::unique_ptr<rocksdb::DB> db_ ABSL_GUARDED_BY(mu_);  // null once closed
  // Owned by db_; destroyed before it. Unknown column families (from a newer
  // tccd) are opened too, only so that Open can report the schema version
  // instead of a RocksDB error.
  std::vector<rocksdb::ColumnFamilyHandle*> handles_ ABSL_GUARDED_BY(mu_);
  rocksdb::ColumnFamilyHandle* blobs_ ABSL_GUARDED_BY(mu_) = nullptr;
  rocksdb::ColumnFamilyHandle* actions_ ABSL_GUARDED_BY(mu_) = nullptr;
  rocksdb::ColumnFamilyHandle* jobs_ ABSL_GUARDED_BY(mu_) = nullptr;
  rocksdb::ColumnFamilyHandle* meta_ ABSL_GUARDED_BY(mu_) = nullptr;
  rocksdb::ColumnFamilyHandle* access_ ABSL_GUARDED_BY(mu_) = nullptr;
  // Null only in a read-only open of a cache made before profiles existed.
  rocksdb::ColumnFamilyHandle* profiles_ ABSL_GUARDED_BY(mu_) = nullptr;

  // Opened read-only because the file system was full at Open; writes are refused until the
  // reopener thread reopens it read-write.
  bool read_only_ ABSL_GUARDED_BY(mu_) = false;

  absl::Mutex reopener_mu_;
  bool stop_reopener_ ABSL_GUARDED_BY(reopener_mu_) = false;
  std::thread reopener_;

  std::array<absl::Mutex, 16> blob_stripe_mu_;
  absl::Mutex verified_mu_;  // a leaf: held only inside the memo's three methods
  absl::flat_hash_set<std::string> verified_blobs_ ABSL_GUARDED_BY(verified_mu_);
  absl::Mutex jobs_mu_;
  // Row key -> (job id, compile key, pending uses); see PendingJobUse.
  struct PendingJobRow {
    std::string job_id;
    std::string key;
    PendingJobUse use;
  };
  absl::flat_hash_map<std::string, PendingJobRow> pending_job_uses_ ABSL_GUARDED_BY(jobs_mu_);
  absl::Time last_job_flush_ ABSL_GUARDED_BY(jobs_mu_) = absl::InfinitePast();

  absl::Mutex lru_mu_;  // taken last: after mu_, a blob stripe, never before them
  EvictionIndex lru_ ABSL_GUARDED_BY(lru_mu_);
  // Whether the store is over its cap with nothing evictable; logged once per such episode.
  bool over_cap_logged_ ABSL_GUARDED_BY(lru_mu_) = false;
  int64_t evicted_manifests_ ABSL_GUARDED_BY(lru_mu_) = 0;
  int64_t evicted_blobs_ ABSL_GUARDED_BY(lru_mu_) = 0;
  int64_t evicted_bytes_ ABSL_GUARDED_BY(lru_mu_) = 0;
  int64_t evictions_blocked_ ABSL_GUARDED_BY(lru_mu_) = 0;
  int64_t evicted_bytes_since_compaction_ ABSL_GUARDED_BY(lru_mu_) = 0;

  absl::Mutex maintenance_mu_;
  bool stop_maintenance_ ABSL_GUARDED_BY(maintenance_mu_) = false;
  std::thread maintenance_;
};

}  // namespace tccd::cache

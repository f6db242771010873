// StoreImpl: the RocksDB-backed Store. Declared here, defined by concern:
//   store_open.cc       Open, schema check, Close, GetUsage
//   store_blobs.cc      PutBlob, GetBlob, HasBlob
//   store_manifests.cc  PutManifest, GetManifest
//   store_jobs.cc       RecordJobUse, GetJob
// The on-disk layout is in schema.h.
//
// Locking. `mu_` guards the database handle: every operation holds it shared
// for its whole duration; Close holds it exclusively, so Close waits for
// operations in flight and later operations see a closed store. Under `mu_`:
//   - blob_stripe_mu_[digest[0]] makes "check then write" on one blob atomic
//   (PutBlob's skip of an
//     intact copy, and the re-check before deleting a corrupt one, so a
//     concurrent PutBlob of good bytes is never deleted);
//   - jobs_mu_ makes RecordJobUse's read-modify-write atomic.
// Methods named *Locked require `mu_` held as annotated and never take it; all
// but CheckOpenLocked and CloseLocked also require the store open
// (CheckOpenLocked said OK).
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "cache/store.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"

namespace tccd::cache {

class StoreImpl final : public Store {
 public:
  explicit StoreImpl(const StoreOptions& options);
  ~StoreImpl() override;

  // Opens (creating if needed) the database and checks its schema version.
  // Called once, by Open.
  absl::Status Init();

  absl::StatusOr<std::string> PutBlob(
      absl::string_view bytes, absl::string_view expected_digest) override;
  absl::StatusOr<std::string> GetBlob(absl::string_view digest) override;
  bool HasBlob(absl::string_view digest) override;

  absl::Status PutManifest(absl::string_view key,
                           const v1::Manifest& manifest) override;
  absl::StatusOr<v1::Manifest> GetManifest(absl::string_view key) override;

  absl::Status RecordJobUse(absl::string_view job_id, absl::string_view key,
                            bool compiled, int64_t now_unix_ms) override;
  absl::StatusOr<std::vector<v1::JobEntry>> GetJob(
      absl::string_view job_id) override;

  Usage GetUsage() override;
  absl::Status Close() override;

 private:
  // store_open.cc
  absl::Status PrepareDirectory();
  absl::Status OpenDb();
  absl::Status CheckSchemaLocked() ABSL_SHARED_LOCKS_REQUIRED(mu_);
  absl::Status CloseLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckOpenLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  int64_t IntPropertyLocked(rocksdb::ColumnFamilyHandle* cf,
                            const std::string& name) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);

  // store_blobs.cc
  // Reads the blob `digest` (already validated) into `value`. NOT_FOUND if it
  // is absent, or if it is corrupt: bytes that do not hash to `digest` (checked
  // when options_.verify_on_read) or a RocksDB Corruption; a corrupt blob is
  // logged and deleted.
  absl::Status LoadBlobLocked(absl::string_view digest,
                              rocksdb::PinnableSlice* value)
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Logs and deletes the corrupt blob `digest` unless a concurrent PutBlob has
  // already replaced it with intact bytes; returns the NOT_FOUND that
  // LoadBlobLocked reports.
  absl::Status DropCorruptBlobLocked(absl::string_view digest,
                                     absl::string_view problem)
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  absl::Mutex& BlobStripe(absl::string_view digest);

  const StoreOptions options_;
  const rocksdb::WriteOptions
      write_options_;  // sync=false: the WAL makes writes survive SIGKILL
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

  std::array<absl::Mutex, 16> blob_stripe_mu_;
  absl::Mutex jobs_mu_;
};

}  // namespace tccd::cache

// Store::Open, the schema-version check, Close and GetUsage.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cache/rocks_interop.h"
#include "cache/rocks_logger.h"
#include "cache/store_testing.h"
#include "cache/schema.h"
#include "cache/store_impl.h"
#include "base/status_macros.h"
#include "rocksdb/cache.h"
#include "rocksdb/env.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"
#include "spdlog/spdlog.h"

namespace tccd::cache {
namespace {

// Values at least this large go to RocksDB blob files instead of SSTs
// (integrated BlobDB), so compactions move a small reference rather than the
// artifact's bytes.
constexpr uint64_t kMinBlobFileValueBytes = 4096;

rocksdb::WriteOptions DefaultWriteOptions() {
  rocksdb::WriteOptions options;
  // No fsync per write: the WAL is still written before a write returns, so a
  // SIGKILLed daemon loses nothing (only a power loss may drop the last writes,
  // which then read as misses).
  options.sync = false;
  options.disableWAL = false;
  return options;
}

}  // namespace

namespace {

absl::StatusOr<std::unique_ptr<Store>> OpenStore(const StoreOptions& options,
                                                 std::shared_ptr<rocksdb::FileSystem> fs) {
  if (options.path.empty()) return absl::InvalidArgumentError("StoreOptions.path is empty");
  if (options.write_buffer_bytes < (64 << 10)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "StoreOptions.write_buffer_bytes must be >= 64 KiB, got ", options.write_buffer_bytes));
  }
  if (options.max_bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("StoreOptions.max_bytes must be >= 0, got ", options.max_bytes));
  }
  if (!(options.low_watermark > 0 && options.low_watermark <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("StoreOptions.low_watermark must be in (0, 1], got ", options.low_watermark));
  }
  if (options.min_age_ms < 0 || options.pending_blob_grace_ms < 0) {
    return absl::InvalidArgumentError(
        "StoreOptions.min_age_ms and pending_blob_grace_ms must be >= 0");
  }
  if (options.block_cache_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "StoreOptions.block_cache_bytes must be >= 0, got ", options.block_cache_bytes));
  }
  auto store = std::make_unique<StoreImpl>(options, std::move(fs));
  RETURN_IF_ERROR(store->Init());
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const StoreOptions& options) {
  return OpenStore(options, nullptr);
}

absl::StatusOr<std::unique_ptr<Store>> OpenStoreWithFileSystemForTesting(
    const StoreOptions& options, std::shared_ptr<rocksdb::FileSystem> fs) {
  return OpenStore(options, std::move(fs));
}

StoreImpl::StoreImpl(const StoreOptions& options, std::shared_ptr<rocksdb::FileSystem> fs)
    : options_(options),
      fs_(std::move(fs)),
      health_(std::make_shared<StoreHealth>(options.path)),
      write_options_(DefaultWriteOptions()) {
  if (fs_ != nullptr) env_ = rocksdb::NewCompositeEnv(fs_);
}

StoreImpl::~StoreImpl() {
  absl::Status status = Close();
  if (!status.ok()) spdlog::error("cache: closing {}: {}", options_.path, status.ToString());
}

absl::Status StoreImpl::Init() {
  RETURN_IF_ERROR(PrepareDirectory());
  RETURN_IF_ERROR(OpenDb());
  {
    absl::ReaderMutexLock lock(&mu_);
    RETURN_IF_ERROR(CheckSchemaLocked());
    RETURN_IF_ERROR(LoadEvictionIndexLocked());
  }
  StartReopener();
  StartMaintenance();
  return absl::OkStatus();
}

absl::Status StoreImpl::PrepareDirectory() {
  const std::filesystem::path dir(options_.path);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::string message =
        absl::StrCat("cannot create cache dir ", options_.path, ": ", ec.message());
    return ec == std::errc::permission_denied ? absl::PermissionDeniedError(message)
                                              : absl::FailedPreconditionError(message);
  }
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat("cache dir ", options_.path, " exists and is not a directory"));
  }
  // RocksDB would fail too, but with a message about some file inside the
  // directory.
  if (access(options_.path.c_str(), W_OK | X_OK) != 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        "cache dir ", options_.path, " is not writable by this user (uid ", getuid(), ")"));
  }
  return absl::OkStatus();
}

rocksdb::DBOptions StoreImpl::MakeDbOptions() {
  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  if (env_ != nullptr) db_options.env = env_.get();
  // RocksDB's diagnostics go to our log, not to a LOG file on the cache's file system: with that
  // file system full, RocksDB 7.8 aborts on the log line after a failed LOG write.
  db_options.info_log = NewSpdlogRocksLogger();
  db_options.listeners.push_back(health_);
  // Writing resumes by a reopen, not by RocksDB's in-place recovery (store_health.h says why);
  // this turns off its retries after retryable I/O errors, the listener the rest.
  db_options.max_bgerror_resume_count = 0;
  // Close must not write more than our explicit flush: on a full disk, DB::Close's own flush
  // would write to the WAL whose last append failed, which RocksDB 7.8 asserts against. The WAL
  // already holds every write, so skipping the flush loses nothing.
  db_options.avoid_flush_during_shutdown = true;
  return db_options;
}

std::vector<rocksdb::ColumnFamilyDescriptor> StoreImpl::MakeDescriptors() {
  rocksdb::BlockBasedTableOptions table;
  if (options_.block_cache_bytes > 0) {
    table.block_cache = rocksdb::NewLRUCache(static_cast<size_t>(options_.block_cache_bytes));
  } else {
    table.no_block_cache = true;
  }
  // Almost every read is a point lookup by digest or key; most Compile calls
  // start with a miss.
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  rocksdb::ColumnFamilyOptions base;
  base.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  base.write_buffer_size = static_cast<size_t>(options_.write_buffer_bytes);

  rocksdb::ColumnFamilyOptions blobs = base;
  blobs.enable_blob_files = true;
  blobs.min_blob_size = kMinBlobFileValueBytes;
  blobs.enable_blob_garbage_collection = true;  // reclaims deleted (corrupt) blobs

  return {
      {rocksdb::kDefaultColumnFamilyName, base},
      {kBlobsColumnFamily, blobs},
      {kActionsColumnFamily, base},
      {kJobsColumnFamily, base},
      {kMetaColumnFamily, base},
      {kAccessColumnFamily, base},
      {kProfilesColumnFamily, base},
  };
}

absl::Status StoreImpl::OpenDb() {
  absl::MutexLock lock(&mu_);
  absl::Status opened = OpenRocksLocked(/*read_only=*/false);
  if (!absl::IsResourceExhausted(opened)) return opened;
  // No room to open for writing (RocksDB writes a new MANIFEST and WAL at every open). What is
  // stored can still be served: open read-only and upgrade once there is room.
  RETURN_IF_ERROR(OpenRocksLocked(/*read_only=*/true));
  read_only_ = true;
  health_->MarkStopped(absl::StrCat("opened read-only: ", opened.message()),
                       /*no_space=*/true);
  return absl::OkStatus();
}

absl::Status StoreImpl::OpenRocksLocked(bool read_only) {
  ForgetVerifiedBlobs();  // what is on disk may have changed while it was closed
  const rocksdb::DBOptions db_options = MakeDbOptions();
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors = MakeDescriptors();
  const rocksdb::ColumnFamilyOptions base = descriptors.front().options;
  // RocksDB refuses to open a database without naming all of its column
  // families. Open any we do not know (a newer tccd's) with default options, so
  // the schema check can explain.
  if (std::filesystem::exists(std::filesystem::path(options_.path) / "CURRENT")) {
    std::vector<std::string> existing;
    rocksdb::Status s = rocksdb::DB::ListColumnFamilies(db_options, options_.path, &existing);
    RETURN_IF_ERROR(FromRocks(s, absl::StrCat("reading cache dir ", options_.path)));
    for (const std::string& name : existing) {
      bool known = false;
      for (const auto& d : descriptors) known = known || d.name == name;
      if (!known) descriptors.emplace_back(name, base);
    }
    if (read_only) {
      // A read-only open cannot create column families: leave out those this cache does not
      // have yet ("access", added for eviction, in a cache made before it).
      std::erase_if(descriptors, [&](const rocksdb::ColumnFamilyDescriptor& d) {
        return std::find(existing.begin(), existing.end(), d.name) == existing.end();
      });
    }
  }

  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw_db = nullptr;
  rocksdb::Status s =
      read_only
          ? rocksdb::DB::OpenForReadOnly(db_options, options_.path, descriptors, &handles, &raw_db)
          : rocksdb::DB::Open(db_options, options_.path, descriptors, &handles, &raw_db);
  if (IsLockHeldError(s)) {
    return absl::FailedPreconditionError(
        absl::StrCat("cache dir ", options_.path,
                     " is in use by another tccd (RocksDB lock held): ", s.ToString()));
  }
  if (s.IsNoSpace()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("opening cache dir ", options_.path, ": ", s.ToString()));
  }
  RETURN_IF_ERROR(FromRocks(s, absl::StrCat("opening cache dir ", options_.path)));

  db_.reset(raw_db);
  handles_ = std::move(handles);
  for (rocksdb::ColumnFamilyHandle* handle : handles_) {
    const std::string& name = handle->GetName();
    if (name == kBlobsColumnFamily) blobs_ = handle;
    if (name == kActionsColumnFamily) actions_ = handle;
    if (name == kJobsColumnFamily) jobs_ = handle;
    if (name == kMetaColumnFamily) meta_ = handle;
    if (name == kAccessColumnFamily) access_ = handle;
    if (name == kProfilesColumnFamily) profiles_ = handle;
  }
  RET_CHECK(blobs_ != nullptr && actions_ != nullptr && jobs_ != nullptr && meta_ != nullptr);
  // access_ is null only in a read-only open of a cache made before it existed.
  return absl::OkStatus();
}

absl::Status StoreImpl::CheckSchemaLocked() {
  const std::string& path = options_.path;
  std::string value;
  rocksdb::Status s = db_->Get(read_options_, meta_, kSchemaVersionKey, &value);
  if (s.IsNotFound()) {
    // A new database (or one whose first Open died before this record was
    // written). Adopt it only if it holds no data, so a foreign RocksDB
    // directory is never taken over.
    for (rocksdb::ColumnFamilyHandle* handle : handles_) {
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read_options_, handle));
      it->SeekToFirst();
      RETURN_IF_ERROR(FromRocks(it->status(), absl::StrCat("reading cache dir ", path)));
      if (it->Valid()) {
        return absl::FailedPreconditionError(
            absl::StrCat("cache dir ", path,
                         " holds a RocksDB database without a tccd schema version "
                         "record (not a tccd cache, or damaged); use another cache dir"));
      }
    }
    rocksdb::WriteOptions sync = write_options_;
    sync.sync = true;
    s = db_->Put(sync, meta_, kSchemaVersionKey, std::to_string(kSchemaVersion));
    RETURN_IF_ERROR(FromRocks(s, absl::StrCat("initializing cache dir ", path)));
    spdlog::info("cache: created cache dir {} (schema version {})", path, kSchemaVersion);
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(FromRocks(s, absl::StrCat("reading the schema version of cache dir ", path)));

  int version = 0;
  if (!absl::SimpleAtoi(value, &version)) {
    return absl::FailedPreconditionError(
        absl::StrCat("cache dir ", path, " has an unreadable schema version record"));
  }
  if (version > kSchemaVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("cache dir ", path, " was written by a newer tccd (cache schema version ",
                     version, "; this tccd reads version ", kSchemaVersion,
                     "); run a newer tccd or use another cache dir"));
  }
  if (version != kSchemaVersion) {
    // No older layout exists yet; when one does, migrate it here.
    return absl::FailedPreconditionError(
        absl::StrCat("cache dir ", path, " has unknown cache schema version ", version,
                     " (this tccd reads version ", kSchemaVersion, "); use another cache dir"));
  }
  return absl::OkStatus();
}

absl::Status StoreImpl::CheckOpenLocked() const {
  if (db_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("cache store ", options_.path, " is closed"));
  }
  return absl::OkStatus();
}

absl::Status StoreImpl::Close() {
  StopMaintenance();
  StopReopener();
  absl::MutexLock lock(&mu_);
  return CloseLocked();
}

absl::Status StoreImpl::CloseLocked() { return CloseDbLocked(); }

absl::Status StoreImpl::CloseDbLocked() {
  if (db_ == nullptr) return absl::OkStatus();
  absl::Status status;
  {
    absl::MutexLock jobs_lock(&jobs_mu_);
    // Batched hits of the job index (store_jobs.cc); bookkeeping, so a failure is logged, not
    // returned: Close reports the database's own state.
    if (!read_only_ && !health_->writes_stopped()) {
      if (absl::Status flushed = FlushJobUsesLocked(); !flushed.ok()) {
        spdlog::warn("cache: writing pending job uses at close: {}", flushed.ToString());
      }
    }
    pending_job_uses_.clear();
  }
  // Writes so far are in the WAL already; flushing leaves a clean database
  // whose next Open has no log to replay. Not while writing is stopped: the
  // flush would fail (or, in RocksDB 7.8, assert on the failed WAL) and the
  // WAL is replayed at the next Open anyway.
  if (!read_only_ && !health_->writes_stopped()) {
    rocksdb::FlushOptions flush;
    flush.wait = true;
    status.Update(
        FromRocks(db_->Flush(flush, handles_), absl::StrCat("flushing cache dir ", options_.path)));
  }
  for (rocksdb::ColumnFamilyHandle* handle : handles_) {
    status.Update(FromRocks(db_->DestroyColumnFamilyHandle(handle),
                            absl::StrCat("closing cache dir ", options_.path)));
  }
  handles_.clear();
  blobs_ = actions_ = jobs_ = meta_ = access_ = profiles_ = nullptr;
  rocksdb::Status closed = db_->Close();
  if (!closed.ok() && (read_only_ || health_->writes_stopped())) {
    // Expected: RocksDB syncs the WAL whose last append failed. Every acknowledged write is in
    // the WAL before it, and the next Open replays it.
    spdlog::warn("cache: closed {} while writing was stopped: {}", options_.path,
                 closed.ToString());
  } else {
    status.Update(FromRocks(closed, absl::StrCat("closing cache dir ", options_.path)));
  }
  db_.reset();
  return status;
}

int64_t StoreImpl::IntPropertyLocked(rocksdb::ColumnFamilyHandle* cf,
                                     const std::string& name) const {
  uint64_t value = 0;
  if (!db_->GetIntProperty(cf, name, &value)) return 0;
  return static_cast<int64_t>(value);
}

bool StoreImpl::WritesStopped() {
  absl::ReaderMutexLock lock(&mu_);
  return read_only_ || health_->writes_stopped();
}

Store::Usage StoreImpl::GetUsage() {
  absl::ReaderMutexLock lock(&mu_);
  Usage usage;
  if (!CheckOpenLocked().ok()) return usage;
  // RocksDB estimates: exact after a flush and without overwrites or deletes.
  usage.blobs = IntPropertyLocked(blobs_, rocksdb::DB::Properties::kEstimateNumKeys);
  usage.manifests = IntPropertyLocked(actions_, rocksdb::DB::Properties::kEstimateNumKeys);
  usage.blob_bytes = IntPropertyLocked(blobs_, rocksdb::DB::Properties::kEstimateLiveDataSize) +
                     IntPropertyLocked(blobs_, rocksdb::DB::Properties::kLiveBlobFileSize) +
                     IntPropertyLocked(blobs_, rocksdb::DB::Properties::kCurSizeAllMemTables);
  if (eviction_enabled()) {
    absl::MutexLock lru_lock(&lru_mu_);
    usage.logical_bytes = lru_.total_bytes();
    usage.max_bytes = options_.max_bytes;
    usage.evicted_manifests = evicted_manifests_;
    usage.evicted_blobs = evicted_blobs_;
    usage.evicted_bytes = evicted_bytes_;
    usage.evictions_blocked = evictions_blocked_;
  }
  return usage;
}

}  // namespace tccd::cache

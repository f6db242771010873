// Store::Open, the schema-version check, Close and GetUsage.
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cache/rocks_interop.h"
#include "cache/schema.h"
#include "cache/store_impl.h"
#include "proto/status_macros.h"
#include "rocksdb/cache.h"
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

absl::StatusOr<std::unique_ptr<Store>> Store::Open(
    const StoreOptions& options) {
  if (options.path.empty())
    return absl::InvalidArgumentError("StoreOptions.path is empty");
  if (options.block_cache_bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("StoreOptions.block_cache_bytes must be >= 0, got ",
                     options.block_cache_bytes));
  }
  auto store = std::make_unique<StoreImpl>(options);
  RETURN_IF_ERROR(store->Init());
  return std::unique_ptr<Store>(std::move(store));
}

StoreImpl::StoreImpl(const StoreOptions& options)
    : options_(options), write_options_(DefaultWriteOptions()) {}

StoreImpl::~StoreImpl() {
  absl::Status status = Close();
  if (!status.ok())
    spdlog::error("cache: closing {}: {}", options_.path, status.ToString());
}

absl::Status StoreImpl::Init() {
  RETURN_IF_ERROR(PrepareDirectory());
  RETURN_IF_ERROR(OpenDb());
  absl::ReaderMutexLock lock(&mu_);
  return CheckSchemaLocked();
}

absl::Status StoreImpl::PrepareDirectory() {
  const std::filesystem::path dir(options_.path);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::string message = absl::StrCat("cannot create cache dir ",
                                       options_.path, ": ", ec.message());
    return ec == std::errc::permission_denied
               ? absl::PermissionDeniedError(message)
               : absl::FailedPreconditionError(message);
  }
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cache dir ", options_.path, " exists and is not a directory"));
  }
  // RocksDB would fail too, but with a message about some file inside the
  // directory.
  if (access(options_.path.c_str(), W_OK | X_OK) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cache dir ", options_.path,
                     " is not writable by this user (uid ", getuid(), ")"));
  }
  return absl::OkStatus();
}

absl::Status StoreImpl::OpenDb() {
  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  db_options.keep_log_file_num = 4;  // RocksDB's own LOG files in the cache dir

  rocksdb::BlockBasedTableOptions table;
  if (options_.block_cache_bytes > 0) {
    table.block_cache =
        rocksdb::NewLRUCache(static_cast<size_t>(options_.block_cache_bytes));
  } else {
    table.no_block_cache = true;
  }
  // Almost every read is a point lookup by digest or key; most Compile calls
  // start with a miss.
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  rocksdb::ColumnFamilyOptions base;
  base.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));

  rocksdb::ColumnFamilyOptions blobs = base;
  blobs.enable_blob_files = true;
  blobs.min_blob_size = kMinBlobFileValueBytes;
  blobs.enable_blob_garbage_collection =
      true;  // reclaims deleted (corrupt) blobs

  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors = {
      {rocksdb::kDefaultColumnFamilyName, base},
      {kBlobsColumnFamily, blobs},
      {kActionsColumnFamily, base},
      {kJobsColumnFamily, base},
      {kMetaColumnFamily, base},
  };
  // RocksDB refuses to open a database without naming all of its column
  // families. Open any we do not know (a newer tccd's) with default options, so
  // the schema check can explain.
  if (std::filesystem::exists(std::filesystem::path(options_.path) /
                              "CURRENT")) {
    std::vector<std::string> existing;
    rocksdb::Status s =
        rocksdb::DB::ListColumnFamilies(db_options, options_.path, &existing);
    RETURN_IF_ERROR(
        FromRocks(s, absl::StrCat("reading cache dir ", options_.path)));
    for (const std::string& name : existing) {
      bool known = false;
      for (const auto& d : descriptors) known = known || d.name == name;
      if (!known) descriptors.emplace_back(name, base);
    }
  }

  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw_db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(db_options, options_.path, descriptors,
                                        &handles, &raw_db);
  if (IsLockHeldError(s)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cache dir ", options_.path,
        " is in use by another tccd (RocksDB lock held): ", s.ToString()));
  }
  RETURN_IF_ERROR(
      FromRocks(s, absl::StrCat("opening cache dir ", options_.path)));

  absl::MutexLock lock(&mu_);
  db_.reset(raw_db);
  handles_ = std::move(handles);
  for (rocksdb::ColumnFamilyHandle* handle : handles_) {
    const std::string& name = handle->GetName();
    if (name == kBlobsColumnFamily) blobs_ = handle;
    if (name == kActionsColumnFamily) actions_ = handle;
    if (name == kJobsColumnFamily) jobs_ = handle;
    if (name == kMetaColumnFamily) meta_ = handle;
  }
  RET_CHECK(blobs_ != nullptr && actions_ != nullptr && jobs_ != nullptr &&
            meta_ != nullptr);
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
      std::unique_ptr<rocksdb::Iterator> it(
          db_->NewIterator(read_options_, handle));
      it->SeekToFirst();
      RETURN_IF_ERROR(
          FromRocks(it->status(), absl::StrCat("reading cache dir ", path)));
      if (it->Valid()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "cache dir ", path,
            " holds a RocksDB database without a tccd schema version "
            "record (not a tccd cache, or damaged); use another cache dir"));
      }
    }
    rocksdb::WriteOptions sync = write_options_;
    sync.sync = true;
    s = db_->Put(sync, meta_, kSchemaVersionKey,
                 std::to_string(kSchemaVersion));
    RETURN_IF_ERROR(
        FromRocks(s, absl::StrCat("initializing cache dir ", path)));
    spdlog::info("cache: created cache dir {} (schema version {})", path,
                 kSchemaVersion);
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(FromRocks(
      s, absl::StrCat("reading the schema version of cache dir ", path)));

  int version = 0;
  if (!absl::SimpleAtoi(value, &version)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cache dir ", path, " has an unreadable schema version record"));
  }
  if (version > kSchemaVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("cache dir ", path,
                     " was written by a newer tccd (cache schema version ",
                     version, "; this tccd reads version ", kSchemaVersion,
                     "); run a newer tccd or use another cache dir"));
  }
  if (version != kSchemaVersion) {
    // No older layout exists yet; when one does, migrate it here.
    return absl::FailedPreconditionError(
        absl::StrCat("cache dir ", path, " has unknown cache schema version ",
                     version, " (this tccd reads version ", kSchemaVersion,
                     "); use another cache dir"));
  }
  return absl::OkStatus();
}

absl::Status StoreImpl::CheckOpenLocked() const {
  if (db_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("cache store ", options_.path, " is closed"));
  }
  return absl::OkStatus();
}

absl::Status StoreImpl::Close() {
  absl::MutexLock lock(&mu_);
  return CloseLocked();
}

absl::Status StoreImpl::CloseLocked() {
  if (db_ == nullptr) return absl::OkStatus();
  absl::Status status;
  // Writes so far are in the WAL already; flushing leaves a clean database
  // whose next Open has no log to replay.
  rocksdb::FlushOptions flush;
  flush.wait = true;
  status.Update(FromRocks(db_->Flush(flush, handles_),
                          absl::StrCat("flushing cache dir ", options_.path)));
  for (rocksdb::ColumnFamilyHandle* handle : handles_) {
    status.Update(FromRocks(db_->DestroyColumnFamilyHandle(handle),
                            absl::StrCat("closing cache dir ", options_.path)));
  }
  handles_.clear();
  blobs_ = actions_ = jobs_ = meta_ = nullptr;
  status.Update(FromRocks(db_->Close(),
                          absl::StrCat("closing cache dir ", options_.path)));
  db_.reset();
  return status;
}

int64_t StoreImpl::IntPropertyLocked(rocksdb::ColumnFamilyHandle* cf,
                                     const std::string& name) const {
  uint64_t value = 0;
  if (!db_->GetIntProperty(cf, name, &value)) return 0;
  return static_cast<int64_t>(value);
}

Store::Usage StoreImpl::GetUsage() {
  absl::ReaderMutexLock lock(&mu_);
  Usage usage;
  if (!CheckOpenLocked().ok()) return usage;
  // RocksDB estimates: exact after a flush and without overwrites or deletes.
  usage.blobs =
      IntPropertyLocked(blobs_, rocksdb::DB::Properties::kEstimateNumKeys);
  usage.manifests =
      IntPropertyLocked(actions_, rocksdb::DB::Properties::kEstimateNumKeys);
  usage.blob_bytes =
      IntPropertyLocked(blobs_,
                        rocksdb::DB::Properties::kEstimateLiveDataSize) +
      IntPropertyLocked(blobs_, rocksdb::DB::Properties::kLiveBlobFileSize) +
      IntPropertyLocked(blobs_, rocksdb::DB::Properties::kCurSizeAllMemTables);
  return usage;
}

}  // namespace tccd::cache

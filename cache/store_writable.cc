// Writing while the file system is full or failing: refusing writes with a clear status while
// writing is stopped, and resuming by reopening the database once there is room, without a
// restart. store_health.h tells the whole story (and why not RocksDB's in-place recovery).
#include <string>

#include "absl/strings/str_cat.h"
#include "cache/rocks_interop.h"
#include "cache/store_impl.h"
#include "base/status_macros.h"
#include "spdlog/spdlog.h"

namespace tccd::cache {
namespace {

// How often the reopener looks at the free space while writing is stopped.
constexpr absl::Duration kPollInterval = absl::Seconds(1);
// After a failed reopen, wait this long before the next try.
constexpr absl::Duration kRetryInterval = absl::Seconds(5);

}  // namespace

absl::Status StoreImpl::WriteError(const rocksdb::Status& s, absl::string_view context) {
  if (s.ok()) return absl::OkStatus();
  const std::string message =
      absl::StrCat(context, ": ", s.ToString(), " (cache dir ", options_.path, ")");
  if (s.IsNoSpace() || s.subcode() == rocksdb::Status::kSpaceLimit)
    return absl::ResourceExhaustedError(message);
  if (s.IsIOError()) return absl::UnavailableError(message);
  return FromRocks(s, context);
}

absl::Status StoreImpl::CheckWritableLocked() {
  if (!read_only_ && !health_->writes_stopped()) return absl::OkStatus();
  const std::string message =
      absl::StrCat("the cache dir ", options_.path, " cannot be written now (", health_->reason(),
                   "); stored entries are still served and writing resumes by itself once "
                   "the file system has room");
  return health_->no_space() ? absl::ResourceExhaustedError(message)
                             : absl::UnavailableError(message);
}

uint64_t StoreImpl::FreeBytes() {
  rocksdb::FileSystem* fs = fs_ != nullptr ? fs_.get() : rocksdb::FileSystem::Default().get();
  uint64_t free_bytes = 0;
  rocksdb::IOStatus s = fs->GetFreeSpace(options_.path, rocksdb::IOOptions(), &free_bytes, nullptr);
  return s.ok() ? free_bytes : 0;
}

void StoreImpl::StartReopener() {
  reopener_ = std::thread([this] { ReopenWhenSpaceIsBack(); });
}

void StoreImpl::StopReopener() {
  {
    absl::MutexLock lock(&reopener_mu_);
    stop_reopener_ = true;
  }
  if (reopener_.joinable()) reopener_.join();
}

void StoreImpl::ReopenWhenSpaceIsBack() {
  absl::Duration wait = kPollInterval;
  while (true) {
    {
      absl::MutexLock lock(&reopener_mu_);
      auto stop = [this]() ABSL_SHARED_LOCKS_REQUIRED(reopener_mu_) { return stop_reopener_; };
      reopener_mu_.AwaitWithTimeout(absl::Condition(&stop), wait);
      if (stop_reopener_) return;
    }
    wait = kPollInterval;
    if (!health_->writes_stopped()) continue;
    // A reopen flushes the replayed WAL into a new SST and starts a new WAL: with less than a
    // memtable's room it would stop again at once.
    if (FreeBytes() < static_cast<uint64_t>(options_.write_buffer_bytes)) continue;

    // Readers wait for the reopen (milliseconds).
    absl::MutexLock lock(&mu_);
    if (db_ == nullptr) return;  // closed
    absl::Status closed = CloseDbLocked();
    // Expected while stopped (RocksDB cannot sync the WAL whose append failed); the WAL holds
    // every acknowledged write and the open below replays it.
    closed.IgnoreError();
    absl::Status opened = OpenRocksLocked(/*read_only=*/false);
    if (opened.ok()) {
      read_only_ = false;
      health_->MarkResumed("reopened the cache for writing");
      continue;
    }
    spdlog::debug("cache: reopening {} for writing failed: {}", options_.path, opened.ToString());
    wait = kRetryInterval;
    absl::Status reader = OpenRocksLocked(/*read_only=*/true);
    if (!reader.ok()) {
      // Unusual (the directory vanished?): every call now fails with FAILED_PRECONDITION.
      spdlog::error("cache: reopening {} read-only failed too: {}", options_.path,
                    reader.ToString());
      return;
    }
    read_only_ = true;
  }
}

}  // namespace tccd::cache

// StoreHealth: whether the cache can write right now, learned from RocksDB's error handler, and
// the operator's view of it: one log line when writing stops (a full disk, an I/O error), one
// when it resumes.
//
// How writing resumes without a restart: a write that fails with an I/O error makes RocksDB stop
// all writes (a "background error"); reads go on. The store then reopens the database once the
// file system has room (store_writable.cc), which starts a fresh WAL and replays the old one up
// to its last complete record, i.e. every acknowledged write.
//
// Why not RocksDB's own recovery (SstFileManager polling, DB::Resume): RocksDB 7.8 resumes onto
// the same WAL writer whose append failed when no write had succeeded on that WAL yet (a fresh
// start, or the first write after a memtable switch), and the next write aborts the process
// (WritableFileWriter::AssertFalseAndGetStatusForPrevError; fixed upstream much later). So this
// listener turns automatic recovery off.
//
// Thread-safety: the callbacks run on RocksDB's threads and the writing thread; all state is
// atomic or under mu_.
#pragma once

#include <atomic>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "rocksdb/listener.h"

namespace tccd::cache {

class StoreHealth final : public rocksdb::EventListener {
 public:
  explicit StoreHealth(std::string path) : path_(std::move(path)) {}

  // True from the first failed write until the store has reopened the database for writing.
  bool writes_stopped() const { return writes_stopped_.load(std::memory_order_acquire); }
  // The error that stopped writing, for messages; empty while writing works.
  std::string reason() const;
  // Whether that error is a full file system (ENOSPC) rather than another I/O error.
  bool no_space() const { return no_space_.load(std::memory_order_acquire); }

  // Called by the store: writing stopped for `reason` / works again. Log only on a change, so
  // an episode is one line each way however many requests hit it.
  void MarkStopped(const std::string& reason, bool no_space);
  void MarkResumed(const std::string& how);

  // rocksdb::EventListener
  void OnBackgroundError(rocksdb::BackgroundErrorReason reason, rocksdb::Status* bg_error) override;
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason reason, rocksdb::Status bg_error,
                            bool* auto_recovery) override;

 private:
  const std::string path_;
  std::atomic<bool> writes_stopped_{false};
  std::atomic<bool> no_space_{false};
  mutable absl::Mutex mu_;
  std::string reason_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tccd::cache

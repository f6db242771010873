// Test seam: a Store on a RocksDB FileSystem of the test's choosing (for example a
// rocksdb::FileSystemWrapper that fails writes with ENOSPC), so that full-disk handling is
// covered on any machine, without mounting a small file system. Not for production code, which
// uses Store::Open.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "cache/store.h"
#include "rocksdb/file_system.h"

namespace tccd::cache {

absl::StatusOr<std::unique_ptr<Store>> OpenStoreWithFileSystemForTesting(
    const StoreOptions& options, std::shared_ptr<rocksdb::FileSystem> fs);

}  // namespace tccd::cache

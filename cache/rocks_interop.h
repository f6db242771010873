// Where RocksDB's types meet Abseil's: rocksdb::Status becomes absl::Status
// here and only here, and RocksDB types never appear in cache/'s public
// headers.
#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "rocksdb/slice.h"
#include "rocksdb/status.h"

namespace tccd::cache {

// Debian's Abseil has its own string_view class, which rocksdb::Slice does not
// take.
inline rocksdb::Slice ToSlice(absl::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

// OK stays OK. Otherwise the most specific canonical code, with `context` (what
// the store was doing, e.g. "reading blob <digest>") in front of RocksDB's
// message:
//   NotFound -> NOT_FOUND, Corruption -> DATA_LOSS, NoSpace ->
//   RESOURCE_EXHAUSTED, Busy/TimedOut/TryAgain -> UNAVAILABLE, anything else ->
//   INTERNAL.
absl::Status FromRocks(const rocksdb::Status& status, absl::string_view context);

// True if DB::Open failed because another DB instance (in this or another
// process) holds the directory's LOCK file. RocksDB reports this only as an
// IOError with a message, so this matches the messages of RocksDB's POSIX file
// system; tests/cache pin them for the RocksDB we build with.
bool IsLockHeldError(const rocksdb::Status& status);

}  // namespace tccd::cache

// RocksDB's diagnostic log (its "info log"), sent to the daemon's spdlog log instead of a LOG file
// in the cache directory.
//
// Why not the LOG file: it lives on the cache's file system. When that file system is full, the
// LOG file's writer records the failed write and RocksDB 7.8 aborts the process on the next log
// line (WritableFileWriter::AssertFalseAndGetStatusForPrevError, an assert that Debian's build
// keeps); the first such line is the error handler reporting the full disk. A logger that never
// touches the disk cannot fail that way, and puts RocksDB's messages where operators already look.
//
// Levels: RocksDB's FATAL becomes spdlog error; everything else is debug (RocksDB logs every flush
// and compaction, and repeats its full-disk complaints every few seconds). The store reports what
// matters to an operator itself, once per episode (see store_health.h).
#pragma once

#include <memory>

#include "rocksdb/env.h"

namespace tccd::cache {

std::shared_ptr<rocksdb::Logger> NewSpdlogRocksLogger();

}  // namespace tccd::cache

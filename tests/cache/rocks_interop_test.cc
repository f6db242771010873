// rocksdb::Status -> absl::Status codes.
#include "cache/rocks_interop.h"

#include <catch2/catch.hpp>

namespace tccd::cache {
namespace {

TEST_CASE("FromRocks maps RocksDB statuses to canonical codes", "[cache][rocks]") {
  CHECK(FromRocks(rocksdb::Status::OK(), "x").ok());
  CHECK(FromRocks(rocksdb::Status::NotFound(), "x").code() == absl::StatusCode::kNotFound);
  CHECK(FromRocks(rocksdb::Status::Corruption("bad block"), "x").code() ==
        absl::StatusCode::kDataLoss);
  CHECK(FromRocks(rocksdb::Status::NoSpace("disk"), "x").code() ==
        absl::StatusCode::kResourceExhausted);
  CHECK(FromRocks(rocksdb::Status::Busy(), "x").code() == absl::StatusCode::kUnavailable);
  absl::Status io = FromRocks(rocksdb::Status::IOError("eio"), "reading blob 12");
  CHECK(io.code() == absl::StatusCode::kInternal);
  CHECK(io.message().find("reading blob 12") != absl::string_view::npos);
  CHECK(io.message().find("eio") != absl::string_view::npos);
}

}  // namespace
}  // namespace tccd::cache

// Helpers for the cache tests: temp dirs, status assertions, manifests, and raw
// access to a closed store's RocksDB (to plant corruption or a foreign schema
// version).
#pragma once

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cache/store.h"
#include "tccd/v1/tccd.pb.h"

namespace tccd::cache::testing {

// A fresh directory under $TMPDIR (mkdtemp), removed with everything in it on
// destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // A path inside this directory (not created).
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline absl::Status StatusOf(const absl::Status& status) { return status; }
template <typename T>
absl::Status StatusOf(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

// Opens a store at `path` with default options, failing the test if it cannot.
std::unique_ptr<Store> OpenOrDie(const std::string& path);

// A manifest for `key` naming one artifact per digest.
v1::Manifest MakeManifest(const std::string& key, const std::vector<std::string>& digests);

// Direct RocksDB access to a cache dir whose Store is closed. Opens every
// column family.
void RawPut(const std::string& dir, const std::string& column_family, const std::string& key,
            const std::string& value);
std::optional<std::string> RawGet(const std::string& dir, const std::string& column_family,
                                  const std::string& key);

// Every row of `column_family` of a closed cache dir, key -> value.
std::map<std::string, std::string> RawScan(const std::string& dir,
                                           const std::string& column_family);

}  // namespace tccd::cache::testing

// REQUIRE/CHECK that a Status or StatusOr is OK, printing the status when it is
// not.
#define TCCD_REQUIRE_OK(expr)                                              \
  do {                                                                     \
    const ::absl::Status tccd_s_ = ::tccd::cache::testing::StatusOf(expr); \
    INFO(tccd_s_.ToString());                                              \
    REQUIRE(tccd_s_.ok());                                                 \
  } while (0)

// REQUIRE that a Status or StatusOr failed with `expected_code`.
#define TCCD_REQUIRE_CODE(expr, expected_code)                             \
  do {                                                                     \
    const ::absl::Status tccd_s_ = ::tccd::cache::testing::StatusOf(expr); \
    INFO(tccd_s_.ToString());                                              \
    REQUIRE(tccd_s_.code() == (expected_code));                            \
  } while (0)

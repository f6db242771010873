// Temp dirs and raw RocksDB access for the cache tests.
#include "tests/cache/test_util.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "rocksdb/db.h"

namespace tccd::cache::testing {
namespace {

// Opens `dir` with all its column families (creating `column_family` if
// missing), runs `fn` with the DB and that family's handle, and closes it.
template <typename Fn>
void WithRawDb(const std::string& dir, const std::string& column_family, Fn fn) {
  rocksdb::DBOptions options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  std::vector<std::string> names;
  if (std::filesystem::exists(dir + "/CURRENT")) {
    rocksdb::Status s = rocksdb::DB::ListColumnFamilies(options, dir, &names);
    INFO(s.ToString());
    REQUIRE(s.ok());
  } else {
    names.push_back(rocksdb::kDefaultColumnFamilyName);
  }
  if (std::find(names.begin(), names.end(), column_family) == names.end()) {
    names.push_back(column_family);
  }
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const std::string& name : names) {
    descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions());
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir, descriptors, &handles, &db);
  INFO(s.ToString());
  REQUIRE(s.ok());
  rocksdb::ColumnFamilyHandle* target = nullptr;
  for (rocksdb::ColumnFamilyHandle* handle : handles) {
    if (handle->GetName() == column_family) target = handle;
  }
  fn(db, target);
  for (rocksdb::ColumnFamilyHandle* handle : handles) {
    REQUIRE(db->DestroyColumnFamilyHandle(handle).ok());
  }
  REQUIRE(db->Close().ok());
  delete db;
}

}  // namespace

TempDir::TempDir() {
  const char* tmp = getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tccd_cache_test.XXXXXX";
  REQUIRE(mkdtemp(pattern.data()) != nullptr);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::unique_ptr<Store> OpenOrDie(const std::string& path) {
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open({.path = path});
  TCCD_REQUIRE_OK(store);
  return *std::move(store);
}

v1::Manifest MakeManifest(const std::string& key, const std::vector<std::string>& digests) {
  v1::Manifest manifest;
  manifest.set_key(key);
  manifest.set_tccd_version("test");
  manifest.set_created_unix_ms(1700000000000);
  for (size_t i = 0; i < digests.size(); ++i) {
    v1::Artifact* artifact = manifest.add_artifacts();
    artifact->set_name("artifact" + std::to_string(i));
    artifact->set_digest(digests[i]);
    artifact->set_kind(v1::CPU_SHARED_OBJECT);
  }
  manifest.mutable_plan()->set_num_inputs(2);
  return manifest;
}

void RawPut(const std::string& dir, const std::string& column_family, const std::string& key,
            const std::string& value) {
  WithRawDb(dir, column_family, [&](rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf) {
    rocksdb::WriteOptions sync;
    sync.sync = true;
    REQUIRE(db->Put(sync, cf, key, value).ok());
  });
}

std::optional<std::string> RawGet(const std::string& dir, const std::string& column_family,
                                  const std::string& key) {
  std::optional<std::string> result;
  WithRawDb(dir, column_family, [&](rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf) {
    std::string value;
    rocksdb::Status s = db->Get(rocksdb::ReadOptions(), cf, key, &value);
    REQUIRE((s.ok() || s.IsNotFound()));
    if (s.ok()) result = std::move(value);
  });
  return result;
}

std::map<std::string, std::string> RawScan(const std::string& dir,
                                           const std::string& column_family) {
  std::map<std::string, std::string> rows;
  WithRawDb(dir, column_family, [&](rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf) {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), cf));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      rows.emplace(it->key().ToString(), it->value().ToString());
    }
    REQUIRE(it->status().ok());
  });
  return rows;
}

}  // namespace tccd::cache::testing

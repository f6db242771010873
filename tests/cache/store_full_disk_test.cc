// A full (or failing) file system: writes fail with RESOURCE_EXHAUSTED and never abort the
// process, stored entries keep being served (also by a store opened or closed on the full disk),
// and writing resumes by itself once there is room, without reopening the store.
//
// Two ways to fill a disk: a rocksdb::FileSystemWrapper that fails every write with ENOSPC while
// its `full` flag is set (runs everywhere), and a real, small tmpfs (needs root; skipped with a
// warning otherwise). The tmpfs case is the one that used to abort (RocksDB's LOG file).
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "cache/store.h"
#include "cache/store_testing.h"
#include "rocksdb/file_system.h"
#include "tests/cache/test_util.h"

namespace tccd::cache {
namespace {

using testing::MakeManifest;
using testing::TempDir;

// Fails file creation and appends with ENOSPC, and reports no free space, while `full`.
class FullDiskFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  FullDiskFileSystem() : rocksdb::FileSystemWrapper(rocksdb::FileSystem::Default()) {}
  const char* Name() const override { return "FullDiskFileSystem"; }

  std::atomic<bool> full{false};

  rocksdb::IOStatus NewWritableFile(const std::string& fname, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* dbg) override {
    if (full) return rocksdb::IOStatus::NoSpace("injected: creating", fname);
    std::unique_ptr<rocksdb::FSWritableFile> file;
    rocksdb::IOStatus s = target()->NewWritableFile(fname, options, &file, dbg);
    if (s.ok()) result->reset(new File(std::move(file), this));
    return s;
  }
  rocksdb::IOStatus GetFreeSpace(const std::string& path, const rocksdb::IOOptions& options,
                                 uint64_t* free_space, rocksdb::IODebugContext* dbg) override {
    if (full) {
      *free_space = 0;
      return rocksdb::IOStatus::OK();
    }
    return target()->GetFreeSpace(path, options, free_space, dbg);
  }

 private:
  class File final : public rocksdb::FSWritableFileOwnerWrapper {
   public:
    File(std::unique_ptr<rocksdb::FSWritableFile> file, FullDiskFileSystem* fs)
        : rocksdb::FSWritableFileOwnerWrapper(std::move(file)), fs_(fs) {}
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override {
      if (fs_->full) return rocksdb::IOStatus::NoSpace("injected: appending");
      return target()->Append(data, options, dbg);
    }
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                             const rocksdb::DataVerificationInfo& info,
                             rocksdb::IODebugContext* dbg) override {
      if (fs_->full) return rocksdb::IOStatus::NoSpace("injected: appending");
      return target()->Append(data, options, info, dbg);
    }

   private:
    FullDiskFileSystem* fs_;
  };
};

StoreOptions SmallStore(const std::string& path) {
  // A small memtable: writing resumes once this much is free, which a small tmpfs can offer.
  return StoreOptions{.path = path, .write_buffer_bytes = 1 << 20};
}

// Polls `store` until writing works again; RocksDB's SstFileManager checks every 5 s.
bool WaitForWrites(Store& store, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!store.WritesStopped()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return !store.WritesStopped();
}

std::string Bytes(int i, size_t size) {
  std::string bytes(size, 'x');
  std::memcpy(bytes.data(), &i, sizeof(i));
  return bytes;
}

TEST_CASE(
    "an ENOSPC write fails with RESOURCE_EXHAUSTED, hits are still served, "
    "and writing resumes by itself",
    "[cache][store][full_disk]") {
  TempDir dir;
  auto fs = std::make_shared<FullDiskFileSystem>();
  auto opened = OpenStoreWithFileSystemForTesting(SmallStore(dir.path()), fs);
  TCCD_REQUIRE_OK(opened);
  Store& store = **opened;
  const std::string key = Sha256Hex("key");
  const std::string a = *store.PutBlob("stored before the disk filled");
  TCCD_REQUIRE_OK(store.PutManifest(key, MakeManifest(key, {a})));

  fs->full = true;
  TCCD_REQUIRE_CODE(store.PutBlob("new bytes"), absl::StatusCode::kResourceExhausted);
  CHECK(store.WritesStopped());
  // Later writes fail the same way, without touching the disk (and without aborting).
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<std::string> again = store.PutBlob(Bytes(i, 100));
    TCCD_REQUIRE_CODE(again, absl::StatusCode::kResourceExhausted);
    CHECK(absl::StrContains(again.status().message(), "still served"));
  }
  TCCD_REQUIRE_CODE(store.RecordJobUse("job", key, false, 1), absl::StatusCode::kResourceExhausted);
  CHECK(*store.GetBlob(a) == "stored before the disk filled");
  TCCD_REQUIRE_OK(store.GetManifest(key));
  // Re-putting a stored blob writes nothing, so it still succeeds.
  CHECK(*store.PutBlob("stored before the disk filled") == a);

  fs->full = false;
  REQUIRE(WaitForWrites(store, std::chrono::seconds(15)));
  const std::string b = *store.PutBlob("new bytes");
  TCCD_REQUIRE_OK(store.Close());
  auto reopened = OpenStoreWithFileSystemForTesting(SmallStore(dir.path()), fs);
  TCCD_REQUIRE_OK(reopened);
  CHECK(*(*reopened)->GetBlob(a) == "stored before the disk filled");
  CHECK(*(*reopened)->GetBlob(b) == "new bytes");
}

TEST_CASE(
    "a store closed on a full disk closes cleanly and keeps every "
    "acknowledged write",
    "[cache][store][full_disk]") {
  TempDir dir;
  auto fs = std::make_shared<FullDiskFileSystem>();
  std::string a;
  {
    auto store = *OpenStoreWithFileSystemForTesting(SmallStore(dir.path()), fs);
    a = *store->PutBlob("acknowledged");  // in the WAL, not flushed
    fs->full = true;
    TCCD_REQUIRE_CODE(store->PutBlob("refused"), absl::StatusCode::kResourceExhausted);
    TCCD_REQUIRE_OK(store->Close());
  }
  fs->full = false;
  auto store = *OpenStoreWithFileSystemForTesting(SmallStore(dir.path()), fs);
  CHECK(*store->GetBlob(a) == "acknowledged");
  TCCD_REQUIRE_CODE(store->GetBlob(Sha256Hex("refused")), absl::StatusCode::kNotFound);
}

TEST_CASE(
    "a store opened on a full disk serves what is stored and becomes writable "
    "once there is room",
    "[cache][store][full_disk]") {
  TempDir dir;
  auto fs = std::make_shared<FullDiskFileSystem>();
  const std::string key = Sha256Hex("key");
  std::string a;
  {
    auto store = *OpenStoreWithFileSystemForTesting(SmallStore(dir.path()), fs);
    a = *store->PutBlob("old entry");
    TCCD_REQUIRE_OK(store->PutManifest(key, MakeManifest(key, {a})));
    TCCD_REQUIRE_OK(store->Close());
  }
  fs->full = true;
  auto opened = OpenStoreWithFileSystemForTesting(SmallStore(dir.path()), fs);
  TCCD_REQUIRE_OK(opened);
  Store& store = **opened;
  CHECK(store.WritesStopped());
  TCCD_REQUIRE_OK(store.GetManifest(key));
  CHECK(*store.GetBlob(a) == "old entry");
  TCCD_REQUIRE_CODE(store.PutBlob("new"), absl::StatusCode::kResourceExhausted);

  fs->full = false;
  REQUIRE(WaitForWrites(store, std::chrono::seconds(15)));
  TCCD_REQUIRE_OK(store.PutBlob("new"));
  CHECK(*store.GetBlob(a) == "old entry");
  TCCD_REQUIRE_OK(store.Close());
}

// A tmpfs of `megabytes` at a fresh mount point; unmounted on destruction. ok() is false when
// this process may not mount (not root, no CAP_SYS_ADMIN, a container without mount rights).
class Tmpfs {
 public:
  explicit Tmpfs(int megabytes) {
    const std::string options = "size=" + std::to_string(megabytes) + "m";
    ok_ = mount("tmpfs", dir_.path().c_str(), "tmpfs", 0, options.c_str()) == 0;
    if (!ok_) error_ = std::strerror(errno);
  }
  ~Tmpfs() {
    if (ok_) umount2(dir_.path().c_str(), MNT_DETACH);
  }
  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  std::string Sub(const std::string& name) const { return dir_.Sub(name); }

 private:
  TempDir dir_;
  bool ok_ = false;
  std::string error_;
};

// Writes `path` until the file system is full.
void FillUp(const std::string& path) {
  std::ofstream filler(path, std::ios::binary);
  const std::string chunk(1 << 16, 'f');
  while (filler.write(chunk.data(), chunk.size())) {
  }
}

TEST_CASE(
    "on a real full tmpfs the store stays up, serves hits, survives close "
    "and reopen, and resumes writing when space is freed",
    "[cache][store][full_disk][tmpfs]") {
  Tmpfs tmpfs(32);
  if (!tmpfs.ok()) {
    WARN("skipped: cannot mount a tmpfs here (" << tmpfs.error() << ")");
    return;
  }
  const std::string cache = tmpfs.Sub("cache");
  const std::string filler = tmpfs.Sub("filler");
  const std::string key = Sha256Hex("key");
  std::string a;
  {
    auto opened = Store::Open(SmallStore(cache));
    TCCD_REQUIRE_OK(opened);
    Store& store = **opened;
    a = *store.PutBlob(Bytes(-1, 100000));
    TCCD_REQUIRE_OK(store.PutManifest(key, MakeManifest(key, {a})));
    FillUp(filler);
    // The WAL has preallocated room; keep writing until it is used up.
    absl::Status failed;
    for (int i = 0; i < 400 && failed.ok(); ++i) {
      failed = store.PutBlob(Bytes(i, 100000)).status();
    }
    TCCD_REQUIRE_CODE(failed, absl::StatusCode::kResourceExhausted);
    TCCD_REQUIRE_OK(store.GetManifest(key));
    CHECK(store.GetBlob(a)->size() == 100000);

    std::filesystem::remove(filler);
    REQUIRE(WaitForWrites(store, std::chrono::seconds(20)));
    TCCD_REQUIRE_OK(store.PutBlob("written after space came back"));

    // Full again, then closed on the full disk.
    FillUp(filler);
    absl::Status failed_again;
    for (int i = 1000; i < 1400 && failed_again.ok(); ++i) {
      failed_again = store.PutBlob(Bytes(i, 100000)).status();
    }
    TCCD_REQUIRE_CODE(failed_again, absl::StatusCode::kResourceExhausted);
    TCCD_REQUIRE_OK(store.Close());
  }
  {
    // Started on the full disk: read-only, old entries served.
    auto opened = Store::Open(SmallStore(cache));
    TCCD_REQUIRE_OK(opened);
    Store& store = **opened;
    TCCD_REQUIRE_OK(store.GetManifest(key));
    CHECK(*store.GetBlob(Sha256Hex("written after space came back")) ==
          "written after space came back");
    std::filesystem::remove(filler);
    REQUIRE(WaitForWrites(store, std::chrono::seconds(20)));
    TCCD_REQUIRE_OK(store.PutBlob("written after a start on a full disk"));
    TCCD_REQUIRE_OK(store.Close());
  }
}

}  // namespace
}  // namespace tccd::cache

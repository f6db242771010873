// cache_store_holder DIR: opens the cache at DIR, writes a blob, a manifest
// naming it and a job use, prints "ready" and waits to be killed.
// store_open_test runs it to hold the RocksDB lock from another process and to
// SIGKILL a process that has unflushed writes.
//
// cache_store_holder DIR churn: opens DIR with a 100 kB cap and writes 10 kB
// entries (a blob and a manifest naming it) in a loop, printing "ready" once it
// has evicted; store_eviction_test SIGKILLs it in the middle of evictions.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "cache/store.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"
#include "tccd/v1/tccd.pb.h"

namespace {

int Churn(const char* dir) {
  using tccd::cache::Store;
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::Open({.path = dir, .max_bytes = 100'000, .min_age_ms = 0});
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  for (long i = 0;; ++i) {
    std::string bytes = "churn " + std::to_string(i % 500) + " ";
    bytes.resize(10'000, static_cast<char>('a' + i % 26));
    absl::StatusOr<std::string> digest = (*store)->PutBlob(bytes);
    const std::string key = tccd::cache::Sha256Hex("churn key " + std::to_string(i % 500));
    tccd::v1::Manifest manifest;
    manifest.set_key(key);
    if (digest.ok()) manifest.add_artifacts()->set_digest(*digest);
    absl::Status status = digest.status();
    if (status.ok()) status = (*store)->PutManifest(key, manifest);
    if (!status.ok()) {
      std::fprintf(stderr, "%s\n", status.ToString().c_str());
      return 1;
    }
    if (i == 30) {
      std::printf("ready\n");
      std::fflush(stdout);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  using tccd::cache::Store;
  if (argc != 2 && !(argc == 3 && std::string_view(argv[2]) == "churn")) {
    std::fprintf(stderr, "usage: %s DIR [churn]\n", argv[0]);
    return 2;
  }
  // stdout carries only "ready"; logs go to stderr.
  spdlog::set_default_logger(spdlog::stderr_logger_mt("holder"));
  if (argc == 3) return Churn(argv[1]);
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open({.path = argv[1]});
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  const std::string key = tccd::cache::Sha256Hex("holder key");
  absl::StatusOr<std::string> digest = (*store)->PutBlob("written by the holder");
  tccd::v1::Manifest manifest;
  manifest.set_key(key);
  if (digest.ok()) manifest.add_artifacts()->set_digest(*digest);
  absl::Status status = digest.status();
  if (status.ok()) status = (*store)->PutManifest(key, manifest);
  if (status.ok()) status = (*store)->RecordJobUse("holder job", key, true, 42);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 1;
  }
  std::printf("ready\n");
  std::fflush(stdout);
  for (;;) pause();  // until SIGKILL; the store is never closed or flushed
}

// cache_store_holder DIR: opens the cache at DIR, writes a blob, a manifest
// naming it and a job use, prints "ready" and waits to be killed.
// store_open_test runs it to hold the RocksDB lock from another process and to
// SIGKILL a process that has unflushed writes.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cache/store.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"
#include "tccd/v1/tccd.pb.h"

int main(int argc, char** argv) {
  using tccd::cache::Store;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  // stdout carries only "ready"; logs go to stderr.
  spdlog::set_default_logger(spdlog::stderr_logger_mt("holder"));
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open({.path = argv[1]});
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  const std::string key = tccd::cache::Sha256Hex("holder key");
  absl::StatusOr<std::string> digest =
      (*store)->PutBlob("written by the holder");
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

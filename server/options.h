// tccd's daemon options, how their defaults are resolved, and listen-address
// parsing.
//
// Everything here is pure (no flags library, no filesystem writes), so tests
// can resolve defaults against a made-up Environment:
//
//   RawFlags raw = ...;                      // what the command line said
//   (main.cc) ASSIGN_OR_RETURN(ServerOptions options, ResolveOptions(raw,
//   Environment::FromProcess()));
//
// Default paths (the Python client resolves the socket the same way):
//   socket: $XDG_RUNTIME_DIR/tccd/tccd.sock   if XDG_RUNTIME_DIR is set to an
//   absolute path,
//           /tmp/tccd-$UID/tccd.sock          otherwise.
//   cache:  $XDG_CACHE_HOME/tccd/db           if XDG_CACHE_HOME is set to an
//   absolute path,
//           $HOME/.cache/tccd/db              otherwise.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tccd::server {

// One address the daemon listens on.
struct ListenAddress {
  // The address as handed to gRPC: "unix:/abs/path.sock", "unix-abstract:name"
  // or "host:port".
  std::string uri;
  // For a unix socket in the filesystem: its absolute path (the file tccd
  // claims, removes when stale, and removes again at shutdown). Empty for TCP
  // and abstract sockets.
  std::string unix_path;
};

// Parses one --listen value. Accepted forms:
//   unix:PATH        a unix socket; a relative PATH is made absolute against
//   the cwd unix:///ABS      the same, gRPC's URI spelling unix-abstract:NAME
//   HOST:PORT        TCP, e.g. 127.0.0.1:7070, [::1]:7070, 0.0.0.0:0 (port 0:
//   any free port)
// INVALID_ARGUMENT with a hint otherwise (e.g. a bare path without "unix:").
absl::StatusOr<ListenAddress> ParseListenAddress(absl::string_view text);

// What default resolution depends on, gathered in one place so tests can supply
// their own.
struct Environment {
  std::string xdg_runtime_dir;  // $XDG_RUNTIME_DIR, empty if unset
  std::string xdg_cache_home;   // $XDG_CACHE_HOME, empty if unset
  std::string home;             // $HOME, else the passwd entry's home directory
  uid_t uid = 0;
  int hardware_concurrency = 1;

  static Environment FromProcess();
};

// See the file comment. Relative XDG values are ignored, as the XDG spec says.
std::string DefaultSocketPath(const Environment& env);
std::string DefaultCacheDir(const Environment& env);

// The command line as parsed, before defaults. Empty / negative means "not
// given".
struct RawFlags {
  std::vector<std::string> listen;  // each entry may itself be a comma-separated list
  std::string cache_dir;
  std::string log_level = "info";
  int compile_threads = 0;  // 0: hardware concurrency
  int max_request_mb = 256;
  int max_inflight_request_mb = 1024;
  int max_concurrent_streams = 256;
  int request_deadline_s = 1800;
  int cache_memtable_mb = 64;
  int64_t max_cache_mb = 0;
  int cache_low_watermark_pct = 90;
  int eviction_min_age_s = 60;
  std::string shared_cache;
  int shared_cache_timeout_ms = 500;
  int shared_cache_wait_s = 600;
  std::string shared_cache_tls_ca;
  std::string shared_cache_tls_cert;
  std::string shared_cache_tls_key;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  std::string tokens;
  std::string metrics_listen;
  bool compile_in_process = false;
  int compile_time_limit_s = 600;
  int compile_memory_limit_mb = 16384;
  int compile_nice = 10;
  int waited_compile_nice = 0;
  bool enable_test_faults = false;
  int progress_log_s = 5;
  bool aot_recipes = true;
  bool dynamic_profiles = true;
};

struct ServerOptions {
  // Where to listen; never empty after resolution. Default: one unix socket at
  // DefaultSocketPath().
  std::vector<ListenAddress> listen;
  // True when `listen` is the default socket: its directory is then created
  // 0700 and must be owned by this user (it may live in a shared /tmp).
  bool listen_is_default = false;
  // RocksDB directory of the artifact cache. Default: DefaultCacheDir().
  std::string cache_dir;
  // spdlog level: trace, debug, info, warn, error, critical, off. Default:
  // info.
  std::string log_level = "info";
  // Compiles that may run at once (the compile thread pool). Default: hardware
  // concurrency.
  int compile_threads = 1;
  // Largest request message accepted, in bytes. Default: 256 MiB.
  int max_request_bytes = 256 << 20;
  // Memory for all in-flight requests together (gRPC's resource quota), in
  // bytes; at least max_request_bytes. Default: 1 GiB.
  int64_t max_inflight_request_bytes = 1ll << 30;
  // Concurrent calls one connection may have open. Default: 256.
  int max_concurrent_streams = 256;
  // How long the daemon works on any one call, seconds, whatever the client's
  // deadline. Default: 1800.
  int request_deadline_s = 1800;
  // RocksDB memtable size per column family of the cache, in bytes. After the
  // cache's file system fills up, writing resumes once this much is free.
  // Default: 64 MiB.
  int64_t cache_memtable_bytes = 64ll << 20;
  // Cap on the cache's stored bytes (cache::StoreOptions.max_bytes); 0: none, the cache only
  // grows. Default: 0.
  int64_t max_cache_bytes = 0;
  // Eviction stops at this fraction of the cap. Default: 0.9.
  double cache_low_watermark = 0.9;
  // Entries used less than this long ago are never evicted, seconds. Default: 60.
  int eviction_min_age_s = 60;
  // redis://HOST:PORT[/DB] of the cache tier shared with other daemons; empty: none.
  std::string shared_cache;
  // Bound on each shared-cache operation, ms. Default: 500.
  int shared_cache_timeout_ms = 500;
  // Longest wait for another daemon's compile of the same graph, seconds. Default: 600.
  int shared_cache_wait_s = 600;
  // With rediss://: PEM CA that verifies Redis (empty: the system's CAs), and the client
  // certificate and key for a Redis with tls-auth-clients. Default: none.
  std::string shared_cache_tls_ca;
  std::string shared_cache_tls_cert;
  std::string shared_cache_tls_key;
  // PEM files for TLS on TCP listeners (both or neither), and the CA that client certificates
  // must be signed by (mTLS; needs tls_cert). Default: none, plaintext.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  // --tokens FILE (server/auth_tokens.h). Default: none, no token needed.
  std::string tokens;
  // HOST:PORT of the Prometheus /metrics HTTP endpoint (metrics.h); port 0 picks a free one.
  // Default: empty, no endpoint.
  std::string metrics_listen;
  // Run codegen in the daemon's own process instead of supervised worker
  // processes (worker_pool.h). Default: false.
  bool compile_in_process = false;
  // Wall-clock limit of one compile in a worker, seconds. Default: 600.
  int compile_time_limit_s = 600;
  // Memory limit (RLIMIT_DATA) of each compile worker, MiB; 0: none.
  // Default: 16384.
  int compile_memory_limit_mb = 16384;
  // How much the compile workers lower their CPU priority (nice increment, 0-19): a client
  // on the same machine traces its next graph while the daemon compiles the previous one, and
  // a cold compile's kernel threads (one per core per graph) would otherwise take its core.
  // Default: 10. Applies to compiles ahead of their use (a prefetched backward, marked
  // CompileRequest.background), which run while the client works.
  int compile_nice = 10;
  // The same for compiles a client waits for (a forward, an inference graph, a backward that was
  // not prefetched): the client uses no core meanwhile, so they keep the daemon's priority and
  // are not starved by the prefetched backward's kernel threads or by other processes.
  // Default: 0.
  int waited_compile_nice = 0;
  // Hidden, for tests: workers honour CompileOptions.extra["tccd_test_fault"].
  bool enable_test_faults = false;
  // A compile running this many seconds gets one log line with its kernels
  // done so far; 0: never. Default: 5.
  int progress_log_s = 5;
  // Keep and serve clients' AOT recipes (PutAotRecipe/GetAotRecipe). Default: true.
  bool aot_recipes = true;
  // Keep and serve jobs' automatic-dynamic profiles (Put/GetDynamicProfile). Default: true.
  bool dynamic_profiles = true;
};

// Validates `raw` and fills in defaults from `env`. INVALID_ARGUMENT with a
// message naming the flag otherwise.
absl::StatusOr<ServerOptions> ResolveOptions(const RawFlags& raw, const Environment& env);

// Every value given to the flag `name` on the command line (`--name=V`, `--name
// V`, `-name=V`,
// `-name V`), in order, up to a bare "--". absl keeps only the last value of a
// repeated flag; main.cc uses this to make `--listen` repeatable.
std::vector<std::string> ScanRepeatedFlag(int argc, const char* const* argv,
                                          absl::string_view name);

}  // namespace tccd::server

// RunDaemon; see daemon.h.
#include "server/daemon.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "base/usable_cpus.h"
#include "cache/shared_tier.h"
#include "cache/store.h"
#include "server/compile_service.h"
#include "server/compiler.h"
#include "server/fs_util.h"
#include "server/grpc_server.h"
#include "server/memory_trimmer.h"
#include "server/metrics.h"
#include "server/systemd_notify.h"
#include "server/thread_pool.h"
#include "server/unix_socket.h"
#include "server/worker_pool.h"
#include "spdlog/spdlog.h"
#include "tccd_version.h"

namespace tccd::server {
namespace {

// How long in-flight calls get to finish after SIGTERM before they are
// cancelled.
constexpr absl::Duration kShutdownGrace = absl::Seconds(30);

sigset_t ShutdownSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

int WaitForShutdownSignal() {
  const sigset_t set = ShutdownSignals();
  int signal_number = 0;
  while (sigwait(&set, &signal_number) != 0) {
  }
  return signal_number;
}

}  // namespace

void BlockShutdownSignals() {
  const sigset_t set = ShutdownSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

int RunDaemon(const ServerOptions& options) {
  // The cache first: without it there is nothing to serve.
  if (absl::Status made = MakeDirectories(options.cache_dir); !made.ok()) {
    spdlog::critical("cannot use cache directory {}: {}", options.cache_dir,
                     std::string(made.message()));
    return 1;
  }
  absl::StatusOr<std::unique_ptr<cache::Store>> store = cache::Store::Open(
      cache::StoreOptions{.path = options.cache_dir,
                          .write_buffer_bytes = options.cache_memtable_bytes,
                          .max_bytes = options.max_cache_bytes,
                          .low_watermark = options.cache_low_watermark,
                          .min_age_ms = int64_t{options.eviction_min_age_s} * 1000});
  if (!store.ok()) {
    spdlog::critical("cannot open the cache at {}: {}", options.cache_dir,
                     store.status().ToString());
    return 1;
  }

  std::vector<UnixSocketClaim> claims;
  for (const ListenAddress& address : options.listen) {
    if (address.unix_path.empty()) continue;
    absl::StatusOr<UnixSocketClaim> claim =
        UnixSocketClaim::Claim(address.unix_path, options.listen_is_default);
    if (!claim.ok()) {
      spdlog::critical("cannot listen on {}: {}", address.uri,
                       std::string(claim.status().message()));
      return 1;
    }
    claims.push_back(*std::move(claim));
  }

  std::unique_ptr<cache::SharedTier> shared_tier;
  if (!options.shared_cache.empty()) {
    absl::StatusOr<std::unique_ptr<cache::SharedTier>> opened = cache::SharedTier::Open(
        cache::SharedTierOptions{.url = options.shared_cache,
                                 .tls = {.ca = options.shared_cache_tls_ca,
                                         .cert = options.shared_cache_tls_cert,
                                         .key = options.shared_cache_tls_key},
                                 .timeout = absl::Milliseconds(options.shared_cache_timeout_ms),
                                 .max_wait = absl::Seconds(options.shared_cache_wait_s)});
    if (!opened.ok()) {
      spdlog::critical("{}", opened.status().ToString());
      return 1;
    }
    shared_tier = *std::move(opened);
    spdlog::info("shared cache tier: {}", shared_tier->endpoint().ToString());
  }

  // Authentication: read every file now, so that a typo is a startup error.
  TlsConfig tls;
  for (auto [path, pem] :
       {std::pair{&options.tls_cert, &tls.cert_pem}, std::pair{&options.tls_key, &tls.key_pem},
        std::pair{&options.tls_client_ca, &tls.client_ca_pem}}) {
    if (path->empty()) continue;
    absl::StatusOr<std::string> text = ReadSmallFile(*path);
    if (!text.ok()) {
      spdlog::critical("{}", text.status().ToString());
      return 1;
    }
    *pem = *std::move(text);
  }
  std::unique_ptr<TokenAuthorizer> tokens;
  if (!options.tokens.empty()) {
    absl::StatusOr<std::unique_ptr<TokenAuthorizer>> loaded =
        TokenAuthorizer::LoadFile(options.tokens);
    if (!loaded.ok()) {
      spdlog::critical("{}", loaded.status().ToString());
      return 1;
    }
    tokens = *std::move(loaded);
    spdlog::info("tokens: {} from {}; every tccd.v1 call needs one", tokens->size(),
                 options.tokens);
  }
  for (const ListenAddress& address : options.listen) {
    if (!address.unix_path.empty() || address.uri.rfind("unix", 0) == 0) continue;
    if (tls.cert_pem.empty() || tokens == nullptr) {
      spdlog::warn("listening on {} without {}: anyone who reaches it {}", address.uri,
                   tls.cert_pem.empty() && tokens == nullptr ? "TLS or tokens"
                   : tls.cert_pem.empty()                    ? "TLS"
                                                             : "tokens",
                   tls.cert_pem.empty() ? "can read or impersonate this daemon"
                                        : "may compile and read every job's artifacts");
    }
  }

  // Recorded into whether or not it is served: recording costs a map lookup per call.
  Metrics metrics;

  // Returns memory freed after bursts of traffic to the kernel (see
  // memory_trimmer.h); it runs for the daemon's whole life.
  MemoryTrimmer trimmer(absl::Seconds(5));

  // Destruction order matters: the server goes first (its calls use both
  // pools), then the request pool, then the service (its compile pool), then
  // the store.
  CompileService service(
      CompileServiceOptions{.compile_threads = options.compile_threads,
                            .cache_dir = options.cache_dir,
                            .shared_tier = shared_tier.get(),
                            .progress_log_after = absl::Seconds(options.progress_log_s),
                            .aot_recipes = options.aot_recipes,
                            .dynamic_profiles = options.dynamic_profiles,
                            .metrics = &metrics},
      store->get(),
      options.compile_in_process ? NewCodegenCompiler()
                                 : NewWorkerCompiler(WorkerPoolOptions{
                                       .workers = options.compile_threads,
                                       .time_limit = absl::Seconds(options.compile_time_limit_s),
                                       .memory_limit_mb = options.compile_memory_limit_mb,
                                       .nice = options.compile_nice,
                                       .waited_nice = options.waited_compile_nice,
                                       .enable_test_faults = options.enable_test_faults,
                                       .log_level = options.log_level}));
  // Request threads parse requests and read RocksDB; they never wait for a
  // compile.
  ThreadPool request_pool("tccd-request",
                          std::max(4, 2 * UsableCpus()));
  absl::StatusOr<std::unique_ptr<RpcServer>> server = RpcServer::Start(
      RpcServerOptions{.listen = options.listen,
                       .max_request_bytes = options.max_request_bytes,
                       .max_inflight_request_bytes = options.max_inflight_request_bytes,
                       .max_concurrent_streams = options.max_concurrent_streams,
                       .request_deadline = absl::Seconds(options.request_deadline_s),
                       .tls = tls,
                       .tokens = tokens.get(),
                       .metrics = &metrics},
      &service, &request_pool);
  if (!server.ok()) {
    spdlog::critical("{}", std::string(server.status().message()));
    // A socket file gRPC created before another address failed is ours (we hold
    // the lock): claim it so that it is removed.
    for (UnixSocketClaim& claim : claims) claim.MarkBound();
    return 1;
  }
  for (UnixSocketClaim& claim : claims) claim.MarkBound();

  if (!options.metrics_listen.empty()) {
    metrics.SetCounterSource([&service] { return service.Counters(); });
    absl::StatusOr<int> port = metrics.Serve(options.metrics_listen);
    if (!port.ok()) {
      spdlog::critical("{}", std::string(port.status().message()));
      return 1;
    }
    const std::string& host_port = options.metrics_listen;
    spdlog::info("metrics on http://{}:{}/metrics", host_port.substr(0, host_port.rfind(':')),
                 *port);
  }

  spdlog::info(
      "tccd {} serving on {}; cache {}; {} compile threads{}; "
      "max request {} MiB; pid {}",
      TCCD_VERSION, absl::StrJoin((*server)->bound_addresses(), ", "), options.cache_dir,
      options.compile_threads,
      options.compile_in_process
          ? " (in process)"
          : absl::StrCat(" (worker processes, time limit ", options.compile_time_limit_s,
                         " s, memory limit ", options.compile_memory_limit_mb, " MiB, nice +",
                         options.waited_compile_nice, ", +", options.compile_nice, " prefetched)"),
      options.max_request_bytes >> 20, getpid());

  // After the request pool (its alive check uses the pool), so destroyed before it.
  SystemdNotifier systemd;
  systemd.Ready(absl::StrCat("serving on ", absl::StrJoin((*server)->bound_addresses(), ", ")),
                [&request_pool](absl::Duration limit) {
                  // Alive = a request thread picks up new work: what every RPC needs first.
                  auto ran = std::make_shared<absl::Notification>();
                  request_pool.Schedule([ran] { ran->Notify(); });
                  return ran->WaitForNotificationWithTimeout(limit);
                });

  const int signal_number = WaitForShutdownSignal();
  systemd.Stopping(absl::StrCat(strsignal(signal_number), ": draining in-flight requests"));
  spdlog::info("{}: shutting down; in-flight requests get up to {} s", strsignal(signal_number),
               absl::ToInt64Seconds(kShutdownGrace));
  // A second signal means "now": for a compile that does not end. The cache's
  // write-ahead log keeps what was already stored.
  std::thread([] {
    const int again = WaitForShutdownSignal();
    spdlog::warn("{} again: exiting without waiting", strsignal(again));
    _exit(1);
  }).detach();

  (*server)->Shutdown(kShutdownGrace);
  request_pool.Shutdown();
  service.Shutdown();
  server->reset();
  metrics.StopServing();  // its scrapes read the service, which goes next

  int exit_status = 0;
  if (absl::Status closed = (*store)->Close(); !closed.ok()) {
    spdlog::error("closing the cache at {} failed: {}", options.cache_dir, closed.ToString());
    exit_status = 1;
  }
  claims.clear();  // removes the socket files
  const ServerStats& stats = service.stats();
  spdlog::info("stopped: {} requests, {} compiles, {} hits, {} misses, {} dedup waits",
               stats.requests_total.load(), stats.compiles.load(), stats.cache_hits.load(),
               stats.cache_misses.load(), stats.dedup_waits.load());
  return exit_status;
}

}  // namespace tccd::server

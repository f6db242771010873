// tccd's entry point: command line -> ServerOptions -> RunDaemon.
//
// Flags are absl flags, with two conveniences absl lacks: names may be written
// with '-' as well as '_' (--cache-dir == --cache_dir), and --listen may be
// repeated (absl alone keeps only the last value). --help prints tccd's own
// help, with the defaults resolved for this user.
//
// Exit status: 0 after a clean shutdown (or --help, --version); 1 when startup
// fails (cache, sockets) or absl rejects a flag; 2 for a flag value tccd
// rejects.
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "server/daemon.h"
#include "server/compile_worker.h"
#include "server/flagfile.h"
#include "server/options.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"
#include "tccd_version.h"

ABSL_FLAG(std::vector<std::string>, listen, {},
          "Address to serve on: unix:PATH (a unix socket) or HOST:PORT (TCP, "
          "unauthenticated: bind to a trusted network only; port 0 picks a "
          "free port). Repeat the flag or separate addresses with commas to "
          "serve on several.");
ABSL_FLAG(std::string, cache_dir, "",
          "Directory of the artifact cache (a RocksDB database), created if "
          "missing. Share it between tccd runs to keep compiled kernels.");
ABSL_FLAG(std::string, log_level, "info",
          "Level of the log on stderr: trace, debug, info, warn, error, "
          "critical, off. info logs one line per compile, dedup wait and "
          "failed request; debug adds one per cache hit and, from the "
          "compile workers, each compile's graph name and stage times.");
ABSL_FLAG(int, compile_threads, 0,
          "How many compiles may run at once; 0 means one per CPU this "
          "process may run on (its affinity mask: taskset, systemd's "
          "CPUAffinity=, a cpuset). Requests beyond that queue; identical "
          "requests never compile twice.");
ABSL_FLAG(int, max_request_mb, 256, "Largest request message accepted, in MiB.");
ABSL_FLAG(int, max_inflight_request_mb, 1024,
          "Memory for all requests in flight together, in MiB (at least "
          "--max-request-mb): gRPC's resource quota. As request buffers near "
          "it, gRPC shrinks its read buffers and flow-control windows, so "
          "many or hostile peers are slowed down instead of growing the "
          "daemon.");
ABSL_FLAG(int, max_concurrent_streams, 256,
          "Calls one connection may have in flight at once; more wait.");
ABSL_FLAG(int, request_deadline_s, 1800,
          "How long the daemon works on any one call, in seconds, even when "
          "the client sent no deadline (including a compile waiting for an "
          "identical one). Past it the call fails with DEADLINE_EXCEEDED.");
ABSL_FLAG(bool, compile_in_process, false,
          "Run code generation (LLVM, LLD, NVRTC) inside the daemon instead of "
          "in supervised worker processes. Faster by a fraction of a "
          "millisecond per compile, but a compiler crash then takes the "
          "daemon down.");
ABSL_FLAG(int, compile_time_limit_s, 600,
          "Wall-clock limit of one compile, in seconds. A compile worker past "
          "it is killed and the compile fails with INTERNAL.");
ABSL_FLAG(int, compile_memory_limit_mb, 16384,
          "Memory limit of each compile worker (RLIMIT_DATA), in MiB; 0 means "
          "none. A compile that needs more fails.");
ABSL_FLAG(int, compile_nice, 10,
          "Nice increment of the compile workers (0-19): they yield the CPU to "
          "the processes whose graphs they compile, which trace their next "
          "graph meanwhile (a cold compile runs one kernel thread per core). "
          "0 keeps the daemon's priority. Applies to compiles ahead of their "
          "use (prefetched backwards); see --waited-compile-nice. Ignored with "
          "--compile-in-process.");
ABSL_FLAG(int, waited_compile_nice, 0,
          "Nice increment (0-19) of the compiles a client waits for (a forward "
          "or inference graph, a backward not prefetched): the client uses no "
          "core meanwhile, so they keep the daemon's priority, ahead of the "
          "prefetched backwards (--compile-nice). Set it to --compile-nice for "
          "one priority for all. Ignored with --compile-in-process.");
ABSL_FLAG(bool, enable_test_faults, false,
          "For tccd's tests only: compile workers honour the request option "
          "tccd_test_fault (crash, hang, alloc).");
ABSL_FLAG(int, progress_log_s, 5,
          "A compile running this many seconds gets one log line naming its "
          "graph, its kernels done so far and the time it has taken; 0 means "
          "never. (Clients print their own line: TCCD_PROGRESS_AFTER_S.)");
ABSL_FLAG(bool, aot_recipes, true,
          "Keep clients' AOT recipes (what a client needs to skip AOTAutograd's "
          "trace of a graph) and serve them to every client, so that a process "
          "with an empty local cache starts warm. The daemon checks a recipe's "
          "form, not its meaning: turn it off where clients do not trust each "
          "other.");
ABSL_FLAG(bool, dynamic_profiles, true,
          "Keep jobs' automatic-dynamic profiles (which inputs Dynamo found to "
          "vary in size, per job id, merged across ranks and runs; never "
          "evicted) and serve them, so that a restarted run or another rank "
          "compiles those dims dynamic on its first call. Clients turn it off "
          "with TCCD_DYNAMIC_PROFILES=0.");
ABSL_FLAG(int, cache_memtable_mb, 64,
          "RocksDB memtable size per column family of the cache, in MiB. When "
          "the cache's file system fills up, tccd keeps serving cached "
          "entries, answers compiles it cannot store with RESOURCE_EXHAUSTED, "
          "and resumes writing by itself once this much space is free.");
ABSL_FLAG(int64_t, max_cache_mb, 0,
          "Cap on the cache's size, in MiB of stored artifacts and manifests; 0 means no cap "
          "(the cache only grows). Past it, tccd evicts the least recently used entries "
          "(a manifest, then the artifacts no remaining manifest needs) after each write, down "
          "to --cache-low-watermark-pct of the cap. Disk use can run above the cap until "
          "RocksDB compacts the space away.");
ABSL_FLAG(int, cache_low_watermark_pct, 90,
          "With --max-cache-mb: an eviction run stops when the cache is down to this percentage "
          "of the cap, so that it does not run again at the next write.");
ABSL_FLAG(int, eviction_min_age_s, 60,
          "With --max-cache-mb: entries stored or hit less than this many seconds ago are never "
          "evicted (a client fetches a hit's artifacts right after). When every entry is that "
          "young, the cache stays over its cap and the log says so once.");
ABSL_FLAG(std::string, shared_cache, "",
          "redis[s]://[[USER]:PASSWORD@]HOST:PORT[/DB]: a cache tier shared with the other daemons "
          "of a cluster. On a "
          "local miss tccd looks there (every artifact verified against its digest), writes "
          "what it compiles there, and compiles a graph only once cluster-wide (a compile lease "
          "in Redis). If Redis is down or slow, tccd keeps working on its local cache. "
          "rediss://... connects over TLS (see --shared-cache-tls-ca).");
ABSL_FLAG(std::string, shared_cache_tls_ca, "",
          "With --shared-cache rediss://: PEM CA certificate(s) that must have signed Redis' "
          "certificate, which must also name the URL's host; default: the system's CAs. A "
          "Redis that fails the check is an unreachable tier (logged with the reason).");
ABSL_FLAG(std::string, shared_cache_tls_cert, "",
          "With rediss://: PEM client certificate for a Redis with tls-auth-clients (with "
          "--shared-cache-tls-key).");
ABSL_FLAG(std::string, shared_cache_tls_key, "", "PEM private key of --shared-cache-tls-cert.");
ABSL_FLAG(int, shared_cache_timeout_ms, 500,
          "With --shared-cache: bound on connecting to Redis and on each command, in ms; past "
          "it the tier is skipped for a second.");
ABSL_FLAG(int, shared_cache_wait_s, 600,
          "With --shared-cache: how long a daemon waits for another daemon's compile of the "
          "same graph before compiling it itself, in seconds.");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate chain for TLS on TCP listeners (with --tls-key). Unix sockets stay "
          "plaintext. Clients set TCCD_TLS_CA to the CA that signed it.");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls-cert.");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA certificate(s): TCP clients must present a certificate signed by one (mTLS; "
          "clients set TCCD_TLS_CERT and TCCD_TLS_KEY). Others fail the TLS handshake.");
ABSL_FLAG(std::string, tokens, "",
          "File of bearer tokens, one per line: TOKEN ROLE [JOB_PREFIX], ROLE compile (compile "
          "and read), read (cache hits only) or admin (stats, every job). With it, every call on "
          "every listener needs \"authorization: Bearer TOKEN\" (clients: TCCD_TOKEN or "
          "TCCD_TOKEN_FILE); JOB_PREFIX limits the job ids a token may use. Without it, anyone "
          "who can reach a listener may do everything.");

ABSL_FLAG(std::string, metrics_listen, "",
          "HOST:PORT to serve Prometheus metrics on, as text at http://HOST:PORT/metrics "
          "(requests by method and code, compile times, cache hits and misses of both tiers, "
          "single-flight waits, bytes served, store size, evictions, compile seconds saved). "
          "Plain HTTP without authentication: bind it to loopback or a monitoring network. "
          "Port 0 picks a free port (logged).");

namespace {

using tccd::server::Environment;

constexpr char kSummary[] =
    "tccd: the torch.compile compilation daemon (gRPC service tccd.v1.Tccd).";

constexpr char kDescription[] = R"(
tccd compiles the ATen graphs that torch.compile's "tccd" backend sends it into
native code (shared objects for the client's CPU) and keeps the results in a
content-addressed cache keyed by the canonical graph, target, options and tccd
version. Every process, rank and job that talks to one tccd shares that cache,
and identical requests that arrive together compile only once. The client
loads and runs the artifacts; tccd never runs them.
)";

constexpr char kUsage[] = R"(
Usage: tccd [flags]

Flags (defaults as resolved for this user):
)";

constexpr char kFooter[] = R"(  --version
      Print the version and exit.
  --help
      Print this help and exit.
Flag names accept '-' or '_' (--cache-dir, --cache_dir); --helpfull also
lists absl's own flags.

Config file: --flagfile FILE reads flags from FILE, one per line
(--cache-dir=/var/cache/tccd), '#' comments and blank lines skipped; repeat
--listen lines to listen on several addresses. Flags after it on the command
line override it.

Defaults: the socket is $XDG_RUNTIME_DIR/tccd/tccd.sock, or
/tmp/tccd-$UID/tccd.sock when XDG_RUNTIME_DIR is unset (its directory is
created with mode 0700); the cache is $XDG_CACHE_HOME/tccd/db, or
~/.cache/tccd/db when XDG_CACHE_HOME is unset.

Examples:
  tccd
      Serve on the default socket with the default cache (what the client
      expects).
  tccd --listen unix:/tmp/tccd.sock --listen 127.0.0.1:7070
      Serve on a unix socket and on a loopback TCP port.
  tccd --cache-dir /scratch/tccd-cache --compile-threads 8 --log-level debug
  grpc_health_probe -addr unix:///run/user/1000/tccd/tccd.sock
      grpc.health.v1 is served.

Shutdown: SIGTERM or SIGINT stops accepting requests, lets in-flight ones
finish (up to 30 s), closes the cache and removes the socket file; the exit
status is 0. A second signal exits at once. A stale socket file left by a
crashed tccd is replaced; a live server on the socket is an error.
)";

// `text` wrapped at `width` columns, each line prefixed with `indent`.
std::string Wrap(const std::string& text, const std::string& indent, size_t width = 80) {
  std::string out;
  std::string line = indent;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (line.size() > indent.size() && line.size() + 1 + word.size() > width) {
      absl::StrAppend(&out, line, "\n");
      line = indent;
    }
    if (line.size() > indent.size()) line += ' ';
    absl::StrAppend(&line, word);
  }
  if (line.size() > indent.size()) absl::StrAppend(&out, line, "\n");
  return out;
}

void PrintHelp(const Environment& env) {
  struct FlagHelp {
    const char* name;
    const char* value;
    std::string default_text;
  };
  const FlagHelp flags[] = {
      {"listen", "ADDR", absl::StrCat("unix:", tccd::server::DefaultSocketPath(env))},
      {"cache_dir", "DIR", tccd::server::DefaultCacheDir(env)},
      {"log_level", "LEVEL", "info"},
      {"compile_threads", "N", absl::StrCat("0, i.e. ", env.hardware_concurrency, " here")},
      {"max_request_mb", "MIB", "256"},
      {"max_inflight_request_mb", "MIB", "1024"},
      {"max_concurrent_streams", "N", "256"},
      {"request_deadline_s", "SECONDS", "1800"},
      {"cache_memtable_mb", "MIB", "64"},
      {"max_cache_mb", "MIB", "0 (no cap)"},
      {"cache_low_watermark_pct", "PERCENT", "90"},
      {"eviction_min_age_s", "SECONDS", "60"},
      {"shared_cache", "URL", "none"},
      {"shared_cache_timeout_ms", "MS", "500"},
      {"shared_cache_wait_s", "SECONDS", "600"},
      {"shared_cache_tls_ca", "FILE", "the system's CAs"},
      {"shared_cache_tls_cert", "FILE", "none"},
      {"shared_cache_tls_key", "FILE", "none"},
      {"tls_cert", "FILE", "none (plaintext TCP)"},
      {"tls_key", "FILE", "none"},
      {"tls_client_ca", "FILE", "none (no client certificates)"},
      {"tokens", "FILE", "none (no token needed)"},
      {"metrics_listen", "HOST:PORT", "none (no metrics endpoint)"},
      {"compile_time_limit_s", "SECONDS", "600"},
      {"compile_memory_limit_mb", "MIB", "16384"},
      {"compile_nice", "N", "10"},
      {"waited_compile_nice", "N", "0"},
      {"compile_in_process", "BOOL", "false"},
      {"progress_log_s", "SECONDS", "5"},
      {"aot_recipes", "BOOL", "true"},
      {"dynamic_profiles", "BOOL", "true"},
  };
  std::cout << "tccd " << TCCD_VERSION << "\n" << kDescription << kUsage;
  for (const FlagHelp& flag : flags) {
    const absl::CommandLineFlag* registered = absl::FindCommandLineFlag(flag.name);
    std::cout << "  --" << absl::StrReplaceAll(flag.name, {{"_", "-"}}) << "=" << flag.value << "\n"
              << Wrap(registered != nullptr ? registered->Help() : "", "      ")
              << "      default: " << flag.default_text << "\n";
  }
  std::cout << kFooter;
}

bool WantsHelp(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "--help" || arg == "-help" || arg == "-h") return true;
  }
  return false;
}

// Rewrites "--cache-dir..." to "--cache_dir..." for registered flags, so both
// spellings work.
std::vector<char*> NormalizeFlagNames(int argc, char** argv, std::vector<std::string>& storage) {
  // Flagfiles first, so that their lines get the same treatment as the command line.
  absl::StatusOr<std::vector<std::string>> expanded =
      tccd::server::ExpandFlagfiles(std::vector<std::string>(argv, argv + argc));
  if (!expanded.ok()) {
    std::cerr << "tccd: " << expanded.status().message() << "\n";
    std::exit(1);
  }
  storage = *std::move(expanded);
  argc = static_cast<int>(storage.size());
  for (int i = 1; i < argc; ++i) {
    std::string& arg = storage[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;
    const size_t dashes = arg[1] == '-' ? 2 : 1;
    const size_t end = std::min(arg.find('='), arg.size());
    std::string name = arg.substr(dashes, end - dashes);
    if (name.find('-') == std::string::npos) continue;
    std::string underscored = absl::StrReplaceAll(name, {{"-", "_"}});
    if (absl::FindCommandLineFlag(underscored) != nullptr) {
      arg.replace(dashes, end - dashes, underscored);
    }
  }
  std::vector<char*> normalized;
  for (std::string& arg : storage) normalized.push_back(arg.data());
  normalized.push_back(nullptr);
  return normalized;
}

}  // namespace

int main(int argc, char** argv) {
  // A compile worker (worker_pool.cc starts this binary so): nothing of the daemon runs.
  if (argc >= 2 && std::string_view(argv[1]) == tccd::server::kCompileWorkerFlag) {
    auto logger = spdlog::stderr_color_mt("tccd-worker");
    logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%L%$ tccd-worker[%P] %v");
    logger->set_level(spdlog::level::warn);
    spdlog::set_default_logger(logger);
    return tccd::server::RunCompileWorker(argc, argv);
  }
  // Before anything can start a thread: only the daemon's sigwait() may see
  // these signals.
  tccd::server::BlockShutdownSignals();
  // Debian's Abseil is built without NDEBUG, so every absl::Mutex lock also updated its
  // deadlock-detection graph (GraphCycles: ~3% of a cache hit's CPU at 300 hits/s). Lock
  // order is kept by the thread annotations and checked by the unit tests, which keep the
  // detection on; the daemon does not pay for it on every lock.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);

  absl::SetProgramUsageMessage(kSummary);
  absl::FlagsUsageConfig usage;
  usage.version_string = [] { return std::string("tccd ") + TCCD_VERSION + "\n"; };
  usage.contains_helpshort_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "server/main.cc");
  };
  usage.contains_help_flags = usage.contains_helpshort_flags;
  absl::SetFlagsUsageConfig(usage);

  const Environment env = Environment::FromProcess();
  if (WantsHelp(argc, argv)) {
    PrintHelp(env);
    return 0;
  }

  std::vector<std::string> storage;
  std::vector<char*> args = NormalizeFlagNames(argc, argv, storage);
  const int args_count = static_cast<int>(args.size()) - 1;
  // absl keeps the last of repeated flags; collect every --listen before it
  // parses.
  const std::vector<std::string> all_listen =
      tccd::server::ScanRepeatedFlag(args_count, args.data(), "listen");
  // Handles --version (and --helpfull etc.) itself, and exits on unknown flags.
  const std::vector<char*> positional = absl::ParseCommandLine(args_count, args.data());
  if (positional.size() > 1) {
    std::cerr << "tccd: unexpected argument '" << positional[1]
              << "' (tccd takes only flags; see tccd --help)\n";
    return 2;
  }

  tccd::server::RawFlags raw;
  raw.listen = all_listen.size() > 1 ? all_listen : absl::GetFlag(FLAGS_listen);
  raw.cache_dir = absl::GetFlag(FLAGS_cache_dir);
  raw.log_level = absl::GetFlag(FLAGS_log_level);
  raw.compile_threads = absl::GetFlag(FLAGS_compile_threads);
  raw.max_request_mb = absl::GetFlag(FLAGS_max_request_mb);
  raw.max_inflight_request_mb = absl::GetFlag(FLAGS_max_inflight_request_mb);
  raw.max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams);
  raw.request_deadline_s = absl::GetFlag(FLAGS_request_deadline_s);
  raw.cache_memtable_mb = absl::GetFlag(FLAGS_cache_memtable_mb);
  raw.max_cache_mb = absl::GetFlag(FLAGS_max_cache_mb);
  raw.cache_low_watermark_pct = absl::GetFlag(FLAGS_cache_low_watermark_pct);
  raw.eviction_min_age_s = absl::GetFlag(FLAGS_eviction_min_age_s);
  raw.shared_cache = absl::GetFlag(FLAGS_shared_cache);
  raw.shared_cache_timeout_ms = absl::GetFlag(FLAGS_shared_cache_timeout_ms);
  raw.shared_cache_wait_s = absl::GetFlag(FLAGS_shared_cache_wait_s);
  raw.shared_cache_tls_ca = absl::GetFlag(FLAGS_shared_cache_tls_ca);
  raw.shared_cache_tls_cert = absl::GetFlag(FLAGS_shared_cache_tls_cert);
  raw.shared_cache_tls_key = absl::GetFlag(FLAGS_shared_cache_tls_key);
  raw.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  raw.tls_key = absl::GetFlag(FLAGS_tls_key);
  raw.tls_client_ca = absl::GetFlag(FLAGS_tls_client_ca);
  raw.tokens = absl::GetFlag(FLAGS_tokens);
  raw.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  raw.compile_in_process = absl::GetFlag(FLAGS_compile_in_process);
  raw.compile_time_limit_s = absl::GetFlag(FLAGS_compile_time_limit_s);
  raw.compile_memory_limit_mb = absl::GetFlag(FLAGS_compile_memory_limit_mb);
  raw.compile_nice = absl::GetFlag(FLAGS_compile_nice);
  raw.waited_compile_nice = absl::GetFlag(FLAGS_waited_compile_nice);
  raw.enable_test_faults = absl::GetFlag(FLAGS_enable_test_faults);
  raw.progress_log_s = absl::GetFlag(FLAGS_progress_log_s);
  raw.aot_recipes = absl::GetFlag(FLAGS_aot_recipes);
  raw.dynamic_profiles = absl::GetFlag(FLAGS_dynamic_profiles);
  absl::StatusOr<tccd::server::ServerOptions> options = tccd::server::ResolveOptions(raw, env);
  if (!options.ok()) {
    std::cerr << "tccd: " << options.status().message() << " (see tccd --help)\n";
    return 2;
  }

  auto logger = spdlog::stderr_color_mt("tccd");
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%L%$ tccd[%P] %v");
  logger->set_level(spdlog::level::from_str(options->log_level));
  spdlog::set_default_logger(logger);

  return tccd::server::RunDaemon(*options);
}

// Option resolution and listen-address parsing; see options.h.
#include "server/options.h"

#include <pwd.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "absl/container/flat_hash_set.h"
#include "base/usable_cpus.h"
#include "cache/redis_client.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tccd::server {
namespace {

constexpr int kMaxCompileThreads = 1024;
// gRPC takes the receive limit as an int of bytes.
constexpr int kMaxRequestMb = 2047;

std::string GetEnv(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

bool IsAbsolute(absl::string_view path) { return !path.empty() && path.front() == '/'; }

absl::StatusOr<ListenAddress> ParseUnixPath(absl::string_view original, absl::string_view path) {
  if (path.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--listen=", original, ": empty unix socket path"));
  }
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(std::string(path), ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("--listen=", original, ": cannot make the path absolute: ", ec.message()));
  }
  std::string normalized = absolute.lexically_normal().string();
  // sun_path holds the path and its terminating NUL.
  constexpr size_t kMaxPath = sizeof(sockaddr_un{}.sun_path) - 1;
  if (normalized.size() > kMaxPath) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--listen=", original, ": unix socket path is ", normalized.size(),
        " bytes, longer than the system limit of ", kMaxPath, "; choose a shorter path"));
  }
  return ListenAddress{.uri = absl::StrCat("unix:", normalized), .unix_path = normalized};
}

}  // namespace

absl::StatusOr<ListenAddress> ParseListenAddress(absl::string_view text) {
  absl::string_view rest = text;
  if (absl::ConsumePrefix(&rest, "unix-abstract:")) {
    if (rest.empty()) {
      return absl::InvalidArgumentError("--listen=unix-abstract: needs a name");
    }
    return ListenAddress{.uri = std::string(text), .unix_path = ""};
  }
  if (absl::ConsumePrefix(&rest, "unix://")) {
    if (!IsAbsolute(rest)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--listen=", text,
                       ": unix:// must be followed by an absolute path (unix:///run/x.sock),"
                       " or write unix:PATH"));
    }
    return ParseUnixPath(text, rest);
  }
  if (absl::ConsumePrefix(&rest, "unix:")) return ParseUnixPath(text, rest);

  if (IsAbsolute(text) || absl::StartsWith(text, ".")) {
    return absl::InvalidArgumentError(
        absl::StrCat("--listen=", text, ": looks like a path; write unix:", text));
  }
  // TCP: HOST:PORT with HOST an IPv4 address, a name, or a bracketed IPv6
  // address.
  size_t colon = text.rfind(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("--listen=", text, ": expected unix:PATH or HOST:PORT (e.g. 127.0.0.1:7070)"));
  }
  absl::string_view host = text.substr(0, colon);
  absl::string_view port_text = text.substr(colon + 1);
  int port = -1;
  if (!absl::SimpleAtoi(port_text, &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--listen=", text, ": port must be a number from 0 to 65535"));
  }
  if (host.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--listen=", text, ": missing host; use 127.0.0.1", text, " or 0.0.0.0", text));
  }
  if (host.find(':') != absl::string_view::npos && !(host.front() == '[' && host.back() == ']')) {
    return absl::InvalidArgumentError(
        absl::StrCat("--listen=", text, ": write IPv6 addresses in brackets, e.g. [::1]:7070"));
  }
  return ListenAddress{.uri = std::string(text), .unix_path = ""};
}

Environment Environment::FromProcess() {
  Environment env;
  env.xdg_runtime_dir = GetEnv("XDG_RUNTIME_DIR");
  env.xdg_cache_home = GetEnv("XDG_CACHE_HOME");
  env.home = GetEnv("HOME");
  env.uid = getuid();
  if (env.home.empty()) {
    if (const passwd* pw = getpwuid(env.uid); pw != nullptr && pw->pw_dir != nullptr) {
      env.home = pw->pw_dir;
    }
  }
  env.hardware_concurrency = UsableCpus();  // the affinity mask's CPUs
  return env;
}

std::string DefaultSocketPath(const Environment& env) {
  if (IsAbsolute(env.xdg_runtime_dir)) {
    return (std::filesystem::path(env.xdg_runtime_dir) / "tccd" / "tccd.sock")
        .lexically_normal()
        .string();
  }
  return absl::StrCat("/tmp/tccd-", env.uid, "/tccd.sock");
}

std::string DefaultCacheDir(const Environment& env) {
  if (IsAbsolute(env.xdg_cache_home)) {
    return (std::filesystem::path(env.xdg_cache_home) / "tccd" / "db").lexically_normal().string();
  }
  // With no usable home either, fall back to a per-user directory that always
  // exists.
  std::string home = IsAbsolute(env.home) ? env.home : absl::StrCat("/tmp/tccd-", env.uid);
  return (std::filesystem::path(home) / ".cache" / "tccd" / "db").lexically_normal().string();
}

absl::StatusOr<ServerOptions> ResolveOptions(const RawFlags& raw, const Environment& env) {
  ServerOptions options;

  // --listen: every value, each possibly a comma-separated list; duplicates
  // dropped.
  absl::flat_hash_set<std::string> seen;
  bool any_listen_value = false;
  for (const std::string& value : raw.listen) {
    any_listen_value = true;
    for (absl::string_view part : absl::StrSplit(value, ',')) {
      part = absl::StripAsciiWhitespace(part);
      if (part.empty()) continue;
      absl::StatusOr<ListenAddress> address = ParseListenAddress(part);
      if (!address.ok()) return address.status();
      if (seen.insert(address->uri).second) options.listen.push_back(*std::move(address));
    }
  }
  if (options.listen.empty()) {
    if (any_listen_value) {
      return absl::InvalidArgumentError("--listen was given but names no address");
    }
    absl::StatusOr<ListenAddress> address =
        ParseListenAddress(absl::StrCat("unix:", DefaultSocketPath(env)));
    if (!address.ok()) return address.status();
    options.listen.push_back(*std::move(address));
    options.listen_is_default = true;
  }

  options.cache_dir = raw.cache_dir.empty() ? DefaultCacheDir(env) : raw.cache_dir;
  {
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(options.cache_dir, ec);
    if (ec) {
      return absl::InvalidArgumentError(
          absl::StrCat("--cache-dir=", options.cache_dir, ": ", ec.message()));
    }
    options.cache_dir = absolute.lexically_normal().string();
  }

  static constexpr absl::string_view kLevels[] = {"trace", "debug",    "info", "warn",
                                                  "error", "critical", "off"};
  options.log_level = absl::AsciiStrToLower(raw.log_level);
  if (options.log_level == "warning") options.log_level = "warn";
  bool known_level = false;
  for (absl::string_view level : kLevels) known_level |= options.log_level == level;
  if (!known_level) {
    return absl::InvalidArgumentError(
        absl::StrCat("--log-level=", raw.log_level,
                     ": expected one of trace, debug, info, warn, error, critical, off"));
  }

  if (raw.compile_threads < 0 || raw.compile_threads > kMaxCompileThreads) {
    return absl::InvalidArgumentError(absl::StrCat("--compile-threads=", raw.compile_threads,
                                                   ": expected 0 (one per usable CPU) to ",
                                                   kMaxCompileThreads));
  }
  options.compile_threads =
      raw.compile_threads == 0 ? std::max(1, env.hardware_concurrency) : raw.compile_threads;

  if (raw.max_request_mb < 1 || raw.max_request_mb > kMaxRequestMb) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-request-mb=", raw.max_request_mb, ": expected 1 to ", kMaxRequestMb));
  }
  options.max_request_bytes = raw.max_request_mb << 20;

  // The quota must admit at least one largest request, or that request could
  // never be read.
  if (raw.max_inflight_request_mb < raw.max_request_mb || raw.max_inflight_request_mb > (1 << 20)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-inflight-request-mb=", raw.max_inflight_request_mb,
                     ": expected --max-request-mb (", raw.max_request_mb, ") to 1048576"));
  }
  options.max_inflight_request_bytes = int64_t{raw.max_inflight_request_mb} << 20;
  if (raw.max_concurrent_streams < 1 || raw.max_concurrent_streams > 65536) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max-concurrent-streams=", raw.max_concurrent_streams, ": expected 1 to 65536"));
  }
  options.max_concurrent_streams = raw.max_concurrent_streams;
  if (raw.request_deadline_s < 1 || raw.request_deadline_s > 7 * 86400) {
    return absl::InvalidArgumentError(
        absl::StrCat("--request-deadline-s=", raw.request_deadline_s, ": expected 1 to 604800"));
  }
  options.request_deadline_s = raw.request_deadline_s;

  if (raw.cache_memtable_mb < 1 || raw.cache_memtable_mb > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("--cache-memtable-mb=", raw.cache_memtable_mb, ": expected 1 to 1024"));
  }
  options.cache_memtable_bytes = int64_t{raw.cache_memtable_mb} << 20;

  if (raw.max_cache_mb < 0 || raw.max_cache_mb > (int64_t{1} << 30)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-cache-mb=", raw.max_cache_mb, ": expected 0 (no cap) to 1073741824"));
  }
  options.max_cache_bytes = raw.max_cache_mb << 20;
  if (raw.cache_low_watermark_pct < 1 || raw.cache_low_watermark_pct > 100) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--cache-low-watermark-pct=", raw.cache_low_watermark_pct, ": expected 1 to 100"));
  }
  options.cache_low_watermark = raw.cache_low_watermark_pct / 100.0;
  if (raw.eviction_min_age_s < 0 || raw.eviction_min_age_s > 7 * 86400) {
    return absl::InvalidArgumentError(
        absl::StrCat("--eviction-min-age-s=", raw.eviction_min_age_s, ": expected 0 to 604800"));
  }
  options.eviction_min_age_s = raw.eviction_min_age_s;

  if (!raw.shared_cache.empty()) {
    absl::StatusOr<cache::RedisEndpoint> endpoint = cache::ParseRedisUrl(raw.shared_cache);
    if (!endpoint.ok()) return endpoint.status();
  }
  options.shared_cache = raw.shared_cache;
  if (raw.shared_cache_timeout_ms < 1 || raw.shared_cache_timeout_ms > 60'000) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--shared-cache-timeout-ms=", raw.shared_cache_timeout_ms, ": expected 1 to 60000"));
  }
  options.shared_cache_timeout_ms = raw.shared_cache_timeout_ms;
  if (raw.shared_cache_wait_s < 0 || raw.shared_cache_wait_s > 86400) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shared-cache-wait-s=", raw.shared_cache_wait_s, ": expected 0 to 86400"));
  }
  options.shared_cache_wait_s = raw.shared_cache_wait_s;
  if (raw.shared_cache_tls_cert.empty() != raw.shared_cache_tls_key.empty()) {
    return absl::InvalidArgumentError(
        "--shared-cache-tls-cert and --shared-cache-tls-key go together: give both or neither");
  }
  if ((!raw.shared_cache_tls_ca.empty() || !raw.shared_cache_tls_cert.empty()) &&
      !absl::StartsWith(raw.shared_cache, "rediss://")) {
    return absl::InvalidArgumentError(
        "--shared-cache-tls-ca/-cert/-key need --shared-cache rediss://HOST:PORT (TLS)");
  }
  options.shared_cache_tls_ca = raw.shared_cache_tls_ca;
  options.shared_cache_tls_cert = raw.shared_cache_tls_cert;
  options.shared_cache_tls_key = raw.shared_cache_tls_key;

  if (raw.tls_cert.empty() != raw.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together: give both or neither");
  }
  if (!raw.tls_client_ca.empty() && raw.tls_cert.empty()) {
    return absl::InvalidArgumentError(
        "--tls-client-ca needs --tls-cert and --tls-key (client certificates are checked during "
        "the TLS handshake)");
  }
  options.tls_cert = raw.tls_cert;
  options.tls_key = raw.tls_key;
  options.tls_client_ca = raw.tls_client_ca;
  options.tokens = raw.tokens;
  if (!raw.metrics_listen.empty()) {
    // Same HOST:PORT rules as a TCP --listen; unix sockets are not for Prometheus.
    absl::StatusOr<ListenAddress> address = ParseListenAddress(raw.metrics_listen);
    if (!address.ok() || !address->unix_path.empty() ||
        absl::StartsWith(raw.metrics_listen, "unix")) {
      return absl::InvalidArgumentError(
          absl::StrCat("--metrics-listen=", raw.metrics_listen,
                       ": expected HOST:PORT (e.g. 127.0.0.1:9464; port 0 picks a free port)"));
    }
  }
  options.metrics_listen = raw.metrics_listen;

  if (raw.compile_time_limit_s < 1 || raw.compile_time_limit_s > 86400) {
    return absl::InvalidArgumentError(
        absl::StrCat("--compile-time-limit-s=", raw.compile_time_limit_s, ": expected 1 to 86400"));
  }
  if (raw.compile_memory_limit_mb < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--compile-memory-limit-mb=", raw.compile_memory_limit_mb,
                     ": expected 0 (no limit) or more"));
  }
  options.compile_in_process = raw.compile_in_process;
  options.compile_time_limit_s = raw.compile_time_limit_s;
  options.compile_memory_limit_mb = raw.compile_memory_limit_mb;
  if (raw.compile_nice < 0 || raw.compile_nice > 19) {
    return absl::InvalidArgumentError(
        absl::StrCat("--compile-nice=", raw.compile_nice, ": expected 0 (none) to 19"));
  }
  options.compile_nice = raw.compile_nice;
  if (raw.waited_compile_nice < 0 || raw.waited_compile_nice > 19) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--waited-compile-nice=", raw.waited_compile_nice, ": expected 0 (none) to 19"));
  }
  options.waited_compile_nice = raw.waited_compile_nice;
  options.enable_test_faults = raw.enable_test_faults;
  if (raw.progress_log_s < 0 || raw.progress_log_s > 86400) {
    return absl::InvalidArgumentError(
        absl::StrCat("--progress-log-s=", raw.progress_log_s, ": expected 0 (never) to 86400"));
  }
  options.progress_log_s = raw.progress_log_s;
  options.aot_recipes = raw.aot_recipes;
  options.dynamic_profiles = raw.dynamic_profiles;
  return options;
}

std::vector<std::string> ScanRepeatedFlag(int argc, const char* const* argv,
                                          absl::string_view name) {
  std::vector<std::string> values;
  const std::string single = absl::StrCat("-", name);
  const std::string dashed = absl::StrCat("--", name);
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == single || arg == dashed) {
      if (i + 1 < argc) values.emplace_back(argv[++i]);
      continue;
    }
    if (absl::ConsumePrefix(&arg, dashed + "=") || absl::ConsumePrefix(&arg, single + "=")) {
      values.emplace_back(arg);
    }
  }
  return values;
}

}  // namespace tccd::server

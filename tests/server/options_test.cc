// Option resolution: default paths per XDG rules, --listen parsing and
// repetition, validation.
#include "server/options.h"

#include <sched.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "base/usable_cpus.h"

namespace tccd::server {
namespace {

Environment TestEnv() {
  Environment env;
  env.xdg_runtime_dir = "/run/user/1000";
  env.xdg_cache_home = "/home/ada/.xdg-cache";
  env.home = "/home/ada";
  env.uid = 1000;
  env.hardware_concurrency = 6;
  return env;
}

TEST_CASE("Default socket: XDG_RUNTIME_DIR, else /tmp/tccd-$UID") {
  Environment env = TestEnv();
  CHECK(DefaultSocketPath(env) == "/run/user/1000/tccd/tccd.sock");
  env.xdg_runtime_dir = "";
  CHECK(DefaultSocketPath(env) == "/tmp/tccd-1000/tccd.sock");
  env.xdg_runtime_dir = "relative/dir";  // the XDG spec says to ignore relative paths
  CHECK(DefaultSocketPath(env) == "/tmp/tccd-1000/tccd.sock");
}

TEST_CASE("Default cache: XDG_CACHE_HOME, else ~/.cache") {
  Environment env = TestEnv();
  CHECK(DefaultCacheDir(env) == "/home/ada/.xdg-cache/tccd/db");
  env.xdg_cache_home = "";
  CHECK(DefaultCacheDir(env) == "/home/ada/.cache/tccd/db");
}

TEST_CASE("ResolveOptions: no flags gives the defaults") {
  absl::StatusOr<ServerOptions> options = ResolveOptions(RawFlags{}, TestEnv());
  REQUIRE(options.ok());
  REQUIRE(options->listen.size() == 1);
  CHECK(options->listen[0].uri == "unix:/run/user/1000/tccd/tccd.sock");
  CHECK(options->listen[0].unix_path == "/run/user/1000/tccd/tccd.sock");
  CHECK(options->listen_is_default);
  CHECK(options->cache_dir == "/home/ada/.xdg-cache/tccd/db");
  CHECK(options->log_level == "info");
  CHECK(options->compile_threads == 6);
  CHECK(options->compile_nice == 10);
  CHECK(options->waited_compile_nice == 0);
  CHECK(options->max_request_bytes == 256 << 20);
}

TEST_CASE(
    "ResolveOptions: repeated and comma-separated --listen, duplicates "
    "dropped") {
  RawFlags raw;
  raw.listen = {"unix:/tmp/a.sock,127.0.0.1:7070", "[::1]:0", "unix:///tmp/a.sock"};
  absl::StatusOr<ServerOptions> options = ResolveOptions(raw, TestEnv());
  REQUIRE(options.ok());
  REQUIRE(options->listen.size() == 3);
  CHECK(options->listen[0].uri == "unix:/tmp/a.sock");
  CHECK(options->listen[1].uri == "127.0.0.1:7070");
  CHECK(options->listen[1].unix_path.empty());
  CHECK(options->listen[2].uri == "[::1]:0");
  CHECK_FALSE(options->listen_is_default);
}

TEST_CASE("ResolveOptions: rejects bad values naming the flag") {
  auto error_of = [](RawFlags raw) {
    absl::StatusOr<ServerOptions> options = ResolveOptions(raw, TestEnv());
    REQUIRE_FALSE(options.ok());
    CHECK(options.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(options.status().message());
  };
  RawFlags raw;
  raw.listen = {"/tmp/x.sock"};
  CHECK_THAT(error_of(raw), Catch::Contains("write unix:/tmp/x.sock"));
  raw.listen = {"localhost"};
  CHECK_THAT(error_of(raw), Catch::Contains("HOST:PORT"));
  raw.listen = {"127.0.0.1:99999"};
  CHECK_THAT(error_of(raw), Catch::Contains("port"));
  raw.listen = {"::1:80"};
  CHECK_THAT(error_of(raw), Catch::Contains("brackets"));
  raw.listen = {","};
  CHECK_THAT(error_of(raw), Catch::Contains("--listen"));
  raw.listen = {"unix:/" + std::string(200, 'x')};
  CHECK_THAT(error_of(raw), Catch::Contains("longer than the system limit"));

  raw = RawFlags{};
  raw.log_level = "loud";
  CHECK_THAT(error_of(raw), Catch::Contains("--log-level"));
  raw = RawFlags{};
  raw.compile_threads = -1;
  CHECK_THAT(error_of(raw), Catch::Contains("--compile-threads"));
  raw = RawFlags{};
  raw.max_request_mb = 0;
  CHECK_THAT(error_of(raw), Catch::Contains("--max-request-mb"));
  raw = RawFlags{};
  raw.max_inflight_request_mb = raw.max_request_mb - 1;  // no room for one
  CHECK_THAT(error_of(raw), Catch::Contains("--max-inflight-request-mb"));
  raw = RawFlags{};
  raw.max_concurrent_streams = 0;
  CHECK_THAT(error_of(raw), Catch::Contains("--max-concurrent-streams"));
  raw = RawFlags{};
  raw.request_deadline_s = 0;
  CHECK_THAT(error_of(raw), Catch::Contains("--request-deadline-s"));
  raw = RawFlags{};
  raw.max_cache_mb = -1;
  CHECK_THAT(error_of(raw), Catch::Contains("--max-cache-mb"));
  raw = RawFlags{};
  raw.cache_low_watermark_pct = 0;
  CHECK_THAT(error_of(raw), Catch::Contains("--cache-low-watermark-pct"));
  raw = RawFlags{};
  raw.eviction_min_age_s = -1;
  CHECK_THAT(error_of(raw), Catch::Contains("--eviction-min-age-s"));
  raw = RawFlags{};
  raw.shared_cache = "http://cache:6379";
  CHECK_THAT(error_of(raw), Catch::Contains("--shared-cache"));
  raw = RawFlags{};
  raw.shared_cache = "redis://cache:6379";
  raw.shared_cache_tls_ca = "/etc/ca.pem";
  CHECK_THAT(error_of(raw), Catch::Contains("rediss://"));
  raw = RawFlags{};
  raw.shared_cache = "rediss://cache:6379";
  raw.shared_cache_tls_cert = "/etc/client.pem";
  CHECK_THAT(error_of(raw), Catch::Contains("--shared-cache-tls-key"));
  raw = RawFlags{};
  raw.shared_cache_timeout_ms = 0;
  CHECK_THAT(error_of(raw), Catch::Contains("--shared-cache-timeout-ms"));
  raw = RawFlags{};
  raw.shared_cache_wait_s = -1;
  CHECK_THAT(error_of(raw), Catch::Contains("--shared-cache-wait-s"));
  raw = RawFlags{};
  raw.compile_nice = 20;
  CHECK_THAT(error_of(raw), Catch::Contains("--compile-nice=20: expected 0 (none) to 19"));
  raw.compile_nice = -1;
  CHECK_THAT(error_of(raw), Catch::Contains("--compile-nice"));
  raw = RawFlags{};
  raw.waited_compile_nice = 20;
  CHECK_THAT(error_of(raw), Catch::Contains("--waited-compile-nice=20: expected 0 (none) to 19"));
  raw.waited_compile_nice = -1;
  CHECK_THAT(error_of(raw), Catch::Contains("--waited-compile-nice"));
}

TEST_CASE("ResolveOptions: eviction flags") {
  absl::StatusOr<ServerOptions> defaults = ResolveOptions(RawFlags{}, TestEnv());
  REQUIRE(defaults.ok());
  CHECK(defaults->max_cache_bytes == 0);  // no cap unless asked
  CHECK(defaults->cache_low_watermark == 0.9);
  CHECK(defaults->eviction_min_age_s == 60);
  RawFlags raw;
  raw.max_cache_mb = 3;
  raw.cache_low_watermark_pct = 75;
  raw.eviction_min_age_s = 0;
  absl::StatusOr<ServerOptions> options = ResolveOptions(raw, TestEnv());
  REQUIRE(options.ok());
  CHECK(options->max_cache_bytes == 3 << 20);
  CHECK(options->cache_low_watermark == 0.75);
  CHECK(options->eviction_min_age_s == 0);
}

TEST_CASE("ResolveOptions: explicit values win") {
  RawFlags raw;
  raw.cache_dir = "/scratch/cache/";
  raw.log_level = "WARNING";
  raw.compile_threads = 2;
  raw.max_request_mb = 16;
  raw.max_inflight_request_mb = 16;
  raw.max_concurrent_streams = 8;
  raw.request_deadline_s = 5;
  absl::StatusOr<ServerOptions> options = ResolveOptions(raw, TestEnv());
  REQUIRE(options.ok());
  CHECK(options->cache_dir == "/scratch/cache/");
  CHECK(options->log_level == "warn");
  CHECK(options->compile_threads == 2);
  CHECK(options->max_request_bytes == 16 << 20);
  CHECK(options->max_inflight_request_bytes == 16 << 20);
  CHECK(options->max_concurrent_streams == 8);
  CHECK(options->request_deadline_s == 5);
}

TEST_CASE("ScanRepeatedFlag: every spelling, in order, up to --") {
  const char* argv[] = {
      "tccd",    "--listen=a", "--cache_dir=x", "--listen", "b",         "-listen=c",
      "-listen", "d",          "--listener=no", "--",       "--listen=e"};
  std::vector<std::string> values = ScanRepeatedFlag(11, argv, "listen");
  CHECK(values == std::vector<std::string>{"a", "b", "c", "d"});
}


TEST_CASE("One compile per usable CPU: the affinity mask's CPUs, not the machine's") {
  cpu_set_t saved;
  REQUIRE(sched_getaffinity(0, sizeof(saved), &saved) == 0);
  int first = 0;
  while (!CPU_ISSET(first, &saved)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  REQUIRE(sched_setaffinity(0, sizeof(one), &one) == 0);
  const int pinned = UsableCpus();
  const Environment env = Environment::FromProcess();
  REQUIRE(sched_setaffinity(0, sizeof(saved), &saved) == 0);
  CHECK(pinned == 1);
  CHECK(env.hardware_concurrency == 1);
  CHECK(UsableCpus() == CPU_COUNT(&saved));
}

}  // namespace
}  // namespace tccd::server

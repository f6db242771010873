// tccd_hit_bench: an open-loop load generator for tccd's cache-hit path.
//
// Sends one pre-serialized request (what the Python client sends on a hit: a
// tccd.v1.CompileRequest, or a ManifestRequest for GetManifest) at a fixed
// rate over N channels, with TLS, client certificate and bearer token like the
// Python client, and prints the achieved rate, latency percentiles, failures,
// and the CPU seconds it and (with --daemon-pid) the daemon spent.
//
// Why open loop, measured from the scheduled send time: a closed-loop client
// (send, wait, send) slows down when the daemon stalls and so never records the
// requests that would have queued behind the stall (coordinated omission). Here
// request i is due at start + i/rate whatever happened before, and its latency
// is counted from that instant, so a stall shows up in every request it
// delayed, including ones the sender itself could not send on time.
//
// Why the generic stub and a pre-serialized ByteBuffer: the client should cost
// as little CPU as possible on a 2-core machine it shares with the daemon; the
// request is serialized once, and a response is parsed only as far as needed
// to check it is a hit.
//
//   build/bin/tccd_hit_bench --target 127.0.0.1:7070 --request req.pb \
//       --tls-ca ca.pem --tls-cert client.pem --tls-key client.key --token-file tok \
//       --rate 1000 --seconds 10 --channels 4
//
// tests/tools/tls_hit_latency_bench.py starts a daemon, compiles a graph,
// writes the request and runs this.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "tccd/v1/tccd.grpc.pb.h"  // the messages and their SerializationTraits

ABSL_FLAG(std::string, target, "", "daemon address: HOST:PORT or unix:PATH");
ABSL_FLAG(std::string, request, "",
          "file holding the serialized request (CompileRequest for --method=compile, "
          "ManifestRequest for --method=manifest)");
ABSL_FLAG(std::string, method, "compile",
          "compile (tccd.v1.Tccd/Compile, what the client sends on every graph) or "
          "manifest (GetManifest, the AOT path's lookup by key)");
ABSL_FLAG(double, rate, 1000, "requests per second (open loop)");
ABSL_FLAG(double, seconds, 10, "how long to send");
ABSL_FLAG(int, channels, 4, "channels (one TCP/TLS connection each), used round robin");
ABSL_FLAG(int, warmup, 50, "requests per channel before the clock starts (handshakes, caches)");
ABSL_FLAG(double, timeout_s, 30, "per-request deadline");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM of the CA the daemon's certificate is checked against; "
          "empty: plaintext");
ABSL_FLAG(std::string, tls_cert, "", "client certificate PEM (mTLS)");
ABSL_FLAG(std::string, tls_key, "", "client key PEM (mTLS)");
ABSL_FLAG(std::string, token, "", "bearer token");
ABSL_FLAG(std::string, token_file, "", "file whose first line is the bearer token");
ABSL_FLAG(int, daemon_pid, 0, "if set, report this process's CPU seconds during the run");

namespace {

using Clock = std::chrono::steady_clock;

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

// utime + stime of `pid` in seconds, from /proc/PID/stat (fields 14 and 15).
double ProcessCpuSeconds(int pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name (field 2) may hold spaces; the fields after it start after ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::vector<std::string> fields = absl::StrSplit(stat.substr(close + 2), ' ');
  if (fields.size() < 13) return 0;
  int64_t utime = 0, stime = 0;
  if (!absl::SimpleAtoi(fields[11], &utime) || !absl::SimpleAtoi(fields[12], &stime)) return 0;
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double OwnCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> Credentials() {
  if (absl::GetFlag(FLAGS_tls_ca).empty()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  absl::StatusOr<std::string> ca = ReadFile(absl::GetFlag(FLAGS_tls_ca));
  if (!ca.ok()) return ca.status();
  options.pem_root_certs = *ca;
  if (!absl::GetFlag(FLAGS_tls_cert).empty()) {
    absl::StatusOr<std::string> cert = ReadFile(absl::GetFlag(FLAGS_tls_cert));
    absl::StatusOr<std::string> key = ReadFile(absl::GetFlag(FLAGS_tls_key));
    if (!cert.ok()) return cert.status();
    if (!key.ok()) return key.status();
    options.pem_cert_chain = *cert;
    options.pem_private_key = *key;
  }
  return grpc::SslCredentials(options);
}

absl::StatusOr<std::string> Token() {
  if (!absl::GetFlag(FLAGS_token).empty()) return absl::GetFlag(FLAGS_token);
  if (absl::GetFlag(FLAGS_token_file).empty()) return std::string();
  absl::StatusOr<std::string> contents = ReadFile(absl::GetFlag(FLAGS_token_file));
  if (!contents.ok()) return contents.status();
  std::string line = std::string(absl::StripAsciiWhitespace(
      std::vector<std::string>(absl::StrSplit(*contents, '\n')).front()));
  return line;
}

// Whether a response is a hit: for Compile, cache_hit; for GetManifest, any
// manifest that parses (a miss is NOT_FOUND).
bool IsHit(const std::string& method, grpc::ByteBuffer& response) {
  if (method == "compile") {
    tccd::v1::CompileResponse parsed;
    return grpc::SerializationTraits<tccd::v1::CompileResponse>::Deserialize(&response, &parsed)
               .ok() &&
           parsed.cache_hit();
  }
  tccd::v1::Manifest parsed;
  return grpc::SerializationTraits<tccd::v1::Manifest>::Deserialize(&response, &parsed).ok() &&
         !parsed.key().empty();
}

// One in-flight call: owns what gRPC needs until the callback runs.
struct Call {
  grpc::ClientContext context;
  grpc::ByteBuffer response;
  Clock::time_point scheduled;
  size_t index = 0;
};

class Bench {
 public:
  Bench(std::vector<std::unique_ptr<grpc::GenericStub>> stubs, std::string method_path,
        std::string method, grpc::ByteBuffer request, std::string token)
      : stubs_(std::move(stubs)),
        method_path_(std::move(method_path)),
        method_(std::move(method)),
        request_(std::move(request)),
        token_(std::move(token)),
        timeout_(std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::duration<double>(absl::GetFlag(FLAGS_timeout_s)))) {}

  // Sends one call due at `scheduled`; `index` < 0: a warm-up call, not recorded.
  void Send(size_t stub, Clock::time_point scheduled, int64_t index) {
    auto* call = new Call;
    call->scheduled = scheduled;
    // gRPC takes deadlines on the system clock only.
    call->context.set_deadline(std::chrono::system_clock::now() + timeout_);
    if (!token_.empty()) call->context.AddMetadata("authorization", "Bearer " + token_);
    stubs_[stub]->UnaryCall(
        &call->context, method_path_, grpc::StubOptions(), &request_, &call->response,
        [this, call, index](grpc::Status status) {
          const double ms =
              std::chrono::duration<double, std::milli>(Clock::now() - call->scheduled).count();
          const bool ok = status.ok() && IsHit(method_, call->response);
          Finished(index, ms, ok, status);
          delete call;
        });
  }

  void Reset(size_t total) {
    absl::MutexLock lock(&mu_);
    latencies_ms_.assign(total, -1);
    outstanding_ = 0;
    failures_ = 0;
  }
  void Expect(int64_t n) {
    absl::MutexLock lock(&mu_);
    outstanding_ += n;
  }
  void WaitAll() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](int64_t* outstanding) { return *outstanding == 0; }, &outstanding_));
  }
  std::vector<double> Latencies() {
    absl::MutexLock lock(&mu_);
    return latencies_ms_;
  }
  int64_t failures() {
    absl::MutexLock lock(&mu_);
    return failures_;
  }
  std::string first_error() {
    absl::MutexLock lock(&mu_);
    return first_error_;
  }

 private:
  void Finished(int64_t index, double ms, bool ok, const grpc::Status& status) {
    absl::MutexLock lock(&mu_);
    if (index >= 0) latencies_ms_[static_cast<size_t>(index)] = ms;
    if (!ok) {
      ++failures_;
      if (first_error_.empty()) {
        first_error_ = status.ok()
                           ? "answered, but not a cache hit"
                           : absl::StrCat(status.error_code(), ": ", status.error_message());
      }
    }
    --outstanding_;
  }

  const std::vector<std::unique_ptr<grpc::GenericStub>> stubs_;
  const std::string method_path_;
  const std::string method_;
  const grpc::ByteBuffer request_;  // shared (refcounted slices) by every call
  const std::string token_;
  const std::chrono::system_clock::duration timeout_;
  absl::Mutex mu_;
  std::vector<double> latencies_ms_ ABSL_GUARDED_BY(mu_);
  int64_t outstanding_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t failures_ ABSL_GUARDED_BY(mu_) = 0;
  std::string first_error_ ABSL_GUARDED_BY(mu_);
};

int Run() {
  const std::string method = absl::GetFlag(FLAGS_method);
  std::string method_path;
  if (method == "compile") {
    method_path = "/tccd.v1.Tccd/Compile";
  } else if (method == "manifest") {
    method_path = "/tccd.v1.Tccd/GetManifest";
  } else {
    std::fprintf(stderr, "--method must be compile or manifest\n");
    return 2;
  }
  if (absl::GetFlag(FLAGS_target).empty() || absl::GetFlag(FLAGS_request).empty()) {
    std::fprintf(stderr, "--target and --request are required (--help)\n");
    return 2;
  }
  absl::StatusOr<std::string> request_bytes = ReadFile(absl::GetFlag(FLAGS_request));
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials = Credentials();
  absl::StatusOr<std::string> token = Token();
  for (const absl::Status& s : {request_bytes.status(), credentials.status(), token.status()}) {
    if (!s.ok()) {
      std::fprintf(stderr, "tccd_hit_bench: %s\n", s.ToString().c_str());
      return 2;
    }
  }
  const int channels = std::max(1, absl::GetFlag(FLAGS_channels));
  std::vector<std::unique_ptr<grpc::GenericStub>> stubs;
  for (int i = 0; i < channels; ++i) {
    grpc::ChannelArguments args;
    // Channels with identical arguments share one connection (gRPC's global
    // subchannel pool); a distinct argument per channel gives each its own.
    args.SetInt("tccd.bench_channel", i);
    args.SetMaxReceiveMessageSize(64 << 20);
    stubs.push_back(std::make_unique<grpc::GenericStub>(
        grpc::CreateCustomChannel(absl::GetFlag(FLAGS_target), *credentials, args)));
  }
  grpc::Slice slice(*request_bytes);
  Bench bench(std::move(stubs), method_path, method, grpc::ByteBuffer(&slice, 1), *token);

  // Warm-up: connections, TLS handshakes, the daemon's caches. Must all be hits.
  const int warmup = std::max(1, absl::GetFlag(FLAGS_warmup));
  bench.Reset(0);
  bench.Expect(static_cast<int64_t>(warmup) * channels);
  for (int i = 0; i < warmup * channels; ++i) bench.Send(i % channels, Clock::now(), -1);
  bench.WaitAll();
  if (bench.failures() > 0) {
    std::fprintf(stderr, "tccd_hit_bench: %lld of %d warm-up requests failed (first: %s)\n",
                 static_cast<long long>(bench.failures()), warmup * channels,
                 bench.first_error().c_str());
    return 1;
  }

  const double rate = absl::GetFlag(FLAGS_rate);
  const auto total = static_cast<size_t>(rate * absl::GetFlag(FLAGS_seconds));
  bench.Reset(total);
  bench.Expect(static_cast<int64_t>(total));
  const int daemon_pid = absl::GetFlag(FLAGS_daemon_pid);
  const double daemon_cpu_start = daemon_pid > 0 ? ProcessCpuSeconds(daemon_pid) : 0;
  const double own_cpu_start = OwnCpuSeconds();
  const Clock::time_point start = Clock::now();
  const std::chrono::duration<double> interval(1.0 / rate);
  for (size_t i = 0; i < total; ++i) {
    const Clock::time_point scheduled =
        start + std::chrono::duration_cast<Clock::duration>(interval * static_cast<double>(i));
    // Sleep, not spin: a spinning sender would take CPU from the daemon on a small
    // machine. Waking up late (timer slack, ~50 us) is counted in the latency.
    std::this_thread::sleep_until(scheduled);
    bench.Send(i % channels, scheduled, static_cast<int64_t>(i));
  }
  const double send_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  bench.WaitAll();
  const double wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const double own_cpu = OwnCpuSeconds() - own_cpu_start;
  const double daemon_cpu = daemon_pid > 0 ? ProcessCpuSeconds(daemon_pid) - daemon_cpu_start : 0;

  std::vector<double> latencies = bench.Latencies();
  std::sort(latencies.begin(), latencies.end());
  auto pct = [&](double p) {
    if (latencies.empty()) return 0.0;
    size_t i = static_cast<size_t>(p / 100 * static_cast<double>(latencies.size()));
    return latencies[std::min(latencies.size() - 1, i)];
  };
  std::printf(
      "%s %s: %zu requests at %.0f/s over %d channels: sent in %.2f s (achieved %.0f/s), "
      "all answered in %.2f s; failures=%lld%s%s\n",
      absl::GetFlag(FLAGS_tls_ca).empty() ? "plaintext" : "TLS", method_path.c_str(), total, rate,
      channels, send_seconds, static_cast<double>(total) / send_seconds, wall_seconds,
      static_cast<long long>(bench.failures()), bench.failures() > 0 ? " first: " : "",
      bench.first_error().c_str());
  std::printf("  latency ms from scheduled send: p50=%.2f p90=%.2f p99=%.2f p99.9=%.2f max=%.2f\n",
              pct(50), pct(90), pct(99), pct(99.9), latencies.empty() ? 0.0 : latencies.back());
  std::printf("  cpu: bench %.2f s (%.0f us/request)", own_cpu,
              total ? own_cpu / static_cast<double>(total) * 1e6 : 0.0);
  if (daemon_pid > 0) {
    std::printf(", daemon %.2f s (%.0f us/request, %.2f cores)", daemon_cpu,
                total ? daemon_cpu / static_cast<double>(total) * 1e6 : 0.0,
                daemon_cpu / wall_seconds);
  }
  std::printf("\n");
  return bench.failures() > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "open-loop cache-hit load generator for tccd (tests/tools/hit_bench.cc)");
  absl::ParseCommandLine(argc, argv);
  return Run();
}

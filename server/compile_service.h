// CompileService: what tccd does for each RPC, with no knowledge of the
// transport.
//
// Plain protos in, absl::Status out; grpc_server.cc adapts it to gRPC. A
// Compile request:
//
//   1. validate the request's fields                 (INVALID_ARGUMENT)
//   2. Compiler::Prepare: parse + canonicalize       (its INVALID_ARGUMENT /
//   UNIMPLEMENTED pass
//                                                     through to the client,
//                                                     message included)
//   3. key = ComputeCompileKey(canonical IR, target, mode, options.extra,
//   TCCD_VERSION)
//   4. Store::GetManifest(key): a hit is answered at once (cache_hit = true)
//   5. a miss joins the single flight for the key: the first request compiles
//   on the compile
//      pool, identical requests arriving meanwhile wait for its result
//      (deduplicated = true)
//   6. the leader stores every artifact blob, then the manifest, and answers
//   everyone
//   7. each answered request records its job's use of the key
//   (Store::RecordJobUse)
//
// Every failure is returned to the one client it concerns; exceptions from
// codegen or the store become INTERNAL for that request. Nothing here aborts
// the daemon.
//
// Thread-safety: all methods may be called concurrently from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cache/shared_tier.h"
#include "cache/store.h"
#include "server/aot_recipe_store.h"
#include "server/gemm_tune_store.h"
#include "server/dynamic_profile_store.h"
#include "server/compile_progress_board.h"
#include "server/compiler.h"
#include "server/metrics.h"
#include "server/single_flight.h"
#include "server/stats.h"
#include "server/thread_pool.h"
#include "tccd/v1/tccd.pb.h"

namespace tccd::server {

struct CompileServiceOptions {
  // Compiles that may run at once (threads of the compile pool). Default: 1.
  int compile_threads = 1;
  // Reported by GetStats. Default: empty.
  std::string cache_dir;
  // The second cache level shared with other daemons (cache/shared_tier.h), consulted by the
  // flight leader on a local miss; must outlive the service. Default: none.
  cache::SharedTier* shared_tier = nullptr;
  // A compile running this long gets one log line with its kernels done
  // (compile_progress_board.h); zero: never. Default: 5 s.
  absl::Duration progress_log_after = absl::Seconds(5);
  // Accept and serve clients' AOT recipes (aot_recipe_store.h). Default: true.
  bool aot_recipes = true;
  // Accept and serve jobs' automatic-dynamic profiles (dynamic_profile_store.h). Default: true.
  bool dynamic_profiles = true;
  // Where compile times and the compile seconds hits saved are recorded (metrics.h); must
  // outlive the service. Default: none.
  Metrics* metrics = nullptr;
  // Test sync point: runs when a Compile request starts waiting for an
  // identical in-flight compile, with the key. Default: none.
  std::function<void(absl::string_view key)> on_dedup_wait_for_testing;
};

class CompileService {
 public:
  using Clock = std::chrono::steady_clock;
  // Receives the request's final status; `*response` is filled in iff it is OK.
  using Done = absl::AnyInvocable<void(absl::Status)>;

  // `store` must outlive the service.
  CompileService(CompileServiceOptions options, cache::Store* store,
                 std::unique_ptr<Compiler> compiler);
  CompileService(const CompileService&) = delete;
  CompileService& operator=(const CompileService&) = delete;
  // Shutdown().
  ~CompileService();

  // Answers one Compile request (steps in the file comment). Steps 1-4 run on
  // the calling thread and may block on disk; compiles run on the compile pool,
  // and waiting for an in-flight compile holds no thread. `done` runs exactly
  // once: on the calling thread, or on the compile thread that finished the
  // compile. `request` and `response` must stay valid until then. `received` is
  // when the transport got the request, for server_ms.
  // `hits_only` (a read-only caller): a miss is answered PERMISSION_DENIED and nothing is
  // compiled.
  void Compile(const v1::CompileRequest& request, v1::CompileResponse* response, Done done,
               Clock::time_point received = Clock::now(), bool hits_only = false);

  // Compile, blocking until it is answered. For tests and tools.
  absl::StatusOr<v1::CompileResponse> CompileAndWait(const v1::CompileRequest& request);

  // The bytes of the artifact `digest`. INVALID_ARGUMENT unless `digest` is 64
  // lowercase hex characters; NOT_FOUND, naming the digest, if the cache does
  // not hold it. Blocks on disk.
  absl::StatusOr<std::string> ReadArtifact(absl::string_view digest);

  // Counters (see stats.h) plus the store's usage and the pools' gauges.
  v1::StatsResponse GetStats();
  // GetStats' counters alone, without counting a request (the metrics scrape). Blocks on
  // disk briefly (the store's usage).
  std::map<std::string, int64_t> Counters();
  // The daemon's version and compiler identity (GetInfo).
  v1::InfoResponse GetInfo() const;

  // The manifest stored under `request.key`. INVALID_ARGUMENT unless the key
  // is 64 lowercase hex characters; NOT_FOUND if the cache does not hold it.
  // Blocks on disk.
  absl::StatusOr<v1::Manifest> GetManifest(const v1::ManifestRequest& request);

  // AOT recipes (aot_recipe_store.h). FAILED_PRECONDITION when the daemon
  // runs with aot_recipes off. Block on disk.
  absl::Status PutAotRecipe(const v1::AotRecipe& recipe);
  absl::StatusOr<v1::AotRecipe> GetAotRecipe(const v1::AotRecipeRequest& request);

  // Automatic-dynamic profiles (dynamic_profile_store.h): Put returns the job's merged
  // profile, Get NOT_FOUND for a job without one. FAILED_PRECONDITION when the daemon runs
  // with dynamic_profiles off. Block on disk.
  absl::StatusOr<v1::DynamicProfile> PutDynamicProfile(const v1::DynamicProfile& profile);
  absl::StatusOr<v1::DynamicProfile> GetDynamicProfile(const v1::DynamicProfileRequest& request);

  // Matmul autotuning's choices (gemm_tune_store.h): Put returns the identity's whole table
  // (stored entries kept: first writer wins), Get NOT_FOUND for an identity without one.
  // Block on disk.
  absl::StatusOr<v1::GemmTuneTable> PutGemmTunes(const v1::GemmTuneTable& table);
  absl::StatusOr<v1::GemmTuneTable> GetGemmTunes(const v1::GemmTuneRequest& request);

  // Progress of the Compile call whose request carried `request.progress_id`
  // (known = false when there is none waiting). Never blocks.
  v1::CompileProgress GetCompileProgress(const v1::CompileProgressRequest& request);

  // The keys `request.job_id` compiled or used. INVALID_ARGUMENT for an empty
  // job id.
  absl::StatusOr<v1::JobResponse> GetJob(const v1::JobRequest& request);

  // Counts a request the transport could not even parse (it never reaches a
  // method above).
  void RecordUnparsableRequest();

  // Lets running and queued compiles finish (answering their requests), then
  // joins the compile threads. Later compiles run on the caller's thread.
  // Idempotent.
  void Shutdown();

  const ServerStats& stats() const { return stats_; }

 private:
  // What one compile flight produced; shared by its leader and all its
  // followers.
  struct FlightResult {
    absl::StatusOr<v1::Manifest> manifest = absl::UnknownError("compile did not run");
    bool from_cache = false;  // the leader found the key cached on its re-check
    double compile_ms = 0;
    int kernels_compiled = 0;  // see CompileResponse
    int kernels_reused = 0;
  };
  using FlightResultPtr = std::shared_ptr<const FlightResult>;
  using Flights = SingleFlight<FlightResultPtr>;

  // How a Compile request was answered; decides counters, response flags and
  // the log line.
  enum class Outcome { kRejected, kFailed, kHit, kMiss, kDedup };

  struct Call;

  // Steps 1-5 of the file comment.
  void StartCompile(const std::shared_ptr<Call>& call);
  // On the compile pool: the leader's work for `key`, ending its flight.
  void LeadFlight(const std::string& key, const codegen::Prepared& prepared,
                  const v1::CompileRequest& request);
  FlightResult CompileAndStore(const std::string& key, const codegen::Prepared& prepared,
                               const v1::CompileRequest& request);
  absl::StatusOr<v1::Manifest> StoreOutput(const std::string& key,
                                           const codegen::Prepared& prepared,
                                           codegen::CompileOutput output, double compile_ms,
                                           v1::KeyComponents key_components);
  // The one exit of every Compile request: counters, response, job index, log
  // line, `done`.
  void Respond(Call& call, Outcome outcome, const absl::StatusOr<v1::Manifest>& manifest,
               double compile_ms);

  const CompileServiceOptions options_;
  cache::Store* const store_;
  const std::unique_ptr<Compiler> compiler_;
  const Clock::time_point started_;
  ServerStats stats_;
  CompileProgressBoard progress_;
  AotRecipeStore recipes_;
  DynamicProfileStore profiles_;
  GemmTuneStore gemm_tunes_;
  Flights flights_;
  // Declared last: destroyed (joined) first, while everything its tasks use is
  // alive.
  ThreadPool compile_pool_;
};

}  // namespace tccd::server

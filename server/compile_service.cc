// CompileService; see compile_service.h.
#include "server/compile_service.h"

#include <exception>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cache/compile_key.h"
#include "server/eviction_stats.h"
#include "server/request_checks.h"
#include "server/store_kernel_cache.h"
#include "spdlog/spdlog.h"
#include "tccd_version.h"

namespace tccd::server {
namespace {

constexpr size_t kLogKeyChars = 12;

double MillisSince(CompileService::Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(CompileService::Clock::now() - start).count();
}

int64_t NowUnixMillis() { return absl::ToUnixMillis(absl::Now()); }

std::string KeyForLog(absl::string_view key) {
  return key.empty() ? "-" : std::string(key.substr(0, kLogKeyChars));
}

// `status` with `context` prepended to its message; same code.
absl::Status Annotate(const absl::Status& status, absl::string_view context) {
  return absl::Status(status.code(), absl::StrCat(context, ": ", status.message()));
}

bool IsSha256Hex(absl::string_view digest) {
  if (digest.size() != 64) return false;
  for (char c : digest) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

const char* OutcomeName(int outcome) {
  static constexpr const char* kNames[] = {"rejected", "failed", "hit", "miss", "dedup"};
  return kNames[outcome];
}

}  // namespace

struct CompileService::Call {
  const v1::CompileRequest* request;
  v1::CompileResponse* response;
  Done done;
  Clock::time_point received;
  std::string key;  // empty until computed
  bool hits_only = false;
};

CompileService::CompileService(CompileServiceOptions options, cache::Store* store,
                               std::unique_ptr<Compiler> compiler)
    : options_(std::move(options)),
      store_(store),
      compiler_(std::move(compiler)),
      started_(Clock::now()),
      progress_(options_.progress_log_after),
      recipes_(store),
      profiles_(store),
      gemm_tunes_(store),
      compile_pool_("tccd-compile", options_.compile_threads) {
  if (options_.on_dedup_wait_for_testing) {
    flights_.SetFollowerHookForTesting(options_.on_dedup_wait_for_testing);
  }
}

CompileService::~CompileService() { Shutdown(); }

void CompileService::Shutdown() { compile_pool_.Shutdown(); }

void CompileService::Compile(const v1::CompileRequest& request, v1::CompileResponse* response,
                             Done done, Clock::time_point received, bool hits_only) {
  stats_.requests_total.fetch_add(1, std::memory_order_relaxed);
  auto call = std::make_shared<Call>(Call{.request = &request,
                                          .response = response,
                                          .done = std::move(done),
                                          .received = received,
                                          .key = "",
                                          .hits_only = hits_only});
  StartCompile(call);
}

void CompileService::StartCompile(const std::shared_ptr<Call>& call) {
  // Until the call is handed to a flight, answering it is up to us.
  bool handed_off = false;
  try {
    const v1::CompileRequest& request = *call->request;

    absl::Status valid = ValidateCompileRequest(request);
    if (!valid.ok()) {
      stats_.invalid_requests.fetch_add(1, std::memory_order_relaxed);
      Respond(*call, Outcome::kRejected, valid, 0);
      return;
    }
    absl::StatusOr<codegen::Prepared> prepared = compiler_->Prepare(CompileInputOf(request));
    if (!prepared.ok()) {
      stats_.invalid_requests.fetch_add(1, std::memory_order_relaxed);
      Respond(*call, Outcome::kRejected, prepared.status(), 0);
      return;
    }

    call->key = ComputeRequestKey(request, *prepared, compiler_->Fingerprint());
    absl::StatusOr<v1::Manifest> cached = store_->GetManifest(call->key);
    if (cached.ok()) {
      Respond(*call, Outcome::kHit, cached, 0);
      return;
    }
    if (!absl::IsNotFound(cached.status())) {
      stats_.internal_errors.fetch_add(1, std::memory_order_relaxed);
      Respond(*call, Outcome::kFailed, Annotate(cached.status(), "cache lookup"), 0);
      return;
    }
    if (call->hits_only) {
      // A hit in the shared tier is a hit too.
      std::optional<v1::Manifest> shared =
          options_.shared_tier != nullptr && !store_->WritesStopped()
              ? options_.shared_tier->Fetch(call->key, *store_)
              : std::nullopt;
      if (shared.has_value()) {
        Respond(*call, Outcome::kHit, *std::move(shared), 0);
        return;
      }
      Respond(*call, Outcome::kRejected,
              absl::PermissionDeniedError(
                  "this graph is not cached, and the caller's token has role read (cache hits "
                  "only): nothing was compiled"),
              0);
      return;
    }

    // A miss. The Prepared (it holds the parsed graph) is shared with the
    // compile task, which runs while the leader's request, which the parsed
    // graph may point into, is still open.
    auto shared_prepared = std::make_shared<const codegen::Prepared>(*std::move(prepared));
    const std::string key = call->key;
    if (!request.progress_id().empty())
      progress_.Attach(request.progress_id(), key, call->received);
    Flights::Role role =
        flights_.Join(key, [this, call](const FlightResultPtr& result, Flights::Role role) {
          Outcome outcome = role == Flights::Role::kFollower ? Outcome::kDedup
                            : result->from_cache             ? Outcome::kHit
                                                             : Outcome::kMiss;
          if (outcome == Outcome::kMiss) {
            call->response->set_kernels_compiled(result->kernels_compiled);
            call->response->set_kernels_reused(result->kernels_reused);
          }
          Respond(*call, outcome, result->manifest, result->compile_ms);
        });
    handed_off = true;
    if (role == Flights::Role::kLeader) {
      try {
        // The leader's request outlives the compile: the leader is answered when its flight
        // completes, after LeadFlight.
        const v1::CompileRequest* leader_request = call->request;
        compile_pool_.Schedule([this, key, shared_prepared, leader_request] {
          LeadFlight(key, *shared_prepared, *leader_request);
        });
      } catch (const std::exception& e) {
        // Could not queue the compile: end the flight so nobody waits forever.
        auto failed = std::make_shared<FlightResult>();
        failed->manifest = absl::InternalError(absl::StrCat("queueing the compile: ", e.what()));
        flights_.Complete(key, failed);
      }
    }
  } catch (const std::exception& e) {
    if (handed_off) {
      // The flight owns the call now and will answer it; nothing may throw past
      // Join anyway.
      spdlog::error("Compile key={}: unexpected exception after joining a flight: {}",
                    KeyForLog(call->key), e.what());
      return;
    }
    stats_.internal_errors.fetch_add(1, std::memory_order_relaxed);
    Respond(*call, Outcome::kFailed,
            absl::InternalError(absl::StrCat("tccd internal error: ", e.what())), 0);
  }
}

void CompileService::LeadFlight(const std::string& key, const codegen::Prepared& prepared,
                                const v1::CompileRequest& request) {
  auto result = std::make_shared<FlightResult>();
  try {
    *result = CompileAndStore(key, prepared, request);
  } catch (const std::exception& e) {
    stats_.compile_errors.fetch_add(1, std::memory_order_relaxed);
    result->manifest =
        absl::InternalError(absl::StrCat("tccd internal error while compiling: ", e.what()));
  } catch (...) {
    stats_.compile_errors.fetch_add(1, std::memory_order_relaxed);
    result->manifest = absl::InternalError("tccd internal error while compiling");
  }
  flights_.Complete(key, result);
}

CompileService::FlightResult CompileService::CompileAndStore(const std::string& key,
                                                             const codegen::Prepared& prepared,
                                                             const v1::CompileRequest& request) {
  FlightResult result;
  // Another flight for this key may have completed between our lookup and our
  // Join (its leader stored the manifest, then ended the flight); then there is
  // nothing to compile.
  absl::StatusOr<v1::Manifest> cached = store_->GetManifest(key);
  if (cached.ok()) {
    result.manifest = *std::move(cached);
    result.from_cache = true;
    return result;
  }

  // Held while compiling: other daemons sharing the tier wait for our result instead.
  std::unique_ptr<cache::SharedTier::Lease> shared_lease;
  if (options_.shared_tier != nullptr && !store_->WritesStopped()) {
    std::optional<v1::Manifest> shared =
        options_.shared_tier->FetchOrLease(key, *store_, &shared_lease);
    if (shared.has_value()) {
      result.manifest = *std::move(shared);
      result.from_cache = true;
      return result;
    }
  }

  if (store_->WritesStopped()) {
    // Compiling would take seconds to produce artifacts that could not be stored, and the
    // client fetches artifacts from the store. Fail fast; the client runs the graph eagerly.
    stats_.store_full_refusals.fetch_add(1, std::memory_order_relaxed);
    result.manifest = absl::ResourceExhaustedError(
        absl::StrCat("tccd did not compile this graph: its cache dir ", options_.cache_dir,
                     " cannot be written now (file system full or failing; see the daemon "
                     "log). Cached graphs are still served, and compiling resumes by itself "
                     "once the file system has room"));
    return result;
  }
  stats_.compiles.fetch_add(1, std::memory_order_relaxed);
  stats_.compiles_running.fetch_add(1, std::memory_order_relaxed);
  absl::Cleanup not_running = [this] {
    stats_.compiles_running.fetch_sub(1, std::memory_order_relaxed);
  };
  const Clock::time_point start = Clock::now();
  StoreKernelCache kernels(store_);
  progress_.Started(key, request.graph_name());
  absl::Cleanup ended = [this, &key] { progress_.Ended(key); };  // also when Compile throws
  CompileProgressBoard::Sink progress(&progress_, key);
  absl::StatusOr<codegen::CompileOutput> output =
      compiler_->Compile(prepared, request, &kernels, &progress);
  std::move(ended).Invoke();
  result.compile_ms = MillisSince(start);
  if (!output.ok()) {
    stats_.compile_errors.fetch_add(1, std::memory_order_relaxed);
    result.manifest = output.status();
    return result;
  }
  result.kernels_compiled = output->kernels_compiled;
  result.kernels_reused = output->kernels_reused;
  stats_.kernels_compiled.fetch_add(output->kernels_compiled, std::memory_order_relaxed);
  stats_.kernels_reused.fetch_add(output->kernels_reused, std::memory_order_relaxed);
  // The kernel objects are a cache for later compiles: failing to store them fails nothing.
  if (absl::Status stored = kernels.Put(output->new_kernel_objects); !stored.ok()) {
    stats_.kernel_store_errors.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("Compile key={}: {}", KeyForLog(key), stored.ToString());
  }
  std::vector<codegen::KernelObject>().swap(output->new_kernel_objects);  // stored; free them
  result.manifest = StoreOutput(key, prepared, *std::move(output), result.compile_ms,
                                ComputeKeyComponents(request, prepared, compiler_->Fingerprint()));
  if (!result.manifest.ok()) stats_.compile_errors.fetch_add(1, std::memory_order_relaxed);
  if (result.manifest.ok() && options_.metrics != nullptr)
    options_.metrics->RecordCompile(result.compile_ms / 1000);
  if (result.manifest.ok() && options_.shared_tier != nullptr) {
    options_.shared_tier->Publish(key, *result.manifest, *store_);  // before the lease goes
  }
  return result;
}

absl::StatusOr<v1::Manifest> CompileService::StoreOutput(const std::string& key,
                                                         const codegen::Prepared& prepared,
                                                         codegen::CompileOutput output,
                                                         double compile_ms,
                                                         v1::KeyComponents key_components) {
  v1::Manifest manifest;
  manifest.set_key(key);
  absl::flat_hash_set<std::string> names;
  for (codegen::ArtifactBytes& artifact : output.artifacts) {
    if (artifact.name.empty() || !names.insert(artifact.name).second) {
      return absl::InternalError(
          absl::StrCat("codegen produced an artifact with an empty or "
                       "duplicate name \"",
                       ForLog(artifact.name), "\""));
    }
    absl::StatusOr<std::string> digest = store_->PutBlob(artifact.bytes);
    if (!digest.ok()) {
      return Annotate(digest.status(), absl::StrCat("storing artifact ", artifact.name));
    }
    v1::Artifact* entry = manifest.add_artifacts();
    entry->set_name(artifact.name);
    entry->set_digest(*std::move(digest));
    entry->set_size(static_cast<int64_t>(artifact.bytes.size()));
    entry->set_kind(artifact.kind);
    std::string().swap(artifact.bytes);  // stored; free it now
  }
  *manifest.mutable_plan() = std::move(output.plan);
  manifest.set_tccd_version(TCCD_VERSION);
  manifest.set_created_unix_ms(NowUnixMillis());
  manifest.set_canonical_ir(prepared.canonical_ir);
  manifest.set_compile_ms(compile_ms);
  *manifest.mutable_key_components() = std::move(key_components);
  absl::Status stored = store_->PutManifest(key, manifest);
  if (!stored.ok()) return Annotate(stored, "storing the manifest");
  return manifest;
}

void CompileService::Respond(Call& call, Outcome outcome,
                             const absl::StatusOr<v1::Manifest>& manifest, double compile_ms) {
  absl::Status status = manifest.status();
  try {
    switch (outcome) {
      case Outcome::kHit:
        stats_.cache_hits.fetch_add(1, std::memory_order_relaxed);
        if (options_.metrics != nullptr && manifest.ok())
          options_.metrics->RecordHitSaved(manifest->compile_ms() / 1000);
        break;
      case Outcome::kMiss:
        stats_.cache_misses.fetch_add(1, std::memory_order_relaxed);
        break;
      case Outcome::kDedup:
        stats_.dedup_waits.fetch_add(1, std::memory_order_relaxed);
        break;
      case Outcome::kRejected:
      case Outcome::kFailed:
        break;
    }
    const v1::CompileRequest& request = *call.request;
    if (!request.progress_id().empty()) progress_.Detach(request.progress_id());
    if (outcome == Outcome::kHit) compile_ms = 0;
    if (status.ok()) {
      v1::CompileResponse& response = *call.response;
      *response.mutable_manifest() = *manifest;
      response.set_cache_hit(outcome == Outcome::kHit);
      response.set_deduplicated(outcome == Outcome::kDedup);
      response.set_compile_ms(compile_ms);
      if (!request.job_id().empty() && !store_->WritesStopped()) {
        // The job index is bookkeeping: failing to update it must not fail the
        // compile. While the cache cannot write it is skipped (the store has
        // logged that once; a warning per hit would flood the log).
        absl::Status recorded = store_->RecordJobUse(request.job_id(), call.key,
                                                     outcome == Outcome::kMiss, NowUnixMillis());
        if (!recorded.ok()) {
          spdlog::warn("Compile key={} job={}: recording the job's use failed: {}",
                       KeyForLog(call.key), ForLog(request.job_id()), recorded.ToString());
        }
        recorded.IgnoreError();
      }
    }
    const double server_ms = MillisSince(call.received);
    if (status.ok()) {
      call.response->set_server_ms(server_ms);
      // Hits at debug: a cluster sends thousands a second, and a line each was a
      // flood (and a write syscall each) that said nothing /metrics does not.
      spdlog::log(outcome == Outcome::kHit ? spdlog::level::debug : spdlog::level::info,
                  "Compile {} key={} graph={} job={} rank={} "
                  "compile_ms={:.1f} server_ms={:.1f}",
                  OutcomeName(static_cast<int>(outcome)), KeyForLog(call.key),
                  ForLog(request.graph_name()), ForLog(request.job_id()), request.rank(),
                  compile_ms, server_ms);
    } else {
      spdlog::warn(
          "Compile {} key={} graph={} job={} rank={} "
          "compile_ms={:.1f} server_ms={:.1f}: {}",
          OutcomeName(static_cast<int>(outcome)), KeyForLog(call.key), ForLog(request.graph_name()),
          ForLog(request.job_id()), request.rank(), compile_ms, server_ms,
          ForLog(status.ToString(), 500));
    }
  } catch (const std::exception& e) {
    stats_.internal_errors.fetch_add(1, std::memory_order_relaxed);
    status = absl::InternalError(absl::StrCat("tccd internal error: ", e.what()));
  }
  call.done(std::move(status));
}

absl::StatusOr<v1::CompileResponse> CompileService::CompileAndWait(
    const v1::CompileRequest& request) {
  v1::CompileResponse response;
  absl::Status status;
  absl::Notification answered;
  Compile(request, &response, [&](absl::Status s) {
    status = std::move(s);
    answered.Notify();
  });
  answered.WaitForNotification();
  if (!status.ok()) return status;
  return response;
}

void CompileService::RecordUnparsableRequest() {
  stats_.requests_total.fetch_add(1, std::memory_order_relaxed);
  stats_.invalid_requests.fetch_add(1, std::memory_order_relaxed);
}

absl::StatusOr<std::string> CompileService::ReadArtifact(absl::string_view digest) {
  stats_.requests_total.fetch_add(1, std::memory_order_relaxed);
  const Clock::time_point start = Clock::now();
  if (!IsSha256Hex(digest)) {
    stats_.invalid_requests.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("FetchArtifact rejected digest={}", ForLog(digest));
    return absl::InvalidArgumentError(
        absl::StrCat("FetchArtifactRequest.digest must be 64 lowercase hex characters (a "
                     "SHA-256), got \"",
                     ForLog(digest), "\""));
  }
  absl::StatusOr<std::string> blob = store_->GetBlob(digest);
  if (!blob.ok()) {
    if (absl::IsNotFound(blob.status())) {
      spdlog::warn("FetchArtifact not_found digest={}", std::string(digest));
      return absl::NotFoundError(absl::StrCat("no artifact with digest ", digest, " in the cache"));
    }
    stats_.internal_errors.fetch_add(1, std::memory_order_relaxed);
    spdlog::error("FetchArtifact failed digest={}: {}", std::string(digest),
                  blob.status().ToString());
    return Annotate(blob.status(), absl::StrCat("reading artifact ", digest));
  }
  stats_.artifacts_served.fetch_add(1, std::memory_order_relaxed);
  stats_.artifact_bytes_served.fetch_add(static_cast<int64_t>(blob->size()),
                                         std::memory_order_relaxed);
  spdlog::info("FetchArtifact digest={} bytes={} read_ms={:.1f}", KeyForLog(digest), blob->size(),
               MillisSince(start));
  return blob;
}

v1::InfoResponse CompileService::GetInfo() const {
  v1::InfoResponse response;
  response.set_tccd_version(TCCD_VERSION);
  response.set_compiler_fingerprint(compiler_->Fingerprint());
  return response;
}

v1::StatsResponse CompileService::GetStats() {
  stats_.requests_total.fetch_add(1, std::memory_order_relaxed);
  v1::StatsResponse response;
  auto& counters = *response.mutable_counters();
  for (const auto& [name, value] : Counters()) counters[name] = value;
  response.set_tccd_version(TCCD_VERSION);
  response.set_compiler_fingerprint(compiler_->Fingerprint());
  response.set_uptime_ms(static_cast<int64_t>(MillisSince(started_)));
  response.set_cache_dir(options_.cache_dir);
  spdlog::debug("GetStats");
  return response;
}

std::map<std::string, int64_t> CompileService::Counters() {
  std::map<std::string, int64_t> counters = stats_.Snapshot();
  const cache::Store::Usage usage = store_->GetUsage();
  counters["store_blobs"] = usage.blobs;
  counters["store_manifests"] = usage.manifests;
  counters["store_blob_bytes"] = usage.blob_bytes;
  counters["store_writes_stopped"] = store_->WritesStopped() ? 1 : 0;
  AddEvictionCounters(usage, counters);
  if (options_.shared_tier != nullptr) {
    for (const auto& [name, value] : options_.shared_tier->Stats()) counters[name] = value;
  }
  counters["compile_threads"] = compile_pool_.num_threads();
  counters["compiles_queued"] = compile_pool_.queued();
  counters["flights_in_progress"] = flights_.in_flight();
  compiler_->AddStats(&counters);
  return counters;
}

absl::StatusOr<v1::Manifest> CompileService::GetManifest(const v1::ManifestRequest& request) {
  stats_.requests_total.fetch_add(1, std::memory_order_relaxed);
  if (!IsSha256Hex(request.key())) {
    return absl::InvalidArgumentError("ManifestRequest.key must be 64 lowercase hex characters");
  }
  absl::StatusOr<v1::Manifest> manifest = store_->GetManifest(request.key());
  if (manifest.ok()) {
    stats_.manifest_reads.fetch_add(1, std::memory_order_relaxed);
  } else if (absl::IsNotFound(manifest.status())) {
    return absl::NotFoundError(
        absl::StrCat("the daemon's cache holds no manifest under key ", request.key()));
  }
  return manifest;
}

absl::Status CompileService::PutAotRecipe(const v1::AotRecipe& recipe) {
  stats_.requests_total.fetch_add(1, std::memory_order_relaxed);
  if (!options_.aot_recipes)
    return absl::FailedPreconditionError(
        "this daemon does not keep AOT recipes (--aot-recipes=false)");
  absl::Status stored = recipes_.Put(recipe);
  if (stored.ok()) stats_.aot_recipe_puts.fetch_add(1, std::memory_order_relaxed);
  return stored;
}

absl::StatusOr<v1::AotRecipe> CompileService::GetAotRecipe(const v1::AotRecipeRequest& request) {
  stats_.requests_total.fetch_add(1, std::memory_order_relaxed);
  if (!options_.aot_recipes)
    return absl::FailedPreconditionError(
        "this daemon does not keep AOT recipes (--aot-recipes=false)");
  absl::StatusOr<v1::AotRecipe> recipe = recipes_.Get(request.key());
  if (recipe.ok()) stats_.aot_recipe_hits.fetch_add(1, std::memory_order_relaxed);
  return recipe;
}

absl::StatusOr<v1::DynamicProfile> CompileService::PutDynamicProfile(
    const v1::DynamicProfile& profile) {
  stats_.requests_total.fetch_add(1, std::memory_order_relaxed);
  if (!options_.dynamic_profiles)
    return absl::FailedPreconditionError(
        "this daemon does not keep dynamic profiles (--dynamic-profiles=false)");
  absl::StatusOr<v1::DynamicProfile> merged =
      profiles_.Put(profile, absl::ToUnixMillis(absl::Now()));
  if (merged.ok()) stats_.dynamic_profile_puts.fetch_add(1, std::memory_order_relaxed);
  return merged;
}

absl::StatusOr<v1::DynamicProfile> CompileService::GetDynamicProfile(
    const v1::DynamicProfileRequest& request) {
  stats_.requests_total.fetch_add(1, std::memory_order_relaxed);
  if (!options_.dynamic_profiles)
    return absl::FailedPreconditionError(
        "this daemon does not keep dynamic profiles (--dynamic-profiles=false)");
  absl::StatusOr<v1::DynamicProfile> profile = profiles_.Get(request.job_id());
  if (profile.ok()) {
    stats_.dynamic_profile_hits.fetch_add(1, std::memory_order_relaxed);
  } else if (absl::IsNotFound(profile.status())) {
    stats_.dynamic_profile_misses.fetch_add(1, std::memory_order_relaxed);
  }
  return profile;
}

absl::StatusOr<v1::GemmTuneTable> CompileService::PutGemmTunes(const v1::GemmTuneTable& table) {
  stats_.requests_total.fetch_add(1, std::memory_order_relaxed);
  return gemm_tunes_.Put(table, absl::ToUnixMillis(absl::Now()));
}

absl::StatusOr<v1::GemmTuneTable> CompileService::GetGemmTunes(
    const v1::GemmTuneRequest& request) {
  stats_.requests_total.fetch_add(1, std::memory_order_relaxed);
  return gemm_tunes_.Get(request);
}

v1::CompileProgress CompileService::GetCompileProgress(const v1::CompileProgressRequest& request) {
  stats_.requests_total.fetch_add(1, std::memory_order_relaxed);
  if (request.progress_id().empty()) return v1::CompileProgress();
  return progress_.Get(request.progress_id());
}

absl::StatusOr<v1::JobResponse> CompileService::GetJob(const v1::JobRequest& request) {
  stats_.requests_total.fetch_add(1, std::memory_order_relaxed);
  if (request.job_id().empty()) {
    stats_.invalid_requests.fetch_add(1, std::memory_order_relaxed);
    return absl::InvalidArgumentError("JobRequest.job_id is empty");
  }
  absl::StatusOr<std::vector<v1::JobEntry>> entries = store_->GetJob(request.job_id());
  if (!entries.ok()) {
    spdlog::warn("GetJob job={}: {}", ForLog(request.job_id()), entries.status().ToString());
    return entries.status();
  }
  v1::JobResponse response;
  for (v1::JobEntry& entry : *entries) {
    if (request.with_components()) {
      // An evicted entry, or one made before components were recorded, has none: explain
      // skips it.
      absl::StatusOr<v1::Manifest> manifest = store_->GetManifest(entry.key());
      if (manifest.ok() && manifest->has_key_components())
        *entry.mutable_components() = std::move(*manifest->mutable_key_components());
    }
    *response.add_entries() = std::move(entry);
  }
  spdlog::info("GetJob job={} entries={}", ForLog(request.job_id()), response.entries_size());
  return response;
}

}  // namespace tccd::server

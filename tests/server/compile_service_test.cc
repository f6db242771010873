// CompileService against a fake compiler and an in-memory store: hit/miss/dedup
// accounting, the compile key's inputs, error pass-through, job records and
// artifact reads. No network, no LLVM; concurrency is made deterministic with
// the service's dedup sync point.
#include "server/compile_service.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "cache/store.h"

namespace tccd::server {
namespace {

// A Store in memory, honouring the contract in cache/store.h that the service
// relies on.
class FakeStore final : public cache::Store {
 public:
  absl::StatusOr<std::string> PutBlob(absl::string_view bytes,
                                      absl::string_view expected_digest) override {
    std::string digest = cache::Sha256Hex(bytes);
    if (!expected_digest.empty() && expected_digest != digest) {
      return absl::DataLossError("digest mismatch");
    }
    if (full) return absl::ResourceExhaustedError("disk full");
    absl::MutexLock lock(&mu_);
    blobs_[digest] = std::string(bytes);
    return digest;
  }
  absl::StatusOr<std::string> GetBlob(absl::string_view digest) override {
    absl::MutexLock lock(&mu_);
    auto it = blobs_.find(digest);
    if (it == blobs_.end()) return absl::NotFoundError("no blob");
    return it->second;
  }
  bool HasBlob(absl::string_view digest) override {
    absl::MutexLock lock(&mu_);
    return blobs_.contains(digest);
  }
  absl::Status PutManifest(absl::string_view key, const v1::Manifest& manifest) override {
    absl::MutexLock lock(&mu_);
    for (const v1::Artifact& artifact : manifest.artifacts()) {
      if (!blobs_.contains(artifact.digest())) return absl::FailedPreconditionError("blob");
    }
    manifests_[key] = manifest;
    return absl::OkStatus();
  }
  absl::StatusOr<v1::Manifest> GetManifest(absl::string_view key) override {
    absl::MutexLock lock(&mu_);
    auto it = manifests_.find(key);
    if (it == manifests_.end()) return absl::NotFoundError("no manifest");
    return it->second;
  }
  absl::Status RecordJobUse(absl::string_view job_id, absl::string_view key, bool compiled,
                            int64_t now_unix_ms) override {
    if (full) return absl::ResourceExhaustedError("disk full");
    absl::MutexLock lock(&mu_);
    v1::JobEntry& entry = jobs_[std::string(job_id)][std::string(key)];
    if (entry.uses() == 0) entry.set_first_used_unix_ms(now_unix_ms);
    entry.set_key(std::string(key));
    entry.set_last_used_unix_ms(now_unix_ms);
    entry.set_uses(entry.uses() + 1);
    entry.set_compiled_here(entry.compiled_here() || compiled);
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<v1::JobEntry>> GetJob(absl::string_view job_id) override {
    absl::MutexLock lock(&mu_);
    std::vector<v1::JobEntry> entries;
    for (const auto& [key, entry] : jobs_[std::string(job_id)]) entries.push_back(entry);
    return entries;
  }
  absl::StatusOr<v1::DynamicProfile> GetDynamicProfile(absl::string_view job_id) override {
    absl::MutexLock lock(&mu_);
    auto it = profiles_.find(std::string(job_id));
    if (it == profiles_.end()) return absl::NotFoundError("no profile");
    return it->second;
  }
  absl::Status PutDynamicProfile(absl::string_view job_id,
                                 const v1::DynamicProfile& profile) override {
    if (full) return absl::ResourceExhaustedError("disk full");
    absl::MutexLock lock(&mu_);
    profiles_[std::string(job_id)] = profile;
    return absl::OkStatus();
  }
  Usage GetUsage() override {
    absl::MutexLock lock(&mu_);
    Usage usage;
    usage.blobs = static_cast<int64_t>(blobs_.size());
    usage.manifests = static_cast<int64_t>(manifests_.size());
    for (const auto& [digest, bytes] : blobs_) usage.blob_bytes += bytes.size();
    return usage;
  }
  absl::Status Close() override { return absl::OkStatus(); }
  bool WritesStopped() override { return full.load(); }

  // Plays a full disk: writes fail with RESOURCE_EXHAUSTED, reads work.
  std::atomic<bool> full{false};

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::string> blobs_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, v1::Manifest> manifests_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::map<std::string, v1::JobEntry>> jobs_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, v1::DynamicProfile> profiles_ ABSL_GUARDED_BY(mu_);
};

// The canonical IR is the node targets; node targets also script failures:
//   "bad"        Prepare: INVALID_ARGUMENT     "symbolic"  Prepare:
//   UNIMPLEMENTED "fail"       Compile: INVALID_ARGUMENT     "throw" Compile
//   throws
class FakeCompiler final : public Compiler {
 public:
  absl::StatusOr<codegen::Prepared> Prepare(const codegen::CompileInput& input) override {
    codegen::Prepared prepared;
    for (const v1::Node& node : input.graph->nodes()) {
      if (node.target() == "bad") return absl::InvalidArgumentError("node 0: dangling ref");
      if (node.target() == "symbolic") return absl::UnimplementedError("symbolic shapes");
      absl::StrAppend(&prepared.canonical_ir, node.target(), ";");
    }
    prepared.target_key = absl::StrCat("cpu:", input.target->cpu_arch(), "/", input.mode);
    return prepared;
  }

  absl::StatusOr<codegen::CompileOutput> Compile(const codegen::Prepared& prepared) override {
    if (gate_) gate_();
    compiles_.fetch_add(1);
    if (prepared.canonical_ir == "fail;") return absl::InvalidArgumentError("cannot lower");
    if (prepared.canonical_ir == "throw;") throw std::runtime_error("compiler bug");
    codegen::CompileOutput output;
    output.plan.set_num_inputs(1);
    output.artifacts.push_back({.name = "kernels.so",
                                .kind = v1::CPU_SHARED_OBJECT,
                                .bytes = "ELF" + prepared.canonical_ir});
    output.artifacts.push_back({.name = "graph.txt", .kind = v1::TEXT, .bytes = ""});
    return output;
  }

  std::string Fingerprint() const override { return fingerprint; }

  // Enters the compile key, as the real compiler's build fingerprint does.
  std::string fingerprint = "fake-compiler-1";

  // Runs at the start of every Compile (on a compile thread): lets a test hold
  // compiles.
  void SetGate(std::function<void()> gate) { gate_ = std::move(gate); }
  int compiles() const { return compiles_.load(); }

 private:
  std::function<void()> gate_;
  std::atomic<int> compiles_{0};
};

v1::CompileRequest Request(std::vector<std::string> targets, std::string job = "job-1",
                           int rank = 0) {
  v1::CompileRequest request;
  for (const std::string& target : targets)
    request.mutable_graph()->add_nodes()->set_target(target);
  request.mutable_target()->set_device_type(v1::CPU);
  request.mutable_target()->set_cpu_arch("x86_64");
  request.set_job_id(std::move(job));
  request.set_rank(rank);
  request.set_graph_name("forward");
  return request;
}

struct Fixture {
  explicit Fixture(int compile_threads = 2,
                   std::function<void(absl::string_view)> on_dedup_wait = nullptr) {
    auto owned = std::make_unique<FakeCompiler>();
    compiler = owned.get();
    service = std::make_unique<CompileService>(
        CompileServiceOptions{.compile_threads = compile_threads,
                              .cache_dir = "/fake",
                              .on_dedup_wait_for_testing = std::move(on_dedup_wait)},
        &store, std::move(owned));
  }
  int64_t Counter(const std::string& name) { return service->GetStats().counters().at(name); }

  FakeStore store;
  FakeCompiler* compiler;
  std::unique_ptr<CompileService> service;
};

TEST_CASE("CompileService: a miss compiles and stores, the same graph then hits") {
  Fixture f;
  absl::StatusOr<v1::CompileResponse> first = f.service->CompileAndWait(Request({"aten::add"}));
  REQUIRE(first.ok());
  CHECK_FALSE(first->cache_hit());
  CHECK_FALSE(first->deduplicated());
  const v1::Manifest& manifest = first->manifest();
  CHECK(manifest.key().size() == 64);
  CHECK(manifest.canonical_ir() == "aten::add;");
  CHECK(manifest.plan().num_inputs() == 1);
  CHECK_FALSE(manifest.tccd_version().empty());
  CHECK(manifest.created_unix_ms() > 0);
  REQUIRE(manifest.artifacts_size() == 2);
  CHECK(manifest.artifacts(0).name() == "kernels.so");
  CHECK(manifest.artifacts(0).kind() == v1::CPU_SHARED_OBJECT);
  CHECK(manifest.artifacts(0).size() == 13);
  CHECK(manifest.artifacts(0).digest() == cache::Sha256Hex("ELFaten::add;"));
  CHECK(manifest.artifacts(1).size() == 0);

  // Another rank of another job: same key, served from the cache.
  absl::StatusOr<v1::CompileResponse> second =
      f.service->CompileAndWait(Request({"aten::add"}, "job-2", 7));
  REQUIRE(second.ok());
  CHECK(second->cache_hit());
  CHECK(second->compile_ms() == 0);
  CHECK(second->manifest().key() == manifest.key());

  CHECK(f.compiler->compiles() == 1);
  const v1::StatsResponse stats = f.service->GetStats();
  const auto& counters = stats.counters();
  CHECK(counters.at("requests_total") == 3);  // two compiles and this GetStats
  CHECK(counters.at("compiles") == 1);
  CHECK(counters.at("cache_misses") == 1);
  CHECK(counters.at("cache_hits") == 1);
  CHECK(counters.at("dedup_waits") == 0);
  CHECK(counters.at("store_blobs") == 2);
  CHECK(counters.at("store_manifests") == 1);
  CHECK(stats.cache_dir() == "/fake");
  CHECK_FALSE(stats.tccd_version().empty());
}

TEST_CASE(
    "CompileService: while the cache cannot write, a miss is "
    "RESOURCE_EXHAUSTED without compiling and hits are still served") {
  Fixture f;
  REQUIRE(f.service->CompileAndWait(Request({"aten::add"})).ok());
  f.store.full = true;
  absl::StatusOr<v1::CompileResponse> hit =
      f.service->CompileAndWait(Request({"aten::add"}, "job-2"));
  REQUIRE(hit.ok());
  CHECK(hit->cache_hit());
  absl::StatusOr<v1::CompileResponse> miss = f.service->CompileAndWait(Request({"aten::mul"}));
  REQUIRE(miss.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(absl::StrContains(miss.status().message(), "cannot be written now"));
  CHECK(f.compiler->compiles() == 1);
  CHECK(f.Counter("store_writes_stopped") == 1);
  CHECK(f.Counter("store_full_refusals") == 1);

  f.store.full = false;  // space is back: compiles again, no restart
  absl::StatusOr<v1::CompileResponse> later = f.service->CompileAndWait(Request({"aten::mul"}));
  REQUIRE(later.ok());
  CHECK_FALSE(later->cache_hit());
  CHECK(f.Counter("store_writes_stopped") == 0);
}

TEST_CASE(
    "CompileService: options and mode enter the key; an empty mode means "
    "default") {
  Fixture f;
  v1::CompileRequest plain = Request({"aten::mul"});
  v1::CompileRequest default_mode = plain;
  default_mode.mutable_options()->set_mode("default");
  v1::CompileRequest autotune = plain;
  autotune.mutable_options()->set_mode("max-autotune");
  v1::CompileRequest extra = plain;
  (*extra.mutable_options()->mutable_extra())["fuse"] = "0";

  std::string keys[4];
  int i = 0;
  for (const v1::CompileRequest* request : {&plain, &default_mode, &autotune, &extra}) {
    absl::StatusOr<v1::CompileResponse> response = f.service->CompileAndWait(*request);
    REQUIRE(response.ok());
    keys[i++] = response->manifest().key();
  }
  CHECK(keys[0] == keys[1]);
  CHECK(keys[0] != keys[2]);
  CHECK(keys[0] != keys[3]);
  CHECK(keys[2] != keys[3]);
  CHECK(f.compiler->compiles() == 3);
}

TEST_CASE("CompileService: N identical concurrent requests compile once") {
  constexpr int kRanks = 16;
  absl::Mutex mu;
  int waiting = 0;
  Fixture f(/*compile_threads=*/4, [&](absl::string_view) {
    absl::MutexLock lock(&mu);
    ++waiting;
  });
  // Hold the one compile until every other rank is queued behind it.
  f.compiler->SetGate([&] {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](int* w) { return *w == kRanks - 1; }, &waiting));
  });

  std::vector<v1::CompileRequest> requests;
  for (int rank = 0; rank < kRanks; ++rank)
    requests.push_back(Request({"aten::relu"}, "job", rank));
  std::vector<absl::StatusOr<v1::CompileResponse>> responses(kRanks);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kRanks; ++rank) {
    threads.emplace_back(
        [&, rank] { responses[rank] = f.service->CompileAndWait(requests[rank]); });
  }
  for (std::thread& t : threads) t.join();

  int compiled = 0, deduplicated = 0;
  for (const auto& response : responses) {
    REQUIRE(response.ok());
    CHECK_FALSE(response->cache_hit());
    (response->deduplicated() ? deduplicated : compiled)++;
    CHECK(response->manifest().key() == responses[0]->manifest().key());
  }
  CHECK(compiled == 1);
  CHECK(deduplicated == kRanks - 1);
  CHECK(f.compiler->compiles() == 1);
  CHECK(f.Counter("compiles") == 1);
  CHECK(f.Counter("cache_misses") == 1);
  CHECK(f.Counter("dedup_waits") == kRanks - 1);
  CHECK(f.Counter("flights_in_progress") == 0);

  v1::JobRequest job;
  job.set_job_id("job");
  absl::StatusOr<v1::JobResponse> entries = f.service->GetJob(job);
  REQUIRE(entries.ok());
  REQUIRE(entries->entries_size() == 1);
  CHECK(entries->entries(0).uses() == kRanks);
  CHECK(entries->entries(0).compiled_here());
}

TEST_CASE("CompileService: user errors pass through with their code and message") {
  Fixture f;
  v1::CompileRequest no_graph = Request({});
  no_graph.clear_graph();
  absl::StatusOr<v1::CompileResponse> response = f.service->CompileAndWait(no_graph);
  CHECK(response.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(response.status().message()), Catch::Contains("graph"));

  response = f.service->CompileAndWait(Request({"bad"}));
  CHECK(response.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(response.status().message() == "node 0: dangling ref");

  response = f.service->CompileAndWait(Request({"symbolic"}));
  CHECK(response.status().code() == absl::StatusCode::kUnimplemented);
  CHECK(response.status().message() == "symbolic shapes");

  v1::CompileRequest long_job = Request({"aten::add"}, std::string(1000, 'j'));
  CHECK(f.service->CompileAndWait(long_job).status().code() == absl::StatusCode::kInvalidArgument);

  CHECK(f.Counter("invalid_requests") == 4);
  CHECK(f.compiler->compiles() == 0);
}

TEST_CASE(
    "CompileService: compile failures and exceptions answer the request, not "
    "crash") {
  Fixture f;
  absl::StatusOr<v1::CompileResponse> response = f.service->CompileAndWait(Request({"fail"}));
  CHECK(response.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(response.status().message() == "cannot lower");

  response = f.service->CompileAndWait(Request({"throw"}));
  CHECK(response.status().code() == absl::StatusCode::kInternal);
  CHECK_THAT(std::string(response.status().message()), Catch::Contains("compiler bug"));

  // Failures are not cached: the next request compiles again.
  response = f.service->CompileAndWait(Request({"fail"}));
  CHECK(response.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(f.Counter("compile_errors") == 3);
  CHECK(f.Counter("compiles") == 3);

  // And the service still works.
  CHECK(f.service->CompileAndWait(Request({"aten::add"})).ok());
}

TEST_CASE(
    "CompileService: ReadArtifact validates, misses with the digest, serves "
    "bytes") {
  Fixture f;
  absl::StatusOr<v1::CompileResponse> compiled = f.service->CompileAndWait(Request({"aten::add"}));
  REQUIRE(compiled.ok());
  const std::string digest = compiled->manifest().artifacts(0).digest();

  absl::StatusOr<std::string> bytes = f.service->ReadArtifact(digest);
  REQUIRE(bytes.ok());
  CHECK(*bytes == "ELFaten::add;");

  CHECK(f.service->ReadArtifact("ABC").status().code() == absl::StatusCode::kInvalidArgument);
  std::string upper = digest;
  upper[0] = 'A';
  CHECK(f.service->ReadArtifact(upper).status().code() == absl::StatusCode::kInvalidArgument);

  const std::string unknown(64, '0');
  absl::StatusOr<std::string> missing = f.service->ReadArtifact(unknown);
  CHECK(missing.status().code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(missing.status().message()), Catch::Contains(unknown));

  CHECK(f.Counter("artifacts_served") == 1);
  CHECK(f.Counter("artifact_bytes_served") == 13);
}

TEST_CASE(
    "CompileService: a different compiler build never serves another's "
    "artifacts") {
  Fixture f;
  absl::StatusOr<v1::CompileResponse> first = f.service->CompileAndWait(Request({"aten::add"}));
  REQUIRE(first.ok());
  f.compiler->fingerprint = "fake-compiler-2";  // a rebuilt daemon, same store
  absl::StatusOr<v1::CompileResponse> second = f.service->CompileAndWait(Request({"aten::add"}));
  REQUIRE(second.ok());
  CHECK_FALSE(second->cache_hit());
  CHECK(second->manifest().key() != first->manifest().key());
  CHECK(f.compiler->compiles() == 2);
}

TEST_CASE("CompileService: GetJob records uses and who compiled") {
  Fixture f;
  REQUIRE(f.service->CompileAndWait(Request({"aten::add"}, "train-1")).ok());
  REQUIRE(f.service->CompileAndWait(Request({"aten::add"}, "train-2")).ok());
  REQUIRE(f.service->CompileAndWait(Request({"aten::add"}, "")).ok());  // no job: not recorded

  v1::JobRequest request;
  request.set_job_id("train-1");
  absl::StatusOr<v1::JobResponse> first = f.service->GetJob(request);
  REQUIRE(first.ok());
  REQUIRE(first->entries_size() == 1);
  CHECK(first->entries(0).compiled_here());
  request.set_job_id("train-2");
  absl::StatusOr<v1::JobResponse> second = f.service->GetJob(request);
  REQUIRE(second.ok());
  REQUIRE(second->entries_size() == 1);
  CHECK_FALSE(second->entries(0).compiled_here());

  request.set_job_id("");
  CHECK(f.service->GetJob(request).status().code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tccd::server

// Metrics; see metrics.h.
#include "server/metrics.h"

#include <exception>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "prometheus/collectable.h"
#include "prometheus/counter.h"
#include "prometheus/exposer.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"

namespace tccd::server {
namespace {

// How one GetStats counter appears in Prometheus. Counters sharing a `name` become one family
// told apart by the label; a counter without an entry here is the gauge tccd_<counter>.
struct CounterExport {
  const char* counter;  // GetStats name (stats.cc, eviction_stats.h, SharedTier::Stats)
  const char* name;     // Prometheus family
  prometheus::MetricType type;
  const char* label_name;  // nullptr: no label
  const char* label_value;
  const char* help;
};

constexpr prometheus::MetricType kCounter = prometheus::MetricType::Counter;
constexpr prometheus::MetricType kGauge = prometheus::MetricType::Gauge;

// Order is the order of the families in a scrape.
constexpr CounterExport kCounterExports[] = {
    {"cache_hits", "tccd_cache_hits_total", kCounter, "tier", "local",
     "Compile requests answered from the cache (tier=local: all of them, including those the "
     "shared tier filled; tier=shared: entries fetched from the shared tier)."},
    {"shared_hits", "tccd_cache_hits_total", kCounter, "tier", "shared", nullptr},
    {"cache_misses", "tccd_cache_misses_total", kCounter, "tier", "local",
     "Compile requests that led a compile (tier=local), or shared-tier lookups that found "
     "nothing (tier=shared)."},
    {"shared_misses", "tccd_cache_misses_total", kCounter, "tier", "shared", nullptr},
    {"dedup_waits", "tccd_single_flight_waits_total", kCounter, "scope", "daemon",
     "Requests that waited for an identical compile instead of compiling: in this daemon "
     "(scope=daemon), or for another daemon's compile lease in the shared tier "
     "(scope=cluster)."},
    {"shared_lease_waits", "tccd_single_flight_waits_total", kCounter, "scope", "cluster",
     nullptr},
    {"compiles", "tccd_compiles_total", kCounter, nullptr, nullptr, "Codegen runs started."},
    {"compile_errors", "tccd_compile_errors_total", kCounter, nullptr, nullptr,
     "Codegen runs (or storing their output) that failed."},
    {"compiles_running", "tccd_compiles_running", kGauge, nullptr, nullptr,
     "Codegen runs in progress."},
    {"compiles_queued", "tccd_compiles_queued", kGauge, nullptr, nullptr,
     "Compiles waiting for a compile thread."},
    {"artifact_bytes_served", "tccd_served_bytes_total", kCounter, nullptr, nullptr,
     "Artifact bytes sent to clients (FetchArtifact)."},
    {"artifacts_served", "tccd_artifacts_served_total", kCounter, nullptr, nullptr,
     "Artifacts sent to clients (FetchArtifact)."},
    {"shared_bytes_fetched", "tccd_shared_fetched_bytes_total", kCounter, nullptr, nullptr,
     "Artifact bytes fetched from the shared tier."},
    {"store_blob_bytes", "tccd_store_blob_bytes", kGauge, nullptr, nullptr,
     "Bytes of artifact blobs in the local cache."},
    {"store_bytes", "tccd_store_bytes", kGauge, nullptr, nullptr,
     "Logical bytes the --max-cache-mb cap applies to (0 without a cap)."},
    {"store_max_bytes", "tccd_store_max_bytes", kGauge, nullptr, nullptr,
     "The --max-cache-mb cap in bytes; 0: none."},
    {"store_manifests", "tccd_store_manifests", kGauge, nullptr, nullptr,
     "Entries (manifests) in the local cache."},
    {"store_blobs", "tccd_store_blobs", kGauge, nullptr, nullptr,
     "Artifact blobs in the local cache."},
    {"evicted_manifests", "tccd_evictions_total", kCounter, "kind", "manifest",
     "Cache entries (kind=manifest) and artifact blobs (kind=blob) evicted under "
     "--max-cache-mb."},
    {"evicted_blobs", "tccd_evictions_total", kCounter, "kind", "blob", nullptr},
    {"evicted_bytes", "tccd_evicted_bytes_total", kCounter, nullptr, nullptr,
     "Logical bytes freed by evictions."},
    {"evictions_blocked", "tccd_evictions_blocked_total", kCounter, nullptr, nullptr,
     "Eviction runs that ended over the cap (everything left too young)."},
};

prometheus::ClientMetric Value(prometheus::MetricType type, double value) {
  prometheus::ClientMetric metric;
  if (type == kCounter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  return metric;
}

}  // namespace

// Reads the counter source at each scrape and turns it into families.
class Metrics::StatsCollector final : public prometheus::Collectable {
 public:
  void SetSource(CounterSource source) {
    source_ = std::move(source);
  }

  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<prometheus::MetricFamily> families;
    if (!source_) return families;
    std::map<std::string, int64_t> counters;
    try {
      counters = source_();
    } catch (const std::exception&) {
      return families;  // a scrape without these beats a dead HTTP thread
    }
    absl::flat_hash_map<std::string, size_t> family_index;
    for (const CounterExport& entry : kCounterExports) {
      auto found = counters.find(entry.counter);
      if (found == counters.end()) continue;  // e.g. shared_* without --shared-cache
      auto [index, inserted] = family_index.try_emplace(entry.name, families.size());
      if (inserted) {
        prometheus::MetricFamily family;
        family.name = entry.name;
        family.help = entry.help != nullptr ? entry.help : "";
        family.type = entry.type;
        families.push_back(std::move(family));
      }
      prometheus::ClientMetric metric =
          Value(entry.type, static_cast<double>(found->second));
      if (entry.label_name != nullptr) {
        metric.label.push_back({entry.label_name, entry.label_value});
      }
      families[index->second].metric.push_back(std::move(metric));
      counters.erase(found);
    }
    // The rest as they are named in GetStats, so that a new counter is scraped without an
    // edit here.
    for (const auto& [name, value] : counters) {
      prometheus::MetricFamily family;
      family.name = absl::StrCat("tccd_", name);
      family.help = absl::StrCat("GetStats counter ", name, ".");
      family.type = kGauge;
      family.metric.push_back(Value(kGauge, static_cast<double>(value)));
      families.push_back(std::move(family));
    }
    return families;
  }

 private:
  CounterSource source_;  // set once, before Serve
};

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      stats_(std::make_shared<StatsCollector>()) {
  requests_ = &prometheus::BuildCounter()
                   .Name("tccd_requests_total")
                   .Help("Finished RPCs by gRPC method and status code.")
                   .Register(*registry_);
  // Compiles run from milliseconds (a small graph, kernels reused) to minutes.
  compile_seconds_ = &prometheus::BuildHistogram()
                          .Name("tccd_compile_seconds")
                          .Help("Wall time of codegen runs that produced an entry.")
                          .Register(*registry_)
                          .Add({}, prometheus::Histogram::BucketBoundaries{
                                       0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
                                       10, 30, 60, 120, 300, 600});
  seconds_saved_ =
      &prometheus::BuildCounter()
           .Name("tccd_compile_seconds_saved_total")
           .Help("Compile seconds that cache hits saved: for each hit, the compile time of the "
                 "compile that made the entry (0 for entries older than this metric).")
           .Register(*registry_)
           .Add({});
}

Metrics::~Metrics() = default;

void Metrics::SetCounterSource(CounterSource source) { stats_->SetSource(std::move(source)); }

void Metrics::RecordRequest(absl::string_view method, absl::StatusCode code) {
  requests_
      ->Add({{"method", std::string(method)},
             {"code", absl::StatusCodeToString(code)}})
      .Increment();
}

void Metrics::RecordCompile(double seconds) { compile_seconds_->Observe(seconds); }

void Metrics::RecordHitSaved(double seconds) {
  if (seconds > 0) seconds_saved_->Increment(seconds);
}

absl::StatusOr<int> Metrics::Serve(const std::string& host_port) {
  try {
    // One thread: a scrape every few seconds needs no more, and each costs one GetStats.
    auto exposer = std::make_unique<prometheus::Exposer>(host_port, /*num_threads=*/1);
    exposer->RegisterCollectable(registry_);
    exposer->RegisterCollectable(stats_);
    const std::vector<int> ports = exposer->GetListeningPorts();
    if (ports.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("--metrics-listen ", host_port, ": no port bound"));
    }
    exposer_ = std::move(exposer);
    return ports.front();
  } catch (const std::exception& e) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot serve metrics on ", host_port, " (--metrics-listen): ", e.what()));
  }
}

void Metrics::StopServing() { exposer_.reset(); }

std::string Metrics::RenderForTesting() const {
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  for (prometheus::MetricFamily& family : stats_->Collect()) families.push_back(std::move(family));
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace tccd::server

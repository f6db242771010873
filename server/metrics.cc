// Metrics; see metrics.h.
#include "server/metrics.h"

#include <array>
#include <exception>
#include <utility>
#include <vector>

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

// The Prometheus families fed by GetStats counters, one row each, in scrape order. A family is
// one unlabelled series, or one series per value of its label, each read from one counter
// (GetStats names: stats.cc, eviction_stats.h, SharedTier::Stats). A counter in no row is
// exported as the gauge tccd_<counter>, so a new counter is scraped without an edit here.
constexpr prometheus::MetricType kCounter = prometheus::MetricType::Counter;
constexpr prometheus::MetricType kGauge = prometheus::MetricType::Gauge;

struct Series {
  const char* label_value;  // nullptr in an unlabelled family
  const char* counter;
};

struct FamilyExport {
  const char* name;
  prometheus::MetricType type;
  const char* label;             // nullptr: one unlabelled series
  std::array<Series, 2> series;  // unused slots stay {nullptr, nullptr}
  const char* help;
};

constexpr FamilyExport kFamilies[] = {
    {"tccd_cache_hits_total",
     kCounter,
     "tier",
     {{{"local", "cache_hits"}, {"shared", "shared_hits"}}},
     "Compile requests answered from the cache (tier=local: all of them, including those the "
     "shared tier filled; tier=shared: entries fetched from the shared tier)."},
    {"tccd_cache_misses_total",
     kCounter,
     "tier",
     {{{"local", "cache_misses"}, {"shared", "shared_misses"}}},
     "Compile requests that led a compile (tier=local), or shared-tier lookups that found "
     "nothing (tier=shared)."},
    {"tccd_single_flight_waits_total",
     kCounter,
     "scope",
     {{{"daemon", "dedup_waits"}, {"cluster", "shared_lease_waits"}}},
     "Requests that waited for an identical compile instead of compiling: in this daemon "
     "(scope=daemon), or for another daemon's compile lease in the shared tier "
     "(scope=cluster)."},
    {"tccd_compiles_total", kCounter, nullptr, {{{nullptr, "compiles"}}}, "Codegen runs started."},
    {"tccd_compile_errors_total",
     kCounter,
     nullptr,
     {{{nullptr, "compile_errors"}}},
     "Codegen runs (or storing their output) that failed."},
    {"tccd_compiles_running",
     kGauge,
     nullptr,
     {{{nullptr, "compiles_running"}}},
     "Codegen runs in progress."},
    {"tccd_compiles_queued",
     kGauge,
     nullptr,
     {{{nullptr, "compiles_queued"}}},
     "Compiles waiting for a compile thread."},
    {"tccd_served_bytes_total",
     kCounter,
     nullptr,
     {{{nullptr, "artifact_bytes_served"}}},
     "Artifact bytes sent to clients (FetchArtifact)."},
    {"tccd_artifacts_served_total",
     kCounter,
     nullptr,
     {{{nullptr, "artifacts_served"}}},
     "Artifacts sent to clients (FetchArtifact)."},
    {"tccd_shared_fetched_bytes_total",
     kCounter,
     nullptr,
     {{{nullptr, "shared_bytes_fetched"}}},
     "Artifact bytes fetched from the shared tier."},
    {"tccd_store_blob_bytes",
     kGauge,
     nullptr,
     {{{nullptr, "store_blob_bytes"}}},
     "Bytes of artifact blobs in the local cache."},
    {"tccd_store_bytes",
     kGauge,
     nullptr,
     {{{nullptr, "store_bytes"}}},
     "Logical bytes the --max-cache-mb cap applies to (0 without a cap)."},
    {"tccd_store_max_bytes",
     kGauge,
     nullptr,
     {{{nullptr, "store_max_bytes"}}},
     "The --max-cache-mb cap in bytes; 0: none."},
    {"tccd_store_manifests",
     kGauge,
     nullptr,
     {{{nullptr, "store_manifests"}}},
     "Entries (manifests) in the local cache."},
    {"tccd_store_blobs",
     kGauge,
     nullptr,
     {{{nullptr, "store_blobs"}}},
     "Artifact blobs in the local cache."},
    {"tccd_evictions_total",
     kCounter,
     "kind",
     {{{"manifest", "evicted_manifests"}, {"blob", "evicted_blobs"}}},
     "Cache entries (kind=manifest) and artifact blobs (kind=blob) evicted under "
     "--max-cache-mb."},
    {"tccd_evicted_bytes_total",
     kCounter,
     nullptr,
     {{{nullptr, "evicted_bytes"}}},
     "Logical bytes freed by evictions."},
    {"tccd_evictions_blocked_total",
     kCounter,
     nullptr,
     {{{nullptr, "evictions_blocked"}}},
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
  void SetSource(CounterSource source) { source_ = std::move(source); }

  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<prometheus::MetricFamily> families;
    if (!source_) return families;
    std::map<std::string, int64_t> counters;
    try {
      counters = source_();
    } catch (const std::exception&) {
      return families;  // a scrape without these beats a dead HTTP thread
    }
    for (const FamilyExport& row : kFamilies) {
      prometheus::MetricFamily family;
      family.name = row.name;
      family.help = row.help;
      family.type = row.type;
      for (const Series& series : row.series) {
        if (series.counter == nullptr) continue;
        auto found = counters.find(series.counter);
        if (found == counters.end()) continue;  // e.g. shared_* without --shared-cache
        prometheus::ClientMetric metric = Value(row.type, static_cast<double>(found->second));
        if (row.label != nullptr) metric.label.push_back({row.label, series.label_value});
        family.metric.push_back(std::move(metric));
        counters.erase(found);
      }
      if (!family.metric.empty()) families.push_back(std::move(family));
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
  compile_seconds_ =
      &prometheus::BuildHistogram()
           .Name("tccd_compile_seconds")
           .Help("Wall time of codegen runs that produced an entry.")
           .Register(*registry_)
           .Add({}, prometheus::Histogram::BucketBoundaries{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                                            2.5, 5, 10, 30, 60, 120, 300, 600});
  seconds_saved_ =
      &prometheus::BuildCounter()
           .Name("tccd_compile_seconds_saved_total")
           .Help(
               "Compile seconds that cache hits saved: for each hit, the compile time of the "
               "compile that made the entry (0 for entries older than this metric).")
           .Register(*registry_)
           .Add({});
}

Metrics::~Metrics() = default;

void Metrics::SetCounterSource(CounterSource source) { stats_->SetSource(std::move(source)); }

void Metrics::RecordRequest(absl::string_view method, absl::StatusCode code) {
  requests_->Add({{"method", std::string(method)}, {"code", absl::StatusCodeToString(code)}})
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
    return absl::FailedPreconditionError(
        absl::StrCat("cannot serve metrics on ", host_port, " (--metrics-listen): ", e.what()));
  }
}

void Metrics::StopServing() { exposer_.reset(); }

std::string Metrics::RenderForTesting() const {
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  for (prometheus::MetricFamily& family : stats_->Collect()) families.push_back(std::move(family));
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace tccd::server

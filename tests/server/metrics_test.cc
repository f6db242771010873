// Metrics: the families a scrape shows, from the counter source and from what was recorded.
#include "server/metrics.h"

#include <catch2/catch.hpp>
#include <string>

namespace tccd::server {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST_CASE("GetStats counters are exported under their Prometheus names, the rest as gauges") {
  Metrics metrics;
  metrics.SetCounterSource([] {
    return std::map<std::string, int64_t>{{"cache_hits", 7},       {"shared_hits", 2},
                                          {"cache_misses", 3},     {"evicted_manifests", 4},
                                          {"evicted_blobs", 5},    {"artifact_bytes_served", 99},
                                          {"some_new_counter", 11}};
  });
  const std::string text = metrics.RenderForTesting();
  CHECK(Has(text, "# TYPE tccd_cache_hits_total counter"));
  CHECK(Has(text, "tccd_cache_hits_total{tier=\"local\"} 7"));
  CHECK(Has(text, "tccd_cache_hits_total{tier=\"shared\"} 2"));
  CHECK(Has(text, "tccd_cache_misses_total{tier=\"local\"} 3"));
  CHECK(Has(text, "tccd_evictions_total{kind=\"manifest\"} 4"));
  CHECK(Has(text, "tccd_evictions_total{kind=\"blob\"} 5"));
  CHECK(Has(text, "tccd_served_bytes_total 99"));
  CHECK(Has(text, "# TYPE tccd_some_new_counter gauge"));
  CHECK(Has(text, "tccd_some_new_counter 11"));
  // A counter the source does not report (no shared tier) is left out, not shown as 0.
  CHECK(text.find("tier=\"shared\"} 0") == std::string::npos);
}

TEST_CASE("requests, compile times and saved seconds are recorded as they happen") {
  Metrics metrics;
  metrics.RecordRequest("/tccd.v1.Tccd/Compile", absl::StatusCode::kOk);
  metrics.RecordRequest("/tccd.v1.Tccd/Compile", absl::StatusCode::kOk);
  metrics.RecordRequest("/tccd.v1.Tccd/Compile", absl::StatusCode::kUnauthenticated);
  metrics.RecordCompile(0.2);
  metrics.RecordCompile(42);
  metrics.RecordHitSaved(1.5);
  metrics.RecordHitSaved(0);  // an entry without a recorded compile time
  const std::string text = metrics.RenderForTesting();
  CHECK(Has(text, "tccd_requests_total{code=\"OK\",method=\"/tccd.v1.Tccd/Compile\"} 2"));
  CHECK(Has(text,
            "tccd_requests_total{code=\"UNAUTHENTICATED\",method=\"/tccd.v1.Tccd/Compile\"} 1"));
  CHECK(Has(text, "tccd_compile_seconds_count 2"));
  CHECK(Has(text, "tccd_compile_seconds_bucket{le=\"0.25\"} 1"));
  CHECK(Has(text, "tccd_compile_seconds_bucket{le=\"60\"} 2"));
  CHECK(Has(text, "tccd_compile_seconds_saved_total 1.5"));
}

TEST_CASE("Serve binds port 0 to a free port and refuses an address it cannot bind") {
  Metrics metrics;
  metrics.SetCounterSource([] { return std::map<std::string, int64_t>{}; });
  absl::StatusOr<int> port = metrics.Serve("127.0.0.1:0");
  REQUIRE(port.ok());
  CHECK(*port > 0);
  Metrics second;
  absl::StatusOr<int> taken = second.Serve("127.0.0.1:" + std::to_string(*port));
  CHECK(absl::IsFailedPrecondition(taken.status()));
  metrics.StopServing();
  metrics.StopServing();  // idempotent
}

}  // namespace
}  // namespace tccd::server

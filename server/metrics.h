// Metrics: tccd's Prometheus metrics (prometheus-cpp), served as text at /metrics by
// --metrics-listen HOST:PORT.
//
// Two sources, so that nothing is counted twice:
//   - the daemon's existing counters (ServerStats, the store's usage and eviction counters,
//     the shared tier's counters: everything GetStats reports) are read at each scrape
//     through a counter source and exported under Prometheus names (kFamilies in
//     metrics.cc; a counter without an entry there is exported as the gauge tccd_<name>);
//   - what GetStats has no counter for is recorded here as it happens: requests by gRPC
//     method and status code (a server interceptor, grpc_server.cc), the compile-time
//     histogram, and the compile seconds that cache hits saved (each manifest carries the
//     compile time of the compile that made it).
//
// Thread-safety: every method may be called concurrently from any thread; the counter source
// runs on the HTTP server's threads, once per scrape.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace prometheus {
class Counter;
class Exposer;
class Histogram;
class Registry;
template <typename T>
class Family;
}  // namespace prometheus

namespace tccd::server {

class Metrics {
 public:
  // name -> value of every counter GetStats reports; read at each scrape.
  using CounterSource = std::function<std::map<std::string, int64_t>()>;

  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // Must be set before Serve; `source` must stay callable until the Metrics is destroyed.
  void SetCounterSource(CounterSource source);

  // One finished RPC: `method` as gRPC names it ("/tccd.v1.Tccd/Compile"), `code` the
  // canonical status code it was answered with.
  void RecordRequest(absl::string_view method, absl::StatusCode code);
  // One codegen run that produced a manifest, and its wall time.
  void RecordCompile(double seconds);
  // A cache hit (local or shared tier) whose entry took `seconds` to compile.
  void RecordHitSaved(double seconds);

  // Starts the HTTP server on `host_port` ("127.0.0.1:9464"; port 0 picks a free one) and
  // returns the port bound. FAILED_PRECONDITION when it cannot listen there.
  absl::StatusOr<int> Serve(const std::string& host_port);
  // Stops the HTTP server (waiting for a scrape in progress); after it the counter source is
  // never called again. Call it before what the source reads goes away. Idempotent.
  void StopServing();

  // The metrics as Prometheus text, as a scrape would see them. For tests.
  std::string RenderForTesting() const;

 private:
  class StatsCollector;

  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<StatsCollector> stats_;
  prometheus::Family<prometheus::Counter>* requests_;
  prometheus::Histogram* compile_seconds_;
  prometheus::Counter* seconds_saved_;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace tccd::server

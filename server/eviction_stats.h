// The cache's eviction counters in GetStats (cache::Store::Usage, with --max-cache-mb):
//   store_bytes              logical bytes stored (artifacts, manifests, keys), what the cap
//                            applies to
//   store_max_bytes          the cap; 0 without --max-cache-mb (then the others are 0 too)
//   evicted_manifests        entries evicted since the daemon started
//   evicted_blobs            artifact blobs evicted with them (or as orphans)
//   evicted_bytes            logical bytes freed by evictions
//   evictions_blocked        eviction runs that ended over the cap: everything left was younger
//                            than --eviction-min-age-s or still being written
// Kept out of compile_service.cc so that the counter list has one home.
#pragma once

#include <cstdint>
#include <string>

#include "cache/store.h"

namespace tccd::server {

// `Counters`: any string -> int64_t map (std::map for Counters(), protobuf's Map elsewhere).
template <typename Counters>
void AddEvictionCounters(const cache::Store::Usage& usage, Counters& counters) {
  counters["store_bytes"] = usage.logical_bytes;
  counters["store_max_bytes"] = usage.max_bytes;
  counters["evicted_manifests"] = usage.evicted_manifests;
  counters["evicted_blobs"] = usage.evicted_blobs;
  counters["evicted_bytes"] = usage.evicted_bytes;
  counters["evictions_blocked"] = usage.evictions_blocked;
}

}  // namespace tccd::server

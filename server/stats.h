// ServerStats: the daemon's counters, reported by GetStats.
//
// Compile outcomes are disjoint: every Compile request that got as far as a
// cache lookup counts once in exactly one of cache_hits, cache_misses (it led a
// compile) or dedup_waits (it waited for another request's identical compile).
// `compiles` counts codegen runs, so for N identical concurrent requests on a
// cold cache: compiles = 1, cache_misses = 1, dedup_waits = N - 1.
//
// Thread-safety: counters are atomics, updated lock-free from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>

namespace tccd::server {

struct ServerStats {
  std::atomic<int64_t> requests_total{0};    // every RPC, all methods
  std::atomic<int64_t> compiles{0};          // codegen runs started
  std::atomic<int64_t> compile_errors{0};    // codegen runs (or storing their output) failed
  std::atomic<int64_t> compiles_running{0};  // gauge: codegen runs in progress
  std::atomic<int64_t> cache_hits{0};
  std::atomic<int64_t> cache_misses{0};
  std::atomic<int64_t> dedup_waits{0};
  std::atomic<int64_t> invalid_requests{0};  // rejected before any cache lookup or fetch
  std::atomic<int64_t> internal_errors{0};   // failures that are tccd's fault (store, bugs)
  std::atomic<int64_t> artifacts_served{0};  // successful FetchArtifact lookups
  std::atomic<int64_t> artifact_bytes_served{0};
  // Misses answered RESOURCE_EXHAUSTED without compiling: the cache could not
  // store the result (full or failing file system).
  std::atomic<int64_t> store_full_refusals{0};
  // Kernel-level content addressing: distinct kernels compiled, and distinct kernels whose
  // objects came from the kernel store, summed over compiles (codegen/kernel/kernel_cache.h).
  std::atomic<int64_t> kernels_compiled{0};
  std::atomic<int64_t> kernels_reused{0};
  // Kernel objects that could not be stored (the graph's compile still succeeds).
  std::atomic<int64_t> kernel_store_errors{0};
  // GetManifest calls answered with a manifest (the ahead-of-time flow's loads).
  std::atomic<int64_t> manifest_reads{0};
  // AOT recipes stored (new or already there) and served (aot_recipe_store.h).
  std::atomic<int64_t> aot_recipe_puts{0};
  std::atomic<int64_t> aot_recipe_hits{0};
  // Automatic-dynamic profiles merged in, and profile reads that found one or none
  // (dynamic_profile_store.h).
  std::atomic<int64_t> dynamic_profile_puts{0};
  std::atomic<int64_t> dynamic_profile_hits{0};
  std::atomic<int64_t> dynamic_profile_misses{0};

  // name -> value of every counter above.
  std::map<std::string, int64_t> Snapshot() const;
};

}  // namespace tccd::server

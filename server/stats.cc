// ServerStats::Snapshot; see stats.h.
#include "server/stats.h"

namespace tccd::server {

std::map<std::string, int64_t> ServerStats::Snapshot() const {
  auto get = [](const std::atomic<int64_t>& counter) {
    return counter.load(std::memory_order_relaxed);
  };
  return {
      {"requests_total", get(requests_total)},
      {"compiles", get(compiles)},
      {"compile_errors", get(compile_errors)},
      {"compiles_running", get(compiles_running)},
      {"cache_hits", get(cache_hits)},
      {"cache_misses", get(cache_misses)},
      {"dedup_waits", get(dedup_waits)},
      {"invalid_requests", get(invalid_requests)},
      {"internal_errors", get(internal_errors)},
      {"artifacts_served", get(artifacts_served)},
      {"artifact_bytes_served", get(artifact_bytes_served)},
      {"store_full_refusals", get(store_full_refusals)},
      {"kernels_compiled", get(kernels_compiled)},
      {"kernels_reused", get(kernels_reused)},
      {"kernel_store_errors", get(kernel_store_errors)},
      {"manifest_reads", get(manifest_reads)},
      {"aot_recipe_puts", get(aot_recipe_puts)},
      {"aot_recipe_hits", get(aot_recipe_hits)},
      {"dynamic_profile_puts", get(dynamic_profile_puts)},
      {"dynamic_profile_hits", get(dynamic_profile_hits)},
      {"dynamic_profile_misses", get(dynamic_profile_misses)},
  };
}

}  // namespace tccd::server

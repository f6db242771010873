// StoreKernelCache: the daemon's kernel objects (codegen/kernel/kernel_cache.h) in its Store.
//
// A kernel object is stored as a blob, and its key maps to a *kernel manifest*: a Manifest whose
// only artifact is that blob, of kind KERNEL_OBJECT. So kernels share the store's integrity rules
// (the blob's digest is checked on read: a corrupt object is a miss, never served, and the next
// compile of that kernel stores it afresh) and whatever keeps or drops manifests and blobs.
// Kernel keys hash different inputs than compile keys, so the two never collide.
//
// Thread-safety: as the Store (many threads at once).
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "cache/store.h"
#include "codegen/kernel/kernel_cache.h"

namespace tccd::server {

class StoreKernelCache final : public codegen::KernelObjectCache {
 public:
  explicit StoreKernelCache(cache::Store* store) : store_(store) {}

  // Every key whose kernel manifest and object blob are present and intact. Malformed keys and
  // manifests that are not kernel manifests are misses. Never fails.
  absl::StatusOr<absl::flat_hash_map<std::string, std::string>> Lookup(
      absl::Span<const std::string> keys) override;

  // Stores each object and its kernel manifest. The first failure is returned after trying all.
  absl::Status Put(const std::vector<codegen::KernelObject>& objects);

 private:
  cache::Store* const store_;
};

}  // namespace tccd::server

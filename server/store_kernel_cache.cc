// StoreKernelCache; see store_kernel_cache.h.
#include "server/store_kernel_cache.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"
#include "tccd_version.h"

namespace tccd::server {
namespace {

constexpr char kKernelObjectName[] = "kernel.o";

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

absl::StatusOr<absl::flat_hash_map<std::string, std::string>> StoreKernelCache::Lookup(
    absl::Span<const std::string> keys) {
  absl::flat_hash_map<std::string, std::string> found;
  for (const std::string& key : keys) {
    absl::StatusOr<v1::Manifest> manifest = store_->GetManifest(key);
    if (!manifest.ok()) continue;  // absent, malformed key, or a blob missing or corrupt
    if (manifest->artifacts_size() != 1 || manifest->artifacts(0).kind() != v1::KERNEL_OBJECT) {
      spdlog::warn("key {} names a manifest that is not a kernel's; compiling the kernel",
                   key.substr(0, 16));
      continue;
    }
    // The manifest check above read the blob once; GetBlob verifies its digest again, and a
    // blob that went bad in between is a miss as well.
    absl::StatusOr<std::string> object = store_->GetBlob(manifest->artifacts(0).digest());
    if (!object.ok()) continue;
    found.emplace(key, *std::move(object));
  }
  return found;
}

absl::Status StoreKernelCache::Put(const std::vector<codegen::KernelObject>& objects) {
  absl::Status first = absl::OkStatus();
  for (const codegen::KernelObject& object : objects) {
    absl::StatusOr<std::string> digest = store_->PutBlob(object.bytes);
    absl::Status stored = digest.status();
    if (digest.ok()) {
      v1::Manifest manifest;
      manifest.set_key(object.key);
      v1::Artifact* artifact = manifest.add_artifacts();
      artifact->set_name(kKernelObjectName);
      artifact->set_digest(*digest);
      artifact->set_size(static_cast<int64_t>(object.bytes.size()));
      artifact->set_kind(v1::KERNEL_OBJECT);
      manifest.set_tccd_version(TCCD_VERSION);
      manifest.set_created_unix_ms(NowUnixMs());
      stored = store_->PutManifest(object.key, manifest);
    }
    if (!stored.ok() && first.ok())
      first = absl::Status(stored.code(), absl::StrCat("storing kernel ", object.key.substr(0, 16),
                                                       ": ", stored.message()));
  }
  return first;
}

}  // namespace tccd::server

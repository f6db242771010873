// StoreHealth; see store_health.h.
#include "cache/store_health.h"

#include "spdlog/spdlog.h"

namespace tccd::cache {

std::string StoreHealth::reason() const {
  absl::MutexLock lock(&mu_);
  return reason_;
}

void StoreHealth::MarkStopped(const std::string& reason, bool no_space) {
  no_space_.store(no_space, std::memory_order_release);
  {
    absl::MutexLock lock(&mu_);
    reason_ = reason;
  }
  if (writes_stopped_.exchange(true, std::memory_order_acq_rel)) return;
  spdlog::error(
      "cache: writing to {} stopped: {}. Stored entries are still served; "
      "compiles that need storing fail with RESOURCE_EXHAUSTED until writing "
      "resumes, which happens by itself once the file system has room",
      path_, reason);
}

void StoreHealth::MarkResumed(const std::string& how) {
  if (!writes_stopped_.exchange(false, std::memory_order_acq_rel)) return;
  {
    absl::MutexLock lock(&mu_);
    reason_.clear();
  }
  spdlog::warn("cache: writing to {} resumed ({})", path_, how);
}

void StoreHealth::OnBackgroundError(rocksdb::BackgroundErrorReason /*reason*/,
                                    rocksdb::Status* bg_error) {
  if (bg_error == nullptr || bg_error->ok()) return;
  MarkStopped(bg_error->ToString(),
              bg_error->IsNoSpace() || bg_error->subcode() == rocksdb::Status::kSpaceLimit);
}

void StoreHealth::OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason, rocksdb::Status bg_error,
                                       bool* auto_recovery) {
  bg_error.PermitUncheckedError();
  // The store reopens instead; see the file comment.
  *auto_recovery = false;
}

}  // namespace tccd::cache

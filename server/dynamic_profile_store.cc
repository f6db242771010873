// DynamicProfileStore; see dynamic_profile_store.h.
#include "server/dynamic_profile_store.h"

#include <string>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "server/dynamic_profile.h"
#include "spdlog/spdlog.h"

namespace tccd::server {

absl::StatusOr<v1::DynamicProfile> DynamicProfileStore::Put(const v1::DynamicProfile& profile,
                                                            int64_t now_unix_ms) {
  RETURN_IF_ERROR(ValidateDynamicProfile(profile));
  absl::MutexLock lock(&put_mu_);
  absl::StatusOr<v1::DynamicProfile> stored = store_->GetDynamicProfile(profile.job_id());
  v1::DynamicProfile merged;
  if (stored.ok()) {
    merged = *std::move(stored);
  } else if (absl::IsDataLoss(stored.status())) {
    // An unreadable row cannot be joined; this put starts the profile over, and the ranks'
    // next puts bring back what they know.
    spdlog::warn("dynamic profiles: {}; starting it over", std::string(stored.status().message()));
  } else if (!absl::IsNotFound(stored.status())) {
    return stored.status();
  }
  MergeDynamicProfile(profile, &merged);
  if (merged.frames_size() > kMaxProfileFrames)
    return absl::ResourceExhaustedError(absl::StrCat(
        "the dynamic profile of job \"", absl::CHexEscape(profile.job_id()), "\" would hold ",
        merged.frames_size(), " frames; at most ", kMaxProfileFrames));
  merged.set_job_id(profile.job_id());
  merged.set_puts(merged.puts() + 1);
  merged.set_updated_unix_ms(now_unix_ms);
  RETURN_IF_ERROR(store_->PutDynamicProfile(profile.job_id(), merged));
  return merged;
}

absl::StatusOr<v1::DynamicProfile> DynamicProfileStore::Get(absl::string_view job_id) {
  return store_->GetDynamicProfile(job_id);
}

}  // namespace tccd::server

// DynamicProfileStore: the jobs' automatic-dynamic profiles in the daemon's store (issue 9
// item 2; client/tccd/dynamic_profiles.py). Every rank and every run of a job puts what its
// Dynamo found dynamic; the store keeps their join (dynamic_profile.h) under the job id, so a
// restarted run or another rank gets the job's profile and compiles those dims dynamic at once.
//
// Profiles live in the store's "profiles" column family (cache/schema.h): they survive
// restarts and are never evicted (eviction sees manifests and blobs only).
//
// Thread-safety: all methods may be called concurrently; puts of all jobs are serialised (one
// read-merge-write each, microseconds), so no rank's dims are lost to a race.
#pragma once

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "cache/store.h"
#include "tccd/v1/tccd.pb.h"

namespace tccd::server {

class DynamicProfileStore {
 public:
  explicit DynamicProfileStore(cache::Store* store) : store_(store) {}

  // Joins `profile` into the profile of profile.job_id and returns the result (puts counted,
  // updated_unix_ms = now_unix_ms). INVALID_ARGUMENT for a malformed profile or job id;
  // RESOURCE_EXHAUSTED when the join would hold more than kMaxProfileFrames frames; the
  // store's errors (full disk) as they are.
  absl::StatusOr<v1::DynamicProfile> Put(const v1::DynamicProfile& profile, int64_t now_unix_ms);
  // NOT_FOUND when the job has no profile.
  absl::StatusOr<v1::DynamicProfile> Get(absl::string_view job_id);

 private:
  cache::Store* const store_;
  absl::Mutex put_mu_;  // serialises Put's read-merge-write
};

}  // namespace tccd::server

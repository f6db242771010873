// The jobs' automatic-dynamic profiles: one row per job id in the "profiles" column family
// (schema.h). The store keeps them opaque; merging is server/dynamic_profile_store.h's job.
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "cache/rocks_interop.h"
#include "cache/schema.h"
#include "cache/store_impl.h"
#include "base/status_macros.h"

namespace tccd::cache {

absl::StatusOr<v1::DynamicProfile> StoreImpl::GetDynamicProfile(absl::string_view job_id) {
  RETURN_IF_ERROR(ValidateJobId(job_id));
  absl::ReaderMutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckOpenLocked());
  const std::string what =
      absl::StrCat("the dynamic profile of job \"", absl::CHexEscape(job_id), "\"");
  // A read-only open of a cache made before profiles existed has no such column family.
  if (profiles_ == nullptr) return absl::NotFoundError(absl::StrCat("no ", what));
  std::string value;
  rocksdb::Status s =
      db_->Get(read_options_, profiles_, rocksdb::Slice(job_id.data(), job_id.size()), &value);
  if (s.IsNotFound()) return absl::NotFoundError(absl::StrCat("no ", what));
  RETURN_IF_ERROR(FromRocks(s, absl::StrCat("reading ", what)));
  v1::DynamicProfile profile;
  if (!profile.ParseFromString(value))
    return absl::DataLossError(absl::StrCat(what, " is unreadable"));
  return profile;
}

absl::Status StoreImpl::PutDynamicProfile(absl::string_view job_id,
                                          const v1::DynamicProfile& profile) {
  RETURN_IF_ERROR(ValidateJobId(job_id));
  std::string value;
  if (!profile.SerializeToString(&value))
    return absl::InternalError("cannot serialize a dynamic profile");
  absl::ReaderMutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckOpenLocked());
  RETURN_IF_ERROR(CheckWritableLocked());
  RET_CHECK(profiles_ != nullptr);  // only null read-only, which CheckWritableLocked refused
  rocksdb::Status s =
      db_->Put(write_options_, profiles_, rocksdb::Slice(job_id.data(), job_id.size()), value);
  return WriteError(
      s, absl::StrCat("storing the dynamic profile of job \"", absl::CHexEscape(job_id), "\""));
}

}  // namespace tccd::cache

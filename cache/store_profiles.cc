// The jobs' automatic-dynamic profiles: one row per job id in the "profiles" column family
// (schema.h). The store keeps them opaque; merging is server/dynamic_profile_store.h's job.
// Matmul autotuning's tables (GemmTuneTable, server/gemm_tune_store.h) share the family under
// GemmTuneRowKey: a key that starts with NUL, which no job id has (ValidateJobId).
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

namespace {

// The row of a tune table: NUL, "gemm-tunes", NUL, the 64-hex row. No job id contains NUL.
std::string GemmTuneRowKey(absl::string_view row) {
  return absl::StrCat(absl::string_view("\0gemm-tunes\0", 12), row);
}

absl::Status ValidateTuneRow(absl::string_view row) {
  bool hex = row.size() == 64;
  for (char c : row) hex = hex && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  if (!hex) return absl::InvalidArgumentError("a gemm tune row is 64 lowercase hex characters");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::GemmTuneTable> Store::GetGemmTunes(absl::string_view) {
  return absl::UnimplementedError("this store keeps no gemm tunes");
}

absl::Status Store::PutGemmTunes(absl::string_view, const v1::GemmTuneTable&) {
  return absl::UnimplementedError("this store keeps no gemm tunes");
}

absl::StatusOr<v1::GemmTuneTable> StoreImpl::GetGemmTunes(absl::string_view row) {
  RETURN_IF_ERROR(ValidateTuneRow(row));
  absl::ReaderMutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckOpenLocked());
  const std::string what = absl::StrCat("the gemm tune table ", row);
  if (profiles_ == nullptr) return absl::NotFoundError(absl::StrCat("no ", what));
  std::string value;
  rocksdb::Status s = db_->Get(read_options_, profiles_, GemmTuneRowKey(row), &value);
  if (s.IsNotFound()) return absl::NotFoundError(absl::StrCat("no ", what));
  RETURN_IF_ERROR(FromRocks(s, absl::StrCat("reading ", what)));
  v1::GemmTuneTable table;
  if (!table.ParseFromString(value))
    return absl::DataLossError(absl::StrCat(what, " is unreadable"));
  return table;
}

absl::Status StoreImpl::PutGemmTunes(absl::string_view row, const v1::GemmTuneTable& table) {
  RETURN_IF_ERROR(ValidateTuneRow(row));
  std::string value;
  if (!table.SerializeToString(&value))
    return absl::InternalError("cannot serialize a gemm tune table");
  absl::ReaderMutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckOpenLocked());
  RETURN_IF_ERROR(CheckWritableLocked());
  RET_CHECK(profiles_ != nullptr);  // only null read-only, which CheckWritableLocked refused
  rocksdb::Status s = db_->Put(write_options_, profiles_, GemmTuneRowKey(row), value);
  return WriteError(s, absl::StrCat("storing the gemm tune table ", row));
}

}  // namespace tccd::cache

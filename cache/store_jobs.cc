// The job index: which compile keys a job used, when, how often, and whether it
// compiled them.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cache/digest.h"
#include "cache/rocks_interop.h"
#include "cache/schema.h"
#include "cache/store_impl.h"
#include "base/status_macros.h"
#include "spdlog/spdlog.h"

namespace tccd::cache {

absl::Status ValidateJobId(absl::string_view job_id) {
  if (job_id.empty()) return absl::InvalidArgumentError("job id is empty");
  if (job_id.size() > kMaxJobIdLength) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job id is ", job_id.size(), " bytes long; at most ", kMaxJobIdLength, " are allowed"));
  }
  if (job_id.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError("job id contains a NUL byte");
  }
  return absl::OkStatus();
}

namespace {
// How long hits of a job may wait in memory before they are written (store_impl.h).
constexpr absl::Duration kJobUseFlushInterval = absl::Seconds(1);
// More distinct rows than this pending: written at once (bounds the memory).
constexpr size_t kMaxPendingJobRows = 4096;
}  // namespace

absl::Status StoreImpl::RecordJobUse(absl::string_view job_id, absl::string_view key, bool compiled,
                                     int64_t now_unix_ms) {
  if (job_id.empty()) return absl::OkStatus();  // the request named no job
  RETURN_IF_ERROR(ValidateJobId(job_id));
  RETURN_IF_ERROR(ValidateDigestHex("compile key", key));
  const std::string row = JobRowKey(job_id, key);

  absl::ReaderMutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckOpenLocked());
  // A caller learns at once that the cache cannot record anything now, as before batching.
  RETURN_IF_ERROR(CheckWritableLocked());
  absl::MutexLock jobs_lock(&jobs_mu_);
  const PendingJobUse one{.uses = 1, .first_ms = now_unix_ms, .last_ms = now_unix_ms};
  if (compiled) return WriteJobUseLocked(job_id, key, row, one, /*compiled=*/true);

  auto [it, inserted] = pending_job_uses_.try_emplace(row);
  PendingJobRow& pending = it->second;
  if (inserted) {
    pending.job_id = std::string(job_id);
    pending.key = std::string(key);
    pending.use = one;
  } else {
    pending.use.uses += 1;
    pending.use.first_ms = std::min(pending.use.first_ms, now_unix_ms);
    pending.use.last_ms = std::max(pending.use.last_ms, now_unix_ms);
  }
  const absl::Time now = absl::Now();
  if (now - last_job_flush_ < kJobUseFlushInterval &&
      pending_job_uses_.size() < kMaxPendingJobRows) {
    return absl::OkStatus();
  }
  last_job_flush_ = now;
  return FlushJobUsesLocked();
}

absl::Status StoreImpl::FlushJobUsesLocked() {
  absl::Status status;
  for (const auto& [row, pending] : pending_job_uses_) {
    status.Update(WriteJobUseLocked(pending.job_id, pending.key, row, pending.use,
                                    /*compiled=*/false));
  }
  pending_job_uses_.clear();
  return status;
}

absl::Status StoreImpl::WriteJobUseLocked(absl::string_view job_id, absl::string_view key,
                                          const std::string& row, const PendingJobUse& use,
                                          bool compiled) {
  std::string value;
  rocksdb::Status s = db_->Get(read_options_, jobs_, row, &value);
  v1::JobEntry entry;
  if (s.ok()) {
    if (!entry.ParseFromString(value)) {
      spdlog::warn(
          "cache: entry of job \"{}\" for key {} is unreadable; starting it "
          "over",
          absl::CHexEscape(job_id), std::string(key));
      entry.Clear();
    }
  } else if (!s.IsNotFound()) {
    return FromRocks(s, absl::StrCat("reading job \"", absl::CHexEscape(job_id), "\""));
  }

  if (entry.uses() == 0) {
    entry.set_first_used_unix_ms(use.first_ms);
    entry.set_last_used_unix_ms(use.last_ms);
  } else {
    // Requests of one job race; keep the true first and last.
    entry.set_first_used_unix_ms(std::min(entry.first_used_unix_ms(), use.first_ms));
    entry.set_last_used_unix_ms(std::max(entry.last_used_unix_ms(), use.last_ms));
  }
  entry.set_uses(entry.uses() + use.uses);
  if (compiled) entry.set_compiled_here(true);  // sticky: later hits do not clear it
  entry.clear_key();                            // it is in the row key

  if (!entry.SerializeToString(&value)) {
    return absl::InternalError(
        absl::StrCat("cannot serialize an entry of job \"", absl::CHexEscape(job_id), "\""));
  }
  RETURN_IF_ERROR(CheckWritableLocked());
  s = db_->Put(write_options_, jobs_, row, value);
  return WriteError(s, absl::StrCat("recording a use by job \"", absl::CHexEscape(job_id), "\""));
}

absl::StatusOr<std::vector<v1::JobEntry>> StoreImpl::GetJob(absl::string_view job_id) {
  RETURN_IF_ERROR(ValidateJobId(job_id));
  const std::string prefix = JobRowPrefix(job_id);
  // The smallest key after every "job_id\0...": "job_id\1".
  const std::string upper = absl::StrCat(job_id, absl::string_view("\1", 1));
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions read_options = read_options_;
  read_options.iterate_upper_bound = &upper_slice;

  absl::ReaderMutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckOpenLocked());
  {
    // Pending hits first, so that the listing counts every use answered so far. While the
    // cache cannot write they stay pending (and uncounted here) until it can.
    absl::MutexLock jobs_lock(&jobs_mu_);
    if (CheckWritableLocked().ok()) FlushJobUsesLocked().IgnoreError();
  }
  std::vector<v1::JobEntry> entries;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read_options, jobs_));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    v1::JobEntry entry;
    if (!entry.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      spdlog::warn("cache: skipping an unreadable entry of job \"{}\"", absl::CHexEscape(job_id));
      continue;
    }
    rocksdb::Slice key = it->key();
    key.remove_prefix(prefix.size());
    entry.set_key(key.ToString());
    entries.push_back(std::move(entry));
  }
  RETURN_IF_ERROR(
      FromRocks(it->status(), absl::StrCat("reading job \"", absl::CHexEscape(job_id), "\"")));
  return entries;
}

}  // namespace tccd::cache

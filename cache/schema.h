// The on-disk layout of a tccd cache directory (one RocksDB database).
//
// Column families:
//   "blobs"    digest (64 lowercase hex) -> the artifact's bytes. Large values
//   live in RocksDB
//              blob files (integrated BlobDB), so compactions do not rewrite
//              them.
//   "actions"  compile key (64 lowercase hex) -> serialized tccd.v1.Manifest.
//   "jobs"     job id '\0' compile key -> serialized tccd.v1.JobEntry with
//   `key` left empty
//              (the key is in the row key). Job ids never contain '\0', so the
//              rows of job "a" are exactly the rows with prefix "a\0" and never
//              those of job "ab".
//   "access"   compile key -> last use of its manifest, Unix ms, 8 bytes little-endian. Written
//              only with eviction on (StoreOptions.max_bytes), in batches every few seconds, so
//              a hit costs no write; a SIGKILL loses the last few seconds of recency. Rows may
//              outlive their manifest (removed at the next Open); a missing row means "last
//              used when created". Additive: a tccd that does not know it ignores it, so the
//              schema version stayed 1.
//   "profiles" job id -> serialized tccd.v1.DynamicProfile (automatic-dynamic profiles, merged
//              by server/dynamic_profile_store.h). Small (a few KB per job) and never evicted:
//              eviction works on "actions" and "blobs" only, so a profile stays until its job
//              is forgotten by hand. Additive like "access" (created by the first tccd that
//              knows it; older ones open it as unknown and ignore it), so the schema version
//              stayed 1.
//   "meta"     "schema_version" -> decimal kSchemaVersion.
//   "default"  unused (RocksDB requires it).
//
// Internal to cache/ and its tests.
#pragma once

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace tccd::cache {

// Bump when the layout above changes incompatibly; Open refuses a directory
// with a newer one.
//   1: initial layout.
inline constexpr int kSchemaVersion = 1;

inline constexpr char kBlobsColumnFamily[] = "blobs";
inline constexpr char kActionsColumnFamily[] = "actions";
inline constexpr char kJobsColumnFamily[] = "jobs";
inline constexpr char kMetaColumnFamily[] = "meta";
inline constexpr char kAccessColumnFamily[] = "access";
inline constexpr char kProfilesColumnFamily[] = "profiles";

inline constexpr char kSchemaVersionKey[] = "schema_version";

// Job ids are opaque strings chosen by clients; this bounds the row keys they
// make.
inline constexpr size_t kMaxJobIdLength = 512;

// The prefix every row of `job_id` starts with.
inline std::string JobRowPrefix(absl::string_view job_id) {
  return absl::StrCat(job_id, absl::string_view("\0", 1));
}

inline std::string JobRowKey(absl::string_view job_id, absl::string_view compile_key) {
  return absl::StrCat(JobRowPrefix(job_id), compile_key);
}

}  // namespace tccd::cache

// Automatic-dynamic profiles (tccd.v1.DynamicProfile): checking one a client sent, and joining
// two. The daemon's own schema of torch's PGO state (torch/_dynamo/pgo.py): per frame, per
// input, a lattice value per scalar, size and stride — unset < static value < dynamic — and the
// join torch's FrameStateSizeEntry.__ior__ does: two different static values become dynamic,
// so a dim dynamic on any rank (or seen with two sizes by two ranks) is dynamic for the job.
//
// The join is commutative, associative and idempotent, and MergeDynamicProfile's result is
// canonical (frames ordered by identity, entries by source, the smallest filename kept for a
// frame seen under several paths), so any order of puts from any ranks stores the same bytes.
#pragma once

#include <cstddef>

#include "absl/status/status.h"
#include "tccd/v1/tccd.pb.h"

namespace tccd::server {

// Bounds on what one profile may hold (a real job has a few frames of a few inputs each).
inline constexpr int kMaxProfileFrames = 4096;
inline constexpr int kMaxProfileEntriesPerFrame = 1024;
inline constexpr int kMaxProfileDims = 64;  // torch tensors have at most 64 dims
inline constexpr size_t kMaxProfileStringBytes = 4096;

// INVALID_ARGUMENT naming the first field out of bounds or of an unknown kind.
absl::Status ValidateDynamicProfile(const v1::DynamicProfile& profile);

// `into` becomes the join of `into` and `from`, canonical. Only frames are joined: job_id,
// puts and updated_unix_ms of `into` are left as they are. Both must be valid.
void MergeDynamicProfile(const v1::DynamicProfile& from, v1::DynamicProfile* into);

}  // namespace tccd::server

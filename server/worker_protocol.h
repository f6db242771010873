// The wire between the daemon and its compile workers (worker_pool.h): length-prefixed frames over
// a unix socketpair. One request frame (a serialized v1::CompileRequest), then from the worker
// any number of kernel lookups, each answered by the daemon, and of progress reports (not
// answered), and one result frame.
//
// Frame: 8-byte little-endian length, then that many bytes. Every worker frame starts with a u64
// tag: kKernelLookupTag, kProgressTag or kResultTag. A progress report's payload is
//   tag, u64 kernels done, u64 kernels in all         (codegen/kernel/compile_progress.h)
// A kernel lookup's payload is
//   tag, u64 key count, str key...        answered by: u64 count, per object: str key, str bytes
// (the objects the daemon's store has among those keys: kernel_cache.h). A result's payload is
//   tag, u32 status code, str message, f64 compile_ms, str plan (serialized v1::Plan),
//   u32 num_fused_kernels, u32 num_extern_steps, u32 artifact count,
//   per artifact: str name, u32 kind, str bytes,
//   u32 kernels_compiled, u32 kernels_reused, u32 new kernel object count,
//   per object: str key, str bytes
// where str is a u64 length and the bytes and every integer takes 8 bytes. Both ends are the same
// binary, so there is no version.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "codegen/pipeline.h"

namespace tccd::server {

// Frames larger than this are refused on read (a corrupt length must not allocate terabytes).
inline constexpr uint64_t kMaxWorkerFrameBytes = uint64_t{4} << 30;

// Writes one frame; UNAVAILABLE if the peer is gone.
absl::Status WriteFrame(int fd, absl::string_view payload);
// Reads one frame, waiting at most until `deadline`. DEADLINE_EXCEEDED when it passes,
// UNAVAILABLE on end of stream (the peer exited) or a read error, DATA_LOSS on a bad length.
absl::StatusOr<std::string> ReadFrame(int fd, absl::Time deadline = absl::InfiniteFuture());

struct WorkerResult {
  absl::StatusOr<codegen::CompileOutput> output;
  double compile_ms = 0;  // measured in the worker: Prepare + Compile
};
std::string EncodeWorkerResult(const WorkerResult& result);
absl::StatusOr<WorkerResult> DecodeWorkerResult(absl::string_view payload);

inline constexpr uint64_t kResultTag = 0;
inline constexpr uint64_t kKernelLookupTag = 1;
inline constexpr uint64_t kProgressTag = 2;
// The tag of a worker frame; DATA_LOSS-free: a payload too short for one is reported as -1.
int64_t WorkerFrameTag(absl::string_view payload);

std::string EncodeProgress(int done, int total);
// INTERNAL for a malformed report.
absl::Status DecodeProgress(absl::string_view payload, int* done, int* total);

std::string EncodeKernelLookup(absl::Span<const std::string> keys);
absl::StatusOr<std::vector<std::string>> DecodeKernelLookup(absl::string_view payload);
std::string EncodeKernelObjects(const absl::flat_hash_map<std::string, std::string>& objects);
absl::StatusOr<absl::flat_hash_map<std::string, std::string>> DecodeKernelObjects(
    absl::string_view payload);

}  // namespace tccd::server

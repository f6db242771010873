// GemmTuneStore: matmul autotuning's choices (tccd.v1.GemmTuneTable) in the daemon's store,
// content-addressed, so that every process and rank of a cluster runs the algorithm the first
// one chose (codegen/cuda_host/runtime/tccd_cuda_tune.h; client/tccd/gemm_tunes.py).
//
// One table per identity (GPU model, compute capability, cuBLASLt version: a choice is only
// valid and only the fastest there), under GemmTuneRow(identity). An entry is keyed by its
// gemm words (the matmul's full description); Put adds the entries whose gemm the table lacks
// and keeps every stored one (first writer wins), so two ranks that timed the same matmul at
// the same moment both end up with the one that reached the daemon first.
//
// Tables live in the store's "profiles" column family (cache/store_profiles.cc): they survive
// restarts and are never evicted.
//
// Thread-safety: all methods may be called concurrently; puts are serialised (one
// read-merge-write each), so no entry is lost or replaced by a race.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "cache/store.h"
#include "tccd/v1/tccd.pb.h"

namespace tccd::server {

// Words of GemmTuneEntry.gemm and .algo (the runtime's TCCD_RT_TUNE_KEY_WORDS - 1, and
// cublasLtMatmulAlgo_t's 8 words).
inline constexpr int kGemmTuneKeyWords = 13;
inline constexpr int kGemmTuneAlgoWords = 8;
// Bounds: entries one put may carry, and one table may hold (the runtime's table has 1024
// slots per process; a cluster's models together may have more distinct matmuls).
inline constexpr int kMaxGemmTunesPerPut = 4096;
inline constexpr int kMaxGemmTunesPerTable = 16384;
inline constexpr size_t kMaxGemmTuneNameBytes = 256;
// The largest workspace an entry may name (the tune word's 8 bits of MiB).
inline constexpr uint64_t kMaxGemmTuneWorkspaceBytes = uint64_t{255} << 20;

// The store row of an identity (64 lowercase hex; versioned: "tccd-gemm-tunes/1").
std::string GemmTuneRow(const std::string& gpu_name, int32_t sm, int64_t cublaslt_version);

// INVALID_ARGUMENT naming the first malformed field (identity or entry) of a put.
absl::Status ValidateGemmTunes(const v1::GemmTuneTable& table);

class GemmTuneStore {
 public:
  explicit GemmTuneStore(cache::Store* store) : store_(store) {}

  // Adds `table`'s entries whose gemm the stored table lacks and returns the stored table
  // (entries sorted by gemm; puts counted, updated_unix_ms = now_unix_ms). INVALID_ARGUMENT for
  // a malformed table; RESOURCE_EXHAUSTED past kMaxGemmTunesPerTable; the store's errors.
  absl::StatusOr<v1::GemmTuneTable> Put(const v1::GemmTuneTable& table, int64_t now_unix_ms);
  // NOT_FOUND when the identity has no table.
  absl::StatusOr<v1::GemmTuneTable> Get(const v1::GemmTuneRequest& request);

 private:
  cache::Store* const store_;
  absl::Mutex put_mu_;  // serialises Put's read-merge-write
};

}  // namespace tccd::server

// CpuTarget: the host code a generated object is compiled for (an LLVM triple and CPU name),
// shared by the CPU backend's kernels and the CUDA backend's host library.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tccd::codegen {

struct CpuTarget {
  std::string triple = "x86_64-unknown-linux-gnu";
  // An LLVM CPU name; tccd compiles for ISA levels ("x86-64", "x86-64-v2", "x86-64-v3",
  // "x86-64-v4") rather than exact models, so every machine of one level shares artifacts.
  std::string cpu = "x86-64-v2";
  // CPU kernels of an AVX-512 level ("x86-64-v4") are vectorised with 512-bit vectors (LLVM's
  // "prefer-vector-width"; the level's own tuning prefers 256): the CPU transformer's GELU
  // kernels ~1.35x faster (README, CPU training). False: 256-bit vectors, as before
  // (the daemon's TCCD_DISABLE_PASSES=cpu-512-bit-vectors). Other levels and the CUDA
  // backend's host code ignore it. Default: true.
  bool wide_vectors = true;

  // A stable description for compile keys, e.g. "x86_64-unknown-linux-gnu/x86-64-v3" (with
  // "/256-bit" when wide_vectors is off, so that the two never share a kernel object).
  std::string KeyString() const { return triple + "/" + cpu + (wide_vectors ? "" : "/256-bit"); }
};

// Maps a client's architecture and /proc/cpuinfo feature flags to a CpuTarget: the highest
// x86-64 ISA level all of whose features are present. INVALID_ARGUMENT for an unknown or
// unsupported architecture (only x86_64 is supported for now). Needs no LLVM.
absl::StatusOr<CpuTarget> CpuTargetFromFeatures(const std::string& arch,
                                                const std::vector<std::string>& features);

}  // namespace tccd::codegen

// A machine-code failure blamed on particular generated kernels: the status a backend's
// CompileKernels returns when NVRTC rejects a kernel's source or a kernel's cubin fails to link
// for the target (too much shared memory, too many registers), carrying the graph's names of
// those kernels (PointwiseKernel::name) as a payload. The pipeline then runs those kernels'
// ops as ATen extern steps and compiles the rest (pipeline.cc), instead of failing the graph,
// which would send it whole to eager. A status without the payload is not attributable.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace tccd::codegen {

inline constexpr char kFailedKernelsPayload[] = "type.tccd.dev/failed-kernels";

// `status` (not OK) blaming `names`.
inline absl::Status WithFailedKernels(absl::Status status, const std::vector<std::string>& names) {
  status.SetPayload(kFailedKernelsPayload, absl::Cord(absl::StrJoin(names, ",")));
  return status;
}

// The kernels `status` blames; empty when it blames none.
inline std::vector<std::string> FailedKernels(const absl::Status& status) {
  auto names = status.GetPayload(kFailedKernelsPayload);  // an optional Cord
  if (!names) return {};
  return absl::StrSplit(std::string(*names), ',', absl::SkipEmpty());
}

}  // namespace tccd::codegen

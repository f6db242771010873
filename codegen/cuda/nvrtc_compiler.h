// NVRTC, loaded with dlopen on first use: CUDA C source -> PTX + cubin. The one place where
// NVRTC's C API and its result codes live; everything above sees absl::Status.
//
// Internal to the CUDA backend. Thread-safe: the library is loaded once (std::call_once), and
// every compile creates and destroys its own nvrtcProgram (NVRTC programs are independent).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "codegen/cuda/cuda_backend.h"

namespace tccd::codegen {

struct NvrtcOutput {
  std::string ptx;    // without the trailing NUL
  std::string cubin;  // ELF
  std::string log;    // NVRTC's warnings (empty when there are none)
};

// Where NVRTC is looked for, in order: bare sonames (the loader's default path:
// LD_LIBRARY_PATH, rpath, ld.so.cache), then $CUDA_HOME/lib64, /usr/local/cuda/lib64 and
// /usr/local/cuda/targets/x86_64-linux/lib; libnvrtc.so.13 before libnvrtc.so.12 in each.
std::vector<std::string> NvrtcSearchPaths();

// Loads the first NVRTC of `paths` that opens and exports every function the backend needs, and
// returns its version as "13.0". FAILED_PRECONDITION "CUDA toolkit (NVRTC) not found: ..." with
// what was tried otherwise. Independent of the process-wide instance; for tests.
absl::StatusOr<std::string> ProbeNvrtc(const std::vector<std::string>& paths);

// The process-wide NVRTC's version, "13.0" (loading it on first use from NvrtcSearchPaths()).
absl::StatusOr<std::string> LoadedNvrtcVersion();

// Compiles `source` for target.KeyString() with tccd's fixed options: -std=c++17, --fmad=true,
// no fast-math, no line info. FAILED_PRECONDITION if NVRTC is missing or
// cannot generate code for the target; INTERNAL if it rejects the source (with its log).
// `relocatable` adds -rdc=true: the cubin is then an input for LinkCubins (nvjitlink.h), not a
// loadable module.
absl::StatusOr<NvrtcOutput> CompileWithNvrtc(const std::string& source,
                                             const std::string& program_name,
                                             const CudaTarget& target, bool relocatable = false);

}  // namespace tccd::codegen

// Kernel-level content addressing: every generated kernel's machine code is keyed by the
// kernel's own canonical content and target, so identical kernels in different layers, graphs,
// models and jobs compile once.
//
//   KernelKey(kernel, "cpu-object", target_key, fingerprint)  -> 64 hex characters
//   cache->Lookup(keys)   what the store has (the daemon's; a worker asks it over its socket)
//   CompileOutput::new_kernel_objects   what this compile built, for the daemon to store
//
// The key covers everything that changes the object's bytes: the kernel IR (shape, dtypes, body,
// reduction section; not its name, which only the per-graph link sees, nor fused_ops, which only
// logs read), the backend ("cpu-object"), the target key (ISA level / sm arch, NVRTC version)
// and the compiler fingerprint (tccd, LLVM and executable identity). kKernelKeyVersion is bumped
// when the serialisation below changes meaning.
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "codegen/kernel/pointwise_kernel.h"

namespace tccd::codegen {

// v1: first kernel keys (per-kernel CPU objects).
// v2: the key covers PointwiseKernel::entries (CUDA kernels emit only the entry their plan
//     launches), so a v1 object, which has both, is never taken for one that has one.
inline constexpr int kKernelKeyVersion = 2;

// Lowercase hex SHA-256 over the versioned serialisation of (kernel without name and fused_ops,
// backend, target_key, fingerprint).
std::string KernelKey(const PointwiseKernel& kernel, const std::string& backend,
                      const std::string& target_key, const std::string& fingerprint);

// A kernel's compiled object under its key (the bytes a backend can link without recompiling).
struct KernelObject {
  std::string key;
  std::string bytes;
};

// Where compiled kernel objects come from. Implemented by the daemon over its store, and in a
// compile worker by a round trip to the daemon on the worker socket.
// Thread-safety: Lookup may be called from any one thread at a time per compile.
class KernelObjectCache {
 public:
  virtual ~KernelObjectCache() = default;
  // The objects among `keys` that are stored and intact, by key; missing ones are absent. An
  // error means "nothing known" to the caller, which then compiles every kernel.
  virtual absl::StatusOr<absl::flat_hash_map<std::string, std::string>> Lookup(
      absl::Span<const std::string> keys) = 0;
};

}  // namespace tccd::codegen
